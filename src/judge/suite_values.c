/* suite_values.c: the value patterns of the fixed suite's cases (normal, masked NaN, extremes ...). */
#include "config.h"
#include "suite_values.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"
#include "variants.h"
#include "vgen.h"

static void put(ac_dtype t, void *base, size_t i, double x) { ac_store_bits(t, base, i, ac_encode_f64(t, x)); }

static void fill_normal(ac_dtype t, void *base, size_t n, ac_rng *r, double sigma)
{
  for (size_t i = 0; i < n; i++) put(t, base, i, sigma * ac_rng_normal(r));
}

/* Values of a generated case (shape already set and allocated). */
/* A NaN of dtype t other than the harness's pre-fill pattern, so that a propagated input NaN is
 * not mistaken for an unwritten output. */
static uint64_t masked_nan(ac_dtype t)
{
  uint64_t nan = ac_encode_f64(t, NAN);
  if (nan == ac_nan_bits(t)) nan ^= 1ull << (8 * ac_dtype_size(t) - 1);
  return nan;
}

/* Keys visible to no row get NaN and inf in K and V (D_MASKED_NAN). */
static void fill_masked_nan(ac_case *c, const ac_counts *np, ac_rng *rq, ac_rng *rk)
{
  ac_problem *p = &c->p;
  const ac_dtype tq = ac_tensor_dtype(p, 'q'), tkd = ac_tensor_dtype(p, 'k'), tvd = ac_tensor_dtype(p, 'v');
  const ac_counts n = *np;
  fill_normal(tq, c->q, (size_t)n.q, rq, 1.0);
  fill_normal(tkd, c->k, (size_t)n.k, rk, 1.0);
  /* keys visible to no row get NaN and inf in K and V */
  int64_t maxvis = ac_visible_count(p, p->tq - 1);
  /* a NaN payload other than the harness's pre-fill pattern, so that a propagated input NaN
   * is not mistaken for an unwritten output */
  uint64_t nan = masked_nan(tvd), knan = masked_nan(tkd);
  uint64_t inf = ac_bits_isnan(tkd, ac_encode_f64(tkd, INFINITY)) ? knan : ac_encode_f64(tkd, INFINITY);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = maxvis; j <= p->tk; j++) {
        if (j == maxvis && p->mask != AC_MASK_NONE) {
          /* one key in the middle, masked for the rows before it and visible after it
           * (inside a diagonal tile: where FlashAttention-2 leaks); NaN in V only, so that
           * the rows that see it expect NaN in every column and a finite LSE */
          int64_t jm = maxvis / 2;
          for (int64_t d = 0; d < p->dv; d++) ac_store_bits(tvd, c->v, ac_vidx(p, b, kh, jm, d), nan);
        }
        if (j == p->tk) break;
        for (int64_t d = 0; d < p->dk; d++) ac_store_bits(tkd, c->k, ac_kidx(p, b, kh, j, d), (j + d) % 3 ? 0 : inf);
        for (int64_t d = 0; d < p->dv; d++) ac_store_bits(tvd, c->v, ac_vidx(p, b, kh, j, d), (j + d) % 2 ? nan : 0);
      }
}

/* V at its dtype's extremes, Q and K with subnormals (D_EXTREME). */
static void fill_extreme(ac_case *c, const ac_counts *np, ac_rng *rq, ac_rng *rk)
{
  ac_problem *p = &c->p;
  const ac_dtype tq = ac_tensor_dtype(p, 'q'), tkd = ac_tensor_dtype(p, 'k'), tvd = ac_tensor_dtype(p, 'v');
  const ac_counts n = *np;
  /* V at its dtype's largest finite values (a quarter of them, the rest normal), Q and K normal
   * with every eighth element at the smallest subnormal of its dtype: a K or V read through the
   * wrong format, or an output range taken from the wrong dtype, shows here */
  const double vmax = ac_dtype_get(tvd)->max_finite, kmin = ac_ulp(tkd, 0), qmin = ac_ulp(tq, 0);
  fill_normal(tq, c->q, (size_t)n.q, rq, 1.0);
  fill_normal(tkd, c->k, (size_t)n.k, rk, 1.0);
  for (int64_t i = 0; i < n.q; i += 8) put(tq, c->q, (size_t)i, i % 16 ? qmin : -qmin);
  for (int64_t i = 3; i < n.k; i += 8) put(tkd, c->k, (size_t)i, i % 16 ? kmin : -kmin);
  for (int64_t i = 0; i < n.v; i += 4) put(tvd, c->v, (size_t)i, (i / 4) % 2 ? -vmax : vmax);
}

void ac_suite_fill_values(ac_case *c, int dist, uint64_t seed)
{
  ac_problem *p = &c->p;
  const ac_dtype tq = ac_tensor_dtype(p, 'q'), tkd = ac_tensor_dtype(p, 'k'), tvd = ac_tensor_dtype(p, 'v');
  ac_counts n;
  ac_problem_counts(p, &n, NULL);
  ac_rng rq, rk, rv;
  ac_rng_init(&rq, seed, 1);
  ac_rng_init(&rk, seed, 2);
  ac_rng_init(&rv, seed, 3);
  fill_normal(tvd, c->v, (size_t)n.v, &rv, 1.0);
  switch (dist) {
  case D_UNIFORM:
    for (int64_t i = 0; i < n.q; i++) put(tq, c->q, (size_t)i, 2 * ac_rng_uniform(&rq) - 1);
    for (int64_t i = 0; i < n.k; i++) put(tkd, c->k, (size_t)i, 2 * ac_rng_uniform(&rk) - 1);
    for (int64_t i = 0; i < n.v; i++) put(tvd, c->v, (size_t)i, 2 * ac_rng_uniform(&rv) - 1);
    break;
  case D_LARGE:
  case D_LARGENEG:
    /* scores about N(0, 100^2): |s| well past 88 (fp32 exp overflow) and 11 (fp16); largeneg
     * with the scale -1/sqrt(dk): the largest score comes from the most negative dot product */
    fill_normal(tq, c->q, (size_t)n.q, &rq, 10.0);
    fill_normal(tkd, c->k, (size_t)n.k, &rk, 10.0);
    break;
  case D_NEGATIVE: {
    /* every score about -sqrt(dk)*a^2 (-1e5 for dk = 64), spread by the noise of q */
    double a = 112;
    for (int64_t i = 0; i < n.q; i++) put(tq, c->q, (size_t)i, a * (1 + 0.02 * ac_rng_normal(&rq)));
    for (int64_t i = 0; i < n.k; i++) put(tkd, c->k, (size_t)i, -a);
    break;
  }
  case D_LATEMAX:
    /* s_j grows along the keys (about 30 from the first key to the last) */
    for (int64_t i = 0; i < n.q; i++) put(tq, c->q, (size_t)i, 1.0);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t j = 0; j < p->tk; j++)
          for (int64_t d = 0; d < p->dk; d++)
            put(tkd, c->k, ac_kidx(p, b, kh, j, d),
                30.0 / sqrt((double)p->dk) * (double)j / (double)p->tk + 0.05 * ac_rng_normal(&rk));
    break;
  case D_TIES:
    /* even keys equal the first key (repeated maxima possible), odd keys random */
    fill_normal(tq, c->q, (size_t)n.q, &rq, 1.0);
    fill_normal(tkd, c->k, (size_t)n.k, &rk, 1.0);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t j = 2; j < p->tk; j += 2)
          memcpy((char *)c->k + ac_kidx(p, b, kh, j, 0) * ac_dtype_size(tkd),
                 (char *)c->k + ac_kidx(p, b, kh, 0, 0) * ac_dtype_size(tkd), (size_t)p->dk * ac_dtype_size(tkd));
    break;
  case D_STEEP:
  case D_CLIFF:
  case D_SPLITSTEP:
  case D_TAIL: {
    /* s_j = slope (j - tk/2): steep (4 logits a key, causal): the keys a row may not see score
     * up to 190 logits above those it sees; cliff (600 a key, causal): up to 2.8e4 above, all
     * scores and q.k within fp16's range (a finite -1e4 mask lets them win); tail (1.5 a key):
     * V_j = e^{-2j} makes the output of each row come from keys 20 to 60 logits below its maximum;
     * splitstep: the second half of the keys 120 logits above the first (a later split's maximum
     * past exp's range above the first split's, for any split of up to tk / 2 keys) */
    double slope = dist == D_STEEP ? 4.0 : dist == D_CLIFF ? 600.0 : 1.5;
    for (int64_t i = 0; i < n.q; i++) put(tq, c->q, (size_t)i, 1.0);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t j = 0; j < p->tk; j++) {
          double sj = dist == D_SPLITSTEP ? 120.0 * (2 * j >= p->tk) + 0.5 * ac_rng_normal(&rk)
                                          : slope * ((double)j - (double)p->tk / 2) + 0.05 * ac_rng_normal(&rk);
          for (int64_t d = 0; d < p->dk; d++) put(tkd, c->k, ac_kidx(p, b, kh, j, d), sj / sqrt((double)p->dk));
          if (dist == D_TAIL)
            for (int64_t d = 0; d < p->dv; d++)
              put(tvd, c->v, ac_vidx(p, b, kh, j, d), exp(-2.0 * (double)j) * (1 + 0.5 * ac_rng_normal(&rv)));
        }
    break;
  }
  case D_VONES:
    fill_normal(tq, c->q, (size_t)n.q, &rq, 1.0);
    fill_normal(tkd, c->k, (size_t)n.k, &rk, 1.0);
    for (int64_t i = 0; i < n.v; i++) put(tvd, c->v, (size_t)i, 1.0);
    break;
  case D_ZEROQ:
    for (int64_t i = 0; i < n.q; i++) put(tq, c->q, (size_t)i, 0.0);
    fill_normal(tkd, c->k, (size_t)n.k, &rk, 1.0);
    break;
  case D_MASKED_NAN:
    fill_masked_nan(c, &n, &rq, &rk);
    break;
  case D_EXTREME:
    fill_extreme(c, &n, &rq, &rk);
    break;
  default:
    fill_normal(tq, c->q, (size_t)n.q, &rq, 1.0);
    fill_normal(tkd, c->k, (size_t)n.k, &rk, 1.0);
  }
}

