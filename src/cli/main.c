/* main.c: git-style dispatch of the attncheck subcommands. */
#include "config.h"
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gmp.h>
#include "commands.h"
#include "suggest.h"
#include "util.h"

static const struct {
  const char *name;
  ac_cmd_fn fn;
  const char *summary;
} commands[] = {
  {"gen", ac_cmd_gen, "write a case file from explicit options or a worked example"},
  {"info", ac_cmd_info, "print a case's shape, provenance and value statistics"},
  {"oracle", ac_cmd_oracle, "compute the exact output and LSE of a case"},
  {"explain", ac_cmd_explain, "print every stage of one row, exactly"},
  {"list", ac_cmd_list, "list kernels, mutants and precision classes"},
  {"check", ac_cmd_check, "judge a kernel on case files"},
  {"suite", ac_cmd_suite, "run the fixed deterministic suite on a kernel"},
  {"compare", ac_cmd_compare, "judge outputs produced anywhere against a case"},
  {"fuzz", ac_cmd_fuzz, "run an adversarial fuzzing campaign on a kernel"},
  {"replay", ac_cmd_replay, "reproduce a finding"},
  {"merge", ac_cmd_merge, "union campaign directories"},
  {"report", ac_cmd_report, "write the HTML report of a campaign directory"},
  {"quant-report", ac_cmd_quant_report, "what quantized KV-cache formats cost in accuracy (information, never a FAIL)"},
};

void ac_cmd_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "attncheck %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int ac_cmd_usage_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "attncheck %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'attncheck %s --help')\n", cmd);
  return AC_EXIT_USAGE;
}

static const struct option *getopt_table; /* the table of the last ac_cmd_getopt_long */

int ac_cmd_getopt_long(int argc, char **argv, const char *shortopts, const struct option *lo)
{
  getopt_table = lo;
  return getopt_long(argc, argv, shortopts, lo, NULL);
}

/* The long option nearest to the unknown "--word[=value]" arg, or NULL. */
static const char *nearest_option(const char *arg)
{
  char word[257];
  if (!getopt_table || strncmp(arg, "--", 2)) return NULL;
  size_t l = strcspn(arg + 2, "=");
  if (l >= sizeof word) return NULL;
  memcpy(word, arg + 2, l);
  word[l] = 0;
  const char *names[512];
  size_t n = 0;
  for (const struct option *o = getopt_table; o->name && n < sizeof names / sizeof names[0]; o++) names[n++] = o->name;
  return ac_suggest(word, names, n);
}

int ac_cmd_getopt_error(const char *cmd, int ch, char **argv)
{
  const char *arg = argv[optind - 1];
  if (ch == ':') return ac_cmd_usage_error(cmd, "option '%s' needs a value", arg);
  if (optopt > 0 && optopt < 256 && arg[0] == '-' && arg[1] != '-')
    return ac_cmd_usage_error(cmd, "unknown option '-%c'", optopt);
  const char *near = nearest_option(arg);
  if (near) return ac_cmd_usage_error(cmd, "unknown option '%s'; did you mean '--%s'?", arg, near);
  return ac_cmd_usage_error(cmd, "unknown option '%s'", arg);
}

int ac_cmd_judge_getopt(const char *cmd, ac_judge_args *a, int argc, char **argv, const char *shortopts,
                        const struct option *lo, void (*usage)(FILE *f), ac_cmd_option_fn own, void *ctx)
{
  ac_judge_args_init(a);
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, shortopts, lo)) != -1) {
    if (ch == 'h') {
      usage(stdout);
      return AC_EXIT_OK;
    }
    int r = ac_judge_args_option(a, cmd, ch, optarg);
    if (r < 0) return AC_EXIT_USAGE;
    if (r == 0 && (r = own(ctx, ch, optarg, argv)) != AC_CMD_RUN) return r;
  }
  ac_judge_args_finish(a, cmd);
  if (a->j.nprecisions > 1 && strcmp(cmd, "check") && strcmp(cmd, "suite"))
    return ac_cmd_usage_error(cmd, "--precision given %d times (only check and suite judge under several classes)",
                              a->j.nprecisions);
  return AC_CMD_RUN;
}

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck COMMAND [OPTIONS]\n\n"
             "attncheck %s: the exact answer for attention kernels, and where they leave it.\n\n"
             "commands:\n", PACKAGE_VERSION);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'attncheck COMMAND --help' describes one command.\n"
             "exit codes: 0 ok; 1 a verdict with policy fail; 2 nothing could run; 3 internal error;\n"
             "4 suite, fuzz or merge judged no case (every case SKIP; --allow-all-skipped: 0);\n"
             "130 / 143 a campaign stopped by SIGINT / SIGTERM.\n");
}

/* GMP's and MPFR's allocations end like every other when memory runs out (exit 3, one
 * line), not in GMP's abort. */
static void *gmp_alloc(size_t n) { return ac_xmalloc(n); }
static void *gmp_realloc(void *p, size_t old, size_t n) { (void)old; return ac_xrealloc(p, n); }
static void gmp_free(void *p, size_t n) { (void)n; free(p); }

int main(int argc, char **argv)
{
  mp_set_memory_functions(gmp_alloc, gmp_realloc, gmp_free);
  if (argc < 2) {
    fprintf(stderr, "attncheck: no command given (see 'attncheck --help')\n");
    return AC_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    if (argc >= 3) {
      for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[2], commands[i].name)) {
          char *hargv[] = {argv[2], "--help", NULL};
          return commands[i].fn(2, hargv);
        }
      fprintf(stderr, "attncheck: unknown command '%s' (see 'attncheck --help')\n", argv[2]);
      return AC_EXIT_USAGE;
    }
    usage(stdout);
    return AC_EXIT_OK;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("attncheck %s\n", PACKAGE_VERSION);
    return AC_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(cmd, commands[i].name))
      return commands[i].fn(argc - 1, argv + 1);
  const char *names[sizeof commands / sizeof commands[0]];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
  const char *near = ac_suggest(cmd, names, sizeof names / sizeof names[0]);
  fprintf(stderr, "attncheck: unknown command '%s'%s%s%s (see 'attncheck --help')\n", cmd,
          near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
  return AC_EXIT_USAGE;
}
