/* gen_long_t.c: family "long_t": long key sequences up to the campaign's max T: mostly few
 * queries (decode), sometimes tq = tk (prefill; the oracle then checks a row sample). Every
 * score pattern (normal, ties, large V, late and creeping maxima, a dominant key, finite
 * sentinels) is drawn here too, its structure at the edges of a block of 64 to 4096 keys, and
 * half the lengths are a multiple of that block, one more or one less. */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(long_t)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  p->batch = 1;
  p->heads = p->kv_heads = 1;
  if (ac_rng_below(r, 3) == 0) { p->kv_heads = 1; p->heads = 2; }
  int64_t lo = 1024 < l->max_t ? 1024 : l->max_t;
  double lt = log((double)lo) + ac_rng_uniform(r) * (log((double)l->max_t) - log((double)lo));
  p->tk = (int64_t)exp(lt);
  if (ac_rng_below(r, 2)) p->tk += ac_rng_range(r, -1, 1);
  if (p->tk < 1) p->tk = 1;
  if (p->tk > l->max_t) p->tk = l->max_t;
  /* prefill (tq = tk) costs the kernel tk^2 d: kept to 4096 so a CPU kernel answers well
   * inside the time limit; decode-like rows take the full length */
  int prefill = ac_rng_below(r, 4) == 0;
  if (prefill && p->tk > 4096) p->tk = 4096;
  int64_t block = ac_draw_block(r, 6, 12, p->tk);
  if (ac_rng_below(r, 2) && p->tk >= block) {
    p->tk = (p->tk / block) * block + ac_rng_range(r, -1, 1);
    if (p->tk > l->max_t) p->tk = l->max_t;
  }
  int pat = (int)ac_rng_below(r, AC_NPAT);
  p->tq = prefill ? p->tk : ac_rng_range(r, pat == AC_PAT_SENTINEL_MASKED ? 2 : 1, 8);
  if (!prefill && p->mask == AC_MASK_CAUSAL) p->mask = AC_MASK_CAUSAL_BR;
  if (pat == AC_PAT_SENTINEL_MASKED && p->mask == AC_MASK_NONE) p->mask = AC_MASK_CAUSAL_BR;
  if (l->masks && !(l->masks & (1u << p->mask))) p->mask = ac_draw_mask(r, l);
  if (p->dk > 128) p->dk = 128;
  if (p->dv > 128) p->dv = 128;
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_clamp_shape(p, l);
  while (block > 64 && block > p->tk) block /= 2;
  /* masked keys need a mask that hides some: otherwise the sentinel sits in the band */
  if (pat == AC_PAT_SENTINEL_MASKED && !ac_pat_has_masked(p))
    pat = AC_PAT_SENTINEL_BAND;
  ac_params_int(pb, "prefill", prefill);
  if (ac_gen_alloc(c, e)) return -1;
  return ac_pat_apply(c, r, pat, block, pb);
}
