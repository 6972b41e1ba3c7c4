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
#include "quant.h"
#include "quant_view.h"
#include "store_judge.h"
#include "rng.h"
#include "variants.h"
#include "vgen.h"
#include "calibrate.h"

typedef struct {
  const ac_kernel *k;
  double *ew, *ee, *kc;      /* per case maxima */
  int64_t n, cap;
  int64_t nfail, nsusp, nerr;
  int64_t nvar;              /* of n: cases with attention variants */
  double worst_ew, worst_kc;
  char worst_ew_case[160], worst_kc_case[160];
  int64_t nown;              /* of n: cases judged under the class the kernel named for them (precision_of) */
  char own[64];              /* the first such class */
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
    int differs = 0;   /* quantize-on-store: the store judged exactly (a STORE-FAIL counts as a FAIL) */
    int rc = ac_harness_run(ks[x], c, ro, &rr, &e), own = 0;
    const ac_precision *named;   /* the class the kernel names for this problem (ABI 5 precision_of) */
    if (rc >= 0 && rr.precision[0] && ac_precision_resolve(NULL, rr.precision, c->p.dtype, &named, &e) == 0)
      co.prec = named, own = 1;
    if (rc < 0 || ac_store_judge(c, &rr, &rep, NULL, &differs, &e) < 0 || ac_compare_run(c, &orr, &rr, &co, &rep, &e) < 0) {
      st[x].nerr++;
      printf("ERR %s on %s: %s\n", ks[x]->name, desc, e.msg);
      ac_run_result_free(&rr);
      continue;
    }
    ac_run_result_free(&rr);
    ran++;
    if (own) {
      st[x].nown++;
      if (!st[x].own[0]) snprintf(st[x].own, sizeof st[x].own, "%s", co.prec->name);
    }
    if (c->p.f.used) st[x].nvar++;
    double ew = fmax(rep.max_err_w, rep.lse_max_err_w), ee = fmax(rep.max_err_e, rep.lse_max_err_e);
    push(&st[x], ew, ee, rep.max_kcrit);
    if (rep.kinds & ((1u << AC_V_FAIL) | (1u << AC_V_STORE_FAIL))) {
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

/* The quantized copy of calibration case c (--kv-format, --q-format; docs/quantized.md "Classes"): K
 * and V in format kv, Q in qf when given; one case in four a finite block adversary (an outlier,
 * zero blocks, subnormal scales, ties, q4_0's asymmetric range) on K or V. -1 when the case's head
 * dims do not take the format (it is skipped, not counted). */
static int quantize_case(ac_case *c, const ac_qspec *kv, const ac_qspec *qf, uint64_t seed, char *desc, size_t dn)
{
  /* a store's quantizer also meets ranges without 0 and given scales too small */
  static const int adv[] = {AC_QADV_OUTLIER, AC_QADV_ZERO_BLOCKS, AC_QADV_SCALE_SUBNORMAL, AC_QADV_TIES, AC_QADV_ASYM,
                            AC_QADV_OFFSET,  AC_QADV_GIVEN_SMALL};
  ac_err e;
  if (ac_qspec_check(kv, 'k', c->p.dk, &e) || ac_qspec_check(kv, 'v', c->p.dv, &e)) return -1;
  if (qf->fmt && ac_qspec_check(qf, 'q', c->p.dk, &e)) return -1;
  ac_rng r;
  ac_rng_init(&r, seed, 0x7175616e74ull);
  int a = ac_rng_below(&r, 4) ? AC_QADV_NONE : adv[ac_rng_below(&r, kv->store ? 7 : 5)];
  char x = ac_rng_below(&r, 2) ? 'k' : 'v';
  for (const char *t = "kv"; *t; t++) {
    int rc = a && *t == x ? ac_quant_adversary(c, *t, kv, a, &r, &e) : ac_quant_apply(c, *t, kv, &e);
    if (rc) return -1;
  }
  if (qf->fmt && ac_quant_apply(c, 'q', qf, &e)) return -1;
  char ks[48], qs[48];
  size_t l = strlen(desc);
  snprintf(desc + l, dn - l, " kv %s%s%s%s%s", ac_qspec_str(kv, ks, sizeof ks), a ? " " : "", a ? ac_qadv_name(a) : "",
           a ? (x == 'k' ? " on k" : " on v") : "", qf->fmt ? " q " : "");
  if (qf->fmt) {
    l = strlen(desc);
    snprintf(desc + l, dn - l, "%s", ac_qspec_str(qf, qs, sizeof qs));
  }
  return 0;
}

/* 1 when name is an entry of the comma list l. */
static int name_listed(const char *l, const char *name)
{
  size_t n = strlen(name);
  for (const char *s = l; s && *s;) {
    const char *end = strchr(s, ',');
    size_t k = end ? (size_t)(end - s) : strlen(s);
    if (k == n && !strncmp(s, name, n)) return 1;
    s = end ? end + 1 : NULL;
  }
  return 0;
}

static int usage(void)
{
  fprintf(stderr,
          "usage: bench/calibrate [--seed N] [--cases N (per dtype, default 5000)] [--kappa K]\n"
          "                       [--variants-every N (a variant of every Nth case, default 2; 0: none)] [--dtypes "
          "f32,...]\n"
          "                       [--mixed-every N (a mixed-dtype copy of every Nth f32/fp8 case, default 2)]\n"
          "                       [--kernels NAME,... (only these built-in kernels)] [--mixed-kv f16|bf16 (the K and\n"
          "                       V dtype of the mixed copies of f32 cases; default drawn)]\n"
          "                       [--kv-format F[:G] [--q-format F[:G]] (N quantized f32 cases, or f16 and bf16 ones\n"
          "                       with --dtypes: K and V, and Q, in that format, one in four with a block\n"
          "                       adversary; the kernels that read it)]\n"
          "       bench/calibrate --write-case DTYPE CASESEED FILE [--variant]   (write one calibration case)\n"
          "       bench/calibrate --grad ...   (the backward kernels; bench/calibrate --grad --help)\n");
  return 2;
}

int main(int argc, char **argv)
{
  uint64_t seed = 1;
  int64_t ncases = 5000, vevery = 2, mevery = 2;
  uint32_t only = ~0u;   /* --dtypes: the dtypes to run (1u << dtype) */
  int dtypes_set = 0;
  const char *konly = NULL; /* --kernels */
  int mixed_kv = -1;
  double kappa = AC_KAPPA_DEFAULT;
  ac_qspec kvq = {0}, qq = {0};
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
      dtypes_set = 1;
    } else if (!strcmp(argv[i], "--mixed-every") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &mevery) < 0 || mevery < 0) return usage();
    } else if (!strcmp(argv[i], "--variants-every") && i + 1 < argc) {
      if (ac_parse_i64(argv[++i], &vevery) < 0 || vevery < 0) return usage();
    } else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
      konly = argv[++i];
    } else if (!strcmp(argv[i], "--mixed-kv") && i + 1 < argc) {
      ac_dtype kt;
      if (ac_dtype_parse(argv[++i], &kt) < 0 || (kt != AC_F16 && kt != AC_BF16)) return usage();
      mixed_kv = (int)kt;
    } else if ((!strcmp(argv[i], "--kv-format") || !strcmp(argv[i], "--q-format")) && i + 1 < argc) {
      ac_err e;
      if (ac_qspec_parse(argv[i + 1], argv[i][2] == 'k' ? &kvq : &qq, &e)) {
        fprintf(stderr, "calibrate: %s\n", e.msg);
        return 2;
      }
      i++;
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
    if (bk[i]->abi_version >= 3 && (bk[i]->caps & ATTNCHECK_FEAT_LAYOUTS) && !(kvq.fmt && ac_quant_kernel_of(bk[i])))
      continue;
    if (konly && !name_listed(konly, bk[i]->name)) continue;
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
    /* quantized cases: f32 unless --dtypes names f16 or bf16 too (dequantize-to-16-bit kernels) */
    if (!(only >> t & 1u) || (kvq.fmt && t != AC_F32 && (!dtypes_set || (t != AC_F16 && t != AC_BF16)))) continue;
    /* quantized cases: draws until ncases took the format (those whose head dims do not are skipped) */
    for (int64_t k = 0, took = 0; kvq.fmt ? took < ncases : k < ncases; k++) {
      uint64_t cs = (1ull << 32) + seed * (1ull << 24) + (uint64_t)(di * (uint64_t)ncases + (uint64_t)k);
      ac_case c;
      ac_case_init(&c);
      char rows[32], desc[300];
      cal_make_case(t, cs, &c, rows, sizeof rows, desc, sizeof desc);
      if (kvq.fmt && quantize_case(&c, &kvq, &qq, cs, desc, sizeof desc) < 0) {
        ac_case_free(&c);
        continue;
      }
      took++;
      int nv = eval_case(ks, nk, st, &c, rows, desc, kappa, &ro, &t_oracle);
      if (nv >= 0) total++;
      /* a variant of every Nth case for the kernels that declare variants (ABI 2 caps) */
      if (caps_any && vevery && k % vevery == 0) {
        ac_case vc;
        char vdesc[400];
        if (cal_make_variant(&c, caps_any, cs, &vc, desc, vdesc, sizeof vdesc) == 0) {
          if (eval_case(ks, nk, st, &vc, rows, vdesc, kappa, &ro, &t_oracle) > 0) nvar++;
          ac_case_free(&vc);
        }
      }
      /* a mixed-dtype copy of every Nth case for the kernels that declare mixed dtypes */
      if ((caps_any & AC_FEAT_MIXED_DTYPES) && mevery && k % mevery == 0 && !kvq.fmt) {
        ac_case mc;
        char mdesc[400];
        if (cal_make_mixed_kv(&c, cs, mixed_kv, &mc, desc, mdesc, sizeof mdesc) == 0) {
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
  for (int x = 0; x < nk; x++)
    if (st[x].nown)
      printf("# %s: %lld of its %lld cases judged under the class it names for them (precision_of; %s)\n",
             st[x].k->name, (long long)st[x].nown, (long long)st[x].n, st[x].own);
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
