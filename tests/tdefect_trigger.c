/* tdefect_trigger: the pieces of the defect rule that need no kernel (fuzz/engine/defect.c,
 * defect_cases.c; docs/fuzzing.md "Defects"). The trigger two fingerprints share: what one needs all
 * needed by the other, a bottom-right mask counting as a causal one, never empty, never a quantized
 * or serving layout, never two different dtypes, never between two findings that were not checked
 * (an unchecked one's features are what its case has: the trigger is the checked one's needs). A
 * case without a trigger: the mask left out (top-left for a bottom-right trigger), dv = dk, the kv
 * heads repeated, every other feature kept. A case file's strides that are the contiguous ones are
 * no strides. A scale snapped to ±2^k times the default one; V scaled below 1. The campaigns that
 * use them are tests/tfuzz_defects.sh. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fuzz.h"
#include "testutil.h"

static ac_defect_fp fp(uint32_t feats, int checked, int dtype_only)
{
  ac_defect_fp f;
  memset(&f, 0, sizeof f);
  f.attached = -1;
  f.dtype_only = dtype_only;
  f.feats = feats;
  f.checked = checked;
  f.reproduced = 1;
  f.mode.kind = AC_V_FAIL;
  return f;
}

START_TEST(trigger_is_contained_needs)
{
  ac_defect_fp none = fp(0, 1, -1), causal = fp(AC_DF_CAUSAL, 1, -1), br = fp(AC_DF_CAUSAL_BR, 1, -1),
               dv = fp(AC_DF_DV_NE_DK, 1, -1), dv_heads = fp(AC_DF_DV_NE_DK | AC_DF_HEADS, 1, -1),
               gqa = fp(AC_DF_GQA, 1, -1), causal_gqa = fp(AC_DF_CAUSAL | AC_DF_GQA, 1, -1);
  ck_assert_uint_eq(ac_defect_trigger(&dv, &dv_heads), AC_DF_DV_NE_DK);
  ck_assert_uint_eq(ac_defect_trigger(&dv_heads, &dv), AC_DF_DV_NE_DK);
  ck_assert_uint_eq(ac_defect_trigger(&causal, &br), AC_DF_CAUSAL);   /* a bottom-right mask is a causal one */
  ck_assert_uint_eq(ac_defect_trigger(&br, &br), AC_DF_CAUSAL | AC_DF_CAUSAL_BR);
  ck_assert_uint_eq(ac_defect_trigger(&none, &causal), 0);            /* nothing needed: no trigger */
  ck_assert_uint_eq(ac_defect_trigger(&none, &none), 0);
  ck_assert_uint_eq(ac_defect_trigger(&dv, &gqa), 0);                 /* disjoint */
  ck_assert_uint_eq(ac_defect_trigger(&causal_gqa, &dv_heads), 0);    /* neither contains the other */
  ck_assert_uint_eq(ac_defect_trigger(&gqa, &causal_gqa), AC_DF_GQA);
  /* quantized tensors and serving layouts are kept as found, never a trigger */
  ac_defect_fp q = fp(AC_DF_QUANT, 1, -1), qp = fp(AC_DF_QUANT | AC_DF_PAGED | AC_DF_CAUSAL, 1, -1);
  ck_assert_uint_eq(ac_defect_trigger(&q, &q), 0);
  ck_assert_uint_eq(ac_defect_trigger(&q, &qp), 0);
  ck_assert_uint_eq(ac_defect_trigger(&causal, &qp), AC_DF_CAUSAL);
  /* dtypes: one needed by both, or by one of them; never two different ones */
  ac_defect_fp c16 = fp(AC_DF_CAUSAL, 1, AC_F16), cb16 = fp(AC_DF_CAUSAL, 1, AC_BF16);
  ck_assert_uint_eq(ac_defect_trigger(&c16, &causal), AC_DF_CAUSAL);
  ck_assert_uint_eq(ac_defect_trigger(&c16, &c16), AC_DF_CAUSAL);
  ck_assert_uint_eq(ac_defect_trigger(&c16, &cb16), 0);
  /* not reproduced: none */
  ac_defect_fp nr = causal;
  nr.reproduced = 0;
  ck_assert_uint_eq(ac_defect_trigger(&nr, &causal), 0);
}
END_TEST

START_TEST(trigger_of_an_unchecked_finding)
{
  ac_defect_fp dv = fp(AC_DF_DV_NE_DK, 1, -1), big = fp(AC_DF_DV_NE_DK | AC_DF_HEADS | AC_DF_STRIDED, 0, -1),
               big_causal = fp(AC_DF_CAUSAL | AC_DF_HEADS, 0, -1), heads_dv = fp(AC_DF_DV_NE_DK | AC_DF_HEADS | AC_DF_GQA, 1, -1);
  ck_assert_uint_eq(ac_defect_trigger(&dv, &big), AC_DF_DV_NE_DK);   /* the checked one's needs, in the other's case */
  ck_assert_uint_eq(ac_defect_trigger(&big, &dv), AC_DF_DV_NE_DK);
  ck_assert_uint_eq(ac_defect_trigger(&dv, &big_causal), 0);         /* its case lacks them */
  ck_assert_uint_eq(ac_defect_trigger(&heads_dv, &big), 0);          /* not all of the checked one's needs */
  ck_assert_uint_eq(ac_defect_trigger(&big, &big), 0);               /* two unchecked: never */
}
END_TEST

/* A dense f32 case: mask m, dk x dv, V = 1000 (j + 1) + y. */
static void mk(ac_case *c, ac_mask m, int64_t tq, int64_t tk, int64_t dk, int64_t dv, int64_t heads, int64_t kvh)
{
  ac_err e;
  ac_case_init(c);
  c->p = (ac_problem){.dtype = AC_F32, .mask = m, .batch = 1, .heads = heads, .kv_heads = kvh, .tq = tq, .tk = tk,
                      .dk = dk, .dv = dv, .scale_is_default = 1};
  c->p.scale = ac_problem_scale(&c->p);
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "%s", e.msg);
  ac_counts n = ac_case_counts(c);
  for (int64_t i = 0; i < n.q; i++) ac_set(AC_F32, c->q, (size_t)i, 0.25 * (double)(i % 7) - 0.5);
  for (int64_t i = 0; i < n.k; i++) ac_set(AC_F32, c->k, (size_t)i, 0.5 * (double)(i % 5) - 1);
  for (int64_t kh = 0; kh < kvh; kh++)
    for (int64_t j = 0; j < tk; j++)
      for (int64_t y = 0; y < dv; y++) ac_set(AC_F32, c->v, ac_vidx(&c->p, 0, kh, j, y), 1000.0 * (double)(j + 1) + (double)y);
}

START_TEST(case_without_a_trigger)
{
  ac_case c, w;
  ac_err e;
  mk(&c, AC_MASK_CAUSAL_BR, 2, 5, 3, 2, 4, 2);
  /* the bottom-right trigger: top-left, all else kept */
  ck_assert_msg(ac_dcase_without(&c, AC_DF_CAUSAL | AC_DF_CAUSAL_BR, &w, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(w.p.mask, AC_MASK_CAUSAL);
  ck_assert(w.p.dv == 2 && w.p.dk == 3 && w.p.heads == 4 && w.p.kv_heads == 2);
  ac_case_free(&w);
  /* the causal trigger and dv != dk: no mask, V padded with zero columns to dk; GQA kept */
  ck_assert_msg(ac_dcase_without(&c, AC_DF_CAUSAL | AC_DF_DV_NE_DK, &w, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(w.p.mask, AC_MASK_NONE);
  ck_assert(w.p.dv == 3 && w.p.dk == 3 && w.p.heads == 4 && w.p.kv_heads == 2);
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 1, 4, 1)) == 5001.0);
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 1, 4, 2)) == 0.0);
  ac_case_free(&w);
  /* GQA: each query head with its kv head's K and V */
  ck_assert_msg(ac_dcase_without(&c, AC_DF_GQA, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.heads == 4 && w.p.kv_heads == 4 && w.p.mask == AC_MASK_CAUSAL_BR);
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 3, 2, 1)) == ac_load(AC_F32, c.v, ac_vidx(&c.p, 0, 1, 2, 1)));
  ac_case_free(&w);
  /* a feature the case does not have is no edit */
  ck_assert_msg(ac_dcase_without(&c, AC_DF_BATCHES | AC_DF_SCALE, &w, &e) == 0, "%s", e.msg);
  ck_assert(ac_case_hash(&w) == ac_case_hash(&c));
  ac_case_free(&w);
  ac_case_free(&c);
}
END_TEST

START_TEST(contiguous_strides_are_none)
{
  ac_case c;
  mk(&c, AC_MASK_NONE, 3, 4, 2, 5, 1, 1);
  ck_assert_int_eq(ac_dcase_strided(&c), 0);
  ac_problem_default_strides(&c.p);   /* what a case file names for a contiguous case */
  ck_assert(c.p.v_stride[2] == 5);
  ck_assert_int_eq(ac_dcase_strided(&c), 0);
  c.p.q_stride[2] = 3;   /* a gap after each row of Q */
  ck_assert_int_eq(ac_dcase_strided(&c), 1);
  ac_case_free(&c);
}
END_TEST

START_TEST(snapped_scale_and_smaller_v)
{
  ac_case c, w;
  ac_err e;
  mk(&c, AC_MASK_NONE, 1, 3, 4, 2, 1, 1);   /* default scale 1/2 */
  ck_assert_int_ne(ac_dcase_snap_scale(&c, &w, &e), 0);   /* the default one */
  c.p.scale_is_default = 0;
  c.p.scale = -0.97 * 0.5;
  ck_assert_msg(ac_dcase_snap_scale(&c, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.scale == -0.5 && !w.p.scale_is_default);
  ac_case_free(&w);
  c.p.scale = 0.5 * 0.3;   /* 2^-2 is nearer than 2^-1 in log2 */
  ck_assert_msg(ac_dcase_snap_scale(&c, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.scale == 0.125);
  ac_case_free(&w);
  c.p.scale = -2.0;   /* -4 times the default one: nothing to snap */
  ck_assert_int_ne(ac_dcase_snap_scale(&c, &w, &e), 0);
  /* V up to 3001 scaled by 2^-12: its largest below 1, every value exactly */
  ck_assert_msg(ac_dcase_small_v(&c, &w, &e) == 0, "%s", e.msg);
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 0, 2, 1)) == 3001.0 / 4096);
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 0, 0, 0)) == 1000.0 / 4096);
  ck_assert_msg(ac_dcase_small_v(&w, &c, &e) != 0, "V below 1 already");
  ac_case_free(&w);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("defect_trigger");
  TCase *tc = tcase_create("trigger");
  tcase_add_test(tc, trigger_is_contained_needs);
  tcase_add_test(tc, trigger_of_an_unchecked_finding);
  tcase_add_test(tc, case_without_a_trigger);
  tcase_add_test(tc, contiguous_strides_are_none);
  tcase_add_test(tc, snapped_scale_and_smaller_v);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
