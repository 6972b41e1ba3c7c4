/* tharness_variants: the harness hands a kernel the ABI 2 variant tensors as the header
 * describes them (strides, zero strides over broadcast extents, slopes, sinks, descales),
 * checks them as inputs (a write into the bias is reported), and a kernel whose caps lack a
 * feature the case uses is not given the case. */
#include "config.h"
#include <stdlib.h>
#include "tharness_util.h"
#include "variants.h"
#include "vgen.h"

static void variant_case(ac_case *c)
{
  th_case(c, AC_F32, AC_MASK_CAUSAL_BR, 2, 4, 2, 6, 9, 8, 8, 3);
  ac_vspec v = {.used = AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_BOOL_MASK | AC_FEAT_SINKS |
                        AC_FEAT_DESCALE,
                .win_left = 2, .win_right = 0, .softcap = 20, .alibi_max = 1, .alibi_per_batch = 1, .bias = AC_VB_NORMAL,
                .bias_scale = 1, .bias_bcast_b = 1, .bmask = AC_VM_RANDOM, .mask_bcast_h = 1, .sinks = AC_VS_NORMAL};
  ac_err e;
  ck_assert_msg(ac_vspec_apply(c, &v, ac_test_seed(), &e) == 0, "%s", e.msg);
}

static double rows(const float *x, int64_t n)
{
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += (double)(i + 1) * x[i];
  return s;
}

/* The sum test-variants computes, from the case's dense tensors and broadcast extents. */
static double expected_sum(const ac_case *c)
{
  const ac_problem *p = &c->p;
  double bias = 0, mask = 0;
  int64_t pos = 0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t j = 0; j < p->tk; j++, pos++) {
          bias += (double)(pos % 97 + 1) * ac_load(AC_F32, c->bias, ac_biasidx(p, b, h, i, j));
          mask += (double)(pos % 97 + 1) * c->bool_mask[ac_bmaskidx(p, b, h, i, j)];
        }
  int64_t nd = p->batch * p->kv_heads;
  return bias + 3 * mask + 5 * rows(c->alibi_slopes, p->batch * p->heads) + 7 * rows(c->sinks, p->heads) +
         11 * rows(c->descale[0], nd) + 13 * rows(c->descale[1], nd) + 17 * rows(c->descale[2], nd);
}

START_TEST(variant_tensors_reach_the_kernel)
{
  ac_case c;
  variant_case(&c);
  ac_kernel *k = th_kernel("test-variants");
  ac_run_opts o;
  ac_run_opts_init(&o);
  ac_run_result r;
  ac_err e;
  ck_assert_msg(ac_harness_run(k, &c, &o, &r, &e) == 0, "%s", e.msg);
  ck_assert_msg(r.status == AC_RUN_OK, "status %d: %s", r.status, r.msg);
  ck_assert_msg(r.guard_ok, "%s", r.guard_msg);
  float want = (float)expected_sum(&c), got = ((const float *)r.o)[0];
  ck_assert_msg(want == got, "the kernel read %.9g, the case holds %.9g", got, want);
  ck_assert(((const float *)r.o)[r.o_count - 1] == want);
  ac_run_result_free(&r);
  ac_kernel_free(k);
  ac_case_free(&c);
}
END_TEST

START_TEST(a_write_into_the_bias_is_reported)
{
  ac_case c;
  variant_case(&c);
  ac_kernel *k = th_kernel("test-variants-scribble");
  ac_run_opts o;
  ac_run_opts_init(&o);
  ac_run_result r;
  ac_err e;
  ck_assert_msg(ac_harness_run(k, &c, &o, &r, &e) == 0, "%s", e.msg);
  ck_assert(!r.guard_ok);
  ck_assert_msg(strstr(r.guard_msg, "bias") && strstr(r.guard_msg, "wrote into its input"), "%s", r.guard_msg);
  ac_run_result_free(&r);
  ac_kernel_free(k);
  ac_case_free(&c);
}
END_TEST

START_TEST(kernels_get_only_the_variants_they_declare)
{
  ac_case c;
  variant_case(&c);
  char why[256];
  ac_kernel *plain = th_kernel("test-reference"), *var = th_kernel("test-variants");
  ck_assert_int_eq(ac_kernel_supports(plain, &c.p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "does not declare window,softcap,alibi,bias,bool_mask,sinks,descale"), "%s", why);
  ck_assert_int_eq(ac_kernel_supports(var, &c.p, why, sizeof why), 1);
  c.p.f.used |= AC_FEAT_MIXED_DTYPES;
  ck_assert_int_eq(ac_kernel_supports(var, &c.p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "mixed_dtypes"), "%s", why);
  c.p.f.used &= ~(uint32_t)AC_FEAT_MIXED_DTYPES;
  ac_kernel_free(plain);
  ac_kernel_free(var);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("harness_variants");
  TCase *tc = tcase_create("variants");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, variant_tensors_reach_the_kernel);
  tcase_add_test(tc, a_write_into_the_bias_is_reported);
  tcase_add_test(tc, kernels_get_only_the_variants_they_declare);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
