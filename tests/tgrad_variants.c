/* tgrad_variants.c: the backward oracle (oracle/grad.h) on attention variants against the brute force
 * of tests/tgrad_ref.c: sliding windows and boolean masks, ALiBi and bias (a -inf bias drops the key),
 * sinks and dσ, a bias that equalizes scores on an fp16 tie, rows cancelling in dσ, the rule table
 * under a window; softcap: tests/tgrad_softcap. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "tgrad_util.h"
#include "variants.h"
#include "grad_judge.h"

#define PREC GT_PREC

START_TEST(windows_and_bool_masks)
{
  /* visibility beyond the mask: sliding windows (both alignments) and boolean masks, rows emptied
   * in the middle, against the brute force */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 9);
  static const ac_dtype dts[] = {AC_F32, AC_F16, AC_BF16, AC_F64};
  static const uint32_t feats[] = {AC_FEAT_WINDOW, AC_FEAT_BOOL_MASK, AC_FEAT_WINDOW | AC_FEAT_BOOL_MASK};
  int ncases = ac_test_expensive() ? 800 : 80;
  gt_tally n = {0, 0, 0, 0};
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dts[k % 4], &rng);
    uint32_t used = feats[ac_rng_below(&rng, 3)];
    int64_t wl = (int64_t)ac_rng_below(&rng, 4) - 1, wr = (int64_t)ac_rng_below(&rng, 4) - 1;
    int tl = (int)ac_rng_below(&rng, 2);
    gt_features(&c, used, ac_rng_below(&rng, 2) ? c.p.heads : 1, 1, -1);
    c.p.f.win_left = wl, c.p.f.win_right = wr, c.p.f.win_top_left = tl;
    gt_random_bool_mask(&c, &rng);
    gt_random_checked(&c, &rng, &n);
  }
}
END_TEST

START_TEST(alibi_and_bias)
{
  /* scores with ALiBi slopes and biases (some -inf: the key drops out), alone and with windows and
   * boolean masks, default (often irrational) and stored scales, against the brute force */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 11);
  static const ac_dtype dts[] = {AC_F32, AC_F16, AC_BF16, AC_F64};
  static const uint32_t feats[] = {AC_FEAT_ALIBI, AC_FEAT_BIAS, AC_FEAT_ALIBI | AC_FEAT_BIAS,
                                   AC_FEAT_BIAS | AC_FEAT_WINDOW, AC_FEAT_ALIBI | AC_FEAT_BOOL_MASK};
  int ncases = ac_test_expensive() ? 800 : 100;
  gt_tally n = {0, 0, 0, 0};
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dts[k % 4], &rng);
    uint32_t used = feats[ac_rng_below(&rng, 5)];
    int64_t wl = (int64_t)ac_rng_below(&rng, 4) - 1, wr = (int64_t)ac_rng_below(&rng, 4) - 1;
    int64_t bias_h = ac_rng_below(&rng, 2) ? c.p.heads : 1;
    gt_features(&c, used, 1, bias_h, ac_rng_below(&rng, 2) ? AC_F32 : (int)c.p.dtype);
    c.p.f.win_left = wl, c.p.f.win_right = wr;
    gt_random_bool_mask(&c, &rng);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_SLOPES); x++)
      c.alibi_slopes[x] = ac_rng_below(&rng, 2) ? (float)ldexp(1.0, -(int)(1 + ac_rng_below(&rng, 8)))
                                                : (float)fabs(ac_rng_normal(&rng));
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BIAS); x++) {
      double v = ac_rng_below(&rng, 10) == 0 ? -INFINITY : ac_rng_below(&rng, 3) == 0 ? (double)ac_rng_range(&rng, -2, 2)
                                                                                   : ac_rng_normal(&rng) * 2;
      ac_store_bits(c.p.f.bias_dtype, c.bias, (size_t)x, ac_encode_f64(c.p.f.bias_dtype, v));
    }
    gt_fine = k % 3 == 1;   /* the extended pass's finer weights, with the offsets */
    gt_random_checked(&c, &rng, &n);
  }
  gt_fine = 0;
}
END_TEST

START_TEST(bias_equalizes_scores)
{
  /* scale 1/2, q = 1, keys 2, 0, 4 with biases 0, 1, -1: every score is 1, P = 1/3 exactly, and
   * dV_j = (dO_0 + dO_1 + dO_2)/3 on an fp16 tie (as rational_on_a_breakpoint) */
  static const double q[] = {1, 1, 1}, k[] = {2, 0, 4}, v[] = {1, 2, 3};
  static const double dO[] = {1 + 0x1p-10, 1 + 0x1p-10, 1 - 0x1p-11};
  ac_case c;
  void *d = gt_int_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 3, 3, 1, 1, q, k, v, dO);
  gt_set_scale(&c, 0.5);
  gt_features(&c, AC_FEAT_BIAS, 1, 1, AC_F32);
  static const double bias[] = {0, 1, -1};
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 3; j++) ac_store_bits(AC_F32, c.bias, (size_t)(i * 3 + j), ac_encode_f64(AC_F32, bias[j]));
  ac_grad_result r;
  gt_run_noted("bias_equalizes_scores", &c, d, &r);
  for (int64_t j = 0; j < 3; j++) {
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F16, j, 0), ac_encode_f64(AC_F16, 1.0));
    ck_assert(ac_grad_at(&r.dv, j, 0)->g == 1 + 0x1p-11 && ac_grad_at(&r.dv, j, 0)->how == AC_HOW_EXACT);
  }
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(sinks)
{
  /* a sink per head (normal, sometimes -inf: no sink), alone and with ALiBi, bias and boolean
   * masks: dQ, dK, dV and dσ_h = -Σ P_sink D against the brute force */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 12);
  static const ac_dtype dts[] = {AC_F32, AC_F16, AC_BF16, AC_F64};
  static const uint32_t feats[] = {0, AC_FEAT_ALIBI, AC_FEAT_BIAS, AC_FEAT_BOOL_MASK};
  int ncases = ac_test_expensive() ? 800 : 100;
  gt_tally n = {0, 0, 0, 0};
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dts[k % 4], &rng);
    gt_features(&c, AC_FEAT_SINKS | feats[ac_rng_below(&rng, 4)], 1, 1, -1);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_SINKS); x++)
      c.sinks[x] = ac_rng_below(&rng, 8) == 0 ? -INFINITY : (float)(ac_rng_normal(&rng) * 2);
    gt_random_bool_mask(&c, &rng);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_SLOPES); x++) c.alibi_slopes[x] = 0.25f;
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BIAS); x++)
      ac_store_bits(c.p.f.bias_dtype, c.bias, (size_t)x, ac_encode_f64(c.p.f.bias_dtype, ac_rng_normal(&rng)));
    gt_random_checked(&c, &rng, &n);
  }
  ck_assert(n.sinks > 0);
}
END_TEST

START_TEST(sink_rows_cancel)
{
  /* scale 0 and a sink: both rows weigh their keys alike, dO of row 1 is minus row 0's, so
   * D_1 = -D_0 and dσ = -P_sink (D_0 + D_1) = 0 exactly, though neither term is 0 */
  static const double q[] = {1, -1}, k[] = {1, 2, 3}, v[] = {0.5, -1, 2}, dO[] = {1.5, -1.5};
  ac_case c;
  void *d = gt_int_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 2, 3, 1, 1, q, k, v, dO);
  gt_set_scale(&c, 0);
  gt_features(&c, AC_FEAT_SINKS, 1, 1, -1);
  c.sinks[0] = 0.75f;
  ac_grad_result r;
  gt_run_noted("sink_rows_cancel", &c, d, &r);
  gt_assert_exact_zero(&r.dsink, 0, 0);
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(weight_beyond_mpfr_range)
{
  /* key 1 of two rows has a bias of -FLT_MAX: its weight e^(-3.4e38) lies beyond MPFR's exponent
   * range, so dS, dK_1 and dV_1 are enclosed by intervals around 0 that no precision narrows;
   * both ends round to a zero: decided (+0), not unresolved */
  static const double q[] = {1, -2}, k[] = {1, 3}, v[] = {0.5, -1}, dO[] = {1.5, 0.25};
  ac_case c;
  void *d = gt_int_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 2, 2, 1, 1, q, k, v, dO);
  gt_features(&c, AC_FEAT_BIAS, 1, 1, AC_F32);
  for (int64_t i = 0; i < 2; i++) {
    ac_store_bits(AC_F32, c.bias, (size_t)(i * 2), ac_encode_f64(AC_F32, 0));
    ac_store_bits(AC_F32, c.bias, (size_t)(i * 2 + 1), ac_encode_f64(AC_F32, -0x1.fffffep127));
  }
  ac_grad_result r;
  gt_run_noted("weight_beyond_mpfr_range", &c, d, &r);
  ck_assert_int_eq(r.n_unresolved, 0);
  for (int f = 0; f < 2; f++) {
    ac_dtype t = f ? AC_F64 : AC_F32;
    ck_assert(ac_bits_iszero(t, ac_grad_bits(&r.dk, t, 1, 0)));
    ck_assert(ac_bits_iszero(t, ac_grad_bits(&r.dv, t, 1, 0)));
  }
  ck_assert(fabs(ac_grad_at(&r.dk, 1, 0)->g) < 1e-300 && fabs(ac_grad_at(&r.dv, 1, 0)->g) < 1e-300);
  gt_brute_free(&c, d, &r, 0);
}
END_TEST

START_TEST(sentinel_tie_decided)
{
  /* tests/data/grad_sentinel_tie.npz (gen --dtype e4m3 --bias sentinel:-65504 --bias-dtype f16 --grad
   * normal --t 2 --dk 4 --seed 13): key 1 of both rows has the f16 sentinel bias -65504, so
   * dV_0 = Σ_i P_i0 dO_i lies within e^-65504 of the sum of the rows' dO, three of whose elements are
   * e4m3 midpoints (-0.96875, 0.84375, 0.296875): no precision below 94,500 bits separates them from the
   * midpoint, the sign test decides them at once (the bits checked with 100,000-bit arithmetic). Under a
   * cap below the class pass they stay unresolved: the judge counts them and judges none of them. */
  ac_case c;
  ac_err e;
  ac_case_init(&c);
  ck_assert_msg(ac_case_read(&c, ac_test_data("grad_sentinel_tie.npz"), &e) == 0, "%s", e.msg);
  ac_grad_opts o;
  ac_grad_opts_init(&o);
  ac_grad_result r;
  ck_assert(ac_grad_run(&c, c.dout, &o, &r, &e) == 0);
  ck_assert_int_eq(r.n_unresolved, 0);
  static const uint64_t want[4] = {0xb7, 0x35, 0x3d, 0x29}; /* the ties-to-even guess: 0xb8 0x36 . 0x2a */
  for (int64_t t = 0; t < 4; t++) ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_E4M3, 0, t), want[t]);
  ac_grad_result_free(&r);
  o.prec_cap = 150; /* the first pass (117 bits) only: no class sums, no sign test */
  ck_assert(ac_grad_run(&c, c.dout, &o, &r, &e) == 0);
  ck_assert_int_ge(r.n_unresolved, 3);
  ck_assert_int_eq(ac_grad_at(&r.dv, 0, 0)->how, AC_HOW_UNRESOLVED);
  /* a kernel that writes the exact value everywhere: what the oracle could not decide is no judged element */
  ac_grad_run_result run;
  memset(&run, 0, sizeof run);
  run.status = AC_RUN_OK;
  run.guard_ok = 1;
  run.dtype = AC_E4M3;
  for (int k = 0; k < 3; k++) {
    const ac_grad_tensor *T = k == 0 ? &r.dq : k == 1 ? &r.dk : &r.dv;
    run.g[k] = ac_xcalloc((size_t)(T->n * T->d), 1);
    for (int64_t x = 0; x < T->n * T->d; x++)
      ac_store_bits(AC_E4M3, run.g[k], (size_t)x, ac_grad_bits(T, AC_E4M3, x / T->d, x % T->d));
  }
  for (int64_t t = 0; t < 4; t++) ac_store_bits(AC_E4M3, run.g[2], (size_t)t, want[t]);
  ac_grad_budget bg;
  ck_assert(ac_grad_budget_compute(ac_precision_default(AC_E4M3), &c, &bg, &e) == 0);
  ac_grad_judgement j;
  ac_grad_judge(&bg, &r, &run, &j);
  ck_assert_int_eq(j.unresolved, r.n_unresolved);
  ck_assert_int_eq(j.t[2].unresolved + j.t[2].checked, r.dv.nsel * r.dv.d);
  ck_assert_int_eq(j.failed, 0);
  ck_assert_str_eq(ac_grad_status(&run, &j), "ERROR");
  ac_grad_budget_free(&bg);
  for (int k = 0; k < 3; k++) free(run.g[k]);
  ac_grad_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(window_nonfinite)
{
  /* a window of two keys (i - 1, i): NaN in V of key 4 makes D of row 4 undefined, so dK of keys 3
   * and 4 is undefined, also when only column 3 is asked for and row 4 sees few keys */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 10);
  ac_case c;
  ac_err e;
  void *d = gt_adv_case(&c, AC_MASK_NONE, 5, 5, &rng);
  gt_features(&c, AC_FEAT_WINDOW, 1, 1, -1);
  c.p.f.win_left = 1;
  c.p.f.win_right = 0;
  ref_set(&c, 'v', 8, NAN);
  ac_grad_result r;
  ac_grad_opts o;
  ac_grad_opts_init(&o);
  o.formats = 0;   /* the case dtype alone: what the extended pass decides stays decided */
  o.cols = "3";
  ck_assert(ac_grad_run(&c, d, &o, &r, &e) == 0);
  for (int64_t t = 0; t < 3; t++) ck_assert(gt_undefined(&r.dk, 3, t));
  ck_assert(!gt_undefined(&r.dv, 3, 0) && !gt_undefined(&r.dq, 3, 0) && gt_undefined(&r.dq, 4, 0));
  ac_grad_result_free(&r);
  gt_run(&c, d, NULL, NULL, &r);
  for (int64_t t = 0; t < 3; t++) ck_assert(gt_undefined(&r.dk, 4, t) && !gt_undefined(&r.dk, 2, t));
  gt_brute_free(&c, d, &r, 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("grad_variants");
  TCase *tc = tcase_create("backward_oracle_variants");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, windows_and_bool_masks);
  tcase_add_test(tc, alibi_and_bias);
  tcase_add_test(tc, bias_equalizes_scores);
  tcase_add_test(tc, sinks);
  tcase_add_test(tc, sink_rows_cancel);
  tcase_add_test(tc, window_nonfinite);
  tcase_add_test(tc, weight_beyond_mpfr_range);
  tcase_add_test(tc, sentinel_tie_decided);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
