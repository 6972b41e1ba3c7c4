/* gen_descale.c: family "descale": FlashAttention 3's per (batch, kv head) descales of Q, K and V:
 * moderate ones (0.25 to 1.25), tiny ones (2^-12: scores collapse toward ties) and huge ones
 * (2^6: scores and outputs grow by up to 2^14): a descale applied to the wrong tensor or head,
 * applied after the max, left out of V or of the LSE, or an output overflow it causes. */
#include "config.h"
#include "fuzz.h"
#include "vgen.h"

AC_FAMILY_DECL(descale)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  if (p->dtype == AC_F64) {   /* descales belong to narrower tensors (variants.h) */
    ac_gen_limits narrow = *l;
    narrow.dtypes = (l->dtypes ? l->dtypes : 1u << AC_F32) & ~(1u << AC_F64);
    if (!narrow.dtypes) return ac_err_set(e, "family descale: the kernel takes only fp64, which has no descales");
    p->dtype = ac_draw_dtype(r, &narrow);
  }
  ac_clamp_shape(p, l);
  ac_vspec v = {0};
  v.used = AC_FEAT_DESCALE;
  v.descale = (int)ac_rng_below(r, 3);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}

int ac_gen_descale_usable(const ac_gen_limits *l)
{
  return (l->dtypes ? l->dtypes : 1u << AC_F32) & ~(1u << AC_F64) ? 1 : 0;
}
