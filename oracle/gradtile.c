/* gradtile.c: one query tile of the backward's matrix-product level (gradblas.h, docs/backward.md
 * §4.4): rows [i0, i1) of (batch b, head h) against the keys they see, from binary64 products on
 * the library of gemm.h, with a proven bound on every quantity.
 *
 * Arithmetic: binary64, round to nearest, no contraction here (the library may contract: the
 * bound of gemm.h holds for any order, with or without FMA); u = 2^-53, γ_n = n u / (1 - n u).
 * SL = 1 + 2^-40 multiplies every bound for the rounding of its own evaluation (at most a few
 * dozen operations on non-negative numbers), FL = 2^-1060 covers what those operations lose to
 * underflow. The inputs are binary64 values of the narrow dtypes (at most 24 significant bits,
 * exponents in [-149, 127]), so a product of two inputs is exact.
 *   Norms: nq_i >= ||q_i||_2 (the squares are exact, their sum within γ_dk, the root within u).
 *   Scores z~ = Q K^T (gemm): |z~_ij - z_ij| <= ez_ij = γ_dk nq_i nk_j (Σ_t |q_it k_jt| <= nq_i nk_j,
 *     Cauchy-Schwarz); ez_ij = 0 when every product is a multiple of 2^(lq_i + lk_j) (lq: the least
 *     significant bit of the row) and nq_i nk_j < 2^(53 + lq_i + lk_j): every partial sum of any
 *     order is then a binary64 number, so the product is exact (E(nq) - lq + E(nk) - lk <= 52).
 *   s~ = fl(fl(cs z~) + a~) with a~ = fl(-m_h dist) and the stored bias (each addition rounded):
 *     |s~ - s| <= es = |cs|(1 + ε_c) ez + (ε_c (1 + 2u) + u)|cs z~| + u(|a~| + the partial sums).
 *   t~ = fl(s~ - m_i), m_i the largest s~ of the row (σ_h too): t~ <= 0, et = es + u|t~| bounds
 *     |t~ - t| for the exact t = s - m_i (the weights are invariant under the shift m_i). The tile
 *     leaves the level when et > 2^-24 (scores too large for binary64 to place).
 *   w~ = ac_fx_exp(t~) within 2^-50 e^{t~} (fastexp.c), so |w~ - e^t| <= ρ w~ with
 *     ρ = (2^-50 + et (1 + et)) / (1 - 2^-50) (expm1(x) <= x (1 + x) for x <= 2^-24); for
 *     t~ < -600, w~ = 0 within e^{-600 + et} < 2^-865.
 *   L~ = Σ_j w~_j by TwoSum (error-free additions, their errors summed): |L~ - Σ w~| <=
 *     (u + 2 n² u²) L~; eL = Σ_j ew_j (1 + 2γ_n) + that; βL = eL / L~ (L~ >= 1: the top key's w~ is 1).
 *   P~ = fl(w~ / L~): |P~ - P| <= eP = (ew + w~ βL) / (L~ (1 - βL)) + u P~.
 *   dP~ = dO V^T (gemm): edp = γ_dv no_i nv_j, or 0 by the exactness test above.
 *   D~ = Σ_j fl(P~_j dP~_j) by TwoSum: |D~ - D| <= eD = (1 + 2γ_n)(Σ_j (eP_j (|dP~_j| + edp_j)
 *     + P~_j edp_j) + (u + 2 n² u²) Σ_j |P~_j dP~_j|) + u|D~| + n 2^-1073.
 *   Y~ = fl(dP~ - D~): eY = edp + eD + u|Y~|;  dS~ = fl(P~ Y~): eS = eP (|Y~| + eY) + P~ eY + u|dS~| + FL.
 *   dQ_i = c Σ_j dS_ij K_j: G~ = Σ over blocks of kb keys of gemm(dS~, K) added by TwoSum, then
 *     fl(hi + lo): |G~ - Σ_j dS_j K_j| <= Σ_j (eS_j + κ |dS~_j|) |K_jt| + 2n 2^-1074 + u|G~|, with
 *     κ = γ_max(kb, qb) + 2^-60 (the block's rounding and the TwoSum's lo, at most m² u² of
 *     Σ |terms| for m <= 2^21 additions); the bound's own gemm (non-negative terms) within γ_n.
 *     dQ~ = fl(cs G~): e = |cs| (1 + ε_c) eG + (ε_c (1 + u) + u)|dQ~| + 2^-1073.
 *   dK, dV (column sums): per tile gemm(dS~^T, Q) and gemm(P~^T, dO) added by TwoSum into the
 *     (batch, head)'s part, their bounds gemm(E^T, |Q|) with E = eS + κ|dS~| and gemm(E'^T, |dO|)
 *     with E' = eP + κ P~, accumulated (gradblas.c closes them).
 *   dσ_h: -Σ_i fl(P~_i,sink D~_i) by TwoSum: eP_s (|D~| + eD) + P~_s eD + u|term| + 2^-1074 per row.
 * Cross terms (eP eY, ...) are written out; nothing is first-order only. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fast.h"
#include "gemm.h"
#include "gradblas.h"
#include "variants.h"

#define U 0x1p-53
#define SL (1 + 0x1p-40)
#define FL 0x1p-1060
#define T_TINY (-600.0)
#define W_TINY 0x1p-865
#define ET_MAX 0x1p-24

struct ac_gb_ws {
  int64_t b, kvh;                /* keys loaded (-1: none) */
  double *K, *Ka, *V;            /* tk*dk, tk*dk (|K|), tk*dv */
  double *nk, *nv;               /* per key: bounds on ||k_j||, ||v_j|| */
  int32_t *ck, *cv;              /* per key: E(norm) - lsb, for the exactness test */
  double *Q, *Qa, *O, *Oa;       /* qb*dk, qb*dk, qb*dv, qb*dv: the tile's q, |q|, dO, |dO| */
  double *nq, *no;               /* per row */
  int32_t *cq, *co;
  double *S, *EP, *Y, *E;        /* qb*tk strips: scores, weights, P; their bounds; dP, dS; dS's bounds */
  double *H;                     /* tk*max(dk, dv): a tile's column sums */
  double *Gh, *Gl, *Gt, *Ga;     /* qb*dk: the tile's dQ (TwoSum), a block's product, the bound */
  double *tt;                    /* tk: a row's exponent arguments */
};

static void *alloc_d(int64_t n) { return ac_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double)); }

ac_gb_ws *ac_gb_ws_new(const ac_gb_case *G)
{
  const ac_problem *p = &G->c->p;
  const int64_t tk = p->tk, dk = p->dk, dv = p->dv, qb = G->qb, dm = dk > dv ? dk : dv;
  ac_gb_ws *w = ac_xcalloc(1, sizeof *w);
  w->b = w->kvh = -1;
  w->K = alloc_d(tk * dk), w->Ka = alloc_d(tk * dk), w->V = alloc_d(tk * dv);
  w->nk = alloc_d(tk), w->nv = alloc_d(tk);
  w->ck = ac_xmalloc((size_t)tk * sizeof *w->ck + 1), w->cv = ac_xmalloc((size_t)tk * sizeof *w->cv + 1);
  w->Q = alloc_d(qb * dk), w->Qa = alloc_d(qb * dk), w->O = alloc_d(qb * dv), w->Oa = alloc_d(qb * dv);
  w->nq = alloc_d(qb), w->no = alloc_d(qb);
  w->cq = ac_xmalloc((size_t)qb * sizeof *w->cq), w->co = ac_xmalloc((size_t)qb * sizeof *w->co);
  w->S = alloc_d(qb * tk), w->EP = alloc_d(qb * tk), w->Y = alloc_d(qb * tk), w->E = alloc_d(qb * tk);
  w->H = alloc_d(tk * dm);
  w->Gh = alloc_d(qb * dk), w->Gl = alloc_d(qb * dk), w->Gt = alloc_d(qb * dk), w->Ga = alloc_d(qb * dk);
  w->tt = alloc_d(tk);
  return w;
}

void ac_gb_ws_free(ac_gb_ws *w)
{
  if (!w) return;
  double *d[] = {w->K, w->Ka, w->V, w->nk, w->nv, w->Q, w->Qa, w->O, w->Oa, w->nq, w->no, w->S, w->EP, w->Y,
                 w->E, w->H, w->Gh, w->Gl, w->Gt, w->Ga, w->tt};
  for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) free(d[k]);
  free(w->ck); free(w->cv); free(w->cq); free(w->co);
  free(w);
}

/* The exponent of the least significant bit of a non-zero x (a normal binary64 number). */
static int32_t lsb_exp(double x)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  int32_t e = (int32_t)((u >> 52) & 0x7ff);
  uint64_t m = (u & ((1ull << 52) - 1)) | (1ull << 52);
  return e - 1075 + __builtin_ctzll(m);
}

/* Row x of d values: |x| into xa (when not NULL), a bound on ||x||_2, and E(bound) - lsb (a very
 * negative number for a zero row, whose products are all exactly 0). 1 when a value is not finite. */
static int row_prep(const double *x, double *xa, int64_t d, double *nrm, int32_t *cx)
{
  double s = 0;
  int32_t lo = INT32_MAX;
  for (int64_t t = 0; t < d; t++) {
    if (!isfinite(x[t])) return 1;
    s += x[t] * x[t];
    if (xa) xa[t] = fabs(x[t]);
    if (x[t] != 0) {
      int32_t l = lsb_exp(x[t]);
      lo = l < lo ? l : lo;
    }
  }
  *nrm = sqrt(s) * (1 + (double)(d + 4) * 0x1p-52);
  if (lo == INT32_MAX) {
    *cx = INT32_MIN / 4;
    return 0;
  }
  int e;
  frexp(*nrm, &e);   /* nrm < 2^e */
  *cx = e - lo;
  return 0;
}

int ac_gb_load_kv(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t kvh)
{
  if (w->b == b && w->kvh == kvh) return 0;
  const ac_case *c = G->c;
  const ac_problem *p = &c->p;
  w->b = w->kvh = -1;
  for (int64_t j = 0; j < p->tk; j++) {
    double *k = w->K + j * p->dk, *v = w->V + j * p->dv;
    for (int64_t t = 0; t < p->dk; t++) k[t] = ac_load(p->dtype, c->k, ac_kidx(p, b, kvh, j, t));
    for (int64_t t = 0; t < p->dv; t++) v[t] = ac_load(p->dtype, c->v, ac_vidx(p, b, kvh, j, t));
    if (row_prep(k, w->Ka + j * p->dk, p->dk, &w->nk[j], &w->ck[j]) ||
        row_prep(v, NULL, p->dv, &w->nv[j], &w->cv[j]))
      return 1;
  }
  w->b = b, w->kvh = kvh;
  return 0;
}

/* Σ x (TwoSum, four lanes) and Σ |x|: returns fl(hi + lo); |result - Σ x| <= u|result| + 2 n² u² Σ|x|. */
static double sum2(const double *x, int64_t n, double *abs)
{
  double h[4] = {0, 0, 0, 0}, l = 0, a = 0;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int k = 0; k < 4; k++) {
      double s = h[k] + x[j + k], bp = s - h[k];
      l += (h[k] - (s - bp)) + (x[j + k] - bp);
      h[k] = s;
      a += fabs(x[j + k]);
    }
  for (; j < n; j++) {
    double s = h[0] + x[j], bp = s - h[0];
    l += (h[0] - (s - bp)) + (x[j] - bp);
    h[0] = s;
    a += fabs(x[j]);
  }
  for (int k = 1; k < 4; k++) {
    double s = h[0] + h[k], bp = s - h[0];
    l += (h[0] - (s - bp)) + (h[k] - bp);
    h[0] = s;
  }
  *abs = a;
  return h[0] + l;
}

/* (hi, lo) += x element by element (TwoSum). */
static void acc2(double *hi, double *lo, const double *x, int64_t n)
{
  for (int64_t k = 0; k < n; k++) {
    double s = hi[k] + x[k], bp = s - hi[k];
    lo[k] += (hi[k] - (s - bp)) + (x[k] - bp);
    hi[k] = s;
  }
}

static double gam(int64_t n) { return ac_gemm_gamma(n); }

/* Scores of row r (global i) against the strip's keys [jlo, jlo + n) into S (s~, -inf where not
 * visible) and EP (es); returns the row's largest score (-inf: none visible), or NAN when a
 * score leaves the domain (a NaN or +inf bias, a non-finite score). */
static double row_scores(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t h, int64_t i, int64_t r, int64_t jlo,
                         int64_t n)
{
  const ac_case *c = G->c;
  const ac_problem *p = &c->p;
  double *s = w->S + r * n, *es = w->EP + r * n, m = -INFINITY, acs = fabs(G->cs);
  const double gdk = gam(p->dk), ce = acs * (1 + G->eps_c), cr = G->eps_c * (1 + 2 * U) + U, nq = w->nq[r];
  const int32_t cq = w->cq[r];
  int64_t lo, hi;
  ac_visible_range(p, i, &lo, &hi);
  const int alibi = (p->f.used & AC_FEAT_ALIBI) && c->alibi_slopes, bias = (p->f.used & AC_FEAT_BIAS) && c->bias;
  const int bm = (p->f.used & AC_FEAT_BOOL_MASK) && c->bool_mask;
  const double slope = alibi ? ac_features_slope(c, b, h) : 0;
  for (int64_t j = 0; j < n; j++) {
    const int64_t kj = jlo + j;
    if (kj < lo || kj >= hi || (bm && !ac_features_visible(c, b, h, i, kj))) {
      s[j] = -INFINITY;
      continue;
    }
    double ez = cq + w->ck[kj] <= 52 ? 0 : gdk * nq * w->nk[kj];
    double x = G->cs * s[j], e = ce * ez + cr * fabs(x);
    if (alibi) {
      double a = -(slope * (double)ac_alibi_dist(p, i, kj));
      x += a;
      e += U * (fabs(a) + fabs(x));
    }
    if (bias) {
      double bv = ac_load(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, i, kj));
      if (bv == -INFINITY) {
        s[j] = -INFINITY;
        continue;
      }
      x += bv;
      e += U * fabs(x);
    }
    if (!isfinite(x)) return NAN;
    s[j] = x;
    es[j] = e * SL;
    if (x > m) m = x;
  }
  return m;
}

/* Weights of row r: S becomes P~, EP its bound eP; the sink's P~ and eP into *ps, *eps (0 without
 * one). Returns 1 when an exponent argument is not placed well enough (et > 2^-24). */
static int row_weights(ac_gb_ws *w, double m, double sink, int64_t r, int64_t n, double *ps, double *eps)
{
  double *s = w->S + r * n, *e = w->EP + r * n, *tt = w->tt;
  for (int64_t j = 0; j < n; j++) {
    if (s[j] == -INFINITY) continue;
    double t = s[j] - m, et = e[j] + U * fabs(t);
    if (!(et <= ET_MAX)) return 1;
    tt[j] = t < T_TINY ? T_TINY : t;
    e[j] = et;
  }
  for (int64_t j = 0; j < n; j++)
    if (s[j] == -INFINITY) tt[j] = 0;
  ac_fx_exp_array(tt, tt, n);
  double lh = 0, ll = 0, sew = 0;
  int64_t cnt = 0;
  for (int64_t j = 0; j < n; j++) {
    if (s[j] == -INFINITY) {
      s[j] = e[j] = 0;   /* not visible: P = 0 exactly */
      continue;
    }
    double t = s[j] - m, wv = t < T_TINY ? 0 : tt[j];
    double ew = t < T_TINY ? W_TINY : SL * (0x1p-50 + e[j] * (1 + e[j])) / (1 - 0x1p-50) * wv;
    s[j] = wv, e[j] = ew;
    double x = lh + wv, bp = x - lh;
    ll += (lh - (x - bp)) + (wv - bp);
    lh = x;
    sew += ew;
    cnt++;
  }
  double ws = 0, ews = 0;
  if (sink > -INFINITY) {   /* the sink: score σ_h exactly, t~ within u|t~| */
    double t = sink - m, et = U * fabs(t);
    ws = t < T_TINY ? 0 : ac_fx_exp(t);
    ews = t < T_TINY ? W_TINY : SL * (0x1p-50 + et * (1 + et)) / (1 - 0x1p-50) * ws;
    double x = lh + ws, bp = x - lh;
    ll += (lh - (x - bp)) + (ws - bp);
    lh = x;
    sew += ews;
    cnt++;
  }
  double L = lh + ll, nn = (double)cnt;
  double eL = SL * (sew * (1 + 2 * gam(cnt)) + (U + 2 * nn * nn * U * U) * L) + nn * 0x1p-1074;
  double bL = eL / L, den = L * (1 - bL);
  if (!(bL <= 0x1p-20)) return 1;
  for (int64_t j = 0; j < n; j++) {
    if (s[j] == 0 && e[j] == 0) continue;
    double wv = s[j];
    s[j] = wv / L;
    e[j] = SL * (e[j] + wv * bL) / den + U * s[j] + FL;
  }
  *ps = ws / L;
  *eps = sink > -INFINITY ? SL * (ews + ws * bL) / den + U * *ps + FL : 0;
  return 0;
}

/* D~ of row r, then Y := dS~, E := eS + κ|dS~|, EP := eP + κ P~; returns D~ and its bound in *eD. */
static double row_ds(ac_gb_ws *w, const ac_gb_case *G, int64_t r, int64_t jlo, int64_t n, double kappa, double *eD)
{
  const ac_problem *p = &G->c->p;
  double *P = w->S + r * n, *eP = w->EP + r * n, *Y = w->Y + r * n, *E = w->E + r * n, *pr = w->tt;
  const double gdv = gam(p->dv), no = w->no[r];
  const int32_t co = w->co[r];
  double sa = 0, pa;
  for (int64_t j = 0; j < n; j++) {
    double edp = co + w->cv[jlo + j] <= 52 ? 0 : SL * gdv * no * w->nv[jlo + j];
    pr[j] = P[j] * Y[j];
    sa += eP[j] * (fabs(Y[j]) + edp) + P[j] * edp;
  }
  double D = sum2(pr, n, &pa), nn = (double)n, g2 = 1 + 2 * gam(n);
  double e = SL * (g2 * (sa + (U + 2 * nn * nn * U * U) * pa) + U * fabs(D)) + nn * 0x1p-1073;
  for (int64_t j = 0; j < n; j++) {
    if (P[j] == 0 && eP[j] == 0) {   /* not visible */
      Y[j] = E[j] = 0;
      continue;
    }
    double edp = co + w->cv[jlo + j] <= 52 ? 0 : SL * gdv * no * w->nv[jlo + j];
    double y = Y[j] - D, ey = SL * (edp + e) + U * fabs(y), ds = P[j] * y;
    double es = SL * (eP[j] * (fabs(y) + ey) + P[j] * ey) + U * fabs(ds) + FL;
    Y[j] = ds;
    E[j] = es + kappa * fabs(ds);
    eP[j] += kappa * P[j];
  }
  *eD = e;
  return D;
}

/* dQ of the tile's nr rows (after row_ds): decided where pending. */
static void tile_dq(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t h, int64_t i0, int64_t nr, int64_t jlo,
                    int64_t n, const uint8_t *rowok, ac_gb_count *cnt)
{
  const ac_problem *p = &G->c->p;
  const int64_t dk = p->dk;
  ac_grad_tensor *T = &G->r->dq;
  memset(w->Gh, 0, (size_t)(nr * dk) * sizeof(double));
  memset(w->Gl, 0, (size_t)(nr * dk) * sizeof(double));
  for (int64_t j0 = 0; j0 < n; j0 += G->kb) {
    int64_t m = n - j0 < G->kb ? n - j0 : G->kb;
    ac_gemm(0, 0, nr, dk, m, w->Y + j0, n, w->K + (jlo + j0) * dk, dk, 0, w->Gt, dk);
    acc2(w->Gh, w->Gl, w->Gt, nr * dk);
  }
  ac_gemm(0, 0, nr, dk, n, w->E, n, w->Ka + jlo * dk, dk, 0, w->Ga, dk);
  const double ac = fabs(G->cs) * (1 + G->eps_c), cr = G->eps_c * (1 + U) + U, g2 = 1 + 2 * gam(n);
  for (int64_t r = 0; r < nr; r++) {
    int64_t sq = T->slot[(b * p->heads + h) * p->tq + i0 + r];
    if (sq < 0 || !rowok[r]) continue;
    for (int64_t t = 0; t < dk; t++) {
      int64_t e = sq * dk + t;
      if (!G->pend[0][e]) continue;
      double g = w->Gh[r * dk + t] + w->Gl[r * dk + t];
      double eg = SL * g2 * (w->Ga[r * dk + t] + 2 * (double)n * 0x1p-1074) + U * fabs(g);
      double v = G->cs * g, err = SL * (ac * eg + cr * fabs(v)) + 0x1p-1073;
      ac_gb_decide(T, G->pend[0], e, v, err, cnt);
    }
  }
}

/* Row r has no visible key (and no sink weight to carry): dQ_i = 0 exactly. */
static void empty_row(const ac_gb_case *G, int64_t row, ac_gb_count *cnt)
{
  ac_grad_tensor *T = &G->r->dq;
  const int64_t dk = G->c->p.dk, sq = T->slot[row];
  for (int64_t t = 0; sq >= 0 && t < dk; t++) {
    int64_t e = sq * dk + t;
    if (!G->pend[0][e]) continue;
    T->el[e] = (ac_grad_elem){0.0, 0.0, AC_HOW_EXACT, AC_ACCEPT_VALUE};
    for (int f = 0; f < AC_NDTYPES; f++)
      if (T->bits[f]) T->bits[f][e] = ac_encode_f64((ac_dtype)f, 0.0);
    G->pend[0][e] = 0;
    cnt->exact++, cnt->zero++;
  }
}

int ac_gb_tile(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t h, int64_t i0, int64_t i1, ac_gb_part *part,
               ac_gb_count *cnt)
{
  const ac_case *c = G->c;
  const ac_problem *p = &c->p;
  const int64_t dk = p->dk, dv = p->dv, nr = i1 - i0;
  const ac_dtype od = ac_tensor_dtype(p, 'o');
  int64_t jlo = p->tk, jhi = 0;
  for (int64_t i = i0; i < i1; i++) {
    int64_t lo, hi;
    ac_visible_range(p, i, &lo, &hi);
    if (lo < hi) jlo = lo < jlo ? lo : jlo, jhi = hi > jhi ? hi : jhi;
  }
  for (int64_t r = 0; r < nr; r++) {
    double *q = w->Q + r * dk, *o = w->O + r * dv;
    for (int64_t t = 0; t < dk; t++) q[t] = ac_load(p->dtype, c->q, ac_qidx(p, b, h, i0 + r, t));
    for (int64_t t = 0; t < dv; t++) o[t] = ac_load(od, G->dout, ac_oidx(p, b, h, i0 + r, t));
    if (row_prep(q, w->Qa + r * dk, dk, &w->nq[r], &w->cq[r]) || row_prep(o, w->Oa + r * dv, dv, &w->no[r], &w->co[r]))
      return part->bad = 1;
  }
  const double sink = (p->f.used & AC_FEAT_SINKS) && c->sinks ? (double)c->sinks[h] : -INFINITY;
  if (isnan(sink) || sink == INFINITY) return part->bad = 1;
  const int64_t n = jlo < jhi ? jhi - jlo : 0;
  uint8_t rowok[nr];
  if (n == 0) {   /* no row sees a key: dQ = 0 exactly, D = 0, the sink adds 0 to dσ */
    for (int64_t r = 0; r < nr; r++) empty_row(G, (b * p->heads + h) * p->tq + i0 + r, cnt);
    part->rows += nr;
    return 0;
  }
  ac_gemm(0, 1, nr, n, dk, w->Q, dk, w->K + jlo * dk, dk, 0, w->S, n);
  ac_gemm(0, 1, nr, n, dv, w->O, dv, w->V + jlo * dv, dv, 0, w->Y, n);
  const double kappa = SL * (gam(G->kb > G->qb ? G->kb : G->qb) + 0x1p-60);
  for (int64_t r = 0; r < nr; r++) {
    double m = row_scores(w, G, b, h, i0 + r, r, jlo, n);
    if (isnan(m)) return part->bad = 1;
    rowok[r] = m > -INFINITY;
    double mm = sink > m ? sink : m, ps = 0, eps = 0, eD = 0;
    if (!rowok[r]) {   /* no visible key: P = 0 on the strip (the sink, if any, weighs 1) */
      empty_row(G, (b * p->heads + h) * p->tq + i0 + r, cnt);
      memset(w->S + r * n, 0, (size_t)n * sizeof(double));
      memset(w->EP + r * n, 0, (size_t)n * sizeof(double));
      memset(w->Y + r * n, 0, (size_t)n * sizeof(double));
      memset(w->E + r * n, 0, (size_t)n * sizeof(double));
      continue;
    }
    if (row_weights(w, mm, sink, r, n, &ps, &eps)) return part->bad = 1;
    double D = row_ds(w, G, r, jlo, n, kappa, &eD);
    if (sink > -INFINITY) {   /* dσ_h += -P~_sink D~ */
      double x = -(ps * D), s = part->sh + x, bp = s - part->sh;
      part->sl += (part->sh - (s - bp)) + (x - bp);
      part->sh = s;
      part->se += SL * (eps * (fabs(D) + eD) + ps * eD + U * fabs(x)) + 0x1p-1074;
      part->sa += fabs(x);
    }
  }
  tile_dq(w, G, b, h, i0, nr, jlo, n, rowok, cnt);
  part->rows += nr;
  if (!part->kh) return 0;
  /* the column sums of the tile, the scale applied when they are closed */
  ac_gemm(1, 0, n, dk, nr, w->Y, n, w->Q, dk, 0, w->H, dk);
  acc2(part->kh + jlo * dk, part->kl + jlo * dk, w->H, n * dk);
  ac_gemm(1, 0, n, dk, nr, w->E, n, w->Qa, dk, 1, part->ka + jlo * dk, dk);
  ac_gemm(1, 0, n, dv, nr, w->S, n, w->O, dv, 0, w->H, dv);
  acc2(part->vh + jlo * dv, part->vl + jlo * dv, w->H, n * dv);
  ac_gemm(1, 0, n, dv, nr, w->EP, n, w->Oa, dv, 1, part->va + jlo * dv, dv);
  return 0;
}
