/* toracle_variants.c: the oracle on attention variants (docs/variants.md) against a brute force
 * written from the ABI's formula alone (kernels/attncheck_kernel.h): visibility = mask AND
 * window AND boolean mask, s = scale q·k (descaled values), softcap, ALiBi, bias, the sink in
 * the denominator, all in MPFR at 2500 bits. Rounding is compared bit for bit wherever the
 * brute force is unambiguous; rows the rule table decides (NaN, all -inf, empty) are checked by
 * their accepted outcomes. Adversarial softcap rows (raw scores far past saturation, outputs on
 * a breakpoint up to the capped scores' differences) must all be decided. */
#include "config.h"
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "dtype_mpfr.h"
#include "variants.h"
#include "toracle_varref.h"

/* A case with features `used` (every other field plain), tensors allocated, q/k/v random. */
static void vcase(ac_case *c, ac_dtype dt, ac_mask m, uint32_t used, int64_t B, int64_t H, int64_t KVH, int64_t tq,
                  int64_t tk, int64_t dk, int64_t dv, ac_rng *r, double sigma)
{
  ac_err e;
  ref_case(c, dt, m, B, H, KVH, tq, tk, dk, dv);
  ac_features_plain(&c->p);
  c->p.f.used = used;
  if (used & AC_FEAT_BIAS) { c->p.f.bias_b = B; c->p.f.bias_h = H; }
  if (used & AC_FEAT_BOOL_MASK) { c->p.f.mask_b = B; c->p.f.mask_h = 1; }
  if (used & AC_FEAT_SOFTCAP) c->p.f.softcap = 5;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  ac_counts n;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r) * sigma);
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(r) * sigma);
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(r));
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SLOPES); x++)
    c->alibi_slopes[x] = (float)ldexp(1.0, -(int)(1 + ac_rng_below(r, 8)));
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SINKS); x++) c->sinks[x] = (float)(ac_rng_normal(r) * 2);
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_BOOL_MASK); x++) c->bool_mask[x] = ac_rng_below(r, 4) != 0;
  for (int k = 0; k < 3; k++)
    for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_DESCALE_Q); x++)
      if (c->descale[k]) c->descale[k][x] = (float)(0.5 + ac_rng_uniform(r));
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_BIAS); x++)
    ac_store_bits(c->p.f.bias_dtype, c->bias, (size_t)x, ac_encode_f64(c->p.f.bias_dtype, ac_rng_normal(r) * 2));
}

static void set_bias(ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j, double x)
{
  const ac_problem *p = &c->p;
  ac_store_bits(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, i, j), ac_encode_f64(p->f.bias_dtype, x));
}

START_TEST(windows)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x77696e);
  vstats vs = {0};
  static const int64_t wins[][2] = {{0, 0}, {1, 1}, {0, -1}, {-1, 0}, {2, 0}, {40, 40}, {3, -1}, {-1, 2}};
  for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++)
    for (int tl = 0; tl < 2; tl++)
      for (int m = 0; m < 3; m++) {
        ac_case c;
        vcase(&c, AC_F32, (ac_mask)m, AC_FEAT_WINDOW, 1, 2, 1, 7, 11, 4, 3, &r, 1);
        c.p.f.win_left = wins[k][0];
        c.p.f.win_right = wins[k][1];
        c.p.f.win_top_left = tl;
        char what[96];
        snprintf(what, sizeof what, "window (%lld,%lld) %s mask %d", (long long)wins[k][0], (long long)wins[k][1],
                 tl ? "top-left" : "bottom-right", m);
        vref_check_case(&c, what, &vs);
        ac_case_free(&c);
      }
  vref_report("windows", &vs);
  ck_assert(vs.empty_rows > 0);
}
END_TEST

START_TEST(softcap)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x736f6674);
  vstats vs = {0};
  static const double caps[] = {0.25, 1, 5, 30};
  static const double sig[] = {1, 8, 100, 1e4};
  for (int dt = 0; dt < 4; dt++)
    for (size_t k = 0; k < 4; k++) {
      ac_case c;
      vcase(&c, (ac_dtype)dt, (ac_mask)(k % 3), AC_FEAT_SOFTCAP, 1, 2, 2, 5, 9, 4, 3, &r, sig[k]);
      c.p.f.softcap = caps[(k + (size_t)dt) % 4];
      if (dt == AC_F32 && k == 3) { c.p.scale_is_default = 0; c.p.scale = 0x1p-3; }
      char what[64];
      snprintf(what, sizeof what, "softcap %g %s sigma %g", c.p.f.softcap, ac_dtype_name((ac_dtype)dt), sig[k]);
      vref_check_case(&c, what, &vs);
      ac_case_free(&c);
    }
  vref_report("softcap", &vs);
}
END_TEST

START_TEST(alibi)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x616c69);
  vstats vs = {0};
  for (int k = 0; k < 6; k++) {
    ac_case c;
    int64_t tk = k == 5 ? 300 : 9, tq = k == 5 ? 4 : 6;
    /* dk 4: c = 1/2, dk 9: the rational 1/3, dk 8: irrational (each way of comparing scores) */
    int64_t dk = k == 4 || k == 1 ? 9 : k == 0 ? 8 : 4;
    vcase(&c, k % 2 ? AC_F16 : AC_F32, (ac_mask)(k % 3), AC_FEAT_ALIBI | (k >= 3 ? AC_FEAT_SOFTCAP : 0), 2, 2, 1, tq, tk, dk,
          2, &r, 1);
    if (k % 2) {   /* per batch x head */
      free(c.alibi_slopes);
      c.alibi_slopes = NULL;
      c.p.f.alibi_per_batch = 1;
      ac_err e;
      ck_assert(ac_features_alloc(&c, &e) == 0);
      for (int x = 0; x < 4; x++) c.alibi_slopes[x] = (float)ldexp(1.0, -(int)(1 + ac_rng_below(&r, 8))) * (x % 2 ? 3 : 1);
    }
    if (k == 2) { c.p.scale_is_default = 0; c.p.scale = 0.3; }
    char what[64];
    snprintf(what, sizeof what, "alibi case %d", k);
    vref_check_case(&c, what, &vs);
    ac_case_free(&c);
  }
  vref_report("alibi", &vs);
}
END_TEST

START_TEST(bias)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x62696173);
  vstats vs = {0};
  static const double sentinels[] = {-1e9, -65504, -FLT_MAX, -INFINITY};
  for (int bd = 0; bd < AC_NDTYPES; bd++) {
    ac_case c;
    vcase(&c, AC_F32, AC_MASK_CAUSAL, AC_FEAT_BIAS, 2, 2, 2, 8, 8, 4, 3, &r, 1);
    c.p.f.bias_dtype = (ac_dtype)bd;
    ac_features_free(&c);
    ac_err e;
    ck_assert(ac_features_alloc(&c, &e) == 0);
    for (int64_t b = 0; b < 2; b++)
      for (int64_t h = 0; h < 2; h++)
        for (int64_t i = 0; i < 8; i++)
          for (int64_t j = 0; j < 8; j++) {
            double x = ac_rng_normal(&r) * 3;
            if (j > i) x = NAN;                                   /* under the causal mask: never read */
            else if (i == 3) x = -INFINITY;                       /* a whole -inf row */
            else if (j % 3 == 1) x = sentinels[(i + j) % 4];      /* sentinels and -inf blocks */
            else if (i == 6 && j == 0 && h == 1) x = NAN;         /* a NaN at a visible key */
            set_bias(&c, b, h, i, j, x);
          }
    char what[64];
    snprintf(what, sizeof what, "bias %s", ac_dtype_name((ac_dtype)bd));
    vref_check_case(&c, what, &vs);
    ac_case_free(&c);
  }
  vref_report("bias", &vs);
  ck_assert(vs.nan_rows > 0 && vs.zero_rows > 0);
}
END_TEST

START_TEST(bool_mask)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x626d);
  vstats vs = {0};
  for (int k = 0; k < 6; k++) {
    ac_case c;
    vcase(&c, AC_BF16, (ac_mask)(k % 3), AC_FEAT_BOOL_MASK | (k >= 3 ? AC_FEAT_WINDOW : 0), 2, 2, 1, 9, 9, 4, 2, &r, 1);
    c.p.f.win_left = 2;
    for (int64_t j = 0; j < 9; j++) c.bool_mask[ac_bmaskidx(&c.p, 1, 0, 4, j)] = 0;   /* a middle row emptied */
    char what[64];
    snprintf(what, sizeof what, "bool mask case %d", k);
    vref_check_case(&c, what, &vs);
    ac_case_free(&c);
  }
  vref_report("bool mask", &vs);
  ck_assert(vs.empty_rows > 0);
}
END_TEST

START_TEST(sinks)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x736b);
  vstats vs = {0};
  static const float sg[] = {0, 40, -80, 3.5f, -2};
  for (int k = 0; k < 5; k++) {
    ac_case c;
    vcase(&c, AC_F32, (ac_mask)(k % 3), AC_FEAT_SINKS | AC_FEAT_WINDOW | (k >= 3 ? AC_FEAT_ALIBI : 0), 1, 2, 1, 6, 8,
          4, 3, &r, 1);
    c.p.f.win_left = 1;
    c.p.f.win_right = k == 2 ? -1 : 0;
    c.p.f.win_top_left = k % 2;
    c.sinks[0] = sg[k];
    char what[64];
    snprintf(what, sizeof what, "sinks case %d", k);
    vref_check_case(&c, what, &vs);
    ac_case_free(&c);
  }
  vref_report("sinks", &vs);
}
END_TEST

/* Rows with no visible key and a sink: o = 0 exactly, LSE = sigma. */
START_TEST(sink_empty_rows)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x7365);
  ac_case c;
  vcase(&c, AC_F16, AC_MASK_CAUSAL, AC_FEAT_SINKS | AC_FEAT_BOOL_MASK, 1, 1, 1, 4, 4, 2, 2, &r, 1);
  memset(c.bool_mask, 0, 16);
  c.sinks[0] = 1.25f;
  ac_oracle_result res;
  ac_err e;
  ck_assert(ac_oracle_run(&c, NULL, &res, &e) == 0);
  for (int64_t x = 0; x < 4; x++) {
    ck_assert_int_eq(res.rows[x].visible, 0);
    ck_assert(res.rows[x].lse_f32 == 1.25f && res.rows[x].lse_accept == AC_ACCEPT_VALUE);
    for (int64_t t = 0; t < 2; t++) {
      const ac_oracle_elem *el = ac_oracle_elem_at(&res, x, t);
      ck_assert(el->o == 0 && el->how == AC_HOW_EXACT && el->accept == AC_ACCEPT_VALUE);
    }
  }
  ac_oracle_result_free(&res);
  ac_case_free(&c);
}
END_TEST

START_TEST(descales_mixed)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x6473);
  vstats vs = {0};
  for (int k = 0; k < 4; k++) {
    ac_case c;
    uint32_t used = AC_FEAT_DESCALE | (k >= 2 ? AC_FEAT_MIXED_DTYPES | AC_FEAT_SOFTCAP : 0);
    vcase(&c, k % 2 ? AC_E4M3 : AC_E5M2, (ac_mask)(k % 3), used, 2, 2, 1, 5, 7, 4, 2, &r, 1);
    if (k >= 2) {   /* decoded by their own dtypes: re-store q in f16, k in bf16, v in e4m3 */
      ac_features_free(&c);
      ac_case_free(&c);
      ref_case(&c, AC_F32, (ac_mask)(k % 3), 2, 2, 1, 5, 7, 4, 2);
      ac_features_plain(&c.p);
      c.p.f.used = used;
      c.p.f.qd = AC_F16; c.p.f.kd = AC_BF16; c.p.f.vd = AC_E4M3; c.p.f.od = AC_F16;
      c.p.f.softcap = 2;
      ac_err e;
      ck_assert(ac_features_alloc(&c, &e) == 0);
      for (int64_t x = 0; x < 2 * 2 * 5 * 4; x++) ac_store_bits(AC_F16, c.q, (size_t)x, ac_encode_f64(AC_F16, ac_rng_normal(&r) * 3));
      for (int64_t x = 0; x < 2 * 7 * 4; x++) ac_store_bits(AC_BF16, c.k, (size_t)x, ac_encode_f64(AC_BF16, ac_rng_normal(&r) * 3));
      for (int64_t x = 0; x < 2 * 7 * 2; x++) ac_store_bits(AC_E4M3, c.v, (size_t)x, ac_encode_f64(AC_E4M3, ac_rng_normal(&r)));
      for (int q = 0; q < 3; q++)
        for (int x = 0; x < 2; x++) c.descale[q][x] = (float)(0.25 + ac_rng_uniform(&r));
    }
    char what[64];
    snprintf(what, sizeof what, "descale case %d", k);
    vref_check_case(&c, what, &vs);
    ac_case_free(&c);
  }
  vref_report("descales", &vs);
}
END_TEST

/* Descales of fp64 tensors: refused with one line, never computed wrongly. */
START_TEST(descale_f64_refused)
{
  /* fp64 tensors take no descales: the problem does not validate (case files and gen refuse it) */
  ac_problem p;
  memset(&p, 0, sizeof p);
  p.dtype = AC_F64;
  p.batch = p.heads = p.kv_heads = 1;
  p.tq = p.tk = p.dk = p.dv = 2;
  p.scale_is_default = 1;
  ac_features_plain(&p);
  p.f.used = AC_FEAT_DESCALE;
  ac_err e;
  ck_assert_int_eq(ac_problem_validate(&p, ac_mem_cap(), &e), -1);
  ck_assert_msg(strstr(e.msg, "fp64 tensors take no descales") != NULL, "%s", e.msg);
}
END_TEST

/* The memory estimate counts a variant row's own head and offsets. */
START_TEST(mem_need)
{
  ac_problem p;
  memset(&p, 0, sizeof p);
  p.dtype = AC_F16; p.batch = 1; p.heads = 4; p.kv_heads = 1; p.tq = p.tk = 4096; p.dk = p.dv = 128;
  ac_features_plain(&p);
  double plain = ac_oracle_mem_need(&p, 1u << AC_F16, 64, 4);
  p.f.used = AC_FEAT_WINDOW;
  double var = ac_oracle_mem_need(&p, 1u << AC_F16, 64, 4);
  ck_assert_msg(var > plain + 4.0 * 4096 * 256 * 8, "variant %g, plain %g", var, plain);
}
END_TEST

START_TEST(combined)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x636f);
  vstats vs = {0};
  int n = ac_test_expensive() ? 400 : 40;
  for (int k = 0; k < n; k++) {
    uint32_t used = (uint32_t)ac_rng_below(&r, 64) & (AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS |
                                                        AC_FEAT_BOOL_MASK | AC_FEAT_SINKS);
    if (!used) used = AC_FEAT_ALIBI;
    ac_dtype dt = (ac_dtype)ac_rng_below(&r, 4);
    ac_case c;
    vcase(&c, dt, (ac_mask)ac_rng_below(&r, 3), used, 1 + (int64_t)ac_rng_below(&r, 2), 2, 1 + (int64_t)ac_rng_below(&r, 2),
          1 + (int64_t)ac_rng_below(&r, 6), 1 + (int64_t)ac_rng_below(&r, 9), 1 + (int64_t)ac_rng_below(&r, 6),
          1 + (int64_t)ac_rng_below(&r, 3), &r, ac_rng_below(&r, 2) ? 1 : 6);
    c.p.f.win_left = (int64_t)ac_rng_below(&r, 5) - 1;
    c.p.f.win_right = (int64_t)ac_rng_below(&r, 5) - 1;
    c.p.f.win_top_left = (int)ac_rng_below(&r, 2);
    c.p.f.softcap = ldexp(1.0, (int)ac_rng_range(&r, -2, 5));
    if (ac_rng_below(&r, 3) == 0) { c.p.scale_is_default = 0; c.p.scale = ac_rng_below(&r, 2) ? -0.375 : 0.0; }
    char what[64];
    snprintf(what, sizeof what, "combined case %d (features 0x%x, %s)", k, (unsigned)used, ac_dtype_name(dt));
    vref_check_case(&c, what, &vs);
    ac_case_free(&c);
  }
  vref_report("combined", &vs);
}
END_TEST

/* Adversarial softcap rows: q = (X, Y), k_0 = (1, 0), k_1 = (1, 1): raw scores X and X + Y far past
 * saturation (|X| / cap up to 1e35), Y a few bits below X or tiny; V_0, V_1 adjacent binary32
 * values, so that the mean is a breakpoint and o lies on it up to cap (tanh((X + Y) / cap) -
 * tanh(X / cap)), a difference down to e^{-1e35}, far beyond MPFR's exponent range. o rounds to
 * the value of the higher score (Y > 0: V_1), or ties to even when Y = 0. Returns unresolved. */
static int64_t adversarial(int64_t rows, double cap, ac_rng *r, int64_t *fallback, long *maxprec, int64_t *elems)
{
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, rows, 2, 2, 4);
  ac_features_plain(&c.p);
  c.p.f.used = AC_FEAT_SOFTCAP;
  c.p.f.softcap = cap;
  c.p.scale_is_default = 0;
  c.p.scale = 1;
  static const float v0[4] = {1, 0x1.000002p0f, -3, 0x1p-10f};
  static const float v1[4] = {0x1.000002p0f, 1, -0x1.800002p1f, 0x1.000002p-10f};
  ref_set(&c, 'k', 0, 1); ref_set(&c, 'k', 1, 0); ref_set(&c, 'k', 2, 1); ref_set(&c, 'k', 3, 1);
  for (int t = 0; t < 4; t++) { ref_set(&c, 'v', (size_t)t, v0[t]); ref_set(&c, 'v', (size_t)(4 + t), v1[t]); }
  for (int64_t i = 0; i < rows; i++) {
    double X = ldexp(1 + ac_rng_uniform(r), (int)ac_rng_range(r, 0, 116)) * (ac_rng_below(r, 2) ? 1 : -1);
    X = (double)(float)X;
    int kind = (int)ac_rng_below(r, 8);
    double Y = kind == 0 ? 0 : kind < 5 ? ldexp(X, -(int)ac_rng_range(r, 1, 23)) : ldexp(1.0, (int)ac_rng_range(r, -20, 20));
    if (ac_rng_below(r, 2)) Y = -Y;
    ref_set(&c, 'q', (size_t)(2 * i), X);
    ref_set(&c, 'q', (size_t)(2 * i + 1), Y);
  }
  ac_oracle_result res;
  ac_err e;
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  o.threads = 2;
  ck_assert(ac_oracle_run(&c, &o, &res, &e) == 0);
  mpfr_t m;
  mpfr_init2(m, 64);
  for (int64_t i = 0; i < rows; i++) {
    double Y = ref_get(&c, 'q', (size_t)(2 * i + 1));
    for (int t = 0; t < 4; t++) {
      uint64_t got = res.o_round[AC_F32][i * 4 + t], want;
      if (Y > 0) want = ac_encode_f64(AC_F32, v1[t]);
      else if (Y < 0) want = ac_encode_f64(AC_F32, v0[t]);
      else {
        mpfr_set_d(m, v0[t], MPFR_RNDN);
        mpfr_add_d(m, m, v1[t], MPFR_RNDN);
        mpfr_div_2ui(m, m, 1, MPFR_RNDN);
        want = ac_encode_mpfr(AC_F32, m, AC_E4M3_SATURATE);
      }
      if (res.elems[i * 4 + t].how == AC_HOW_UNRESOLVED) continue;
      ck_assert_msg(got == want, AC_SEED_FMT "adversarial cap %g row %lld col %d: q = (%a, %a): %a, expected %a", AC_SEED_ARG,
                    cap, (long long)i, t, ref_get(&c, 'q', (size_t)(2 * i)), Y, ac_decode(AC_F32, got), ac_decode(AC_F32, want));
    }
  }
  mpfr_clear(m);
  int64_t un = res.n_unresolved;
  *fallback += res.n_fallback;
  *elems += rows * 4;
  if (res.max_prec > *maxprec) *maxprec = res.max_prec;
  ac_oracle_result_free(&res);
  ac_case_free(&c);
  return un;
}

START_TEST(softcap_adversarial)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x6164);
  static const double caps[] = {0.5, 1, 8, 30, 50};
  int64_t un = 0, fb = 0, elems = 0;
  long mp = 0;
  double t0 = ac_now();
  for (int k = 0; k < 5; k++) un += adversarial(500, caps[k], &r, &fb, &mp, &elems);
  fprintf(stderr, "softcap adversarial: %lld elements, %lld unresolved, %lld past level 0, largest precision %ld bits, %.2f s\n",
          (long long)elems, (long long)un, (long long)fb, mp, ac_now() - t0);
  ck_assert_msg(un == 0, AC_SEED_FMT "%lld of %lld adversarial softcap elements unresolved", AC_SEED_ARG, (long long)un,
                (long long)elems);
}
END_TEST

/* Budget magnitudes (docs/numerics.md §11.4): a -1e9 sentinel's key enters no budget term, a
 * softcap far past saturation takes the raw score's size out of G and Δ, ALiBi's and the
 * bias's magnitudes enter S'. */
START_TEST(budget_magnitudes)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x6275);
  ac_case c;
  ac_err e;
  vcase(&c, AC_F32, AC_MASK_NONE, AC_FEAT_BIAS, 1, 1, 1, 2, 6, 2, 2, &r, 1);
  for (int64_t j = 0; j < 6; j++) {
    set_bias(&c, 0, 0, 0, j, j % 2 ? -1e9 : 0.5);
    set_bias(&c, 0, 0, 1, j, j % 2 ? -3e38 : 100);
  }
  ac_oracle_result res;
  ck_assert(ac_oracle_run(&c, NULL, &res, &e) == 0);
  for (int x = 0; x < 2; x++) {
    double lim = x ? 400 : 20;   /* |bias| + |s| + |c d| of the keys that keep a weight */
    ck_assert_msg(res.rows[x].max_abs_s < lim && res.rows[x].lse_s < lim, "row %d: max_abs_s %g lse_s %g", x,
                  res.rows[x].max_abs_s, res.rows[x].lse_s);
    ck_assert_msg(res.rows[x].max_abs_s > (x ? 200 : 0.5), "row %d: max_abs_s %g misses the bias", x, res.rows[x].max_abs_s);
    for (int t = 0; t < 2; t++) ck_assert(ac_oracle_elem_at(&res, x, t)->Sp < lim * 4);
  }
  ac_oracle_result_free(&res);
  ac_case_free(&c);
  /* softcap 2 over raw scores near ±1e6: the dot product's error no longer moves the scores */
  vcase(&c, AC_F32, AC_MASK_NONE, AC_FEAT_SOFTCAP, 1, 1, 1, 1, 4, 2, 2, &r, 1);
  c.p.f.softcap = 2;
  c.p.scale_is_default = 0;
  c.p.scale = 1;
  ref_set(&c, 'q', 0, 1000); ref_set(&c, 'q', 1, 1000);
  for (int j = 0; j < 4; j++) { ref_set(&c, 'k', (size_t)(2 * j), 500 + j); ref_set(&c, 'k', (size_t)(2 * j + 1), 500 - j); }
  ck_assert(ac_oracle_run(&c, NULL, &res, &e) == 0);
  ck_assert_msg(res.rows[0].max_cZ < 1e-6 && res.rows[0].lse_cZ < 1e-6, "max_cZ %g lse_cZ %g", res.rows[0].max_cZ,
                res.rows[0].lse_cZ);
  ck_assert_msg(res.rows[0].max_abs_s <= 4 * 2 && res.rows[0].max_abs_s >= 2, "max_abs_s %g", res.rows[0].max_abs_s);
  for (int t = 0; t < 2; t++) ck_assert(ac_oracle_elem_at(&res, 0, t)->G < 1e-6);
  ac_oracle_result_free(&res);
  ac_case_free(&c);
  /* ALiBi and a bias that cancel it exactly: the same scores and output as plain attention, but
   * each stage's magnitude enters S' and LSE's lse_s (2|s| + 2|m dist| against |s|) */
  for (int fast = 0; fast < 2; fast++) {
    ac_case d;
    ac_oracle_result rp;
    ac_oracle_opts o;
    ac_oracle_opts_init(&o);
    o.no_fast = !fast;
    vcase(&c, AC_F32, AC_MASK_NONE, AC_FEAT_ALIBI | AC_FEAT_BIAS, 1, 1, 1, 3, 8, 4, 2, &r, 1);
    c.alibi_slopes[0] = 1;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 8; j++) set_bias(&c, 0, 0, i, j, (double)ac_alibi_dist(&c.p, i, j));
    ck_assert(ac_case_copy(&d, &c, &e) == 0);
    ac_features_free(&d);
    ac_features_plain(&d.p);
    ck_assert(ac_oracle_run(&c, &o, &res, &e) == 0 && ac_oracle_run(&d, &o, &rp, &e) == 0);
    for (int64_t x = 0; x < 3; x++) {
      ck_assert(res.rows[x].lse_f32 == rp.rows[x].lse_f32 && res.rows[x].lse_s > 2 * rp.rows[x].lse_s);
      for (int t = 0; t < 2; t++) {
        const ac_oracle_elem *a = ac_oracle_elem_at(&res, x, t), *b = ac_oracle_elem_at(&rp, x, t);
        ck_assert(res.o_round[AC_F32][x * 2 + t] == rp.o_round[AC_F32][x * 2 + t]);
        ck_assert_msg(a->Sp > 2 * b->Sp && a->G == b->G, "%s row %lld col %d: S' %g against plain %g", fast ? "fast" : "MPFR",
                      (long long)x, t, a->Sp, b->Sp);
      }
    }
    ac_oracle_result_free(&res);
    ac_oracle_result_free(&rp);
    ac_case_free(&c);
    ac_case_free(&d);
  }
  /* ALiBi: |m dist| of the keys that keep a weight enters S' and max_abs_s */
  vcase(&c, AC_F32, AC_MASK_NONE, AC_FEAT_ALIBI, 1, 1, 1, 1, 4, 2, 2, &r, 1);
  c.alibi_slopes[0] = 2;
  ck_assert(ac_oracle_run(&c, NULL, &res, &e) == 0);
  ck_assert_msg(res.rows[0].max_abs_s >= 2 * 3, "max_abs_s %g without ALiBi's |m dist|", res.rows[0].max_abs_s);
  ac_oracle_result_free(&res);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_variants");
  TCase *tc = tcase_create("variants_against_brute_force");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, windows);
  tcase_add_test(tc, softcap);
  tcase_add_test(tc, alibi);
  tcase_add_test(tc, bias);
  tcase_add_test(tc, bool_mask);
  tcase_add_test(tc, sinks);
  tcase_add_test(tc, sink_empty_rows);
  tcase_add_test(tc, descales_mixed);
  tcase_add_test(tc, descale_f64_refused);
  tcase_add_test(tc, mem_need);
  tcase_add_test(tc, combined);
  tcase_add_test(tc, softcap_adversarial);
  tcase_add_test(tc, budget_magnitudes);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
