/* budget_grad_tile.c: the backward budgets (budget_grad.c's model, docs/backward.md "Budgets") over
 * tiles of query rows, their sums as binary64 matrix products (oracle/gemm.h).
 *
 * A task is one (batch, kv head): its keys and values are decoded once, then for every query head
 * of the group and every tile of QB rows the products of the tile's rows with the keys they see
 * (the strip [jlo, jhi)): the dot products q·k_j, Z_j = Σ|q_t k_jt|, dP_j = dO·V_j, A_j = Σ|dO_t V_jt|
 * and O = Σ_j P_j V_j; the per-row formulas of budget_grad.c on each row's keys; then the sums the
 * budgets are made of, Σ_j σ_j|K_jt| and Σ_j |dS_j||K_jt| (dQ), Σ_i σ_ij|q_it|, Σ_i |dS_ij||q_it|
 * (dK), Σ_i τ_ij|dO_it| and Σ_i P_ij|dO_it| (dV), again as products. Tasks run on the workers in
 * any order; each writes only its own rows, columns and dσ shares, and dσ_h adds the shares in
 * batch order, so the budgets do not depend on the number of workers. With dropout the row's values
 * are m_ij V_j / (1 - p) (budget_grad.c): dP_j and A_j of a kept key scaled by 1/(1 - p), of a dropped
 * key 0 (whatever V_j holds), and O and the P of dV's sums on P_ij m_ij / (1 - p) (PM). */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "budget.h"
#include "budget_grad_int.h"
#include "gemm.h"
#include "variants.h"

#define QB 64

typedef struct {
  const ac_precision *cl;
  const ac_case *c;
  ac_grad_budget *bg;
  int fa2;
  double dr;            /* dropout: 1 / (1 - p) rounded up (0 without dropout) */
  int64_t hpg, nunit;
  atomic_llong next;
  pthread_mutex_t mu;
  double *sink[2][2];   /* per (b, h): the rows' sink terms [typ][0] and magnitudes [typ][1] */
} bt_job;

typedef struct {
  double *K, *Ka, *V, *Va;                          /* tk*dk, tk*dv */
  double *Q, *Qa, *O, *Oa, *PV;                     /* QB*dk, QB*dv */
  double *S, *Z, *DP, *A, *P, *SG[2], *TA[2], *DS;  /* QB*tk */
  double *th, *f, *mg, *rw;                         /* QB*tk under a softcap */
  double *VF, *PM;                                  /* QB*tk with dropout: m_ij / (1 - p) and P_ij times it */
  double *pi[2];                                    /* tk: one row's */
  double *aq[2], *mq;                               /* QB*dk */
  double *s1k[2], *s2k, *s1v[2], *s2v;              /* tk*dk, tk*dv: the kv head's sums */
  int64_t *nk;                                      /* tk: rows that see key j */
  int kfin;                                         /* the kv head's K and V are finite */
  const ac_problem *p;
} bt_ws;

static double *dalloc(int64_t n) { return ac_xcalloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

static bt_ws *ws_new(const ac_problem *p)
{
  const int64_t tk = p->tk, dk = p->dk, dv = p->dv;
  bt_ws *w = ac_xcalloc(1, sizeof *w);
  double **big[] = {&w->S, &w->Z, &w->DP, &w->A, &w->P, &w->SG[0], &w->SG[1], &w->TA[0], &w->TA[1], &w->DS};
  for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) *big[k] = dalloc(QB * tk);
  const int64_t ncap = (p->f.used & AC_FEAT_SOFTCAP) ? QB * tk : 1;
  w->th = dalloc(ncap), w->f = dalloc(ncap), w->mg = dalloc(ncap), w->rw = dalloc(ncap);
  const int64_t ndrop = (p->f.used & AC_FEAT_DROPOUT) ? QB * tk : 1;
  w->VF = dalloc(ndrop), w->PM = dalloc(ndrop);
  w->pi[0] = dalloc(tk), w->pi[1] = dalloc(tk);
  w->K = dalloc(tk * dk), w->Ka = dalloc(tk * dk), w->V = dalloc(tk * dv), w->Va = dalloc(tk * dv);
  w->Q = dalloc(QB * dk), w->Qa = dalloc(QB * dk), w->O = dalloc(QB * dv), w->Oa = dalloc(QB * dv);
  w->PV = dalloc(QB * dv);
  w->aq[0] = dalloc(QB * dk), w->aq[1] = dalloc(QB * dk), w->mq = dalloc(QB * dk);
  w->s1k[0] = dalloc(tk * dk), w->s1k[1] = dalloc(tk * dk), w->s2k = dalloc(tk * dk);
  w->s1v[0] = dalloc(tk * dv), w->s1v[1] = dalloc(tk * dv), w->s2v = dalloc(tk * dv);
  w->nk = ac_xcalloc((size_t)tk + 1, sizeof *w->nk);
  w->p = p;
  return w;
}

static void ws_free(bt_ws *w)
{
  double *d[] = {w->S,  w->Z,  w->DP, w->A,  w->P,  w->SG[0], w->SG[1], w->TA[0], w->TA[1], w->DS,     w->pi[0],
                 w->pi[1], w->th, w->f, w->mg, w->rw, w->K,     w->Ka,     w->V,     w->Va,     w->Q,      w->Qa,
                 w->O,  w->Oa, w->PV, w->aq[0], w->aq[1], w->mq, w->s1k[0], w->s1k[1], w->s2k,  w->s1v[0], w->s1v[1],
                 w->s2v, w->VF, w->PM};
  for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) free(d[k]);
  free(w->nk);
  free(w);
}

/* The row view g of row r of the tile's strips of n keys. */
static void row_view(bt_ws *w, gb_ws *g, int64_t r, int64_t n, int cap)
{
  g->n = n;
  g->s = w->S + r * n, g->Z = w->Z + r * n, g->dP = w->DP + r * n, g->A = w->A + r * n, g->P = w->P + r * n;
  for (int typ = 0; typ < 2; typ++) g->pi[typ] = w->pi[typ], g->sg[typ] = w->SG[typ] + r * n, g->ta[typ] = w->TA[typ] + r * n;
  const int64_t o = cap ? r * n : 0;
  g->th = w->th + o, g->f = w->f + o, g->mg = w->mg + o, g->rw = w->rw + o;
  g->vf = g->dd > 0 ? w->VF + r * n : NULL;
}

/* Row r (query i of (b, h)) of the strip of n keys from jlo: its scores (variants, the FA-2 shift),
 * softcap terms, LSE, P and D into the row view g; returns the visible keys. */
static int64_t row_forward(bt_job *J, bt_ws *w, gb_ws *g, int64_t b, int64_t h, int64_t i, int64_t r, int64_t jlo,
                           int64_t n, double *L, double *D)
{
  const ac_case *c = J->c;
  const ac_problem *p = &c->p;
  const double sc = ac_problem_scale(p);
  const int feat = p->f.used != 0, cap = (p->f.used & AC_FEAT_SOFTCAP) != 0;
  row_view(w, g, r, n, cap);
  g->h = h;
  /* FlashAttention-2's convention: +m_h j where the ABI has -m_h |i + tk - tq - j|, the LSE with it: every
   * logit of the row moves by the same shift, P does not, the magnitudes do */
  g->shift = J->fa2 && (p->f.used & AC_FEAT_ALIBI) && p->mask != AC_MASK_NONE && c->alibi_slopes
                 ? ac_features_slope(c, b, h) * (double)(i + p->tk - p->tq)
                 : 0;
  if (!isfinite(g->shift)) g->shift = 0;
  double m = (p->f.used & AC_FEAT_SINKS) ? c->sinks[h] + g->shift : -INFINITY, *s = g->s;
  int64_t T = 0;
  for (int64_t j = 0; j < n; j++) {
    const int64_t kj = jlo + j;
    const double d = s[j];
    s[j] = (feat ? ac_features_score_f64(c, b, h, i, kj, sc * d) : ac_visible(p, i, kj) ? sc * d : -INFINITY) + g->shift;
    if (cap) {
      double x = sc * d / p->f.softcap, ch = cosh(x), bias = 0;
      g->th[j] = tanh(x);
      g->f[j] = 1 / (ch * ch);   /* 0 far past saturation (cosh overflows): the true f_j < 1e-300 */
      g->rw[j] = fabs(sc * d);
      if ((p->f.used & AC_FEAT_BIAS) && c->bias) bias = ac_load(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, i, kj));
      g->mg[j] = fabs(bias);
      if (p->f.used & AC_FEAT_ALIBI) g->mg[j] += fabs(ac_features_slope(c, b, h) * (double)ac_alibi_dist(p, i, kj)) + fabs(g->shift);
    }
    if (s[j] > -INFINITY) T++, w->nk[kj]++;
    if (s[j] > m) m = s[j];
  }
  double sum = (p->f.used & AC_FEAT_SINKS) && m > -INFINITY ? exp(c->sinks[h] + g->shift - m) : 0;
  for (int64_t j = 0; j < n; j++) sum += s[j] > -INFINITY ? exp(s[j] - m) : 0;
  *L = m > -INFINITY ? m + log(sum) : -INFINITY;
  /* dropout: the values as the gradient sees them, v'_j = m_ij V_j / (1 - p) (dP, A and O alike) */
  const uint8_t *keep = g->vf ? c->dropout_mask + ac_rowidx(p, b, h, i) * (size_t)p->tk + jlo : NULL;
  *D = 0;
  for (int64_t j = 0; j < n; j++) {
    g->P[j] = s[j] > -INFINITY ? exp(s[j] - *L) : 0;
    if (keep) {
      g->vf[j] = keep[j] ? J->dr : 0;
      g->dP[j] = keep[j] ? g->dP[j] * J->dr : 0;
      g->A[j] = keep[j] ? g->A[j] * J->dr : 0;
      w->PM[r * n + j] = g->P[j] * g->vf[j];
    }
    *D += g->P[j] * g->dP[j];
  }
  return T;
}

/* 1 when the tile's rows of q and dO and its strips of σ, τ, |dS| and P are finite. */
static int tile_finite(const bt_ws *w, int64_t nr, int64_t n)
{
  const ac_problem *p = w->p;
  int ok = 1;
  for (int64_t x = 0; x < nr * p->dk; x++) ok &= isfinite(w->Qa[x]);
  for (int64_t x = 0; x < nr * p->dv; x++) ok &= isfinite(w->Oa[x]);
  const double *st[] = {w->SG[0], w->SG[1], w->TA[0], w->TA[1], w->DS, w->P};
  for (size_t k = 0; k < sizeof st / sizeof st[0]; k++)
    for (int64_t x = 0; x < nr * n; x++) ok &= isfinite(st[k][x]);
  return ok;
}

/* The tile's sums over the visible keys one by one (as products would form them): its dQ terms
 * (cols 0: aq, mq) or its dK and dV terms into the kv head's sums (cols 1); PP the P of dV. */
static void sums_scalar(bt_ws *w, const double *PP, int64_t nr, int64_t n, int64_t jlo, int64_t dk, int64_t dv, int cols)
{
  if (!cols) {
    memset(w->aq[0], 0, (size_t)(nr * dk) * sizeof(double));
    memset(w->aq[1], 0, (size_t)(nr * dk) * sizeof(double));
    memset(w->mq, 0, (size_t)(nr * dk) * sizeof(double));
  }
  for (int64_t r = 0; r < nr; r++)
    for (int64_t j = 0; j < n; j++) {
      const int64_t x = r * n + j, kj = jlo + j;
      if (!(w->S[x] > -INFINITY)) continue;
      for (int64_t t = 0; t < dk; t++) {
        if (cols) {
          for (int typ = 0; typ < 2; typ++) w->s1k[typ][kj * dk + t] += w->SG[typ][x] * w->Qa[r * dk + t];
          w->s2k[kj * dk + t] += w->DS[x] * w->Qa[r * dk + t];
          continue;
        }
        for (int typ = 0; typ < 2; typ++) w->aq[typ][r * dk + t] += w->SG[typ][x] * w->Ka[kj * dk + t];
        w->mq[r * dk + t] += w->DS[x] * w->Ka[kj * dk + t];
      }
      for (int64_t t = 0; t < dv && cols; t++) {
        for (int typ = 0; typ < 2; typ++) w->s1v[typ][kj * dv + t] += w->TA[typ][x] * w->Oa[r * dv + t];
        w->s2v[kj * dv + t] += PP[x] * w->Oa[r * dv + t];
      }
    }
}

/* Query rows [i0, i0 + nr) of (b, h): their dQ budgets, and their terms into the kv head's sums. */
static void tile(bt_job *J, bt_ws *w, gb_ws *g, int64_t b, int64_t h, int64_t i0, int64_t nr)
{
  const ac_case *c = J->c;
  const ac_problem *p = &c->p;
  const ac_precision *cl = J->cl;
  const int64_t dk = p->dk, dv = p->dv;
  const ac_dtype od = ac_tensor_dtype(p, 'o');
  int64_t jlo = p->tk, jhi = 0, T[QB];
  double L[QB], D[QB], shift[QB];
  for (int64_t r = 0; r < nr; r++) {
    int64_t lo, hi;
    ac_visible_range(p, i0 + r, &lo, &hi);
    if (lo < hi) jlo = lo < jlo ? lo : jlo, jhi = hi > jhi ? hi : jhi;
    for (int64_t t = 0; t < dk; t++) {
      w->Q[r * dk + t] = ac_load(p->dtype, c->q, ac_qidx(p, b, h, i0 + r, t));
      w->Qa[r * dk + t] = fabs(w->Q[r * dk + t]);
    }
    for (int64_t t = 0; t < dv; t++) {
      w->O[r * dv + t] = ac_load(od, c->dout, ac_oidx(p, b, h, i0 + r, t));
      w->Oa[r * dv + t] = fabs(w->O[r * dv + t]);
    }
  }
  const int64_t n = jlo < jhi ? jhi - jlo : 0;
  if (n > 0) {
    ac_gemm(0, 1, nr, n, dk, w->Q, dk, w->K + jlo * dk, dk, 0, w->S, n);
    ac_gemm(0, 1, nr, n, dk, w->Qa, dk, w->Ka + jlo * dk, dk, 0, w->Z, n);
    ac_gemm(0, 1, nr, n, dv, w->O, dv, w->V + jlo * dv, dv, 0, w->DP, n);
    ac_gemm(0, 1, nr, n, dv, w->Oa, dv, w->Va + jlo * dv, dv, 0, w->A, n);
  }
  for (int64_t r = 0; r < nr; r++) {
    T[r] = row_forward(J, w, g, b, h, i0 + r, r, jlo, n, &L[r], &D[r]);
    shift[r] = g->shift;
  }
  const double *PP = g->dd > 0 ? w->PM : w->P;   /* the P of O and of dV's sums */
  if (n > 0 && w->kfin) {
    ac_gemm(0, 0, nr, dv, n, PP, n, w->V + jlo * dv, dv, 0, w->PV, dv);
  } else {   /* O over the visible, kept keys alone (a masked or dropped key's 0 times a non-finite V is no
              * term of O) */
    memset(w->PV, 0, (size_t)(nr * dv) * sizeof(double));
    for (int64_t r = 0; r < nr; r++)
      for (int64_t j = 0; j < n; j++) {
        if (!(w->S[r * n + j] > -INFINITY) || (g->dd > 0 && w->VF[r * n + j] == 0)) continue;
        for (int64_t t = 0; t < dv; t++) w->PV[r * dv + t] += PP[r * n + j] * w->V[(jlo + j) * dv + t];
      }
  }
  for (int64_t r = 0; r < nr; r++) {
    double B = 0;
    for (int64_t t = 0; t < dv; t++) B += fabs(w->O[r * dv + t] * w->PV[r * dv + t]);
    row_view(w, g, r, n, (p->f.used & AC_FEAT_SOFTCAP) != 0);
    g->h = h, g->shift = shift[r];
    for (int typ = 0; typ < 2; typ++) {
      ac_gbud_row_errors(g, typ, T[r], L[r], D[r], B);
      J->sink[typ][0][b * p->heads + h] += g->sk_t[typ];
      J->sink[typ][1][b * p->heads + h] += g->sk_m[typ];
    }
    for (int64_t j = 0; j < n; j++) w->DS[r * n + j] = ac_gbud_ds_abs(g, j, D[r]);
  }
  /* a product would multiply a masked key's 0 by a non-finite value of another row or key (NaN where
   * the model has no term): then the sums over visible keys one by one */
  const int fin = w->kfin && tile_finite(w, nr, n);
  if (n > 0 && fin) {
    for (int typ = 0; typ < 2; typ++) ac_gemm(0, 0, nr, dk, n, w->SG[typ], n, w->Ka + jlo * dk, dk, 0, w->aq[typ], dk);
    ac_gemm(0, 0, nr, dk, n, w->DS, n, w->Ka + jlo * dk, dk, 0, w->mq, dk);
  } else {
    sums_scalar(w, PP, nr, n, jlo, dk, dv, 0);
  }
  for (int64_t r = 0; r < nr; r++)
    for (int typ = 0; typ < 2; typ++) {
      const double gm = ac_gbud_gam((double)T[r] + 2, typ, cl->u_a, cl->acc_trunc), fl = ((double)T[r] + 2) * g->eta * g->cs1;
      double *out = (typ ? J->bg->e : J->bg->w)[0];
      for (int64_t t = 0; t < dk; t++) {
        const double a = w->aq[typ][r * dk + t];
        out[ac_qidx(p, b, h, i0 + r, t)] = g->cs * (a + gm * (w->mq[r * dk + t] + a)) + fl;
      }
    }
  if (n == 0) return;
  if (!fin) {
    sums_scalar(w, PP, nr, n, jlo, dk, dv, 1);
    return;
  }
  for (int typ = 0; typ < 2; typ++) {
    ac_gemm(1, 0, n, dk, nr, w->SG[typ], n, w->Qa, dk, 1, w->s1k[typ] + jlo * dk, dk);
    ac_gemm(1, 0, n, dv, nr, w->TA[typ], n, w->Oa, dv, 1, w->s1v[typ] + jlo * dv, dv);
  }
  ac_gemm(1, 0, n, dk, nr, w->DS, n, w->Qa, dk, 1, w->s2k + jlo * dk, dk);
  ac_gemm(1, 0, n, dv, nr, PP, n, w->Oa, dv, 1, w->s2v + jlo * dv, dv);
}

/* One (batch, kv head). */
static void task(bt_job *J, bt_ws *w, int64_t u)
{
  const ac_case *c = J->c;
  const ac_problem *p = &c->p;
  const ac_precision *cl = J->cl;
  const int64_t b = u / p->kv_heads, kvh = u % p->kv_heads, tk = p->tk, dk = p->dk, dv = p->dv;
  gb_ws g = {.cl = cl, .c = c, .cs = fabs(ac_problem_scale(p)), .u_o = ac_dtype_get(ac_tensor_dtype(p, 'o'))->u,
             .dd = ac_budget_drop_delta(cl, p)};
  g.eta = cl->eta_a * (cl->acc_trunc ? 2 : 1), g.cs1 = g.cs > 1 ? g.cs : 1;
  for (int64_t j = 0; j < tk; j++) {
    for (int64_t t = 0; t < dk; t++) {
      w->K[j * dk + t] = ac_load(p->dtype, c->k, ac_kidx(p, b, kvh, j, t));
      w->Ka[j * dk + t] = fabs(w->K[j * dk + t]);
    }
    for (int64_t t = 0; t < dv; t++) {
      w->V[j * dv + t] = ac_load(p->dtype, c->v, ac_vidx(p, b, kvh, j, t));
      w->Va[j * dv + t] = fabs(w->V[j * dv + t]);
    }
  }
  w->kfin = 1;
  for (int64_t x = 0; x < tk * dk; x++) w->kfin &= isfinite(w->Ka[x]);
  for (int64_t x = 0; x < tk * dv; x++) w->kfin &= isfinite(w->Va[x]);
  double *acc[] = {w->s1k[0], w->s1k[1], w->s2k, w->s1v[0], w->s1v[1], w->s2v};
  for (int k = 0; k < 6; k++) memset(acc[k], 0, (size_t)(tk * (k < 3 ? dk : dv)) * sizeof(double));
  memset(w->nk, 0, (size_t)tk * sizeof *w->nk);
  for (int64_t hh = 0; hh < J->hpg; hh++)
    for (int64_t i0 = 0; i0 < p->tq; i0 += QB)
      tile(J, w, &g, b, kvh * J->hpg + hh, i0, p->tq - i0 < QB ? p->tq - i0 : QB);
  for (int64_t j = 0; j < tk; j++)
    for (int x = 0; x < 2; x++) {
      const int64_t d = x ? dv : dk, at = x ? (int64_t)ac_vidx(p, b, kvh, j, 0) : (int64_t)ac_kidx(p, b, kvh, j, 0);
      const double nn = (double)w->nk[j] + (x ? 0 : 2), cs = x ? 1 : g.cs;
      for (int typ = 0; typ < 2; typ++) {
        const double gm = ac_gbud_gam(nn, typ, cl->u_a, cl->acc_trunc), *s1 = x ? w->s1v[typ] : w->s1k[typ];
        const double *s2 = x ? w->s2v : w->s2k;
        double *out = (typ ? J->bg->e : J->bg->w)[1 + x];
        for (int64_t t = 0; t < d; t++)
          out[at + t] = cs * (s1[j * d + t] + gm * (s2[j * d + t] + s1[j * d + t])) + nn * g.eta * (x ? 1 : g.cs1);
      }
    }
}

static double thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
  bt_job *J = arg;
  double t0 = thread_cpu();
  bt_ws *w = ws_new(&J->c->p);
  for (;;) {
    long long u = atomic_fetch_add(&J->next, 1);
    if (u >= J->nunit) break;
    task(J, w, (int64_t)u);
  }
  ws_free(w);
  double t = thread_cpu() - t0;
  pthread_mutex_lock(&J->mu);
  J->bg->cpu += t;
  if (t > J->bg->cpu_max) J->bg->cpu_max = t;
  pthread_mutex_unlock(&J->mu);
  return NULL;
}

int ac_gbud_tiles(const ac_precision *cls, const ac_case *c, int alibi_lse, int threads, ac_grad_budget *bg,
                  ac_err *e)
{
  const ac_problem *p = &c->p;
  if (ac_gbud_alloc(c, bg, e)) return -1;
  bt_job J = {.cl = cls, .c = c, .bg = bg, .fa2 = alibi_lse == AC_ALIBI_LSE_FA2, .hpg = p->heads / p->kv_heads,
              .nunit = p->batch * p->kv_heads};
  if (p->f.used & AC_FEAT_DROPOUT) J.dr = ac_budget_drop_r(p);
  atomic_init(&J.next, 0);
  pthread_mutex_init(&J.mu, NULL);
  for (int typ = 0; typ < 2; typ++)
    for (int x = 0; x < 2; x++) J.sink[typ][x] = ac_xcalloc((size_t)(p->batch * p->heads) + 1, sizeof(double));
  long nth = threads > 1 ? threads : 1, started = 0;
  if (nth > J.nunit) nth = J.nunit > 0 ? J.nunit : 1;
  pthread_t *th = ac_xcalloc((size_t)nth, sizeof *th);
  while (started < nth - 1 && pthread_create(&th[started], NULL, worker, &J) == 0) started++;
  worker(&J);   /* the caller's thread works too; threads that could not start leave it their tasks */
  for (long k = 0; k < started; k++) pthread_join(th[k], NULL);
  free(th);
  pthread_mutex_destroy(&J.mu);
  if (p->f.used & AC_FEAT_SINKS) {   /* dσ_h: the batches' shares in batch order */
    bg->nsink = p->heads;
    bg->sink_rows = p->batch * p->tq;
    for (int typ = 0; typ < 2; typ++) {
      bg->sink_t[typ] = ac_xcalloc((size_t)p->heads, sizeof(double));
      bg->sink_m[typ] = ac_xcalloc((size_t)p->heads, sizeof(double));
      for (int64_t h = 0; h < p->heads; h++)
        for (int64_t b = 0; b < p->batch; b++)
          bg->sink_t[typ][h] += J.sink[typ][0][b * p->heads + h], bg->sink_m[typ][h] += J.sink[typ][1][b * p->heads + h];
    }
    ac_grad_budget_sink(cls, bg);
  }
  for (int typ = 0; typ < 2; typ++)
    for (int x = 0; x < 2; x++) free(J.sink[typ][x]);
  return 0;
}
