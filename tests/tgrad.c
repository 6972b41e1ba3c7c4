/* tgrad.c: the backward oracle (oracle/grad.h) against the brute force of tests/tgrad_ref.c on
 * random small cases (every mask, GQA, dv != dk, scales 0 and negative, fp64/fp32/fp16/bf16), the
 * adversarial cases whose exact answers the Ziv loop alone cannot reach (constant V, one visible
 * key, dO giving equal dP, zero dO rows, empty rows, constant K columns, a cancellation of
 * e^-700 in dP - D), the rule table of non-finite inputs, row and column sampling, and the
 * refusal of variant features. Every case: 0 unresolved under the default cap. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "tgrad_ref.h"
#include "grad.h"
#include "variants.h"
#include "dtype_mpfr.h"

#define NCASES 60   /* per dtype; x10 with ATTNCHECK_TEST_EXPENSIVE=1 */
#define PREC 4000

static void *dout_alloc(const ac_problem *p)
{
  return calloc((size_t)(p->batch * p->heads * p->tq * p->dv), ac_dtype_size(p->dtype));
}

static void dout_set(const ac_problem *p, void *d, size_t x, double v)
{
  ac_store_bits(p->dtype, d, x, ac_encode_f64_ov(p->dtype, v, AC_E4M3_SATURATE));
}

static void run(const ac_case *c, const void *d, const char *rows, const char *cols, ac_grad_result *r)
{
  ac_grad_opts o;
  ac_err e;
  ac_grad_opts_init(&o);
  o.rows = rows;
  o.cols = cols;
  ck_assert_msg(ac_grad_run(c, d, &o, r, &e) == 0, "ac_grad_run: %s", e.msg);
  ck_assert_msg(r->n_unresolved == 0, AC_SEED_FMT "%lld unresolved", AC_SEED_ARG, (long long)r->n_unresolved);
}

/* The counts of an adversarial case, for the test log. */
static void note(const char *name, const ac_grad_result *r)
{
  fprintf(stderr, "tgrad %s: exact %lld (zero %lld), rounded %lld (extended pass %lld), after the first MPFR pass %lld, "
                  "unresolved %lld, max precision %ld\n",
          name, (long long)r->n_exact, (long long)r->n_zero, (long long)r->n_rounded, (long long)r->n_fast,
          (long long)r->n_highprec, (long long)r->n_unresolved, r->max_prec);
}

/* Bits of x rounded to t, or 1 in *amb when x (1 ± 2^-(PREC-100)) round differently. */
static uint64_t ref_round(ac_dtype t, mpfr_t x, int *amb)
{
  mpfr_t a, b;
  mpfr_inits2(mpfr_get_prec(x), a, b, (mpfr_ptr)0);
  mpfr_mul_2si(a, x, -(long)mpfr_get_prec(x) + 100, MPFR_RNDN);
  mpfr_abs(a, a, MPFR_RNDN);
  mpfr_add(b, x, a, MPFR_RNDN);
  mpfr_sub(a, x, a, MPFR_RNDN);
  uint64_t r = ac_encode_mpfr(t, x, AC_E4M3_SATURATE);
  *amb = ac_encode_mpfr(t, a, AC_E4M3_SATURATE) != r || ac_encode_mpfr(t, b, AC_E4M3_SATURATE) != r;
  mpfr_clears(a, b, (mpfr_ptr)0);
  return r;
}

/* Every selected element of T against ref; returns the number of ambiguous references. */
static int64_t compare(const char *what, const ac_grad_tensor *T, mpfr_t *ref)
{
  int64_t amb_n = 0;
  for (int64_t x = 0; x < T->n; x++) {
    if (T->slot[x] < 0) continue;
    for (int64_t t = 0; t < T->d; t++) {
      const ac_grad_elem *el = ac_grad_at(T, x, t);
      mpfr_ptr v = ref[x * T->d + t];
      ck_assert_int_eq(el->accept, AC_ACCEPT_VALUE);
      double vd = mpfr_get_d(v, MPFR_RNDN);
      ck_assert_msg(fabs(el->g - vd) <= el->g_err + fabs(vd) * 0x1p-52 + 0x1p-1074,
                    AC_SEED_FMT "%s %lld,%lld: %a +- %a, reference %a", AC_SEED_ARG, what, (long long)x, (long long)t,
                    el->g, el->g_err, vd);
      for (int f = 0; f < AC_NDTYPES; f++) {
        if (!T->bits[f]) continue;
        int amb;
        uint64_t want = ref_round((ac_dtype)f, v, &amb), got = ac_grad_bits(T, (ac_dtype)f, x, t);
        if (amb) { amb_n++; continue; }
        if (ac_bits_iszero((ac_dtype)f, got) && ac_bits_iszero((ac_dtype)f, want) && el->how == AC_HOW_EXACT) continue;
        ck_assert_msg(got == want, AC_SEED_FMT "%s %lld,%lld %s: oracle %a (how %d), reference %a", AC_SEED_ARG, what,
                      (long long)x, (long long)t, ac_dtype_name((ac_dtype)f), ac_decode((ac_dtype)f, got), el->how,
                      ac_decode((ac_dtype)f, want));
      }
    }
  }
  return amb_n;
}

static mpfr_t *mp_array(int64_t n)
{
  mpfr_t *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  for (int64_t x = 0; x < n; x++) mpfr_init2(a[x], 64);
  return a;
}

static void mp_free(mpfr_t *a, int64_t n)
{
  for (int64_t x = 0; x < n; x++) mpfr_clear(a[x]);
  free(a);
}

/* The oracle's r against the brute force at prec; returns the ambiguous references. */
static int64_t against_brute(const ac_case *c, const void *d, const ac_grad_result *r, mpfr_prec_t prec)
{
  const ac_problem *p = &c->p;
  int64_t nr = p->batch * p->heads * p->tq, nc = p->batch * p->kv_heads * p->tk;
  mpfr_t *dq = mp_array(nr * p->dk), *dk = mp_array(nc * p->dk), *dv = mp_array(nc * p->dv);
  mpfr_t *ds = mp_array(p->heads);
  gref_backward(c, d, prec, dq, dk, dv, ds);
  int64_t amb = compare("dQ", &r->dq, dq) + compare("dK", &r->dk, dk) + compare("dV", &r->dv, dv);
  if (p->f.used & AC_FEAT_SINKS) amb += compare("dsink", &r->dsink, ds);
  mp_free(ds, p->heads);
  mp_free(dq, nr * p->dk);
  mp_free(dk, nc * p->dk);
  mp_free(dv, nc * p->dv);
  return amb;
}

static void random_dout(const ac_problem *p, void *d, ac_rng *rng)
{
  int mode = (int)ac_rng_below(rng, 3);
  for (int64_t x = 0; x < p->batch * p->heads * p->tq * p->dv; x++) {
    double v = mode == 0 ? ac_rng_normal(rng) : mode == 1 ? (double)ac_rng_range(rng, -2, 2)
                                                          : ac_rng_normal(rng) * ldexp(1.0, (int)ac_rng_range(rng, -8, 4));
    dout_set(p, d, (size_t)x, v);
  }
}

static void check_dtype(ac_dtype dt)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 0x67726164 + (uint64_t)dt);
  int64_t elems = 0, amb = 0, rounded = 0;
  int ncases = ac_test_expensive() ? 10 * NCASES : NCASES;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dt, &rng);
    void *d = dout_alloc(&c.p);
    random_dout(&c.p, d, &rng);
    ac_grad_result r;
    run(&c, d, NULL, NULL, &r);
    amb += against_brute(&c, d, &r, PREC);
    elems += r.n_exact + r.n_rounded;
    rounded += r.n_rounded;
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
  ck_assert_msg(amb < elems / 5, AC_SEED_FMT "%s: %lld of %lld ambiguous", AC_SEED_ARG, ac_dtype_name(dt),
                (long long)amb, (long long)elems);
  ck_assert_msg(rounded > elems / 4, AC_SEED_FMT "%s: only %lld of %lld elements through the passes", AC_SEED_ARG,
                ac_dtype_name(dt), (long long)rounded, (long long)elems);
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

/* A causal f32 case 2 heads over 1 kv head, tq = tk = 5, dk = 3, dv = 2 with seeded values. */
static void *adv_case(ac_case *c, ac_mask m, int64_t tq, int64_t tk, ac_rng *rng)
{
  ref_case(c, AC_F32, m, 1, 2, 1, tq, tk, 3, 2);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(rng));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(rng));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(rng));
  void *d = dout_alloc(&c->p);
  random_dout(&c->p, d, rng);
  return d;
}

static void assert_exact_zero(const ac_grad_tensor *T, int64_t x, int64_t t)
{
  const ac_grad_elem *el = ac_grad_at(T, x, t);
  ck_assert_msg(el->how == AC_HOW_EXACT && el->g == 0 && el->g_err == 0, "element %lld,%lld: how %d, %a +- %a",
                (long long)x, (long long)t, el->how, el->g, el->g_err);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (T->bits[f]) ck_assert_uint_eq(ac_grad_bits(T, (ac_dtype)f, x, t), 0);
}

START_TEST(constant_v)
{
  /* V the same on every key: dP_ij = dO_i·V for all j, dS = 0: dQ = dK = 0 exactly, dV is not */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 1);
  ac_case c;
  void *d = adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  for (int64_t j = 0; j < 5; j++) {
    ref_set(&c, 'v', (size_t)(2 * j), 0.375);
    ref_set(&c, 'v', (size_t)(2 * j + 1), -1.5);
  }
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("constant_v", &r);
  for (int64_t x = 0; x < 10; x++)
    for (int64_t t = 0; t < 3; t++) assert_exact_zero(&r.dq, x, t);
  for (int64_t x = 0; x < 5; x++)
    for (int64_t t = 0; t < 3; t++) assert_exact_zero(&r.dk, x, t);
  ck_assert_int_eq(r.n_zero, 45);
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(one_key_and_empty_rows)
{
  /* causal bottom-right, tq = 5 > tk = 3: rows 0 and 1 see nothing (dQ = 0), row 2 sees key 0
   * alone (P = 1: dS = 0, dQ = 0; its dV term is dO exactly) */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 2);
  ac_case c;
  void *d = adv_case(&c, AC_MASK_CAUSAL_BR, 5, 3, &rng);
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("one_key_and_empty_rows", &r);
  for (int64_t h = 0; h < 2; h++)
    for (int64_t i = 0; i < 3; i++)
      for (int64_t t = 0; t < 3; t++) assert_exact_zero(&r.dq, h * 5 + i, t);
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
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
  void *d = adv_case(&c, AC_MASK_NONE, 5, 5, &rng);
  for (int64_t j = 0; j < 5; j++) {
    ref_set(&c, 'v', (size_t)(2 * j), 1.0);
    ref_set(&c, 'k', (size_t)(3 * j + 1), 0.625);
  }
  for (int64_t x = 0; x < 10; x++) {
    dout_set(&c.p, d, (size_t)(2 * x), x == 8 ? 0.0 : 0.25 * (double)(x + 1));
    dout_set(&c.p, d, (size_t)(2 * x + 1), x == 4 ? 1.0 : 0.0);
  }
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("equal_dp_zero_do_constant_k", &r);
  for (int64_t x = 0; x < 10; x++) {
    assert_exact_zero(&r.dq, x, 1);
    if (x != 4) {
      assert_exact_zero(&r.dq, x, 0);
      assert_exact_zero(&r.dq, x, 2);
    }
  }
  ck_assert(ac_grad_at(&r.dq, 4, 0)->how == AC_HOW_ROUNDED);
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(cancellation_e700)
{
  /* scores 0 and -700 (scale 1, q·k exact): P = (1, e^-700)/L, dO = V_top so dP_top - D =
   * P_1 (dP_top - dP_1), about 1e-304: the first passes cannot separate it from 0 */
  ac_case c;
  ref_case(&c, AC_F64, AC_MASK_NONE, 1, 1, 1, 1, 2, 1, 2);
  c.p.scale_is_default = 0;
  c.p.scale = 1.0;
  ref_set(&c, 'q', 0, 1.0);
  ref_set(&c, 'k', 0, 0.0);
  ref_set(&c, 'k', 1, -700.0);
  ref_set(&c, 'v', 0, 1.5);
  ref_set(&c, 'v', 1, 0.75);
  ref_set(&c, 'v', 2, -0.5);
  ref_set(&c, 'v', 3, 2.0);
  void *d = dout_alloc(&c.p);
  dout_set(&c.p, d, 0, 1.5);
  dout_set(&c.p, d, 1, 0.75);
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("cancellation_e700", &r);
  /* relative to the top group, dP - D meets no rounded 1 - P: the first pass decides it */
  ck_assert_msg(r.n_highprec == 0 && r.max_prec == 117, "highprec %lld, max_prec %ld", (long long)r.n_highprec,
                r.max_prec);
  ck_assert(fabs(ac_grad_at(&r.dq, 0, 0)->g) > 1e-305);
  against_brute(&c, d, &r, 6000);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(huge_logits)
{
  /* q, k of magnitude 2^5 in fp32 (score gaps in the thousands): P one-hot up to e^-3000 and
   * gradients near 2^-4000, beyond binary64 but not beyond the brute force at 12000 bits */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 4);
  ac_case c;
  void *d = adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  for (int64_t x = 0; x < 30; x++) ref_set(&c, 'q', (size_t)x, 32.0 * ref_get(&c, 'q', (size_t)x));
  for (int64_t x = 0; x < 15; x++) ref_set(&c, 'k', (size_t)x, 32.0 * ref_get(&c, 'k', (size_t)x));
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("huge_logits", &r);
  against_brute(&c, d, &r, 12000);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

/* A case of small integers in the given shape, and dO, from explicit values. */
static void *int_case(ac_case *c, ac_dtype dt, ac_mask m, int64_t H, int64_t KVH, int64_t tq, int64_t tk, int64_t dk,
                      int64_t dv, const double *q, const double *k, const double *v, const double *dO)
{
  ref_case(c, dt, m, 1, H, KVH, tq, tk, dk, dv);
  for (int64_t x = 0; x < H * tq * dk; x++) ref_set(c, 'q', (size_t)x, q[x]);
  for (int64_t x = 0; x < KVH * tk * dk; x++) ref_set(c, 'k', (size_t)x, k[x]);
  for (int64_t x = 0; x < KVH * tk * dv; x++) ref_set(c, 'v', (size_t)x, v[x]);
  void *d = dout_alloc(&c->p);
  for (int64_t x = 0; x < H * tq * dv; x++) dout_set(&c->p, d, (size_t)x, dO[x]);
  return d;
}

START_TEST(mirrored_rows_cancel_in_dv)
{
  /* rows (h0, i1) and (h1, i1) score key 0 at -4 | 2 and 4 | -2: its weights 1/(1+e^6) and
   * 1/(1+e^-6) add to 1, so dV_0[1] = 2 - 2 (1/(1+e^6) + 1/(1+e^-6)) = 0 exactly, though no row
   * class alone is 0 */
  static const double q[] = {1, -2, -2, 2}, k[] = {2, -1, 0, 0, 0};
  static const double v[] = {2, -2, -2, -1, 0, 0, 2, -2, -1, 2, -1, 1, -1, -1, 2};
  static const double dO[] = {1, 2, 0, -1, -2, 0, 1, 0, -1, 1, -2, -2};
  ac_case c;
  void *d = int_case(&c, AC_F16, AC_MASK_CAUSAL, 2, 1, 2, 5, 1, 3, q, k, v, dO);
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("mirrored_rows_cancel_in_dv", &r);
  assert_exact_zero(&r.dv, 0, 1);
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
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
  void *d = int_case(&c, AC_F16, AC_MASK_CAUSAL_BR, 4, 2, 2, 3, 4, 1, q, k, v, dO);
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("group_pairs_cancel_in_dq", &r);
  assert_exact_zero(&r.dq, 1, 2);
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
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
  void *d = int_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 3, 3, 1, 1, q, k, v, dO);
  c.p.scale_is_default = 0;
  c.p.scale = 0;
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("rational_on_a_breakpoint", &r);
  for (int64_t j = 0; j < 3; j++) {
    const ac_grad_elem *el = ac_grad_at(&r.dv, j, 0);
    ck_assert_msg(el->how == AC_HOW_EXACT && el->g == 1 + 0x1p-11 && el->g_err == 0, "dV_%lld: how %d, %a +- %a",
                  (long long)j, el->how, el->g, el->g_err);
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F16, j, 0), ac_encode_f64(AC_F16, 1.0));
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F64, j, 0), ac_encode_f64(AC_F64, 1 + 0x1p-11));
  }
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(extended_pass_agrees)
{
  /* the case dtype alone: the extended pass decides most elements, and every bit agrees with the
   * MPFR passes alone */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 7);
  int64_t fast = 0, all = 0;
  for (int k = 0; k < 200; k++) {
    ac_case c;
    ref_random_case(&c, k % 2 ? AC_F32 : AC_BF16, &rng);
    void *d = dout_alloc(&c.p);
    random_dout(&c.p, d, &rng);
    ac_grad_opts o;
    ac_err e;
    ac_grad_opts_init(&o);
    o.formats = 0;
    ac_grad_result a, b;
    ck_assert(ac_grad_run(&c, d, &o, &a, &e) == 0);
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
    ac_grad_result_free(&b);
    free(d);
    ac_case_free(&c);
  }
  ck_assert_msg(fast > all / 2, "the extended pass decided %lld of %lld", (long long)fast, (long long)all);
}
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
    void *d = dout_alloc(&c.p);
    for (int64_t x = 0; x < 18; x++) dout_set(&c.p, d, (size_t)x, ldexp(ac_rng_normal(&rng), (int)ac_rng_range(&rng, -400, 400)));
    ac_grad_result r;
    run(&c, d, NULL, NULL, &r);
    against_brute(&c, d, &r, PREC);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(windows_and_bool_masks)
{
  /* visibility beyond the mask: sliding windows (both alignments) and boolean masks, rows emptied
   * in the middle, against the brute force */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 9);
  static const ac_dtype dts[] = {AC_F32, AC_F16, AC_BF16, AC_F64};
  int ncases = ac_test_expensive() ? 800 : 80;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ac_err e;
    ref_random_case(&c, dts[k % 4], &rng);
    ac_features_plain(&c.p);
    static const uint32_t feats[] = {AC_FEAT_WINDOW, AC_FEAT_BOOL_MASK, AC_FEAT_WINDOW | AC_FEAT_BOOL_MASK};
    c.p.f.used = feats[ac_rng_below(&rng, 3)];
    c.p.f.win_left = (int64_t)ac_rng_below(&rng, 4) - 1;
    c.p.f.win_right = (int64_t)ac_rng_below(&rng, 4) - 1;
    c.p.f.win_top_left = (int)ac_rng_below(&rng, 2);
    c.p.f.mask_b = 1;
    c.p.f.mask_h = ac_rng_below(&rng, 2) ? c.p.heads : 1;
    ck_assert_msg(ac_features_alloc(&c, &e) == 0, "%s", e.msg);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BOOL_MASK); x++) c.bool_mask[x] = ac_rng_below(&rng, 4) != 0;
    void *d = dout_alloc(&c.p);
    random_dout(&c.p, d, &rng);
    ac_grad_result r;
    run(&c, d, NULL, NULL, &r);
    against_brute(&c, d, &r, PREC);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
}
END_TEST

static int undefined(const ac_grad_tensor *T, int64_t x, int64_t t)
{
  const ac_grad_elem *el = ac_grad_at(T, x, t);
  return isnan(el->g) && el->accept == (AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF);
}

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
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ac_err e;
    ref_random_case(&c, dts[k % 4], &rng);
    ac_features_plain(&c.p);
    c.p.f.used = feats[ac_rng_below(&rng, 5)];
    c.p.f.win_left = (int64_t)ac_rng_below(&rng, 4) - 1;
    c.p.f.win_right = (int64_t)ac_rng_below(&rng, 4) - 1;
    c.p.f.mask_b = 1;
    c.p.f.mask_h = 1;
    c.p.f.bias_b = 1;
    c.p.f.bias_h = ac_rng_below(&rng, 2) ? c.p.heads : 1;
    c.p.f.bias_dtype = ac_rng_below(&rng, 2) ? AC_F32 : c.p.dtype;
    ck_assert_msg(ac_features_alloc(&c, &e) == 0, "%s", e.msg);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BOOL_MASK); x++) c.bool_mask[x] = ac_rng_below(&rng, 4) != 0;
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_SLOPES); x++)
      c.alibi_slopes[x] = ac_rng_below(&rng, 2) ? (float)ldexp(1.0, -(int)(1 + ac_rng_below(&rng, 8)))
                                                : (float)fabs(ac_rng_normal(&rng));
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BIAS); x++) {
      double v = ac_rng_below(&rng, 10) == 0 ? -INFINITY : ac_rng_below(&rng, 3) == 0 ? (double)ac_rng_range(&rng, -2, 2)
                                                                                   : ac_rng_normal(&rng) * 2;
      ac_store_bits(c.p.f.bias_dtype, c.bias, (size_t)x, ac_encode_f64(c.p.f.bias_dtype, v));
    }
    void *d = dout_alloc(&c.p);
    random_dout(&c.p, d, &rng);
    ac_grad_result r;
    run(&c, d, NULL, NULL, &r);
    against_brute(&c, d, &r, PREC);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(bias_equalizes_scores)
{
  /* scale 1/2, q = 1, keys 2, 0, 4 with biases 0, 1, -1: every score is 1, P = 1/3 exactly, and
   * dV_j = (dO_0 + dO_1 + dO_2)/3 on an fp16 tie (as rational_on_a_breakpoint) */
  static const double q[] = {1, 1, 1}, k[] = {2, 0, 4}, v[] = {1, 2, 3};
  static const double dO[] = {1 + 0x1p-10, 1 + 0x1p-10, 1 - 0x1p-11};
  ac_case c;
  ac_err e;
  void *d = int_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 3, 3, 1, 1, q, k, v, dO);
  c.p.scale_is_default = 0;
  c.p.scale = 0.5;
  ac_features_plain(&c.p);
  c.p.f.used = AC_FEAT_BIAS;
  c.p.f.bias_b = c.p.f.bias_h = 1;
  c.p.f.bias_dtype = AC_F32;
  ck_assert(ac_features_alloc(&c, &e) == 0);
  static const double bias[] = {0, 1, -1};
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 3; j++) ac_store_bits(AC_F32, c.bias, (size_t)(i * 3 + j), ac_encode_f64(AC_F32, bias[j]));
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("bias_equalizes_scores", &r);
  for (int64_t j = 0; j < 3; j++) {
    ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F16, j, 0), ac_encode_f64(AC_F16, 1.0));
    ck_assert(ac_grad_at(&r.dv, j, 0)->g == 1 + 0x1p-11 && ac_grad_at(&r.dv, j, 0)->how == AC_HOW_EXACT);
  }
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
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
  int64_t seen = 0;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ac_err e;
    ref_random_case(&c, dts[k % 4], &rng);
    ac_features_plain(&c.p);
    c.p.f.used = AC_FEAT_SINKS | feats[ac_rng_below(&rng, 4)];
    ck_assert_msg(ac_features_alloc(&c, &e) == 0, "%s", e.msg);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_SINKS); x++)
      c.sinks[x] = ac_rng_below(&rng, 8) == 0 ? -INFINITY : (float)(ac_rng_normal(&rng) * 2);
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BOOL_MASK); x++) c.bool_mask[x] = ac_rng_below(&rng, 4) != 0;
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_SLOPES); x++) c.alibi_slopes[x] = 0.25f;
    for (int64_t x = 0; x < ac_feat_tensor_count(&c.p, AC_FT_BIAS); x++)
      ac_store_bits(c.p.f.bias_dtype, c.bias, (size_t)x, ac_encode_f64(c.p.f.bias_dtype, ac_rng_normal(&rng)));
    void *d = dout_alloc(&c.p);
    random_dout(&c.p, d, &rng);
    ac_grad_result r;
    run(&c, d, NULL, NULL, &r);
    ck_assert_int_eq(r.dsink.nsel, c.p.heads);
    seen += r.dsink.nsel;
    against_brute(&c, d, &r, PREC);
    ac_grad_result_free(&r);
    free(d);
    ac_case_free(&c);
  }
  ck_assert(seen > 0);
}
END_TEST

START_TEST(sink_rows_cancel)
{
  /* scale 0 and a sink: both rows weigh their keys alike, dO of row 1 is minus row 0's, so
   * D_1 = -D_0 and dσ = -P_sink (D_0 + D_1) = 0 exactly, though neither term is 0 */
  static const double q[] = {1, -1}, k[] = {1, 2, 3}, v[] = {0.5, -1, 2}, dO[] = {1.5, -1.5};
  ac_case c;
  ac_err e;
  void *d = int_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 2, 3, 1, 1, q, k, v, dO);
  c.p.scale_is_default = 0;
  c.p.scale = 0;
  ac_features_plain(&c.p);
  c.p.f.used = AC_FEAT_SINKS;
  ck_assert(ac_features_alloc(&c, &e) == 0);
  c.sinks[0] = 0.75f;
  ac_grad_result r;
  run(&c, d, NULL, NULL, &r);
  note("sink_rows_cancel", &r);
  assert_exact_zero(&r.dsink, 0, 0);
  against_brute(&c, d, &r, PREC);
  ac_grad_result_free(&r);
  free(d);
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
  void *d = adv_case(&c, AC_MASK_NONE, 5, 5, &rng);
  ac_features_plain(&c.p);
  c.p.f.used = AC_FEAT_WINDOW;
  c.p.f.win_left = 1;
  c.p.f.win_right = 0;
  ck_assert(ac_features_alloc(&c, &e) == 0);
  ref_set(&c, 'v', 8, NAN);
  ac_grad_result r;
  ac_grad_opts o;
  ac_grad_opts_init(&o);
  o.formats = 0;   /* the case dtype alone: what the extended pass decides stays decided */
  o.cols = "3";
  ck_assert(ac_grad_run(&c, d, &o, &r, &e) == 0);
  for (int64_t t = 0; t < 3; t++) ck_assert(undefined(&r.dk, 3, t));
  ck_assert(!undefined(&r.dv, 3, 0) && !undefined(&r.dq, 3, 0) && undefined(&r.dq, 4, 0));
  ac_grad_result_free(&r);
  run(&c, d, NULL, NULL, &r);
  for (int64_t t = 0; t < 3; t++) ck_assert(undefined(&r.dk, 4, t) && !undefined(&r.dk, 2, t));
  ac_grad_result_free(&r);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(nonfinite_rules)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 5);
  ac_case c;
  void *d = adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  ac_grad_result r0, r;
  run(&c, d, NULL, NULL, &r0);
  /* NaN in key 4 (masked for rows 0-3): nothing of rows 0-3 changes */
  ref_set(&c, 'k', 12, NAN);
  run(&c, d, NULL, NULL, &r);
  for (int64_t h = 0; h < 2; h++)
    for (int64_t i = 0; i < 4; i++)
      for (int64_t t = 0; t < 3; t++)
        ck_assert_uint_eq(ac_grad_bits(&r.dq, AC_F64, h * 5 + i, t), ac_grad_bits(&r0.dq, AC_F64, h * 5 + i, t));
  for (int64_t t = 0; t < 3; t++) ck_assert(undefined(&r.dq, 4, t) && undefined(&r.dk, 4, t) && undefined(&r.dk, 0, t));
  ac_grad_result_free(&r);
  ref_set(&c, 'k', 12, 0.5);
  /* inf in dO of head 1 row 2, column 1: dQ of that row and dK of keys 0-2 undefined; dV only in column 1 */
  dout_set(&c.p, d, (size_t)((5 + 2) * 2 + 1), INFINITY);
  run(&c, d, NULL, NULL, &r);
  for (int64_t t = 0; t < 3; t++) {
    ck_assert(undefined(&r.dq, 7, t) && !undefined(&r.dq, 6, t));
    ck_assert(undefined(&r.dk, 2, t) && !undefined(&r.dk, 3, t));
  }
  ck_assert(undefined(&r.dv, 0, 1) && !undefined(&r.dv, 0, 0) && !undefined(&r.dv, 3, 1));
  ck_assert(ac_grad_bits(&r.dq, AC_F32, 7, 0) == ac_nan_bits(AC_F32));
  ac_grad_result_free(&r);
  ac_grad_result_free(&r0);
  free(d);
  ac_case_free(&c);
}
END_TEST

START_TEST(sampling_and_refusal)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 6);
  ac_case c;
  void *d = adv_case(&c, AC_MASK_CAUSAL, 5, 5, &rng);
  ac_grad_result all, some;
  run(&c, d, NULL, NULL, &all);
  run(&c, d, "1,7-8", "3", &some);
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
  c.p.f.used = AC_FEAT_SOFTCAP;
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
  tcase_add_test(tc, wide_f64_values);
  tcase_add_test(tc, windows_and_bool_masks);
  tcase_add_test(tc, alibi_and_bias);
  tcase_add_test(tc, bias_equalizes_scores);
  tcase_add_test(tc, sinks);
  tcase_add_test(tc, sink_rows_cancel);
  tcase_add_test(tc, nonfinite_rules);
  tcase_add_test(tc, window_nonfinite);
  tcase_add_test(tc, sampling_and_refusal);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
