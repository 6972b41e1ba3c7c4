/* tgrad.c: the backward oracle (oracle/grad.h) against the brute force of tests/tgrad_ref.c on
 * random small cases (every mask, GQA, dv != dk, scales 0 and negative, fp64/fp32/fp16/bf16), the
 * adversarial cases whose exact answers the Ziv loop alone cannot reach (constant V, one visible
 * key, dO giving equal dP, zero dO rows, empty rows, constant K columns, a cancellation of
 * e^-700 in dP - D, score gaps in the thousands, cancellations across rows and groups, a rational
 * on an fp16 tie), the extended pass against the MPFR passes, the rule table of non-finite inputs,
 * row and column sampling, and the refusal of softcap (variants: tests/tgrad_variants). Every
 * case: 0 unresolved under the default cap; the adversarial ones print their counts. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "tgrad_ref.h"
#include "tgrad_util.h"
#include "grad.h"
#include "variants.h"
#include "dtype_mpfr.h"

#define NCASES 60   /* per dtype; x10 with ATTNCHECK_TEST_EXPENSIVE=1 */
#define PREC GT_PREC

static void check_dtype(ac_dtype dt)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 0x67726164 + (uint64_t)dt);
  gt_tally n = {0, 0, 0, 0};
  int ncases = ac_test_expensive() ? 10 * NCASES : NCASES;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dt, &rng);
    gt_fine = k % 3 == 1;   /* the extended pass's finer weights */
    gt_random_checked(&c, &rng, &n);
  }
  gt_fine = 0;
  ck_assert_msg(n.ambiguous < n.elems / 5, AC_SEED_FMT "%s: %lld of %lld ambiguous", AC_SEED_ARG, ac_dtype_name(dt),
                (long long)n.ambiguous, (long long)n.elems);
  ck_assert_msg(n.rounded > n.elems / 4, AC_SEED_FMT "%s: only %lld of %lld elements through the passes", AC_SEED_ARG,
                ac_dtype_name(dt), (long long)n.rounded, (long long)n.elems);
  mpfr_free_cache();
}

START_TEST(brute_f64) { check_dtype(AC_F64); }
END_TEST
START_TEST(brute_f32) { check_dtype(AC_F32); }
END_TEST
START_TEST(brute_f16) { check_dtype(AC_F16); }
END_TEST
START_TEST(brute_bf16) { check_dtype(AC_BF16); }
END_TEST

START_TEST(constant_v)
{
  /* V the same on every key: dP_ij = dO_i·V for all j, dS = 0: dQ = dK = 0 exactly, dV is not */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 1);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  for (int64_t j = 0; j < 5; j++) {
    ref_set(&c, 'v', (size_t)(2 * j), 0.375);
    ref_set(&c, 'v', (size_t)(2 * j + 1), -1.5);
  }
  ac_grad_result r;
  gt_run_noted("constant_v", &c, d, &r);
  gt_assert_zero_block(&r.dq, 0, 10, 3);
  gt_assert_zero_block(&r.dk, 0, 5, 3);
  ck_assert_int_eq(r.n_zero, 45);
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(one_key_and_empty_rows)
{
  /* causal bottom-right, tq = 5 > tk = 3: rows 0 and 1 see nothing (dQ = 0), row 2 sees key 0
   * alone (P = 1: dS = 0, dQ = 0; its dV term is dO exactly) */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 2);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL_BR, 5, 3, &rng);
  ac_grad_result r;
  gt_run_noted("one_key_and_empty_rows", &c, d, &r);
  for (int64_t h = 0; h < 2; h++) gt_assert_zero_block(&r.dq, h * 5, h * 5 + 3, 3);
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(equal_dp_zero_do_constant_k)
{
  /* V_j = (1, r_j) and dO_i = (a_i, 0): dP_ij = a_i on every key, D_i = dP_ij exactly; row 3 of
   * head 1 has dO = 0; K column 1 is constant on the keys, so dQ_i[1] = 0 for every row even
   * where dS is not 0 (head 0 row 4 with dO (1, 1)) */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 3);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_NONE, 5, 5, &rng);
  for (int64_t j = 0; j < 5; j++) {
    ref_set(&c, 'v', (size_t)(2 * j), 1.0);
    ref_set(&c, 'k', (size_t)(3 * j + 1), 0.625);
  }
  for (int64_t x = 0; x < 10; x++) {
    gt_dout_set(&c.p, d, (size_t)(2 * x), x == 8 ? 0.0 : 0.25 * (double)(x + 1));
    gt_dout_set(&c.p, d, (size_t)(2 * x + 1), x == 4 ? 1.0 : 0.0);
  }
  ac_grad_result r;
  gt_run_noted("equal_dp_zero_do_constant_k", &c, d, &r);
  for (int64_t x = 0; x < 10; x++) {
    gt_assert_exact_zero(&r.dq, x, 1);
    if (x != 4) {
      gt_assert_exact_zero(&r.dq, x, 0);
      gt_assert_exact_zero(&r.dq, x, 2);
    }
  }
  ck_assert(ac_grad_at(&r.dq, 4, 0)->how == AC_HOW_ROUNDED);
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(cancellation_e700)
{
  /* scores 0 and -700 (scale 1, q·k exact): P = (1, e^-700)/L, dO = V_top so dP_top - D =
   * P_1 (dP_top - dP_1), about 1e-304: the first passes cannot separate it from 0 */
  ac_case c;
  ref_case(&c, AC_F64, AC_MASK_NONE, 1, 1, 1, 1, 2, 1, 2);
  gt_set_scale(&c, 1.0);
  ref_set(&c, 'q', 0, 1.0);
  ref_set(&c, 'k', 0, 0.0);
  ref_set(&c, 'k', 1, -700.0);
  ref_set(&c, 'v', 0, 1.5);
  ref_set(&c, 'v', 1, 0.75);
  ref_set(&c, 'v', 2, -0.5);
  ref_set(&c, 'v', 3, 2.0);
  void *d = gt_dout_alloc(&c.p);
  gt_dout_set(&c.p, d, 0, 1.5);
  gt_dout_set(&c.p, d, 1, 0.75);
  ac_grad_result r;
  gt_run_noted("cancellation_e700", &c, d, &r);
  /* relative to the top group, dP - D meets no rounded 1 - P: the first pass decides it */
  ck_assert_msg(r.n_highprec == 0 && r.max_prec == 117, "highprec %lld, max_prec %ld", (long long)r.n_highprec,
                r.max_prec);
  ck_assert(fabs(ac_grad_at(&r.dq, 0, 0)->g) > 1e-305);
  gt_brute_free(&c, d, &r, 6000);
}
END_TEST

START_TEST(huge_logits)
{
  /* q, k of magnitude 2^5 in fp32 (score gaps in the thousands): P one-hot up to e^-3000 and
   * gradients near 2^-4000, beyond binary64 but not beyond the brute force at 12000 bits */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 4);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  for (int64_t x = 0; x < 30; x++) ref_set(&c, 'q', (size_t)x, 32.0 * ref_get(&c, 'q', (size_t)x));
  for (int64_t x = 0; x < 15; x++) ref_set(&c, 'k', (size_t)x, 32.0 * ref_get(&c, 'k', (size_t)x));
  ac_grad_result r;
  gt_run_noted("huge_logits", &c, d, &r);
  gt_brute_free(&c, d, &r, 12000);
}
END_TEST

START_TEST(mirrored_rows_cancel_in_dv)
{
  /* rows (h0, i1) and (h1, i1) score key 0 at -4 | 2 and 4 | -2: its weights 1/(1+e^6) and
   * 1/(1+e^-6) add to 1, so dV_0[1] = 2 - 2 (1/(1+e^6) + 1/(1+e^-6)) = 0 exactly, though no row
   * class alone is 0 */
  static const double q[] = {1, -2, -2, 2}, k[] = {2, -1, 0, 0, 0};
  static const double v[] = {2, -2, -2, -1, 0, 0, 2, -2, -1, 2, -1, 1, -1, -1, 2};
  static const double dO[] = {1, 2, 0, -1, -2, 0, 1, 0, -1, 1, -2, -2};
  ac_case c;
  void *d = gt_int_case(&c, AC_F16, AC_MASK_CAUSAL, 2, 1, 2, 5, 1, 3, q, k, v, dO);
  ac_grad_result r;
  gt_run_noted("mirrored_rows_cancel_in_dv", &c, d, &r);
  gt_assert_exact_zero(&r.dv, 0, 1);
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(group_pairs_cancel_in_dq)
{
  /* row 1 of head 0 scores its keys 1, -1, -1 (c = 1/2): dS_0 = -2 dS_1 = -2 dS_2, and K column 2
   * is 1, 0, 2, so dQ[2] = c (dS_0 + 2 dS_1) = 0 although K is not constant */
  static const double q[] = {-2, -2, -2, 0, 1, -2, -2, 1, -2, -2, -2, -1, 1, -1, 2, -1,
                             1, -2, 0, 2, 2, 2, 1, -1, -2, -1, 1, -1, 2, 0, -1, 1};
  static const double k[] = {-1, -1, 1, 2, -2, -1, 0, -1, -1, -2, 2, 0, 0, 2, -2, 2, 1, -2, -1, 0, -2, -1, 1, 2};
  static const double v[] = {1, -2, -2, -1, -2, 0};
  static const double dO[] = {-0.287354, 0.953125, 0.227905, -0.224243, -1.35645, -0.448486, -1.17871, -0.996094};
  ac_case c;
  void *d = gt_int_case(&c, AC_F16, AC_MASK_CAUSAL_BR, 4, 2, 2, 3, 4, 1, q, k, v, dO);
  ac_grad_result r;
  gt_run_noted("group_pairs_cancel_in_dq", &c, d, &r);
  gt_assert_exact_zero(&r.dq, 1, 2);
  gt_brute_free(&c, d, &r, PREC);
}
END_TEST

START_TEST(rational_on_a_breakpoint)
{
  /* scale 0: P = 1/3 on every key, dV_j[0] = (2 (1 + 2^-10) + 1 - 2^-11) / 3 = 1 + 2^-11 exactly,
   * the fp16 tie between 1 and 1 + 2^-10: to even, 1 */
  static const double q[] = {1, 2, 3}, k[] = {1, -1, 0.5};
  static const double v[] = {1, 2, 3};
  static const double dO[] = {1 + 0x1p-10, 1 + 0x1p-10, 1 - 0x1p-11};
  ac_case c;
  void *d = gt_int_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 3, 3, 1, 1, q, k, v, dO);
  gt_set_scale(&c, 0);
  ac_grad_result r;
  gt_run_noted("rational_on_a_breakpoint", &c, d, &r);
  for (int64_t j = 0; j < 3; j++) {
    const ac_grad_elem *el = ac_grad_at(&r.dv, j, 0);
    ck_assert_msg(el->how == AC_HOW_EXACT && el->g == 1 + 0x1p-11 && el->g_err == 0, "dV_%lld: how %d, %a +- %a",
                  (long long)j, el->how, el->g, el->g_err);
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F16, j, 0), ac_encode_f64(AC_F16, 1.0));
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F64, j, 0), ac_encode_f64(AC_F64, 1 + 0x1p-11));
  }
  gt_brute_free(&c, d, &r, 0);
}
END_TEST

/* ncases random f32 and bf16 cases rounded into their dtype alone: the extended pass (its finer
 * weights from the start when fine) decides most elements, and every bit agrees with the MPFR
 * passes alone. */
static void extended_vs_mpfr(int fine, int ncases, uint64_t stream)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), stream);
  int64_t fast = 0, all = 0;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, k % 2 ? AC_F32 : AC_BF16, &rng);
    void *d = gt_dout_alloc(&c.p);
    gt_random_dout(&c.p, d, &rng);
    ac_grad_opts o;
    ac_err e;
    ac_grad_opts_init(&o);
    o.formats = 0;
    o.fine = fine;
    ac_grad_result a, b;
    ck_assert(ac_grad_run(&c, d, &o, &a, &e) == 0);
    o.fine = 0;
    o.no_fast = 1;
    ck_assert(ac_grad_run(&c, d, &o, &b, &e) == 0);
    ck_assert(a.n_unresolved == 0 && b.n_unresolved == 0 && b.n_fast == 0);
    const ac_grad_tensor *ta[3] = {&a.dq, &a.dk, &a.dv}, *tb[3] = {&b.dq, &b.dk, &b.dv};
    for (int x = 0; x < 3; x++)
      for (int64_t i = 0; i < ta[x]->nsel * ta[x]->d; i++) {
        ck_assert_uint_eq(ta[x]->bits[c.p.dtype][i], tb[x]->bits[c.p.dtype][i]);
        ck_assert(ta[x]->bits[AC_F64] == NULL);
      }
    fast += a.n_fast;
    all += a.n_exact + a.n_rounded;
    ac_grad_result_free(&a);
    gt_brute_free(&c, d, &b, 0);
  }
  ck_assert_msg(fast > all / 2, "the extended pass%s decided %lld of %lld", fine ? " (finer weights)" : "", (long long)fast,
                (long long)all);
}

START_TEST(extended_pass_agrees) { extended_vs_mpfr(0, 200, 7); }
END_TEST

/* its finer weights: t to 64 bits, ac_dd_exp */
START_TEST(fine_extended_pass_agrees) { extended_vs_mpfr(1, 120, 8); }
END_TEST

START_TEST(wide_f64_values)
{
  /* fp64 V and dO over 2^-400 .. 2^400: dP = dO·V spans 1600 bits, added exactly in 64-bit chunks */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 8);
  for (int k = 0; k < 20; k++) {
    ac_case c;
    ref_case(&c, AC_F64, (ac_mask)(k % 3), 1, 2, 1, 3, 4, 2, 3);
    for (int64_t x = 0; x < 12; x++) ref_set(&c, 'q', (size_t)x, ac_rng_normal(&rng));
    for (int64_t x = 0; x < 8; x++) ref_set(&c, 'k', (size_t)x, ac_rng_normal(&rng));
    for (int64_t x = 0; x < 12; x++) ref_set(&c, 'v', (size_t)x, ldexp(ac_rng_normal(&rng), (int)ac_rng_range(&rng, -400, 400)));
    void *d = gt_dout_alloc(&c.p);
    for (int64_t x = 0; x < 18; x++) gt_dout_set(&c.p, d, (size_t)x, ldexp(ac_rng_normal(&rng), (int)ac_rng_range(&rng, -400, 400)));
    ac_grad_result r;
    gt_run(&c, d, NULL, NULL, &r);
    gt_brute_free(&c, d, &r, PREC);
  }
}
END_TEST

START_TEST(nonfinite_rules)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 5);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  ac_grad_result r0, r;
  gt_run(&c, d, NULL, NULL, &r0);
  /* NaN in key 4 (masked for rows 0-3): nothing of rows 0-3 changes */
  ref_set(&c, 'k', 12, NAN);
  gt_run(&c, d, NULL, NULL, &r);
  for (int64_t h = 0; h < 2; h++)
    for (int64_t i = 0; i < 4; i++)
      for (int64_t t = 0; t < 3; t++)
        ck_assert_uint_eq(ac_grad_bits(&r.dq, AC_F64, h * 5 + i, t), ac_grad_bits(&r0.dq, AC_F64, h * 5 + i, t));
  for (int64_t t = 0; t < 3; t++) ck_assert(gt_undefined(&r.dq, 4, t) && gt_undefined(&r.dk, 4, t) && gt_undefined(&r.dk, 0, t));
  ac_grad_result_free(&r);
  ref_set(&c, 'k', 12, 0.5);
  /* inf in dO of head 1 row 2, column 1: dQ of that row and dK of keys 0-2 undefined; dV only in column 1 */
  gt_dout_set(&c.p, d, (size_t)((5 + 2) * 2 + 1), INFINITY);
  gt_run(&c, d, NULL, NULL, &r);
  for (int64_t t = 0; t < 3; t++) {
    ck_assert(gt_undefined(&r.dq, 7, t) && !gt_undefined(&r.dq, 6, t));
    ck_assert(gt_undefined(&r.dk, 2, t) && !gt_undefined(&r.dk, 3, t));
  }
  ck_assert(gt_undefined(&r.dv, 0, 1) && !gt_undefined(&r.dv, 0, 0) && !gt_undefined(&r.dv, 3, 1));
  ck_assert(ac_grad_bits(&r.dq, AC_F32, 7, 0) == ac_nan_bits(AC_F32));
  ac_grad_result_free(&r);
  gt_brute_free(&c, d, &r0, 0);
}
END_TEST

START_TEST(sampling_and_refusal)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 6);
  ac_case c;
  void *d = gt_adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  ac_grad_result all, some;
  gt_run(&c, d, NULL, NULL, &all);
  gt_run(&c, d, "1,7-8", "3", &some);
  ck_assert_int_eq(some.dq.nsel, 3);
  ck_assert_int_eq(some.dk.nsel, 1);
  int64_t rows[] = {1, 7, 8};
  for (int k = 0; k < 3; k++)
    for (int64_t t = 0; t < 3; t++)
      ck_assert_uint_eq(ac_grad_bits(&some.dq, AC_F32, rows[k], t), ac_grad_bits(&all.dq, AC_F32, rows[k], t));
  for (int64_t t = 0; t < 3; t++) ck_assert_uint_eq(ac_grad_bits(&some.dk, AC_F64, 3, t), ac_grad_bits(&all.dk, AC_F64, 3, t));
  for (int64_t t = 0; t < 2; t++) ck_assert_uint_eq(ac_grad_bits(&some.dv, AC_F64, 3, t), ac_grad_bits(&all.dv, AC_F64, 3, t));
  ac_grad_result_free(&all);
  ac_grad_result_free(&some);
  ac_grad_opts o;
  ac_err e;
  ac_grad_opts_init(&o);
  o.cols = "9";
  ck_assert_int_eq(ac_grad_run(&c, d, &o, &some, &e), -1);
  ck_assert(strstr(e.msg, "columns") != NULL);
  o.cols = NULL;
  c.p.f.used = AC_FEAT_DESCALE;   /* descales are refused (softcap is taken: tests/tgrad_softcap) */
  ck_assert_int_eq(ac_grad_run(&c, d, &o, &some, &e), -1);
  c.p.f.used = 0;
  free(d);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("grad");
  TCase *tc = tcase_create("backward_oracle");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, brute_f64);
  tcase_add_test(tc, brute_f32);
  tcase_add_test(tc, brute_f16);
  tcase_add_test(tc, brute_bf16);
  tcase_add_test(tc, constant_v);
  tcase_add_test(tc, one_key_and_empty_rows);
  tcase_add_test(tc, equal_dp_zero_do_constant_k);
  tcase_add_test(tc, cancellation_e700);
  tcase_add_test(tc, huge_logits);
  tcase_add_test(tc, mirrored_rows_cancel_in_dv);
  tcase_add_test(tc, group_pairs_cancel_in_dq);
  tcase_add_test(tc, rational_on_a_breakpoint);
  tcase_add_test(tc, extended_pass_agrees);
  tcase_add_test(tc, fine_extended_pass_agrees);
  tcase_add_test(tc, wide_f64_values);
  tcase_add_test(tc, nonfinite_rules);
  tcase_add_test(tc, sampling_and_refusal);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
