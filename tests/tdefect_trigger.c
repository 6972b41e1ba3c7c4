/* tdefect_trigger: the pieces of the defect rule that need no kernel (fuzz/engine/defect.c,
 * defect_cases.c; docs/fuzzing.md "Defects"). The trigger two fingerprints share: what one needs all
 * needed by the other, a bottom-right mask counting as a causal one, never empty, never quantized
 * tensors (a serving layout may be one), never two different dtypes, never between two findings that were not checked
 * (an unchecked one's features are what its case has: the trigger is the checked one's needs). A
 * case without a trigger: the mask left out (top-left for a bottom-right trigger), dv = dk, the kv
 * heads repeated, every other feature kept. A case file's strides that are the contiguous ones are
 * no strides. A scale snapped to ±2^k times the default one; V scaled below 1. A layout case without
 * GQA or a head keeps its pages; a sequence alone, dense or as one varlen sequence. Quantized
 * tensors' NaN scales and codes are non-finite inputs, and finite ones can take their place. A
 * wrong value brought to overflow: keys repeated, |V| near binary16's top. The campaigns that use
 * them are tests/tfuzz_defects.sh. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "quant.h"
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
  /* quantized tensors are kept as found, never a trigger; a serving layout is one (each sequence
   * alone is the case without it) */
  ac_defect_fp q = fp(AC_DF_QUANT, 1, -1), qp = fp(AC_DF_QUANT | AC_DF_PAGED | AC_DF_CAUSAL, 1, -1),
               pg = fp(AC_DF_PAGED, 1, -1), pg_gqa = fp(AC_DF_PAGED | AC_DF_GQA, 1, -1), vl = fp(AC_DF_VARLEN, 1, -1);
  ck_assert_uint_eq(ac_defect_trigger(&q, &q), 0);
  ck_assert_uint_eq(ac_defect_trigger(&q, &qp), 0);
  ck_assert_uint_eq(ac_defect_trigger(&pg, &qp), AC_DF_PAGED);
  ck_assert_uint_eq(ac_defect_trigger(&causal, &qp), AC_DF_CAUSAL);
  ck_assert_uint_eq(ac_defect_trigger(&pg, &pg_gqa), AC_DF_PAGED);
  ck_assert_uint_eq(ac_defect_trigger(&pg, &vl), 0);   /* two layouts: two triggers */
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

/* A wrong value brought to overflow: the keys repeated (key j is key j mod tk), every |V| scaled to a
 * quarter to a half of binary16's top, exactly; refused for a dtype whose range is binary32's, a mask
 * or variants. A V wider than K cut to dk columns from a given one; a strided case padded,
 * contiguous. */
START_TEST(large_v_and_repeated_keys)
{
  ac_case c, w;
  ac_err e;
  mk(&c, AC_MASK_NONE, 1, 3, 2, 4, 1, 1);
  ck_assert_msg(ac_dcase_repeat_keys(&c, 4, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.tk == 12 && w.p.dk == 2 && w.p.dv == 4);
  for (int64_t j = 0; j < 12; j++) {
    ck_assert(ac_load(AC_F32, w.k, ac_kidx(&w.p, 0, 0, j, 1)) == ac_load(AC_F32, c.k, ac_kidx(&c.p, 0, 0, j % 3, 1)));
    ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 0, j, 3)) == ac_load(AC_F32, c.v, ac_vidx(&c.p, 0, 0, j % 3, 3)));
  }
  ac_case_free(&w);
  ck_assert_int_ne(ac_dcase_large_v(&c, 4, &w, &e), 0);   /* binary32: its sums overflow in any kernel */
  ac_case h;
  ck_assert_msg(ac_dcase_widen(&c, AC_F64, &h, &e) == 0, "%s", e.msg);
  ck_assert_int_ne(ac_dcase_large_v(&h, 4, &w, &e), 0);
  ac_case_free(&h);
  /* binary16 V of both signs, up to 3004: |V| times 2^3, the largest 24032 in [2^14, 2^15) */
  ac_case_init(&h);
  h.p = c.p;
  h.p.dtype = AC_F16;
  ck_assert_msg(ac_case_alloc(&h, &e) == 0, "%s", e.msg);
  ac_counts n = ac_case_counts(&c);
  for (int64_t i = 0; i < n.q; i++) ac_set(AC_F16, h.q, (size_t)i, ac_load(AC_F32, c.q, (size_t)i));
  for (int64_t i = 0; i < n.k; i++) ac_set(AC_F16, h.k, (size_t)i, ac_load(AC_F32, c.k, (size_t)i));
  for (int64_t i = 0; i < n.v; i++) ac_set(AC_F16, h.v, (size_t)i, (i % 2 ? -1 : 1) * ac_load(AC_F32, c.v, (size_t)i));
  ck_assert_msg(ac_dcase_large_v(&h, 4, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.tk == 12);
  double vmax = 0;
  for (int64_t j = 0; j < 12; j++)
    for (int64_t y = 0; y < 4; y++) {
      const double v = ac_load(AC_F16, w.v, ac_vidx(&w.p, 0, 0, j, y)), was = ac_load(AC_F16, h.v, ac_vidx(&h.p, 0, 0, j % 3, y));
      ck_assert(v == 8 * fabs(was));
      vmax = v > vmax ? v : vmax;
    }
  ck_assert(vmax == 24032);
  ac_case_free(&w);
  h.p.mask = AC_MASK_CAUSAL;   /* a mask: repeated keys would be other keys */
  ck_assert_int_ne(ac_dcase_large_v(&h, 4, &w, &e), 0);
  ac_case_free(&h);
  /* dv 4 > dk 2: the columns from 2 (or the last two: at most dv - dk), else the first */
  ck_assert_msg(ac_dcase_dv_eq_dk(&c, 3, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.dv == 2 && ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 0, 1, 0)) == 2002);
  ac_case_free(&w);
  ck_assert_msg(ac_dcase_dv_eq_dk(&c, -1, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.dv == 2 && ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 0, 1, 0)) == 2000);
  ac_case_free(&w);
  ac_case_free(&c);
  /* presented as B S H D: padded to dk columns, contiguous (as a cut is) */
  mk(&c, AC_MASK_NONE, 2, 3, 4, 2, 2, 2);
  const int64_t v2[4] = {3 * 2 * 3, 3, 2 * 3, 1}, o2[4] = {2 * 2 * 3, 3, 2 * 3, 1};
  memcpy(c.p.v_stride, v2, sizeof v2);
  memcpy(c.p.o_stride, o2, sizeof o2);
  ck_assert(ac_dcase_strided(&c));
  ck_assert_msg(ac_dcase_dv_eq_dk(&c, -1, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.p.dv == 4 && !ac_dcase_strided(&w));
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 1, 2, 1)) == 3001 && ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 1, 2, 3)) == 0);
  ac_case_free(&w);
  ac_case_free(&c);
}
END_TEST

/* A paged case without GQA or one of its heads keeps its pages; a sequence alone is its dense case,
 * and a dense case of one batch is one varlen sequence, a layout no trigger is made of. */
START_TEST(layout_cases)
{
  static const int64_t tq[] = {2, 0, 3}, tk[] = {5, 4, 7};
  ac_layout_case_spec sp = {.dtype = AC_F32, .mask = AC_MASK_CAUSAL, .heads = 2, .kv_heads = 1, .dk = 4, .dv = 4, .sigma = 1,
                            .lay = {.kind = AC_FEAT_PAGED, .nseq = 3, .tq = tq, .tk = tk, .page_size = 4, .shuffle = 1}};
  ac_case c, w, d, v;
  ac_err e;
  ck_assert_msg(ac_layout_case_make(&c, &sp, 3, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(ac_dcase_layout_kept(&c), 1);
  /* GQA taken away: the kv head repeated, the same pages */
  ck_assert_msg(ac_dcase_without(&c, AC_DF_GQA, &w, &e) == 0, "%s", e.msg);
  ck_assert(w.lay && w.p.kv_heads == 2 && ac_layout_validate(&w, &e) == 0);
  ck_assert_int_eq(memcmp(w.lay->block_table, c.lay->block_table, (size_t)(3 * c.p.l.max_pages) * sizeof(int32_t)), 0);
  const int64_t key = ac_layout_key(&c, 2, 6);
  ck_assert(ac_load(AC_F32, w.v, ac_vidx(&w.p, 0, 1, key, 3)) == ac_load(AC_F32, c.v, ac_vidx(&c.p, 0, 0, key, 3)));
  /* one head of it: the same pages */
  ck_assert_msg(ac_dcase_slice(&w, 1, 1, &d, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(ac_dcase_keep_layout(&w, 0, &d), 0);
  ck_assert(d.lay && d.p.heads == 1 && ac_layout_validate(&d, &e) == 0);
  ac_case_free(&d);
  ac_case_free(&w);
  /* sequence 2 alone: dense, its keys in order */
  ck_assert_int_ne(ac_dcase_seq(&c, 3, &d, &e), 0);
  ck_assert_msg(ac_dcase_seq(&c, 2, &d, &e) == 0, "%s", e.msg);
  ck_assert(!d.lay && d.p.tq == 3 && d.p.tk == 7 && d.p.batch == 1);
  ck_assert(ac_load(AC_F32, d.v, ac_vidx(&d.p, 0, 0, 6, 3)) == ac_load(AC_F32, c.v, ac_vidx(&c.p, 0, 0, key, 3)));
  /* ... and as one varlen sequence: no layout kept */
  ck_assert_msg(ac_dcase_as_varlen(&d, &v, &e) == 0, "%s", e.msg);
  ck_assert(v.lay && v.p.l.nseq == 1 && v.lay->cu_q[1] == 3 && v.lay->cu_k[1] == 7 && ac_dcase_layout_kept(&v) == 0);
  ck_assert_int_eq(memcmp(v.k, d.k, ac_case_bytes(&d, 'k')), 0);
  ck_assert_int_ne(ac_dcase_as_varlen(&v, &w, &e), 0);   /* a layout already */
  ac_case_free(&v);
  ac_case_free(&d);
  mk(&d, AC_MASK_NONE, 2, 3, 2, 2, 1, 1);
  d.p.batch = 2;   /* two batches: no one sequence (the shape alone decides) */
  ck_assert_int_ne(ac_dcase_as_varlen(&d, &v, &e), 0);
  d.p.batch = 1;
  ac_case_free(&d);
  ac_case_free(&c);
}
END_TEST

/* dv = dk for quantized K and V: V's codes and scales with zero columns past dv, K's kept; their kv
 * heads repeated for each query head; V below 1 through its scales. */
START_TEST(quantized_dv_eq_dk)
{
  const char *fmts[] = {"q8_0", "q4_0", "uint8:token", "e4m3fn:channel"};
  for (int f = 0; f < 4; f++) {
    ac_case c, w;
    ac_err e;
    mk(&c, AC_MASK_NONE, 2, 5, 64, 32, 2, 1);
    const char *spec[3] = {NULL, fmts[f], fmts[f]};
    ck_assert_msg(ac_quant_apply_specs(&c, spec, NULL, 3, &e) == 0, "%s: %s", fmts[f], e.msg);
    ck_assert_msg(ac_dcase_dv_eq_dk(&c, -1, &w, &e) == 0, "%s: %s", fmts[f], e.msg);
    ck_assert(w.p.dv == 64 && w.p.quant[2].fmt == c.p.quant[2].fmt && w.quant);
    ck_assert_int_eq(memcmp(w.quant->t[1].codes, c.quant->t[1].codes, 5 * 64), 0);
    for (int64_t j = 0; j < 5; j++)
      for (int64_t y = 0; y < 64; y++)
        ck_assert(ac_load(AC_F64, w.v, ac_vidx(&w.p, 0, 0, j, y)) == (y < 32 ? ac_load(AC_F64, c.v, ac_vidx(&c.p, 0, 0, j, y)) : 0));
    ac_case_free(&w);
    /* GQA taken away: each query head's K and V are its kv head's, codes and scales */
    ck_assert_msg(ac_dcase_expand_kv(&c, &w, &e) == 0, "%s: %s", fmts[f], e.msg);
    ck_assert(w.p.kv_heads == 2 && w.quant && w.p.quant[1].fmt == c.p.quant[1].fmt);
    for (int64_t j = 0; j < 5; j++)
      for (int64_t x = 0; x < 64; x++)
        ck_assert(ac_load(AC_F64, w.k, ac_kidx(&w.p, 0, 1, j, x)) == ac_load(AC_F64, c.k, ac_kidx(&c.p, 0, 0, j, x)));
    ck_assert_int_eq(memcmp(w.quant->t[1].codes + 5 * 64, c.quant->t[1].codes, 5 * 64), 0);
    ac_case_free(&w);
    /* V below 1 through its scales: every value times the same power of two, the codes kept */
    ck_assert_msg(ac_dcase_small_v(&c, &w, &e) == 0, "%s: %s", fmts[f], e.msg);
    ck_assert_int_eq(memcmp(w.quant->t[2].codes, c.quant->t[2].codes, 5 * 32), 0);
    const double r = ac_load(AC_F64, w.v, 0) / ac_load(AC_F64, c.v, 0);
    ck_assert(r < 1.0 / 1024 && r == ldexp(1, ilogb(r)));
    for (int64_t i = 0; i < 5 * 32; i++) {
      ck_assert(ac_load(AC_F64, w.v, (size_t)i) == r * ac_load(AC_F64, c.v, (size_t)i));
      ck_assert(fabs(ac_load(AC_F64, w.v, (size_t)i)) < 1);
    }
    ac_case_free(&w);
    ac_case_free(&c);
  }
}
END_TEST

/* Quantized K and V with NaN scales and codes: non-finite inputs; the case with finite ones in
 * their place (zeros, or the scales' largest finite values) decodes them again. */
START_TEST(quantized_nonfinite)
{
  const char *fmts[] = {"q8_0", "e5m2:token", "int8:head:scale=f16:zero=f16"};
  for (int f = 0; f < 3; f++) {
    ac_case c, w;
    ac_err e;
    mk(&c, AC_MASK_NONE, 2, 8, 32, 32, 1, 1);
    const char *spec[3] = {NULL, fmts[f], fmts[f]};
    ck_assert_msg(ac_quant_apply_specs(&c, spec, "nan_in_block", 7, &e) == 0, "%s: %s", fmts[f], e.msg);
    ck_assert_msg(ac_dcase_nonfinite(&c), "%s: no NaN drawn", fmts[f]);
    for (int largest = 0; largest < 2; largest++) {
      ck_assert_msg(ac_dcase_finite(&c, largest, &w, &e) == 0, "%s", e.msg);
      ck_assert_msg(!ac_dcase_nonfinite(&w), "%s: non-finite left", fmts[f]);
      ck_assert_int_eq(w.p.quant[1].fmt, c.p.quant[1].fmt);
      /* the finite values stay */
      for (int64_t i = 0; i < 8 * 32; i++) {
        double a = ac_load(AC_F64, c.k, (size_t)i), b = ac_load(AC_F64, w.k, (size_t)i);
        ck_assert(!isfinite(a) || a == b);
      }
      ac_case_free(&w);
    }
    ac_case_free(&c);
  }
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
  tcase_add_test(tc, large_v_and_repeated_keys);
  tcase_add_test(tc, layout_cases);
  tcase_add_test(tc, quantized_nonfinite);
  tcase_add_test(tc, quantized_dv_eq_dk);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
