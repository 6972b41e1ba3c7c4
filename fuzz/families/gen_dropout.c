/* gen_dropout.c: family "dropout": dropout with the kernel's own keep-mask (docs/dropout.md), drawn
 * only for kernels that declare it. Drop probabilities: FlashAttention's 0.17, 0.5 (1/(1-p) = 2: the
 * outputs' ties survive), 0.9 (rows keeping few keys, a kept key's weight times 10), 1 - 2^-k (a
 * large 1/(1-p)), 0 (nothing dropped), and a random binary32; every value pattern of the variant
 * families; several heads and batches one time in two (what the mask's structure tests need:
 * a mask repeated over heads or batches); a window, a softcap, ALiBi or sinks the kernel also
 * declares one time in four. Defects: 1/(1-p) left out, applied twice or to the row sum, the mask
 * applied before the normalization (the kept weights renormalized), the mask of the wrong head or
 * row, a mask repeated across heads, batches or tiles, a kept fraction of the wrong p. */
#include "config.h"
#include <math.h>
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(dropout)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  ac_vspec v = {0};
  v.used = AC_FEAT_DROPOUT;
  static const double ps[] = {0x1.5c28f6p-3, 0.5, 0x1.ccccccp-1, 0x1.fffcp-1, 0.0};
  int k = (int)ac_rng_below(r, 6);
  v.dropout_p = k < 5 ? ps[k] : (double)(float)ac_rng_uniform(r);
  if (ac_rng_below(r, 2)) {   /* heads and batches for the structure tests */
    p->batch = ac_rng_range(r, 1, 3);
    p->kv_heads = ac_rng_range(r, 1, 4);
    p->heads = p->kv_heads * ac_rng_range(r, 1, 2);
  }
  static const uint32_t with[] = {AC_FEAT_WINDOW, AC_FEAT_SOFTCAP, AC_FEAT_ALIBI, AC_FEAT_SINKS};
  uint32_t w = with[ac_rng_below(r, 4)];
  if (ac_rng_below(r, 4) == 0 && (l->features & w)) {
    v.used |= w;
    v.win_left = ac_rng_range(r, 0, 40), v.win_right = ac_rng_below(r, 2) ? -1 : 0;
    v.softcap = 1 + 29 * ac_rng_uniform(r);
    v.alibi_max = 0.5;
    v.sinks = (int)ac_rng_below(r, 4);
  }
  ac_clamp_shape(p, l);
  ac_vfam_clamp_pairs(p, l);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
