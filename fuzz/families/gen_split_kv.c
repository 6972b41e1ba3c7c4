/* gen_split_kv.c: family "split_kv": a few query rows (decode) against keys cut into splits as
 * split-KV (flash-decoding) kernels cut them: S = 64 ... 2048 keys, 2 to 16 splits, the last one
 * full, one key long, one short or partial. The scores are built per split: a later split's
 * maximum far above the first's (a gap of 4 to 5000 logits, past exp's range in binary32 and
 * binary16 nearly half the time), the first split far above the later ones, a staircase over the
 * splits, or every split's maximum equal; each split's maximum at its first, last or a random
 * key. V has a mean of its own per split, so a split merged with a wrong weight moves the output;
 * one case in two takes a sink at the rows' level when the kernel declares sinks (a sink added
 * per split, or merged relative to one split, shows whatever T). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "vgen.h"

enum { SK_LATER_ABOVE = 0, SK_FIRST_ABOVE, SK_STAIRS, SK_EQUAL };

/* The split structure: S keys a split, n splits, tk keys in all (within the limits). */
static void draw_splits(ac_rng *r, const ac_gen_limits *l, int64_t *S, int64_t *n, int64_t *tk)
{
  int64_t s = (int64_t)64 << ac_rng_range(r, 0, 5), m = ac_rng_range(r, 2, 16), mt = l->max_t > 2 ? l->max_t : 2;
  while (s > 1 && 2 * s > mt) s /= 2;
  if (m > mt / s) m = mt / s;
  int64_t t = s * m;
  switch (ac_rng_below(r, 4)) {
  case 0: break;                                  /* whole splits */
  case 1: t += 1; break;                          /* one key into another split */
  case 2: t -= 1; break;                          /* the last split one short */
  default: t += ac_rng_range(r, 1, s - 1); break; /* a partial last split */
  }
  *S = s, *n = m, *tk = t < 2 ? 2 : t > mt ? mt : t;
}

/* The largest |score| that Q = 1 realizes with every K element within a quarter of the range. */
static double gap_cap(const ac_problem *p)
{
  double top = 0.25 * ac_dtype_get(ac_tensor_dtype(p, 'k'))->max_finite, sc = fabs(ac_problem_scale(p));
  double per = p->dk > 1 ? (double)(p->dk - 1) : 1.0;
  return top * per * sc;
}

/* Scores of one (batch, kv head): split c at level L_c plus noise, its maximum at a drawn key. */
static void plan(const ac_problem *p, ac_rng *r, int mode, int64_t S, double gap, double noise, double *s)
{
  int64_t tk = p->tk, nspl = (tk + S - 1) / S, later = ac_rng_below(r, 2) ? nspl - 1 : ac_rng_range(r, 1, nspl - 1);
  int where = (int)ac_rng_below(r, 3);
  for (int64_t c = 0; c < nspl; c++) {
    double lev = 0;
    if (mode == SK_LATER_ABOVE) lev = c == later ? gap : c == 0 || ac_rng_below(r, 2) ? 0 : gap * ac_rng_uniform(r) / 2;
    if (mode == SK_FIRST_ABOVE) lev = c == 0 ? gap : 0;
    if (mode == SK_STAIRS) lev = gap * (double)c / (double)(nspl > 1 ? nspl - 1 : 1);
    int64_t j0 = c * S, j1 = j0 + S < tk ? j0 + S : tk;
    for (int64_t j = j0; j < j1; j++) s[j] = lev - fabs(noise * ac_rng_normal(r)) - noise;
    int64_t at = where == 0 ? j0 : where == 1 ? j1 - 1 : ac_rng_range(r, j0, j1 - 1);
    s[at] = lev + (mode == SK_EQUAL ? 0.0 : noise * ac_rng_uniform(r));
  }
}

AC_FAMILY_DECL(split_kv)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t S, nspl, tk;
  draw_splits(r, l, &S, &nspl, &tk);
  static const int64_t ds[] = {16, 32, 64, 128, 8};
  p->batch = 1;
  p->heads = p->kv_heads = ac_rng_below(r, 3) == 0 ? 2 : 1;
  if (ac_rng_below(r, 4) == 0) p->heads = 4, p->kv_heads = 1;
  p->tq = ac_rng_range(r, 1, 4);
  p->tk = tk;
  p->dk = p->dv = ds[ac_rng_below(r, 5)];
  uint32_t ok = l->masks ? l->masks : 7;
  if (p->mask == AC_MASK_CAUSAL)
    p->mask = ok & (1u << AC_MASK_CAUSAL_BR) ? AC_MASK_CAUSAL_BR : ok & 1u ? AC_MASK_NONE : p->mask;
  p->scale_is_default = 1;
  ac_clamp_shape(p, l);
  int mode = (int)ac_rng_below(r, 5);
  mode = mode == 4 ? SK_LATER_ABOVE : mode;
  double cap = gap_cap(p), hi = cap < 5000 ? cap : 5000, lo = hi < 4 ? hi : 4;
  double gap = exp(log(lo) + ac_rng_uniform(r) * (log(hi) - log(lo))), noise = 0.25 * exp2((double)ac_rng_below(r, 4));
  ac_params_int(pb, "split", S);
  ac_params_int(pb, "splits", nspl);
  ac_params_str(pb, "split_mode", (const char *[]){"later_above", "first_above", "stairs", "equal"}[mode]);
  ac_params_dbl(pb, "gap", gap);
  ac_params_dbl(pb, "noise", noise);
  if (ac_gen_alloc(c, e)) return -1;
  const ac_dtype qt = ac_tensor_dtype(p, 'q'), vt = ac_tensor_dtype(p, 'v');
  ac_counts n = ac_case_counts(c);
  for (size_t i = 0; i < (size_t)n.q; i++) ac_set(qt, c->q, i, 1.0);
  double *s = ac_xmalloc(sizeof(double) * (size_t)p->tk);
  for (int64_t kh = 0; kh < p->kv_heads; kh++) {
    plan(p, r, mode, S, gap, noise, s);
    for (int64_t j = 0; j < p->tk; j++) ac_pat_set_score(c, 0, kh, j, s[j], 1.0);
    double mu = 0; /* the mean of V over the split */
    for (int64_t j = 0; j < p->tk; j++) {
      if (j % S == 0) mu = 2 * ac_rng_normal(r);
      for (int64_t x = 0; x < p->dv; x++) ac_set(vt, c->v, ac_vidx(p, 0, kh, j, x), mu + ac_rng_normal(r));
    }
  }
  free(s);
  if (!(l->features & AC_FEAT_SINKS) || ac_rng_below(r, 2)) return 0;
  ac_vspec v;
  memset(&v, 0, sizeof v);
  v.used = AC_FEAT_SINKS;
  v.sinks = AC_VS_LEVEL;
  return ac_vfam_apply(c, r, &v, pb, e);
}
