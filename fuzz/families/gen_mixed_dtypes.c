/* gen_mixed_dtypes.c: family "mixed_dtypes": Q, K, V and O each in its own dtype (the
 * combinations real kernels take: binary32 Q and O with f16 or bf16 K and V, fp8 Q, K, V with a
 * bf16, f16 or f32 O), values at each tensor's format extremes (its largest finite values,
 * subnormals, zeros: ac_valdist's classes in the tensor's own dtype), sometimes with a window or
 * descales: K or V decoded with the wrong dtype, O written in the compute dtype, a range or
 * subnormal check done in the wrong format. */
#include "config.h"
#include "fuzz.h"
#include "variants.h"
#include "vgen.h"

static const ac_dtype combos[][5] = {
  {AC_F32, AC_F32, AC_F16, AC_F16, AC_F32},    {AC_F32, AC_F32, AC_BF16, AC_BF16, AC_F32},
  {AC_F32, AC_F32, AC_F16, AC_BF16, AC_F32},   {AC_F32, AC_F32, AC_BF16, AC_F16, AC_F32},
  {AC_E4M3, AC_E4M3, AC_E4M3, AC_E4M3, AC_BF16}, {AC_E4M3, AC_E4M3, AC_E4M3, AC_E4M3, AC_F16},
  {AC_E4M3, AC_E4M3, AC_E4M3, AC_E4M3, AC_F32},  {AC_E5M2, AC_E5M2, AC_E5M2, AC_E5M2, AC_BF16},
  {AC_E5M2, AC_E5M2, AC_E5M2, AC_E5M2, AC_F16},  {AC_E5M2, AC_E5M2, AC_E5M2, AC_E5M2, AC_F32},
};
#define NCOMBO ((int)(sizeof combos / sizeof combos[0]))

const ac_dtype (*ac_mixed_dtype_combos(int *n))[5]
{
  *n = NCOMBO;
  return combos;
}

static uint32_t allowed(const ac_gen_limits *l) { return l->dtypes ? l->dtypes : 1u << AC_F32; }

int ac_gen_mixed_dtypes_usable(const ac_gen_limits *l)
{
  for (int i = 0; i < NCOMBO; i++)
    if (allowed(l) >> combos[i][0] & 1u) return 1;
  return 0;
}

/* A distribution at the extremes of dtype t: zeros, subnormals and values near the largest
 * finite value mixed into a normal or banded base. */
static void extreme_valdist(ac_rng *r, ac_dtype t, ac_valdist *d)
{
  ac_draw_valdist(r, t, d);
  d->p_zero = 0.05 * (double)ac_rng_below(r, 3);
  d->p_sub = 0.1 * (double)ac_rng_below(r, 4);
  d->p_big = 0.05 * (double)ac_rng_below(r, 3);
}

AC_FAMILY_DECL(mixed_dtypes)
{
  ac_problem *p = &c->p;
  int pick[NCOMBO], n = 0;
  for (int i = 0; i < NCOMBO; i++)
    if (allowed(l) >> combos[i][0] & 1u) pick[n++] = i;
  if (!n) return ac_err_set(e, "family mixed_dtypes: the kernel takes none of f32, e4m3, e5m2");
  const ac_dtype *cb = combos[pick[ac_rng_below(r, (uint64_t)n)]];
  ac_gen_limits only = *l;
  only.dtypes = 1u << cb[0];
  ac_draw_shape(r, &only, p);
  p->dtype = cb[0];
  ac_clamp_shape(p, l);
  if (ac_features_set_dtypes(p, cb + 1, e) || ac_gen_alloc(c, e)) return -1;
  ac_valdist dq, dk, dv;
  extreme_valdist(r, p->f.qd, &dq);
  extreme_valdist(r, p->f.kd, &dk);
  extreme_valdist(r, p->f.vd, &dv);
  ac_params_str(pb, "dtype_q", ac_dtype_name(cb[1]));
  ac_params_str(pb, "dtype_k", ac_dtype_name(cb[2]));
  ac_params_str(pb, "dtype_v", ac_dtype_name(cb[3]));
  ac_params_str(pb, "dtype_o", ac_dtype_name(cb[4]));
  ac_params_valdist(pb, "q", &dq);
  ac_params_valdist(pb, "k", &dk);
  ac_params_valdist(pb, "v", &dv);
  ac_fill_qkv(c, r, &dq, &dk, &dv);
  /* the window and descales of FlashAttention's mixed paths, where the kernel declares them */
  ac_vspec v = {0};
  if ((l->features & AC_FEAT_WINDOW) && ac_rng_below(r, 4) == 0)
    v.used |= AC_FEAT_WINDOW, v.win_left = (int64_t)ac_rng_below(r, 80), v.win_right = ac_rng_below(r, 2) ? 0 : -1;
  if ((l->features & AC_FEAT_DESCALE) && ac_rng_below(r, 4) == 0)
    v.used |= AC_FEAT_DESCALE, v.descale = (int)ac_rng_below(r, 3);
  return ac_vfam_apply(c, r, &v, pb, e);
}
