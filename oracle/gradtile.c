/* gradtile.c: one query tile of the backward's matrix-product level (gradblas.h, docs/backward.md
 * §4.4): rows [i0, i0 + nr) of (batch b, head h) against the keys they see, from binary64 products on
 * the library of gemm.h, with a proven bound on every quantity. The scores and their weights are the
 * forward's tiles (blastile.h: a head as the products read it, score tiles with a proven bound per
 * score from zh and the scaled magnitudes za, weights with a proven relative bound); the rest is here.
 *
 * Arithmetic: binary64, round to nearest, no contraction here (the library may contract: the
 * bound of gemm.h holds for any order, with or without FMA); u = 2^-53, γ_n = n u / (1 - n u).
 * SL = 1 + 2^-40 multiplies every bound for the rounding of its own evaluation (at most a few
 * dozen operations on non-negative numbers), FL = 2^-1060 covers what those operations lose to
 * underflow. The inputs are binary64 values of the narrow dtypes (at most 24 significant bits,
 * exponents in [-149, 127]), so a product of two inputs is exact.
 *   Scores (blastile.h): sh = fl(c_d zh) from the products zh and Zup (from za); with ALiBi and a bias the score is
 *     x = fl(fl(sh + fl(-m_h dist)) + bias), each rounding adding u of its result; t = fl(x - m_i), m_i
 *     the largest x of the row (σ_h too): t <= 0, and |t - (s - m_i)| <= tau = ac_bt_tau(zh, Zup, sh, t)
 *     + 1.001 u (|fl(-m_h dist)| + |sh + ...| + |x|) (the weights are invariant under the shift m_i).
 *     The tile leaves the level when a weighted key's tau exceeds 2^-20 or a tiny one's 1.
 *   Weights: w~ = ac_fx_exp(t) within rho = ac_bt_rho(tau) of itself; for t < AC_FX_TMIN, w~ = 0
 *     within AC_BT_TINY. The sink: t = fl(σ_h - m_i), tau = u|t|.
 *   L~ = Σ_j w~_j by TwoSum (error-free additions, their errors summed): |L~ - Σ w~| <=
 *     (u + 2 n² u²) L~; eL = Σ_j ew_j (1 + 2γ_n) + that; βL = eL / L~ (L~ >= 1: the top key's w~ is 1).
 *   P~ = fl(w~ / L~): |P~ - P| <= eP = (ew + w~ βL) / (L~ (1 - βL)) + u P~.
 *   Norms: no_i >= ||dO_i||_2, nv_j >= ||v_j||_2 (the squares are exact, their sum within γ_dv, the
 *     root within u).
 *   dP~ = dO V^T (gemm): |dP~_ij - dP_ij| <= edp_ij = γ_dv no_i nv_j (Σ_t |dO_it v_jt| <= no_i nv_j,
 *     Cauchy-Schwarz); edp_ij = 0 when every product is a multiple of 2^(l_i + l_j) (l: the least
 *     significant bit of the row) and no_i nv_j < 2^(53 + l_i + l_j): every partial sum of any order
 *     is then a binary64 number, so the product is exact (E(no) - l_i + E(nv) - l_j <= 52). For
 *     f16, bf16 and fp8 inputs of ordinary range every dP is exact.
 *   D~ = Σ_j fl(P~_j dP~_j) by TwoSum: |D~ - D| <= eD = (1 + 2γ_n)(Σ_j (eP_j (|dP~_j| + edp_j)
 *     + P~_j edp_j) + (u + 2 n² u²) Σ_j |P~_j dP~_j|) + u|D~| + n 2^-1073.
 *   Y~ = fl(dP~ - D~): eY = edp + eD + u|Y~|;  dS~ = fl(P~ Y~): eS = eP (|Y~| + eY) + P~ eY + u|dS~| + FL.
 *   dQ_i = c Σ_j dS_ij K_j: G~ = Σ over blocks of kb keys of gemm(dS~, K) added by TwoSum, then
 *     fl(hi + lo): |G~ - Σ_j dS_j K_j| <= Σ_j (eS_j + κ |dS~_j|) |K_jt| + 2n 2^-1074 + u|G~|, with
 *     κ = γ_max(kb, qb) + 2^-60 (the block's rounding and the TwoSum's lo, at most m² u² of
 *     Σ |terms| for m <= 2^21 additions); the bound's own gemm (non-negative terms) within γ_n.
 *     dQ~ = fl(c_d G~) with |c_d - c| <= e_c: e = (|c_d| + e_c) eG + e_c |G~| + u|dQ~| + 2^-1073.
 *   dK, dV (column sums): per tile gemm(dS~^T, Q) and gemm(P~^T, dO) added by TwoSum into the
 *     (batch, head)'s part, their bounds gemm(E^T, |Q|) with E = eS + κ|dS~| and gemm(E'^T, |dO|)
 *     with E' = eP + κ P~, accumulated (gradblas.c closes them).
 *   dσ_h: -Σ_i fl(P~_i,sink D~_i) by TwoSum: eP_s (|D~| + eD) + P~_s eD + u|term| + 2^-1074 per row.
 * Cross terms (eP eY, ...) are written out; nothing is first-order only. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blastile.h"
#include "gemm.h"
#include "gradblas.h"
#include "variants.h"

#define U 0x1p-53
#define SL (1 + 0x1p-40)
#define FL 0x1p-1060

struct ac_gb_ws {
  int64_t b, kvh;                /* the head loaded (-1: none) */
  ac_oracle_opts oo;             /* the forward's decode of a head */
  ac_or_head hd;
  ac_bt_head bh;                 /* K, |K|, V as the products read them */
  ac_bt_rows R;                  /* the tile's q */
  double *Ka, *Qa;               /* tk*dk, qb*dk: |K| and the tile's |q| in binary64 (the bounds' products) */
  double *nv;                    /* per key: a bound on ||v_j|| */
  int32_t *cv;                   /* per key: E(nv) - lsb, for the exactness test */
  double *O, *Oa, *no;           /* qb*dv, qb*dv, qb: the tile's dO, |dO|, row norms */
  int32_t *co;
  double *S, *EP, *Y, *E;        /* qb*tk strips: zh, then the weights, then P; x, rho, eP; the offsets'
                                    rounding, dP, dS; the scores' scratch, then dS's bounds */
  float *ZA;                     /* qb*tk: the scores' scaled magnitudes za (blastile.h) */
  double *H;                     /* tk*max(dk, dv): a tile's column sums */
  double *Gh, *Gl, *Gt, *Ga;     /* qb*dk: the tile's dQ (TwoSum), a block's product, the bound */
  double *tt;                    /* tk: a row's exponent arguments, then its products P dP */
};

static void *alloc_d(int64_t n) { return ac_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double)); }

ac_gb_ws *ac_gb_ws_new(const ac_gb_case *G)
{
  const ac_problem *p = &G->c->p;
  const int64_t tk = p->tk, dk = p->dk, dv = p->dv, qb = G->qb, dm = dk > dv ? dk : dv;
  ac_gb_ws *w = ac_xcalloc(1, sizeof *w);
  w->b = w->kvh = -1;
  ac_oracle_opts_init(&w->oo);
  w->nv = alloc_d(tk);
  w->cv = ac_xmalloc((size_t)tk * sizeof *w->cv + 1);
  w->O = alloc_d(qb * dv), w->Oa = alloc_d(qb * dv), w->no = alloc_d(qb);
  w->co = ac_xmalloc((size_t)qb * sizeof *w->co);
  w->S = alloc_d(qb * tk), w->EP = alloc_d(qb * tk), w->Y = alloc_d(qb * tk);
  w->ZA = ac_xmalloc((size_t)(qb * tk + 1) * sizeof *w->ZA);
  w->Ka = alloc_d(tk * dk), w->Qa = alloc_d(qb * dk);
  w->E = alloc_d(qb * tk);
  w->H = alloc_d(tk * dm);
  w->Gh = alloc_d(qb * dk), w->Gl = alloc_d(qb * dk), w->Gt = alloc_d(qb * dk), w->Ga = alloc_d(qb * dk);
  w->tt = alloc_d(tk);
  return w;
}

void ac_gb_ws_free(ac_gb_ws *w)
{
  if (!w) return;
  ac_or_head_free(&w->hd);
  ac_bt_head_free(&w->bh);
  ac_bt_rows_free(&w->R);
  double *d[] = {w->nv, w->O, w->Oa, w->no, w->S, w->EP, w->Y, w->E, w->H, w->Gh, w->Gl, w->Gt, w->Ga, w->tt, w->Ka, w->Qa};
  for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) free(d[k]);
  free(w->cv); free(w->co); free(w->ZA);
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
  const ac_problem *p = &G->c->p;
  w->b = w->kvh = -1;
  ac_or_fast_head_decode(&w->hd, G->c, b, kvh, &w->oo, G->r->formats);
  ac_bt_head_build(&w->bh, &w->hd, p->tk, p->dk, p->dv);
  if (!w->bh.ok || w->bh.wide) return 1;   /* the backward takes binary32 values only */
  for (int64_t x = 0; x < p->tk * p->dk; x++) w->Ka[x] = fabs(w->bh.K[x]);
  for (int64_t j = 0; j < p->tk; j++)
    if (row_prep(w->bh.V + j * p->dv, NULL, p->dv, &w->nv[j], &w->cv[j])) return 1;
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

/* Scores of row r (global i) against the strip's keys [jlo, jlo + n): x into EP (-inf where not
 * visible), the offsets' rounding into Y; returns the row's largest x (-inf: none visible), or
 * NAN when a score leaves the domain (a NaN or +inf bias, a non-finite score). */
static double row_scores(ac_gb_ws *w, const ac_gb_case *G, int64_t b, int64_t h, int64_t i, int64_t r, int64_t jlo,
                         int64_t n)
{
  const ac_case *c = G->c;
  const ac_problem *p = &c->p;
  const double *zh = w->S + r * n, cd = G->sc.cd;
  double *x = w->EP + r * n, *eo = w->Y + r * n, m = -INFINITY;
  int64_t lo, hi;
  ac_visible_range(p, i, &lo, &hi);
  const int alibi = (p->f.used & AC_FEAT_ALIBI) && c->alibi_slopes, bias = (p->f.used & AC_FEAT_BIAS) && c->bias;
  const int bm = (p->f.used & AC_FEAT_BOOL_MASK) && c->bool_mask;
  const double slope = alibi ? ac_features_slope(c, b, h) : 0;
  for (int64_t j = 0; j < n; j++) {
    const int64_t kj = jlo + j;
    if (kj < lo || kj >= hi || (bm && !ac_features_visible(c, b, h, i, kj))) {
      x[j] = -INFINITY;
      continue;
    }
    double v = cd * zh[j], e = 0;
    if (alibi) {
      double a = -(slope * (double)ac_alibi_dist(p, i, kj));
      v += a;
      e += fabs(a) + fabs(v);
    }
    if (bias) {
      double bv = ac_load(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, i, kj));
      if (bv == -INFINITY) {
        x[j] = -INFINITY;
        continue;
      }
      v += bv;
      e += fabs(v);
    }
    if (!isfinite(v)) return NAN;
    x[j] = v;
    eo[j] = 1.001 * U * e;
    if (v > m) m = v;
  }
  return m;
}

/* Weights of row r against the reference m: S becomes P~, EP its bound eP; the sink's P~ and eP
 * into *ps, *eps (0 without one), the visible keys into *nvis. Returns 1 when an exponent argument
 * is not placed well enough. */
static int row_weights(ac_gb_ws *w, const ac_gb_case *G, double m, double sink, int64_t r, int64_t n, double *ps,
                       double *eps, int64_t *nvis)
{
  double *zh = w->S + r * n, *x = w->EP + r * n, *eo = w->Y + r * n, *tt = w->tt;
  const float *za = w->ZA + r * n;
  const double cd = G->sc.cd, zs = w->R.qs[r] * w->bh.ks;
  int bad = 0;
  for (int64_t j = 0; j < n; j++) {   /* x := rho (relative bound of the weight), or -1: not visible */
    if (x[j] == -INFINITY) {
      tt[j] = 0, x[j] = -1;
      continue;
    }
    double t = x[j] - m, tau = ac_bt_tau(&G->sc, zh[j], ac_bt_zup(&G->sc, za[j], zs), cd * zh[j], t) + eo[j];
    bad |= t >= AC_FX_TMIN ? !(tau <= AC_BT_TAU_MAX) : !(tau <= 1);
    tt[j] = t;
    x[j] = t >= AC_FX_TMIN ? ac_bt_rho(tau) : 0;
  }
  if (bad) return 1;
  ac_fx_exp_array(tt, zh, n);
  double lh = 0, ll = 0, sew = 0;
  int64_t cnt = 0;
  for (int64_t j = 0; j < n; j++) {
    if (x[j] < 0) {
      zh[j] = x[j] = 0;   /* not visible: P = 0 exactly */
      continue;
    }
    double wv = zh[j], ew = tt[j] >= AC_FX_TMIN ? x[j] * wv : AC_BT_TINY;
    x[j] = ew;
    double s = lh + wv, bp = s - lh;
    ll += (lh - (s - bp)) + (wv - bp);
    lh = s;
    sew += ew;
    cnt++;
  }
  *nvis = cnt;
  double ws = 0, ews = 0;
  if (sink > -INFINITY) {   /* the sink: score σ_h exactly, t within u|t| */
    double t = sink - m;
    ws = t >= AC_FX_TMIN ? ac_fx_exp(t) : 0;
    ews = t >= AC_FX_TMIN ? ac_bt_rho(U * fabs(t) + 0x1p-1074) * ws : AC_BT_TINY;
    double s = lh + ws, bp = s - lh;
    ll += (lh - (s - bp)) + (ws - bp);
    lh = s;
    sew += ews;
    cnt++;
  }
  double L = lh + ll, nn = (double)cnt;
  double eL = SL * (sew * (1 + 2 * gam(cnt)) + (U + 2 * nn * nn * U * U) * L) + nn * 0x1p-1074;
  double bL = eL / L, den = L * (1 - bL);
  if (!(bL <= 0x1p-20)) return 1;
  for (int64_t j = 0; j < n; j++) {
    if (zh[j] == 0 && x[j] == 0) continue;
    double wv = zh[j];
    zh[j] = wv / L;
    x[j] = SL * (x[j] + wv * bL) / den + U * zh[j] + FL;
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
    ac_gemm(0, 0, nr, dk, m, w->Y + j0, n, w->bh.K + (jlo + j0) * dk, dk, 0, w->Gt, dk);
    acc2(w->Gh, w->Gl, w->Gt, nr * dk);
  }
  ac_gemm(0, 0, nr, dk, n, w->E, n, w->Ka + jlo * dk, dk, 0, w->Ga, dk);
  const double cd = G->sc.cd, ec = G->sc.ec, ac = fabs(cd) + ec, g2 = 1 + 2 * gam(n);
  for (int64_t r = 0; r < nr; r++) {
    int64_t sq = T->slot[(b * p->heads + h) * p->tq + i0 + r];
    if (sq < 0 || !rowok[r]) continue;
    for (int64_t t = 0; t < dk; t++) {
      int64_t e = sq * dk + t;
      if (!G->pend[0][e]) continue;
      double g = w->Gh[r * dk + t] + w->Gl[r * dk + t];
      double eg = SL * g2 * (w->Ga[r * dk + t] + 2 * (double)n * 0x1p-1074) + U * fabs(g);
      double v = cd * g, err = SL * (ac * eg + ec * fabs(g) + U * fabs(v)) + 0x1p-1073;
      if (cd == 0 && ec == 0) ac_gb_zero(T, G->pend[0], e, cnt);   /* a stored scale 0 */
      else ac_gb_decide(T, G->pend[0], e, v, err, cnt);
    }
  }
}

/* Row r has no visible key, or a dO of zeros (dS_i = 0): dQ_i = 0 exactly. */
static void zero_row(const ac_gb_case *G, int64_t row, ac_gb_count *cnt)
{
  ac_grad_tensor *T = &G->r->dq;
  const int64_t dk = G->c->p.dk, sq = T->slot[row];
  for (int64_t t = 0; sq >= 0 && t < dk; t++) ac_gb_zero(T, G->pend[0], sq * dk + t, cnt);
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
  ac_bt_rows_size(&w->R, nr, dk);
  for (int64_t r = 0; r < nr; r++) {
    double *q = w->Gt, *o = w->O + r * dv;   /* Gt: the row's q until the products */
    for (int64_t t = 0; t < dk; t++) q[t] = ac_load(p->dtype, c->q, ac_qidx(p, b, h, i0 + r, t));
    for (int64_t t = 0; t < dv; t++) o[t] = ac_load(od, G->dout, ac_oidx(p, b, h, i0 + r, t));
    int bad = 0;
    for (int64_t t = 0; t < dk; t++) bad |= !isfinite(q[t]), w->Qa[r * dk + t] = fabs(q[t]);
    if (bad || row_prep(o, w->Oa + r * dv, dv, &w->no[r], &w->co[r]) || ac_bt_rows_set(&w->R, r, q)) return part->bad = 1;
  }
  const double sink = (p->f.used & AC_FEAT_SINKS) && c->sinks ? (double)c->sinks[h] : -INFINITY;
  if (isnan(sink) || sink == INFINITY) return part->bad = 1;
  const int64_t n = jlo < jhi ? jhi - jlo : 0;
  uint8_t rowok[nr], ds0[nr];   /* a visible key; dS_i = 0 exactly */
  double ps[nr], eps[nr];
  if (n == 0) {   /* no row sees a key: dQ = 0 exactly, D = 0, the sink adds 0 to dσ */
    for (int64_t r = 0; r < nr; r++) zero_row(G, (b * p->heads + h) * p->tq + i0 + r, cnt);
    part->rows += nr;
    return 0;
  }
  ac_bt_scores(&w->R, &w->bh, jlo, jhi, w->S, w->ZA, n, w->E);
  for (int64_t r = 0; r < nr; r++) {
    double m = row_scores(w, G, b, h, i0 + r, r, jlo, n);
    if (isnan(m)) return part->bad = 1;
    rowok[r] = m > -INFINITY;
    ps[r] = eps[r] = 0;
    ds0[r] = 1;
    if (!rowok[r]) {   /* no visible key: P = 0 on the strip (the sink, if any, weighs 1) */
      zero_row(G, (b * p->heads + h) * p->tq + i0 + r, cnt);
      memset(w->S + r * n, 0, (size_t)n * sizeof(double));
      memset(w->EP + r * n, 0, (size_t)n * sizeof(double));
      continue;
    }
    int64_t nvis;
    if (row_weights(w, G, sink > m ? sink : m, sink, r, n, &ps[r], &eps[r], &nvis)) return part->bad = 1;
    double *P = w->S + r * n, *eP = w->EP + r * n;
    if (w->no[r] > 0) {   /* the keys it sees have a non-zero term */
      for (int64_t j = 0; part->nz && j < n; j++) part->nz[jlo + j] |= P[j] != 0 || eP[j] != 0;
      /* one key and no sink: P = 1, D = dP, dS_i = 0 exactly */
      ds0[r] = nvis == 1 && sink == -INFINITY;
      if (ds0[r]) zero_row(G, (b * p->heads + h) * p->tq + i0 + r, cnt);
      continue;
    }
    /* dO_i = 0: dS_i = 0 and P_i dO_i = 0 exactly, whatever P's error */
    zero_row(G, (b * p->heads + h) * p->tq + i0 + r, cnt);
    memset(eP, 0, (size_t)n * sizeof(double));
  }
  ac_gemm(0, 1, nr, n, dv, w->O, dv, w->bh.V + jlo * dv, dv, 0, w->Y, n);
  const double kappa = SL * (gam(G->kb > G->qb ? G->kb : G->qb) + 0x1p-60);
  for (int64_t r = 0; r < nr; r++) {
    if (ds0[r]) {   /* no term of dK: dS_i = 0 exactly; dV's product still rounds P~ dO (one key) */
      memset(w->Y + r * n, 0, (size_t)n * sizeof(double));
      memset(w->E + r * n, 0, (size_t)n * sizeof(double));
      for (int64_t j = 0; rowok[r] && w->no[r] > 0 && j < n; j++) w->EP[r * n + j] += kappa * w->S[r * n + j];
      continue;
    }
    double eD, D = row_ds(w, G, r, jlo, n, kappa, &eD);
    if (sink > -INFINITY) {   /* dσ_h += -P~_sink D~ */
      double x = -(ps[r] * D), s = part->sh + x, bp = s - part->sh;
      part->sl += (part->sh - (s - bp)) + (x - bp);
      part->sh = s;
      part->se += SL * (eps[r] * (fabs(D) + eD) + ps[r] * eD + U * fabs(x)) + 0x1p-1074;
      part->sa += fabs(x);
    }
  }
  tile_dq(w, G, b, h, i0, nr, jlo, n, rowok, cnt);
  part->rows += nr;
  if (!part->kh) return 0;
  /* the column sums of the tile, the scale applied when they are closed */
  ac_gemm(1, 0, n, dk, nr, w->Y, n, w->R.Q, dk, 0, w->H, dk);
  acc2(part->kh + jlo * dk, part->kl + jlo * dk, w->H, n * dk);
  ac_gemm(1, 0, n, dk, nr, w->E, n, w->Qa, dk, 1, part->ka + jlo * dk, dk);
  ac_gemm(1, 0, n, dv, nr, w->S, n, w->O, dv, 0, w->H, dv);
  acc2(part->vh + jlo * dv, part->vl + jlo * dv, w->H, n * dv);
  ac_gemm(1, 0, n, dv, nr, w->EP, n, w->Oa, dv, 1, part->va + jlo * dv, dv);
  return 0;
}
