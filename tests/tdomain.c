/* tdomain.c: the domain of binary32 kernels. An online softmax adds w_j V_j with w_j <= 1
 * relative to the running maximum, so its partial sums can reach Σ|V_j| before a later key
 * rescales them: V near FLT_MAX on early keys overflows a correct tiled kernel although the
 * final weights of those keys are e^-20. Such a case is OUT-OF-DOMAIN, not a FAIL; the same
 * case with moderate V is judged (and the kernel passes). */
#include "config.h"
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "compare.h"
#include "judge.h"
#include "harness.h"
#include "oracle.h"
#include "variants.h"

static void build(ac_case *c, double big)
{
  ac_case_init(c);
  c->p.dtype = AC_F32;
  c->p.mask = AC_MASK_NONE;
  c->p.batch = c->p.heads = c->p.kv_heads = 1;
  c->p.tq = 1;
  c->p.tk = 3;
  c->p.dk = c->p.dv = 1;
  c->p.scale_is_default = 1;
  ac_err e;
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "%s", e.msg);
  static const double k[3] = {0, 0, 20};
  double v[3] = {big, big, 1};
  ac_store_bits(AC_F32, c->q, 0, ac_encode_f64(AC_F32, 1));
  for (int j = 0; j < 3; j++) {
    ac_store_bits(AC_F32, c->k, (size_t)j, ac_encode_f64(AC_F32, k[j]));
    ac_store_bits(AC_F32, c->v, (size_t)j, ac_encode_f64(AC_F32, v[j]));
  }
}

/* The exact answer of c on one thread. */
static int oracle1(const ac_case *c, ac_oracle_result *r, ac_err *e)
{
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = 1;
  return ac_oracle_run(c, &oo, r, e);
}

static uint32_t judge(const ac_case *c)
{
  ac_oracle_result r;
  ac_err e;
  ck_assert_msg(oracle1(c, &r, &e) == 0, "%s", e.msg);
  ac_kernel **list = NULL;
  int n = 0;
  ck_assert_msg(ac_kernel_resolve("flash-f32", &list, &n, &e) == 0, "%s", e.msg);
  ac_judge_opts jo;
  ac_judge_opts_init(&jo);
  ac_report rep;
  ck_assert_msg(ac_judge_kernel(list[0], c, &r, &jo, &rep, &e) == 0, "%s", e.msg);
  for (int i = 0; i < n; i++) ac_kernel_free(list[i]);
  free(list);
  ac_oracle_result_free(&r);
  return rep.kinds;
}

START_TEST(online_partial_sums_beyond_binary32_are_out_of_domain)
{
  ac_case c;
  build(&c, 0x1.fffffep127);
  uint32_t kinds = judge(&c);
  ck_assert_msg(kinds & (1u << AC_V_OUT_OF_DOMAIN), "kinds 0x%x: want OUT-OF-DOMAIN", kinds);
  ck_assert_msg(!(kinds & (1u << AC_V_FAIL)), "kinds 0x%x: a correct kernel must not FAIL here", kinds);
  ac_case_free(&c);
}
END_TEST

START_TEST(moderate_values_stay_in_domain)
{
  ac_case c;
  build(&c, 0x1p100);
  uint32_t kinds = judge(&c);
  ck_assert_msg(!(kinds & (1u << AC_V_OUT_OF_DOMAIN)), "kinds 0x%x: in domain", kinds);
  ck_assert_msg(!(kinds & (1u << AC_V_FAIL)), "kinds 0x%x: the correct kernel passes", kinds);
  ac_case_free(&c);
}
END_TEST

/* One query, five keys: K = (0, 0, 0, 0, 20), V = (1, 1, big, big, 1); the row sees keys 2 to
 * 4 only, through a window (left 2, right 0, bottom-right) or a boolean mask (0, 0, 1, 1, 1):
 * not a prefix of the keys. An online softmax in key order adds big + big before key 4
 * rescales them, beyond binary32 when big is near FLT_MAX: out of the domain, although the
 * first three keys (as many as the row sees) sum to 2 + big only. */
static void build_suffix(ac_case *c, double big, int by_bool_mask)
{
  ac_case_init(c);
  c->p.dtype = AC_F32;
  c->p.mask = AC_MASK_NONE;
  c->p.batch = c->p.heads = c->p.kv_heads = 1;
  c->p.tq = 1;
  c->p.tk = 5;
  c->p.dk = c->p.dv = 1;
  c->p.scale_is_default = 1;
  ac_features_plain(&c->p);
  if (by_bool_mask) c->p.f.used = AC_FEAT_BOOL_MASK;
  else c->p.f.used = AC_FEAT_WINDOW, c->p.f.win_left = 2, c->p.f.win_right = 0;
  ac_err e;
  ck_assert_msg(ac_case_alloc(c, &e) == 0 && ac_features_alloc(c, &e) == 0, "%s", e.msg);
  const double k[5] = {0, 0, 0, 0, 20}, v[5] = {1, 1, big, big, 1};
  ac_store_bits(AC_F32, c->q, 0, ac_encode_f64(AC_F32, 1));
  for (int j = 0; j < 5; j++) {
    ac_store_bits(AC_F32, c->k, (size_t)j, ac_encode_f64(AC_F32, k[j]));
    ac_store_bits(AC_F32, c->v, (size_t)j, ac_encode_f64(AC_F32, v[j]));
    if (by_bool_mask) c->bool_mask[j] = j >= 2;
  }
}

START_TEST(online_sums_follow_the_keys_a_row_sees)
{
  for (int bm = 0; bm < 2; bm++) {
    ac_case c;
    build_suffix(&c, 0x1.fffffep127, bm);
    uint32_t kinds = judge(&c);
    ck_assert_msg(kinds & (1u << AC_V_OUT_OF_DOMAIN), "%s: kinds 0x%x: want OUT-OF-DOMAIN", bm ? "bool mask" : "window", kinds);
    ck_assert_msg(!(kinds & (1u << AC_V_FAIL)), "%s: kinds 0x%x: a correct kernel must not FAIL", bm ? "bool mask" : "window", kinds);
    ac_case_free(&c);
    build_suffix(&c, 0x1p100, bm);
    kinds = judge(&c);
    ck_assert_msg(kinds == 0, "%s: kinds 0x%x: in domain and passing", bm ? "bool mask" : "window", kinds);
    ac_case_free(&c);
  }
}
END_TEST

/* A NaN in K or V at a key the window or the boolean mask hides (here key 0, inside any
 * prefix of three keys) reaches the row only as a MASKED-LEAK; one at a key the row sees
 * is not masked. */
START_TEST(masked_nonfinite_follows_the_keys_a_row_sees)
{
  for (int bm = 0; bm < 2; bm++) {
    ac_case c;
    build_suffix(&c, 1, bm);
    uint8_t krow, velem;
    ac_store_bits(AC_F32, c.k, 0, ac_nan_bits(AC_F32));
    ac_masked_nonfinite(&c, &krow, &velem);
    ck_assert_msg(krow == 1 && velem == 1, "%s: K NaN at a hidden key: krow %d velem %d", bm ? "bool mask" : "window", krow, velem);
    ac_store_bits(AC_F32, c.k, 0, ac_encode_f64(AC_F32, 0));
    ac_store_bits(AC_F32, c.v, 0, ac_nan_bits(AC_F32));
    ac_masked_nonfinite(&c, &krow, &velem);
    ck_assert_msg(krow == 0 && velem == 1, "%s: V NaN at a hidden key: krow %d velem %d", bm ? "bool mask" : "window", krow, velem);
    ac_store_bits(AC_F32, c.v, 0, ac_encode_f64(AC_F32, 1));
    ac_store_bits(AC_F32, c.k, 4, ac_nan_bits(AC_F32));
    ac_masked_nonfinite(&c, &krow, &velem);
    ck_assert_msg(krow == 0 && velem == 0, "%s: K NaN at a visible key: krow %d velem %d", bm ? "bool mask" : "window", krow, velem);
    ac_case_free(&c);
  }
}
END_TEST

static int oracle_calls;

static int count_oracle(void *ctx, const ac_case *c, ac_oracle_result *out, ac_err *e)
{
  (void)ctx;
  oracle_calls++;
  return oracle1(c, out, e);
}

/* The judge's pipeline: the oracle is fetched once, after a run with outputs, never for a run
 * that is refused; repeat runs of a deterministic kernel agree. */
/* A q.k of cancelling products: the exact q.k is 256, but a partial sum of its d_k products
 * reaches 65536, beyond binary16. A correct kernel whose score accumulator is binary16 (part
 * qk=f16: fp16-acc16) gives inf, then NaN: OUT-OF-DOMAIN under that class, never FAIL; a
 * binary32 accumulator (fp16-fa2) must get it right, so NaN FAILs there; products that do not
 * reach 65504 stay in the domain. */
static uint32_t judge_nan_f16(double x, const char *cls)
{
  ac_case c;
  ac_case_init(&c);
  c.p.dtype = AC_F16;
  c.p.mask = AC_MASK_NONE;
  c.p.batch = c.p.heads = c.p.kv_heads = 1;
  c.p.tq = c.p.tk = 1;
  c.p.dk = 2;
  c.p.dv = 1;
  c.p.scale_is_default = 1;
  ac_err e;
  ck_assert_msg(ac_case_alloc(&c, &e) == 0, "%s", e.msg);
  const double q[2] = {x, x}, k[2] = {x, -(x - 1)};
  for (int d = 0; d < 2; d++) {
    ac_store_bits(AC_F16, c.q, (size_t)d, ac_encode_f64(AC_F16, q[d]));
    ac_store_bits(AC_F16, c.k, (size_t)d, ac_encode_f64(AC_F16, k[d]));
  }
  ac_store_bits(AC_F16, c.v, 0, ac_encode_f64(AC_F16, 1));
  ac_oracle_result r;
  ck_assert_msg(oracle1(&c, &r, &e) == 0, "%s", e.msg);
  ac_compare_opts co;
  ac_compare_opts_init(&co);
  co.prec = ac_precision_find(cls);
  ck_assert_ptr_nonnull(co.prec);
  uint16_t o = 0x7e00;   /* NaN */
  ac_report rep;
  ac_report_init(&rep, &co);
  ck_assert_msg(ac_compare_outputs(&c, &r, &o, NULL, NULL, &co, &rep, &e) == 0, "%s", e.msg);
  if (rep.kinds & (1u << AC_V_OUT_OF_DOMAIN)) ck_assert_msg(strstr(rep.note, "partial sums of a q.k") != NULL, "%s", rep.note);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  return rep.kinds;
}

START_TEST(qk_partial_sums_beyond_the_score_accumulator_are_out_of_domain)
{
  uint32_t acc16 = judge_nan_f16(256, "fp16-acc16"), fa2 = judge_nan_f16(256, "fp16-fa2");
  ck_assert_msg((acc16 & (1u << AC_V_OUT_OF_DOMAIN)) && !(acc16 & (1u << AC_V_FAIL)), "fp16-acc16: kinds %#x", acc16);
  ck_assert_msg((fa2 & (1u << AC_V_FAIL)) && !(fa2 & (1u << AC_V_OUT_OF_DOMAIN)), "fp16-fa2: kinds %#x", fa2);
  uint32_t small = judge_nan_f16(16, "fp16-acc16");
  ck_assert_msg((small & (1u << AC_V_FAIL)) && !(small & (1u << AC_V_OUT_OF_DOMAIN)), "q.k products within f16: kinds %#x", small);
}
END_TEST

/* MASKED-LEAK only where the row's own inputs leave a defined value: row 1 sees V = +inf (its
 * exact o is +inf in column 0, 2.5 in column 1) and a masked key holds NaN in K. A kernel
 * writing -inf in column 0 is wrong whatever the masked key does (FAIL); NaN in column 1, where
 * the visible inputs define 2.5, is the masked NaN's reach (MASKED-LEAK). */
START_TEST(a_visible_nonfinite_outcome_judged_wrong_is_not_a_masked_leak)
{
  ac_case c;
  ac_case_init(&c);
  c.p.dtype = AC_F32;
  c.p.mask = AC_MASK_CAUSAL;
  c.p.batch = c.p.heads = c.p.kv_heads = 1;
  c.p.tq = 2;
  c.p.tk = 3;
  c.p.dk = 1;
  c.p.dv = 2;
  c.p.scale_is_default = 1;
  ac_err e;
  ck_assert_msg(ac_case_alloc(&c, &e) == 0, "%s", e.msg);
  const double k[3] = {0, 0, NAN}, v[3][2] = {{1, 2}, {INFINITY, 3}, {5, 6}};
  for (int i = 0; i < 2; i++) ac_store_bits(AC_F32, c.q, (size_t)i, ac_encode_f64(AC_F32, 1));
  for (int j = 0; j < 3; j++) {
    ac_store_bits(AC_F32, c.k, (size_t)j, ac_encode_f64(AC_F32, k[j]));
    for (int d = 0; d < 2; d++) ac_store_bits(AC_F32, c.v, (size_t)(2 * j + d), ac_encode_f64(AC_F32, v[j][d]));
  }
  ac_oracle_result r;
  ck_assert_msg(oracle1(&c, &r, &e) == 0, "%s", e.msg);
  ac_compare_opts co;
  ac_compare_opts_init(&co);
  float o[4] = {1, 2, -INFINITY, NAN};
  ac_report rep;
  ac_report_init(&rep, &co);
  ck_assert_msg(ac_compare_outputs(&c, &r, o, NULL, NULL, &co, &rep, &e) == 0, "%s", e.msg);
  ck_assert_msg(rep.kinds & (1u << AC_V_FAIL), "kinds %#x: -inf for +inf must FAIL", rep.kinds);
  ck_assert_msg(rep.kinds & (1u << AC_V_MASKED_LEAK), "kinds %#x: NaN for 2.5 is the masked NaN's reach", rep.kinds);
  ck_assert_int_eq(rep.n_leak, 1);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(judge_case_pipeline)
{
  ac_case c;
  build(&c, 1);
  ac_err e;
  ac_kernel **list = NULL, **list2 = NULL;
  int n = 0, n2 = 0;
  ck_assert_msg(ac_kernel_resolve("flash-f32", &list, &n, &e) == 0 && n == 1 && ac_kernel_resolve("naive-f64", &list2, &n2, &e) == 0 && n2 == 1, "%s", e.msg);
  ac_compare_opts co;
  ac_compare_opts_init(&co);
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ro.want_lse = 1;
  ac_judge_oracle_src src = {NULL, count_oracle, NULL, NULL};
  ac_report rep;
  ac_judged j;
  oracle_calls = 0;
  ac_report_init(&rep, &co);
  ck_assert_msg(ac_judge_case(list[0], &c, &co, &ro, 3, &src, &rep, &j, &e) == 0, "%s", e.msg);
  ck_assert_msg(rep.kinds == 0 && oracle_calls == 1 && j.oracle == &j.own && j.run.status == AC_RUN_OK,
                "kinds %x calls %d %s", rep.kinds, oracle_calls, rep.note);
  ac_judged_free(&j);
  ac_report_init(&rep, &co);
  ck_assert(ac_judge_case(list2[0], &c, &co, &ro, 3, &src, &rep, &j, &e) == 0);
  ck_assert_msg(rep.kinds == (1u << AC_V_SKIP) && oracle_calls == 1 && !j.oracle, "kinds %x calls %d", rep.kinds,
                oracle_calls);
  ac_judged_free(&j);
  ac_kernel_free(list[0]);
  ac_kernel_free(list2[0]);
  free(list);
  free(list2);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("domain");
  TCase *tc = tcase_create("domain");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, online_partial_sums_beyond_binary32_are_out_of_domain);
  tcase_add_test(tc, moderate_values_stay_in_domain);
  tcase_add_test(tc, judge_case_pipeline);
  tcase_add_test(tc, a_visible_nonfinite_outcome_judged_wrong_is_not_a_masked_leak);
  tcase_add_test(tc, qk_partial_sums_beyond_the_score_accumulator_are_out_of_domain);
  tcase_add_test(tc, online_sums_follow_the_keys_a_row_sees);
  tcase_add_test(tc, masked_nonfinite_follows_the_keys_a_row_sees);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
