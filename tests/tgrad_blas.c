/* tgrad_blas.c: the backward's matrix-product level (oracle/gradblas.h, docs/backward.md §4.4)
 * against the older levels alone (no_blas): the same bits in the case dtype for every element of
 * dQ, dK, dV and dσ on random cases of every narrow dtype (several row tiles, key blocks and dk
 * blocks; masks, GQA, stored, zero and negative scales; windows, boolean masks, ALiBi, bias with
 * -inf keys, sinks; every dO pattern of gen --grad), the elements that must fall through to the
 * older levels (dP - D cancelling exactly and nearly, exact zeros, a tie, subnormal products,
 * non-finite inputs), and the oracle and budgets independent of the number of threads. Ten times
 * the random cases with ATTNCHECK_TEST_EXPENSIVE=1. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "budget_grad.h"
#include "dout.h"
#include "grad.h"
#include "precision.h"
#include "testutil.h"
#include "tgrad_util.h"
#include "toracle_ref.h"
#include "variants.h"

static const char *const patterns[] = {"normal", "zero-rows", "huge", "tiny", "zeros", "cancel"};
static const char *const tnames[] = {"dq", "dk", "dv", "dsink"};

/* Values of a normal draw times 2^[-sp, sp] into c's q, k, v. */
static void fill(ac_case *c, ac_rng *r, int sp)
{
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  const int64_t cnt[3] = {n.q, n.k, n.v};
  for (int w = 0; w < 3; w++)
    for (int64_t x = 0; x < cnt[w]; x++)
      ref_set(c, "qkv"[w], (size_t)x, ac_rng_normal(r) * ldexp(1.0, sp ? (int)ac_rng_range(r, -sp, sp) : 0));
}

/* The variants of a random subset, their tensors filled (bias normal with -inf keys). */
static void variants(ac_case *c, ac_rng *r)
{
  const uint32_t all[] = {AC_FEAT_WINDOW, AC_FEAT_BOOL_MASK, AC_FEAT_ALIBI, AC_FEAT_BIAS, AC_FEAT_SINKS};
  uint32_t used = 0;
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    if (ac_rng_below(r, 3) == 0) used |= all[k];
  if (!used) return;
  gt_features(c, used, ac_rng_below(r, 2) ? c->p.heads : 1, ac_rng_below(r, 2) ? c->p.heads : 1, -1);
  const ac_problem *p = &c->p;
  if (used & AC_FEAT_WINDOW) c->p.f.win_left = (int64_t)ac_rng_below(r, 9) - 1, c->p.f.win_right = (int64_t)ac_rng_below(r, 4) - 1;
  if (used & AC_FEAT_BOOL_MASK) gt_random_bool_mask(c, r);
  if (used & AC_FEAT_ALIBI)
    for (int64_t h = 0; h < p->heads; h++) c->alibi_slopes[h] = (float)ldexp(1.0, -(int)ac_rng_below(r, 8));
  if (used & AC_FEAT_SINKS)
    for (int64_t h = 0; h < p->heads; h++) c->sinks[h] = ac_rng_below(r, 5) ? (float)ac_rng_normal(r) : -INFINITY;
  for (int64_t x = 0; (used & AC_FEAT_BIAS) && x < ac_feat_tensor_count(p, AC_FT_BIAS); x++)
    ac_store_bits(p->f.bias_dtype, c->bias, (size_t)x,
                  ac_encode_f64(p->f.bias_dtype, ac_rng_below(r, 12) ? ac_rng_normal(r) : -INFINITY));
}

/* A random case: big crosses row tiles (64), key blocks (256) and dk blocks (32). */
static void random_case(ac_case *c, ac_dtype dt, ac_rng *r, int big, int with_variants)
{
  int64_t kvh = 1 + (int64_t)ac_rng_below(r, 2), H = kvh * (1 + (int64_t)ac_rng_below(r, 3));
  int64_t tq = big ? 65 + (int64_t)ac_rng_below(r, 80) : 1 + (int64_t)ac_rng_below(r, 20);
  int64_t tk = big ? 200 + (int64_t)ac_rng_below(r, 120) : 1 + (int64_t)ac_rng_below(r, 24);
  int64_t dk = 1 + (int64_t)ac_rng_below(r, big ? 40 : 12), dv = 1 + (int64_t)ac_rng_below(r, big ? 20 : 8);
  ref_case(c, dt, (ac_mask)ac_rng_below(r, 3), 1 + (int64_t)ac_rng_below(r, 2), H, kvh, tq, tk, dk, dv);
  if (ac_rng_below(r, 10) < 3) {
    static const double sc[] = {0.0, -0.5, 0.3, 2.0, 0.125, 1e-3};
    gt_set_scale(c, sc[ac_rng_below(r, sizeof sc / sizeof sc[0])]);
  }
  fill(c, r, (int)ac_rng_below(r, 4));
  if (with_variants) variants(c, r);
}

static void run(const ac_case *c, int no_blas, int threads, ac_grad_result *r)
{
  ac_grad_opts o;
  ac_err e;
  ac_grad_opts_init(&o);
  o.formats = 0;
  o.no_blas = no_blas;
  o.threads = threads;
  ck_assert_msg(ac_grad_run(c, c->dout, &o, r, &e) == 0, "%s", e.msg);
  ck_assert_msg(r->n_unresolved == 0, AC_SEED_FMT "%lld unresolved", AC_SEED_ARG, (long long)r->n_unresolved);
}

static int64_t elems(const ac_grad_result *r)
{
  return r->dq.nsel * r->dq.d + r->dk.nsel * r->dk.d + r->dv.nsel * r->dv.d + r->dsink.nsel;
}

/* Every element of a and b: the same bits in dt and the same acceptance; with all, the same
 * value, bound and how as well. */
static void same(const ac_grad_result *a, const ac_grad_result *b, ac_dtype dt, int all, const char *what)
{
  const ac_grad_tensor *ta[4] = {&a->dq, &a->dk, &a->dv, &a->dsink}, *tb[4] = {&b->dq, &b->dk, &b->dv, &b->dsink};
  for (int x = 0; x < 4; x++) {
    ck_assert_int_eq(ta[x]->nsel, tb[x]->nsel);
    const ac_dtype f = dt;
    for (int64_t i = 0; i < ta[x]->nsel * ta[x]->d; i++) {
      const ac_grad_elem *ea = &ta[x]->el[i], *eb = &tb[x]->el[i];
      ck_assert_msg(ta[x]->bits[f][i] == tb[x]->bits[f][i] && ea->accept == eb->accept,
                    AC_SEED_FMT "%s: %s element %lld: %#llx (%a +- %a, how %d) against %#llx (%a +- %a, how %d)",
                    AC_SEED_ARG, what, tnames[x], (long long)i, (unsigned long long)ta[x]->bits[f][i],
                    ea->g, ea->g_err, ea->how, (unsigned long long)tb[x]->bits[f][i], eb->g, eb->g_err, eb->how);
      if (all)
        ck_assert_msg(memcmp(ea, eb, sizeof *ea) == 0 || (isnan(ea->g) && isnan(eb->g)), "%s: element %lld differs", what,
                      (long long)i);
    }
  }
}

/* Random cases of dt against the older levels; returns the share the matrix products decided. */
static double against_older(ac_dtype dt, int ncases, int big, int with_variants, uint64_t stream)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), stream + (uint64_t)dt);
  int64_t all = 0, blas = 0;
  if (ac_test_expensive()) ncases *= 10;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ac_err e;
    random_case(&c, dt, &rng, big, with_variants);
    const char *pat = patterns[ac_rng_below(&rng, sizeof patterns / sizeof patterns[0])];
    ck_assert(ac_dout_generate(&c, pat, ac_rng_next(&rng), &e) == 0);
    ac_grad_result a, b;
    run(&c, 0, 1, &a);
    run(&c, 1, 1, &b);
    ck_assert(b.n_blas == 0);
    char what[64];
    snprintf(what, sizeof what, "%s case %d (dO %s)", ac_dtype_name(dt), k, pat);
    same(&a, &b, dt, 0, what);
    all += elems(&a), blas += a.n_blas;
    ac_grad_result_free(&a);
    ac_grad_result_free(&b);
    ac_case_free(&c);
  }
  return (double)blas / (double)all;
}

START_TEST(random_small)
{
  const ac_dtype dts[] = {AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    double s = against_older(dts[k], 40, 0, 1, 0x626c6173);
    ck_assert_msg(s > 0.5, AC_SEED_FMT "%s: the matrix products decided %.3f", AC_SEED_ARG, ac_dtype_name(dts[k]), s);
  }
}
END_TEST

START_TEST(random_tiles)
{
  /* rows past one tile, keys past one block of the dQ products, dk past one block of the scores */
  const ac_dtype dts[] = {AC_F32, AC_BF16, AC_F16};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    double s = against_older(dts[k], 2, 1, k == 1, 0x74696c65);
    ck_assert_msg(s > 0.9, AC_SEED_FMT "%s: the matrix products decided %.3f", AC_SEED_ARG, ac_dtype_name(dts[k]), s);
  }
}
END_TEST

/* c against the older levels; returns the elements the matrix products left. */
static int64_t fallback_case(const ac_case *c, const char *what)
{
  ac_grad_result a, b;
  run(c, 0, 1, &a);
  run(c, 1, 1, &b);
  same(&a, &b, c->p.dtype, 0, what);
  int64_t left = elems(&a) - a.n_blas;
  fprintf(stderr, "tgrad_blas %s: %lld of %lld elements left to the older levels\n", what, (long long)left,
          (long long)elems(&a));
  ac_grad_result_free(&a);
  ac_grad_result_free(&b);
  return left;
}

START_TEST(cancel_exactly_and_nearly)
{
  /* exactly: dO_i = (a_i, a_i, b_i, 0) and V_j = (x_j, -x_j, c, y_j), so dP_ij = b_i c on every key,
   * dS = 0 and dQ = dK = 0 exactly (enclosures around 0: the older levels' exact tests); nearly: gen
   * --grad cancel (dO with its components along V_j - V_0 removed: dP - D cancels to a few bits) */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 21);
  ac_case c;
  ac_err e;
  ref_case(&c, AC_BF16, AC_MASK_CAUSAL, 1, 2, 1, 12, 12, 8, 4);
  fill(&c, &rng, 0);
  const double cv = ac_rng_normal(&rng);
  for (int64_t j = 0; j < 12; j++) {
    const double x = ac_rng_normal(&rng);
    const double v[4] = {x, -x, cv, ac_rng_normal(&rng)};
    for (int64_t t = 0; t < 4; t++) ref_set(&c, 'v', (size_t)(j * 4 + t), v[t]);
  }
  ck_assert(ac_dout_generate(&c, "zeros", 1, &e) == 0);
  for (int64_t i = 0; i < 2 * 12; i++) {
    const double a = ac_rng_normal(&rng), d[4] = {a, a, ac_rng_normal(&rng), 0};
    for (int64_t t = 0; t < 4; t++) gt_dout_set(&c.p, c.dout, (size_t)(i * 4 + t), d[t]);
  }
  /* every dQ (but the first row's: one key, decided as 0 by the level) and dK element falls through */
  ck_assert(fallback_case(&c, "cancel exactly") >= 2 * 11 * 8 + 12 * 8);
  ac_grad_result r;
  run(&c, 0, 1, &r);
  gt_assert_zero_block(&r.dq, 0, 24, 8);
  gt_assert_zero_block(&r.dk, 0, 12, 8);
  ac_grad_result_free(&r);
  ac_case_free(&c);
  for (int k = 0; k < 2; k++) {
    ref_case(&c, k ? AC_F32 : AC_BF16, AC_MASK_NONE, 1, 2, 1, 12, k ? 40 : 6, 8, 8);
    fill(&c, &rng, 0);
    ck_assert(ac_dout_generate(&c, "cancel", 5, &e) == 0);
    fallback_case(&c, k ? "cancel nearly, f32" : "cancel nearly, bf16");
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(exact_zeros)
{
  /* constant V: dS = 0, dQ = dK = 0 exactly (enclosures around 0: the older levels' exact tests);
   * zero dO rows: their dQ */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 22);
  ac_case c;
  ac_err e;
  ref_case(&c, AC_BF16, AC_MASK_CAUSAL, 1, 2, 2, 20, 20, 8, 4);
  fill(&c, &rng, 0);
  for (int64_t x = 0; x < 2 * 20 * 4; x++) ref_set(&c, 'v', (size_t)x, 0.375);
  ck_assert(ac_dout_generate(&c, "normal", 3, &e) == 0);
  ck_assert(fallback_case(&c, "constant V") >= 2 * 19 * 8 + 2 * 20 * 8);
  ac_grad_result r;
  run(&c, 0, 1, &r);
  gt_assert_zero_block(&r.dq, 0, 40, 8);
  gt_assert_zero_block(&r.dk, 0, 40, 8);
  ac_grad_result_free(&r);
  ck_assert(ac_dout_generate(&c, "zero-rows", 3, &e) == 0);
  for (int64_t x = 0; x < 2 * 20 * 4; x++) ref_set(&c, 'v', (size_t)x, ac_rng_normal(&rng));
  fallback_case(&c, "zero dO rows");
  run(&c, 0, 1, &r);
  for (int64_t x = 1; x < 40; x += 2) gt_assert_zero_block(&r.dq, x, x + 1, 8);   /* decided by the level */
  ac_grad_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(tie)
{
  /* scale 0: P = 1/3, dV_j[0] = 1 + 2^-11 exactly, the fp16 tie between 1 and 1 + 2^-10 */
  static const double q[] = {1, 2, 3}, k[] = {1, -1, 0.5}, v[] = {1, 2, 3};
  static const double dO[] = {1 + 0x1p-10, 1 + 0x1p-10, 1 - 0x1p-11};
  ac_case c;
  void *d = gt_int_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 3, 3, 1, 1, q, k, v, dO);
  gt_set_scale(&c, 0);
  c.dout = d;
  ck_assert(fallback_case(&c, "fp16 tie") >= 3);
  ac_grad_result r;
  run(&c, 0, 1, &r);
  for (int64_t j = 0; j < 3; j++) ck_assert_uint_eq(ac_grad_bits(&r.dv, AC_F16, j, 0), ac_encode_f64(AC_F16, 1.0));
  ac_grad_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(subnormal_products)
{
  /* dO near the bottom of binary32 and of bf16: dS K, dS q and P dO land among the subnormals */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 23);
  for (int k = 0; k < 2; k++) {
    ac_case c;
    ac_err e;
    ref_case(&c, k ? AC_BF16 : AC_F32, AC_MASK_CAUSAL, 1, 2, 1, 30, 30, 8, 8);
    fill(&c, &rng, 2);
    ck_assert(ac_dout_generate(&c, k ? "normal:0x1p-129" : "normal:0x1p-140", 4, &e) == 0);
    fallback_case(&c, k ? "bf16 subnormal products" : "f32 subnormal products");
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(nonfinite)
{
  /* a NaN key, an infinite dO element, a +inf bias: their (batch, kv head) goes to the older levels */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 24);
  for (int k = 0; k < 3; k++) {
    ac_case c;
    ac_err e;
    ref_case(&c, AC_F32, AC_MASK_CAUSAL, 2, 2, 2, 12, 12, 4, 4);
    fill(&c, &rng, 0);
    if (k == 2) {
      gt_features(&c, AC_FEAT_BIAS, 2, 2, -1);
      ac_store_bits(AC_F32, c.bias, 7 * 12 + 3, ac_encode_f64(AC_F32, INFINITY));
    }
    ck_assert(ac_dout_generate(&c, "normal", 5, &e) == 0);
    if (k == 0) ref_set(&c, 'k', 3 * 4 + 1, NAN);
    if (k == 1) gt_dout_set(&c.p, c.dout, 5 * 4 + 2, INFINITY);
    ck_assert(fallback_case(&c, k == 0 ? "NaN key" : k == 1 ? "inf dO" : "+inf bias") > 0);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(threads)
{
  /* the same values, bounds and decisions on 1, 2 and 3 workers; the budgets too */
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 25);
  ac_case c;
  ac_err e;
  ref_case(&c, AC_BF16, AC_MASK_CAUSAL, 2, 4, 2, 70, 90, 16, 8);
  fill(&c, &rng, 1);
  gt_features(&c, AC_FEAT_SINKS, 1, 1, -1);
  for (int64_t h = 0; h < 4; h++) c.sinks[h] = (float)ac_rng_normal(&rng);
  ck_assert(ac_dout_generate(&c, "normal", 6, &e) == 0);
  ac_grad_result r1, rn;
  run(&c, 0, 1, &r1);
  const ac_precision *cls = ac_precision_default(AC_BF16);
  ac_grad_budget b1, bn;
  ck_assert(ac_grad_budget_compute_threads(cls, &c, AC_ALIBI_LSE_ABI, 1, &b1, &e) == 0);
  for (int nt = 2; nt <= 3; nt++) {
    run(&c, 0, nt, &rn);
    same(&r1, &rn, AC_BF16, 1, "threads");
    ck_assert(r1.n_blas == rn.n_blas && r1.n_rounded == rn.n_rounded && r1.n_exact == rn.n_exact);
    ac_grad_result_free(&rn);
    ck_assert(ac_grad_budget_compute_threads(cls, &c, AC_ALIBI_LSE_ABI, nt, &bn, &e) == 0);
    for (int t = 0; t < 3; t++) {
      ck_assert(memcmp(b1.w[t], bn.w[t], (size_t)b1.count[t] * sizeof(double)) == 0);
      ck_assert(memcmp(b1.e[t], bn.e[t], (size_t)b1.count[t] * sizeof(double)) == 0);
    }
    ck_assert(memcmp(b1.sink_w, bn.sink_w, 4 * sizeof(double)) == 0);
    ac_grad_budget_free(&bn);
  }
  ac_grad_budget_free(&b1);
  ac_grad_result_free(&r1);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("grad_blas");
  TCase *tc = tcase_create("matrix_products");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, random_small);
  tcase_add_test(tc, random_tiles);
  tcase_add_test(tc, cancel_exactly_and_nearly);
  tcase_add_test(tc, exact_zeros);
  tcase_add_test(tc, tie);
  tcase_add_test(tc, subnormal_products);
  tcase_add_test(tc, nonfinite);
  tcase_add_test(tc, threads);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
