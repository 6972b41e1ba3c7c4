/* tscaled.c: budgets of kernels that scale Q and K in the input dtype (PyTorch's math path,
 * naive-scaleq-f16/-bf16): within their class (fp16-math, bf16-math: scaled_in), beyond
 * FlashAttention-2's classes, which do not carry the term; E never above W (short rows, every
 * class); and the metamorphic tolerance (Q×2, scale/2) covers the underflow of scaled Q and
 * K (qk_l1 of both runs) for a correct kernel on underflowing data. Kernels run through the
 * harness, judged against real oracle results. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "budget.h"
#include "compare.h"
#include "harness.h"
#include "fuzz.h"

static ac_kernel *kernel_one(const char *kname, ac_kernel ***list, int *n)
{
  ac_err e;
  ck_assert_msg(ac_kernel_resolve(kname, list, n, &e) == 0 && *n == 1, "%s", e.msg);
  return (*list)[0];
}

/* Runs kernel kname on c (the result in rr) and judges it under class cls (NULL: the kernel's). */
static void run_judge(const char *kname, const ac_case *c, const char *cls, ac_oracle_result *r, ac_report *rep)
{
  ac_kernel **list = NULL;
  int n = 0;
  ac_kernel *k = kernel_one(kname, &list, &n);
  ac_err e;
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ro.want_lse = 1;
  ac_run_result rr;
  ck_assert_msg(ac_harness_run(k, c, &ro, &rr, &e) == 0 && rr.status == AC_RUN_OK, "%s: %s", kname, rr.msg);
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  o.prec = ac_precision_find(cls ? cls : k->precision);
  ck_assert_ptr_nonnull(o.prec);
  ac_report_init(rep, &o);
  ck_assert_msg(ac_compare_run(c, r, &rr, &o, rep, &e) == 0, "%s", e.msg);
  ac_run_result_free(&rr);
  ac_kernel_list_free(list, n);
}

/* q, k normal(0, sq^2) (times kq for k), V normal(0, 1) */
static void normal_case(ac_case *c, ac_dtype t, ac_mask m, int64_t tq, int64_t tk, int64_t dk, double sq, ac_rng *g)
{
  ref_case(c, t, m, 1, 1, 1, tq, tk, dk, dk);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, sq * ac_rng_normal(g));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, sq * ac_rng_normal(g));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(g));
}

/* d_k = 128, default scale 1/sqrt(128): sqrt of it is no power of two, every scaled element is
 * rounded. The declared classes hold the kernels; FlashAttention-2's, which do not carry the
 * term, do not (at larger logits). */
START_TEST(scaled_operands_within_class)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 61);
  static const struct { const char *k, *base; ac_dtype t; } ks[] = {
    {"naive-scaleq-f16", "fp16-fa2", AC_F16}, {"naive-scaleq-bf16", "bf16-fa2", AC_BF16}};
  for (size_t k = 0; k < 2; k++)
    for (int big = 0; big < 2; big++) {
      ac_case c;
      normal_case(&c, ks[k].t, AC_MASK_CAUSAL, 24, 24, 128, big ? 3 : 1, &g);
      ac_oracle_result r;
      ref_oracle(&c, 0, 1, &r);
      ac_report rep;
      run_judge(ks[k].k, &c, NULL, &r, &rep);
      ck_assert_msg(!(rep.kinds & ((1u << AC_V_FAIL) | (1u << AC_V_SUSPECT))), AC_SEED_FMT "%s big %d: kinds %x %s",
                    AC_SEED_ARG, ks[k].k, big, rep.kinds, rep.note);
      if (big) {
        run_judge(ks[k].k, &c, ks[k].base, &r, &rep);
        ck_assert_msg(rep.kinds & (1u << AC_V_FAIL), AC_SEED_FMT "%s under %s: kinds %x", AC_SEED_ARG, ks[k].k,
                      ks[k].base, rep.kinds);
      }
      ac_oracle_result_free(&r);
      ac_case_free(&c);
    }
}
END_TEST

/* E (typical) <= W (worst) for every element and LSE of every class, on rows of 1 to 20 keys */
START_TEST(e_never_above_w)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 67);
  size_t nc;
  const ac_precision *tab = ac_precision_table(&nc);
  for (int big = 0; big < 2; big++) {
    ac_case c;
    normal_case(&c, AC_F32, AC_MASK_CAUSAL, 20, 20, 8, big ? 3 : 0.5, &g);
    ac_oracle_result r;
    ref_oracle(&c, 0, 1, &r);
    for (size_t k = 0; k < nc; k++)
      for (int64_t row = 0; row < r.nrows; row++) {
        ac_bound b;
        for (int64_t d = 0; d < c.p.dv; d++) {
          ac_budget_elem(&tab[k], &c.p, AC_F32, &r.rows[row], &r.elems[row * c.p.dv + d], r.mu, r.nmu, &b);
          ck_assert_msg(b.E <= b.W && b.E_terms <= b.W_terms, "%s row %lld (T %lld): E %g > W %g", tab[k].name,
                        (long long)row, (long long)r.rows[row].visible, b.E, b.W);
        }
        ac_budget_lse(&tab[k], &c.p, &r.rows[row], &b);
        ck_assert_msg(b.E <= b.W, "%s LSE row %lld: E %g > W %g", tab[k].name, (long long)row, b.E, b.W);
      }
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
}
END_TEST

/* Q of subnormal size against large K: Q scaled by sqrt|c| underflows in fp16, an error the
 * class charges through qk_l1 (eta of scaled_in). Q×2 with scale/2 changes which elements
 * underflow; the two runs of the correct kernel agree within the metamorphic tolerance. One
 * batch and head, causal: Q×2 is the only transformation that applies. */
START_TEST(metamorphic_scaled_underflow)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 71);
  ac_case c;
  ref_case(&c, AC_F16, AC_MASK_CAUSAL, 1, 1, 1, 16, 16, 64, 16);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
  /* q_t = ±7·2^-24 (fp16 subnormal): q_t sqrt(1/8) = 2.47·2^-24 rounds to 2·2^-24, while 2q_t
   * sqrt(1/16) = 3.5·2^-24 rounds to 4·2^-24; k_jt = ±49152 with q_t's sign times a sign per
   * key, so that the errors of every t add up (about 0.05 on each score between the runs) */
  int sg[64];
  for (int t = 0; t < 64; t++) sg[t] = ac_rng_next(&g) & 1 ? -1 : 1;
  for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, sg[x % 64] * 7 * 0x1p-24);
  for (int64_t j = 0; j < 16; j++) {
    int kj = ac_rng_next(&g) & 1 ? -1 : 1;
    for (int64_t t = 0; t < 64; t++) ref_set(&c, 'k', (size_t)(j * 64 + t), sg[t] * kj * 49152.0);
  }
  for (int64_t x = 0; x < n.v; x++) ref_set(&c, 'v', (size_t)x, ac_rng_next(&g) & 1 ? -1 : 1);
  ac_kernel **list = NULL;
  int nk = 0;
  ac_kernel *k = kernel_one("naive-scaleq-f16", &list, &nk);
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ac_run_result ra;
  ck_assert(ac_harness_run(k, &c, &ro, &ra, &e) == 0 && ra.status == AC_RUN_OK);
  ac_meta_result m;
  ck_assert_msg(ac_meta_check(k, &ro, &c, ac_precision_find("fp16-math"), &ra, &m, &e) == 0, "%s", e.msg);
  ck_assert_msg(m.checked && strstr(m.transform, "Q*2"), "transform %s", m.transform);
  ck_assert_msg(!m.bad, AC_SEED_FMT "METAMORPHIC on a correct kernel: %lld bad, worst ratio %g (diff %g, tol %g)",
                AC_SEED_ARG, (long long)m.n_bad, m.worst_ratio, m.diff, m.tol);
  ck_assert_msg(m.worst_ratio > 0, "the two runs agree exactly: the case does not exercise the underflow");
  ac_run_result_free(&ra);
  ac_kernel_list_free(list, nk);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("scaled");
  TCase *tc = tcase_create("scaled");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, scaled_operands_within_class);
  tcase_add_test(tc, e_never_above_w);
  tcase_add_test(tc, metamorphic_scaled_underflow);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
