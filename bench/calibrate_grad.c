/* calibrate_grad.c: bench/calibrate --grad, the calibration of the backward budgets
 * (docs/backward.md §5-§6). Every correct built-in kernel that declares a backward
 * (ATTNCHECK_CAP_BACKWARD; naive-bwd-*, flash-bwd-* today) against the exact backward
 * (oracle/grad.h) on seeded cases: the forward calibration's draws (cal_make_case: every
 * family, mask, GQA, dv != dk), cut to B·H·tq·tk·(dk + dv) <= 2^22 (keys halved), a dO drawn
 * among the patterns of src/core/dout.h, and for every Nth case a variant among the features
 * the backward kernels take (backward_caps; windows, boolean masks, ALiBi, bias, sinks today). Every row of
 * dQ and every column of dK, dV is judged with the grad judge (grad_judge.h), budgets of the
 * kernel's class. Per kernel: the distribution over cases of the case maxima of err/W, err/E
 * and kcrit (the kappa at which an element turns SUSPECT, as the forward's: err - ½ ulp -
 * oracle error over the margin times E's terms); FAIL (err > W), SUSPECT (kcrit > kappa), ERR
 * (the run did not complete or broke a guard), skip (the harness refused the case). Per dtype:
 * cases the exact backward refuses (ac_grad_run -1) or whose budget has an infinite W (outside
 * the budget's model, as the fuzzer's gate) are counted as skipped, and the oracle's unresolved
 * elements are counted. FAIL, SUSPECT and ERR lines name the case index and seed and print
 * the command that writes the case (--write-case) and checks it.
 * Seeds are 2^33 + seed * 2^24 + case: disjoint from the forward calibration's (2^32 + ...),
 * the suite's and the backward tests'; the backward budgets were set on the suite's backward
 * cases and tests/tgrad*, so these seeds are held out. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "calibrate.h"
#include "compare.h"
#include "dout.h"
#include "grad_judge.h"
#include "harness.h"
#include "rng.h"
#include "variants.h"

#define GRAD_WORK_MAX (INT64_C(1) << 22)

typedef struct {
  const ac_kernel *k;
  const ac_precision *cls;
  double *ew, *ee, *kc;   /* per case maxima over dq, dk, dv */
  int64_t n, cap, nfail, nsusp, nerr, nskip, nvar;
  double worst_ew, worst_kc;
  char worst_ew_case[400], worst_kc_case[400];
} gstat;

typedef struct {
  int64_t cases, variants, refused, outside, unresolved, elements;
  char refused_why[160];
} dstat;

static void push(gstat *s, double ew, double ee, double kc)
{
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 256;
    s->ew = ac_xrealloc(s->ew, sizeof(double) * (size_t)s->cap);
    s->ee = ac_xrealloc(s->ee, sizeof(double) * (size_t)s->cap);
    s->kc = ac_xrealloc(s->kc, sizeof(double) * (size_t)s->cap);
  }
  s->ew[s->n] = ew, s->ee[s->n] = ee, s->kc[s->n] = kc;
  s->n++;
}

static double work(const ac_problem *p)
{
  return (double)p->batch * (double)p->heads * (double)p->tq * (double)p->tk * (double)(p->dk + p->dv);
}

/* c cut to its first tk keys (the same Q, K and V prefix). */
static void cut_keys(ac_case *c, int64_t tk)
{
  ac_case n;
  ac_case_init(&n);
  n.p = c->p;
  n.p.tk = tk;
  n.seed = c->seed;
  ac_err e;
  if (ac_case_alloc(&n, &e)) {
    fprintf(stderr, "calibrate: %s\n", e.msg);
    exit(3);
  }
  const ac_problem *p = &c->p;
  const size_t es = ac_dtype_size(p->dtype);
  memcpy(n.q, c->q, ac_case_bytes(c, 'q'));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t j = 0; j < tk; j++) {
        memcpy((char *)n.k + ac_kidx(&n.p, b, h, j, 0) * es, (char *)c->k + ac_kidx(p, b, h, j, 0) * es, (size_t)p->dk * es);
        memcpy((char *)n.v + ac_vidx(&n.p, b, h, j, 0) * es, (char *)c->v + ac_vidx(p, b, h, j, 0) * es, (size_t)p->dv * es);
      }
  ac_case_free(c);
  *c = n;
}

/* Backward case cs of dtype t: the forward calibration's case, keys halved until the work fits
 * GRAD_WORK_MAX, a dO pattern drawn from cs, and with variant its variant among caps. -1 when
 * the case has no variant. desc: a one-line description. */
static int grad_case(ac_dtype t, uint64_t cs, uint32_t caps, int variant, ac_case *out, char *desc, size_t dn)
{
  ac_case c;
  ac_case_init(&c);
  char rows[32], d0[200], d1[260];
  cal_make_case(t, cs, &c, rows, sizeof rows, d0, sizeof d0);
  int64_t tk = c.p.tk;
  for (ac_problem p = c.p; work(&p) > (double)GRAD_WORK_MAX; p.tk = tk) tk = (tk + 1) / 2;
  const int64_t tk0 = c.p.tk;
  if (tk < tk0) cut_keys(&c, tk);
  const char *const *pats = ac_dout_patterns();
  int np = 0;
  while (pats[np]) np++;
  ac_rng r;
  ac_rng_init(&r, cs, 0x646f);
  const char *pat = pats[ac_rng_below(&r, (uint64_t)np)];
  ac_err e;
  if (ac_dout_generate(&c, pat, cs, &e)) {
    fprintf(stderr, "calibrate: %s\n", e.msg);
    exit(3);
  }
  if (tk < tk0) snprintf(d1, sizeof d1, "%s cut to tk %lld dO %s", d0, (long long)tk, pat);
  else snprintf(d1, sizeof d1, "%s dO %s", d0, pat);
  if (!variant) {
    *out = c;
    snprintf(desc, dn, "%s", d1);
    return 0;
  }
  int rc = cal_make_variant(&c, caps, cs, out, d1, desc, dn);
  ac_case_free(&c);
  return rc;
}

/* The budget of class cls on c, computed once per case and class (cache of n entries). NULL
 * when some W is not finite: the case lies outside the budget's model. */
typedef struct {
  const ac_precision *cls;
  ac_grad_budget bg;
  int ok;
} bcache;

static const ac_grad_budget *budget_of(bcache *bc, int *n, const ac_precision *cls, const ac_case *c)
{
  for (int i = 0; i < *n; i++)
    if (bc[i].cls == cls) return bc[i].ok ? &bc[i].bg : NULL;
  bcache *b = &bc[(*n)++];
  ac_err e;
  b->cls = cls;
  b->ok = ac_grad_budget_compute(cls, c, &b->bg, &e) == 0;
  for (int t = 0; t < 3 && b->ok; t++)
    for (int64_t x = 0; x < b->bg.count[t] && b->ok; x++) b->ok = isfinite(b->bg.w[t][x]);
  return b->ok ? &b->bg : NULL;
}

typedef struct {
  ac_kernel **ks;
  gstat *st;
  int nk;
  uint32_t caps;
  double kappa;
  ac_run_opts ro;
} gctx;

/* One kernel on case c (exact backward ex, forward inputs o, lse, budget bg); the statistics. */
static void eval_kernel(gctx *g, int x, const ac_case *c, const ac_grad_result *ex, const void *o, const float *lse,
                        const ac_grad_budget *bg, const char *desc, const char *repro)
{
  gstat *s = &g->st[x];
  ac_grad_run_result run;
  ac_grad_judgement j;
  ac_err e;
  if (ac_harness_run_backward(g->ks[x], c, o, lse, &g->ro, &run, &e) < 0 || run.status != AC_RUN_OK || !run.guard_ok) {
    if (run.status == AC_RUN_UNSUPPORTED) {
      s->nskip++;
    } else {
      s->nerr++;
      printf("ERR %s on %s: %s\n  reproduce: %s %s\n", g->ks[x]->name, desc,
             run.status != AC_RUN_OK ? run.msg : run.guard_msg, repro, g->ks[x]->name);
    }
    ac_grad_run_result_free(&run);
    return;
  }
  ac_grad_judge(bg, ex, &run, &j);
  ac_grad_run_result_free(&run);
  double ew = 0, ee = 0, kc = 0;
  for (int t = 0; t < j.nt; t++) {   /* dq, dk, dv, and dσ with sinks */
    ew = fmax(ew, j.t[t].worst), ee = fmax(ee, j.t[t].max_e), kc = fmax(kc, j.t[t].max_kcrit);
  }
  push(s, ew, ee, kc);
  if (c->p.f.used) s->nvar++;
  int susp = kc > g->kappa;
  if (j.failed || susp) {
    printf("%s %s on %s:", j.failed ? "FAIL" : "SUSPECT", g->ks[x]->name, desc);
    for (int t = 0; t < j.nt; t++)
      printf(" %s err/W=%.3g err/E=%.3g bad=%lld/%lld", ac_grad_tensor_name(t), j.t[t].worst, j.t[t].max_e,
             (long long)j.t[t].failed, (long long)j.t[t].checked);
    printf("\n  reproduce: %s %s\n", repro, g->ks[x]->name);
  }
  s->nfail += j.failed > 0;
  s->nsusp += susp && !j.failed;
  if (ew > s->worst_ew) s->worst_ew = ew, snprintf(s->worst_ew_case, sizeof s->worst_ew_case, "%.399s", desc);
  if (kc > s->worst_kc) s->worst_kc = kc, snprintf(s->worst_kc_case, sizeof s->worst_kc_case, "%.399s", desc);
}

/* Case c: the exact backward (every row and column), the forward inputs, every kernel that takes c. */
static void eval_case(gctx *g, const ac_case *c, dstat *d, const char *desc, const char *repro)
{
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  go.seed = c->seed;
  ac_grad_result ex;
  ac_err e;
  d->cases++;
  d->variants += c->p.f.used != 0;
  if (ac_grad_run(c, c->dout, &go, &ex, &e)) {
    if (!d->refused++) snprintf(d->refused_why, sizeof d->refused_why, "%.159s", e.msg);
    return;
  }
  d->unresolved += ex.n_unresolved;
  if (ex.n_unresolved) printf("UNRESOLVED %lld oracle elements on %s\n", (long long)ex.n_unresolved, desc);
  d->elements += ex.n_exact + ex.n_rounded + ex.n_unresolved;
  void *o = NULL;
  float *lse = NULL;
  bcache *bc = ac_xcalloc((size_t)g->nk + 1, sizeof *bc);
  int nb = 0, outside = 0;
  if (ac_grad_forward_inputs(c, &o, &lse, &e)) {
    printf("ERR oracle on %s: %s\n", desc, e.msg);
    ac_grad_result_free(&ex);
    return;
  }
  for (int x = 0; x < g->nk; x++) {
    const ac_precision *cls;
    char why[256];
    if (!ac_kernel_supports(g->ks[x], &c->p, why, sizeof why) ||
        ac_precision_resolve(NULL, g->ks[x]->precision, c->p.dtype, &cls, &e) < 0)
      continue;
    g->st[x].cls = cls;
    const ac_grad_budget *bg = budget_of(bc, &nb, cls, c);
    if (!bg) {
      outside = 1;
      g->st[x].nskip++;
      continue;
    }
    eval_kernel(g, x, c, &ex, o, lse, bg, desc, repro);
  }
  d->outside += outside;
  for (int i = 0; i < nb; i++) ac_grad_budget_free(&bc[i].bg);
  free(bc);
  free(o);
  free(lse);
  ac_grad_result_free(&ex);
}

/* The correct built-in host kernels that declare a backward, and the variant features their backward takes
 * (backward_caps). */
static int bwd_kernels(ac_kernel ***out, uint32_t *caps)
{
  size_t nb;
  const attncheck_kernel *const *bk = ac_builtin_kernels(&nb);
  ac_kernel **ks = ac_xcalloc(nb + 1, sizeof *ks);
  int nk = 0;
  *caps = 0;
  for (size_t i = 0; i < nb; i++) {
    if (bk[i]->memory != ATTNCHECK_MEM_HOST || !(bk[i]->caps & ATTNCHECK_CAP_BACKWARD)) continue;
    ac_kernel **l = NULL;
    int n = 0;
    ac_err e;
    if (ac_kernel_resolve(bk[i]->name, &l, &n, &e) < 0 || n < 1) continue;
    if (ac_kernel_backward(l[0])) {
      ks[nk++] = l[0];
      *caps |= ac_kernel_backward_caps(l[0]) & AC_FEAT_ALL;
    } else
      ac_kernel_free(l[0]);
    free(l);
  }
  *out = ks;
  return nk;
}

/* 1 when some kernel of g takes plain cases of dtype t. */
static int dtype_has_kernel(const gctx *g, ac_dtype t)
{
  ac_problem p;
  memset(&p, 0, sizeof p);
  p.dtype = t, p.batch = p.heads = p.kv_heads = 1, p.tq = p.tk = 4, p.dk = p.dv = 8;
  p.scale_is_default = 1, p.scale = 1 / sqrt(8.0);
  char why[256];
  for (int x = 0; x < g->nk; x++)
    if (ac_kernel_supports(g->ks[x], &p, why, sizeof why)) return 1;
  return 0;
}

static uint64_t case_seed(uint64_t seed, int di, int64_t ncases, int64_t k)
{
  return (1ull << 33) + seed * (1ull << 24) + (uint64_t)di * (uint64_t)ncases + (uint64_t)k;
}

static int usage(void)
{
  fprintf(stderr, "usage: bench/calibrate --grad [--seed N] [--cases N (per dtype, default 300)] [--kappa K]\n"
                  "                              [--variants-every N (default 2; 0: none)] [--dtypes f32,bf16]\n"
                  "       bench/calibrate --grad --write-case DTYPE CASESEED FILE [--variant]   (write one case, with dO)\n");
  return 2;
}

static int write_case(int argc, char **argv, uint32_t caps)
{
  ac_dtype t;
  uint64_t cs;
  if (ac_dtype_parse(argv[2], &t) < 0 || ac_parse_u64(argv[3], &cs) < 0) return usage();
  ac_case c;
  char desc[400];
  ac_err e;
  if (grad_case(t, cs, caps, argc == 6, &c, desc, sizeof desc) < 0) {
    fprintf(stderr, "calibrate: case %s has no variant\n", argv[3]);
    return 2;
  }
  snprintf(c.generator, sizeof c.generator, "calibrate");
  int rc = ac_case_write(&c, argv[4], &e);
  if (rc < 0) fprintf(stderr, "calibrate: %s\n", e.msg);
  else printf("%s\n", desc);
  ac_case_free(&c);
  return rc < 0 ? 2 : 0;
}

static void print_table(const gctx *g, const dstat *ds, const ac_dtype *dts, int ndt, uint32_t only)
{
  printf("%-15s %-9s %6s %9s %9s %9s  %9s %9s %9s  %9s %9s %8s %5s %5s %4s %5s %5s\n", "kernel", "class", "cases",
         "err/W max", "p99", "p50", "err/E max", "p99", "p50", "kcrit max", "p99", "excess", "FAIL", "SUSP", "ERR", "skip",
         "var");
  for (int x = 0; x < g->nk; x++) {
    gstat *s = &g->st[x];
    if (!s->n && !s->nskip && !s->nerr) continue;
    double wm = cal_quantile(s->ew, s->n, 1), w99 = cal_quantile(s->ew, s->n, 0.99), w50 = cal_quantile(s->ew, s->n, 0.5);
    double em = cal_quantile(s->ee, s->n, 1), e99 = cal_quantile(s->ee, s->n, 0.99), e50 = cal_quantile(s->ee, s->n, 0.5);
    double km = cal_quantile(s->kc, s->n, 1), k99 = cal_quantile(s->kc, s->n, 0.99);
    printf("%-15s %-9s %6lld %9.3g %9.3g %9.3g  %9.3g %9.3g %9.3g  %9.3g %9.3g %8.3g %5lld %5lld %4lld %5lld %5lld\n",
           s->k->name, s->cls ? s->cls->name : "?", (long long)s->n, wm, w99, w50, em, e99, e50, km, k99, km / g->kappa,
           (long long)s->nfail, (long long)s->nsusp, (long long)s->nerr, (long long)s->nskip, (long long)s->nvar);
  }
  for (int di = 0; di < ndt; di++) {
    const dstat *d = &ds[di];
    if (!(only >> dts[di] & 1u) || !d->cases) continue;
    printf("# %s: %lld cases (%lld with variants), skipped: %lld refused by the exact backward%s%s%s, %lld outside the "
           "budget's model (an infinite W); oracle: %lld elements, %lld unresolved\n",
           ac_dtype_name(dts[di]), (long long)d->cases, (long long)d->variants, (long long)d->refused,
           d->refused ? " (first: " : "", d->refused ? d->refused_why : "", d->refused ? ")" : "", (long long)d->outside,
           (long long)d->elements, (long long)d->unresolved);
  }
  printf("# worst cases:\n");
  for (int x = 0; x < g->nk; x++)
    if (g->st[x].n)
      printf("#   %-15s err/W %.3g on %s; kcrit %.3g on %s\n", g->st[x].k->name, g->st[x].worst_ew, g->st[x].worst_ew_case,
             g->st[x].worst_kc, g->st[x].worst_kc_case);
}

int cal_grad_main(int argc, char **argv)
{
  uint64_t seed = 1;
  int64_t ncases = 300, vevery = 2;
  uint32_t only = (1u << AC_F32) | (1u << AC_BF16) | (1u << AC_F16) | (1u << AC_F64);
  gctx g;
  memset(&g, 0, sizeof g);
  g.kappa = AC_KAPPA_DEFAULT;
  g.nk = bwd_kernels(&g.ks, &g.caps);
  if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "--variant"))) && !strcmp(argv[1], "--write-case"))
    return write_case(argc, argv, g.caps);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      if (ac_parse_u64(argv[++i], &seed) < 0 || seed >= 256) return usage();
    } else if (!strcmp(argv[i], "--cases") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &ncases) < 0 || ncases < 1 || ncases >= (1 << 24)) return usage();
    } else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc) {
      char bad[32];
      if (ac_dtype_parse_list(argv[++i], &only, bad, sizeof bad) < 0) return usage();
    } else if (!strcmp(argv[i], "--variants-every") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &vevery) < 0 || vevery < 0) return usage();
    } else if (!strcmp(argv[i], "--kappa") && i + 1 < argc) {
      g.kappa = strtod(argv[++i], NULL);
      if (!(g.kappa > 0)) return usage();
    } else
      return usage();
  }
  g.st = ac_xcalloc((size_t)g.nk + 1, sizeof *g.st);
  for (int x = 0; x < g.nk; x++) g.st[x].k = g.ks[x];
  ac_run_opts_init(&g.ro);
  g.ro.in_process = 1;
  static const ac_dtype dts[] = {AC_F64, AC_F32, AC_F16, AC_BF16};
  dstat ds[4];
  memset(ds, 0, sizeof ds);
  double t0 = ac_now();
  for (int di = 0; di < 4; di++) {
    if (!(only >> dts[di] & 1u) || !dtype_has_kernel(&g, dts[di])) continue;
    for (int64_t k = 0; k < ncases; k++) {
      uint64_t cs = case_seed(seed, di, ncases, k);
      for (int var = 0; var < 2; var++) {
        if (var && !(g.caps && vevery && k % vevery == 0)) continue;
        ac_case c;
        char desc[400], repro[300];
        if (grad_case(dts[di], cs, g.caps, var, &c, desc, sizeof desc) < 0) continue;
        char full[520];
        snprintf(full, sizeof full, "case %lld seed %llu%s: %s", (long long)k, (unsigned long long)cs, var ? " variant" : "",
                 desc);
        snprintf(repro, sizeof repro, "bench/calibrate --grad --write-case %s %llu case.npz%s && attncheck check --grad --kernel",
                 ac_dtype_name(dts[di]), (unsigned long long)cs, var ? " --variant" : "");
        eval_case(&g, &c, &ds[di], full, repro);
        ac_case_free(&c);
      }
    }
  }
  char feats[160];
  if (g.caps) ac_feat_list(g.caps, feats, sizeof feats);
  else snprintf(feats, sizeof feats, "none");
  printf("# bench/calibrate --grad --seed %llu --cases %lld (per dtype; a variant of every %lldth case, features among %s):"
         " %.0f s; kappa %g\n",
         (unsigned long long)seed, (long long)ncases, (long long)vevery,
         feats, ac_now() - t0, g.kappa);
  printf("# per kernel: distribution over cases of the case maxima (dq, dk, dv; every row and column) of err/W,\n"
         "# err/E and kcrit = (err - 1/2 ulp - oracle error) / (margin E terms), the kappa at which the case turns\n"
         "# SUSPECT; excess = kcrit max / kappa; skip: cases the harness refused or outside the budget's model.\n");
  print_table(&g, ds, dts, 4, only);
  int bad = 0;
  for (int x = 0; x < g.nk; x++) {
    bad |= g.st[x].nfail > 0 || g.st[x].nerr > 0;
    free(g.st[x].ew), free(g.st[x].ee), free(g.st[x].kc);
    ac_kernel_free(g.ks[x]);
  }
  free(g.st);
  free(g.ks);
  return bad ? 1 : 0;
}
