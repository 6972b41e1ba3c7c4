/* gen_bias.c: family "bias": additive bias tensors: blocks of -inf, whole rows of -inf (rows the
 * bias empties), NaN under the keys the mask or window hides, finite mask sentinels (-1e4,
 * -65504, -1e9, -FLT_MAX) on random keys, a learned relative ramp and plain noise; stored in
 * a dtype other than the case's half the time, and broadcast over batch or heads: a bias added
 * after the max, -inf rows turned into NaN (inf - inf), NaN read from hidden keys, a sentinel
 * that overflows when the kernel converts the bias, broadcast strides read as dense. Without
 * non-finite values (--no-nonfinite) the -inf and NaN patterns become sentinels. */
#include "config.h"
#include <float.h>
#include <math.h>
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(bias)
{
  static const double sentinels[] = {-1e4, -65504, -1e9, -FLT_MAX};
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  ac_vspec v = {0};
  v.used = AC_FEAT_BIAS;
  v.bias = (int)ac_rng_below(r, 6);
  if (l->no_nonfinite && (v.bias == AC_VB_NEGINF_BLOCKS || v.bias == AC_VB_NEGINF_ROWS || v.bias == AC_VB_NAN_MASKED))
    v.bias = AC_VB_SENTINEL;
  if (v.bias == AC_VB_NAN_MASKED) {
    /* NaN needs keys that the mask (or a window) hides */
    ac_mask m = ac_rng_below(r, 2) ? AC_MASK_CAUSAL : AC_MASK_CAUSAL_BR;
    if (!l->masks || (l->masks & (1u << m))) p->mask = m;
    else if (p->mask == AC_MASK_NONE && (l->features & AC_FEAT_WINDOW)) {
      v.used |= AC_FEAT_WINDOW;
      v.win_left = ac_rng_range(r, 0, 33);
      v.win_right = 0;
    }
    if (p->tk < 2) p->tk = ac_draw_tile_len(r, 300) + 1;
  }
  ac_clamp_shape(p, l);
  ac_vfam_clamp_pairs(p, l);
  ac_dtype bt = ac_vfam_bias_dtype(r, l, p->dtype);
  v.bias_dtype = (int)bt + 1;
  v.bias_scale = v.bias == AC_VB_NORMAL ? exp2((double)ac_rng_range(r, -4, 4)) : v.bias == AC_VB_SLOPE ? (double)ac_rng_range(r, 1, 64) : 1;
  if (v.bias == AC_VB_SENTINEL) {
    /* a sentinel the bias dtype holds as a finite value (-FLT_MAX is -inf in binary16) */
    double top = ac_dtype_get(bt)->max_finite;
    int fit = 0;
    while (fit < 4 && -sentinels[fit] <= top) fit++;
    v.bias_scale = fit ? sentinels[ac_rng_below(r, (uint64_t)fit)] : -top;
  }
  v.bias_bcast_b = ac_rng_below(r, 3) == 0;
  v.bias_bcast_h = ac_rng_below(r, 3) == 0;
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
