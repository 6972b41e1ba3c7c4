/* suite_layouts.c: the serving-layout cases of the fixed suite (docs/layouts.md): varlen
 * batches (length mixes with zero lengths, many one-token sequences, one long among short,
 * window + sinks + softcap), paged caches (shuffled pages with spares, a shared prefix, page
 * sizes 1, 7, 16 and 256, ALiBi; GQA at every power of two from 2 to 128 with a partial, a full
 * and a short last page; page ids past 65,535 in a pool of 65,552 pages) and decode against long
 * caches (row-sampled), in f32 and bf16, after every other case of the suite. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "layout.h"
#include "suite.h"
#include "vgen.h"

#define MAXS 32

typedef struct {
  const char *name;
  uint32_t kind;
  ac_mask mask;
  int64_t heads, kv_heads, d, page_size, spare, shared;
  int shuffle, rows_k;
  int64_t n, tq[MAXS], tk[MAXS];   /* tq[0] < 0: every sequence has one query (decode) */
  ac_vspec v;
  int high_ids;                     /* the sequences' pages above the spare ones (layout.h) */
} lay_case;

#define ONES_24 {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
static const lay_case cases[] = {
  {"varlen-mix", AC_FEAT_VARLEN, AC_MASK_CAUSAL_BR, 4, 2, 32, 0, 0, 0, 0, 0, 7,
   {5, 1, 0, 17, 3, 64, 2}, {7, 1, 3, 17, 0, 80, 9}, {0}, 0},
  {"varlen-ones", AC_FEAT_VARLEN, AC_MASK_NONE, 2, 1, 16, 0, 0, 0, 0, 0, 24, ONES_24,
   {1, 2, 1, 3, 1, 1, 4, 1, 1, 2, 1, 1, 1, 5, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1}, {0}, 0},
  {"varlen-long-among-short", AC_FEAT_VARLEN, AC_MASK_CAUSAL, 2, 2, 32, 0, 0, 0, 0, 0, 5,
   {1, 2, 200, 1, 3}, {1, 2, 200, 1, 3}, {0}, 0},
  {"varlen-window-sinks", AC_FEAT_VARLEN, AC_MASK_NONE, 2, 1, 32, 0, 0, 0, 0, 0, 4, {9, 0, 33, 4}, {9, 5, 33, 40},
   {.used = AC_FEAT_WINDOW | AC_FEAT_SINKS | AC_FEAT_SOFTCAP, .win_left = 8, .win_right = 0, .softcap = 20}, 0},
  {"paged-shuffled", AC_FEAT_PAGED, AC_MASK_CAUSAL_BR, 4, 2, 32, 16, 3, 0, 1, 0, 6,
   {1, 2, 1, 1, 3, 1}, {33, 5, 0, 16, 17, 64}, {0}, 0},
  {"paged-shared-prefix", AC_FEAT_PAGED, AC_MASK_NONE, 2, 1, 32, 16, 1, 2, 1, 0, 3, {2, 1, 4}, {40, 37, 45}, {0}, 0},
  {"paged-page1", AC_FEAT_PAGED, AC_MASK_NONE, 2, 2, 16, 1, 4, 0, 1, 0, 4, {-1}, {12, 1, 0, 7}, {0}, 0},
  {"paged-page7-alibi", AC_FEAT_PAGED, AC_MASK_CAUSAL, 2, 2, 16, 7, 2, 0, 1, 0, 4, {3, 1, 1, 2}, {50, 6, 7, 13},
   {.used = AC_FEAT_ALIBI, .alibi_max = 1}, 0},
  {"paged-page256", AC_FEAT_PAGED, AC_MASK_CAUSAL_BR, 2, 1, 32, 256, 1, 0, 1, 0, 2, {1, 2}, {300, 20}, {0}, 0},
  {"decode-long", AC_FEAT_PAGED, AC_MASK_NONE, 4, 1, 64, 16, 2, 0, 1, 4, 4, {-1}, {4096, 1000, 17, 2048}, {0}, 0},
#define GQA_PAGES(P, H, KVH) \
  {"paged-gqa-page" #P, AC_FEAT_PAGED, AC_MASK_CAUSAL_BR, H, KVH, 16, P, 2, 0, 1, 0, 3, {1, 2, 1}, {2 * P - 1, P, P / 2 + 1}, {0}, 0}
  GQA_PAGES(2, 4, 1), GQA_PAGES(4, 8, 2), GQA_PAGES(8, 4, 1), GQA_PAGES(32, 8, 2), GQA_PAGES(64, 4, 2), GQA_PAGES(128, 6, 2),
#undef GQA_PAGES
  {"paged-high-ids", AC_FEAT_PAGED, AC_MASK_NONE, 2, 1, 8, 1, 65535, 0, 1, 0, 3, {1, 2, 1}, {5, 9, 3}, {0}, 1},
};
#define N_LAY ((int64_t)(sizeof cases / sizeof cases[0]))
static const ac_dtype dtypes[] = {AC_F32, AC_BF16};
#define N_LDT 2

/* the quantized cases (suite_quant.c) follow the layout cases */
int64_t ac_suite_layout_count(void) { return N_LAY * N_LDT + ac_suite_quant_count(); }

int ac_suite_layout_describe(int64_t i, char *name, size_t n, ac_dtype *dtype)
{
  if (i >= N_LAY * N_LDT) return ac_suite_quant_describe(i - N_LAY * N_LDT, name, n, dtype);
  if (i < 0) return -1;
  snprintf(name, n, "%s-%s", ac_dtype_name(dtypes[i % N_LDT]), cases[i / N_LDT].name);
  if (dtype) *dtype = dtypes[i % N_LDT];
  return 0;
}

int ac_suite_layout_make(int64_t i, ac_suite_case *sc, ac_err *e)
{
  if (i >= N_LAY * N_LDT) return ac_suite_quant_make(i - N_LAY * N_LDT, sc, e);
  if (ac_suite_layout_describe(i, sc->name, sizeof sc->name, NULL) != 0)
    return ac_err_set(e, "suite layout case %lld does not exist", (long long)i);
  const lay_case *l = &cases[i / N_LDT];
  int64_t ones[MAXS];
  for (int64_t b = 0; b < MAXS; b++) ones[b] = 1;
  ac_layout_case_spec s = {.dtype = dtypes[i % N_LDT], .mask = l->mask, .heads = l->heads, .kv_heads = l->kv_heads,
                           .dk = l->d, .dv = l->d, .sigma = 1,
                           .lay = {.kind = l->kind, .nseq = l->n, .tq = l->tq[0] < 0 ? ones : l->tq, .tk = l->tk,
                                   .page_size = l->page_size, .spare_pages = l->spare, .shared_pages = l->shared,
                                   .shuffle = l->shuffle, .high_ids = l->high_ids},
                           .v = l->v.used ? &l->v : NULL};
  if (l->rows_k) snprintf(sc->rows, sizeof sc->rows, "edges+%d", l->rows_k);
  if (ac_layout_case_make(&sc->c, &s, 0x6c61796f7574ULL + (uint64_t)i, e) != 0) return -1;
  snprintf(sc->c.generator, sizeof sc->c.generator, "suite:layout");
  return 0;
}
