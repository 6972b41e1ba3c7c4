/* toracle_dropout.c: the oracle under dropout (docs/numerics.md §13) against the brute force of
 * toracle_varref.c (the ABI's formula: normalized weights times the keep-mask and 1/(1 - p), at 2500
 * bits), bit for bit in every format where the brute force is unambiguous, on random cases of every
 * dtype and mask, alone and with the variants, for drop probabilities whose 1 - p is a power of two
 * (1/(1-p) dyadic), FlashAttention's 0.17 and others whose 1/(1-p) is not, and p = 2^-30 (1 - p not
 * a binary64 number); then the cases precision alone cannot settle: exact rationals o = W / (n q) on
 * a breakpoint and not, and breakpoints b of o = o'/q decided at b q by the sign test with the rest of
 * the row e^-1000 away; and the values the elements carry (o, its bound, the terms times 1/(1-p)). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "toracle_varref.h"
#include "dtype_mpfr.h"
#include "dropout.h"
#include "variants.h"

static const double probs[] = {0.5, 0.75, 0x1.5c28f6p-3 /* fl32(0.17) */, 0.9f, 0x1p-30, 0x1.fffffep-1, 0.0, 0.3f};

/* c with dropout p: the mask drawn by the reference generator from seed, else (keep_all) every key kept. */
static void add_dropout(ac_case *c, double p, uint64_t seed)
{
  ac_err e;
  if (!c->p.f.used) ac_features_plain(&c->p);
  c->p.f.used |= AC_FEAT_DROPOUT;
  c->p.f.dropout_p = p;
  c->p.f.dropout_seed = seed;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  ac_dropout_fill(&c->p, c->dropout_mask);
}

static void random_rows(uint32_t used, const char *what)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x64726f70u + (uint64_t)used);
  vstats vs = {0};
  int ncases = ac_test_expensive() ? 1200 : 120;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, (ac_dtype)(k % AC_NDTYPES), &r);
    if (used) {
      ac_err e;
      ac_features_plain(&c.p);
      c.p.f.used = used;
      if (used & AC_FEAT_WINDOW) c.p.f.win_left = 2, c.p.f.win_right = 1;
      if (used & AC_FEAT_SINKS) {
        ck_assert_msg(ac_features_alloc(&c, &e) == 0, "%s", e.msg);
        for (int64_t h = 0; h < c.p.heads; h++) c.sinks[h] = (float)ac_rng_normal(&r);
      }
    }
    add_dropout(&c, probs[(size_t)k % (sizeof probs / sizeof probs[0])], ac_rng_next(&r));
    char name[96];
    snprintf(name, sizeof name, "%s case %d (%s, p %a)", what, k, ac_dtype_name(c.p.dtype), c.p.f.dropout_p);
    vref_check_case(&c, name, &vs);
    ac_case_free(&c);
  }
  vref_report(what, &vs);
}

START_TEST(random_dropout) { random_rows(0, "dropout"); }
END_TEST
START_TEST(random_dropout_window_sinks) { random_rows(AC_FEAT_WINDOW | AC_FEAT_SINKS, "dropout+window+sinks"); }
END_TEST

static void run1(const ac_case *c, uint32_t formats, ac_oracle_result *r)
{
  ref_oracle(c, formats, 1, r);
  ck_assert_int_eq(r->n_unresolved, 0);
}

START_TEST(exact_rationals)
{
  /* one visible key kept: o = V / (1 - p), a rational; at p = 0.5 (dyadic 2V) and p = fl32(0.17) */
  for (int x = 0; x < 2; x++) {
    ac_case c;
    ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 2, 2, 1, 1);
    ref_set(&c, 'q', 0, 0.5), ref_set(&c, 'q', 1, -1);
    ref_set(&c, 'k', 0, 1), ref_set(&c, 'k', 1, 2);
    ref_set(&c, 'v', 0, 3), ref_set(&c, 'v', 1, 1 + 0x1p-20);
    double p = x ? 0x1.5c28f6p-3 : 0.5;
    add_dropout(&c, p, 1);
    memset(c.dropout_mask, 1, 4);
    c.dropout_mask[3] = 0;   /* row 1 keeps key 0 only */
    ac_oracle_result r;
    run1(&c, (1u << AC_F64) | (1u << AC_F16), &r);
    ck_assert_int_eq(r.elems[0].how, AC_HOW_EXACT);   /* row 0: one key, 3 / (1 - p) */
    mpfr_t w, q;
    mpfr_inits2(400, w, q, (mpfr_ptr)0);
    mpfr_set_ui(q, 1, MPFR_RNDN);
    mpfr_sub_d(q, q, p, MPFR_RNDN);
    mpfr_ui_div(w, 3, q, MPFR_RNDN);
    ck_assert_uint_eq(r.o_round[AC_F32][0], ac_encode_mpfr(AC_F32, w, 0));
    ck_assert_uint_eq(r.o_round[AC_F64][0], ac_encode_mpfr(AC_F64, w, 0));
    double wd = mpfr_get_d(w, MPFR_RNDN);
    ck_assert(fabs(r.elems[0].o - wd) <= r.elems[0].o_err + fabs(wd) * 0x1p-53);
    ck_assert(x || (r.elems[0].o == 6 && r.elems[0].o_err == 0));
    mpfr_clears(w, q, (mpfr_ptr)0);
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
  /* two keys of equal score, V = 0.5 and 0.5 + 2^-11, p = 0.5: o = 2 (V1 + V2) / 2 = 1 + 2^-11, the f16 tie
   * between 1 and 1 + 2^-10: to even, 1; a dropped third key with V = NaN changes nothing (its value is 0) */
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 3, 1, 1);
  ref_set(&c, 'q', 0, 0);
  ref_set(&c, 'v', 0, 0.5), ref_set(&c, 'v', 1, 0.5 + 0x1p-11), ref_set(&c, 'v', 2, NAN);
  add_dropout(&c, 0.5, 1);
  c.dropout_mask[0] = c.dropout_mask[1] = 1, c.dropout_mask[2] = 0;
  ac_oracle_result r;
  run1(&c, (1u << AC_F16) | (1u << AC_F64), &r);
  ck_assert_int_eq(r.elems[0].accept, AC_ACCEPT_VALUE);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_EXACT);
  /* o' = (1 + 2^-11) / 3 with the dropped key in the row sum; o = 2 o' */
  ck_assert_uint_eq(r.o_round[AC_F64][0], ac_encode_f64(AC_F64, (1 + 0x1p-11) * 2 / 3));
  ac_oracle_result_free(&r);
  c.dropout_mask[2] = 1;   /* kept: its NaN reaches o */
  ref_set(&c, 'v', 2, 0);
  c.p.f.dropout_p = 0.75;  /* o = 4 (V1 + V2 + 0) / 3 */
  run1(&c, (1u << AC_F16) | (1u << AC_F64), &r);
  ck_assert_uint_eq(r.o_round[AC_F64][0], ac_encode_f64(AC_F64, (1 + 0x1p-11) * 4 / 3));
  ac_oracle_result_free(&r);
  /* the f16 tie itself: two keys only, p = 0.5 */
  ac_case d;
  ref_case(&d, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 2, 1, 1);
  ref_set(&d, 'q', 0, 0);
  ref_set(&d, 'v', 0, 0.5), ref_set(&d, 'v', 1, 0.5 + 0x1p-11);
  add_dropout(&d, 0.5, 1);
  d.dropout_mask[0] = d.dropout_mask[1] = 1;
  run1(&d, (1u << AC_F16) | (1u << AC_F64), &r);
  ck_assert_int_eq(r.elems[0].how, AC_HOW_EXACT);
  ck_assert(r.elems[0].o == 1 + 0x1p-11 && r.elems[0].o_err == 0);
  ck_assert_uint_eq(r.o_round[AC_F16][0], 0x3c00);   /* 1 + 2^-11: the tie, to even */
  ck_assert_uint_eq(r.o_round[AC_F32][0], 0x3f801000);
  ac_oracle_result_free(&r);
  /* every kept key dropped: o = 0 exactly; every V of the kept keys 0: o = 0 exactly */
  memset(d.dropout_mask, 0, 2);
  run1(&d, (1u << AC_F16) | (1u << AC_F64), &r);
  ck_assert(r.elems[0].o == 0 && r.elems[0].o_err == 0 && r.o_round[AC_F16][0] == 0);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  ac_case_free(&d);
}
END_TEST

/* o = o' / q within e^-1000 of an f16 breakpoint b: the two top keys average to b q exactly (f64
 * values), a third key 1000 logits below sits above (sgn > 0) or below it. */
static void tail_case(ac_case *c, double p, int sgn)
{
  ref_case(c, AC_F64, AC_MASK_NONE, 1, 1, 1, 1, 3, 1, 1);
  ref_set(c, 'q', 0, 1);
  ref_set(c, 'k', 0, 0), ref_set(c, 'k', 1, 0), ref_set(c, 'k', 2, -1000);
  double b = 1 + 0x1p-11, bq = b * (1 - p);   /* 11 + 24 bits: exact */
  ref_set(c, 'v', 0, bq - 0x1p-30), ref_set(c, 'v', 1, bq + 0x1p-30), ref_set(c, 'v', 2, bq + sgn);
  add_dropout(c, p, 1);
  memset(c->dropout_mask, 1, 3);
}

START_TEST(breakpoint_at_b_times_q)
{
  for (int x = 0; x < 2; x++)
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      ac_case c;
      tail_case(&c, x ? 0x1.5c28f6p-3 : 0.5, sgn);
      ac_oracle_result r;
      double t0 = ac_now();
      run1(&c, (1u << AC_F16) | (1u << AC_F64), &r);
      ck_assert_msg(ac_now() - t0 < 1.0, "too slow");
      ck_assert_int_eq(r.elems[0].how, AC_HOW_ROUNDED);
      ck_assert_uint_eq(r.o_round[AC_F16][0], sgn > 0 ? 0x3c01 : 0x3c00);   /* above the tie: up; below: down */
      ck_assert(r.max_prec <= 512);
      ac_oracle_result_free(&r);
      ac_case_free(&c);
    }
}
END_TEST

START_TEST(element_values_and_terms)
{
  /* the same row with and without dropout at p = 0.5, every key kept: o and every term double */
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x7465726d);
  for (int k = 0; k < 8; k++) {
    ac_case c, d;
    ac_err e;
    ref_random_case(&c, AC_F32, &r);
    ck_assert(ac_case_copy(&d, &c, &e) == 0);
    add_dropout(&d, 0.5, 3);
    memset(d.dropout_mask, 1, (size_t)ac_feat_tensor_count(&d.p, AC_FT_DROPOUT_MASK));
    ac_oracle_result a, b;
    ac_oracle_opts o;   /* the MPFR levels for both: the terms from the same code */
    ac_oracle_opts_init(&o);
    o.threads = 1, o.no_fast = 1, o.formats = 1u << AC_F64;
    ck_assert_msg(ac_oracle_run(&c, &o, &a, &e) == 0, "%s", e.msg);
    run1(&d, 1u << AC_F64, &b);
    for (int64_t x = 0; x < a.nrows * c.p.dv; x++) {
      const ac_oracle_elem *u = &a.elems[x], *v = &b.elems[x];
      if (u->accept != AC_ACCEPT_VALUE) continue;
      ck_assert_uint_eq(b.o_round[AC_F64][x], ac_encode_f64(AC_F64, 2 * ac_decode(AC_F64, a.o_round[AC_F64][x])));
      ck_assert(fabs(v->o - 2 * u->o) <= v->o_err + 2 * u->o_err);
      /* 1/(1-p) rounded up: 2 (1 + 2^-50) at most one binary64 step above */
      ck_assert(v->R >= 2 * u->R && v->R <= 2 * u->R * (1 + 0x1p-48));
      ck_assert(v->D >= 2 * u->D && v->M >= 2 * u->M && v->G >= 2 * u->G && v->Sp >= 2 * u->Sp);
    }
    for (int64_t x = 0; x < a.nrows; x++) ck_assert(a.rows[x].lse_f32 == b.rows[x].lse_f32);
    ac_oracle_result_free(&a);
    ac_oracle_result_free(&b);
    ac_case_free(&c);
    ac_case_free(&d);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_dropout");
  TCase *tc = tcase_create("dropout_exact");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, random_dropout);
  tcase_add_test(tc, random_dropout_window_sinks);
  tcase_add_test(tc, exact_rationals);
  tcase_add_test(tc, breakpoint_at_b_times_q);
  tcase_add_test(tc, element_values_and_terms);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
