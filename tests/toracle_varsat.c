/* toracle_varsat.c: capped scores far past saturation (|x| = |c q·k / cap| up to 1e36, where
 * sinh and cosh overflow MPFR's exponent range and tanh x is ±1 up to far less than any precision
 * resolves) next to moderate scores, fixed keys (the sink, a raw ±inf) and offsets: every element
 * and LSE decided, bit for bit against the brute force of toracle_varref.c, at level 0. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "variants.h"
#include "toracle_varref.h"

/* B = 1, H heads, one kv head, tq rows, keys tk, d = 1, softcap cap; q, k, v as given (q: the
 * first H, one per head, when tq = 1; else NULL). */
static void sat_case(ac_case *c, ac_dtype dt, uint32_t used, double cap, int64_t H, int64_t tq, int64_t tk,
                     const double *q, const double *k, const double *v)
{
  ac_err e;
  ref_case(c, dt, AC_MASK_NONE, 1, H, 1, tq, tk, 1, 1);
  ac_features_plain(&c->p);
  c->p.f.used = AC_FEAT_SOFTCAP | used;
  c->p.f.softcap = cap;
  if (used & AC_FEAT_BIAS) { c->p.f.bias_b = 1; c->p.f.bias_h = H; }
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  if (!q) return;
  for (int64_t h = 0; h < H; h++) ref_set(c, 'q', (size_t)h, q[h]);
  for (int64_t j = 0; j < tk; j++) { ref_set(c, 'k', (size_t)j, k[j]); ref_set(c, 'v', (size_t)j, v[j]); }
}

/* Softcap 30 and a sink of 2.857 next to a key whose raw score is 3.4e36 (a fuzzed variant_mix
 * case): the sink's difference to the top was enclosed as [σ - 60, σ] (D's upper end 0 where
 * sinh and cosh overflow), a weight up to e^2.857 against the top's 1. */
START_TEST(sink_under_saturated_top)
{
  vstats vs = {0};
  static const double q[2] = {1, 0.5}, k[3] = {0x1.47ae14p+121, 0.25, -0.125}, v[3] = {0.75, -1, 0x1.8p-3};
  static const float sg[2] = {2.857008f, 30};
  for (int s = 0; s < 2; s++) {
    ac_case c;
    sat_case(&c, AC_F32, AC_FEAT_SINKS, 30, 2, 1, 3, q, k, v);
    for (int h = 0; h < 2; h++) c.sinks[h] = s ? sg[1 - h] : sg[h];
    vref_check_case(&c, "sink under a saturated top", &vs);
    ac_case_free(&c);
  }
  vref_report("sink under a saturated top", &vs);
}
END_TEST

/* Softcap 1, bf16, one k of -3.99e36: the capped scores -1 + tau (tau = e^{-8e36}) and +1 - tau
 * next to a moderate one; each capped difference's distance to ±1 or ±2 enclosed directly. */
START_TEST(lse_saturated_key)
{
  vstats vs = {0};
  static const double q[2] = {0.75, -1.5}, k[2] = {1.5, -3.99e36}, v[2] = {0.5, -2};
  ac_case c;
  sat_case(&c, AC_BF16, 0, 1, 2, 1, 2, q, k, v);
  vref_check_case(&c, "softcap 1, k -3.99e36", &vs);
  ac_case_free(&c);
  vref_report("softcap 1, k -3.99e36", &vs);
}
END_TEST

/* Rows of four keys: raw scores X (|X| / cap up to 2^120, either sign), X + Y (Y a few bits
 * below X, tiny, or 0), a moderate one and a raw -inf (tanh(-inf) = -1 exactly), with sinks and a
 * bias drawn so that offsets also cancel ±cap exactly at times; every element decided. */
START_TEST(mixed_sweep)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x736174);
  vstats vs = {0};
  static const double caps[] = {0.5, 1, 30};
  static const ac_dtype dts[] = {AC_F32, AC_BF16, AC_F64};
  double t0 = ac_now();
  int64_t un = 0;
  long mp = 0;
  for (int k = 0; k < 3; k++) {
    ac_case c;
    int64_t tq = 200;
    double cap = caps[k];
    sat_case(&c, dts[k], AC_FEAT_SINKS | AC_FEAT_BIAS, cap, 2, tq, 4, NULL, NULL, NULL);
    ref_set(&c, 'k', 0, 1); ref_set(&c, 'k', 1, 0); ref_set(&c, 'k', 2, 0.5); ref_set(&c, 'k', 3, -INFINITY);
    for (int j = 0; j < 4; j++) ref_set(&c, 'v', (size_t)j, ac_rng_normal(&r));
    c.sinks[0] = (float)cap;
    c.sinks[1] = (float)-cap;
    for (int64_t x = 0; x < 2 * tq; x++) {
      double X = ldexp(1 + ac_rng_uniform(&r), (int)ac_rng_range(&r, 0, 120)) * (ac_rng_below(&r, 2) ? 1 : -1);
      ref_set(&c, 'q', (size_t)x, ac_rng_below(&r, 4) ? X : ac_rng_normal(&r));
      for (int j = 0; j < 4; j++) {
        int kind = (int)ac_rng_below(&r, 4);   /* a bias that cancels ±cap, 0, or a small one */
        double b = kind == 0 ? cap : kind == 1 ? -cap : kind == 2 ? 0 : ac_rng_normal(&r);
        ac_store_bits(c.p.f.bias_dtype, c.bias, ac_biasidx(&c.p, 0, x / tq, x % tq, j), ac_encode_f64(c.p.f.bias_dtype, b));
      }
    }
    ac_oracle_result res;
    ref_oracle(&c, 1u << AC_F32, 2, &res);
    un += res.n_unresolved;
    if (res.max_prec > mp) mp = res.max_prec;
    ac_oracle_result_free(&res);
    vref_check_case(&c, "saturated mix", &vs);
    ac_case_free(&c);
  }
  fprintf(stderr, "saturated mix: %lld unresolved, largest precision %ld bits, %.2f s\n", (long long)un, mp, ac_now() - t0);
  vref_report("saturated mix", &vs);
}
END_TEST

/* One key that keeps a weight, far past saturation: LSE = s = K - cap tau exactly, K = cap + a.
 * With cap 30 + 2^-19 and a bias of 2^-20 (f32), or cap 1 + 3 2^-24, K is a binary32 midpoint
 * whose tie goes to the far side, and the enclosure of s ends on it at every precision: the side
 * of K that s lies on decides. The other key has a bias of -inf; both signs of the raw score. */
START_TEST(single_key_on_midpoint)
{
  vstats vs = {0};
  static const double caps[] = {30 + 0x1p-19, 1 + 0x3p-24, 1 + 0x3p-24};
  static const double biases[] = {0x1p-20, 0, 0x1p-30};
  for (int k = 0; k < 3; k++)
    for (int sg = 0; sg < 2; sg++) {
      ac_case c;
      static const double q[1] = {1}, v[2] = {0.5, -2};
      double kk[2] = {sg ? -3e36 : 3e36, 1};
      sat_case(&c, AC_F32, AC_FEAT_BIAS | AC_FEAT_WINDOW, caps[k], 1, 1, 2, q, kk, v);
      c.p.f.win_left = 1;   /* bottom-right, tq = 1, tk = 2: keys 0 and 1; right 0, left 1: both */
      c.p.f.win_right = -1;
      ac_store_bits(c.p.f.bias_dtype, c.bias, 0, ac_encode_f64(c.p.f.bias_dtype, sg ? -biases[k] : biases[k]));
      ac_store_bits(c.p.f.bias_dtype, c.bias, 1, ac_encode_f64(c.p.f.bias_dtype, -INFINITY));
      vref_check_case(&c, "single saturated key on a midpoint", &vs);
      ac_case_free(&c);
    }
  vref_report("single saturated key on a midpoint", &vs);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_varsat");
  TCase *tc = tcase_create("saturated_softcap");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, sink_under_saturated_top);
  tcase_add_test(tc, lse_saturated_key);
  tcase_add_test(tc, mixed_sweep);
  tcase_add_test(tc, single_key_on_midpoint);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
