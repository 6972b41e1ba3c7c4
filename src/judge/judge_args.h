/* judge_args.h: the options check, suite and compare share, as getopt_long table entries. */
#ifndef AC_JUDGE_ARGS_H
#define AC_JUDGE_ARGS_H
#include <getopt.h>
#include <stdio.h>
#include "judge.h"

typedef struct {
  ac_judge_opts j;
  ac_policies pol;
  int budget_given, fixed_given;
  char repro_opts[2048];  /* options to repeat in a reproducer command (e.g. " --precision fp32") */
  char repro_other[2048]; /* the same without --precision (a reproducer of one class of several) */
} ac_judge_args;

/* getopt_long codes of the shared options; a command's own codes stay below AC_JOPT_FIRST. */
enum {
  AC_JOPT_FIRST = 1000,
  AC_JOPT_PRECISION = AC_JOPT_FIRST,
  AC_JOPT_BUDGET,
  AC_JOPT_ATOL,
  AC_JOPT_RTOL,
  AC_JOPT_KAPPA,
  AC_JOPT_POLICY,
  AC_JOPT_EMPTY_ROWS,
  AC_JOPT_ROWS,
  AC_JOPT_TIMEOUT,
  AC_JOPT_THREADS,
  AC_JOPT_REPEAT,
  AC_JOPT_NO_LSE,
  AC_JOPT_NO_CACHE,
  AC_JOPT_IN_PROCESS,
  AC_JOPT_ALIBI_LSE
};

/* The shared entries of a command's struct option table (place them before its {0, 0, 0, 0}). */
#define AC_JUDGE_LONG_OPTIONS                                                                                       \
  {"precision", required_argument, NULL, AC_JOPT_PRECISION}, {"budget", required_argument, NULL, AC_JOPT_BUDGET},   \
      {"atol", required_argument, NULL, AC_JOPT_ATOL}, {"rtol", required_argument, NULL, AC_JOPT_RTOL},             \
      {"kappa", required_argument, NULL, AC_JOPT_KAPPA}, {"policy", required_argument, NULL, AC_JOPT_POLICY},       \
      {"empty-rows", required_argument, NULL, AC_JOPT_EMPTY_ROWS}, {"rows", required_argument, NULL, AC_JOPT_ROWS}, \
      {"timeout", required_argument, NULL, AC_JOPT_TIMEOUT}, {"threads", required_argument, NULL, AC_JOPT_THREADS}, \
      {"repeat", no_argument, NULL, AC_JOPT_REPEAT}, {"no-lse", no_argument, NULL, AC_JOPT_NO_LSE},                 \
      {"no-cache", no_argument, NULL, AC_JOPT_NO_CACHE}, {"alibi-lse", required_argument, NULL, AC_JOPT_ALIBI_LSE}, \
  {                                                                                                                 \
    "in-process", no_argument, NULL, AC_JOPT_IN_PROCESS                                                             \
  }

void ac_judge_args_init(ac_judge_args *a);
/* Applies getopt_long's code ch with value arg (optarg) as a shared option: 1 applied, 0 ch is
 * not a shared option, -1 bad value (one usage line printed; the command exits AC_EXIT_USAGE). */
int ac_judge_args_option(ac_judge_args *a, const char *cmd, int ch, const char *arg);
/* The same without printing: -1 with the message in e. */
int ac_judge_args_apply(ac_judge_args *a, int ch, const char *arg, ac_err *e);
/* The getopt_long code of a shared option's long name ("precision"), 0 when it is not one. */
int ac_judge_args_code(const char *name);
/* After parsing: --atol/--rtol without --budget select the fixed budget. */
int ac_judge_args_finish(ac_judge_args *a, const char *cmd);
void ac_judge_args_help(FILE *f);
/* A duration option's value ("30s", "20m", "8h", "2d"; a number without a unit is seconds) into
 * *seconds: -1 when it is not a positive duration; above a week, one warning line on stderr
 * ("attncheck CMD: warning: OPT V is N days; ..."), since a bare number may have meant minutes or
 * hours. The help texts say "a number without a unit is seconds" wherever a duration is taken. */
int ac_parse_duration_arg(const char *cmd, const char *opt, const char *v, double *seconds);
#define AC_DURATION_WEEK_S (7.0 * 86400.0)

#endif
