/* tfuzz_layouts: the serving-layout families and checks of the fuzzer (fuzz/families/
 * gen_layouts.c, fuzz/engine/metamorphic_layout.c): every case of varlen_mix, page_table and
 * decode is a valid layout case of its kind that survives a case-file round trip; the families
 * are drawn only for kernels that declare the layout; mutations keep the layout; the
 * metamorphic checks (a sequence alone, paged keys packed densely) pass the correct kernel and
 * catch a wrong block-table row without the oracle; a layout-only kernel is probed on layout
 * problems for its dtypes and features and draws no dense family. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "testutil.h"
#include "variants.h"
#include "vgen.h"

static void limits(ac_gen_limits *l)
{
  ac_gen_limits_init(l);
  l->features |= AC_FEAT_LAYOUTS;
  l->max_t = 2048;
}

START_TEST(families_draw_valid_layout_cases)
{
  const char *fams[] = {"varlen_mix", "page_table", "decode"};
  const uint32_t kinds[] = {AC_FEAT_VARLEN, AC_FEAT_PAGED, AC_FEAT_PAGED};
  ac_gen_limits l;
  limits(&l);
  int relen[3] = {0}, pages[3] = {0};
  for (int f = 0; f < 3; f++) {
    const ac_family *fam = ac_family_find(fams[f]);
    ck_assert_ptr_nonnull(fam);
    ck_assert(ac_family_usable(fam, &l));
    for (int64_t k = 0; k < 40; k++) {
      ac_case c, d;
      ac_err e;
      ck_assert_msg(ac_generate(fam, 7, k, &l, &c, &e) == 0, "%s %lld: %s", fams[f], (long long)k, e.msg);
      ck_assert(c.lay);
      ck_assert_uint_eq(c.p.f.used & AC_FEAT_LAYOUTS, kinds[f]);
      ck_assert_msg(ac_layout_validate(&c, &e) == 0, "%s %lld: %s", fams[f], (long long)k, e.msg);
      char path[4200];
      snprintf(path, sizeof path, "%s/g.npz", ac_test_tmpdir());
      ck_assert_msg(ac_case_write(&c, path, &e) == 0, "%s", e.msg);
      ck_assert_msg(ac_case_read(&d, path, &e) == 0, "%s", e.msg);
      ck_assert_uint_eq(ac_case_hash(&c), ac_case_hash(&d));
      /* a mutation keeps the layout valid; some change the lengths or the page size */
      ac_rng r;
      ac_rng_init(&r, (uint64_t)k, 3);
      ac_case m;
      char desc[128];
      for (int x = 0; x < 4; x++) {
        ck_assert(ac_mutate(&c, 0.1, &r, &l, &m, desc, sizeof desc, &e) == 0);
        ck_assert_msg(m.lay && ac_layout_validate(&m, &e) == 0, "mutation %s: %s", desc, e.msg);
        int lens = m.p.l.nseq != c.p.l.nseq || m.p.l.page_size != c.p.l.page_size;
        for (int64_t b = 0; b < c.p.l.nseq && !lens; b++)
          lens = ac_layout_tq(&m, b) != ac_layout_tq(&c, b) || ac_layout_tk(&m, b) != ac_layout_tk(&c, b);
        relen[f] += lens;
        pages[f] += m.p.l.page_size != c.p.l.page_size;
        ac_case_free(&m);
      }
      ac_case_free(&c);
      ac_case_free(&d);
    }
  }
  for (int f = 0; f < 3; f++) ck_assert_msg(relen[f] >= 10, "%s: %d mutations changed the lengths", fams[f], relen[f]);
  ck_assert_msg(pages[1] >= 3, "page_table: %d mutations split or merged pages", pages[1]);
  /* a kernel without the layouts: the families are not drawn */
  l.features &= ~(uint32_t)AC_FEAT_LAYOUTS;
  for (int f = 0; f < 3; f++) ck_assert(!ac_family_usable(ac_family_find(fams[f]), &l));
}
END_TEST

/* The metamorphic check of kernel name on a paged case (every transform: sequence alone and
 * packed densely, over case seeds); returns how many found a disagreement, *checked how many ran. */
static int meta_runs(const char *name, int *checked)
{
  ac_kernel **ks = NULL;
  int nk = 0, bad = 0;
  ac_err e;
  ck_assert_msg(ac_kernel_resolve(name, &ks, &nk, &e) == 0, "%s", e.msg);
  *checked = 0;
  static const int64_t tq[] = {1, 2, 1, 3}, tk[] = {33, 20, 7, 40};
  for (uint64_t seed = 0; seed < 6; seed++) {
    ac_layout_case_spec s = {.dtype = AC_F32, .mask = AC_MASK_CAUSAL_BR, .heads = 2, .kv_heads = 1, .dk = 16, .dv = 16,
                             .sigma = 1,
                             .lay = {.kind = AC_FEAT_PAGED, .nseq = 4, .tq = tq, .tk = tk, .page_size = 8,
                                     .spare_pages = 2, .shuffle = 1}};
    ac_case c;
    ck_assert_msg(ac_layout_case_make(&c, &s, seed, &e) == 0, "%s", e.msg);
    ac_run_opts ro;
    ac_run_opts_init(&ro);
    ro.want_lse = 1;
    ac_run_result ra;
    ck_assert(ac_harness_run(ks[0], &c, &ro, &ra, &e) == 0 && ra.status == AC_RUN_OK);
    ac_meta_result m;
    ck_assert(ac_meta_check(ks[0], &ro, &c, ac_precision_find("fp32"), &ra, &m, &e) == 0);
    *checked += m.checked;
    bad += m.bad;
    ac_run_result_free(&ra);
    ac_case_free(&c);
  }
  for (int i = 0; i < nk; i++) ac_kernel_free(ks[i]);
  free(ks);
  return bad;
}

START_TEST(metamorphic_layouts)
{
  setenv("ATTNCHECK_CACHE", "off", 1);
  int checked;
  ck_assert_int_eq(meta_runs("flash-varlen-f32", &checked), 0);
  ck_assert_int_eq(checked, 6);
  int bad = meta_runs("mutant-block-table-row", &checked);
  ck_assert_int_eq(checked, 6);
  ck_assert_msg(bad >= 3, "the wrong block-table row disagreed on %d of 6 cases", bad);
}
END_TEST

/* A layout-only kernel's limits and features come from layout problems: dtype bf16 and both
 * layouts for flash-varlen-bf16, whose supports() refuses every dense case. */
START_TEST(probes_of_layout_kernels)
{
  ac_kernel **ks = NULL;
  int nk = 0;
  ac_err e;
  ck_assert_msg(ac_kernel_resolve("flash-varlen-bf16", &ks, &nk, &e) == 0, "%s", e.msg);
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  ac_eval_probe_limits(ks[0], &l);
  ac_eval_probe_features(ks[0], &l);
  ck_assert_uint_eq(l.dtypes, 1u << AC_BF16);
  ck_assert_uint_eq(l.masks, 7);
  ck_assert_uint_eq(l.features & AC_FEAT_LAYOUTS, AC_FEAT_LAYOUTS);
  ck_assert(ac_family_usable(ac_family_find("decode"), &l));
  /* it takes no dense case: no plain or variant family; its variants probed on a layout */
  ck_assert_int_eq(l.no_dense, 1);
  ck_assert_uint_eq(l.features & (AC_FEAT_WINDOW | AC_FEAT_SOFTCAP), AC_FEAT_WINDOW | AC_FEAT_SOFTCAP);
  ck_assert(!ac_family_usable(ac_family_find("normal"), &l));
  ck_assert(!ac_family_usable(ac_family_find("window"), &l));
  ck_assert(!ac_family_usable(ac_family_find("variant_mix"), &l));
  for (int i = 0; i < nk; i++) ac_kernel_free(ks[i]);
  free(ks);
  /* a dense-only kernel: no layout family */
  ks = NULL, nk = 0;
  ck_assert_msg(ac_kernel_resolve("flash-f32", &ks, &nk, &e) == 0, "%s", e.msg);
  ac_gen_limits_init(&l);
  ac_eval_probe_limits(ks[0], &l);
  ac_eval_probe_features(ks[0], &l);
  ck_assert_int_eq(l.no_dense, 0);
  ck_assert(ac_family_usable(ac_family_find("normal"), &l));
  ck_assert(!ac_family_usable(ac_family_find("varlen_mix"), &l));
  ck_assert(!ac_family_usable(ac_family_find("page_table"), &l));
  for (int i = 0; i < nk; i++) ac_kernel_free(ks[i]);
  free(ks);
}
END_TEST

/* The finding of a layout mutant holds (FAIL or OUT-OF-SEQUENCE) while the minimizer drops and
 * shortens sequences. */
static int holds_layout_bug(const ac_case *c, void *arg)
{
  ac_eval ev;
  ac_err e;
  if (ac_eval_case(arg, c, 0, &ev, &e)) return 0;
  return (ev.kinds & ((1u << AC_V_FAIL) | (1u << AC_V_OUT_OF_SEQUENCE))) != 0;
}

START_TEST(minimize_layout_findings)
{
  setenv("ATTNCHECK_CACHE", "off", 1);
  const char *mut[] = {"mutant-cu-seqlens-off-by-one", "mutant-last-page-whole"};
  const uint32_t kind[] = {AC_FEAT_VARLEN, AC_FEAT_PAGED};
  static const int64_t tq[] = {3, 0, 5, 2, 4, 1}, tk[] = {21, 9, 0, 17, 40, 6};
  for (int x = 0; x < 2; x++) {
    ac_kernel **ks = NULL;
    int nk = 0;
    ac_err e;
    ck_assert_msg(ac_kernel_resolve(mut[x], &ks, &nk, &e) == 0, "%s", e.msg);
    ac_layout_case_spec s = {.dtype = AC_F32, .mask = AC_MASK_NONE, .heads = 2, .kv_heads = 1, .dk = 16, .dv = 16,
                             .sigma = 1,
                             .lay = {.kind = kind[x], .nseq = 6, .tq = tq, .tk = tk, .page_size = 8, .shuffle = 1}};
    ac_case c, out;
    ck_assert_msg(ac_layout_case_make(&c, &s, 5, &e) == 0, "%s", e.msg);
    ac_eval_ctx ctx;
    ac_eval_ctx_init(&ctx, ks[0], mut[x]);
    ck_assert_msg(holds_layout_bug(&c, &ctx), "%s: no finding on the case", mut[x]);
    ac_min_opts mo = {.max_evals = 200, .max_seconds = 60};
    ck_assert(ac_minimize(&c, 0, 0, c.p.tq - 1, 0, holds_layout_bug, &ctx, &mo, &out, &e) == 0);
    ck_assert(out.lay && ac_layout_validate(&out, &e) == 0);
    ck_assert(holds_layout_bug(&out, &ctx));
    int64_t keys = 0;
    for (int64_t b = 0; b < out.p.l.nseq; b++) keys += ac_layout_tk(&out, b);
    ck_assert_msg(out.p.l.nseq < 6 && out.p.tq < c.p.tq && keys < 93, "%s: minimized to %lld sequences, %lld queries, %lld keys",
                  mut[x], (long long)out.p.l.nseq, (long long)out.p.tq, (long long)keys);
    ac_case_free(&c);
    ac_case_free(&out);
    for (int i = 0; i < nk; i++) ac_kernel_free(ks[i]);
    free(ks);
  }
}
END_TEST

/* Sequences dropped and reordered: each kept sequence's dense case (its bias and boolean-mask
 * rows, its ALiBi slopes) is the one it had; a grown sequence repeats its last key's column. */
START_TEST(relen_keeps_per_sequence_variants)
{
  static const int64_t tq[] = {3, 0, 5, 2}, tk[] = {6, 9, 0, 7};
  ac_vspec v = {.used = AC_FEAT_BIAS | AC_FEAT_BOOL_MASK | AC_FEAT_ALIBI, .bias = AC_VB_NORMAL, .bias_scale = 1,
                .alibi_max = 1, .alibi_per_batch = 1};
  for (int x = 0; x < 2; x++) {
    ac_layout_case_spec s = {.dtype = AC_F32, .mask = AC_MASK_NONE, .heads = 2, .kv_heads = 1, .dk = 4, .dv = 4,
                             .sigma = 1, .v = &v,
                             .lay = {.kind = x ? AC_FEAT_PAGED : AC_FEAT_VARLEN, .nseq = 4, .tq = tq, .tk = tk, .page_size = 4}};
    ac_case c, out, a, b;
    ac_err e;
    ck_assert_msg(ac_layout_case_make(&c, &s, 9, &e) == 0, "%s", e.msg);
    const int64_t src[] = {3, 0}, nq[] = {2, 3}, nk[] = {8, 6};   /* sequence 3 gains a key */
    ac_relayout r = {.nseq = 2, .src = src, .tq = nq, .tk = nk, .page_size = 4};
    ck_assert_msg(ac_layout_relen(&c, &r, NULL, &out, &e) == 0, "%s", e.msg);
    for (int64_t k = 0; k < 2; k++) {
      ck_assert_msg(ac_layout_seq_case(&c, src[k], &a, &e) == 0, "%s", e.msg);
      ck_assert_msg(ac_layout_seq_case(&out, k, &b, &e) == 0, "%s", e.msg);
      ck_assert_int_eq(memcmp(a.alibi_slopes, b.alibi_slopes, 2 * sizeof(float)), 0);
      for (int64_t h = 0; h < 2; h++)
        for (int64_t i = 0; i < nq[k]; i++)
          for (int64_t j = 0; j < nk[k]; j++) {
            int64_t aj = j < tk[src[k]] ? j : tk[src[k]] - 1;
            ck_assert(((float *)a.bias)[ac_biasidx(&a.p, 0, h, i, aj)] == ((float *)b.bias)[ac_biasidx(&b.p, 0, h, i, j)]);
            ck_assert(a.bool_mask[ac_bmaskidx(&a.p, 0, h, i, aj)] == b.bool_mask[ac_bmaskidx(&b.p, 0, h, i, j)]);
          }
      ac_case_free(&a);
      ac_case_free(&b);
    }
    ac_case_free(&c);
    ac_case_free(&out);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("fuzz_layouts");
  TCase *tc = tcase_create("layouts");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, families_draw_valid_layout_cases);
  tcase_add_test(tc, metamorphic_layouts);
  tcase_add_test(tc, probes_of_layout_kernels);
  tcase_add_test(tc, minimize_layout_findings);
  tcase_add_test(tc, relen_keeps_per_sequence_variants);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
