/* toracle_inf.c: the rule table for infinite scores (oracle.h): a -inf key drops out
 * exactly, +inf keys give the mean of their V (or NaN), any NaN score gives NaN only, every
 * key -inf gives 0 or NaN; both oracle paths (MPFR levels and the binary64 fast pass) agree
 * bit for bit. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"

enum { TK = 5, DK = 3, DV = 3 };

static void run(const ac_case *c, int no_fast, ac_oracle_result *r)
{
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = (1u << AC_F64) | (1u << AC_F32);
  o.threads = 1;
  o.no_fast = no_fast;
  ck_assert_msg(ac_oracle_run(c, &o, r, &e) == 0, "ac_oracle_run: %s", e.msg);
}

/* One query row, TK keys, finite random values with q_0 > 0 (so k_j0 = ±inf gives ±inf). */
static void base_case(ac_case *c, ac_rng *g, double scale)
{
  ref_case(c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, TK, DK, DV);
  if (!(scale == 0 && signbit(scale))) {   /* -0.0: the default scale */
    c->p.scale_is_default = 0;
    c->p.scale = scale;
  }
  for (int t = 0; t < DK; t++) ref_set(c, 'q', ac_qidx(&c->p, 0, 0, 0, t), t == 0 ? 1.5 : ac_rng_normal(g));
  for (int j = 0; j < TK; j++) {
    for (int t = 0; t < DK; t++) ref_set(c, 'k', ac_kidx(&c->p, 0, 0, j, t), ac_rng_normal(g));
    for (int t = 0; t < DV; t++) ref_set(c, 'v', ac_vidx(&c->p, 0, 0, j, t), ac_rng_normal(g));
  }
}

/* The same case without key j (tk - 1 keys). */
static void drop_key(const ac_case *c, int64_t drop, ac_case *d)
{
  ref_case(d, c->p.dtype, AC_MASK_NONE, 1, 1, 1, 1, c->p.tk - 1, DK, DV);
  d->p.scale_is_default = c->p.scale_is_default;
  d->p.scale = c->p.scale;
  for (int t = 0; t < DK; t++)
    ref_set(d, 'q', ac_qidx(&d->p, 0, 0, 0, t), ref_get(c, 'q', ac_qidx(&c->p, 0, 0, 0, t)));
  for (int64_t j = 0, m = 0; j < c->p.tk; j++) {
    if (j == drop) continue;
    for (int t = 0; t < DK; t++) ref_set(d, 'k', ac_kidx(&d->p, 0, 0, m, t), ref_get(c, 'k', ac_kidx(&c->p, 0, 0, j, t)));
    for (int t = 0; t < DV; t++) ref_set(d, 'v', ac_vidx(&d->p, 0, 0, m, t), ref_get(c, 'v', ac_vidx(&c->p, 0, 0, j, t)));
    m++;
  }
}

static void same_paths(const ac_case *c)
{
  ac_oracle_result a, b;
  run(c, 1, &a);
  run(c, 0, &b);
  ck_assert_int_eq(a.rows[0].lse_accept, b.rows[0].lse_accept);
  ck_assert(memcmp(&a.rows[0].lse_f32, &b.rows[0].lse_f32, 4) == 0);
  for (int t = 0; t < DV; t++) {
    ck_assert_int_eq(a.elems[t].accept, b.elems[t].accept);
    ck_assert_uint_eq(a.o_round[AC_F64][t], b.o_round[AC_F64][t]);
    ck_assert_uint_eq(a.o_round[AC_F32][t], b.o_round[AC_F32][t]);
  }
  ac_oracle_result_free(&a);
  ac_oracle_result_free(&b);
}

START_TEST(ninf_key_drops_out_exactly)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 31);
  for (int rep = 0; rep < 8; rep++) {
    double scale = rep % 2 ? 0.375 : -0.0;   /* -0.0: the default scale */
    if (rep == 4) scale = -0.5;               /* a negative scale flips the infinity */
    ac_case c, d;
    base_case(&c, &g, scale);
    int64_t j = (int64_t)ac_rng_below(&g, TK);
    /* score of key j: c * (1.5 * k_0 + ...) = -inf */
    ref_set(&c, 'k', ac_kidx(&c.p, 0, 0, j, 0), scale < 0 ? INFINITY : -INFINITY);
    if (rep >= 6) ref_set   /* a NaN value at the dropped key changes nothing */(&c, 'v', ac_vidx(&c.p, 0, 0, j, 1), NAN);
    drop_key(&c, j, &d);
    for (int no_fast = 0; no_fast < 2; no_fast++) {
      ac_oracle_result a, b;
      run(&c, no_fast, &a);
      run(&d, no_fast, &b);
      ck_assert_msg(a.rows[0].lse_accept == (AC_ACCEPT_VALUE | AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0) && memcmp(&a.rows[0].lse_f32, &b.rows[0].lse_f32, 4) == 0,
                    AC_SEED_FMT "rep %d key %lld: LSE %a (accept %d) want %a", AC_SEED_ARG, rep, (long long)j,
                    (double)a.rows[0].lse_f32, a.rows[0].lse_accept, (double)b.rows[0].lse_f32);
      for (int t = 0; t < DV; t++) {
        uint8_t want = AC_ACCEPT_VALUE | AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0;
        ck_assert_msg(a.elems[t].accept == want && a.o_round[AC_F64][t] == b.o_round[AC_F64][t] &&
                          a.o_round[AC_F32][t] == b.o_round[AC_F32][t],
                      AC_SEED_FMT "rep %d key %lld col %d: accept %d, o %a want %a", AC_SEED_ARG, rep, (long long)j, t,
                      a.elems[t].accept, a.elems[t].o, b.elems[t].o);
        ck_assert(a.elems[t].G == b.elems[t].G || fabs(a.elems[t].G - b.elems[t].G) <= 1e-12 * b.elems[t].G);
      }
      ck_assert(a.rows[0].max_cZ > 0 && isfinite(a.rows[0].max_cZ));
      ac_oracle_result_free(&a);
      ac_oracle_result_free(&b);
    }
    same_paths(&c);
    ac_case_free(&c);
    ac_case_free(&d);
  }
}
END_TEST

START_TEST(pinf_keys_give_their_mean)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 32);
  ac_case c;
  base_case(&c, &g, -0.0);
  ref_set(&c, 'k', ac_kidx(&c.p, 0, 0, 1, 0), INFINITY);
  ref_set(&c, 'k', ac_kidx(&c.p, 0, 0, 3, 0), INFINITY);
  ref_set(&c, 'k', ac_kidx(&c.p, 0, 0, 4, 0), -INFINITY);   /* -inf beside +inf: weight 0 */
  ac_oracle_result r;
  run(&c, 0, &r);
  ck_assert_int_eq(r.rows[0].lse_accept, AC_ACCEPT_PINF | AC_ACCEPT_NAN);
  ck_assert(isinf(r.rows[0].lse_f32) && r.rows[0].lse_f32 > 0);
  for (int t = 0; t < DV; t++) {
    double v1 = ref_get(&c, 'v', ac_vidx(&c.p, 0, 0, 1, t)), v3 = ref_get(&c, 'v', ac_vidx(&c.p, 0, 0, 3, t));
    float want = (float)((v1 + v3) / 2);   /* exact in binary64, one rounding to binary32 */
    uint32_t wb;
    memcpy(&wb, &want, 4);
    ck_assert_msg(r.elems[t].accept == (AC_ACCEPT_VALUE | AC_ACCEPT_NAN) && r.o_round[AC_F32][t] == wb,
                  AC_SEED_FMT "col %d: accept %d o %a want %a", AC_SEED_ARG, t, r.elems[t].accept, r.elems[t].o,
                  (double)want);
  }
  ac_oracle_result_free(&r);
  same_paths(&c);
  ac_case_free(&c);
}
END_TEST

START_TEST(nan_scores_give_nan_only)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 33);
  for (int kind = 0; kind < 4; kind++) {
    ac_case c;
    base_case(&c, &g, kind == 3 ? 0.0 : -0.0);
    size_t k0 = ac_kidx(&c.p, 0, 0, 2, 0), k1 = ac_kidx(&c.p, 0, 0, 2, 1);
    switch (kind) {
    case 0: ref_set(&c, 'k', k0, INFINITY); ref_set(&c, 'k', k1, -INFINITY);   /* +inf + -inf */
      ref_set(&c, 'q', ac_qidx(&c.p, 0, 0, 0, 1), 1.0);
      break;
    case 1: ref_set(&c, 'q', ac_qidx(&c.p, 0, 0, 0, 1), 0.0); ref_set(&c, 'k', k1, INFINITY); break;   /* 0 * inf */
    case 2: ref_set(&c, 'k', k1, NAN); break;
    case 3: ref_set(&c, 'k', k0, INFINITY); break;   /* scale 0 times inf */
    }
    ac_oracle_result r;
    run(&c, 0, &r);
    ck_assert_msg(r.rows[0].lse_accept == AC_ACCEPT_NAN, AC_SEED_FMT "kind %d: LSE accept %d", AC_SEED_ARG, kind,
                  r.rows[0].lse_accept);
    for (int t = 0; t < DV; t++) ck_assert_int_eq(r.elems[t].accept, AC_ACCEPT_NAN);
    ac_oracle_result_free(&r);
    same_paths(&c);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(all_keys_ninf_give_zero_or_nan)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 34);
  ac_case c;
  base_case(&c, &g, -0.0);
  for (int j = 0; j < TK; j++) ref_set(&c, 'k', ac_kidx(&c.p, 0, 0, j, 0), -INFINITY);
  ac_oracle_result r;
  run(&c, 0, &r);
  ck_assert_int_eq(r.rows[0].lse_accept, AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF);
  for (int t = 0; t < DV; t++) {
    ck_assert_int_eq(r.elems[t].accept, AC_ACCEPT_VALUE | AC_ACCEPT_NAN);
    ck_assert(r.elems[t].o == 0 && r.o_round[AC_F32][t] == 0);
  }
  ac_oracle_result_free(&r);
  same_paths(&c);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_inf");
  TCase *tc = tcase_create("rules");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, ninf_key_drops_out_exactly);
  tcase_add_test(tc, pinf_keys_give_their_mean);
  tcase_add_test(tc, nan_scores_give_nan_only);
  tcase_add_test(tc, all_keys_ninf_give_zero_or_nan);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
