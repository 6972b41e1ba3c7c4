/* gen_tq_ne_tk.c: family "tq_ne_tk": tq != tk both ways, mostly with a causal mask, where
 * off-by-one and alignment (top-left vs bottom-right) defects live. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(tq_ne_tk)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t cap = l->max_t < 512 ? l->max_t : 512;
  if (cap < 2) cap = 2;
  p->tq = ac_draw_len(r, cap);
  /* decoding: one to three new tokens against a longer cache, where kernels take a special path */
  if (ac_rng_below(r, 4) == 0) p->tq = 1 + (int64_t)ac_rng_below(r, 3);
  do p->tk = ac_draw_len(r, cap); while (p->tk == p->tq && cap > 1 && ac_rng_below(r, 16));
  if (p->tk == p->tq) p->tk = p->tq + 1 <= cap ? p->tq + 1 : p->tq - 1 > 0 ? p->tq - 1 : p->tq;
  if (ac_rng_below(r, 5)) {
    ac_mask m = ac_rng_below(r, 2) ? AC_MASK_CAUSAL : AC_MASK_CAUSAL_BR;
    if (!l->masks || (l->masks & (1u << m))) p->mask = m;
  }
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}
