/* suite_grad.c: the backward cases of the fixed suite (suite.h): each with a dO, judged with
 * ac_grad_check on the kernels that declare a backward, after the forward cases. Small shapes
 * that every backward defect of kernels/mutants/bwd_mutants.c meets: more than one query tile
 * (16 rows) with a partial last one, GQA and MQA groups, both causal alignments, a window with
 * sinks, a softcap (cap 2: tanh well away from linear, so a backward without its derivative
 * fails), and dO patterns (normal, rows of zeros, huge, tiny, and cancel: dP_j - D cancels). */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "dout.h"
#include "rng.h"
#include "suite.h"
#include "vgen.h"

typedef struct {
  ac_dtype t;
  int64_t tq, tk, d, dv, heads, kv_heads;
  ac_mask mask;
  const char *dout;   /* dO pattern (dout.h) */
  int window_sinks;   /* window (8, 0) and a sink per head */
} grad_spec;

static const grad_spec ci_grad[] = {
  {AC_F32, 64, 64, 32, 32, 2, 2, AC_MASK_NONE, "normal", 0},
  {AC_F32, 72, 80, 32, 24, 4, 2, AC_MASK_CAUSAL_BR, "normal", 0},
  {AC_F32, 40, 40, 16, 16, 4, 1, AC_MASK_CAUSAL, "zero-rows", 0},
  {AC_F32, 48, 48, 16, 16, 2, 1, AC_MASK_CAUSAL_BR, "normal", 1},
  {AC_F32, 33, 47, 16, 16, 2, 2, AC_MASK_NONE, "tiny", 0},
  {AC_BF16, 72, 80, 32, 24, 4, 2, AC_MASK_CAUSAL_BR, "normal", 0},
  {AC_BF16, 40, 40, 16, 16, 2, 2, AC_MASK_NONE, "huge", 0},
  {AC_F32, 24, 12, 16, 32, 2, 1, AC_MASK_CAUSAL_BR, "cancel", 0},
  {AC_BF16, 24, 12, 16, 32, 2, 1, AC_MASK_CAUSAL_BR, "cancel", 0},
  {AC_F32, 40, 48, 32, 32, 4, 2, AC_MASK_CAUSAL_BR, "normal", 0},
  {AC_BF16, 40, 48, 32, 32, 4, 2, AC_MASK_CAUSAL_BR, "normal", 0},
  {AC_F32, 48, 64, 16, 16, 4, 2, AC_MASK_CAUSAL_BR, "normal", 0},
  {AC_BF16, 48, 64, 16, 16, 4, 2, AC_MASK_CAUSAL_BR, "normal", 0},
};
#define NGRAD ((int64_t)(sizeof ci_grad / sizeof ci_grad[0]))
/* Per case: > 0, a softcap (with q scaled by 2: scores well into the cap). */
static const double ci_grad_softcap[NGRAD] = {[9] = 2, [10] = 2};
/* Per case: > 0, dropout with that p (docs/dropout.md; the kernel's forward draws the mask). */
static const double ci_grad_dropout[NGRAD] = {[11] = 0x1.5c28f6p-3, [12] = 0x1.5c28f6p-3};

int64_t ac_suite_grad_count(ac_suite_kind k)
{
  (void)k;
  return NGRAD + ac_suite_grad_layout_count();   /* then the varlen ones (suite_grad_layout.c) */
}

int ac_suite_grad_describe(int64_t i, char *name, size_t n, ac_dtype *dtype)
{
  if (i >= NGRAD) return ac_suite_grad_layout_describe(i - NGRAD, name, n, dtype);
  if (i < 0) return -1;
  const grad_spec *s = &ci_grad[i];
  snprintf(name, n, "%s-grad-%lldx%lld-d%lld-dv%lld-%s-h%lldkv%lld-do-%s%s%s%s", ac_dtype_name(s->t), (long long)s->tq,
           (long long)s->tk, (long long)s->d, (long long)s->dv, ac_mask_name(s->mask), (long long)s->heads,
           (long long)s->kv_heads, s->dout, s->window_sinks ? "-window-sinks" : "", ci_grad_softcap[i] > 0 ? "-softcap" : "",
           ci_grad_dropout[i] > 0 ? "-dropout" : "");
  if (dtype) *dtype = s->t;
  return 0;
}

int ac_suite_grad_make(int64_t i, ac_suite_case *sc, ac_err *e)
{
  if (i >= NGRAD) return ac_suite_grad_layout_make(i - NGRAD, sc, e);
  memset(sc, 0, sizeof *sc);
  if (ac_suite_grad_describe(i, sc->name, sizeof sc->name, NULL)) return ac_err_set(e, "no backward case %lld", (long long)i);
  const grad_spec *s = &ci_grad[i];
  ac_case *c = &sc->c;
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = s->t, p->mask = s->mask, p->batch = 1, p->heads = s->heads, p->kv_heads = s->kv_heads;
  p->tq = s->tq, p->tk = s->tk, p->dk = s->d, p->dv = s->dv, p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  if (ac_case_alloc(c, e)) return -1;
  const uint64_t seed = 0x6772616400ULL + (uint64_t)i;
  c->seed = seed;
  snprintf(c->generator, sizeof c->generator, "suite");
  ac_rng r;
  ac_rng_init(&r, seed, 0);
  void *t[3] = {c->q, c->k, c->v};
  for (int x = 0; x < 3; x++) {
    size_t n = ac_case_bytes(c, "qkv"[x]) / ac_dtype_size(s->t);
    double m = x == 0 && ci_grad_softcap[i] > 0 ? 2 : 1;
    for (size_t y = 0; y < n; y++) ac_store_bits(s->t, t[x], y, ac_encode_f64(s->t, m * ac_rng_normal(&r)));
  }
  if (s->window_sinks) {
    ac_vspec v = {.used = AC_FEAT_WINDOW | AC_FEAT_SINKS, .win_left = 8, .win_right = 0, .sinks = AC_VS_NORMAL};
    if (ac_vspec_apply(c, &v, seed, e)) goto fail;
  }
  if (ci_grad_dropout[i] > 0) {
    ac_vspec v = {.used = AC_FEAT_DROPOUT, .dropout_p = ci_grad_dropout[i]};
    if (ac_vspec_apply(c, &v, seed, e)) goto fail;
  }
  if (ci_grad_softcap[i] > 0) {
    ac_vspec v = {.used = AC_FEAT_SOFTCAP, .softcap = ci_grad_softcap[i]};
    if (ac_vspec_apply(c, &v, seed, e)) goto fail;
  }
  if (ac_dout_generate(c, s->dout, seed, e)) goto fail;
  return 0;
fail:
  ac_case_free(c);
  return -1;
}
