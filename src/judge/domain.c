/* domain.c: where a kernel may legitimately give anything: rows out of a precision class's
 * domain (OUT-OF-DOMAIN), and the elements a NaN or inf stored at a masked key can reach
 * (MASKED-LEAK). */
#include "config.h"
#include "compare.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int bits_nonfinite(ac_dtype t, uint64_t b) { return ac_bits_isnan(t, b) || ac_bits_isinf(t, b); }

static int row_has_nonfinite(ac_dtype t, const void *base, size_t off, int64_t n)
{
  for (int64_t x = 0; x < n; x++)
    if (bits_nonfinite(t, ac_load_bits(t, base, off + (size_t)x))) return 1;
  return 0;
}

void ac_masked_nonfinite(const ac_case *c, uint8_t *krow, uint8_t *velem)
{
  const ac_problem *p = &c->p;
  /* Per (batch, kv head): the largest key index whose K row holds a non-finite value, and per
   * V column the largest key index whose V holds one there (-1: none). Visible keys are a
   * prefix, so a row with v visible keys has a masked one at or past v. */
  int64_t nkv = p->batch * p->kv_heads, dv = p->dv;
  int64_t *lastk = ac_xmalloc(sizeof(int64_t) * (size_t)nkv);
  int64_t *lastv = ac_xmalloc(sizeof(int64_t) * (size_t)(nkv * dv));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      int64_t x = b * p->kv_heads + kh, *lv = lastv + x * dv;
      lastk[x] = -1;
      for (int64_t d = 0; d < dv; d++) lv[d] = -1;
      for (int64_t j = p->tk - 1; j >= 0; j--) {
        if (lastk[x] < 0 && row_has_nonfinite(p->dtype, c->k, ac_kidx(p, b, kh, j, 0), p->dk)) lastk[x] = j;
        for (int64_t d = 0; d < dv; d++)
          if (lv[d] < 0 && bits_nonfinite(p->dtype, ac_load_bits(p->dtype, c->v, ac_vidx(p, b, kh, j, d)))) lv[d] = j;
      }
    }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      int64_t x = b * p->kv_heads + ac_kv_head(p, h);
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t vis = ac_visible_count(p, i), row = (int64_t)ac_rowidx(p, b, h, i);
        krow[row] = lastk[x] >= vis;
        for (int64_t d = 0; d < dv; d++) velem[row * dv + d] = krow[row] || lastv[x * dv + d] >= vis;
      }
    }
  free(lastk);
  free(lastv);
}

/* The domain of a row: exact scores (raw q·k or scaled) beyond the working range, or the
 * unnormalized P·V sum (at most L·R, L = e^(LSE - m)) beyond it. 1 = out of domain. */
static int row_beyond_range(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row,
                             const ac_oracle_elem *els, int64_t dv, char *why, size_t n)
{
  if (row->visible <= 0 || row->has_nonfinite) return 0;
  double lim = ac_dtype_get(c->range)->max_finite;
  const char *rn = ac_dtype_name(c->range);
  /* scores stored in a narrower format (cuBLAS-style composites): that format's range, for
   * the scaled score and the raw q.k alike (a GEMM may store either) */
  double slim = lim;
  const char *sn = rn;
  if (ac_dtype_get(c->score_store)->max_finite < lim) {
    slim = ac_dtype_get(c->score_store)->max_finite;
    sn = ac_dtype_name(c->score_store);
  }
  if (!(row->max_abs_s <= slim)) {
    snprintf(why, n, "exact score %.3g beyond %s", row->max_abs_s, sn);
    return 1;
  }
  if (!(row->max_abs_z <= slim)) {
    snprintf(why, n, "exact q.k %.3g beyond %s", row->max_abs_z, sn);
    return 1;
  }
  /* A class whose exp arguments may err by more than the exponent range (|s| ~ 2e8 in binary32:
   * one score ulp is worth dozens of logits) can legitimately overflow exp: its weights, and W,
   * are unbounded there, and inf or NaN is what FlashAttention's formula gives. */
  double delta = ac_budget_exp_arg_delta(c, p, row);
  if (!(delta <= log(lim))) {
    snprintf(why, n, "exp-argument error bound of the class %.3g logits beyond the exp range of %s", delta, rn);
    return 1;
  }
  double L = exp(row->lse - row->m);
  for (int64_t d = 0; d < dv; d++)
    if (isfinite(els[d].R) && isfinite(L) && els[d].R * L > lim) {
      snprintf(why, n, "unnormalized P.V sum %.3g beyond %s", els[d].R * L, rn);
      return 1;
    }
  return 0;
}

/* An online softmax (or any tiling) adds w_j V_j with w_j <= 1 relative to the running
 * maximum, so before a later, larger maximum rescales them its partial sums can reach
 * Σ_j |V_j| over the visible keys, whatever the final weights: a correct binary32 kernel
 * overflows there on some key orders. Per (batch, kv head): the smallest number of visible
 * keys at which that sum, in some column, exceeds lim (INT64_MAX: never). */
int64_t *ac_online_sum_thresholds(const ac_case *c, double lim)
{
  const ac_problem *p = &c->p;
  int64_t n = p->batch * p->kv_heads;
  int64_t *thr = ac_xmalloc((size_t)n * sizeof *thr);
  double *acc = ac_xmalloc((size_t)p->dv * sizeof *acc);
  for (int64_t bk = 0; bk < n; bk++) {
    int64_t b = bk / p->kv_heads, kh = bk % p->kv_heads;
    thr[bk] = INT64_MAX;
    for (int64_t d = 0; d < p->dv; d++) acc[d] = 0;
    for (int64_t j = 0; j < p->tk && thr[bk] == INT64_MAX; j++)
      for (int64_t d = 0; d < p->dv; d++) {
        double v = fabs(ac_load(p->dtype, c->v, ac_vidx(p, b, kh, j, d)));
        if (isfinite(v)) acc[d] += v;
        if (acc[d] > lim) { thr[bk] = j + 1; break; }
      }
  }
  free(acc);
  return thr;
}

int ac_row_out_of_domain(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row,
                         const ac_oracle_elem *els, const int64_t *vthr, int64_t ridx, char *why, size_t n)
{
  if (row_beyond_range(c, p, row, els, p->dv, why, n)) return 1;
  if (row->visible <= 0 || row->has_nonfinite) return 0;
  int64_t b = ridx / (p->tq * p->heads), h = (ridx / p->tq) % p->heads;
  if (row->visible < vthr[b * p->kv_heads + ac_kv_head(p, h)]) return 0;
  snprintf(why, n, "partial P.V sums of an online softmax (up to the sum of |V_j| over %lld visible keys) beyond %s",
           (long long)row->visible, ac_dtype_name(c->range));
  return 1;
}
