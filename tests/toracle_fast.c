/* toracle_fast.c: the certified binary64 pass of the oracle.
 * - its exp meets the proven bound |E - e^t| <= 2^-47 e^t against MPFR on millions of points,
 *   reduction edges included, and its constants are what the proof assumes;
 * - the oracle with the pass gives the same certified answers, bit for bit, as the MPFR path
 *   alone (opts.no_fast) on thousands of random and adversarial cases in every dtype (near
 *   ties, breakpoint ties, cancellation, huge and tiny magnitudes, subnormal outputs, special
 *   values), both enclosures of o and LSE overlap, the budget terms agree, and the fallback
 *   to MPFR is seen to trigger where the bound cannot decide. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "dtype_mpfr.h"
#include "fast.h"

/* Check's ck_assert records every passing location (a write each): assert only on failure in the
 * hot loops. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)
#define REQUIRE_EQ(a, b) REQUIRE((a) == (b), "%s == %s: %lld vs %lld", #a, #b, (long long)(a), (long long)(b))

/* ---------------- exp ---------------- */

static double max_rel;
static int64_t npoints;

static void exp_check(double t, mpfr_t ref, mpfr_t d)
{
  double E = ac_fx_exp(t);
  mpfr_set_d(d, t, MPFR_RNDN);
  mpfr_exp(ref, d, MPFR_RNDN);
  mpfr_sub_d(d, ref, E, MPFR_RNDN);
  mpfr_div(d, d, ref, MPFR_RNDN);
  double rel = fabs(mpfr_get_d(d, MPFR_RNDU));
  if (rel > max_rel) max_rel = rel;
  npoints++;
  REQUIRE(rel <= AC_FX_EPS, AC_SEED_FMT "exp(%a) = %a: relative error %a > %a", AC_SEED_ARG, t, E, rel,
                AC_FX_EPS);
}

START_TEST(exp_constants)
{
  mpfr_t a, b;
  mpfr_inits2(300, a, b, (mpfr_ptr)0);
  /* LN2HI: 32 significant bits; |ln2 - LN2HI - LN2LO| < 2^-85 */
  int64_t m;
  int32_t e;
  ac_or_split(ac_fx_ln2hi, &m, &e);
  ck_assert_msg(ac_or_bitlen((uint64_t)m) <= 32, "LN2HI has %d bits", ac_or_bitlen((uint64_t)m));
  mpfr_const_log2(a, MPFR_RNDN);
  mpfr_sub_d(a, a, ac_fx_ln2hi, MPFR_RNDN);
  mpfr_sub_d(a, a, ac_fx_ln2lo, MPFR_RNDN);
  mpfr_abs(a, a, MPFR_RNDN);
  ck_assert_msg(mpfr_cmp_d(a, 0x1p-85) < 0, "ln2 split error %a", mpfr_get_d(a, MPFR_RNDU));
  ck_assert(fabs(ac_fx_ln2lo) < 0x1p-32);
  /* coefficients are 1/i! rounded to nearest */
  const double *C = ac_fx_exp_coef();
  mpfr_set_ui(b, 1, MPFR_RNDN);
  for (int i = 0; i < 14; i++) {
    if (i > 1) mpfr_div_ui(b, b, (unsigned long)i, MPFR_RNDN);
    ck_assert_msg(C[i] == mpfr_get_d(b, MPFR_RNDN), "coefficient %d: %a", i, C[i]);
  }
  mpfr_clears(a, b, (mpfr_ptr)0);
}
END_TEST

START_TEST(exp_bound)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x66657870);
  mpfr_t ref, d;
  mpfr_inits2(128, ref, d, (mpfr_ptr)0);
  max_rel = 0;
  npoints = 0;
  int64_t N = ac_test_expensive() ? 20000000 : 1500000;
  /* uniform over the domain, and log-uniform magnitudes down to 2^-70 */
  for (int64_t k = 0; k < N / 2; k++) exp_check(-708.0 * ac_rng_uniform(&r), ref, d);
  for (int64_t k = 0; k < N / 4; k++) exp_check(-ldexp(1 + ac_rng_uniform(&r), (int)ac_rng_range(&r, -70, 8)) * (708.0 / 512), ref, d);
  /* reduction edges: around k ln2 and (k + 1/2) ln2 for every k, a few ulps either side */
  for (int k = -1021; k <= 0; k++)
    for (int h = 0; h < 2; h++) {
      double c = ((double)k - 0.5 * h) * 0x1.62e42fefa39efp-1;
      if (c > 0 || c < -708) continue;
      double x = c;
      for (int s = 0; s < 40 && x <= 0; s++) { exp_check(x, ref, d); x = nextafter(x, 1.0); }
      x = nextafter(c, -1.0);
      for (int s = 0; s < 40 && x >= -708; s++) { exp_check(x, ref, d); x = nextafter(x, -1.0); }
    }
  /* ends of the domain */
  double ends[] = {0.0, -0.0, -0x1p-1074, -0x1p-1022, -708.0, -700.0, -0x1.62e42fefa39efp-2, -0x1.62e42fefa39efp-1};
  for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) exp_check(ends[k], ref, d);
  ck_assert(ac_fx_exp(0.0) == 1.0);
  /* the array form computes the same values */
  double t[64], o[64];
  for (int k = 0; k < 64; k++) t[k] = -708.0 * ac_rng_uniform(&r);
  ac_fx_exp_array(t, o, 64);
  for (int k = 0; k < 64; k++) REQUIRE(o[k] == ac_fx_exp(t[k]), "o[k] == ac_fx_exp(t[k])");
  fprintf(stderr, "exp: %lld points, largest relative error %a (bound %a)\n", (long long)npoints, max_rel, AC_FX_EPS);
  mpfr_clears(ref, d, (mpfr_ptr)0);
  mpfr_free_cache();
}
END_TEST

/* ---------------- fast pass against the MPFR path ---------------- */

enum { FAM_RANDOM, FAM_MAGNITUDE, FAM_NEARTIE, FAM_BREAKPOINT, FAM_CANCEL, FAM_SPECIAL, NFAM };
static const char *fam_name[NFAM] = {"random", "magnitude", "near-tie", "breakpoint", "cancellation", "special"};

typedef struct {
  int64_t cases, elems, fast, fallback, exact, lse_fallback;
  int64_t dd_fast, dd_fallback;   /* cases with binary64 among the formats: the double-double pass */
} tally;

/* set by build: the breakpoint family placed its ties at binary64 breakpoints */
static int built_f64_ties;

/* A value of dtype t near x nudged by s ulps (bit steps). */
static double nudge(ac_dtype t, double x, int s)
{
  uint64_t b = ac_encode_f64_ov(t, x, AC_E4M3_SATURATE);
  if (ac_bits_isnan(t, b) || ac_bits_isinf(t, b)) return x;
  uint64_t b2 = b + (uint64_t)(int64_t)s;
  if (ac_bits_isnan(t, b2) || ac_bits_isinf(t, b2)) return ac_decode(t, b);
  return ac_decode(t, b2);
}

/* Exponent range of finite values of t (smallest subnormal .. largest). */
static void exp_range(ac_dtype t, int *lo, int *hi)
{
  const ac_dtype_info *in = ac_dtype_get(t);
  *lo = in->ieee_emin - in->prec + 1;
  *hi = (int)floor(log2(in->max_finite));
}

static void build(ac_case *c, ac_dtype dt, int fam, ac_rng *r)
{
  int64_t kvh = 1 + (int64_t)ac_rng_below(r, 2), H = kvh * (1 + (int64_t)ac_rng_below(r, 2));
  int big = ac_rng_below(r, 8) == 0;
  int64_t tq = 1 + (int64_t)ac_rng_below(r, big ? 32 : 8), tk = 1 + (int64_t)ac_rng_below(r, big ? 32 : 12);
  int64_t dk = 1 + (int64_t)ac_rng_below(r, big ? 16 : 6), dv = 1 + (int64_t)ac_rng_below(r, big ? 16 : 4);
  ac_mask mask = (ac_mask)ac_rng_below(r, 3);
  if (fam == FAM_BREAKPOINT || fam == FAM_CANCEL) {
    H = kvh = 1;
    if (tk < 4) tk = 4;
    if (dk < 2) dk = 2;
    if (mask == AC_MASK_CAUSAL_BR) mask = AC_MASK_NONE;
    if (mask == AC_MASK_CAUSAL && tq > tk) tq = tk;
  }
  ref_case(c, dt, mask, 1 + (int64_t)ac_rng_below(r, 2) * (fam == FAM_RANDOM), H, kvh, tq, tk, dk, dv);
  ac_problem *p = &c->p;
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(p, &n, &e) == 0);
  if (ac_rng_below(r, 10) < 3 || fam == FAM_BREAKPOINT || fam == FAM_CANCEL) {
    static const double sc[] = {0.0, -0.5, 0.3, 2.0, -0.333333333333, 0.125, 1e-3, 1.0, -1.0};
    p->scale_is_default = 0;
    p->scale = sc[ac_rng_below(r, sizeof sc / sizeof sc[0])];
    if (fam == FAM_BREAKPOINT || fam == FAM_CANCEL) p->scale = ac_rng_below(r, 2) ? 1.0 : 0.5;
  }
  int elo, ehi;
  exp_range(dt, &elo, &ehi);
  if (dt == AC_F64) { elo = -500; ehi = 500; }   /* fp64 scores within binary64 range (the domain) */
  switch (fam) {
  case FAM_RANDOM:
  case FAM_SPECIAL: {
    double s = ac_rng_below(r, 2) ? 1 : 4;
    for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r) * s);
    for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(r) * s);
    for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(r));
    if (fam == FAM_SPECIAL) {
      int what = (int)ac_rng_below(r, 6);
      if (what == 0) p->scale_is_default = 0, p->scale = 0;
      if (what == 1) p->scale_is_default = 0, p->scale = -ldexp(1, (int)ac_rng_range(r, -3, 3));
      if (what == 2) p->mask = AC_MASK_CAUSAL_BR;   /* rows with no visible key when tq > tk */
      if (what == 3)
        for (int k = 0; k < 3; k++) ref_set(c, 'v', (size_t)ac_rng_below(r, (uint64_t)n.v), k == 0 ? NAN : k == 1 ? INFINITY : -INFINITY);
      if (what == 4) ref_set(c, 'k', (size_t)ac_rng_below(r, (uint64_t)n.k), ac_rng_below(r, 2) ? NAN : INFINITY);
      if (what == 5)
        for (int64_t t = 0; t < p->dk; t++) ref_set(c, 'q', ac_qidx(p, 0, 0, p->tq - 1, t), 0.0);
    }
    break;
  }
  case FAM_MAGNITUDE: {
    /* q, k and V across the dtype's range, subnormals included, per-element spread */
    int span = ehi - elo;
    int eq = elo + (int)ac_rng_below(r, (uint64_t)span), ek = elo + (int)ac_rng_below(r, (uint64_t)span);
    if (eq + ek > 40) { eq = 20 - (int)ac_rng_below(r, 8); ek = 20 - (int)ac_rng_below(r, 8); }
    /* |scores| < 2^50: weights like e^(-2^70) are outside MPFR's exponent range, where the
     * MPFR levels themselves report unresolved elements (and both paths agree on that) */
    int ev = elo + (int)ac_rng_below(r, (uint64_t)span);
    if (ac_rng_below(r, 3) == 0) ev = elo + (int)ac_rng_below(r, 4);   /* subnormal outputs */
    int spread = 1 + (int)ac_rng_below(r, 12);
    for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r) * ldexp(1, eq - (int)ac_rng_below(r, (uint64_t)spread)));
    for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(r) * ldexp(1, ek - (int)ac_rng_below(r, (uint64_t)spread)));
    for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(r) * ldexp(1, ev + (int)ac_rng_below(r, (uint64_t)spread)));
    break;
  }
  case FAM_NEARTIE: {
    /* keys copied from a few bases, some nudged by one step; V partly constant or tied */
    int64_t nb = 1 + (int64_t)ac_rng_below(r, 3);
    for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r));
    double base[3][16];
    for (int64_t b = 0; b < nb; b++)
      for (int64_t t = 0; t < p->dk; t++) base[b][t] = ac_rng_normal(r);
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t j = 0; j < p->tk; j++) {
        int64_t b = (int64_t)ac_rng_below(r, (uint64_t)nb);
        int64_t tn = ac_rng_below(r, 2) ? (int64_t)ac_rng_below(r, (uint64_t)p->dk) : -1;
        for (int64_t t = 0; t < p->dk; t++)
          ref_set(c, 'k', ac_kidx(p, 0, h, j, t), t == tn ? nudge(dt, base[b][t], ac_rng_below(r, 2) ? 1 : -1) : base[b][t]);
        for (int64_t t = 0; t < p->dv; t++) {
          double v = t == 0 ? 1.5 : t == 1 ? (double)b : ac_rng_normal(r);
          ref_set(c, 'v', ac_vidx(p, 0, h, j, t), v);
        }
      }
    break;
  }
  case FAM_BREAKPOINT:
  case FAM_CANCEL: {
    /* q = e_0 so z_j = k_j0; a top group of two keys, the others Delta below */
    for (int64_t i = 0; i < p->tq; i++) ref_set(c, 'q', ac_qidx(p, 0, 0, i, 0), 1.0);
    static const ac_dtype outs[] = {AC_F16, AC_BF16, AC_E4M3, AC_E5M2, AC_F32, AC_F64};
    /* binary64 breakpoints: adjacent doubles (fp64 inputs), or 2^k and 2^(k-53) whose mean
     * 2^(k-1) + 2^(k-54) is one (fp32, bf16 inputs) */
    int f64ok = dt == AC_F64 || dt == AC_F32 || dt == AC_BF16;
    ac_dtype of = outs[ac_rng_below(r, f64ok ? 6 : 5)];
    built_f64_ties = of == AC_F64;
    double top = nudge(dt, (double)ac_rng_range(r, -3, 3), 0);
    for (int64_t j = 0; j < p->tk; j++) {
      double s;
      if (fam == FAM_BREAKPOINT) {
        int far = (int)ac_rng_below(r, 4);
        double delta = far == 0 ? 2 + ac_rng_uniform(r) * 8 : far == 1 ? 20 + ac_rng_uniform(r) * 40 : far == 2 ? 300 : 1000;
        s = j < 2 ? top : nudge(dt, top - delta / p->scale, 0);
      } else {
        s = nudge(dt, top - (double)(j / 2) * 0.25, (int)(j & 1));   /* pairs one step apart */
      }
      ref_set(c, 'k', ac_kidx(p, 0, 0, j, 0), s);
      for (int64_t t = 1; t < p->dk; t++) ref_set(c, 'k', ac_kidx(p, 0, 0, j, t), ac_rng_normal(r));
      for (int64_t t = 0; t < p->dv; t++) {
        double v;
        if (fam == FAM_BREAKPOINT) {
          double a = ac_decode(of, ac_encode_f64(of, ac_rng_normal(r) * 4)), b = nudge(of, a, 1);
          if (of == AC_F64 && dt != AC_F64) {
            int k = (int)ac_rng_range(r, -3, 3);
            a = ldexp(ac_rng_below(r, 2) ? 1 : -1, k);
            b = ldexp(a, -53);
          }
          if (!isfinite(a) || !isfinite(b) || ac_rng_below(r, 2)) b = a;   /* ... or an exact mean */
          v = j == 0 ? a : j == 1 ? b : ac_rng_normal(r) * 8;
          if (j < 2) v = nudge(dt, v, 0);
        } else {
          double M = ldexp(1, (int)ac_rng_range(r, 0, 10)) * (t & 1 ? -1 : 1);
          v = (j & 1) ? -M : M;
          if (j == p->tk - 1 && ac_rng_below(r, 2)) v = ac_rng_normal(r);
        }
        ref_set(c, 'v', ac_vidx(p, 0, 0, j, t), v);
      }
    }
    break;
  }
  }
}

static void run(const ac_case *c, uint32_t formats, int no_fast, ac_oracle_result *r)
{
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = formats;
  o.threads = 1;
  o.no_fast = no_fast;
  ck_assert_msg(ac_oracle_run(c, &o, r, &e) == 0, "ac_oracle_run: %s", e.msg);
}

/* Agreement to 1e-6, plus slack where the two differ only through the approximation of o
 * (|V_j - o| moves by at most do, so a term sum_j A_j f_j |V_j - o| by do sum_j A_j f_j). */
static int close_to(double a, double b) { return a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b)) + 1e-300; }
static int close_do(double a, double b, double slack) { return close_to(a, b) || fabs(a - b) <= slack * (1 + 1e-6); }

static void save(const ac_case *c, const char *what, int k)
{
  ac_err e;
  char path[256];
  snprintf(path, sizeof path, "%s/toracle_fast-%s-%d.npz", ac_test_tmpdir(), what, k);
  if (ac_case_write(c, path, &e) == 0) fprintf(stderr, "case written to %s\n", path);
}

static void compare(const ac_case *c, const ac_oracle_result *F, const ac_oracle_result *M, int k, tally *ty)
{
  const ac_problem *p = &c->p;
  const char *dn = ac_dtype_name(p->dtype);
  REQUIRE_EQ(F->formats, M->formats);
  if (F->n_unresolved || M->n_unresolved) save(c, "unresolved", k);
  REQUIRE(F->n_unresolved == 0 && M->n_unresolved == 0, AC_SEED_FMT "%s case %d: unresolved %lld (fast), %lld (MPFR)",
                AC_SEED_ARG, dn, k, (long long)F->n_unresolved, (long long)M->n_unresolved);
  for (int64_t x = 0; x < F->nrows; x++) {
    const ac_oracle_row *a = &F->rows[x], *b = &M->rows[x];
    REQUIRE_EQ(a->selected, b->selected);
    REQUIRE_EQ(a->visible, b->visible);
    REQUIRE_EQ(a->lse_accept, b->lse_accept);
    REQUIRE_EQ(a->has_nonfinite, b->has_nonfinite);
    REQUIRE(a->lse_how == b->lse_how, AC_SEED_FMT "%s case %d row %lld: LSE how %d vs %d", AC_SEED_ARG, dn, k,
                  (long long)x, a->lse_how, b->lse_how);
    uint64_t la = ac_encode_f64(AC_F32, a->lse_f32), lb = ac_encode_f64(AC_F32, b->lse_f32);
    if (!(isnan(a->lse_f32) && isnan(b->lse_f32)))
      REQUIRE(la == lb, AC_SEED_FMT "%s case %d row %lld: LSE %a (fast) vs %a (MPFR)", AC_SEED_ARG, dn, k,
                    (long long)x, (double)a->lse_f32, (double)b->lse_f32);
    if (isfinite(a->lse) && isfinite(b->lse))
      REQUIRE(fabs(a->lse - b->lse) <= a->lse_err + b->lse_err,
                    AC_SEED_FMT "%s case %d row %lld: LSE enclosures %a +- %a and %a +- %a disjoint", AC_SEED_ARG, dn, k,
                    (long long)x, a->lse, a->lse_err, b->lse, b->lse_err);
    if (a->visible > 0 && a->lse_accept == AC_ACCEPT_VALUE) {
      REQUIRE(close_to(a->m, b->m), "close_to(a->m, b->m)");
      REQUIRE(close_to(a->lse_cZ, b->lse_cZ), "close_to(a->lse_cZ, b->lse_cZ)");
      REQUIRE(close_to(a->lse_cZb, b->lse_cZb) && close_to(a->max_cZb, b->max_cZb), "the block terms lse_cZb, max_cZb");
      REQUIRE(close_to(a->lse_s, b->lse_s), "close_to(a->lse_s, b->lse_s)");
      REQUIRE(close_to(a->max_abs_z, b->max_abs_z), "close_to(a->max_abs_z, b->max_abs_z)");
    }
    for (int64_t t = 0; t < p->dv; t++) {
      const ac_oracle_elem *ea = &F->elems[x * p->dv + t], *eb = &M->elems[x * p->dv + t];
      if (!a->selected) continue;
      ty->elems++;
      REQUIRE_EQ(ea->accept, eb->accept);
      REQUIRE(ea->how == eb->how, AC_SEED_FMT "%s case %d elem %lld,%lld: how %d vs %d", AC_SEED_ARG, dn, k,
                    (long long)x, (long long)t, ea->how, eb->how);
      ty->exact += ea->how == AC_HOW_EXACT;
      for (int f = 0; f < AC_NDTYPES; f++) {
        if (!F->o_round[f]) continue;
        uint64_t ga = F->o_round[f][x * p->dv + t], gb = M->o_round[f][x * p->dv + t];
        if (ga != gb) save(c, "mismatch", k);
        REQUIRE(ga == gb,
                      AC_SEED_FMT "%s case %d elem %lld,%lld format %s: fast %a (bits %llx) vs MPFR %a (bits %llx); "
                                  "o %a +- %a vs %a +- %a",
                      AC_SEED_ARG, dn, k, (long long)x, (long long)t, ac_dtype_name((ac_dtype)f),
                      ac_decode((ac_dtype)f, ga), (unsigned long long)ga, ac_decode((ac_dtype)f, gb),
                      (unsigned long long)gb, ea->o, ea->o_err, eb->o, eb->o_err);
      }
      if (ea->accept != AC_ACCEPT_VALUE) continue;
      REQUIRE(fabs(ea->o - eb->o) <= ea->o_err + eb->o_err,
                    AC_SEED_FMT "%s case %d elem %lld,%lld: enclosures %a +- %a (fast) and %a +- %a disjoint",
                    AC_SEED_ARG, dn, k, (long long)x, (long long)t, ea->o, ea->o_err, eb->o, eb->o_err);
      double dO = fabs(ea->o - eb->o) + ea->o_err + eb->o_err, fs = b->lse_s, fz = b->lse_cZ;
      REQUIRE(close_to(ea->R, eb->R) && close_do(ea->D, eb->D, dO) && close_do(ea->S, eb->S, dO * (fs + fabs(b->m))) &&
                  close_do(ea->Sp, eb->Sp, dO * fs + eb->D * (fabs(b->m) + 1) * 0x1p-45) &&
                  close_do(ea->G, eb->G, dO * fz) && close_do(ea->Gb, eb->Gb, dO * b->lse_cZb),
              AC_SEED_FMT "%s case %d elem %lld,%lld: budget terms R %a/%a D %a/%a S %a/%a Sp %a/%a G %a/%a",
              AC_SEED_ARG, dn, k, (long long)x, (long long)t, ea->R, eb->R, ea->D, eb->D, ea->S, eb->S, ea->Sp, eb->Sp,
              ea->G, eb->G);
      /* M: the binary64 pass finds the extremes of V in its budget pass (keys of weight 0 included) */
      REQUIRE(close_do(ea->M, eb->M, dO), AC_SEED_FMT "%s case %d elem %lld,%lld: M %a vs %a", AC_SEED_ARG, dn, k,
              (long long)x, (long long)t, ea->M, eb->M);
      for (int q = 0; q < F->nmu; q++)
        REQUIRE(close_do(ea->F[q], eb->F[q], dO + 1e-6 * eb->D),
                      AC_SEED_FMT "%s case %d elem %lld,%lld: F[%d] %a vs %a", AC_SEED_ARG, dn, k, (long long)x,
                      (long long)t, q, ea->F[q], eb->F[q]);
    }
  }
}

static void check_dtype(ac_dtype dt)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 0x66617374 + (uint64_t)dt);
  int ncase = ac_test_expensive() ? 10000 : 1700;
  tally ty[NFAM];
  memset(ty, 0, sizeof ty);
  const uint32_t narrow = (1u << AC_F32) | (1u << AC_F16) | (1u << AC_BF16) | (1u << AC_E4M3) | (1u << AC_E5M2);
  for (int k = 0; k < ncase; k++) {
    int fam = k % NFAM;
    ac_case c;
    built_f64_ties = 0;
    build(&c, dt, fam, &rng);
    uint32_t formats = ac_rng_below(&rng, 8) == 0 || built_f64_ties ? narrow | (1u << AC_F64) : narrow;
    ac_oracle_result F, M;
    run(&c, formats, 0, &F);
    run(&c, formats, 1, &M);
    compare(&c, &F, &M, k, &ty[fam]);
    ty[fam].cases++;
    if (dt != AC_F64 && !(formats & (1u << AC_F64))) {
      ty[fam].fallback += F.n_fallback;
      ty[fam].fast += F.n_rounded - F.n_fallback;
    } else {
      ty[fam].dd_fallback += F.n_fallback;
      ty[fam].dd_fast += F.n_rounded - F.n_fallback;
    }
    ac_oracle_result_free(&F);
    ac_oracle_result_free(&M);
    ac_case_free(&c);
  }
  int64_t tc = 0;
  for (int f = 0; f < NFAM; f++) {
    tc += ty[f].cases;
    fprintf(stderr, "%s %-12s: %5lld cases %6lld elements, %6lld exact, %6lld decided by the binary64 pass, %5lld by MPFR;"
                    " with binary64 rounding %6lld by the fast passes, %5lld by MPFR\n",
            ac_dtype_name(dt), fam_name[f], (long long)ty[f].cases, (long long)ty[f].elems, (long long)ty[f].exact,
            (long long)ty[f].fast, (long long)ty[f].fallback, (long long)ty[f].dd_fast, (long long)ty[f].dd_fallback);
  }
  if (dt == AC_F64 || dt == AC_F32 || dt == AC_BF16) {
    /* binary64 rounding: the double-double pass decides most random elements, and leaves the
     * ties at binary64 breakpoints that its bound cannot separate to MPFR */
    ck_assert_msg(ty[FAM_RANDOM].dd_fast > 100 * ty[FAM_RANDOM].dd_fallback, AC_SEED_FMT "%s: binary64 rounding: random: %lld fast, %lld fallback",
                  AC_SEED_ARG, ac_dtype_name(dt), (long long)ty[FAM_RANDOM].dd_fast, (long long)ty[FAM_RANDOM].dd_fallback);
    ck_assert_msg(ty[FAM_BREAKPOINT].dd_fast > 0 && ty[FAM_BREAKPOINT].dd_fallback > 0,
                  AC_SEED_FMT "%s: binary64 breakpoints: %lld fast, %lld fallback", AC_SEED_ARG, ac_dtype_name(dt),
                  (long long)ty[FAM_BREAKPOINT].dd_fast, (long long)ty[FAM_BREAKPOINT].dd_fallback);
  }
  ck_assert_int_eq(tc, ncase);
  if (dt != AC_F64) {
    /* the pass decides most random elements, and leaves cancellation to MPFR */
    ck_assert_msg(ty[FAM_RANDOM].fast > 10 * ty[FAM_RANDOM].fallback, AC_SEED_FMT "%s: random: %lld fast, %lld fallback",
                  AC_SEED_ARG, ac_dtype_name(dt), (long long)ty[FAM_RANDOM].fast, (long long)ty[FAM_RANDOM].fallback);
    ck_assert_msg(ty[FAM_CANCEL].fallback > 0 || dt == AC_E4M3 || dt == AC_E5M2,
                  AC_SEED_FMT "%s: the fallback never triggered on cancellation", AC_SEED_ARG, ac_dtype_name(dt));
    int64_t fb = 0;
    for (int f = 0; f < NFAM; f++) fb += ty[f].fallback;
    ck_assert_msg(fb > 0, AC_SEED_FMT "%s: the fallback never triggered", AC_SEED_ARG, ac_dtype_name(dt));
  }
  mpfr_free_cache();
}

/* ---------------- fast head decode ---------------- */

START_TEST(decode_same)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x64656364);
  int64_t ngroups = 0, f32_own[2] = {0, 0};   /* fp32 heads: K or V the case's own array, or copied */
  for (int k = 0; k < 600; k++) {
    ac_dtype dt = (ac_dtype)(k % AC_NDTYPES);
    ac_case c;
    build(&c, dt, k % 3 == 0 ? FAM_MAGNITUDE : k % 3 == 1 ? FAM_SPECIAL : FAM_NEARTIE, &r);
    const ac_problem *p = &c.p;
    ac_or_head a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int64_t nk = p->tk * p->dk, nv = p->tk * p->dv, dv = p->dv;
    for (int64_t bb = 0; bb < p->batch; bb++)
      for (int64_t h = 0; h < p->kv_heads; h++) {
        ac_or_head_decode(&a, &c, bb, h);
        ac_oracle_opts oo;
        ac_oracle_opts_init(&oo);
        oo.lse_f64 = 1;   /* the MPFR levels may run: every field, vabs included */
        ac_or_fast_head_decode(&b, &c, bb, h, &oo, 1u << dt);
        REQUIRE(a.b == b.b && a.kvh == b.kvh && a.k_any == b.k_any && a.k_lsb == b.k_lsb && a.k_msb == b.k_msb,
                AC_SEED_FMT "%s case %d: head summary differs", AC_SEED_ARG, ac_dtype_name(dt), k);
        int k_me = 1;   /* significand and exponent, stored or split from kd or kf (ac_or_k), and the value */
        for (int64_t x = 0; x < nk; x++) {
          int32_t ea, eb;
          double da = ac_or_kval(&a, (size_t)x), db = ac_or_kval(&b, (size_t)x);
          if (ac_or_k(&a, (size_t)x, &ea) != ac_or_k(&b, (size_t)x, &eb) || ea != eb || memcmp(&da, &db, sizeof da))
            k_me = 0;
        }
        REQUIRE(k_me && !memcmp(a.kbad, b.kbad, (size_t)p->tk),
                AC_SEED_FMT "%s case %d: K differs", AC_SEED_ARG, ac_dtype_name(dt), k);
        int v_me = 1;   /* significand and exponent, stored or split from vd (ac_or_v) */
        for (int64_t x = 0; x < nv; x++) {
          int32_t ea, eb;
          int64_t ma = ac_or_v(&a, (size_t)x, x % dv, &ea), mb = ac_or_v(&b, (size_t)x, x % dv, &eb);
          double da = ac_or_vval(&a, (size_t)x), db = ac_or_vval(&b, (size_t)x);
          if (ma != mb || ea != eb || memcmp(&da, &db, sizeof da)) v_me = 0;
        }
        REQUIRE(a.vm && a.km && (b.vm == NULL) == (dt != AC_F64) && (b.km == NULL) == (dt != AC_F64),
                AC_SEED_FMT "%s: km, vm", AC_SEED_ARG, ac_dtype_name(dt));
        /* the narrow dtypes keep K and V in binary32 alone (half the bytes of binary64) */
        REQUIRE((b.kd == NULL) == (dt != AC_F64) && (b.vd == NULL) == (dt != AC_F64) &&
                    (b.kf != NULL) == (dt != AC_F64) && (b.vf != NULL) == (dt != AC_F64),
                AC_SEED_FMT "%s: kd, vd, kf, vf", AC_SEED_ARG, ac_dtype_name(dt));
        REQUIRE(v_me && !memcmp(a.vcls, b.vcls, (size_t)nv) &&
                    !memcmp(a.v_lsb, b.v_lsb, (size_t)dv * sizeof *a.v_lsb) &&
                    !memcmp(a.v_msb, b.v_msb, (size_t)dv * sizeof *a.v_msb) && !memcmp(a.v_any, b.v_any, (size_t)dv) &&
                    !memcmp(a.vabs, b.vabs, (size_t)(nv + dv) * sizeof *a.vabs),
                AC_SEED_FMT "%s case %d: V differs", AC_SEED_ARG, ac_dtype_name(dt), k);
        if (dt == AC_F32) {
          /* no copy of an all-finite K or V: kf and vf point into the case */
          int kfin = 1, vfin = 1;
          for (int64_t j = 0; j < p->tk; j++) kfin &= b.kbad[j] == 0;
          for (int64_t x = 0; x < nv; x++) vfin &= b.vcls[x] == AC_VCLS_FINITE;
          REQUIRE((b.kown == NULL) == kfin && (b.vown == NULL) == vfin &&
                      (!kfin || b.kf == (const float *)c.k + ac_kidx(p, bb, h, 0, 0)) &&
                      (!vfin || b.vf == (const float *)c.v + ac_vidx(p, bb, h, 0, 0)),
                  AC_SEED_FMT "f32 case %d: K or V copied although finite, or borrowed with NaN/inf", AC_SEED_ARG, k);
          f32_own[kfin]++;
          f32_own[vfin]++;
        }
      }
    /* scores and groups of every row with finite inputs: the fast ones equal the others */
    ac_or_scale sc;
    ac_oracle_opts o;
    ac_err e;
    ac_oracle_opts_init(&o);
    REQUIRE(ac_or_scale_init(&sc, p, &e) == 0, "scale");
    ac_or_ws w;
    ac_or_ws_init(&w, &c, &o, &sc, 1u << dt, 24, 1L << 16);
    for (int64_t bb = 0; bb < p->batch; bb++)
      for (int64_t h = 0; h < p->heads; h++) {
        ac_or_head_decode(&a, &c, bb, ac_kv_head(p, h));
        w.head = &a;
        for (int64_t i = 0; i < p->tq; i++) {
          int64_t n = ac_visible_count(p, i);
          if (n <= 0 || ac_or_row_q(&w, bb, h, i)) continue;
          int bad = 0;
          for (int64_t j = 0; j < n; j++) bad |= a.kbad[j];
          if (bad) continue;
          w.n = n;
          ac_or_row_scores(&w);
          int nl = w.nl;
          int32_t lsb = w.zlsb;
          uint64_t *z = malloc((size_t)(n * nl) * sizeof *z);
          memcpy(z, w.z, (size_t)(n * nl) * sizeof *z);
          ac_or_groups(&w);
          int64_t ng = w.ng, *ord = malloc((size_t)(3 * n + 1) * sizeof *ord), *gof = ord + n, *gst = gof + n;
          memcpy(ord, w.ord, (size_t)n * sizeof *ord);
          memcpy(gof, w.gof, (size_t)n * sizeof *gof);
          memcpy(gst, w.gst, (size_t)(ng + 1) * sizeof *gst);
          ac_or_row_q(&w, bb, h, i);
          ac_or_fast_scores(&w);
          if (w.nl == nl) {
            REQUIRE(w.zlsb == lsb && !memcmp(z, w.z, (size_t)(n * nl) * sizeof *z),
                    AC_SEED_FMT "%s case %d row %lld: fast scores differ", AC_SEED_ARG, ac_dtype_name(dt), k, (long long)i);
            ac_or_fast_groups(&w);
            REQUIRE(w.ng == ng && !memcmp(ord, w.ord, (size_t)n * sizeof *ord) &&
                        !memcmp(gof, w.gof, (size_t)n * sizeof *gof) && !memcmp(gst, w.gst, (size_t)(ng + 1) * sizeof *gst),
                    AC_SEED_FMT "%s case %d row %lld: fast groups differ", AC_SEED_ARG, ac_dtype_name(dt), k, (long long)i);
            ngroups++;
          }
          free(z);
          free(ord);
        }
      }
    w.head = NULL;
    ac_or_ws_free(&w);
    ac_or_head_free(&a);
    ac_or_head_free(&b);
    ac_case_free(&c);
  }
  ck_assert_msg(ngroups > 1000, "only %lld rows compared", (long long)ngroups);
  ck_assert_msg(f32_own[0] > 0 && f32_own[1] > 0, "fp32 heads: %lld copied, %lld borrowed", (long long)f32_own[0],
                (long long)f32_own[1]);
}
END_TEST

START_TEST(same_f64) { check_dtype(AC_F64); }
END_TEST
START_TEST(same_f32) { check_dtype(AC_F32); }
END_TEST
START_TEST(same_f16) { check_dtype(AC_F16); }
END_TEST
START_TEST(same_bf16) { check_dtype(AC_BF16); }
END_TEST
START_TEST(same_e4m3) { check_dtype(AC_E4M3); }
END_TEST
START_TEST(same_e5m2) { check_dtype(AC_E5M2); }
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_fast");
  TCase *te = tcase_create("exp");
  tcase_set_timeout(te, 300);
  tcase_add_test(te, exp_constants);
  tcase_add_test(te, exp_bound);
  suite_add_tcase(s, te);
  TCase *td = tcase_create("decode");
  tcase_add_test(td, decode_same);
  suite_add_tcase(s, td);
  TCase *tc = tcase_create("fast_equals_mpfr");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, same_f64);
  tcase_add_test(tc, same_f32);
  tcase_add_test(tc, same_f16);
  tcase_add_test(tc, same_bf16);
  tcase_add_test(tc, same_e4m3);
  tcase_add_test(tc, same_e5m2);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
