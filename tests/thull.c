/* thull.c: judgement that neither flags correct kernels nor accepts anything, on real oracle
 * results and kernels run through the harness: the LSE of a cuBLAS-style composite computed
 * from its fp16-stored scores (the storage rounding is in the LSE bound of the classes that
 * store scores, and only there; an LSE returned in fp16 still fails); the convex-hull cap of W (a row with one visible key keeps its
 * weight 1 however large its score, so a masked key winning through a finite -1e4 mask fails
 * where the uncapped bound let it pass); and WEAK-CLASS for a class whose bound is vacuous
 * (a bf16 P.V accumulator at long context). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "budget.h"
#include "compare.h"
#include "harness.h"

/* When set, the kernel's LSE is rounded to fp16 before judging (a kernel returning its LSE in
 * the input dtype: a defect). */
static int lse_in_f16;

/* Runs kernel kname on c and judges it under class cls (NULL: the kernel's). */
static void run_judge(const char *kname, const ac_case *c, const char *cls, ac_oracle_result *r, ac_report *rep)
{
  ac_kernel **list = NULL;
  int n = 0;
  ac_err e;
  ck_assert_msg(ac_kernel_resolve(kname, &list, &n, &e) == 0 && n == 1, "%s", e.msg);
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ro.want_lse = 1;
  ac_run_result rr;
  ck_assert_msg(ac_harness_run(list[0], c, &ro, &rr, &e) == 0 && rr.status == AC_RUN_OK, "%s: %s", kname, rr.msg);
  if (lse_in_f16)
    for (int64_t x = 0; x < rr.lse_count; x++) rr.lse[x] = (float)ac_decode(AC_F16, ac_encode_f64(AC_F16, rr.lse[x]));
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  o.prec = ac_precision_find(cls ? cls : list[0]->precision);
  ck_assert_ptr_nonnull(o.prec);
  ac_report_init(rep, &o);
  ck_assert_msg(ac_compare_run(c, r, &rr, &o, rep, &e) == 0, "%s", e.msg);
  ac_run_result_free(&rr);
  ac_kernel_list_free(list, n);
}

/* q, k normal(0, sq^2); V normal(0, 1), or 1 + normal(0, 1/16) when vpos (an accumulator grows with T) */
static void normal_case(ac_case *c, ac_dtype t, ac_mask m, int64_t tq, int64_t tk, int64_t dk, double sq, int vpos,
                        ac_rng *g)
{
  ref_case(c, t, m, 1, 1, 1, tq, tk, dk, dk);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, sq * ac_rng_normal(g));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, sq * ac_rng_normal(g));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, vpos ? 1 + 0.25 * ac_rng_normal(g) : ac_rng_normal(g));
}

START_TEST(cublas_lse_from_stored_scores)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 41);
  /* one key, d_k = 1: LSE = s exactly, the kernel writes s rounded to fp16 */
  ac_case c;
  ref_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 1, 1, 1, 1, 1);
  ref_set(&c, 'q', 0, 0x1.004p0);   /* s = (1 + 2^-10)(1 + 3 2^-10): not an fp16 value */
  ref_set(&c, 'k', 0, 0x1.00cp0);
  ref_set(&c, 'v', 0, 1);
  ac_oracle_result r;
  ref_oracle(&c, 0, 1, &r);
  ac_report rep;
  run_judge("cublas-style-f16", &c, NULL, &r, &rep);
  ck_assert_msg(rep.kinds == 0 && rep.lse_max_err > 0 && rep.lse_max_err_w <= 1, "kinds %x lse err/W %g %s", rep.kinds,
                rep.lse_max_err_w, rep.note);
  /* the class without score storage (FlashAttention-2 keeps scores in binary32) rejects it */
  run_judge("cublas-style-f16", &c, "fp16-fa2", &r, &rep);
  ck_assert_msg(rep.lse_fail == 1 && rep.lse_max_err_w > 1.5, "lse err/W %g", rep.lse_max_err_w);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  /* an LSE returned in fp16 (half an ulp of about 2^-9 at LSE ~ 5) is still outside the bound */
  ac_rng g2;
  ac_rng_init(&g2, ac_test_seed(), 42);
  normal_case(&c, AC_F16, AC_MASK_NONE, 32, 200, 32, 1, 0, &g2);
  ref_oracle(&c, 0, 1, &r);
  run_judge("cublas-style-f16", &c, NULL, &r, &rep);
  ck_assert_msg(rep.kinds == 0, "kinds %x %s", rep.kinds, rep.note);
  lse_in_f16 = 1;
  run_judge("cublas-style-f16", &c, NULL, &r, &rep);
  lse_in_f16 = 0;
  ck_assert_msg(rep.lse_fail > 0, AC_SEED_FMT "LSE in fp16: lse err/W %g", AC_SEED_ARG, rep.lse_max_err_w);
  fprintf(stderr, "cublas-style-f16 with its LSE in fp16: lse err/W %.3g (%lld of 32 rows fail)\n", rep.lse_max_err_w,
          (long long)rep.lse_fail);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  /* random rows, plain and with logits of about 50: no FAIL, no SUSPECT in either dtype */
  const char *kn[2] = {"cublas-style-f16", "cublas-style-bf16"};
  ac_dtype dt[2] = {AC_F16, AC_BF16};
  for (int k = 0; k < 2; k++)
    for (int big = 0; big < 2; big++) {
      normal_case(&c, dt[k], AC_MASK_CAUSAL_BR, 12, 40, 32, big ? 2.6 : 1, 0, &g);
      ref_oracle(&c, 0, 1, &r);
      run_judge(kn[k], &c, NULL, &r, &rep);
      ck_assert_msg(!(rep.kinds & ((1u << AC_V_FAIL) | (1u << AC_V_SUSPECT))) && rep.lse_max_err_w <= 1,
                    AC_SEED_FMT "%s big %d: kinds %x err/W %g lse err/W %g %s", AC_SEED_ARG, kn[k], big, rep.kinds,
                    rep.max_err_w, rep.lse_max_err_w, rep.note);
      ac_oracle_result_free(&r);
      ac_case_free(&c);
    }
}
END_TEST

/* causal, 2 rows, 2 keys, d = 1: row 0 sees key 0 only, at score -3e4 (all in fp16's range),
 * the key it may not see scores 0 */
static void cliff_case(ac_case *c)
{
  ref_case(c, AC_F16, AC_MASK_CAUSAL, 1, 1, 1, 2, 2, 1, 2);
  ref_set(c, 'q', 0, 200);
  ref_set(c, 'q', 1, 200);
  ref_set(c, 'k', 0, -150);
  ref_set(c, 'k', 1, 0);
  ref_set(c, 'v', 0, 1);
  ref_set(c, 'v', 1, -0.5);
  ref_set(c, 'v', 2, 0.25);
  ref_set(c, 'v', 3, 2);
}

START_TEST(hull_cap_single_key)
{
  ac_case c;
  cliff_case(&c);
  ac_oracle_result r;
  ref_oracle(&c, 0, 1, &r);
  const ac_precision *cls = ac_precision_find("fp16-cublas");
  /* row 0: one visible key of weight 1; without the cap the score error e^{2Δ} made W huge. What
   * remains is P's storage and a split-KV merge through LSEs of about -3e4 rounded in binary32 */
  ac_bound b, old;
  ac_oracle_elem el = r.elems[0];
  ac_budget_elem(cls, &c.p, AC_F16, &r.rows[0], &el, r.mu, r.nmu, &b);
  el.M = INFINITY;
  ac_budget_elem(cls, &c.p, AC_F16, &r.rows[0], &el, r.mu, r.nmu, &old);
  ck_assert_msg(r.elems[0].M == 0 && b.W < 0x1p-6 && old.W > 10, "M %g W %g, uncapped %g", r.elems[0].M, b.W, old.W);
  ac_report rep;
  run_judge("cublas-style-f16", &c, NULL, &r, &rep);
  ck_assert_msg(rep.kinds == 0, "kinds %x %s", rep.kinds, rep.note);
  /* the masked key wins through the -1e4 mask: o[0] = V_1, far outside the hull {V_0} */
  run_judge("mutant-cublas-sentinel", &c, NULL, &r, &rep);
  ck_assert_msg((rep.kinds & (1u << AC_V_FAIL)) && rep.worst.i == 0 && rep.worst.err >= 0.5,
                "kinds %x worst row %lld err %g", rep.kinds, (long long)rep.worst.i, rep.worst.err);
  /* which the uncapped bound accepted */
  ck_assert(rep.worst.err < old.W);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

/* The cap holds for correct kernels of every style where it binds: large logits, many keys */
START_TEST(hull_cap_correct_kernels)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 43);
  static const struct { const char *k; ac_dtype t; } ks[] = {
    {"cublas-style-f16", AC_F16}, {"flash-f16", AC_F16}, {"naive-bf16", AC_BF16}, {"flash-bf16", AC_BF16},
    {"splitkv-fa-f32", AC_F32}, {"flash-e4m3", AC_E4M3},
  };
  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
    for (int big = 0; big < 3; big++) {
      ac_case c;
      normal_case(&c, ks[k].t, AC_MASK_CAUSAL, 24, 24, 16, big == 0 ? 1 : big == 1 ? 8 : 30, 0, &g);
      ac_oracle_result r;
      ref_oracle(&c, 0, 1, &r);
      ac_report rep;
      run_judge(ks[k].k, &c, NULL, &r, &rep);
      ck_assert_msg(!(rep.kinds & ((1u << AC_V_FAIL) | (1u << AC_V_SUSPECT))), AC_SEED_FMT "%s big %d: kinds %x %s",
                    AC_SEED_ARG, ks[k].k, big, rep.kinds, rep.note);
      ac_oracle_result_free(&r);
      ac_case_free(&c);
    }
}
END_TEST

START_TEST(weak_class_long_context)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 47);
  ac_case c;
  normal_case(&c, AC_BF16, AC_MASK_NONE, 2, 600, 16, 0.5, 1, &g);
  ac_oracle_result r;
  ref_oracle(&c, 0, 1, &r);
  ac_report rep;
  /* bf16-acc16 cannot fail past 256 keys; the standard class bf16-fa2 sees the stagnated sum */
  run_judge("mutant-bf16-acc16-pv", &c, NULL, &r, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_WEAK_CLASS) && rep.n_weak > 0 && rep.weak_err_w_std > 1
                && !strcmp(rep.std_name, "bf16-fa2"), "kinds %x %s", rep.kinds, rep.note);
  run_judge("mutant-bf16-acc16-pv", &c, "bf16-fa2", &r, &rep);
  ck_assert(rep.kinds & (1u << AC_V_FAIL));
  /* a kernel of the standard class is judged once */
  run_judge("flash-bf16", &c, NULL, &r, &rep);
  ck_assert_msg(rep.kinds == 0 && rep.n_weak == 0 && rep.std_name == NULL, "kinds %x %s", rep.kinds, rep.note);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("hull");
  TCase *tc = tcase_create("hull");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, cublas_lse_from_stored_scores);
  tcase_add_test(tc, hull_cap_single_key);
  tcase_add_test(tc, hull_cap_correct_kernels);
  tcase_add_test(tc, weak_class_long_context);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
