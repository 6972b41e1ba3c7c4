/* patterns.c: score patterns placed at the block and split sizes kernels use (powers of two
 * from 64 to 4096 and the remainders around them): late and creeping maxima, dominant keys,
 * ties, large V and finite sentinels. Scores are planned key by key and realized with Q = 1:
 * key j gets the values whose dot product with the ones vector, times the scale, is s_j. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "fuzz.h"

static const char *const pat_names[AC_NPAT] = {"normal", "ties", "large_v", "late_max", "creeping_max",
                                               "dominant", "sentinel_masked", "sentinel_band"};

const char *ac_pattern_name(int pat) { return pat >= 0 && pat < AC_NPAT ? pat_names[pat] : "?"; }

int64_t ac_draw_block(ac_rng *r, int lg_lo, int lg_hi, int64_t tk)
{
  int hi = lg_hi;
  while (hi > lg_lo && ((int64_t)1 << hi) > tk) hi--;
  return (int64_t)1 << ac_rng_range(r, lg_lo, hi);
}

int64_t ac_draw_edge_key(ac_rng *r, int64_t tk, int64_t block)
{
  int64_t nb = tk / block;
  if (nb < 1 || ac_rng_below(r, 5) == 0) return tk - 1;   /* the remainder's last key */
  int64_t m = ac_rng_range(r, 1, nb);
  int64_t j = ac_rng_below(r, 2) ? m * block - 1 : m * block;
  return j < tk ? j : tk - 1;
}

int64_t ac_row_visible(const ac_problem *p, int64_t i)
{
  int64_t lim = p->mask == AC_MASK_CAUSAL ? i + 1 : p->mask == AC_MASK_CAUSAL_BR ? i + p->tk - p->tq + 1 : p->tk;
  return lim < 0 ? 0 : lim > p->tk ? p->tk : lim;
}

static int64_t first_seeing_row(const ac_problem *p)
{
  int64_t i0 = 0;
  while (i0 + 1 < p->tq && ac_row_visible(p, i0) < 1) i0++;
  return i0;
}

int ac_pat_has_masked(const ac_problem *p)
{
  int64_t lim = ac_row_visible(p, first_seeing_row(p));
  return lim >= 1 && lim < p->tk;
}

/* The largest |score| Q = 1 can reach: |scale| dk K with K within half the dtype's range and
 * the raw product dk K within a quarter of binary32's range (a correct fp32 kernel holds it;
 * binary64's for f64). */
static double score_reach(const ac_problem *p)
{
  double top = 0.5 * ac_dtype_get(p->dtype)->max_finite;
  double lim = p->dtype == AC_F64 ? 0.25 * DBL_MAX : 0.25 * FLT_MAX;   /* raw product dk K */
  double raw = top > lim / (double)p->dk ? lim : (double)p->dk * top;
  double r = fabs(ac_problem_scale(p)) * raw;
  return r < 0.25 * DBL_MAX ? r : 0.25 * DBL_MAX;
}

void ac_pat_set_score(ac_case *c, int64_t b, int64_t kh, int64_t j, double s, double q_last)
{
  const ac_problem *p = &c->p;
  ac_dtype t = p->dtype;
  double sc = ac_problem_scale(p);
  double raw = s / (sc != 0 ? sc : 1.0), acc = 0;
  if (p->dk == 1) {
    ac_set(t, c->k, ac_kidx(p, b, kh, j, 0), raw / q_last);
    return;
  }
  /* dk - 1 channels against q = 1, each taking an equal part of what is left, so that only the
   * rounding of the last of them remains (half an ulp of raw / dk); the last channel, against
   * q = q_last, takes that remainder */
  for (int64_t x = 0; x + 1 < p->dk; x++) {
    size_t i = ac_kidx(p, b, kh, j, x);
    ac_set(t, c->k, i, (raw - acc) / (double)(p->dk - 1 - x));
    acc += ac_get(t, c->k, i);
  }
  ac_set(t, c->k, ac_kidx(p, b, kh, j, p->dk - 1), (raw - acc) / q_last);
}

/* Q's last channel: 2^-prec scales the remainder (at most half an ulp of the other channels'
 * values) back to their magnitude, so that scores come out 2^-prec times finer than one
 * channel's precision. */
static double last_channel(const ac_problem *p)
{
  return p->dk == 1 ? 1.0 : ldexp(1.0, -ac_dtype_get(p->dtype)->prec);
}

/* Finite sentinels. masked: the keys masked for the first row that has visible keys score
 * gap above its visible maximum, gap past 1e4 or 65504 (additive mask values) or log-uniform up
 * to the working format's largest finite value (what Q = 1 can reach). band: every visible
 * score at sentinel + d, d at an edge of the band where e^d is subnormal, zero or has an
 * overflowing reciprocal in the working format (binary32, binary16 for f16 cases one time in
 * four, binary64 for f64), sentinel one of the finite values kernels start the maximum at. */
static void plan_sentinel(const ac_case *c, ac_rng *r, int masked, int64_t edge, double *s, ac_params *pb)
{
  const ac_problem *p = &c->p;
  double reach = score_reach(p);
  if (masked) {
    int64_t lim = ac_row_visible(p, first_seeing_row(p));
    double vmax = -INFINITY;
    for (int64_t j = 0; j < lim; j++) {
      s[j] = 2.0 * ac_rng_normal(r);
      if (s[j] > vmax) vmax = s[j];
    }
    double room = reach - fabs(vmax) - 16.0, gap;
    int anchor = (int)ac_rng_below(r, 3);
    if (anchor < 2) gap = (anchor ? 65504.0 : 1e4) * (1.0 + ac_rng_uniform(r)) + 16.0;
    else gap = exp(log(1e4) + ac_rng_uniform(r) * (log(room > 2e4 ? room : 2e4) - log(1e4)));
    if (gap > room) gap = room > 16.0 ? room : 16.0;
    int all = (int)ac_rng_below(r, 2);   /* every masked key, or the block edges and the last key */
    for (int64_t j = lim; j < p->tk; j++)
      s[j] = (all || j == edge || j == p->tk - 1 || ac_rng_below(r, 8) == 0) ? vmax + gap : 2.0 * ac_rng_normal(r);
    ac_params_int(pb, "masked_from", lim);
    ac_params_dbl(pb, "sentinel_gap", gap);
    return;
  }
  static const double sentinels[] = {-1e4, -3e4, -5e4, -65504.0, -1e5, -1e6};
  ac_dtype w = p->dtype == AC_F64 ? AC_F64 : (p->dtype == AC_F16 && ac_rng_below(r, 4) == 0) ? AC_F16 : AC_F32;
  const ac_dtype_info *wi = ac_dtype_get(w);
  double edges[3] = {-log(wi->max_finite), (double)wi->ieee_emin * M_LN2, (double)(wi->ieee_emin - wi->prec + 1) * M_LN2};
  double d = edges[ac_rng_below(r, 3)] + 3.0 * ac_rng_uniform(r) - 1.5;
  /* sentinels Q = 1 reaches, realized to 0.1 logit: the last channel leaves about
   * |s| 2^(1 - 2 prec) / (dk - 1) (|s| 2^(1 - prec) with one channel) */
  int prec = ac_dtype_get(p->dtype)->prec;
  double fine = p->dk > 1 ? ldexp(0.1, 2 * prec - 1) * (double)(p->dk - 1) : ldexp(0.1, prec - 1);
  double most = reach < fine ? reach : fine;
  int n = 0;
  while (n < 6 && -sentinels[n] + 16.0 - d < most) n++;
  double sent = n > 0 ? sentinels[ac_rng_below(r, (uint64_t)n)] : -0.8 * most - d;
  double spread = ac_rng_below(r, 2) ? 0.0 : 2.0 * ac_rng_uniform(r);
  for (int64_t j = 0; j < p->tk; j++) s[j] = sent + d - spread * ac_rng_uniform(r);
  s[edge] = sent + d;
  ac_params_str(pb, "working", ac_dtype_name(w));
  ac_params_dbl(pb, "sentinel", sent);
  ac_params_dbl(pb, "band_offset", d);
}

/* The scores of one (batch, kv head) for a score pattern, the structure at key edge. */
static void plan_scores(const ac_case *c, ac_rng *r, int pat, int64_t block, int64_t edge, double *s, ac_params *pb)
{
  const ac_problem *p = &c->p;
  int64_t tk = p->tk;
  if (pat == AC_PAT_LATE || pat == AC_PAT_CREEP) {
    /* a staircase: the maximum moves at the first (or last) key of every block, by whole logits
     * or creeping by 2^-24 to 2^-6 a block; one case in two jumps again at the last key */
    double rise = exp2(2.0 + 9.0 * ac_rng_uniform(r));
    if (p->dtype == AC_F16 && rise > 5000) rise = 5000;
    double nb = (double)(tk / block + 1);
    double step = pat == AC_PAT_CREEP ? exp2(-24.0 + 18.0 * ac_rng_uniform(r)) : rise / nb;
    int at_last = (int)ac_rng_below(r, 2), tail = (int)ac_rng_below(r, 2);
    double off = -step * nb / 2;
    for (int64_t j = 0; j < tk; j++)
      s[j] = off + step * (double)((j + at_last) / block) - 0.25 * step * ac_rng_uniform(r) * (j % block != 0);
    if (tail) s[tk - 1] = off + step * (nb + 1);
    ac_params_dbl(pb, "step", step);
    ac_params_int(pb, "jump_at_block_end", at_last);
    return;
  }
  if (pat == AC_PAT_SENTINEL_MASKED || pat == AC_PAT_SENTINEL_BAND) {
    plan_sentinel(c, r, pat == AC_PAT_SENTINEL_MASKED, edge, s, pb);
    return;
  }
  /* dominant, ties, large V: scores around 0, the structure on the block edges */
  double gap = pat == AC_PAT_TIES ? 2.0 + 4.0 * ac_rng_uniform(r) : 5.0 + 95.0 * ac_rng_uniform(r) * ac_rng_uniform(r);
  for (int64_t j = 0; j < tk; j++) s[j] = ac_rng_normal(r);
  if (pat == AC_PAT_TIES) {
    /* the maximum repeated on every block edge (first and last key of each block) */
    for (int64_t j = 0; j < tk; j++)
      if (j % block == 0 || j % block == block - 1 || j == tk - 1) s[j] = 3.0 + gap;
  }
  s[edge] = 3.0 + gap;
  ac_params_dbl(pb, "gap", gap);
}

int ac_pat_apply(ac_case *c, ac_rng *r, int pat, int64_t block, ac_params *pb)
{
  ac_problem *p = &c->p;
  ac_dtype t = p->dtype;
  int64_t edge = ac_draw_edge_key(r, p->tk, block), lim = ac_row_visible(p, p->tq - 1);
  if (edge >= lim && lim > 0) edge = lim - 1;   /* the last row sees the structure */
  ac_params_str(pb, "pattern", ac_pattern_name(pat));
  ac_params_int(pb, "block", block);
  ac_params_int(pb, "key", edge);
  ac_valdist v;
  ac_draw_valdist(r, t, &v);
  ac_params_valdist(pb, "v", &v);
  ac_counts n = ac_case_counts(c);
  ac_fill(r, t, c->v, (size_t)n.v, &v);
  if (pat == AC_PAT_LARGE_V) {
    /* V toward the dtype's range; a correct fp32 accumulator of the unnormalized weights holds it */
    double top = ac_dtype_get(t)->max_finite;
    top = (t == AC_F32 || t == AC_BF16 || t == AC_F64) ? top / (4.0 * (double)p->tk) : 0.9 * top;
    for (size_t i = 0; i < (size_t)n.v; i++) ac_set(t, c->v, i, top * (0.5 + 0.5 * ac_rng_uniform(r)));
  }
  if (pat == AC_PAT_NORMAL) {
    ac_valdist d;
    ac_valdist_normal(&d, 1.0);
    ac_fill_qkv(c, r, &d, &d, NULL);
    return 0;
  }
  for (size_t i = 0; i < (size_t)n.q; i++) ac_set(t, c->q, i, 1.0);
  double *s = ac_xmalloc(sizeof(double) * (size_t)p->tk);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      ac_params pdrop;   /* the knobs of the first slice only */
      ac_params_init(&pdrop);
      plan_scores(c, r, pat, block, edge, s, (b == 0 && kh == 0) ? pb : &pdrop);
      ac_params_free(&pdrop);
      double ql = last_channel(p);
      for (int64_t h = kh * (p->heads / p->kv_heads); h < (kh + 1) * (p->heads / p->kv_heads); h++)   /* kv head kh's */
        for (int64_t i = 0; i < p->tq; i++) ac_set(t, c->q, ac_qidx(p, b, h, i, p->dk - 1), ql);
      for (int64_t j = 0; j < p->tk; j++) ac_pat_set_score(c, b, kh, j, s[j], ql);
    }
  free(s);
  return 0;
}
