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

static int bad(ac_err *e, const char *fmt, const char *v)
{
  char msg[sizeof e->msg];
  snprintf(msg, sizeof msg, fmt, v);
  ac_err_set(e, "%s", msg);
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

/* The long name of a shared option code, for messages and reproducers. */
static const char *option_name(int ch)
{
  static const struct option table[] = {AC_JUDGE_LONG_OPTIONS, {NULL, 0, NULL, 0}};
  for (size_t k = 0; table[k].name; k++)
    if (table[k].val == ch) return table[k].name;
  return NULL;
}

int ac_parse_duration_arg(const char *cmd, const char *opt, const char *v, double *seconds)
{
  double s;
  if (ac_parse_duration(v, &s) < 0 || !(s > 0)) return -1;
  if (s > AC_DURATION_WEEK_S && cmd)
    fprintf(stderr,
            "attncheck %s: warning: %s %s is %.1f days (a number without a unit is seconds; 30s, 20m, 8h, 2d)\n", cmd,
            opt, v, s / 86400.0);
  *seconds = s;
  return 0;
}

int ac_judge_args_option(ac_judge_args *a, const char *cmd, int ch, const char *v)
{
  ac_err e;
  double s;
  if (ch == AC_JOPT_TIMEOUT) (void)ac_parse_duration_arg(cmd, "--timeout", v, &s);   /* its warning, once */
  const char *before[AC_JUDGE_MAX_CLASSES];
  int nb = a->j.nprecisions;
  if (ch == AC_JOPT_PRECISION && nb == AC_JUDGE_MAX_CLASSES) {
    fprintf(stderr, "attncheck %s: at most %d --precision options (see 'attncheck %s --help')\n", cmd, nb, cmd);
    return -1;
  }
  memcpy(before, a->j.precisions, sizeof before);
  int rc = ac_judge_args_apply(a, ch, v, &e);
  if (rc > 0 && ch == AC_JOPT_PRECISION && nb > 0) {   /* repeated: one column per class (check, suite) */
    memcpy(a->j.precisions, before, sizeof before);
    a->j.precisions[nb] = v;
    a->j.nprecisions = nb + 1;
    a->j.precision_override = before[0];
  }
  if (rc < 0) fprintf(stderr, "attncheck %s: %s (see 'attncheck %s --help')\n", cmd, e.msg, cmd);
  return rc;
}

int ac_judge_args_code(const char *name)
{
  static const struct option table[] = {AC_JUDGE_LONG_OPTIONS, {NULL, 0, NULL, 0}};
  for (size_t k = 0; table[k].name; k++)
    if (!strcmp(table[k].name, name)) return table[k].val;
  return 0;
}

int ac_judge_args_apply(ac_judge_args *a, int ch, const char *v, ac_err *ep)
{
  const char *name = option_name(ch);
  ac_err e;
  if (!name) return 0;
  switch (ch) {
  case AC_JOPT_REPEAT: a->j.repeat = 1; return 1;
  case AC_JOPT_NO_LSE: a->j.run.want_lse = 0; return 1;
  case AC_JOPT_NO_CACHE:
    a->j.cache_dir = NULL;
    ac_oracle_cache_disable();   /* also the per-sequence results of layout cases */
    return 1;
  case AC_JOPT_IN_PROCESS: a->j.run.in_process = 1; return 1;
  case AC_JOPT_PRECISION:
    if (ac_precision_spec_check(v, &e) < 0) return bad(ep, "%s", e.msg);
    a->j.precision_override = a->j.precisions[0] = v;   /* the class (the command line repeats it) */
    a->j.nprecisions = 1;
    break;
  case AC_JOPT_BUDGET:
    if (ac_budget_parse(v, &a->j.cmp, &e) < 0) return bad(ep, "%s", e.msg);
    a->budget_given = 1;
    break;
  case AC_JOPT_ATOL:
    if (parse_double(v, &a->j.cmp.atol) < 0) return bad(ep, "bad --atol '%s'", v);
    a->fixed_given = 1;
    break;
  case AC_JOPT_RTOL:
    if (parse_double(v, &a->j.cmp.rtol) < 0) return bad(ep, "bad --rtol '%s'", v);
    a->fixed_given = 1;
    break;
  case AC_JOPT_KAPPA:
    if (parse_double(v, &a->j.cmp.kappa) < 0 || a->j.cmp.kappa == 0) return bad(ep, "bad --kappa '%s'", v);
    break;
  case AC_JOPT_POLICY:
    if (ac_policies_set(&a->pol, v, &e) < 0) return bad(ep, "%s", e.msg);
    break;
  case AC_JOPT_EMPTY_ROWS:
    if (ac_empty_parse(v, &a->j.cmp.empty) < 0)
      return bad(ep, "bad --empty-rows '%s': expected zero, nan, skip or mean-v", v);
    a->j.cmp.empty_set = 1; /* overrides what the kernel declares */
    break;
  case AC_JOPT_ROWS: a->j.rows = v; break;
  case AC_JOPT_ALIBI_LSE:
    if (ac_alibi_lse_parse(v, &a->j.run.alibi_lse) < 0) return bad(ep, "bad --alibi-lse '%s': expected abi or fa2", v);
    break;
  case AC_JOPT_TIMEOUT:
    if (ac_parse_duration_arg(NULL, "--timeout", v, &a->j.run.timeout_s) < 0) return bad(ep, "bad --timeout '%s'", v);
    return 1;
  case AC_JOPT_THREADS: {
    int64_t t;
    if (ac_parse_i64(v, &t) < 0 || t < 0 || t > 4096) return bad(ep, "bad --threads '%s'", v);
    a->j.oracle_threads = (int)t;
    return 1;
  }
  default: return 0;
  }
  char canon[1024]; /* a class as its name: a preset given as its string is repeated by name */
  if (ch == AC_JOPT_PRECISION && ac_precision_spec_canonical(v, canon, sizeof canon) == 0) v = canon;
  size_t rl = strlen(a->repro_opts);
  if (rl + strlen(name) + strlen(v) + 6 < sizeof a->repro_opts)
    snprintf(a->repro_opts + rl, sizeof a->repro_opts - rl, " --%s %s", name, v);
  rl = strlen(a->repro_other);
  if (ch != AC_JOPT_PRECISION && rl + strlen(name) + strlen(v) + 6 < sizeof a->repro_other)
    snprintf(a->repro_other + rl, sizeof a->repro_other - rl, " --%s %s", name, v);
  return 1;
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
          "  --precision CLASS    precision class (overrides the kernel's): a preset's name or a class string\n"
          "                       (q=f16,pv=f16; see 'attncheck list --precision'); per dtype: DTYPE=CLASS,...\n"
          "                       (f16=fp16-cublas,bf16=bf16-acc16); repeated (check, suite): one run judged\n"
          "                       under each class, a column per class\n"
          "  --budget B           class (default: W and kappa*E of the class), baseline[:k] (k x the naive\n"
          "                       kernel's max error + 2 fp32 ulps of |o|, k = 2), or fixed (--atol/--rtol)\n"
          "  --atol A --rtol R    fixed budget: |o - exact| <= A + R*|exact| (implies --budget fixed)\n"
          "  --kappa K            SUSPECT above K*E (default %g, from calibration)\n"
          "  --policy KIND=P      P = fail|warn|ignore for FAIL, SUSPECT, GUARD, UNWRITTEN, CRASH, TIMEOUT,\n"
          "                       NONDETERMINISTIC, MASKED-LEAK, WEAK-CLASS, OUT-OF-DOMAIN, STORE-FAIL (repeatable)\n"
          "  --empty-rows C       rows with no visible key: zero (default), nan, skip, or mean-v\n"
          "  --rows SPEC          judge only these rows: edges+K or a comma list of row numbers\n"
          "  --alibi-lse C        the LSE convention under ALiBi with a causal mask (overrides the kernel's):\n"
          "                       abi (-m|i + tk - tq - j|, the default) or fa2 (FlashAttention-2's +m j: an LSE\n"
          "                       larger by m (i + tk - tq), judged exactly; docs/variants.md)\n"
          "  --repeat             run each case twice and compare bit for bit (NONDETERMINISTIC)\n"
          "  --timeout T          kernel time limit (default 60s; 30s, 5m; a number without a unit is seconds)\n"
          "  --no-lse             do not ask the kernel for the LSE\n"
          "  --no-cache           do not use the oracle cache ($ATTNCHECK_CACHE or ~/.cache/attncheck)\n"
          "  --threads N          oracle threads (default: all cores)\n",
          AC_KAPPA_DEFAULT);
}
