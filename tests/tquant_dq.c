/* tquant_dq.c: the class part dq=f32 (docs/numerics.md §7.17, docs/quantized.md "Classes"): a kernel
 * that dequantizes uint8 codes with float zero points in binary32 as c s - z s loses |z s| u to
 * cancellation where a value is small beside its group's zero point times scale. On keys whose token
 * holds one far outlier (min -1000: z s = 1000) and small values elsewhere, with Q 0 at the outlier, that
 * error is far above kv-f32's input rounding (relative to each value): kv-f32 FAILs such a kernel and
 * dq-f32 (2u relative and 4u max|z s| absolute per element) PASSes it; (c - z) s in binary32 PASSes both. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "compare.h"
#include "oracle.h"
#include "quant.h"
#include "rng.h"

enum { T = 48, D = 64 };

static void build(ac_case *c)
{
  ac_case_init(c);
  c->p.dtype = AC_F32;
  c->p.mask = AC_MASK_NONE;
  c->p.batch = c->p.heads = c->p.kv_heads = 1;
  c->p.tq = c->p.tk = T;
  c->p.dk = c->p.dv = D;
  c->p.scale_is_default = 1;
  c->p.scale = 1 / sqrt((double)D);
  ac_err e;
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "%s", e.msg);
  ac_rng r;
  ac_rng_init(&r, 38, 1);
  for (int64_t t = 0; t < T; t++)
    for (int64_t d = 0; d < D; d++) {
      ((float *)c->q)[t * D + d] = d == 0 ? 0.0f : (float)ac_rng_normal(&r);
      ((float *)c->k)[t * D + d] = d == 0 ? -1000.0f : (float)(0.01 * ac_rng_normal(&r));
      ((float *)c->v)[t * D + d] = d == 0 ? -1000.0f : (float)(0.01 * ac_rng_normal(&r));
    }
  ac_qspec q;
  ck_assert_msg(ac_qspec_parse("uint8:token:zero=f32", &q, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_quant_apply(c, 'k', &q, &e) == 0 && ac_quant_apply(c, 'v', &q, &e) == 0, "%s", e.msg);
  ck_assert(c->p.quant[1].zs_max >= 999 && c->p.quant[2].zs_max >= 999);
}

/* Element (t, d) of tensor x (1 k, 2 v) dequantized in binary32: (c - z) s, or c s - z s (fold). */
static double dq32(const ac_case *c, int x, int64_t t, int64_t d, int fold)
{
  const ac_qspec *q = &c->p.quant[x];
  const ac_qdata *a = &c->quant->t[x];
  int64_t dims[4] = {1, 1, T, D};
  int64_t s = ac_qscale_index(q, dims, 0, 0, t, d);
  float sv = (float)ac_qscale_value(ac_qspec_sdtype(q), ac_qsd_load(ac_qspec_sdtype(q), a->scales, (size_t)s));
  float z = (float)ac_qscale_value(ac_qspec_zdtype(q), ac_qsd_load(ac_qspec_zdtype(q), a->aux, (size_t)s));
  float code = (float)a->codes[t * D + d];
  if (fold) {
    volatile float cs = code * sv, zs = z * sv;   /* two products rounded, then their difference */
    return (double)(cs - zs);
  }
  return (double)((code - z) * sv);
}

/* The verdict of a kernel that attends exactly (binary64, then rounded) over the binary32 values. */
static ac_report judge(const ac_case *c, const char *cls, int fold)
{
  static double k[T * D], v[T * D];
  for (int64_t t = 0; t < T; t++)
    for (int64_t d = 0; d < D; d++) k[t * D + d] = dq32(c, 1, t, d, fold), v[t * D + d] = dq32(c, 2, t, d, fold);
  float *out = malloc(sizeof(float) * T * D), *lse = malloc(sizeof(float) * T);
  for (int64_t i = 0; i < T; i++) {
    double s[T], m = -INFINITY, l = 0;
    for (int64_t j = 0; j < T; j++) {
      s[j] = 0;
      for (int64_t d = 0; d < D; d++) s[j] += (double)((const float *)c->q)[i * D + d] * k[j * D + d];
      s[j] *= c->p.scale;
      m = fmax(m, s[j]);
    }
    for (int64_t j = 0; j < T; j++) l += exp(s[j] - m);
    for (int64_t d = 0; d < D; d++) {
      double o = 0;
      for (int64_t j = 0; j < T; j++) o += exp(s[j] - m) * v[j * D + d];
      out[i * D + d] = (float)(o / l);
    }
    lse[i] = (float)(m + log(l));
  }
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = 1;
  ac_oracle_result r;
  ac_err e;
  ck_assert_msg(ac_oracle_run(c, &oo, &r, &e) == 0, "%s", e.msg);
  ac_compare_opts co;
  ac_compare_opts_init(&co);
  co.prec = ac_precision_find(cls);
  ck_assert(co.prec);
  ac_report rep;
  ac_report_init(&rep, &co);
  ck_assert_msg(ac_compare_outputs(c, &r, out, lse, NULL, &co, &rep, &e) == 0, "%s", e.msg);
  ac_oracle_result_free(&r);
  free(out);
  free(lse);
  return rep;
}

START_TEST(dq_charges_the_zero_point_cancellation)
{
  ac_case c;
  build(&c);
  ac_report a = judge(&c, "kv-f32", 1), b = judge(&c, "dq-f32", 1), x = judge(&c, "kv-f32", 0), y = judge(&c, "dq-f32", 0);
  ck_assert_msg(a.n_fail > 0, "c s - z s under kv-f32: %lld FAIL", (long long)a.n_fail);
  ck_assert_msg(b.n_fail == 0 && b.n_suspect == 0, "c s - z s under dq-f32: %lld FAIL", (long long)b.n_fail);
  ck_assert_msg(x.n_fail == 0 && y.n_fail == 0, "(c - z) s: %lld, %lld FAIL", (long long)x.n_fail, (long long)y.n_fail);
  ac_case_free(&c);
}
END_TEST

START_TEST(dq_is_a_part)
{
  const ac_precision *d = ac_precision_find("dq-f32"), *k = ac_precision_find("kv-f32");
  ck_assert(d && k && d->u_dq == 0x1p-24 && k->u_dq == 0);
  ck_assert(ac_precision_find("fp32,dq=f32") == d);
  char b[96];
  ck_assert(ac_precision_grad_unmodelled(d, b, sizeof b) && strstr(b, "dq=f32"));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("quant_dq");
  TCase *tc = tcase_create("dq");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, dq_charges_the_zero_point_cancellation);
  tcase_add_test(tc, dq_is_a_part);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
