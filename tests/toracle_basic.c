/* toracle_basic.c: the oracle's semantics on hand-made cases: the tiny3 numbers, scale 0,
 * negative scale, zero Q, one visible key, weights summing to 1 (in MPFR), key
 * permutation, Q x 2 with scale / 2, empty rows, masked NaN, the non-finite rule table,
 * bad scales, thread-count invariance and the budget terms. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "oracle_int.h"

static uint64_t obits(const ac_oracle_result *r, ac_dtype f, int64_t row, int64_t t)
{
  return r->o_round[f][row * r->p.dv + t];
}

static void fill_random(ac_case *c, ac_rng *g)
{
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(g));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(g));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(g));
}

/* exact mean of the visible V of column t of row (0,0,i) rounded to f */
static uint64_t exact_mean(const ac_case *c, int64_t i, int64_t t, ac_dtype f)
{
  const ac_problem *p = &c->p;
  int64_t n = ac_visible_count(p, i);
  mpfr_t s;
  mpfr_init2(s, 4000);
  mpfr_set_zero(s, 1);
  for (int64_t j = 0; j < n; j++) mpfr_add_d(s, s, ac_load(p->dtype, c->v, ac_vidx(p, 0, 0, j, t)), MPFR_RNDN);
  mpfr_div_si(s, s, (long)n, MPFR_RNDN);
  uint64_t b = ac_encode_mpfr(f, s, AC_E4M3_SATURATE);
  mpfr_clear(s);
  return b;
}

START_TEST(tiny3_numbers)
{
  ac_case c;
  ac_err e;
  ck_assert_msg(ac_case_example(&c, "tiny3", &e) == 0, "%s", e.msg);
  ac_oracle_result r;
  ref_oracle(&c, 1u << AC_F64, 1, &r);
  /* row 0 sees key 0 only: o = V_0 = [1, 0] exactly; LSE = 1/sqrt(2) */
  ck_assert_int_eq(r.rows[0].visible, 1);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_EXACT);
  ck_assert_uint_eq(obits(&r, AC_F32, 0, 0), 0x3f800000u);
  ck_assert_uint_eq(obits(&r, AC_F32, 0, 1), 0);
  ck_assert_msg(r.rows[0].lse_f32 == 0x1.6a09e6p-1f, "LSE row 0 %a", (double)r.rows[0].lse_f32);
  /* row 2: raw [1,1,2], scaled [1/sqrt2, 1/sqrt2, sqrt2]; o_0 = o_1 = (1 + e^{-1/sqrt2}) / (1 + 2 e^{-1/sqrt2}) */
  double w = exp(-M_SQRT1_2), want = (1 + w) / (1 + 2 * w);
  for (int t = 0; t < 2; t++) {
    const ac_oracle_elem *el = &r.elems[2 * 2 + t];
    ck_assert_msg(fabs(el->o - want) < 1e-15, "row 2 col %d: o %a, want %a", t, el->o, want);
    ck_assert_msg(el->o_err < 1e-16, "o_err %a", el->o_err);
  }
  ck_assert_uint_eq(obits(&r, AC_F32, 2, 0), 0x3f40725bu);   /* 0.7517449... */
  ck_assert_uint_eq(obits(&r, AC_F64, 2, 0), 0x3fe80e4b5dba262aull);
  ck_assert_msg(fabs(r.rows[2].m - M_SQRT2) < 1e-15, "m %a", r.rows[2].m);
  ck_assert_msg(fabs(r.rows[2].lse - 2.100405301228164786) < 1e-14, "lse %a", r.rows[2].lse);
  ck_assert_int_eq(r.n_unresolved, 0);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(scale_zero_gives_exact_mean)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 11);
  for (ac_dtype dt = AC_F64; dt < AC_NDTYPES; dt++) {
    ac_case c;
    ref_case(&c, dt, AC_MASK_CAUSAL, 1, 1, 1, 6, 6, 4, 3);
    c.p.scale_is_default = 0;
    c.p.scale = 0;
    fill_random(&c, &g);
    ac_oracle_result r;
    ref_oracle(&c, (1u << AC_NDTYPES) - 1, 1, &r);
    for (int64_t i = 0; i < 6; i++)
      for (int64_t t = 0; t < 3; t++) {
        ck_assert_int_eq(r.elems[i * 3 + t].how, AC_HOW_EXACT);
        for (int f = 0; f < AC_NDTYPES; f++)
          ck_assert_msg(obits(&r, (ac_dtype)f, i, t) == exact_mean(&c, i, t, (ac_dtype)f),
                        AC_SEED_FMT "%s row %lld col %lld format %d", AC_SEED_ARG, ac_dtype_name(dt), (long long)i,
                        (long long)t, f);
      }
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(zero_q_gives_exact_mean)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 12);
  ac_case c;
  ref_case(&c, AC_BF16, AC_MASK_NONE, 1, 1, 1, 2, 7, 5, 4);
  fill_random(&c, &g);
  for (int64_t x = 0; x < 2 * 5; x++) ref_set(&c, 'q', (size_t)x, 0.0);
  ac_oracle_result r;
  ref_oracle(&c, 1u << AC_F32, 2, &r);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t t = 0; t < 4; t++) {
      ck_assert_int_eq(r.elems[i * 4 + t].how, AC_HOW_EXACT);
      ck_assert_uint_eq(obits(&r, AC_F32, i, t), exact_mean(&c, i, t, AC_F32));
      ck_assert_uint_eq(obits(&r, AC_BF16, i, t), exact_mean(&c, i, t, AC_BF16));
    }
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(negative_scale_weights_smallest_dot_product)
{
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 4, 1, 1);
  c.p.scale_is_default = 0;
  c.p.scale = -20;
  static const double k[4] = {1, 2, 3, -4}, v[4] = {10, 20, 30, 0.375};
  ref_set(&c, 'q', 0, 1.0);
  for (int j = 0; j < 4; j++) { ref_set(&c, 'k', (size_t)j, k[j]); ref_set(&c, 'v', (size_t)j, v[j]); }
  ac_oracle_result r;
  ref_oracle(&c, 1u << AC_F64, 1, &r);
  ck_assert_msg(r.rows[0].m == 80, "m %a", r.rows[0].m);
  ck_assert_msg(r.elems[0].o == 0.375 && r.elems[0].o_err < 1e-15, "o %a +- %a", r.elems[0].o, r.elems[0].o_err);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_ROUNDED);
  ck_assert_uint_eq(obits(&r, AC_F32, 0, 0), 0x3ec00000u);   /* 0.375 + 9.6 e^-100 rounds to 0.375 */
  ck_assert_msg(r.rows[0].lse_f32 == 80.0f, "lse %a", (double)r.rows[0].lse_f32);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(one_visible_key_gives_v)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 13);
  ac_case c;
  ref_case(&c, AC_F16, AC_MASK_CAUSAL, 1, 2, 1, 3, 3, 4, 5);
  c.p.scale_is_default = 0;
  c.p.scale = 0.5;
  fill_random(&c, &g);
  ac_oracle_result r;
  ref_oracle(&c, 1u << AC_F64, 1, &r);
  for (int64_t h = 0; h < 2; h++) {
    int64_t row = h * 3;
    ck_assert_int_eq(r.rows[row].visible, 1);
    for (int64_t t = 0; t < 5; t++) {
      ck_assert_int_eq(r.elems[row * 5 + t].how, AC_HOW_EXACT);
      ck_assert_uint_eq(obits(&r, AC_F16, row, t), ac_load_bits(AC_F16, c.v, ac_vidx(&c.p, 0, 0, 0, t)));
      ck_assert(r.elems[row * 5 + t].o == ref_get(&c, 'v', ac_vidx(&c.p, 0, 0, 0, t)));
    }
    /* LSE = 0.5 q.k exactly (dyadic): decided as an exact case */
    double z = 0;
    for (int64_t t = 0; t < 4; t++) z += ref_get(&c, 'q', ac_qidx(&c.p, 0, h, 0, t)) * ref_get(&c, 'k', ac_kidx(&c.p, 0, 0, 0, t));
    ck_assert_int_eq(r.rows[row].lse_how, AC_HOW_EXACT);
    ck_assert_msg(r.rows[row].lse_f64 == 0.5 * z, "lse %a, want %a", r.rows[row].lse_f64, 0.5 * z);
  }
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(weights_sum_to_one_in_mpfr)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 14);
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 4, 40, 8, 2);
  fill_random(&c, &g);
  for (int64_t j = 0; j < 8; j++) ref_set(&c, 'k', (size_t)(5 * 8 + j), ref_get(&c, 'k', (size_t)j));  /* a tie */
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  ac_or_scale sc;
  ac_err e;
  ck_assert(ac_or_scale_init(&sc, &c.p, &e) == 0);
  ac_or_ws w;
  ac_or_ws_init(&w, &c, &o, &sc, 1u << AC_F32, 24, 1L << 16);
  static const mpfr_prec_t precs[] = {64, 88, 152, 1000};
  for (int64_t i = 0; i < 4; i++)
    for (int k = 0; k < 4; k++) {
      ac_or_head_load(&w, 0, 0);
      ck_assert_int_eq(ac_or_row_q(&w, 0, 0, i), 0);
      w.n = 40;
      ac_or_row_scores(&w);
      ac_or_groups(&w);
      ck_assert_int_lt(w.ng, 40);
      ac_or_weights(&w, precs[k]);
      /* Σ_g n_g w_g / L encloses 1: lower sum / upper L <= 1 <= upper sum / lower L */
      mpfr_t slo, shi, x;
      mpfr_inits2(precs[k] + 64, slo, shi, x, (mpfr_ptr)0);
      mpfr_set_zero(slo, 1);
      mpfr_set_zero(shi, 1);
      for (int64_t gi = 0; gi < w.ng; gi++) {
        long ng = (long)(w.gst[gi + 1] - w.gst[gi]);
        mpfr_mul_si(x, w.wlo[gi], ng, MPFR_RNDD);
        mpfr_add(slo, slo, x, MPFR_RNDD);
        mpfr_mul_si(x, w.whi[gi], ng, MPFR_RNDU);
        mpfr_add(shi, shi, x, MPFR_RNDU);
      }
      mpfr_div(slo, slo, w.Lhi, MPFR_RNDD);
      mpfr_div(shi, shi, w.Llo, MPFR_RNDU);
      ck_assert(mpfr_cmp_ui(slo, 1) <= 0 && mpfr_cmp_ui(shi, 1) >= 0);
      mpfr_sub(x, shi, slo, MPFR_RNDU);
      ck_assert_msg(mpfr_cmp_d(x, ldexp(1.0, -(int)precs[k] + 12)) < 0, "width %g at %ld bits", mpfr_get_d(x, MPFR_RNDN),
                    (long)precs[k]);
      mpfr_clears(slo, shi, x, (mpfr_ptr)0);
    }
  ac_or_ws_free(&w);
  /* and the brute force agrees: Σ A_j = 1 to 4000 bits */
  mpfr_t ov[2], lse, ws;
  mpfr_inits2(64, ov[0], ov[1], lse, ws, (mpfr_ptr)0);
  ref_row(&c, 0, 0, 1, 4000, ov, lse, &ws);
  mpfr_sub_ui(ws, ws, 1, MPFR_RNDN);
  ck_assert(mpfr_zero_p(ws) || mpfr_get_exp(ws) < -3900);
  mpfr_clears(ov[0], ov[1], lse, ws, (mpfr_ptr)0);
  ac_case_free(&c);
}
END_TEST

static void assert_same(const ac_oracle_result *a, const ac_oracle_result *b, const char *what)
{
  int64_t ne = a->nrows * a->p.dv;
  for (int f = 0; f < AC_NDTYPES; f++) {
    ck_assert((a->o_round[f] == NULL) == (b->o_round[f] == NULL));
    if (a->o_round[f])
      for (int64_t x = 0; x < ne; x++)
        ck_assert_msg(a->o_round[f][x] == b->o_round[f][x], AC_SEED_FMT "%s: element %lld format %d: %llx vs %llx",
                      AC_SEED_ARG, what, (long long)x, f, (unsigned long long)a->o_round[f][x],
                      (unsigned long long)b->o_round[f][x]);
  }
  for (int64_t x = 0; x < a->nrows; x++) {
    ck_assert_msg(memcmp(&a->rows[x].lse_f32, &b->rows[x].lse_f32, 4) == 0, "%s: LSE row %lld", what, (long long)x);
    ck_assert_msg(memcmp(&a->rows[x].lse_f64, &b->rows[x].lse_f64, 8) == 0, "%s: LSE64 row %lld", what, (long long)x);
  }
}

START_TEST(key_permutation_is_invisible)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 15);
  for (ac_dtype dt = AC_F64; dt < AC_NDTYPES; dt++) {
    ac_case c, d;
    ac_err e;
    ref_case(&c, dt, AC_MASK_NONE, 1, 2, 1, 3, 9, 6, 3);
    fill_random(&c, &g);
    ck_assert(ac_case_copy(&d, &c, &e) == 0);
    int64_t perm[9];
    for (int j = 0; j < 9; j++) perm[j] = j;
    for (int j = 8; j > 0; j--) {
      int k = (int)ac_rng_below(&g, (uint64_t)j + 1);
      int64_t t = perm[j]; perm[j] = perm[k]; perm[k] = t;
    }
    for (int j = 0; j < 9; j++) {
      for (int t = 0; t < 6; t++) ref_set(&d, 'k', ac_kidx(&d.p, 0, 0, j, t), ref_get(&c, 'k', ac_kidx(&c.p, 0, 0, perm[j], t)));
      for (int t = 0; t < 3; t++) ref_set(&d, 'v', ac_vidx(&d.p, 0, 0, j, t), ref_get(&c, 'v', ac_vidx(&c.p, 0, 0, perm[j], t)));
    }
    ac_oracle_result a, b;
    ref_oracle(&c, (1u << AC_F64) | (1u << AC_F16), 1, &a);
    ref_oracle(&d, (1u << AC_F64) | (1u << AC_F16), 1, &b);
    assert_same(&a, &b, ac_dtype_name(dt));
    ac_oracle_result_free(&a);
    ac_oracle_result_free(&b);
    ac_case_free(&c);
    ac_case_free(&d);
  }
}
END_TEST

START_TEST(double_q_half_scale_is_identical)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 16);
  ac_case c, d;
  ac_err e;
  ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 8, 8, 8, 4);
  c.p.scale_is_default = 0;
  c.p.scale = 0.3;
  fill_random(&c, &g);
  ck_assert(ac_case_copy(&d, &c, &e) == 0);
  for (int64_t x = 0; x < 64; x++) ref_set(&d, 'q', (size_t)x, 2 * ref_get(&c, 'q', (size_t)x));
  d.p.scale = 0.15;
  ac_oracle_result a, b;
  ref_oracle(&c, (1u << AC_F64) | (1u << AC_BF16), 1, &a);
  ref_oracle(&d, (1u << AC_F64) | (1u << AC_BF16), 1, &b);
  assert_same(&a, &b, "Q*2, scale/2");
  ac_oracle_result_free(&a);
  ac_oracle_result_free(&b);
  ac_case_free(&c);
  ac_case_free(&d);
}
END_TEST

START_TEST(fully_masked_rows_are_empty)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 17);
  ac_case c;
  ref_case(&c, AC_F16, AC_MASK_CAUSAL_BR, 1, 1, 1, 6, 3, 4, 2);
  fill_random(&c, &g);
  ac_oracle_result r;
  ref_oracle(&c, 0, 1, &r);
  for (int64_t i = 0; i < 6; i++) {
    int empty = i < 3;
    ck_assert_int_eq(r.rows[i].visible, empty ? 0 : i - 2);
    ck_assert_int_eq(r.rows[i].lse_accept, empty ? AC_ACCEPT_EMPTY : AC_ACCEPT_VALUE);
    if (empty) {
      ck_assert(isinf(r.rows[i].lse_f32) && r.rows[i].lse_f32 < 0);
      for (int t = 0; t < 2; t++) {
        ck_assert_int_eq(r.elems[i * 2 + t].accept, AC_ACCEPT_EMPTY);
        ck_assert(r.elems[i * 2 + t].o == 0);
        ck_assert_uint_eq(obits(&r, AC_F16, i, t), 0);
      }
    }
  }
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(masked_nan_is_ignored)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 18);
  for (ac_dtype dt = AC_F32; dt <= AC_BF16; dt++) {
    ac_case c, d;
    ac_err e;
    ref_case(&c, dt, AC_MASK_CAUSAL, 1, 1, 1, 5, 5, 4, 3);
    fill_random(&c, &g);
    ck_assert(ac_case_copy(&d, &c, &e) == 0);
    /* keys 3 and 4 are masked for rows 0..2: fill them with NaN and inf in d */
    ac_oracle_result a, b;
    ref_oracle(&c, 1u << AC_F64, 1, &a);
    for (int j = 3; j < 5; j++) {
      for (int t = 0; t < 4; t++) ref_set(&d, 'k', ac_kidx(&d.p, 0, 0, j, t), t % 2 ? NAN : INFINITY);
      for (int t = 0; t < 3; t++) ref_set(&d, 'v', ac_vidx(&d.p, 0, 0, j, t), t % 2 ? -INFINITY : NAN);
    }
    ref_oracle(&d, 1u << AC_F64, 1, &b);
    for (int64_t i = 0; i < 3; i++) {
      ck_assert_int_eq(b.rows[i].has_nonfinite, 0);
      ck_assert_int_eq(b.rows[i].lse_accept, AC_ACCEPT_VALUE);
      ck_assert(memcmp(&a.rows[i].lse_f32, &b.rows[i].lse_f32, 4) == 0);
      for (int t = 0; t < 3; t++) {
        ck_assert_int_eq(b.elems[i * 3 + t].accept, AC_ACCEPT_VALUE);
        ck_assert_uint_eq(obits(&a, dt, i, t), obits(&b, dt, i, t));
        ck_assert_uint_eq(obits(&a, AC_F64, i, t), obits(&b, AC_F64, i, t));
      }
    }
    /* rows 3 and 4 see them: the rule table */
    ck_assert_int_eq(b.rows[4].has_nonfinite, 1);
    ck_assert_int_eq(b.elems[4 * 3 + 0].accept, AC_ACCEPT_NAN);
    ck_assert_int_eq(b.rows[4].lse_accept, AC_ACCEPT_NAN);
    ac_oracle_result_free(&a);
    ac_oracle_result_free(&b);
    ac_case_free(&c);
    ac_case_free(&d);
  }
}
END_TEST

START_TEST(nonfinite_rule_table)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 19);
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 3, 4, 2, 3);
  fill_random(&c, &g);
  ref_set(&c, 'q', ac_qidx(&c.p, 0, 0, 1, 0), INFINITY);          /* row 1: inf in q */
  ref_set(&c, 'v', ac_vidx(&c.p, 0, 0, 2, 0), INFINITY);          /* column 0: +inf */
  ref_set(&c, 'v', ac_vidx(&c.p, 0, 0, 1, 1), -INFINITY);         /* column 1: -inf */
  ref_set(&c, 'v', ac_vidx(&c.p, 0, 0, 3, 2), NAN);               /* column 2: NaN */
  ac_oracle_result r;
  ref_oracle(&c, 0, 1, &r);
  /* row 1: q_0 = +inf makes key j's score +inf, -inf or NaN by the sign of k_j0 (0: NaN) */
  int pos = 0, nan = 0;
  for (int j = 0; j < 4; j++) {
    double k0 = ref_get(&c, 'k', ac_kidx(&c.p, 0, 0, j, 0));
    if (k0 == 0) nan = 1;
    else if (k0 > 0) pos = 1;
  }
  uint8_t want_lse = nan ? AC_ACCEPT_NAN : pos ? (AC_ACCEPT_PINF | AC_ACCEPT_NAN)
                                              : (AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF);
  ck_assert_int_eq(r.rows[1].lse_accept, want_lse);
  for (int t = 0; t < 3; t++) {
    if (nan) ck_assert_int_eq(r.elems[3 + t].accept, AC_ACCEPT_NAN);
    else ck_assert(r.elems[3 + t].accept & AC_ACCEPT_NAN);
  }
  for (int i = 0; i < 3; i += 2) {
    ck_assert_int_eq(r.elems[i * 3 + 0].accept, AC_ACCEPT_NAN | AC_ACCEPT_PINF);
    ck_assert_int_eq(r.elems[i * 3 + 1].accept, AC_ACCEPT_NAN | AC_ACCEPT_NINF);
    ck_assert_int_eq(r.elems[i * 3 + 2].accept, AC_ACCEPT_NAN);
    ck_assert_int_eq(r.rows[i].lse_accept, AC_ACCEPT_VALUE);   /* LSE does not read V */
    ck_assert(isfinite(r.rows[i].lse));
  }
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(nonfinite_scale_is_bad_input)
{
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 1, 1, 1);
  c.p.scale_is_default = 0;
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  ac_oracle_result r;
  ac_err e;
  c.p.scale = NAN;
  ck_assert_int_eq(ac_oracle_run(&c, &o, &r, &e), -1);
  c.p.scale = -INFINITY;
  ck_assert_int_eq(ac_oracle_run(&c, &o, &r, &e), -1);
  ac_case_free(&c);
}
END_TEST

START_TEST(thread_count_invariance)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 20);
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_CAUSAL, 2, 4, 2, 24, 24, 8, 4);
  fill_random(&c, &g);
  for (int64_t x = 0; x < 8; x++) ref_set(&c, 'k', (size_t)(8 + x), ref_get(&c, 'k', (size_t)x));   /* ties */
  ac_oracle_result a;
  ref_oracle(&c, (1u << AC_F64) | (1u << AC_F16), 1, &a);
  static const int nt[] = {2, 3, 7};
  for (int k = 0; k < 3; k++) {
    ac_oracle_result b;
    ref_oracle(&c, (1u << AC_F64) | (1u << AC_F16), nt[k], &b);
    ck_assert(memcmp(a.rows, b.rows, (size_t)a.nrows * sizeof *a.rows) == 0);
    ck_assert(memcmp(a.elems, b.elems, (size_t)(a.nrows * c.p.dv) * sizeof *a.elems) == 0);
    assert_same(&a, &b, "threads");
    ck_assert_int_eq(a.n_exact, b.n_exact);
    ck_assert_int_eq(a.n_rounded, b.n_rounded);
    ac_oracle_result_free(&b);
  }
  ac_oracle_result_free(&a);
  ac_case_free(&c);
}
END_TEST

static int close_to(double a, long double b)
{
  return fabsl((long double)a - b) <= 1e-9L * fabsl(b) + 1e-300L;
}

START_TEST(budget_terms_match_long_double)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 21);
  for (ac_dtype dt = AC_F64; dt <= AC_F16; dt++) {
    ac_case c;
    ref_case(&c, dt, AC_MASK_CAUSAL, 1, 2, 1, 12, 12, 6, 3);
    fill_random(&c, &g);
    const ac_problem *p = &c.p;
    ac_oracle_result r;
    ref_oracle(&c, 0, 1, &r);
    long double sc = 1.0L / sqrtl((long double)p->dk);
    for (int64_t h = 0; h < 2; h++)
      for (int64_t i = 0; i < 12; i++) {
        int64_t row = (int64_t)ac_rowidx(p, 0, h, i), n = i + 1;
        long double s[12], Z[12], Zb[12], m = -INFINITY, L = 0, maxz = 0, qmax = 0;
        for (int64_t t = 0; t < p->dk; t++) qmax = fmaxl(qmax, fabsl(ref_get(&c, 'q', ac_qidx(p, 0, h, i, t))));
        for (int64_t j = 0; j < n; j++) {
          long double z = 0;
          Z[j] = Zb[j] = 0;
          for (int64_t t = 0; t < p->dk; t++) { /* d_k 6: one block, its largest |q| times |k| */
            long double a = ref_get(&c, 'q', ac_qidx(p, 0, h, i, t)), b = ref_get(&c, 'k', ac_kidx(p, 0, 0, j, t));
            z += a * b;
            Z[j] += fabsl(a * b);
            Zb[j] += qmax * fabsl(b);
          }
          s[j] = sc * z;
          if (s[j] > m) m = s[j];
          if (fabsl(z) > maxz) maxz = fabsl(z);
        }
        for (int64_t j = 0; j < n; j++) L += expl(s[j] - m);
        const ac_oracle_row *orow = &r.rows[row];
        ck_assert_msg(close_to(orow->m, m) && close_to(orow->max_abs_z, maxz), "row terms");
        long double lcz = 0, lczb = 0, ls = 0, czb = 0;
        for (int64_t j = 0; j < n; j++) {
          long double A = expl(s[j] - m) / L;
          lcz += A * sc * Z[j];
          lczb += A * sc * Zb[j];
          ls += A * fabsl(s[j]);
          czb = fmaxl(czb, sc * Zb[j]);
        }
        ck_assert_msg(close_to(orow->lse_cZ, lcz) && close_to(orow->lse_s, ls), "%s row %lld: LSE terms %a %a vs %La %La",
                      ac_dtype_name(dt), (long long)row, orow->lse_cZ, orow->lse_s, lcz, ls);
        ck_assert_msg(close_to(orow->lse_cZb, lczb) && close_to(orow->max_cZb, czb),
                      "%s row %lld: block terms %a %a vs %La %La", ac_dtype_name(dt), (long long)row, orow->lse_cZb,
                      orow->max_cZb, lczb, czb);
        for (int64_t t = 0; t < p->dv; t++) {
          const ac_oracle_elem *el = &r.elems[row * p->dv + t];
          long double R = 0, D = 0, S = 0, Sp = 0, G = 0, Gb = 0, F[AC_ORACLE_NMU] = {0};
          for (int64_t j = 0; j < n; j++) {
            long double A = expl(s[j] - m) / L, v = ref_get(&c, 'v', ac_vidx(p, 0, 0, j, t)), e = fabsl(v - el->o);
            R += A * fabsl(v);
            D += A * e;
            S += A * e * fabsl(s[j] - m);
            Sp += A * e * fabsl(s[j]);
            G += A * e * sc * Z[j];
            Gb += A * e * sc * Zb[j];
            for (int q = 0; q < r.nmu; q++)
              if (A < r.mu[q]) F[q] += A * e;
          }
          ck_assert_msg(close_to(el->R, R) && close_to(el->D, D) && close_to(el->S, S) && close_to(el->Sp, Sp) &&
                            close_to(el->G, G),
                        AC_SEED_FMT "%s row %lld col %lld: R %a D %a S %a Sp %a G %a vs %La %La %La %La %La", AC_SEED_ARG,
                        ac_dtype_name(dt), (long long)row, (long long)t, el->R, el->D, el->S, el->Sp, el->G, R, D, S, Sp, G);
          for (int q = 0; q < r.nmu; q++)
            ck_assert_msg(close_to(el->F[q], F[q]), "F[%d] %a vs %La", q, el->F[q], F[q]);
          ck_assert_msg(close_to(el->Gb, Gb), AC_SEED_FMT "Gb %a vs %La", AC_SEED_ARG, el->Gb, Gb);
        }
      }
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_basic");
  TCase *tc = tcase_create("semantics");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, tiny3_numbers);
  tcase_add_test(tc, scale_zero_gives_exact_mean);
  tcase_add_test(tc, zero_q_gives_exact_mean);
  tcase_add_test(tc, negative_scale_weights_smallest_dot_product);
  tcase_add_test(tc, one_visible_key_gives_v);
  tcase_add_test(tc, weights_sum_to_one_in_mpfr);
  tcase_add_test(tc, key_permutation_is_invisible);
  tcase_add_test(tc, double_q_half_scale_is_identical);
  tcase_add_test(tc, fully_masked_rows_are_empty);
  tcase_add_test(tc, masked_nan_is_ignored);
  tcase_add_test(tc, nonfinite_rule_table);
  tcase_add_test(tc, nonfinite_scale_is_bad_input);
  tcase_add_test(tc, thread_count_invariance);
  tcase_add_test(tc, budget_terms_match_long_double);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
