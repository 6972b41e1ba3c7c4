/* judge_args.c: parsing of the shared judging options. */
#include "config.h"
#include "judge_args.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ac_judge_args_init(ac_judge_args *a)
{
  memset(a, 0, sizeof *a);
  ac_judge_opts_init(&a->j);
  ac_policies_init(&a->pol);
}

const char *ac_opt_value(const char *name, int argc, char **argv, int *i, int *missing)
{
  size_t n = strlen(name);
  const char *s = argv[*i];
  *missing = 0;
  if (strncmp(s, name, n)) return NULL;
  if (s[n] == '=') return s + n + 1;
  if (s[n]) return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  (*i)++;
  return argv[*i];
}

static int bad(const char *cmd, int *rc, const char *fmt, const char *v)
{
  char msg[512];
  snprintf(msg, sizeof msg, fmt, v);
  fprintf(stderr, "attncheck %s: %s (see 'attncheck %s --help')\n", cmd, msg, cmd);
  *rc = AC_EXIT_USAGE;
  return -1;
}

static int parse_double(const char *s, double *out)
{
  char *end;
  double x = strtod(s, &end);
  if (end == s || *end || !isfinite(x) || x < 0) return -1;
  *out = x;
  return 0;
}

int ac_judge_args_parse(ac_judge_args *a, const char *cmd, int argc, char **argv, int *i, int *rc)
{
  static const char *const with_value[] = {"--precision", "--budget", "--atol", "--rtol", "--kappa", "--policy",
                                           "--empty-rows", "--rows", "--timeout", "--threads", NULL};
  const char *s = argv[*i];
  if (!strcmp(s, "--repeat")) {
    a->j.repeat = 1;
    (*i)++;
    return 1;
  }
  if (!strcmp(s, "--no-lse")) {
    a->j.run.want_lse = 0;
    (*i)++;
    return 1;
  }
  if (!strcmp(s, "--no-cache")) {
    a->j.cache_dir = NULL;
    (*i)++;
    return 1;
  }
  if (!strcmp(s, "--in-process")) {
    a->j.run.in_process = 1;
    (*i)++;
    return 1;
  }
  for (int k = 0; with_value[k]; k++) {
    int missing, j = *i;
    const char *v = ac_opt_value(with_value[k], argc, argv, &j, &missing);
    if (missing) return bad(cmd, rc, "option %s needs a value", with_value[k]);
    if (!v) continue;
    const char *name = with_value[k];
    ac_err e;
    size_t rl = strlen(a->repro_opts);
    if (!strcmp(name, "--precision")) {
      if (ac_precision_spec_check(v, &e) < 0) return bad(cmd, rc, "%s", e.msg);
      a->j.precision_override = v;
    } else if (!strcmp(name, "--budget")) {
      if (ac_budget_parse(v, &a->j.cmp, &e) < 0) return bad(cmd, rc, "%s", e.msg);
      a->budget_given = 1;
    } else if (!strcmp(name, "--atol")) {
      if (parse_double(v, &a->j.cmp.atol) < 0) return bad(cmd, rc, "bad --atol '%s'", v);
      a->fixed_given = 1;
    } else if (!strcmp(name, "--rtol")) {
      if (parse_double(v, &a->j.cmp.rtol) < 0) return bad(cmd, rc, "bad --rtol '%s'", v);
      a->fixed_given = 1;
    } else if (!strcmp(name, "--kappa")) {
      if (parse_double(v, &a->j.cmp.kappa) < 0 || a->j.cmp.kappa == 0) return bad(cmd, rc, "bad --kappa '%s'", v);
    } else if (!strcmp(name, "--policy")) {
      if (ac_policies_set(&a->pol, v, &e) < 0) return bad(cmd, rc, "%s", e.msg);
    } else if (!strcmp(name, "--empty-rows")) {
      if (ac_empty_parse(v, &a->j.cmp.empty) < 0) return bad(cmd, rc, "bad --empty-rows '%s': expected zero, nan or skip", v);
    } else if (!strcmp(name, "--rows")) {
      a->j.rows = v;
    } else if (!strcmp(name, "--timeout")) {
      if (ac_parse_duration(v, &a->j.run.timeout_s) < 0 || !(a->j.run.timeout_s > 0)) return bad(cmd, rc, "bad --timeout '%s'", v);
    } else if (!strcmp(name, "--threads")) {
      int64_t t;
      if (ac_parse_i64(v, &t) < 0 || t < 0 || t > 4096) return bad(cmd, rc, "bad --threads '%s'", v);
      a->j.oracle_threads = (int)t;
    }
    if (strcmp(name, "--threads") && strcmp(name, "--timeout") && rl + strlen(name) + strlen(v) + 4 < sizeof a->repro_opts)
      snprintf(a->repro_opts + rl, sizeof a->repro_opts - rl, " %s %s", name, v);
    *i = j + 1;
    return 1;
  }
  return 0;
}

int ac_judge_args_finish(ac_judge_args *a, const char *cmd)
{
  (void)cmd;
  if (a->fixed_given && !a->budget_given) a->j.cmp.budget = AC_BUDGET_FIXED;
  return 0;
}

void ac_judge_args_help(FILE *f)
{
  fprintf(f,
          "judging options:\n"
          "  --precision NAME     precision class (overrides the kernel's; see 'attncheck list --precision');\n"
          "                       per dtype: DTYPE=CLASS,... (e.g. f16=fp16-cublas,bf16=bf16-acc16)\n"
          "  --budget B           class (default: W and kappa*E of the class), baseline[:k] (k x the naive\n"
          "                       kernel's max error + 2 fp32 ulps of |o|, k = 2), or fixed (--atol/--rtol)\n"
          "  --atol A --rtol R    fixed budget: |o - exact| <= A + R*|exact| (implies --budget fixed)\n"
          "  --kappa K            SUSPECT above K*E (default %g, from calibration)\n"
          "  --policy KIND=P      P = fail|warn|ignore for FAIL, SUSPECT, GUARD, UNWRITTEN, CRASH, TIMEOUT,\n"
          "                       NONDETERMINISTIC, MASKED-LEAK, WEAK-CLASS, OUT-OF-DOMAIN (repeatable)\n"
          "  --empty-rows C       rows with no visible key: zero (default), nan, or skip\n"
          "  --rows SPEC          judge only these rows: edges+K or a comma list of row numbers\n"
          "  --repeat             run each case twice and compare bit for bit (NONDETERMINISTIC)\n"
          "  --timeout T          kernel time limit (default 60s)\n"
          "  --no-lse             do not ask the kernel for the LSE\n"
          "  --no-cache           do not use the oracle cache ($ATTNCHECK_CACHE or ~/.cache/attncheck)\n"
          "  --threads N          oracle threads (default: all cores)\n",
          AC_KAPPA_DEFAULT);
}
