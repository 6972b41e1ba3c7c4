/* calibrate.c: runs every correct built-in CPU kernel against the oracle on thousands of
 * seeded cases (normal, uniform, large magnitude, zero Q, ties, late maximum, V cancellation,
 * long T on a row sample; every dtype and mask) and prints, per kernel, the distribution of
 * err/W, err/E and of the critical kappa (err - fixed) / E_terms: the kappa at which a case
 * would turn SUSPECT. kappa is chosen as twice the largest critical kappa, so that the largest
 * excess err/(kappa E) of a correct kernel is 0.5 on this run; a run with fresh seeds
 * (--seed N) must stay <= 1 with the compiled kappa (AC_KAPPA_DEFAULT).
 * Seeds are 2^32 + seed * 2^24 + case: disjoint from the suite's (below 2^16). Kernels that
 * declare attention variants (ABI 2 caps) also get a variant of every Nth case (--variants-every N,
 * default 2; features and patterns drawn among the declared ones, src/core/vgen.c), counted in the
 * column var. --grad calibrates the backward kernels instead (calibrate_grad.c). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "harness.h"
#include "oracle.h"
#include "rng.h"
#include "variants.h"
#include "vgen.h"
#include "calibrate.h"

enum { F_NORMAL, F_UNIFORM, F_LARGE4, F_LARGE16, F_ZEROQ, F_TIES, F_LATEMAX, F_CANCEL, F_LONG, NFAM };
static const char *const fam_names[NFAM] = {"normal", "uniform", "large4", "large16", "zeroq",
                                            "ties", "latemax", "cancel", "longT"};
static const int64_t dims[] = {1, 3, 8, 16, 32, 59, 64, 128};

typedef struct {
  const ac_kernel *k;
  double *ew, *ee, *kc;      /* per case maxima */
  int64_t n, cap;
  int64_t nfail, nsusp, nerr;
  int64_t nvar;              /* of n: cases with attention variants */
  double worst_ew, worst_kc;
  char worst_ew_case[160], worst_kc_case[160];
} kstat;

static void push(kstat *s, double ew, double ee, double kc)
{
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1024;
    s->ew = ac_xrealloc(s->ew, sizeof(double) * (size_t)s->cap);
    s->ee = ac_xrealloc(s->ee, sizeof(double) * (size_t)s->cap);
    s->kc = ac_xrealloc(s->kc, sizeof(double) * (size_t)s->cap);
  }
  s->ew[s->n] = ew;
  s->ee[s->n] = ee;
  s->kc[s->n] = kc;
  s->n++;
}

static int cmpd(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double cal_quantile(double *v, int64_t n, double q)
{
  if (!n) return 0;
  qsort(v, (size_t)n, sizeof *v, cmpd);
  int64_t i = (int64_t)ceil(q * (double)n) - 1;
  if (i < 0) i = 0;
  if (i >= n) i = n - 1;
  return v[i];
}

static void put(ac_dtype t, void *base, size_t i, double x) { ac_store_bits(t, base, i, ac_encode_f64(t, x)); }

/* Draws case k of dtype t into c; returns the family; rows receives a row spec ("" = all). */
int cal_make_case(ac_dtype t, uint64_t seed, ac_case *c, char *rows, size_t rn, char *desc, size_t dn)
{
  ac_rng r;
  ac_rng_init(&r, seed, 0);
  int fam = (int)ac_rng_below(&r, NFAM);
  ac_problem *p = &c->p;
  memset(p, 0, sizeof *p);
  p->dtype = t;
  p->mask = (ac_mask)ac_rng_below(&r, 3);
  p->batch = 1;
  p->kv_heads = 1 + (int64_t)ac_rng_below(&r, 2);
  p->heads = p->kv_heads * (1 + (int64_t)ac_rng_below(&r, 2));
  p->dk = dims[ac_rng_below(&r, sizeof dims / sizeof dims[0])];
  p->dv = ac_rng_below(&r, 4) ? p->dk : dims[ac_rng_below(&r, sizeof dims / sizeof dims[0])];
  p->tq = 1 + (int64_t)ac_rng_below(&r, 32);
  p->tk = 1 + (int64_t)ac_rng_below(&r, 130);
  rows[0] = 0;
  if (fam == F_LONG) {
    static const int64_t longt[] = {512, 1024, 2048, 4096};
    p->tk = longt[ac_rng_below(&r, 4)];
    p->tq = 16;
    p->heads = p->kv_heads = 1;
    if (p->dk > 64) p->dk = 64;
    if (p->dv > 64) p->dv = 64;
    if (p->mask == AC_MASK_CAUSAL) p->mask = AC_MASK_CAUSAL_BR;
    snprintf(rows, rn, "edges+0");
  }
  p->scale_is_default = 1;
  p->scale = 1 / sqrt((double)p->dk);
  ac_err e;
  if (ac_case_alloc(c, &e) < 0) {
    fprintf(stderr, "calibrate: %s\n", e.msg);
    exit(3);
  }
  ac_counts n;
  ac_problem_counts(p, &n, &e);
  ac_rng rq, rk, rv;
  ac_rng_split(&r, &rq);
  ac_rng_split(&r, &rk);
  ac_rng_split(&r, &rv);
  double sq = 1, sk = 1;
  if (fam == F_LARGE4) sq = sk = 2;
  if (fam == F_LARGE16) sq = sk = 4;
  for (int64_t x = 0; x < n.q; x++)
    put(t, c->q, (size_t)x, fam == F_ZEROQ ? 0 : fam == F_UNIFORM ? 2 * ac_rng_uniform(&rq) - 1
                                             : fam == F_LATEMAX ? 1 : sq * ac_rng_normal(&rq));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++) {
        for (int64_t d = 0; d < p->dk; d++) {
          double x = fam == F_UNIFORM ? 2 * ac_rng_uniform(&rk) - 1 : sk * ac_rng_normal(&rk);
          if (fam == F_LATEMAX) x = 30.0 / sqrt((double)p->dk) * (double)j / (double)p->tk + 0.05 * x;
          put(t, c->k, ac_kidx(p, b, kh, j, d), x);
        }
        for (int64_t d = 0; d < p->dv; d++) {
          double x = fam == F_UNIFORM ? 2 * ac_rng_uniform(&rv) - 1 : ac_rng_normal(&rv);
          if (fam == F_CANCEL) x = (j % 2 ? -4 : 4) + 0.01 * x;
          put(t, c->v, ac_vidx(p, b, kh, j, d), x);
        }
      }
  if (fam == F_TIES) {
    /* every key equal to key 0 except a few */
    size_t es = ac_dtype_size(t);
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 1; j < p->tk; j++)
        if (ac_rng_below(&r, 8))
          memcpy((char *)c->k + ac_kidx(p, 0, kh, j, 0) * es, (char *)c->k + ac_kidx(p, 0, kh, 0, 0) * es,
                 (size_t)p->dk * es);
  }
  c->seed = seed;
  snprintf(desc, dn, "%s %s %lldx%lld d%lld/%lld h%lld/%lld %s seed %llu", fam_names[fam], ac_dtype_name(t),
           (long long)p->tq, (long long)p->tk, (long long)p->dk, (long long)p->dv, (long long)p->heads,
           (long long)p->kv_heads, ac_mask_name(p->mask), (unsigned long long)seed);
  return fam;
}

/* Oracle and every kernel that takes c (want_lse, in process) on case c; the statistics into st.
 * Returns the kernels that ran, -1 when the oracle could not. */
static int eval_case(ac_kernel **ks, int nk, kstat *st, const ac_case *c, const char *rows, const char *desc,
                     double kappa, const ac_run_opts *ro, double *t_oracle)
{
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = 0;
  oo.rows = rows[0] ? rows : NULL;
  oo.rows_seed = c->seed;
  oo.nmu = ac_precision_mu_list(oo.mu, AC_ORACLE_NMU);
  ac_oracle_result orr;
  ac_err e;
  double to = ac_now();
  int orc = ac_oracle_run(c, &oo, &orr, &e);
  *t_oracle += ac_now() - to;
  if (orc < 0) {
    fprintf(stderr, "calibrate: oracle: %s (%s)\n", e.msg, desc);
    return -1;
  }
  int ran = 0;
  for (int x = 0; x < nk; x++) {
    char why[256];
    if (!ac_kernel_supports(ks[x], &c->p, why, sizeof why)) continue;
    ac_compare_opts co;
    ac_compare_opts_init(&co);
    co.kappa = kappa;
    if (ac_precision_resolve(NULL, ks[x]->precision, c->p.dtype, &co.prec, &e) < 0) continue;
    ac_run_result rr;
    memset(&rr, 0, sizeof rr);
    ac_report rep;
    ac_report_init(&rep, &co);
    if (ac_harness_run(ks[x], c, ro, &rr, &e) < 0 || ac_compare_run(c, &orr, &rr, &co, &rep, &e) < 0) {
      st[x].nerr++;
      printf("ERR %s on %s: %s\n", ks[x]->name, desc, e.msg);
      ac_run_result_free(&rr);
      continue;
    }
    ac_run_result_free(&rr);
    ran++;
    if (c->p.f.used) st[x].nvar++;
    double ew = fmax(rep.max_err_w, rep.lse_max_err_w), ee = fmax(rep.max_err_e, rep.lse_max_err_e);
    push(&st[x], ew, ee, rep.max_kcrit);
    if (rep.kinds & (1u << AC_V_FAIL)) {
      st[x].nfail++;
      printf("FAIL %s on %s: %s\n", ks[x]->name, desc, rep.note);
    }
    if (rep.kinds & (1u << AC_V_SUSPECT)) st[x].nsusp++;
    if (rep.kinds & ((1u << AC_V_ERROR) | (1u << AC_V_CRASH) | (1u << AC_V_GUARD) | (1u << AC_V_UNWRITTEN))) {
      st[x].nerr++;
      printf("ERR %s on %s: %s\n", ks[x]->name, desc, rep.note);
    }
    if (ew > st[x].worst_ew) {
      st[x].worst_ew = ew;
      snprintf(st[x].worst_ew_case, sizeof st[x].worst_ew_case, "%s", desc);
    }
    if (rep.max_kcrit > st[x].worst_kc) {
      st[x].worst_kc = rep.max_kcrit;
      snprintf(st[x].worst_kc_case, sizeof st[x].worst_kc_case, "%s", desc);
    }
  }
  ac_oracle_result_free(&orr);
  return ran;
}

/* A variant of case c (the same Q, K, V) with features drawn among caps: a sliding window, a
 * softcap, ALiBi slopes, an N(0,1) bias, a random boolean mask, sinks, descales (src/core/vgen.c). */
int cal_make_variant(const ac_case *c, uint32_t caps, uint64_t seed, ac_case *out, const char *desc, char *vdesc,
                        size_t n)
{
  ac_rng r;
  ac_rng_init(&r, seed, 0x7661);
  ac_vspec v;
  memset(&v, 0, sizeof v);
  caps &= AC_FEAT_ALL & ~(uint32_t)AC_FEAT_MIXED_DTYPES;
  if (c->p.dtype == AC_F64) caps &= ~(uint32_t)AC_FEAT_DESCALE;   /* fp64 tensors have no descales */
  for (int guard = 0; !v.used && guard < 16; guard++) v.used = (uint32_t)ac_rng_below(&r, 256) & caps;
  if (!v.used) return -1;
  v.win_left = ac_rng_range(&r, 0, c->p.tk);
  v.win_right = ac_rng_below(&r, 2) ? 0 : -1;
  v.win_top_left = ac_rng_below(&r, 4) == 0;
  static const double caps_c[] = {30, 5, 1, 50};
  v.softcap = caps_c[ac_rng_below(&r, 4)];
  v.alibi_max = ac_rng_below(&r, 2) ? 1 : 0.0625;
  v.alibi_per_batch = ac_rng_below(&r, 4) == 0;
  /* the patterns of src/core/vgen.h: sentinels at the formats' large finite values, -inf
   * blocks and rows, NaN under masked keys, ramps; banded and emptied masks; sinks that
   * dominate or vanish; tiny and huge descales */
  static const double sentinels[] = {-1e4, -65504, -1e9, -3.4028234663852886e38};
  v.bias = (int)ac_rng_below(&r, 6);
  v.bias_scale = v.bias == AC_VB_SENTINEL ? sentinels[ac_rng_below(&r, 4)] : v.bias == AC_VB_SLOPE ? 8 : 1;
  v.bias_bcast_b = (int)ac_rng_below(&r, 2);
  v.bias_bcast_h = (int)ac_rng_below(&r, 2);
  v.bmask = (int)ac_rng_below(&r, 4);
  v.sinks = (int)ac_rng_below(&r, 3);
  v.descale = (int)ac_rng_below(&r, 3);
  ac_err e;
  if (ac_case_copy(out, c, &e)) return -1;
  if (ac_vspec_apply(out, &v, seed, &e)) {
    ac_case_free(out);
    return -1;
  }
  char name[120];
  ac_vspec_name(&v, name, sizeof name);
  snprintf(vdesc, n, "%s +%s", desc, name);
  return 0;
}

/* A mixed-dtype variant of the plain case c (the paths of ggml and FlashAttention 3): a binary32
 * case with K and V rounded to f16 or bf16, an fp8 case with a bf16, f16 or f32 output. -1 for
 * the other dtypes. */
static int make_mixed(const ac_case *c, uint64_t seed, ac_case *out, const char *desc, char *vdesc, size_t n)
{
  ac_dtype t = c->p.dtype, d[4] = {t, t, t, t};
  ac_rng r;
  ac_rng_init(&r, seed, 0x6d78);
  static const ac_dtype outs[] = {AC_BF16, AC_F16, AC_F32};
  if (t == AC_F32)
    d[1] = d[2] = ac_rng_below(&r, 2) ? AC_F16 : AC_BF16;
  else if (t == AC_E4M3 || t == AC_E5M2)
    d[3] = outs[ac_rng_below(&r, 3)];
  else
    return -1;
  ac_err e;
  ac_counts nc;
  if (c->p.f.used || ac_problem_counts(&c->p, &nc, &e)) return -1;
  ac_case_init(out);
  out->p = c->p;
  if (ac_features_set_dtypes(&out->p, d, &e) || ac_case_alloc(out, &e)) {
    ac_case_free(out);
    return -1;
  }
  for (int64_t x = 0; x < nc.q; x++) ac_store_bits(d[0], out->q, (size_t)x, ac_encode_f64(d[0], ac_load(t, c->q, (size_t)x)));
  for (int64_t x = 0; x < nc.k; x++) ac_store_bits(d[1], out->k, (size_t)x, ac_encode_f64(d[1], ac_load(t, c->k, (size_t)x)));
  for (int64_t x = 0; x < nc.v; x++) ac_store_bits(d[2], out->v, (size_t)x, ac_encode_f64(d[2], ac_load(t, c->v, (size_t)x)));
  out->seed = c->seed;
  snprintf(vdesc, n, "%s +dtypes-%s.%s.%s.%s", desc, ac_dtype_name(d[0]), ac_dtype_name(d[1]), ac_dtype_name(d[2]),
           ac_dtype_name(d[3]));
  return 0;
}

static int usage(void)
{
  fprintf(stderr, "usage: bench/calibrate [--seed N] [--cases N (per dtype, default 5000)] [--kappa K]\n"
                  "                       [--variants-every N (a variant of every Nth case, default 2; 0: none)] [--dtypes f32,...]\n"
                  "                       [--mixed-every N (a mixed-dtype copy of every Nth f32/fp8 case, default 2)]\n"
                  "       bench/calibrate --write-case DTYPE CASESEED FILE [--variant]   (write one calibration case)\n"
                  "       bench/calibrate --grad ...   (the backward kernels; bench/calibrate --grad --help)\n");
  return 2;
}

int main(int argc, char **argv)
{
  uint64_t seed = 1;
  int64_t ncases = 5000, vevery = 2, mevery = 2;
  uint32_t only = ~0u;   /* --dtypes: the dtypes to run (1u << dtype) */
  double kappa = AC_KAPPA_DEFAULT;
  if (argc > 1 && !strcmp(argv[1], "--grad")) return cal_grad_main(argc - 1, argv + 1);
  if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "--variant"))) && !strcmp(argv[1], "--write-case")) {
    ac_dtype t;
    uint64_t cs;
    if (ac_dtype_parse(argv[2], &t) < 0 || ac_parse_u64(argv[3], &cs) < 0) return usage();
    ac_case c, vc;
    ac_case_init(&c);
    char rows[32], desc[300], vdesc[300];
    ac_err e;
    cal_make_case(t, cs, &c, rows, sizeof rows, desc, sizeof desc);
    if (argc == 6) {   /* the case's variant, as a run with every built-in kernel's features draws it */
      if (cal_make_variant(&c, AC_FEAT_ALL, cs, &vc, desc, vdesc, sizeof vdesc) < 0) {
        fprintf(stderr, "calibrate: case %s has no variant\n", argv[3]);
        return 2;
      }
      ac_case_free(&c);
      c = vc;
      snprintf(desc, sizeof desc, "%s", vdesc);
    }
    snprintf(c.generator, sizeof c.generator, "calibrate");
    if (ac_case_write(&c, argv[4], &e) < 0) {
      fprintf(stderr, "calibrate: %s\n", e.msg);
      return 2;
    }
    printf("%s%s%s\n", desc, rows[0] ? "; oracle rows " : "", rows);
    ac_case_free(&c);
    return 0;
  }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      if (ac_parse_u64(argv[++i], &seed) < 0 || seed >= 256) return usage();
    } else if (!strcmp(argv[i], "--cases") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &ncases) < 0 || ncases < 1 || ncases >= (1 << 24)) return usage();
    } else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc) {
      char bad[32];
      if (ac_dtype_parse_list(argv[++i], &only, bad, sizeof bad) < 0) return usage();
    } else if (!strcmp(argv[i], "--mixed-every") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &mevery) < 0 || mevery < 0) return usage();
    } else if (!strcmp(argv[i], "--variants-every") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &vevery) < 0 || vevery < 0) return usage();
    } else if (!strcmp(argv[i], "--kappa") && i + 1 < argc) {
      kappa = strtod(argv[++i], NULL);
      if (!(kappa > 0)) return usage();
    } else
      return usage();
  }
  size_t nb;
  const attncheck_kernel *const *bk = ac_builtin_kernels(&nb);
  kstat *st = ac_xcalloc(nb, sizeof *st);
  ac_kernel **ks = ac_xcalloc(nb, sizeof *ks);
  int nk = 0;
  for (size_t i = 0; i < nb; i++) {
    if (bk[i]->memory != ATTNCHECK_MEM_HOST) continue;
    /* the serving-layout kernels take no dense case: their cases are the suite's layout cases
     * and the layout families (tests/tcmd_layouts.sh, campaigns), not this table */
    if (bk[i]->abi_version >= 3 && (bk[i]->caps & ATTNCHECK_FEAT_LAYOUTS)) continue;
    ac_kernel **l = NULL;
    int n = 0;
    ac_err e;
    if (ac_kernel_resolve(bk[i]->name, &l, &n, &e) < 0 || n < 1) continue;
    ks[nk] = l[0];
    st[nk].k = l[0];
    nk++;
    free(l);
  }
  uint32_t caps_any = 0;   /* variants some kernel declares */
  for (int x = 0; x < nk; x++) caps_any |= ac_kernel_caps(ks[x]) & AC_FEAT_ALL;
  static const ac_dtype dts[] = {AC_F64, AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ro.want_lse = 1;
  ro.in_process = 1;
  double t0 = ac_now(), t_oracle = 0;
  int64_t total = 0, nvar = 0, nmixed = 0;
  for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
    ac_dtype t = dts[di];
    if (!(only >> t & 1u)) continue;
    for (int64_t k = 0; k < ncases; k++) {
      uint64_t cs = (1ull << 32) + seed * (1ull << 24) + (uint64_t)(di * (uint64_t)ncases + (uint64_t)k);
      ac_case c;
      ac_case_init(&c);
      char rows[32], desc[160];
      cal_make_case(t, cs, &c, rows, sizeof rows, desc, sizeof desc);
      int nv = eval_case(ks, nk, st, &c, rows, desc, kappa, &ro, &t_oracle);
      if (nv >= 0) total++;
      /* a variant of every Nth case for the kernels that declare variants (ABI 2 caps) */
      if (caps_any && vevery && k % vevery == 0) {
        ac_case vc;
        char vdesc[300];
        if (cal_make_variant(&c, caps_any, cs, &vc, desc, vdesc, sizeof vdesc) == 0) {
          if (eval_case(ks, nk, st, &vc, rows, vdesc, kappa, &ro, &t_oracle) > 0) nvar++;
          ac_case_free(&vc);
        }
      }
      /* a mixed-dtype copy of every Nth case for the kernels that declare mixed dtypes */
      if ((caps_any & AC_FEAT_MIXED_DTYPES) && mevery && k % mevery == 0) {
        ac_case mc;
        char mdesc[300];
        if (make_mixed(&c, cs, &mc, desc, mdesc, sizeof mdesc) == 0) {
          if (eval_case(ks, nk, st, &mc, rows, mdesc, kappa, &ro, &t_oracle) > 0) nmixed++;
          ac_case_free(&mc);
        }
      }
      ac_case_free(&c);
    }
  }
  double secs = ac_now() - t0;
  double kmax = 0;
  for (int x = 0; x < nk; x++)
    if (st[x].worst_kc > kmax) kmax = st[x].worst_kc;
  printf("# bench/calibrate --seed %llu --cases %lld: %lld cases (%lld per dtype), %.0f s (oracle %.0f s); compiled kappa %g\n",
         (unsigned long long)seed, (long long)ncases, (long long)total, (long long)ncases, secs, t_oracle, kappa);
  char vf[160];
  printf("# plus %lld variant cases (a variant of every %lldth case, features among those declared: %s)\n", (long long)nvar,
         (long long)vevery, caps_any ? ac_feat_list(caps_any, vf, sizeof vf) : "none");
  printf("# plus %lld mixed-dtype cases (a copy of every %lldth f32 case with f16 or bf16 K and V, of every fp8 case\n"
         "# with a bf16, f16 or f32 output)\n", (long long)nmixed, (long long)mevery);
  printf("# per kernel: distribution over cases of the case maxima (elements and LSE) of err/W, err/E (E with\n"
         "# its unscaled 1/2 ulp), and kcrit = (err - 1/2 ulp - oracle error) / E_terms, the kappa at which the\n"
         "# case turns SUSPECT; excess = kcrit / kappa, the largest err/(kappa E) with 1/2 ulp never scaled.\n");
  printf("%-15s %-10s %6s %9s %9s %9s  %9s %9s %9s  %9s %9s %9s %8s %5s %5s %4s %6s\n", "kernel", "class", "cases",
         "err/W max", "p99", "p50", "err/E max", "p99", "p50", "kcrit max", "p99", "p50", "excess", "FAIL", "SUSP", "ERR",
         "var");
  for (int x = 0; x < nk; x++) {
    kstat *s = &st[x];
    if (!s->n) continue;
    const ac_precision *c;
    ac_err e;
    ac_precision_resolve(NULL, s->k->precision, AC_F32, &c, &e);
    double wm = cal_quantile(s->ew, s->n, 1), w99 = cal_quantile(s->ew, s->n, 0.99), w50 = cal_quantile(s->ew, s->n, 0.5);
    double em = cal_quantile(s->ee, s->n, 1), e99 = cal_quantile(s->ee, s->n, 0.99), e50 = cal_quantile(s->ee, s->n, 0.5);
    double km = cal_quantile(s->kc, s->n, 1), k99 = cal_quantile(s->kc, s->n, 0.99), k50 = cal_quantile(s->kc, s->n, 0.5);
    printf("%-15s %-10s %6lld %9.3g %9.3g %9.3g  %9.3g %9.3g %9.3g  %9.3g %9.3g %9.3g %8.3g %5lld %5lld %4lld %6lld\n",
           s->k->name, c ? c->name : "?", (long long)s->n, wm, w99, w50, em, e99, e50, km, k99, k50, km / kappa,
           (long long)s->nfail, (long long)s->nsusp, (long long)s->nerr, (long long)s->nvar);
  }
  printf("# worst cases:\n");
  for (int x = 0; x < nk; x++)
    if (st[x].n)
      printf("#   %-15s err/W %.3g on %s; kcrit %.3g on %s\n", st[x].k->name, st[x].worst_ew, st[x].worst_ew_case,
             st[x].worst_kc, st[x].worst_kc_case);
  printf("# largest kcrit over all kernels %.4g: kappa = 2 x that = %.4g makes the largest excess 0.5 on this run;\n"
         "# with the compiled kappa %g the largest excess is %.3g (must be <= 1 on fresh seeds)\n",
         kmax, 2 * kmax, kappa, kmax / kappa);
  int bad = 0;
  for (int x = 0; x < nk; x++) bad |= st[x].nfail > 0;
  for (int x = 0; x < nk; x++) {
    free(st[x].ew);
    free(st[x].ee);
    free(st[x].kc);
    ac_kernel_free(ks[x]);
  }
  free(st);
  free(ks);
  return bad ? 1 : 0;
}
