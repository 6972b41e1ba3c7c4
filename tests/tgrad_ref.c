/* tgrad_ref.c: the backward pass by brute force (tgrad_ref.h): for every row, s_j = c q·k_j,
 * P_j = e^{s_j - m} / Σ_k e^{s_k - m}, dP_j = dO·V_j, D = Σ_j P_j dP_j, dS_j = P_j (dP_j - D),
 * dQ = c Σ_j dS_j K_j, and dK_j += c dS_j q, dV_j += P_j dO into the key's kv head (visible
 * keys: the mask, the window and the boolean mask; scores capped, s_j = cap tanh(c q·k_j / cap),
 * then plus ALiBi and bias; under a softcap dS_j is multiplied by sech²(c q·k_j / cap) before dQ and
 * dK), at the precision asked plus 1.5 bits per unit of the largest score gap of the case. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "tgrad_ref.h"
#include "dtype.h"

static double ld(const ac_problem *p, const void *base, size_t x) { return ac_load(p->dtype, base, x); }

static double bias_of(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j)
{
  const ac_problem *p = &c->p;
  return p->f.used & AC_FEAT_BIAS ? ac_load(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, i, j)) : 0;
}

static double slope_of(const ac_case *c, int64_t b, int64_t h)
{
  return (double)c->alibi_slopes[(c->p.f.alibi_per_batch ? b * c->p.heads : 0) + h];
}

/* acc += a b, exactly at acc's precision (x: scratch). */
static void add_dd(mpfr_t acc, mpfr_t x, double a, double b)
{
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_mul_d(x, x, b, MPFR_RNDN);
  mpfr_add(acc, acc, x, MPFR_RNDN);
}

/* acc += f d (x: scratch). */
static void add_md(mpfr_t acc, mpfr_t x, mpfr_t f, double d)
{
  mpfr_mul_d(x, f, d, MPFR_RNDN);
  mpfr_add(acc, acc, x, MPFR_RNDN);
}

/* n elements set to +0 at precision prec. */
static void mp_reset(mpfr_t *a, int64_t n, mpfr_prec_t prec)
{
  for (int64_t x = 0; x < n; x++) {
    mpfr_set_prec(a[x], prec);
    mpfr_set_zero(a[x], 1);
  }
}

/* The keys row (b, h, i) sees: the mask, the window, the boolean mask (docs/variants.md); a key
 * with a -inf bias has weight 0 and drops out. */
static int64_t visible_keys(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t *idx)
{
  const ac_problem *p = &c->p;
  int64_t n = 0;
  for (int64_t j = 0; j < p->tk; j++)
    if (ac_visible(p, i, j) && ac_in_window(p, i, j) &&
        (!(p->f.used & AC_FEAT_BOOL_MASK) || c->bool_mask[ac_bmaskidx(p, b, h, i, j)]) &&
        bias_of(c, b, h, i, j) != -INFINITY)
      idx[n++] = j;
  return n;
}

/* s += -m_h |i + tk - tq - j| + bias_ij (ALiBi, bias). */
static void add_offset(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j, mpfr_t s, mpfr_t x)
{
  const ac_problem *p = &c->p;
  if (p->f.used & AC_FEAT_ALIBI) {
    mpfr_set_d(x, slope_of(c, b, h), MPFR_RNDN);
    mpfr_mul_si(x, x, (long)ac_alibi_dist(p, i, j), MPFR_RNDN);
    mpfr_sub(s, s, x, MPFR_RNDN);
  }
  mpfr_add_d(s, s, bias_of(c, b, h, i, j), MPFR_RNDN);
}

/* One row (b, h, i) with n visible keys idx: adds into dk and dv, writes dq. */
static void ref_row(const ac_case *c, const void *dout, int64_t b, int64_t h, int64_t i, int64_t n, const int64_t *idx,
                    mpfr_t sc, mpfr_prec_t prec, mpfr_t *dq, mpfr_t *dk, mpfr_t *dv, mpfr_t *dsink)
{
  const ac_problem *p = &c->p;
  int64_t kvh = ac_kv_head(p, h);
  mpfr_t *P = malloc((size_t)n * sizeof *P), *dP = malloc((size_t)n * sizeof *dP), *F = malloc((size_t)n * sizeof *F);
  mpfr_t x, m, L, D, rq;
  mpfr_inits2(prec, x, m, L, D, rq, (mpfr_ptr)0);
  /* dropout (docs/backward.md §8): the row's keep-mask and q = 1 - p */
  const uint8_t *keep = p->f.used & AC_FEAT_DROPOUT ? c->dropout_mask + ((b * p->heads + h) * p->tq + i) * p->tk : NULL;
  mpfr_set_ui(rq, 1, MPFR_RNDN);
  mpfr_sub_d(rq, rq, p->f.used & AC_FEAT_DROPOUT ? p->f.dropout_p : 0.0, MPFR_RNDN);
  for (int64_t r = 0; r < n; r++) {
    int64_t j = idx[r];
    mpfr_inits2(prec, P[r], dP[r], F[r], (mpfr_ptr)0);
    mpfr_set_zero(P[r], 1);
    for (int64_t t = 0; t < p->dk; t++) add_dd(P[r], x, ld(p, c->q, ac_qidx(p, b, h, i, t)), ld(p, c->k, ac_kidx(p, b, kvh, j, t)));
    mpfr_mul(P[r], P[r], sc, MPFR_RNDN);
    mpfr_set_ui(F[r], 1, MPFR_RNDN);
    if (p->f.used & AC_FEAT_SOFTCAP) {   /* s = cap tanh(s / cap); F = sech²(s / cap) */
      mpfr_div_d(P[r], P[r], p->f.softcap, MPFR_RNDN);
      mpfr_sech(F[r], P[r], MPFR_RNDN);
      mpfr_sqr(F[r], F[r], MPFR_RNDN);
      mpfr_tanh(P[r], P[r], MPFR_RNDN);
      mpfr_mul_d(P[r], P[r], p->f.softcap, MPFR_RNDN);
    }
    add_offset(c, b, h, i, j, P[r], x);
    if (r == 0 || mpfr_greater_p(P[r], m)) mpfr_set(m, P[r], MPFR_RNDN);
    mpfr_set_zero(dP[r], 1);
    for (int64_t t = 0; t < p->dv; t++) add_dd(dP[r], x, ld(p, dout, ac_oidx(p, b, h, i, t)), ld(p, c->v, ac_vidx(p, b, kvh, j, t)));
    if (keep && !keep[j]) mpfr_set_zero(dP[r], 1);   /* dropout: dP_j = m_j dO·V_j / (1 - p) */
    if (keep) mpfr_div(dP[r], dP[r], rq, MPFR_RNDN);
  }
  /* the sink: one more term e^{σ_h} of L, of value 0 (none when σ_h = -inf) */
  int sink = (p->f.used & AC_FEAT_SINKS) && (double)c->sinks[h] != -INFINITY;
  mpfr_t ps;
  mpfr_init2(ps, prec);
  if (sink) {
    mpfr_set_d(ps, (double)c->sinks[h], MPFR_RNDN);
    if (mpfr_greater_p(ps, m)) mpfr_set(m, ps, MPFR_RNDN);
  }
  mpfr_set_zero(L, 1);
  for (int64_t j = 0; j < n; j++) {
    mpfr_sub(P[j], P[j], m, MPFR_RNDN);
    mpfr_exp(P[j], P[j], MPFR_RNDN);
    mpfr_add(L, L, P[j], MPFR_RNDN);
  }
  if (sink) {
    mpfr_sub(ps, ps, m, MPFR_RNDN);
    mpfr_exp(ps, ps, MPFR_RNDN);
    mpfr_add(L, L, ps, MPFR_RNDN);
    mpfr_div(ps, ps, L, MPFR_RNDN);
  }
  mpfr_set_zero(D, 1);
  for (int64_t j = 0; j < n; j++) {
    mpfr_div(P[j], P[j], L, MPFR_RNDN);
    mpfr_mul(x, P[j], dP[j], MPFR_RNDN);
    mpfr_add(D, D, x, MPFR_RNDN);
  }
  if (sink && dsink) {   /* dσ_h -= P_sink D */
    mpfr_mul(ps, ps, D, MPFR_RNDN);
    mpfr_sub(dsink[h], dsink[h], ps, MPFR_RNDN);
  }
  mpfr_clear(ps);
  for (int64_t t = 0; t < p->dk; t++) mpfr_set_zero(dq[t], 1);
  for (int64_t r = 0; r < n; r++) {
    int64_t j = idx[r];
    size_t col = (size_t)((b * p->kv_heads + kvh) * p->tk + j);
    mpfr_div(x, P[r], rq, MPFR_RNDN);   /* dV_j += m_j P_j dO / (1 - p) */
    if (keep && !keep[j]) mpfr_set_zero(x, 1);
    mpfr_t pd;
    mpfr_init2(pd, prec);
    mpfr_set(pd, x, MPFR_RNDN);
    for (int64_t t = 0; t < p->dv; t++) add_md(dv[col * (size_t)p->dv + (size_t)t], x, pd, ld(p, dout, ac_oidx(p, b, h, i, t)));
    mpfr_clear(pd);
    mpfr_sub(dP[r], dP[r], D, MPFR_RNDN);   /* dS_j = P_j (dP_j - D) c */
    mpfr_mul(dP[r], dP[r], P[r], MPFR_RNDN);
    mpfr_mul(dP[r], dP[r], sc, MPFR_RNDN);
    mpfr_mul(dP[r], dP[r], F[r], MPFR_RNDN);   /* through the cap */
    for (int64_t t = 0; t < p->dk; t++) {
      add_md(dq[t], x, dP[r], ld(p, c->k, ac_kidx(p, b, kvh, j, t)));
      add_md(dk[col * (size_t)p->dk + (size_t)t], x, dP[r], ld(p, c->q, ac_qidx(p, b, h, i, t)));
    }
  }
  for (int64_t j = 0; j < n; j++) mpfr_clears(P[j], dP[j], F[j], (mpfr_ptr)0);
  free(P);
  free(dP);
  free(F);
  mpfr_clears(x, m, L, D, rq, (mpfr_ptr)0);
}

/* The largest score gap (max - min over the visible keys of a row) in binary64: dP - D of a key
 * weighing e^-gap cancels about gap log2(e) bits, which the precision must cover on top. */
static double max_gap(const ac_case *c)
{
  const ac_problem *p = &c->p;
  double sc = p->scale_is_default ? 1 / sqrt((double)p->dk) : p->scale, gap = 0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        double lo = INFINITY, hi = -INFINITY;
        int64_t idx[p->tk], n = visible_keys(c, b, h, i, idx);
        for (int64_t r = 0; r < n; r++) {
          int64_t j = idx[r];
          double s = 0;
          for (int64_t t = 0; t < p->dk; t++)
            s += ld(p, c->q, ac_qidx(p, b, h, i, t)) * ld(p, c->k, ac_kidx(p, b, ac_kv_head(p, h), j, t));
          s *= sc;
          if (p->f.used & AC_FEAT_SOFTCAP) s = p->f.softcap * tanh(s / p->f.softcap);
          if (p->f.used & AC_FEAT_ALIBI)
            s -= slope_of(c, b, h) * (double)ac_alibi_dist(p, i, j);
          s += bias_of(c, b, h, i, j);
          if (s < lo) lo = s;
          if (s > hi) hi = s;
        }
        if ((p->f.used & AC_FEAT_SINKS) && isfinite((double)c->sinks[h])) {
          lo = fmin(lo, (double)c->sinks[h]);
          hi = fmax(hi, (double)c->sinks[h]);
        }
        if (hi - lo > gap) gap = hi - lo;
      }
  return gap;
}

void gref_backward(const ac_case *c, const void *dout, mpfr_prec_t prec, mpfr_t *dq, mpfr_t *dk, mpfr_t *dv,
                   mpfr_t *dsink)
{
  const ac_problem *p = &c->p;
  prec += (mpfr_prec_t)(max_gap(c) * 1.5) + 64;
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  int64_t ncol = p->batch * p->kv_heads * p->tk;
  mp_reset(dk, ncol * p->dk, prec);
  mp_reset(dv, ncol * p->dv, prec);
  if (dsink) mp_reset(dsink, p->heads, prec);
  mpfr_t sc;
  mpfr_init2(sc, prec);
  if (p->scale_is_default) {
    mpfr_set_si(sc, (long)p->dk, MPFR_RNDN);
    mpfr_rec_sqrt(sc, sc, MPFR_RNDN);
  } else {
    mpfr_set_d(sc, p->scale, MPFR_RNDN);
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        mpfr_t *q = dq + ac_rowidx(p, b, h, i) * (size_t)p->dk;
        mp_reset(q, p->dk, prec);
        int64_t idx[p->tk], n = visible_keys(c, b, h, i, idx);
        if (n > 0) ref_row(c, dout, b, h, i, n, idx, sc, prec, q, dk, dv, dsink);
      }
  mpfr_clear(sc);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
}
