/* gen_variant_mix.c: family "variant_mix": variants together as production models use them:
 * a causal sliding window with sinks (gpt-oss), a softcap of 50 with a sliding window (Gemma 2),
 * a sliding window alone (Mistral), ALiBi with a padding-style boolean mask and a bias (MPT,
 * BLOOM with masks), ALiBi with a window; only the combinations the kernel declares: features
 * that are right alone and wrong together (the window applied before the softcap, sinks dropped
 * on windowed tiles, ALiBi distance and bias from different corners, empty rows of the window
 * and the mask together). */
#include "config.h"
#include "fuzz.h"
#include "vgen.h"

static const uint32_t combos[] = {
  AC_FEAT_WINDOW | AC_FEAT_SINKS,
  AC_FEAT_SOFTCAP | AC_FEAT_WINDOW,
  AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_BOOL_MASK,
  AC_FEAT_ALIBI | AC_FEAT_WINDOW,
  AC_FEAT_SOFTCAP | AC_FEAT_WINDOW | AC_FEAT_SINKS,
  AC_FEAT_BIAS | AC_FEAT_BOOL_MASK | AC_FEAT_SINKS,
};
#define NCOMBO ((int)(sizeof combos / sizeof combos[0]))

static int admitted(uint32_t combo, const ac_gen_limits *l) { return (combo & ~l->features) == 0; }

int ac_gen_variant_mix_usable(const ac_gen_limits *l)
{
  for (int i = 0; i < NCOMBO; i++)
    if (admitted(combos[i], l)) return 1;
  return 0;
}

AC_FAMILY_DECL(variant_mix)
{
  int ok[NCOMBO], n = 0;
  for (int i = 0; i < NCOMBO; i++)
    if (admitted(combos[i], l)) ok[n++] = i;
  if (!n) return ac_err_set(e, "variant_mix: the limits admit none of its feature combinations");
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t cap = l->max_t < 1024 ? l->max_t : 1024;
  if (ac_rng_below(r, 2)) {
    p->tk = ac_draw_tile_len(r, cap);
    p->tq = ac_rng_below(r, 4) ? p->tk : ac_rng_range(r, 1, 8);
  }
  if (!l->masks || (l->masks & (1u << AC_MASK_CAUSAL_BR))) p->mask = AC_MASK_CAUSAL_BR;
  ac_clamp_shape(p, l);
  ac_vspec v = {0};
  v.used = combos[ok[ac_rng_below(r, (uint64_t)n)]];
  static const int64_t wins[] = {0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129};
  v.win_left = wins[ac_rng_below(r, sizeof wins / sizeof wins[0])];
  v.win_right = ac_rng_below(r, 4) ? 0 : -1;
  v.win_top_left = ac_rng_below(r, 4) == 0;
  v.softcap = ac_rng_below(r, 2) ? 50 : 30;
  v.alibi_max = ac_rng_below(r, 2) ? 1 : 8;
  v.alibi_per_batch = (int)ac_rng_below(r, 2);
  v.bias = ac_rng_below(r, 2) ? AC_VB_NORMAL : AC_VB_SLOPE;
  v.bias_scale = (double)ac_rng_range(r, 1, 8);
  v.bias_dtype = (int)ac_vfam_bias_dtype(r, l, p->dtype) + 1;
  v.bias_bcast_b = v.bias_bcast_h = (int)ac_rng_below(r, 2);
  v.bmask = ac_rng_below(r, 2) ? AC_VM_RANDOM : (int)ac_rng_below(r, 4);
  v.mask_bcast_h = (int)ac_rng_below(r, 2);
  v.sinks = (int)ac_rng_below(r, 3);
  if (v.used & (AC_FEAT_BIAS | AC_FEAT_BOOL_MASK)) ac_vfam_clamp_pairs(p, l);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
