/* blaskeys.c: the per-key passes of one row of a BLAS tile (blasfwd.c): its reference, weights, L and
 * their bounds (docs/numerics.md §12.3), then from A = E fl(1/L) the binary32 weights of the budget
 * sums, the row's sums over its keys and the counts below the thresholds (§12.5), and the extremes
 * of V. The loops are cloned for the vector units and give the same values in every clone (no
 * reassociation, no contraction); the reductions run in eight lanes, so that the order of every
 * sum is fixed whatever the vector width. */
#include "config.h"
#include <string.h>
#include "blasint.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

#define LANES 8
#define LSUM(a) (((a)[0] + (a)[1]) + ((a)[2] + (a)[3])) + (((a)[4] + (a)[5]) + ((a)[6] + (a)[7]))
static double lmax(const double *a)
{
  double m = a[0];
  for (int l = 1; l < LANES; l++) m = a[l] > m ? a[l] : m;
  return m;
}

/* out[0] = max c_d zh, out[1] = max |zh|, out[2] = max za over the n keys. */
CLONES static void pass_max(const double *restrict zh, const float *restrict za, double cd, int64_t n, double *out)
{
  double a[LANES], b[LANES], c[LANES];
  for (int l = 0; l < LANES; l++) a[l] = -INFINITY, b[l] = 0, c[l] = 0;
  int64_t j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int l = 0; l < LANES; l++) {
      double sh = cd * zh[j + l], z = fabs(zh[j + l]), y = (double)za[j + l];
      a[l] = sh > a[l] ? sh : a[l];
      b[l] = z > b[l] ? z : b[l];
      c[l] = y > c[l] ? y : c[l];
    }
  for (; j < n; j++) {
    double sh = cd * zh[j], z = fabs(zh[j]), y = (double)za[j];
    a[0] = sh > a[0] ? sh : a[0];
    b[0] = z > b[0] ? z : b[0];
    c[0] = y > c[0] ? y : c[0];
  }
  out[0] = lmax(a);
  out[1] = lmax(b);
  out[2] = lmax(c);
}

/* Per key sh = c_d zh (zh becomes sh), t = sh - m (into t), tau (blastile.h) into tau; out[0] = the
 * largest tau of a key with t >= AC_FX_TMIN, out[1] > 0 when a bound is too large (tau >
 * AC_BT_TAU_MAX there, or > 1 below), out[2] = the keys below AC_FX_TMIN. */
CLONES static void pass_tau(const ac_bt_scale *sc, double *restrict zh, const float *restrict za, double zs, double m,
                            double *restrict t, double *restrict tau, int64_t n, double *out)
{
  for (int64_t j = 0; j < n; j++) {
    double sh = sc->cd * zh[j];
    t[j] = sh - m;
    tau[j] = ac_bt_tau(sc, zh[j], ac_bt_zup(sc, (double)za[j], zs), sh, t[j]);
    zh[j] = sh;
  }
  double r[LANES], b[LANES], c[LANES];
  for (int l = 0; l < LANES; l++) r[l] = 0, b[l] = -1, c[l] = 0;
  int64_t j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int l = 0; l < LANES; l++) {
      double in = t[j + l] >= AC_FX_TMIN ? 1.0 : 0.0, rr = tau[j + l] * in;
      double bb = tau[j + l] - (AC_BT_TAU_MAX * in + (1 - in));
      r[l] = rr > r[l] ? rr : r[l];
      b[l] = bb > b[l] ? bb : b[l];
      c[l] += 1 - in;
    }
  for (; j < n; j++) {
    double in = t[j] >= AC_FX_TMIN ? 1.0 : 0.0, rr = tau[j] * in, bb = tau[j] - (AC_BT_TAU_MAX * in + (1 - in));
    r[0] = rr > r[0] ? rr : r[0];
    b[0] = bb > b[0] ? bb : b[0];
    c[0] += 1 - in;
  }
  out[0] = lmax(r);
  out[1] = lmax(b);
  out[2] = LSUM(c);
}

/* L = Σ E in blocks of AC_BT_KT keys (each summed in eight lanes, then the blocks in order: a weight
 * meets at most AC_BT_KT / 8 + 3 + nblocks roundings). */
CLONES static double pass_sum(const double *restrict E, int64_t n)
{
  double L = 0;
  for (int64_t k0 = 0; k0 < n; k0 += AC_BT_KT) {
    int64_t k1 = k0 + AC_BT_KT < n ? k0 + AC_BT_KT : n;
    double a[LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t j = k0;
    for (; j + LANES <= k1; j += LANES)
      for (int l = 0; l < LANES; l++) a[l] += E[j + l];
    for (; j < k1; j++) a[0] += E[j];
    L += LSUM(a);
  }
  return L;
}

/* From A = E iL per key: A |c| Z, A |c| Zb, A |s|, A |t|, A into x (5 rows of n); |c| Zb into zb
 * (cabs: |c_d|; cz: |c_d| times the row's scale of za). */
CLONES static void pass_terms(const double *restrict sh, const double *restrict t, const float *restrict za,
                              const double *restrict E, const double *restrict qb, const double *restrict kb,
                              int64_t nb, int64_t tk, double iL, double cabs, double cz, int64_t n, double *restrict x0,
                              double *restrict x1, double *restrict x2, double *restrict x3, double *restrict x4,
                              double *restrict zb)
{
  for (int64_t j = 0; j < n; j++) zb[j] = 0;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t j = 0; j < n; j++) zb[j] += qb[b] * kb[b * tk + j];
  for (int64_t j = 0; j < n; j++) {
    double A = E[j] * iL, czb = cabs * zb[j];
    x0[j] = A * (cz * (double)za[j]);
    x1[j] = A * czb;
    x2[j] = A * fabs(sh[j]);
    x3[j] = A * fabs(t[j]);
    x4[j] = A;
    zb[j] = czb;
  }
}

/* The binary32 weights from x: w0..w4 = A, A|t|, A|s|, A|c|za, A|c|Zb where A >= AC_BT_SMALL, w5 = A
 * where also A < muf (products by 1 or 0: the loop has no branch). */
CLONES static void pass_w32(const double *restrict x0, const double *restrict x1, const double *restrict x2,
                            const double *restrict x3, const double *restrict x4, double muf, int64_t n,
                            float *restrict w0, float *restrict w1, float *restrict w2, float *restrict w3,
                            float *restrict w4, float *restrict w5)
{
  for (int64_t j = 0; j < n; j++) {
    double A = x4[j], big = A >= AC_BT_SMALL ? 1.0 : 0.0, lo = A < muf ? 1.0 : 0.0;
    w0[j] = (float)(A * big);
    w1[j] = (float)(x3[j] * big);
    w2[j] = (float)(x2[j] * big);
    w3[j] = (float)(x0[j] * big);
    w4[j] = (float)(x1[j] * big);
    w5[j] = (float)(A * (big * lo));
  }
}

/* max (at least init) and Σ of n values, in eight lanes. */
static double lane_max(const double *x, int64_t n, double init)
{
  double a[LANES];
  for (int l = 0; l < LANES; l++) a[l] = init;
  int64_t j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int l = 0; l < LANES; l++) a[l] = x[j + l] > a[l] ? x[j + l] : a[l];
  for (; j < n; j++) a[0] = x[j] > a[0] ? x[j] : a[0];
  return lmax(a);
}

static double lane_sum(const double *x, int64_t n)
{
  double a[LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int l = 0; l < LANES; l++) a[l] += x[j + l];
  for (; j < n; j++) a[0] += x[j];
  return LSUM(a);
}

/* The keys with 0 < A < mu: their number and mass (A = E iL), in eight lanes. */
CLONES static void pass_count(const double *restrict E, double iL, double mu, int64_t n, int64_t *cnt, double *mass)
{
  double c[LANES] = {0, 0, 0, 0, 0, 0, 0, 0}, m[LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int l = 0; l < LANES; l++) {
      double A = E[j + l] * iL, in = (A > 0) & (A < mu) ? 1.0 : 0.0;
      c[l] += in;
      m[l] += in * A;
    }
  for (; j < n; j++) {
    double A = E[j] * iL, in = (A > 0) & (A < mu) ? 1.0 : 0.0;
    c[0] += in;
    m[0] += in * A;
  }
  *cnt = (int64_t)(LSUM(c));
  *mass = LSUM(m);
}

/* The thresholds of F: those above the largest A count every key (F = D), those not above the
 * smallest no key, those between are counted; the binary32 vectors sum the F of the one that splits
 * the keys most evenly when both sides hold more than a quarter of them (blasrow.c sums the others
 * over the smaller side, or takes D). */
static void thresholds(ac_bt_brow *rw, const double *E, int64_t n, const double *mu, int nmu)
{
  double em[LANES] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int l = 0; l < LANES; l++) {
      double e = E[j + l] > 0 ? E[j + l] : 1;
      em[l] = e < em[l] ? e : em[l];
    }
  for (; j < n; j++) em[0] = E[j] > 0 && E[j] < em[0] ? E[j] : em[0];
  double emin = em[0];
  for (int l = 1; l < LANES; l++) emin = em[l] < emin ? em[l] : emin;
  double amin = emin * rw->iL, amax = rw->iL;
  int64_t best = rw->npos / 4;
  double small_mass;
  rw->fq = -1;
  pass_count(E, rw->iL, AC_BT_SMALL, n, &rw->nsmall, &small_mass);
  for (int q = 0; q < nmu; q++) {
    rw->fall[q] = mu[q] > amax;
    rw->nbelow[q] = rw->fall[q] ? rw->npos : 0;
    rw->fmass[q] = 0;
    if (!(mu[q] > amin && mu[q] <= amax)) continue;
    pass_count(E, rw->iL, mu[q], n, &rw->nbelow[q], &rw->fmass[q]);
    int64_t side = rw->nbelow[q] < rw->npos - rw->nbelow[q] ? rw->nbelow[q] : rw->npos - rw->nbelow[q];
    if (side > best) {
      best = side;
      rw->fq = q;
    }
  }
}

int ac_bt_row_weights(ac_bt_brow *rw, const ac_bt_scale *sc, const ac_bt_head *bh, const double *qb, double *zh,
                      const float *za, double *E, double *tb, double gL, const double *mu, int nmu, float *w, int64_t ldw)
{
  int64_t lo = rw->lo, n = rw->hi - rw->lo;
  zh += lo, za += lo, E += lo, w += lo;
  double mx[3], ts[3];
  pass_max(zh, za, sc->cd, n, mx);
  rw->m = mx[0];
  rw->zmax = mx[1];
  rw->czmax = mx[2] * rw->zs * fabs(sc->cd);
  pass_tau(sc, zh, za, rw->zs, rw->m, tb, tb + n, n, ts);
  rw->ntiny = (int64_t)ts[2];
  if (ts[1] > 0) return 1;
  ac_fx_exp_array(tb, E, n);
  for (int64_t j = 0; j < n; j++) E[j] = tb[j] >= AC_FX_TMIN ? E[j] : 0;   /* the keys counted in ntiny */
  double L = pass_sum(E, n);
  AC_ASSERT(L >= 1, "the key of the reference has E = 1 exactly");
  rw->L = L;
  rw->iL = 1 / L;
  rw->rho = ac_bt_rho(ts[0]);
  rw->eL = 1.01 * (gL + rw->rho) * L + (double)rw->ntiny * AC_BT_TINY;
  rw->npos = n - rw->ntiny;   /* A = E fl(1/L) > 0 exactly where E > 0: E >= 2^-1010, 1/L >= 2^-64 */
  if (!(rw->eL <= 0x1p-20 * L)) return 1;
  thresholds(rw, E, n, mu, nmu);
  /* x: 5 rows of n after tb's n, zb: the rest of the scratch (tb holds 7 rows of the row's keys) */
  double *x = tb + n, *zb = x + 5 * n;
  pass_terms(zh, tb, za, E, qb, bh->Kb + lo, bh->nb, bh->tk, rw->iL, fabs(sc->cd), fabs(sc->cd) * rw->zs, n, x, x + n,
             x + 2 * n, x + 3 * n,
             x + 4 * n, zb);
  pass_w32(x, x + n, x + 2 * n, x + 3 * n, x + 4 * n, rw->fq >= 0 ? mu[rw->fq] : 0, n, w, w + ldw, w + 2 * ldw,
           w + 3 * ldw, w + 4 * ldw, w + 5 * ldw);
  rw->lcz = lane_sum(x, n);
  rw->lczb = lane_sum(x + n, n);
  rw->ls = lane_sum(x + 2 * n, n);
  rw->lst = lane_sum(x + 3 * n, n);
  rw->suma = lane_sum(x + 4 * n, n);
  rw->czbmax = lane_max(zb, n, 0);
  for (int q = 0; q < nmu; q++)
    if (rw->fall[q]) rw->fmass[q] = rw->suma;
  return 0;
}

CLONES static void vrange(const float *restrict Vd, const float *restrict Vu, int64_t dvp, int64_t j0, int64_t j1,
                          float *restrict lo, float *restrict hi)
{
  for (int64_t j = j0; j < j1; j++) {
    const float *v = Vd + j * dvp, *w = Vu + j * dvp;
    for (int64_t t = 0; t < dvp; t++) {
      lo[t] = v[t] < lo[t] ? v[t] : lo[t];
      hi[t] = w[t] > hi[t] ? w[t] : hi[t];
    }
  }
}

void ac_bt_vrange(const ac_bt_head *bh, int64_t j0, int64_t j1, float *lo, float *hi)
{
  vrange(bh->Vd, bh->Vu, bh->dvp, j0, j1, lo, hi);
}
