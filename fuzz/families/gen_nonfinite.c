/* gen_nonfinite.c: family "nonfinite": NaN or inf stored in masked keys/values (they must not
 * reach the output) or in visible positions (the oracle's rule table decides). */
#include "config.h"
#include <math.h>
#include "fuzz.h"

AC_FAMILY_DECL(nonfinite)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int masked_mode = ac_rng_below(r, 3) != 0;
  if (masked_mode) {
    ac_mask m = ac_rng_below(r, 2) ? AC_MASK_CAUSAL : AC_MASK_CAUSAL_BR;
    if (!l->masks || (l->masks & (1u << m))) p->mask = m;
    if (p->tk < 2) p->tk = ac_rng_range(r, 2, 40);
    if (ac_rng_below(r, 2)) p->tq = p->tk;
  }
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_dtype t = p->dtype;
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(c, r, &d, &d, &d);
  if (l->no_nonfinite) {
    ac_params_str(pb, "what", "finite");
    return 0;
  }
  static const char *what[] = {"nan", "+inf", "-inf"};
  int w = (int)ac_rng_below(r, 3);
  double bad = w == 0 ? NAN : w == 1 ? INFINITY : -INFINITY;
  if (t == AC_E4M3) bad = NAN;   /* no infinity */
  ac_params_str(pb, "what", what[w]);
  ac_params_int(pb, "masked", masked_mode);
  if (masked_mode && p->mask != AC_MASK_NONE) {
    /* keys masked for at least one row: causal j > i (top-left) or j > i + tk - tq */
    int in_v = (int)ac_rng_below(r, 2);
    int64_t nbad = ac_rng_range(r, 1, 3);
    ac_params_int(pb, "in_v", in_v);
    for (int64_t s = 0; s < nbad; s++) {
      int64_t j = ac_rng_below(r, 2) ? p->tk - 1 : ac_rng_range(r, 1, p->tk - 1);
      for (int64_t b = 0; b < p->batch; b++)
        for (int64_t kh = 0; kh < p->kv_heads; kh++) {
          if (in_v) ac_set(t, c->v, ac_vidx(p, b, kh, j, (int64_t)ac_rng_below(r, (uint64_t)p->dv)), bad);
          else ac_set(t, c->k, ac_kidx(p, b, kh, j, (int64_t)ac_rng_below(r, (uint64_t)p->dk)), bad);
        }
    }
  } else {
    int where = (int)ac_rng_below(r, 3);   /* 0 q, 1 k, 2 v */
    ac_params_int(pb, "visible_in", where);
    ac_counts n = ac_case_counts(c);
    int64_t cnt = where == 0 ? n.q : where == 1 ? n.k : n.v;
    size_t i = (size_t)ac_rng_below(r, (uint64_t)cnt);
    ac_set(t, where == 0 ? c->q : where == 1 ? c->k : c->v, i, bad);
  }
  return 0;
}
