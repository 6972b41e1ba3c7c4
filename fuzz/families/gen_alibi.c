/* gen_alibi.c: family "alibi": ALiBi slopes (geometric per head, scaled up to 64) over long key
 * sequences, per head or per (batch, head), with decode rows (tq small) and prefill: distance
 * computed from the wrong corner (top-left instead of bottom-right), slopes of the wrong head
 * or batch, int overflow of slope x distance, far keys underflowing to 0 before the max. */
#include "config.h"
#include <math.h>
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(alibi)
{
  static const double maxes[] = {0.0625, 0.5, 1, 8, 64};
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t cap = l->max_t < 4096 ? l->max_t : 4096;
  int64_t lo = cap < 256 ? cap : 256;
  p->tk = (int64_t)exp(log((double)lo) + ac_rng_uniform(r) * (log((double)cap) - log((double)lo)));
  if (p->tk < 1) p->tk = 1;
  int prefill = ac_rng_below(r, 3) == 0;
  if (prefill && p->tk > 1024) p->tk = 1024;   /* tq = tk costs the kernel tk^2 d */
  p->tq = prefill ? p->tk : ac_rng_range(r, 1, 8);
  int per_batch = ac_rng_below(r, 2) != 0;
  if (per_batch && p->batch < 2) p->batch = 2;
  if (p->heads < 2 && ac_rng_below(r, 2)) {
    p->heads = 4;
    p->kv_heads = ac_rng_below(r, 2) ? 4 : 1;
  }
  if (p->dk > 128) p->dk = 128;
  if (p->dv > 128) p->dv = 128;
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_clamp_shape(p, l);
  ac_vspec v = {0};
  v.used = AC_FEAT_ALIBI;
  v.alibi_max = maxes[ac_rng_below(r, 5)];
  v.alibi_per_batch = per_batch;
  ac_params_int(pb, "prefill", prefill);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
