/* gen_sentinel.c: family "sentinel": finite sentinels. Masked keys scoring far above the visible
 * ones (up to the working format's largest finite value): a kernel that masks by adding -1e4 or
 * -65504 instead of -inf lets them win. Rows whose visible maximum sits where e^(s - sentinel)
 * becomes subnormal, zero or has an overflowing reciprocal: a running maximum started at a
 * finite sentinel never moves and the row sum underflows. Lengths around tiles of 16 to 128. */
#include "config.h"
#include "fuzz.h"

AC_FAMILY_DECL(sentinel)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int masked = ac_rng_below(r, 2) == 0;
  if (masked) {
    ac_mask m = ac_rng_below(r, 2) ? AC_MASK_CAUSAL : AC_MASK_CAUSAL_BR;
    if (!l->masks || (l->masks & (1u << m))) p->mask = m;
    if (p->tk < 2) p->tk = ac_draw_tile_len(r, 300) + 1;
    if (p->tq < 2) p->tq = ac_rng_below(r, 2) ? p->tk : ac_rng_range(r, 2, 8);
  }
  ac_clamp_shape(p, l);
  int64_t block = ac_draw_block(r, 4, 7, p->tk);
  if (masked && !ac_pat_has_masked(p))
    masked = 0;
  if (ac_gen_alloc(c, e)) return -1;
  return ac_pat_apply(c, r, masked ? AC_PAT_SENTINEL_MASKED : AC_PAT_SENTINEL_BAND, block, pb);
}
