/* gen_index_overflow.c: family "index_overflow": the largest tensors the campaign allows, up to
 * and past 2^31 elements when --max-elems permits (GPU kernels: 32-bit offsets wrap), with
 * values from a cheap seeded pattern so that even 2^31 elements draw in seconds. The oracle
 * checks a row sample (first, last and tile-edge rows of every head, plus random rows). */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(index_overflow)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  p->mask = ac_draw_mask(r, l);
  int64_t cap = l->max_elems > 0 ? l->max_elems : ((int64_t)1 << 22);
  int64_t want = (int64_t)1 << 31;
  int64_t target = cap < want + ((int64_t)1 << 20) ? cap : want + ((int64_t)1 << 20);
  /* mode 0: long K/V (their offsets pass 2^31); mode 1: very many query heads over one kv
   * head (the offsets of Q and O pass 2^31). Few queries keep the kernel's cost linear. */
  int mode = (int)ac_rng_below(r, 2);
  p->dk = p->dv = ac_rng_below(r, 2) ? 64 : 128;
  p->batch = 1;
  if (mode == 0) {
    p->heads = p->kv_heads = ac_rng_range(r, 1, 2);
    p->tq = ac_rng_range(r, 1, 16);
    p->tk = target / (p->kv_heads * p->dk);
    if (l->max_t > 0 && p->tk > l->max_t) {
      p->tk = l->max_t;
      p->kv_heads = target / (p->tk * p->dk);
      if (p->kv_heads < 1) p->kv_heads = 1;
      p->heads = p->kv_heads;
    }
  } else {
    p->kv_heads = 1;
    p->tq = ac_rng_range(r, 1, 4);
    p->tk = ac_rng_range(r, 16, 256);
    p->heads = target / (p->tq * p->dk);
    if (p->heads < 1) p->heads = 1;
  }
  if (p->tk < 1) p->tk = 1;
  if (p->mask == AC_MASK_CAUSAL && p->tq < p->tk) p->mask = AC_MASK_CAUSAL_BR;
  if (l->masks && !(l->masks & (1u << p->mask))) p->mask = ac_draw_mask(r, l);
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_clamp_shape(p, l);
  ac_params_int(pb, "mode", mode);
  ac_params_int(pb, "target_elems", target);
  if (ac_gen_alloc(c, e)) return -1;
  ac_counts n = ac_case_counts(c);
  /* pattern values: small multiples of 1/8 in [-2, 2), exact in every dtype but e4m3/e5m2
   * (rounded there), eight per 64-bit draw */
  void *base[3] = {c->q, c->k, c->v};
  int64_t cnt[3] = {n.q, n.k, n.v};
  for (int w = 0; w < 3; w++) {
    uint64_t bits = 0;
    for (int64_t i = 0; i < cnt[w]; i++) {
      if ((i & 7) == 0) bits = ac_rng_next(r);
      int v = (int)((bits >> (8 * (i & 7))) & 31) - 16;
      ac_set(p->dtype, base[w], (size_t)i, v * 0.125);
    }
  }
  return 0;
}
