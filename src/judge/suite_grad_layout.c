/* suite_grad_layout.c: the varlen backward cases of the fixed suite (docs/backward.md §7), after
 * the dense backward cases (suite_grad.c): packed batches with sequences without queries or keys,
 * tq_b != tk_b both ways, a sequence longer than a query tile, GQA, and one with a window, sinks
 * and per-sequence ALiBi, in f32 and bf16, each with a packed dO. Only kernels whose backward
 * takes ATTNCHECK_FEAT_VARLEN run them (the others SKIP). */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "dout.h"
#include "layout.h"
#include "suite.h"
#include "vgen.h"

typedef struct {
  const char *name;
  ac_mask mask;
  int64_t heads, kv_heads, d, n, tq[8], tk[8];
  const char *dout;
  ac_vspec v;
} grad_lay;

static const grad_lay cases[] = {
  {"varlen-mix", AC_MASK_CAUSAL_BR, 4, 2, 32, 7, {5, 1, 0, 17, 3, 20, 2}, {7, 1, 3, 17, 0, 24, 9}, "normal", {0}},
  {"varlen-window-sinks-alibi", AC_MASK_NONE, 2, 1, 16, 4, {9, 0, 18, 4}, {9, 5, 20, 12}, "zero-rows",
   {.used = AC_FEAT_WINDOW | AC_FEAT_SINKS | AC_FEAT_ALIBI, .win_left = 8, .win_right = 0, .sinks = AC_VS_NORMAL,
    .alibi_max = 1, .alibi_per_batch = 1}},
};
#define N_GL ((int64_t)(sizeof cases / sizeof cases[0]))
static const ac_dtype dtypes[] = {AC_F32, AC_BF16};

int64_t ac_suite_grad_layout_count(void) { return N_GL * 2; }

int ac_suite_grad_layout_describe(int64_t i, char *name, size_t n, ac_dtype *dtype)
{
  if (i < 0 || i >= N_GL * 2) return -1;
  snprintf(name, n, "%s-grad-%s-do-%s", ac_dtype_name(dtypes[i % 2]), cases[i / 2].name, cases[i / 2].dout);
  if (dtype) *dtype = dtypes[i % 2];
  return 0;
}

int ac_suite_grad_layout_make(int64_t i, ac_suite_case *sc, ac_err *e)
{
  memset(sc, 0, sizeof *sc);
  if (ac_suite_grad_layout_describe(i, sc->name, sizeof sc->name, NULL))
    return ac_err_set(e, "no varlen backward case %lld", (long long)i);
  const grad_lay *l = &cases[i / 2];
  ac_layout_case_spec s = {.dtype = dtypes[i % 2], .mask = l->mask, .heads = l->heads, .kv_heads = l->kv_heads,
                           .dk = l->d, .dv = l->d, .sigma = 1,
                           .lay = {.kind = AC_FEAT_VARLEN, .nseq = l->n, .tq = l->tq, .tk = l->tk},
                           .v = l->v.used ? &l->v : NULL};
  const uint64_t seed = 0x677261646c6179ULL + (uint64_t)i;
  if (ac_layout_case_make(&sc->c, &s, seed, e)) return -1;
  snprintf(sc->c.generator, sizeof sc->c.generator, "suite:layout");
  if (ac_dout_generate(&sc->c, l->dout, seed, e)) {
    ac_case_free(&sc->c);
    return -1;
  }
  return 0;
}
