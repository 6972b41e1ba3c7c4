/* tgrad_dropout.c: the backward oracle (oracle/grad.h) under dropout (docs/backward.md §8) against the
 * brute force of tests/tgrad_ref.c (dP_ij = m_ij dO_i·V_j / (1 - p), D = Σ_j P dP, dS = P (dP - D),
 * dV_j = Σ_i m_ij P_ij dO_i / (1 - p)): random cases of every dtype, with the variants and without,
 * drop probabilities whose 1/(1-p) is dyadic and not; then the exact cases: a key every row drops
 * (dV_j = 0 exactly, dK_j not), dropping every key of a row (dS = -P D ... with D = 0: dQ = 0); and the
 * budgets over tiles (src/judge/budget_grad_tile.c) with dropout: the same on 1 and 3 workers, and a key
 * every row drops takes no part whatever its V holds (inf or 0: the same budgets within binary64's
 * rounding of the sums' order). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "budget_grad.h"
#include "dout.h"
#include "precision.h"
#include "testutil.h"
#include "toracle_ref.h"
#include "tgrad_util.h"
#include "dropout.h"
#include "variants.h"

static const double probs[] = {0.5, 0x1.5c28f6p-3, 0.75, 0.3f, 0x1p-30};

/* c with dropout p (the reference generator's mask) and the variants used (a window (2, 0), a softcap of 2,
 * slopes 1/4, normal sinks). */
static void add_dropout(ac_case *c, uint32_t used, double p, ac_rng *rng)
{
  ac_err e;
  ac_features_plain(&c->p);
  c->p.f.used = used | AC_FEAT_DROPOUT;
  c->p.f.win_left = 2, c->p.f.win_right = 0, c->p.f.softcap = used & AC_FEAT_SOFTCAP ? 2 : 0;
  c->p.f.dropout_p = p;
  c->p.f.dropout_seed = ac_rng_next(rng);
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  ac_dropout_fill(&c->p, c->dropout_mask);
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SLOPES); x++) c->alibi_slopes[x] = 0.25f;
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SINKS); x++) c->sinks[x] = (float)ac_rng_normal(rng);
}

START_TEST(random_dropout)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 0x6764726f);
  static const ac_dtype dts[] = {AC_F32, AC_F16, AC_BF16, AC_F64};
  static const uint32_t feats[] = {0, AC_FEAT_WINDOW, AC_FEAT_SINKS, AC_FEAT_ALIBI | AC_FEAT_WINDOW, AC_FEAT_SOFTCAP};
  int ncases = ac_test_expensive() ? 600 : 60;
  gt_tally n = {0, 0, 0, 0};
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dts[k % 4], &rng);
    uint32_t used = feats[ac_rng_below(&rng, 5)];
    add_dropout(&c, used, probs[(size_t)k % (sizeof probs / sizeof probs[0])], &rng);
    gt_random_checked(&c, &rng, &n);
  }
  fprintf(stderr, "random dropout: %lld elements (%lld rounded), %lld dsigma, %lld ambiguous\n", (long long)n.elems,
          (long long)n.rounded, (long long)n.sinks, (long long)n.ambiguous);
  ck_assert(n.ambiguous * 20 < n.elems);
}
END_TEST

START_TEST(dropped_everywhere)
{
  /* causal 3x3, one head: key 2 is seen by row 2 only and dropped there: dV_2 = 0 exactly; row 0 drops
   * its only key: dP = 0 = D, dQ_0 = 0 exactly; p = fl32(0.17) */
  static const double q[] = {0.5, -1, 1, 0.25, -0.5, 2}, k[] = {1, 2, -1, 0.5, 3, 1}, v[] = {1, -2, 0.5};
  static const double dO[] = {1, -0.75, 2};
  ac_case c;
  void *d = gt_int_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 3, 3, 2, 1, q, k, v, dO);
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 3);
  add_dropout(&c, 0, 0x1.5c28f6p-3, &rng);
  memset(c.dropout_mask, 1, 9);
  c.dropout_mask[0] = 0;   /* row 0, key 0 */
  c.dropout_mask[8] = 0;   /* row 2, key 2 */
  ac_grad_result r;
  gt_run(&c, d, NULL, NULL, &r);
  gt_assert_exact_zero(&r.dv, 2, 0);
  gt_assert_exact_zero(&r.dq, 0, 0);
  gt_assert_exact_zero(&r.dq, 0, 1);
  ck_assert(!(ac_grad_at(&r.dk, 2, 0)->g == 0));   /* dS_22 = P (0 - D) is not 0 */
  gt_brute_free(&c, d, &r, GT_PREC);
}
END_TEST

/* Every W and E of b within relative 1e-12 of a's, all finite. */
static void budgets_close(const ac_grad_budget *a, const ac_grad_budget *b)
{
  for (int t = 0; t < 3; t++)
    for (int64_t x = 0; x < a->count[t]; x++) {
      const double w[2][2] = {{a->w[t][x], b->w[t][x]}, {a->e[t][x], b->e[t][x]}};
      for (int k = 0; k < 2; k++) {
        ck_assert_msg(isfinite(w[k][0]) && isfinite(w[k][1]), "tensor %d element %lld: %g %g", t, (long long)x, w[k][0],
                      w[k][1]);
        ck_assert_msg(fabs(w[k][0] - w[k][1]) <= 1e-12 * fabs(w[k][0]), "tensor %d element %lld: %.17g %.17g", t,
                      (long long)x, w[k][0], w[k][1]);
      }
    }
}

START_TEST(budgets)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 0x62756467);
  ac_case c;
  ac_err e;
  /* two query tiles of rows (70 > 64), GQA, causal bottom-right over 90 keys */
  ref_case(&c, AC_BF16, AC_MASK_CAUSAL_BR, 2, 4, 2, 70, 90, 16, 8);
  ac_counts n;
  ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
  const int64_t cnt[3] = {n.q, n.k, n.v};
  for (int w = 0; w < 3; w++)
    for (int64_t x = 0; x < cnt[w]; x++) ref_set(&c, "qkv"[w], (size_t)x, ac_rng_normal(&rng));
  add_dropout(&c, 0, 0x1.5c28f6p-3, &rng);
  ck_assert(ac_dout_generate(&c, "normal", 6, &e) == 0);
  /* key 5 of batch 1, kv head 0 dropped by every row of its two query heads */
  for (int64_t h = 0; h < 2; h++)
    for (int64_t i = 0; i < 70; i++) c.dropout_mask[((size_t)((1 * 4 + h) * 70 + i)) * 90 + 5] = 0;
  const ac_precision *cls = ac_precision_default(AC_BF16);
  ac_grad_budget b1, b3, bi;
  ck_assert(ac_grad_budget_compute_threads(cls, &c, AC_ALIBI_LSE_ABI, 1, &b1, &e) == 0);
  ck_assert(ac_grad_budget_compute_threads(cls, &c, AC_ALIBI_LSE_ABI, 3, &b3, &e) == 0);
  for (int t = 0; t < 3; t++) {
    ck_assert(memcmp(b1.w[t], b3.w[t], (size_t)b1.count[t] * sizeof(double)) == 0);
    ck_assert(memcmp(b1.e[t], b3.e[t], (size_t)b1.count[t] * sizeof(double)) == 0);
  }
  /* the dropped key's V: 0, then +inf (the sums over visible keys one by one then) */
  for (int64_t t = 0; t < 8; t++) ref_set(&c, 'v', ac_vidx(&c.p, 1, 0, 5, t), 0);
  ac_grad_budget_free(&b3);
  ck_assert(ac_grad_budget_compute_threads(cls, &c, AC_ALIBI_LSE_ABI, 1, &b3, &e) == 0);
  for (int64_t t = 0; t < 8; t++) ref_set(&c, 'v', ac_vidx(&c.p, 1, 0, 5, t), INFINITY);
  ck_assert(ac_grad_budget_compute_threads(cls, &c, AC_ALIBI_LSE_ABI, 1, &bi, &e) == 0);
  budgets_close(&b3, &bi);
  ac_grad_budget_free(&b1);
  ac_grad_budget_free(&b3);
  ac_grad_budget_free(&bi);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("grad_dropout");
  TCase *tc = tcase_create("against_the_brute_force");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, random_dropout);
  tcase_add_test(tc, dropped_everywhere);
  tcase_add_test(tc, budgets);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
