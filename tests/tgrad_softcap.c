/* tgrad_softcap.c: the backward oracle (oracle/grad.h, oracle/gradcap.c) under a softcap against the
 * brute force of tests/tgrad_ref.c (s = cap tanh(c q·k / cap) + offsets, dS through sech²): random
 * cases of every dtype with ALiBi, bias, windows, boolean masks and sinks, and the adversarial
 * cases, each printing its counts: constant V, one visible key, equal dP and zero dO rows, a
 * constant K column (exactly 0 without a cap, not under one), a rational dV on an fp16 tie,
 * saturated tanh (1 - tanh² tiny or below MPFR's range), scores at ±cap atanh of binary32
 * boundaries. Every one with 0 unresolved at the default cap (gt_run asserts it). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "tgrad_util.h"
#include "variants.h"

#define PREC GT_PREC

/* Turns c into a softcap case with the features feats (window, masks, ALiBi, bias, sinks drawn). */
static void add_softcap(ac_case *c, uint32_t feats, double cap, ac_rng *rng)
{
  ac_err e;
  ac_features_plain(&c->p);
  c->p.f.used = AC_FEAT_SOFTCAP | feats;
  c->p.f.softcap = cap;
  c->p.f.win_left = (int64_t)ac_rng_below(rng, 4) - 1;
  c->p.f.win_right = (int64_t)ac_rng_below(rng, 4) - 1;
  c->p.f.mask_b = 1;
  c->p.f.mask_h = 1;
  c->p.f.bias_b = 1;
  c->p.f.bias_h = ac_rng_below(rng, 2) ? c->p.heads : 1;
  c->p.f.bias_dtype = AC_F32;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_BOOL_MASK); x++) c->bool_mask[x] = ac_rng_below(rng, 4) != 0;
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SLOPES); x++)
    c->alibi_slopes[x] = (float)ldexp(1.0, -(int)(1 + ac_rng_below(rng, 4)));
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_BIAS); x++) {
    double v = ac_rng_below(rng, 10) == 0 ? -INFINITY : ac_rng_normal(rng);
    ac_store_bits(AC_F32, c->bias, (size_t)x, ac_encode_f64(AC_F32, v));
  }
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SINKS); x++)
    c->sinks[x] = ac_rng_below(rng, 8) == 0 ? -INFINITY : (float)ac_rng_normal(rng);
}

START_TEST(random_softcap)
{
  /* caps from below the scores to far above them, every dtype, alone and with the other variants */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 21);
  static const ac_dtype dts[] = {AC_F32, AC_BF16, AC_F16, AC_F64};
  static const uint32_t feats[] = {0, AC_FEAT_ALIBI, AC_FEAT_BIAS, AC_FEAT_WINDOW | AC_FEAT_SINKS,
                                   AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS, AC_FEAT_BOOL_MASK | AC_FEAT_BIAS};
  static const double caps[] = {0.25, 1, 2.5, 30, 1e6};
  int ncases = ac_test_expensive() ? 800 : 80;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dts[k % 4], &rng);
    add_softcap(&c, feats[ac_rng_below(&rng, 6)], caps[ac_rng_below(&rng, 5)], &rng);
    void *d = gt_dout_alloc(&c.p);
    gt_random_dout(&c.p, d, &rng);
    ac_grad_result r;
    gt_run(&c, d, NULL, NULL, &r);
    gt_against_brute(&c, d, &r, PREC);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
}
END_TEST

/* A softcap (cap) on c, run, noted, compared. */
static void run_note(ac_case *c, const void *d, double cap, const char *name, ac_grad_result *r)
{
  ac_err e;
  ac_features_plain(&c->p);
  c->p.f.used = AC_FEAT_SOFTCAP;
  c->p.f.softcap = cap;
  ck_assert(ac_features_alloc(c, &e) == 0);
  gt_run(c, d, NULL, NULL, r);
  gt_note(name, r);
  gt_against_brute(c, d, r, PREC);
}

START_TEST(constant_v)
{
  /* V constant on the visible keys: dP = D, dS = 0 exactly, dQ and dK exact zeros, whatever the cap */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 22);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  for (int64_t x = 0; x < 5 * 2; x++) ref_set(&c, 'v', (size_t)x, x % 2 ? -1.5 : 0.75);
  ac_grad_result r;
  run_note(&c, d, 1.5, "softcap constant_v", &r);
  for (int64_t x = 0; x < 10; x++)
    for (int64_t t = 0; t < 3; t++) gt_assert_exact_zero(&r.dq, x, t);
  for (int64_t x = 0; x < 5; x++)
    for (int64_t t = 0; t < 3; t++) gt_assert_exact_zero(&r.dk, x, t);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(one_key_equal_dp_zero_rows)
{
  /* bottom-right causal with tq > tk: empty rows and a row of one visible key (P = 1, dS = 0); dO
   * orthogonal to V_1 - V_0 in row 3 (equal dP), a zero dO row: dS = 0 exactly, and dQ of those rows 0 */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 23);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL_BR, 6, 3, &rng);
  /* V_0 = (1, 2), V_1 = (3, 1), V_2 = (5, 0): V_j - V_0 ∥ (1, -0.5), so dO ∥ (1, 2) gives equal dP */
  static const double v[] = {1, 2, 3, 1, 5, 0};
  for (int64_t x = 0; x < 6; x++) ref_set(&c, 'v', (size_t)x, v[x]);
  for (int64_t h = 0; h < 2; h++) {
    gt_dout_set(&c.p, d, (size_t)((h * 6 + 5) * 2), 0.5);
    gt_dout_set(&c.p, d, (size_t)((h * 6 + 5) * 2 + 1), 1);
    gt_dout_set(&c.p, d, (size_t)((h * 6 + 4) * 2), 0);
    gt_dout_set(&c.p, d, (size_t)((h * 6 + 4) * 2 + 1), 0);
  }
  ac_grad_result r;
  run_note(&c, d, 0.75, "softcap one_key_equal_dp_zero_rows", &r);
  for (int64_t h = 0; h < 2; h++)
    for (int64_t t = 0; t < 3; t++) {
      gt_assert_exact_zero(&r.dq, h * 6 + 0, t);   /* empty row */
      gt_assert_exact_zero(&r.dq, h * 6 + 3, t);   /* one visible key */
      gt_assert_exact_zero(&r.dq, h * 6 + 4, t);   /* zero dO */
      gt_assert_exact_zero(&r.dq, h * 6 + 5, t);   /* equal dP */
    }
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(constant_k_column)
{
  /* K_t constant over the keys: without a cap Σ_j dS_j = 0 makes dQ_i[t] exactly 0; under a softcap
   * dQ_i[t] = c K_t Σ_j f_j dS_j is not 0 (the keys have distinct z, so distinct f) and must not
   * be claimed exact */
  static const double q[] = {1, 0.5, -1, 2, 0.25, 1}, k[] = {1, 2, 1, -1, 1, 0.5}, v[] = {1, -2, 0.5};
  static const double dO[] = {1, -1, 2};
  ac_case c;
  void *d = gt_int_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 3, 3, 2, 1, q, k, v, dO);
  ac_grad_result r;
  run_note(&c, d, 1, "softcap constant_k_column", &r);
  for (int64_t i = 0; i < 3; i++) ck_assert(ac_grad_at(&r.dq, i, 0)->how != AC_HOW_EXACT && ac_grad_at(&r.dq, i, 0)->g != 0);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(rational_on_an_fp16_tie)
{
  /* three equal keys (one group per row, P = 1/3 whatever the cap) and dO summing to 3 + 3·2^-11:
   * dV_j = 1 + 2^-11, an fp16 tie, exact only through the classes of rows of equal (z, a) */
  static const double q[] = {1, 0.5, -2}, k[] = {1.5, 1.5, 1.5}, v[] = {1, 2, 3};
  static const double dO[] = {1 + 0x1p-10, 1 + 0x1p-10, 1 - 0x1p-11};
  ac_case c;
  void *d = gt_int_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 3, 3, 1, 1, q, k, v, dO);
  ac_grad_result r;
  run_note(&c, d, 2, "softcap rational_on_an_fp16_tie", &r);
  for (int64_t j = 0; j < 3; j++) {
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F16, j, 0), ac_encode_f64(AC_F16, 1.0));
    ck_assert(ac_grad_at(&r.dv, j, 0)->g == 1 + 0x1p-11 && ac_grad_at(&r.dv, j, 0)->how == AC_HOW_EXACT);
  }
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(saturated)
{
  /* huge scores far past the cap: 1 - tanh² about e^-40 (tiny), e^-2e4 and e^-2^22 (below every
   * binary format, where a kernel's 1 - t² underflows to 0); the capped scores of one sign tie to
   * far below the last bit of P */
  static const double q[] = {1, 1, 1, 1}, dO[] = {1, -2, 0.5, 3, -1, 1, 2, 0.25};
  static const double k[][4] = {{10, -10, 9, 11}, {5000, -5000, 4999.5, 6000}, {0x1p20, -0x1p20, 0x1p19, 0x1p21}};
  static const double v[] = {1, 0.5, -2, 3, 0.25, 1, 2, -1};
  static const char *names[] = {"softcap saturated e^-40", "softcap saturated e^-2e4", "softcap saturated e^-2^22"};
  for (int s = 0; s < 3; s++) {
    ac_case c;
    void *d = gt_int_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 4, 4, 1, 2, q, k[s], v, dO);
    c.p.scale_is_default = 0;
    c.p.scale = 4;
    ac_grad_result r;
    run_note(&c, d, 2, names[s], &r);
    /* dQ = c Σ_j f_j dS_j K_j with f_j ~ e^-40: a binary32 of about 1e-16 at most */
    ck_assert(fabs(ac_grad_at(&r.dq, 0, 0)->g) < 1e-10);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(atanh_boundaries)
{
  /* raw scores at ±cap atanh(y) for binary32 boundaries y (1 - 2^-24, 0.5, 2^-12 and a midpoint
   * between two binary32 neighbours): capped scores that sit near breakpoints, in f16 and f32 */
  static const double ys[] = {1 - 0x1p-24, 0.5, 0x1p-12, 0.75 + 0x1p-25};
  for (int dt = 0; dt < 2; dt++) {
    double k[8], q[] = {1, 1, 1, 1}, v[] = {1, -1, 2, 0.5, -0.25, 3, 1.5, -2}, dO[] = {1, 0.5, -1, 2};
    for (int x = 0; x < 4; x++) {
      k[2 * x] = (double)(float)(3 * atanh(ys[x]));
      k[2 * x + 1] = -k[2 * x];
    }
    ac_case c;
    void *d = gt_int_case(&c, dt ? AC_F32 : AC_F16, AC_MASK_CAUSAL, 1, 1, 4, 8, 1, 1, q, k, v, dO);
    c.p.scale_is_default = 0;
    c.p.scale = 1;
    ac_grad_result r;
    run_note(&c, d, 3, dt ? "softcap atanh_boundaries f32" : "softcap atanh_boundaries f16", &r);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("grad_softcap");
  TCase *tc = tcase_create("backward_oracle_softcap");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, random_softcap);
  tcase_add_test(tc, constant_v);
  tcase_add_test(tc, one_key_equal_dp_zero_rows);
  tcase_add_test(tc, constant_k_column);
  tcase_add_test(tc, rational_on_an_fp16_tie);
  tcase_add_test(tc, saturated);
  tcase_add_test(tc, atanh_boundaries);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
