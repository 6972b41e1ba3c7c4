/* commands.h: the attncheck subcommands, one file each (src/cmd_NAME.c). */
#ifndef AC_COMMANDS_H
#define AC_COMMANDS_H
#include <getopt.h>
#include "judge_args.h"

typedef int (*ac_cmd_fn)(int argc, char **argv);   /* argv[0] is the subcommand name */

int ac_cmd_gen(int argc, char **argv);
int ac_cmd_info(int argc, char **argv);
int ac_cmd_oracle(int argc, char **argv);
int ac_cmd_explain(int argc, char **argv);
int ac_cmd_list(int argc, char **argv);
int ac_cmd_check(int argc, char **argv);
int ac_cmd_suite(int argc, char **argv);
int ac_cmd_compare(int argc, char **argv);
/* compare --name NAME [--grad] FILE under options a parsed by another command (check without --kernel). */
int ac_cmd_compare_stored(const ac_judge_args *a, int grad, const char *name, const char *file);
int ac_cmd_fuzz(int argc, char **argv);
int ac_cmd_replay(int argc, char **argv);
int ac_cmd_merge(int argc, char **argv);
int ac_cmd_report(int argc, char **argv);
int ac_cmd_quant_report(int argc, char **argv);

/* What a command's parse_*_args function answers when the command is to run; any other answer
 * is the exit code to return at once (--help, a usage error). */
#define AC_CMD_RUN (-1)

/* Prints "attncheck CMD: MESSAGE" to stderr (one line). */
void ac_cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Usage error: prints the message and "see attncheck CMD --help", returns AC_EXIT_USAGE. */
int ac_cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* getopt_long(argc, argv, shortopts, lo, NULL), remembering lo for ac_cmd_getopt_error's
 * "did you mean" on an unknown long option. */
int ac_cmd_getopt_long(int argc, char **argv, const char *shortopts, const struct option *lo);
/* The usage error for getopt_long's answer ch ('?' unknown option, ':' missing value, with an
 * optstring that starts with ':') after it read argv[optind - 1]; returns AC_EXIT_USAGE. */
int ac_cmd_getopt_error(const char *cmd, int ch, char **argv);
/* A command's own option ch with value v (optarg): AC_CMD_RUN when applied, else the exit code. */
typedef int (*ac_cmd_option_fn)(void *ctx, int ch, const char *v, char **argv);
/* The option loop of a command that takes the shared judging options: getopt_long over argv with
 * shortopts and the table lo (AC_JUDGE_LONG_OPTIONS among its entries); 'h' prints usage to
 * standard output, the shared options go into a (initialized here), every other answer to own.
 * AC_CMD_RUN at the first operand (optind), after ac_judge_args_finish; else the exit code. */
int ac_cmd_judge_getopt(const char *cmd, ac_judge_args *a, int argc, char **argv, const char *shortopts,
                        const struct option *lo, void (*usage)(FILE *f), ac_cmd_option_fn own, void *ctx);

#endif
