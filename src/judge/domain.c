/* domain.c: where a kernel may legitimately give anything: rows out of a precision class's
 * domain (OUT-OF-DOMAIN), and the elements a NaN or inf stored at a masked key (or in the value of
 * a key dropout drops) can reach (MASKED-LEAK). */
#include "config.h"
#include "compare.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "variants.h"

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
  const ac_dtype kd = ac_tensor_dtype(p, 'k'), vd = ac_tensor_dtype(p, 'v');
  /* Per (batch, kv head): the keys whose K row or some V element holds a non-finite value
   * (knf, vnf; usually none), then per row those of them the row does not see (the mask, the
   * window and the boolean mask: not a prefix of the keys in general). */
  int64_t dv = p->dv, g = p->heads / p->kv_heads;
  int64_t *keys = ac_xmalloc(sizeof(int64_t) * (size_t)p->tk);
  uint8_t *knf = ac_xmalloc((size_t)p->tk), *vnf = ac_xmalloc((size_t)(p->tk * dv));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      int64_t n = 0;
      for (int64_t j = 0; j < p->tk; j++) {
        int any = knf[n] = (uint8_t)row_has_nonfinite(kd, c->k, ac_kidx(p, b, kh, j, 0), p->dk);
        for (int64_t d = 0; d < dv; d++)
          any |= vnf[n * dv + d] = (uint8_t)bits_nonfinite(vd, ac_load_bits(vd, c->v, ac_vidx(p, b, kh, j, d)));
        if (any) keys[n++] = j;
      }
      for (int64_t h = kh * g; h < (kh + 1) * g; h++)
        for (int64_t i = 0; i < p->tq; i++) {
          int64_t row = (int64_t)ac_rowidx(p, b, h, i);
          uint8_t *ve = velem + row * dv;
          krow[row] = 0;
          memset(ve, 0, (size_t)dv);
          const uint8_t *dm = (p->f.used & AC_FEAT_DROPOUT) && c->dropout_mask ? c->dropout_mask + row * p->tk : NULL;
          for (int64_t x = 0; x < n; x++) {
            if (ac_features_visible(c, b, h, i, keys[x])) {
              /* dropout: a dropped key's value takes no part in the row (its K does, in the row sum) */
              if (dm && !dm[keys[x]])
                for (int64_t d = 0; d < dv; d++) ve[d] |= vnf[x * dv + d];
              continue;
            }
            krow[row] |= knf[x];
            for (int64_t d = 0; d < dv; d++) ve[d] |= vnf[x * dv + d];
          }
          if (krow[row]) memset(ve, 1, (size_t)dv);
        }
    }
  free(keys);
  free(knf);
  free(vnf);
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
  double alim = ac_dtype_get(c->sum_range)->max_finite; /* the accumulators' range */
  for (int64_t d = 0; d < dv; d++)
    if (isfinite(els[d].R) && isfinite(L) && els[d].R * L > alim) {
      snprintf(why, n, "unnormalized P.V sum %.3g beyond %s", els[d].R * L, ac_dtype_name(c->sum_range));
      return 1;
    }
  return 0;
}

/* Σ_j |V_j| per column over the keys row (b, h, i) sees (finite values only): 1 when some
 * column exceeds lim. */
static int visible_vsum_beyond(const ac_case *c, int64_t b, int64_t h, int64_t i, double lim, double *acc)
{
  const ac_problem *p = &c->p;
  const ac_dtype vd = ac_tensor_dtype(p, 'v');
  int64_t lo, hi, kh = ac_kv_head(p, h);
  ac_visible_range(p, i, &lo, &hi);
  for (int64_t d = 0; d < p->dv; d++) acc[d] = 0;
  for (int64_t j = lo; j < hi; j++) {
    if (!ac_features_visible(c, b, h, i, j)) continue;
    for (int64_t d = 0; d < p->dv; d++) {
      double v = fabs(ac_load(vd, c->v, ac_vidx(p, b, kh, j, d)));
      if (isfinite(v)) acc[d] += v;
      if (acc[d] > lim) return 1;
    }
  }
  return 0;
}

/* An online softmax (or any tiling) adds w_j V_j with w_j <= 1 relative to the running
 * maximum, so before a later, larger maximum rescales them its partial sums can reach
 * Σ_j |V_j| over the visible keys, whatever the final weights: a correct binary32 kernel
 * overflows there on some key orders. A running sum over the keys [lo, hi) of the mask and
 * the window (both bounds grow with the row) finds the candidate rows; those are summed
 * exactly over the keys they see. */
uint8_t *ac_online_sum_beyond(const ac_case *c, double lim)
{
  const ac_problem *p = &c->p;
  const ac_dtype vd = ac_tensor_dtype(p, 'v');
  int64_t dv = p->dv, g = p->heads / p->kv_heads;
  uint8_t *out = ac_xcalloc((size_t)(p->batch * p->heads * p->tq), 1);
  double *run = ac_xmalloc((size_t)dv * sizeof *run), *acc = ac_xmalloc((size_t)dv * sizeof *acc);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      int64_t a = 0, z = 0;   /* run holds the sums over keys [a, z) */
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t lo, hi, cand = 0;
        ac_visible_range(p, i, &lo, &hi);
        if (lo >= z) {
          for (int64_t d = 0; d < dv; d++) run[d] = 0;
          a = z = lo;
        }
        for (; a < lo; a++)
          for (int64_t d = 0; d < dv; d++) {
            double v = fabs(ac_load(vd, c->v, ac_vidx(p, b, kh, a, d)));
            if (isfinite(v)) run[d] -= v;
          }
        for (; z < hi; z++)
          for (int64_t d = 0; d < dv; d++) {
            double v = fabs(ac_load(vd, c->v, ac_vidx(p, b, kh, z, d)));
            if (isfinite(v)) run[d] += v;
          }
        for (int64_t d = 0; d < dv && !cand; d++) cand = run[d] > lim * 0x1.fffp-1;   /* margin for the running sum's rounding */
        for (int64_t h = kh * g; cand && h < (kh + 1) * g; h++)
          out[ac_rowidx(p, b, h, i)] = (uint8_t)visible_vsum_beyond(c, b, h, i, lim, acc);
      }
    }
  free(run);
  free(acc);
  return out;
}

/* The largest magnitude format part v (a dtype) rounds to a finite value: max + 1/2 ulp(max). */
static double round_limit(int v)
{
  const ac_dtype_info *d = ac_dtype_get((ac_dtype)(v & ~AC_PF_TRUNC));
  return d->max_finite + 0.5 * ac_ulp((ac_dtype)(v & ~AC_PF_TRUNC), d->max_finite);
}

/* 1 when the dk (dv) values at base[off..] hold one that rounding part v takes beyond its
 * format (q8, q81: a block whose scale max|x|/127 rounds to f16 infinity, or is too small for a
 * finite binary32 reciprocal). */
static int beyond_input(int v, ac_dtype t, const void *base, size_t off, int64_t n)
{
  if (v == AC_PF_NONE) return 0;
  const int q8 = v == AC_PF_Q8 || v == AC_PF_Q81;
  double lim = q8 ? 127 * round_limit(AC_F16) : round_limit(v);
  for (int64_t x = 0; x < n; x++) {
    double a = fabs(ac_load(t, base, off + (size_t)x));
    if (isfinite(a) && !(a < lim)) return 1;
  }
  /* q8: a block whose binary32 scale max|x|/127 is below 2^-128 has no finite reciprocal (ggml's
   * id = 1/d): its codes are not round(x/d) */
  for (int64_t b0 = 0; q8 && b0 < n; b0 += AC_Q8_BLOCK) {
    double amax = 0;
    for (int64_t x = b0; x < n && x < b0 + AC_Q8_BLOCK; x++) amax = fmax(amax, fabs(ac_load(t, base, off + (size_t)x)));
    if (amax > 0 && (double)(float)(amax / 127) < 0x1p-128) return 1;
  }
  return 0;
}

/* Rows whose Q, or a key or value they see, a class's input rounding (q, k, v parts) takes
 * beyond its format: flag 2 of ac_class_rows_beyond. */
static void inputs_beyond(const ac_case *c, const ac_precision *cls, uint8_t *out)
{
  const ac_problem *p = &c->p;
  const int16_t *pv = cls->parts.v;
  if (pv[AC_PART_Q] == AC_PF_NONE && pv[AC_PART_K] == AC_PF_NONE && pv[AC_PART_V] == AC_PF_NONE) return;
  const ac_dtype qd = ac_tensor_dtype(p, 'q'), kd = ac_tensor_dtype(p, 'k'), vd = ac_tensor_dtype(p, 'v');
  const int64_t g = p->heads / p->kv_heads;
  uint8_t *kb = ac_xmalloc((size_t)p->tk + 1);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      int any = 0;
      for (int64_t j = 0; j < p->tk; j++) {
        kb[j] = (uint8_t)(beyond_input(pv[AC_PART_K], kd, c->k, ac_kidx(p, b, kh, j, 0), p->dk) ||
                          beyond_input(pv[AC_PART_V], vd, c->v, ac_vidx(p, b, kh, j, 0), p->dv));
        any |= kb[j];
      }
      for (int64_t h = kh * g; h < (kh + 1) * g; h++) {   /* the query heads of kv head kh */
        for (int64_t i = 0; i < p->tq; i++) {
          int hit = beyond_input(pv[AC_PART_Q], qd, c->q, ac_qidx(p, b, h, i, 0), p->dk);
          for (int64_t j = 0; any && !hit && j < p->tk; j++) hit = kb[j] && ac_features_visible(c, b, h, i, j);
          if (hit) out[ac_rowidx(p, b, h, i)] |= 2;
        }
      }
    }
  free(kb);
}

/* Rows whose Q·Kᵀ dot product with a key they see can have a partial sum beyond the format of
 * the class's score accumulator (part qk): whatever the order of its d_k products, a partial sum
 * is at most Σ_d |q_d k_d|, of the raw inputs or (a kernel scaling Q and K first) times |c|, so a
 * correct kernel may overflow it although the exact q·k is small (cancellation): flag 4 of
 * ac_class_rows_beyond. A bound max_d |q_d| · max_j Σ_d |k_jd| skips a head at once. */
static void qk_partial_beyond(const ac_case *c, const ac_precision *cls, uint8_t *out)
{
  const ac_problem *p = &c->p;
  int qk = cls->parts.v[AC_PART_QK];
  if (qk == AC_PF_NONE || qk == AC_PF_Q8) return;
  double lim = round_limit(qk) * 0x1.fffp-1;   /* margin for the sums' own rounding here */
  double sc = fabs(ac_problem_scale(p));
  double f = sc > 1 ? sc : 1;
  const ac_dtype qd = ac_tensor_dtype(p, 'q'), kd = ac_tensor_dtype(p, 'k');
  const int64_t g = p->heads / p->kv_heads;
  double *kl1 = ac_xmalloc(sizeof(double) * (size_t)(p->tk + 1));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++) {
      double kmax = 0;
      for (int64_t j = 0; j < p->tk; j++) {
        double a = 0;
        for (int64_t d = 0; d < p->dk; d++) {
          double x = fabs(ac_load(kd, c->k, ac_kidx(p, b, kh, j, d)));
          if (isfinite(x)) a += x;
        }
        kl1[j] = a;
        if (a > kmax) kmax = a;
      }
      for (int64_t h = kh * g; h < (kh + 1) * g; h++) {   /* the query heads of kv head kh */
        for (int64_t i = 0; i < p->tq; i++) {
          size_t qo = ac_qidx(p, b, h, i, 0);
          double qmax = 0;
          for (int64_t d = 0; d < p->dk; d++) {
            double x = fabs(ac_load(qd, c->q, qo + (size_t)d));
            if (isfinite(x) && x > qmax) qmax = x;
          }
          if (!(qmax * kmax * f > lim)) continue;
          for (int64_t j = 0; j < p->tk; j++) {
            if (!(qmax * kl1[j] * f > lim) || !ac_features_visible(c, b, h, i, j)) continue;
            double a = 0;
            size_t ko = ac_kidx(p, b, kh, j, 0);
            for (int64_t d = 0; d < p->dk; d++) {
              double x = fabs(ac_load(qd, c->q, qo + (size_t)d) * ac_load(kd, c->k, ko + (size_t)d));
              if (isfinite(x)) a += x;
            }
            if (a * f > lim) {
              out[ac_rowidx(p, b, h, i)] |= 4;
              break;
            }
          }
        }
      }
    }
  free(kl1);
}

uint8_t *ac_class_rows_beyond(const ac_case *c, const ac_precision *cls)
{
  uint8_t *out = ac_online_sum_beyond(c, ac_dtype_get(cls->sum_range)->max_finite);
  inputs_beyond(c, cls, out);
  qk_partial_beyond(c, cls, out);
  return out;
}

int ac_row_out_of_domain(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row,
                         const ac_oracle_elem *els, const uint8_t *vbeyond, int64_t ridx, char *why, size_t n)
{
  if (row_beyond_range(c, p, row, els, p->dv, why, n)) return 1;
  /* an input the class's rounding takes beyond its format is infinite in the kernel, whatever
   * else the row holds (a NaN or inf beside it included); the other limits apply to finite rows */
  if (row->visible <= 0 || !vbeyond[ridx] || (row->has_nonfinite && !(vbeyond[ridx] & 2))) return 0;
  if (vbeyond[ridx] & 2) {
    char all[512], in[64] = "";
    ac_precision_string(c, all, sizeof all);
    char *sv = NULL;
    for (char *t = strtok_r(all, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) /* the first three parts: q, k, v */
      if ((t[0] == 'q' || t[0] == 'k' || t[0] == 'v') && t[1] == '=' && strcmp(t + 2, "none"))
        snprintf(in + strlen(in), sizeof in - strlen(in), "%s%s", in[0] ? "," : "", t);
    snprintf(why, n, "an input beyond the format the class rounds it to (%s)", in);
  } else if (vbeyond[ridx] & 4) {
    int qk = c->parts.v[AC_PART_QK] & ~AC_PF_TRUNC;
    snprintf(why, n, "partial sums of a q.k (up to the sum of |q_d k_d|) beyond %s, the class's score accumulator",
             ac_dtype_name((ac_dtype)qk));
  } else
    snprintf(why, n, "partial P.V sums of an online softmax (up to the sum of |V_j| over %lld visible keys) beyond %s",
             (long long)row->visible, ac_dtype_name(c->sum_range));
  return 1;
}
