/* toracle_exact.c: the cases plain precision raising cannot finish: exact zeros, exact
 * rational outputs on a rounding breakpoint, top groups averaging exactly to a breakpoint
 * with the rest e^(-10^9) smaller (o and LSE), subnormal outputs in fp16/bf16/fp32, values
 * over hundreds of binades, and the precision cap. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "dtype_mpfr.h"

static uint64_t obits(const ac_oracle_result *r, ac_dtype f, int64_t row, int64_t t)
{
  return r->o_round[f][row * r->p.dv + t];
}

static void run(const ac_case *c, uint32_t formats, ac_oracle_result *r, double max_seconds)
{
  double t0 = ac_now();
  ref_oracle(c, formats, 1, r);
  double t = ac_now() - t0;
  ck_assert_msg(t < max_seconds, "took %.3f s (limit %.3f)", t, max_seconds);
  ck_assert_int_eq(r->n_unresolved, 0);
}

START_TEST(exact_zero_output)
{
  /* keys in pairs with equal scores and opposite values: every group sums to 0, o = 0 exactly */
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 6, 2, 2);
  static const double k[6][2] = {{1, 0}, {1, 0}, {0.5, 0.25}, {0.5, 0.25}, {-2, 1}, {-2, 1}};
  static const double v[6] = {3, -3, 0.1, -0.1, 7, -7};
  ref_set(&c, 'q', 0, 1.25);
  ref_set(&c, 'q', 1, -0.75);
  for (int j = 0; j < 6; j++) {
    ref_set(&c, 'k', (size_t)(2 * j), k[j][0]);
    ref_set(&c, 'k', (size_t)(2 * j + 1), k[j][1]);
    ref_set(&c, 'v', (size_t)(2 * j), v[j]);
    ref_set(&c, 'v', (size_t)(2 * j + 1), j % 2 ? -1.0 : 1.0);   /* column 1: not zero */
  }
  ac_oracle_result r;
  run(&c, (1u << AC_NDTYPES) - 1, &r, 1.0);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_EXACT);
  ck_assert(r.elems[0].o == 0 && r.elems[0].o_err == 0);
  for (int f = 0; f < AC_NDTYPES; f++) ck_assert_uint_eq(obits(&r, (ac_dtype)f, 0, 0), 0);
  ck_assert_int_eq(r.elems[1].how, AC_HOW_EXACT);   /* the same for column 1: mean 0 in every group */
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(exact_rational_on_a_breakpoint)
{
  /* two keys with equal score, V = 1 and 1 + 2^-10: o = 1 + 2^-11 exactly, the fp16 tie
   * between 1 and 1 + 2^-10: ties to even gives 1. A third group with mean 1 + 2^-11 too. */
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 4, 1, 1);
  ref_set(&c, 'q', 0, 0.7);
  static const double k[4] = {1, 1, -3, -3};
  static const double v[4] = {1, 1 + 0x1p-10, 1 + 0x1p-11 - 0x1p-20, 1 + 0x1p-11 + 0x1p-20};
  for (int j = 0; j < 4; j++) { ref_set(&c, 'k', (size_t)j, k[j]); ref_set(&c, 'v', (size_t)j, v[j]); }
  ac_oracle_result r;
  run(&c, (1u << AC_F16) | (1u << AC_BF16) | (1u << AC_F64), &r, 1.0);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_EXACT);
  ck_assert(r.elems[0].o == 1 + 0x1p-11 && r.elems[0].o_err == 0);
  ck_assert_uint_eq(obits(&r, AC_F16, 0, 0), 0x3c00);
  ck_assert_uint_eq(obits(&r, AC_F32, 0, 0), 0x3f801000);
  ck_assert_uint_eq(obits(&r, AC_BF16, 0, 0), 0x3f80);
  ac_oracle_result_free(&r);
  /* a rational mean that is not dyadic: 1/3 */
  ac_case d;
  ref_case(&d, AC_F16, AC_MASK_NONE, 1, 1, 1, 1, 3, 1, 1);
  ref_set(&d, 'q', 0, 0);
  ref_set(&d, 'v', 0, 1);
  ac_oracle_result s;
  run(&d, (1u << AC_F64) | (1u << AC_F32), &s, 1.0);
  ck_assert_int_eq(s.elems[0].how, AC_HOW_EXACT);
  ck_assert_uint_eq(obits(&s, AC_F64, 0, 0), 0x3fd5555555555555ull);
  ck_assert_uint_eq(obits(&s, AC_F32, 0, 0), 0x3eaaaaabu);
  ck_assert_uint_eq(obits(&s, AC_F16, 0, 0), 0x3555);
  ac_oracle_result_free(&s);
  ac_case_free(&c);
  ac_case_free(&d);
}
END_TEST

/* Top group: two keys, score 10^9, values averaging to the fp16 breakpoint 1 + 2^-11; a
 * third key with score 0 and value vt tips the tie by e^(-10^9). */
static void tail_case(ac_case *c, double vt)
{
  ref_case(c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 3, 1, 1);
  c->p.scale_is_default = 0;
  c->p.scale = 1;
  ref_set(c, 'q', 0, 1);
  ref_set(c, 'k', 0, 1e9);
  ref_set(c, 'k', 1, 1e9);
  ref_set(c, 'k', 2, 0);
  ref_set(c, 'v', 0, 1);
  ref_set(c, 'v', 1, 1 + 0x1p-10);
  ref_set(c, 'v', 2, vt);
}

START_TEST(breakpoint_with_exponentially_small_tail)
{
  ac_case c;
  ac_oracle_result r;
  tail_case(&c, 5);
  run(&c, (1u << AC_F16) | (1u << AC_F64), &r, 0.5);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_ROUNDED);
  ck_assert_uint_eq(obits(&r, AC_F16, 0, 0), 0x3c01);          /* above the tie: up */
  ck_assert_uint_eq(obits(&r, AC_F32, 0, 0), 0x3f801000);      /* 1 + 2^-11 + tiny */
  ck_assert_uint_eq(obits(&r, AC_F64, 0, 0), 0x3ff0020000000000ull);
  ck_assert(r.max_prec <= 256);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  tail_case(&c, -5);
  run(&c, (1u << AC_F16) | (1u << AC_F64), &r, 0.5);
  ck_assert_uint_eq(obits(&r, AC_F16, 0, 0), 0x3c00);          /* below the tie: down */
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(breakpoint_with_tails_beyond_the_extended_exponent_range)
{
  /* Two tied top keys average to the bf16 midpoint 1 + 2^-8; the other keys have scores
   * -2^120 and -2^121, so their weights (about e^(-1.3e36)) underflow even MPFR's extended
   * exponent range. The sign of o - b comes from the larger tail: V = 2 there rounds up to
   * 1 + 2^-7 (odd: not a tie to even), V = 0 there rounds down to 1. Both oracle paths. */
  for (int flip = 0; flip < 2; flip++)
    for (int no_fast = 0; no_fast < 2; no_fast++) {
      ac_case c;
      ref_case(&c, AC_BF16, AC_MASK_NONE, 1, 1, 1, 1, 4, 1, 1);
      ref_set(&c, 'q', 0, 1);
      static const double k[4] = {0, 0, -0x1p120, -0x1p121};
      double v[4] = {1, 1 + 0x1p-7, flip ? 0 : 2, flip ? 2 : 0};
      for (int j = 0; j < 4; j++) { ref_set(&c, 'k', (size_t)j, k[j]); ref_set(&c, 'v', (size_t)j, v[j]); }
      ac_oracle_opts o;
      ac_oracle_opts_init(&o);
      o.threads = 1;
      o.no_fast = no_fast;
      ac_oracle_result r;
      ac_err e;
      double t0 = ac_now();
      ck_assert_msg(ac_oracle_run(&c, &o, &r, &e) == 0, "%s", e.msg);
      ck_assert_msg(ac_now() - t0 < 1.0, "too slow");
      ck_assert_int_eq(r.n_unresolved, 0);
      ck_assert_uint_eq(obits(&r, AC_BF16, 0, 0), flip ? 0x3f80 : 0x3f81);
      ac_oracle_result_free(&r);
      ac_case_free(&c);
    }
}
END_TEST

START_TEST(lse_breakpoint_with_exponentially_small_tail)
{
  /* m = 1 + 2^-24, the binary32 tie between 1 and 1 + 2^-23; a second key e^(-10^9) smaller
   * makes LSE = m + ln(1 + e^(-10^9)), just above the tie: rounds up. */
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 2, 2, 1);
  c.p.scale_is_default = 0;
  c.p.scale = 1;
  ref_set(&c, 'q', 0, 1);
  ref_set(&c, 'q', 1, 1);
  ref_set(&c, 'k', 0, 1);
  ref_set(&c, 'k', 1, 0x1p-24);
  ref_set(&c, 'k', 2, -1e9);
  ref_set(&c, 'k', 3, 0);
  ac_oracle_result r;
  run(&c, 0, &r, 0.5);
  ck_assert_int_eq(r.rows[0].lse_how, AC_HOW_ROUNDED);
  ck_assert_msg(r.rows[0].lse_f32 == 1 + 0x1p-23f, "lse %a", (double)r.rows[0].lse_f32);
  ck_assert_msg(r.rows[0].lse_f64 == 1 + 0x1p-24, "lse64 %a", r.rows[0].lse_f64);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(lse_exact_cases)
{
  /* one visible key: LSE = s exactly; zero score gives LSE = 0 */
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 2, 2, 1, 1);
  c.p.scale_is_default = 0;
  c.p.scale = 0.25;
  ref_set(&c, 'q', 0, 3);
  ref_set(&c, 'k', 0, 1 + 0x1p-20);   /* s = 0.75 (1 + 2^-20): not representable in binary32? it is; exact */
  ac_oracle_result r;
  run(&c, 0, &r, 0.5);
  ck_assert_int_eq(r.rows[0].lse_how, AC_HOW_EXACT);
  ck_assert(r.rows[0].lse_f64 == 0.75 * (1 + 0x1p-20));
  ac_oracle_result_free(&r);
  ref_set(&c, 'q', 0, 0);
  run(&c, 0, &r, 0.5);
  ck_assert_int_eq(r.rows[0].lse_how, AC_HOW_EXACT);
  ck_assert(r.rows[0].lse_f32 == 0 && r.rows[0].lse_f64 == 0);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

/* Random rows with tiny V: outputs in the subnormal range of the dtype, checked against
 * the 4000-bit brute force. */
static void subnormal_dtype(ac_dtype dt, int e_lo, int e_hi)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 0x5ab + (uint64_t)dt);
  int64_t sub = 0;
  for (int k = 0; k < 20; k++) {
    ac_case c;
    ref_case(&c, dt, AC_MASK_CAUSAL, 1, 1, 1, 4, 4, 3, 4);
    ac_counts n;
    ac_err e;
    ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
    for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, ac_rng_normal(&g));
    for (int64_t x = 0; x < n.k; x++) ref_set(&c, 'k', (size_t)x, ac_rng_normal(&g));
    for (int64_t x = 0; x < n.v; x++)
      ref_set(&c, 'v', (size_t)x, ldexp((double)ac_rng_range(&g, -40, 40), (int)ac_rng_range(&g, e_lo, e_hi)));
    ac_oracle_result r;
    run(&c, 1u << AC_F64, &r, 2.0);
    mpfr_t o[4], lse;
    for (int t = 0; t < 4; t++) mpfr_init2(o[t], 4000);
    mpfr_init2(lse, 4000);
    for (int64_t i = 0; i < 4; i++) {
      ref_row(&c, 0, 0, i, 4000, o, lse, NULL);
      for (int t = 0; t < 4; t++) {
        uint64_t want = ac_encode_mpfr(dt, o[t], AC_E4M3_SATURATE), got = obits(&r, dt, i, t);
        if (r.elems[i * 4 + t].how == AC_HOW_EXACT && ac_bits_iszero(dt, got) && ac_bits_iszero(dt, want)) continue;
        ck_assert_msg(got == want, AC_SEED_FMT "%s case %d row %lld col %d: %llx, reference %llx", AC_SEED_ARG,
                      ac_dtype_name(dt), k, (long long)i, t, (unsigned long long)got, (unsigned long long)want);
        sub += ac_bits_issubnormal(dt, got);
      }
    }
    for (int t = 0; t < 4; t++) mpfr_clear(o[t]);
    mpfr_clear(lse);
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
  ck_assert_msg(sub >= 40, "%s: only %lld subnormal outputs", ac_dtype_name(dt), (long long)sub);
  mpfr_free_cache();
}

START_TEST(subnormal_outputs_f16) { subnormal_dtype(AC_F16, -30, -26); }
END_TEST
START_TEST(subnormal_outputs_bf16) { subnormal_dtype(AC_BF16, -138, -134); }
END_TEST
START_TEST(subnormal_outputs_f32) { subnormal_dtype(AC_F32, -154, -130); }
END_TEST

/* Values spread over hundreds of binades: exact scores past binary64's range, weights far
 * below MPFR's default exponent range, V windows wider than 126 bits. */
static void extreme_dtype(ac_dtype dt, int e_span)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 0x657874 + (uint64_t)dt);
  for (int k = 0; k < 25; k++) {
    ac_case c;
    ref_case(&c, dt, (ac_mask)ac_rng_below(&g, 3), 1, 1, 1, 3, 4, 3, 3);
    ac_counts n;
    ac_err e;
    ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
    for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, ldexp(ac_rng_normal(&g), (int)ac_rng_range(&g, -e_span, e_span)));
    for (int64_t x = 0; x < n.k; x++) ref_set(&c, 'k', (size_t)x, ldexp(ac_rng_normal(&g), (int)ac_rng_range(&g, -e_span, e_span)));
    for (int64_t x = 0; x < n.v; x++) ref_set(&c, 'v', (size_t)x, ldexp(ac_rng_normal(&g), (int)ac_rng_range(&g, -e_span, e_span)));
    ac_oracle_result r;
    run(&c, 1u << AC_F64, &r, 5.0);
    mpfr_t o[3], lse;
    for (int t = 0; t < 3; t++) mpfr_init2(o[t], 4000);
    mpfr_init2(lse, 4000);
    for (int64_t i = 0; i < 3; i++) {
      if (!ref_row(&c, 0, 0, i, 4000, o, lse, NULL)) continue;
      const ac_oracle_row *orow = &r.rows[i];
      ck_assert(!isnan(orow->m) && !isnan(orow->max_abs_s) && !isnan(orow->lse_cZ) && !isnan(orow->lse_s));
      ck_assert_msg(ac_encode_mpfr(AC_F32, lse, AC_E4M3_SATURATE) == ac_encode_f64(AC_F32, orow->lse_f32),
                    AC_SEED_FMT "%s case %d row %lld: LSE %a", AC_SEED_ARG, ac_dtype_name(dt), k, (long long)i,
                    (double)orow->lse_f32);
      for (int t = 0; t < 3; t++) {
        const ac_oracle_elem *el = &r.elems[i * 3 + t];
        ck_assert(!isnan(el->R) && !isnan(el->D) && !isnan(el->S) && !isnan(el->Sp) && !isnan(el->G));
        for (int f = 0; f < AC_NDTYPES; f++) {
          if (!r.o_round[f]) continue;
          uint64_t want = ac_encode_mpfr((ac_dtype)f, o[t], AC_E4M3_SATURATE), got = obits(&r, (ac_dtype)f, i, t);
          ck_assert_msg(got == want, AC_SEED_FMT "%s case %d row %lld col %d format %d: %llx, reference %llx",
                        AC_SEED_ARG, ac_dtype_name(dt), k, (long long)i, t, f, (unsigned long long)got,
                        (unsigned long long)want);
        }
      }
    }
    for (int t = 0; t < 3; t++) mpfr_clear(o[t]);
    mpfr_clear(lse);
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
  mpfr_free_cache();
}

START_TEST(extreme_exponents_f64) { extreme_dtype(AC_F64, 600); }
END_TEST
START_TEST(extreme_exponents_f32) { extreme_dtype(AC_F32, 100); }
END_TEST

START_TEST(precision_cap_reports_unresolved)
{
  /* o = (1e6 - (1e6 - 2^-20)) / 2-ish: cancellation that the 62-bit first level cannot
   * round to binary64; with the cap below the next level the element is unresolved. */
  ac_case c;
  ref_case(&c, AC_F64, AC_MASK_NONE, 1, 1, 1, 1, 2, 1, 1);
  ref_set(&c, 'q', 0, 1);
  ref_set(&c, 'k', 0, 0.001);
  ref_set(&c, 'k', 1, 0);
  ref_set(&c, 'v', 0, 1e6);
  ref_set(&c, 'v', 1, -1e6 * exp(0.001) + 0x1p-20);
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.prec_cap = 64;
  ac_oracle_result r;
  ck_assert_int_eq(ac_oracle_run(&c, &o, &r, &e), 0);
  ck_assert_int_gt(r.n_unresolved, 0);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_UNRESOLVED);
  ac_oracle_result_free(&r);
  o.prec_cap = 0;   /* default */
  ck_assert_int_eq(ac_oracle_run(&c, &o, &r, &e), 0);
  ck_assert_int_eq(r.n_unresolved, 0);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_ROUNDED);
  ck_assert_int_gt(r.n_fallback, 0);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(breakpoint_with_two_tails_of_opposite_sign)
{
  /* top group at the fp16 tie 1 + 2^-11 (score 2e9), then a key e^(-1e9) below with value
   * v1 and one e^(-2e9) below with value v2 of the other sign: the sign comes from the
   * interval sum of both tails, the first dominating. */
  static const double v1s[2] = {5, -5};
  static const uint64_t want[2] = {0x3c01, 0x3c00};
  for (int k = 0; k < 2; k++) {
    ac_case c;
    ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 4, 1, 1);
    c.p.scale_is_default = 0;
    c.p.scale = 1;
    ref_set(&c, 'q', 0, 1);
    static const double kk[4] = {2e9, 2e9, 1e9, 0};
    for (int j = 0; j < 4; j++) ref_set(&c, 'k', (size_t)j, kk[j]);
    ref_set(&c, 'v', 0, 1);
    ref_set(&c, 'v', 1, 1 + 0x1p-10);
    ref_set(&c, 'v', 2, v1s[k]);
    ref_set(&c, 'v', 3, -3 * v1s[k]);
    ac_oracle_result r;
    run(&c, 1u << AC_F16, &r, 0.5);
    ck_assert_int_eq(r.elems[0].how, AC_HOW_ROUNDED);
    ck_assert_uint_eq(obits(&r, AC_F16, 0, 0), want[k]);
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_exact");
  TCase *tc = tcase_create("exact_and_breakpoints");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, exact_zero_output);
  tcase_add_test(tc, exact_rational_on_a_breakpoint);
  tcase_add_test(tc, breakpoint_with_exponentially_small_tail);
  tcase_add_test(tc, breakpoint_with_two_tails_of_opposite_sign);
  tcase_add_test(tc, breakpoint_with_tails_beyond_the_extended_exponent_range);
  tcase_add_test(tc, lse_breakpoint_with_exponentially_small_tail);
  tcase_add_test(tc, lse_exact_cases);
  tcase_add_test(tc, subnormal_outputs_f16);
  tcase_add_test(tc, subnormal_outputs_bf16);
  tcase_add_test(tc, subnormal_outputs_f32);
  tcase_add_test(tc, extreme_exponents_f64);
  tcase_add_test(tc, extreme_exponents_f32);
  tcase_add_test(tc, precision_cap_reports_unresolved);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
