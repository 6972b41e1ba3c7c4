/* texec_decl_parse: an exec worker's declaration (kernels/exec_decl.c): the answer to the
 * hello line, the JSON fields, capability checks, refusals and the LSE rule. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "exec_decl.h"
#include "variants.h"
#include "quant.h"
#include "testutil.h"

static ac_problem problem(ac_dtype t, ac_mask m)
{
  ac_problem p;
  memset(&p, 0, sizeof p);
  p.dtype = t;
  p.mask = m;
  p.batch = 1;
  p.heads = p.kv_heads = 2;
  p.tq = p.tk = 8;
  p.dk = p.dv = 16;
  p.scale_is_default = 1;
  p.scale = 0.25;
  return p;
}

START_TEST(answers_to_the_hello)
{
  ac_exec_decl d;
  ac_exec_decl_init(&d);
  ck_assert_int_eq(ac_exec_decl_answer(&d, "loading the model"), 0);   /* chatter */
  ck_assert_int_eq(d.state, AC_DECL_UNKNOWN);
  ck_assert_int_eq(ac_exec_decl_answer(&d, "error expected IN OUT"), 1);   /* an older worker */
  ck_assert_int_eq(d.state, AC_DECL_NONE);
  ac_exec_decl_init(&d);
  ck_assert_int_eq(ac_exec_decl_answer(&d, "attncheck-worker 2 {}"), 1);
  ck_assert_int_eq(d.state, AC_DECL_BAD);
  ck_assert_ptr_nonnull(strstr(d.error, "version"));
  ck_assert_int_eq(ac_exec_decl_answer(&d, "attncheck-worker 1 {\"name\":\"w\"}"), 1);
  ck_assert_int_eq(d.state, AC_DECL_OK);
  ck_assert_str_eq(d.name, "w");
  ck_assert_uint_eq(d.dtypes, ~0u);   /* a missing field restricts nothing */
  ck_assert_int_eq(d.writes_lse, -1);
}
END_TEST

START_TEST(fields_are_parsed_and_checked)
{
  ac_exec_decl d;
  ac_exec_decl_parse(&d, "{\"name\":\"n\",\"dtypes\":[\"f32\",\"bfloat16\"],\"masks\":[\"causal\"],"
                         "\"features\":[\"gqa\"],\"precision\":{\"f16\":\"fp16-cublas\",\"bf16\":\"bf16-acc16\"},"
                         "\"writes_lse\":true}");
  ck_assert_msg(d.state == AC_DECL_OK, "%s", d.error);
  ck_assert_uint_eq(d.dtypes, (1u << AC_F32) | (1u << AC_BF16));
  ck_assert_uint_eq(d.masks, 1u << AC_MASK_CAUSAL);
  ck_assert_uint_eq(d.features, 1u << AC_XF_GQA);
  ck_assert_str_eq(d.precision, "f16=fp16-cublas,bf16=bf16-acc16");
  ck_assert_int_eq(d.writes_lse, 1);
  ck_assert_int_eq(d.alibi_lse_fa2, 0);   /* not said: the ABI's convention */
  ac_exec_decl_parse(&d, "{\"precision\":\"fp32-exp2\",\"alibi_lse\":\"fa2\"}");
  ck_assert_str_eq(d.precision, "fp32-exp2");
  ck_assert_int_eq(d.alibi_lse_fa2, 1);
  ac_exec_decl_parse(&d, "{\"alibi_lse\":\"abi\"}");
  ck_assert_msg(d.state == AC_DECL_OK && d.alibi_lse_fa2 == 0, "%s", d.error);
  static const char *const bad[] = {"[1]", "{\"dtypes\":[\"f33\"]}", "{\"masks\":\"none\"}", "{\"features\":[\"x\"]}",
                                    "{\"precision\":{\"f17\":\"fp32\"}}", "{\"precision\":\"a,b\"}",
                                    "{\"writes_lse\":1}", "{\"alibi_lse\":\"fa3\"}", "{\"alibi_lse\":true}", "not json"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ac_exec_decl_parse(&d, bad[i]);
    ck_assert_msg(d.state == AC_DECL_BAD && d.error[0], "accepted: %s", bad[i]);
  }
}
END_TEST

START_TEST(capabilities_admit_or_skip)
{
  ac_exec_decl d;
  ac_exec_decl_parse(&d, "{\"name\":\"w\",\"dtypes\":[\"f32\"],\"masks\":[\"none\"],\"features\":[\"tq-ne-tk\"]}");
  char why[256];
  ac_problem p = problem(AC_F32, AC_MASK_NONE);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 1);
  p.tk = 9;
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 1);
  p.kv_heads = 1;
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_str_eq(why, "w does not declare feature gqa");
  p = problem(AC_F32, AC_MASK_NONE);
  p.scale_is_default = 0;
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  p = problem(AC_F32, AC_MASK_NONE);
  p.dv = 8;
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  p = problem(AC_F16, AC_MASK_NONE);
  ac_run_result r;
  memset(&r, 0, sizeof r);
  ck_assert_int_eq(ac_exec_decl_admit(&d, &p, &r), -1);
  ck_assert_int_eq(r.status, AC_RUN_UNSUPPORTED);
  ck_assert_str_eq(r.msg, "w does not declare dtype f16");
  p = problem(AC_F32, AC_MASK_CAUSAL);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ac_exec_decl_parse(&d, "{\"dtypes\":[\"nope\"]}");
  memset(&r, 0, sizeof r);
  p = problem(AC_F32, AC_MASK_NONE);
  ck_assert_int_eq(ac_exec_decl_admit(&d, &p, &r), -1);
  ck_assert_int_eq(r.status, AC_RUN_HARNESS_ERROR);
}
END_TEST

/* Attention variants are named in "features"; a worker gets only the variants it names, and
 * a worker without a declaration gets none. */
START_TEST(variants_need_a_declaration)
{
  ac_exec_decl d;
  char why[256];
  ac_problem p = problem(AC_F32, AC_MASK_NONE);
  p.f.used = AC_FEAT_WINDOW;
  ac_exec_decl_init(&d);
  ck_assert_int_eq(ac_exec_decl_answer(&d, "error expected IN OUT"), 1);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_ptr_nonnull(strstr(why, "does not declare feature window"));
  ac_exec_decl_parse(&d, "{\"features\":[\"gqa\",\"window\",\"softcap\",\"sinks\"]}");
  ck_assert_int_eq(d.state, AC_DECL_OK);
  ck_assert_uint_eq(d.variants, AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_SINKS);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 1);
  p.f.used = AC_FEAT_WINDOW | AC_FEAT_BIAS;
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_ptr_nonnull(strstr(why, "does not declare feature bias"));
  ac_exec_decl_parse(&d, "{\"features\":[\"windows\"]}");
  ck_assert_int_eq(d.state, AC_DECL_BAD);
  /* an unknown name after a known variant is refused as well */
  ac_exec_decl_parse(&d, "{\"features\":[\"window\",\"windows\"]}");
  ck_assert_int_eq(d.state, AC_DECL_BAD);
}
END_TEST

/* With mixed_dtypes every tensor's dtype must be declared, not only the compute dtype. */
/* Quantized tensors (docs/quantized.md): only a worker that names their formats gets them. */
START_TEST(quantized_tensors_need_their_formats)
{
  ac_exec_decl d;
  char why[256];
  ac_problem p = problem(AC_F32, AC_MASK_NONE);
  p.dk = p.dv = 32;
  p.quant[1] = (ac_qspec){.fmt = AC_QF_Q4_0, .gran = AC_QG_BLOCK, .block = 32};
  p.quant[2] = (ac_qspec){.fmt = AC_QF_INT4, .gran = AC_QG_TOKEN, .block = 0};
  ac_exec_decl_init(&d);
  ck_assert_int_eq(ac_exec_decl_answer(&d, "error expected IN OUT"), 1);   /* no declaration: no quantized case */
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "does not declare q4_0 for k (\"kv_formats\")"), "%s", why);
  ac_exec_decl_parse(&d, "{\"kv_formats\":[\"q4_0\",\"int4\"],\"q_formats\":[\"e4m3fn\"]}");
  ck_assert_int_eq(d.state, AC_DECL_OK);
  ck_assert_uint_eq(d.kv_formats, 1u << AC_QF_Q4_0 | 1u << AC_QF_INT4);
  ck_assert_uint_eq(d.q_formats, 1u << AC_QF_E4M3FN);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 1);
  p.quant[0] = (ac_qspec){.fmt = AC_QF_INT8, .gran = AC_QG_TOKEN, .block = 0};
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "does not declare int8 for q (\"q_formats\")"), "%s", why);
  ac_exec_decl_parse(&d, "{\"kv_formats\":[\"q3_k\"]}");
  ck_assert_int_eq(d.state, AC_DECL_BAD);
  ck_assert_msg(strstr(d.error, "'kv_formats': unknown format 'q3_k'"), "%s", d.error);
  ac_exec_decl_parse(&d, "{\"kv_formats\":\"q8_0\"}");
  ck_assert_int_eq(d.state, AC_DECL_BAD);
  /* quantized layouts and stores: the features quant_layout and quant_store, "store_quantizers" */
  p.quant[0] = (ac_qspec){0};
  p.quant[2] = (ac_qspec){.fmt = AC_QF_INT4, .gran = AC_QG_BLOCK, .block = 16, .pack = AC_QPACK_LOW_FIRST};
  ac_exec_decl_parse(&d, "{\"kv_formats\":[\"q4_0\",\"int4\"]}");
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "does not declare feature quant_layout"), "%s", why);
  ac_exec_decl_parse(&d, "{\"kv_formats\":[\"q4_0\",\"int4\"],\"features\":[\"quant_layout\",\"quant_store\"],"
                         "\"store_quantizers\":[\"minmax-away-f32-sat\",\"ggml\"]}");
  ck_assert_int_eq(d.state, AC_DECL_OK);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 1);
  ck_assert_int_eq(d.nstore_q, 2);
  ac_exec_decl_parse(&d, "{\"store_quantizers\":[\"minmax-sideways\"]}");
  ck_assert_int_eq(d.state, AC_DECL_BAD);
  ck_assert_msg(strstr(d.error, "'store_quantizers': store quantizer 'minmax-sideways': unknown word"), "%s", d.error);
}
END_TEST

START_TEST(mixed_dtypes_need_every_dtype)
{
  ac_exec_decl d;
  char why[256];
  ac_problem p = problem(AC_F32, AC_MASK_NONE);
  const ac_dtype dt[4] = {AC_F32, AC_BF16, AC_BF16, AC_F32};
  ac_err e;
  ck_assert_msg(ac_features_set_dtypes(&p, dt, &e) == 0, "%s", e.msg);
  ac_exec_decl_init(&d);
  ac_exec_decl_parse(&d, "{\"name\":\"w\",\"dtypes\":[\"f32\",\"f16\"],\"features\":[\"gqa\",\"mixed_dtypes\"]}");
  ck_assert_int_eq(d.state, AC_DECL_OK);
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "w does not declare dtype bf16 (of k)") != NULL, "%s", why);
  p.f.kd = p.f.vd = AC_F16;
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 1);
  ac_exec_decl_parse(&d, "{\"name\":\"w\",\"dtypes\":[\"f32\",\"f16\"],\"features\":[\"gqa\"]}");
  ck_assert_int_eq(ac_exec_decl_supports(&d, &p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "does not declare feature mixed_dtypes") != NULL, "%s", why);
}
END_TEST

START_TEST(refusals_and_lse)
{
  ac_run_result r;
  memset(&r, 0, sizeof r);
  ac_exec_decl_error("error unsupported: no fp8", &r);
  ck_assert_int_eq(r.status, AC_RUN_UNSUPPORTED);
  ck_assert_str_eq(r.msg, "worker: no fp8");
  ac_exec_decl_error("error unsupported", &r);
  ck_assert_int_eq(r.status, AC_RUN_UNSUPPORTED);
  ac_exec_decl_error("error unsupportedness is a word", &r);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  ac_exec_decl_error("error ValueError: bad", &r);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  ck_assert_str_eq(r.msg, "worker: ValueError: bad");
  ac_exec_decl d;
  ac_exec_decl_parse(&d, "{\"writes_lse\":true}");
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.want_lse = 1;
  memset(&r, 0, sizeof r);
  r.status = AC_RUN_OK;
  ac_exec_decl_outputs(&d, &o, 12, &r);
  ck_assert_int_eq(r.n_lse_unwritten, 12);
  ac_exec_decl_parse(&d, "{\"writes_lse\":false}");
  memset(&r, 0, sizeof r);
  r.lse = malloc(4 * sizeof(float));
  r.lse_count = 4;
  ac_exec_decl_outputs(&d, &o, 4, &r);
  ck_assert_ptr_null(r.lse);
  ck_assert_int_eq(r.lse_count, 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("exec_decl");
  TCase *tc = tcase_create("decl");
  tcase_add_test(tc, answers_to_the_hello);
  tcase_add_test(tc, fields_are_parsed_and_checked);
  tcase_add_test(tc, capabilities_admit_or_skip);
  tcase_add_test(tc, refusals_and_lse);
  tcase_add_test(tc, quantized_tensors_need_their_formats);
  tcase_add_test(tc, variants_need_a_declaration);
  tcase_add_test(tc, mixed_dtypes_need_every_dtype);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
