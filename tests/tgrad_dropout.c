/* tgrad_dropout.c: the backward oracle (oracle/grad.h) under dropout (docs/backward.md §8) against the
 * brute force of tests/tgrad_ref.c (dP_ij = m_ij dO_i·V_j / (1 - p), D = Σ_j P dP, dS = P (dP - D),
 * dV_j = Σ_i m_ij P_ij dO_i / (1 - p)): random cases of every dtype, with the variants and without,
 * drop probabilities whose 1/(1-p) is dyadic and not; then the exact cases: a key every row drops
 * (dV_j = 0 exactly, dK_j not), dropping every key of a row (dS = -P D ... with D = 0: dQ = 0). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
  Suite *s = suite_create("grad_dropout");
  TCase *tc = tcase_create("against_the_brute_force");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, random_dropout);
  tcase_add_test(tc, dropped_everywhere);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
