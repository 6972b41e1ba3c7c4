/* blastile.c: the tiles of the certified BLAS level 0 (blastile.h; docs/numerics.md §12.2). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "blastile.h"
#include "gemm.h"

int64_t ac_bt_rows_per_tile(int64_t tk)
{
  int64_t r = ((int64_t)1 << 19) / (tk > 0 ? tk : 1);
  r = r / 16 * 16;
  return r < 16 ? 16 : r > 128 ? 128 : r;
}

void ac_bt_scale_init(ac_bt_scale *s, const ac_or_scale *sc, int64_t dk)
{
  double cd = sc->sign == 0 ? 0 : sc->approx, ec = 0;
  if (sc->sign != 0 && sc->is_default) {
    mpfr_t clo, chi;
    mpfr_inits2(64, clo, chi, (mpfr_ptr)0);
    ac_or_scale_interval(sc, clo, chi);
    double a = mpfr_get_d(clo, MPFR_RNDD), b = mpfr_get_d(chi, MPFR_RNDU);
    ec = fmax(b - cd, cd - a);   /* exact differences (Sterbenz) */
    mpfr_clears(clo, chi, (mpfr_ptr)0);
  }
  s->cd = cd;
  s->ec = ec;
  s->cup = (fabs(cd) + ec) * (1 + 0x1p-52);
  int64_t nc = (dk + AC_BT_DKC - 1) / AC_BT_DKC;
  s->ga = ac_gemm_gamma_f32(dk);
  s->iga = 1 / (1 - s->ga) * (1 + 0x1p-51);
  s->gz = ac_gemm_gamma((dk < AC_BT_DKC ? dk : AC_BT_DKC) + nc - 1);
  s->zsub = (double)dk * 0x1p-1074;
  s->zsuba = (double)dk * 0x1p-146;
  s->dk = dk;
}

void ac_bt_head_free(ac_bt_head *bh)
{
  free(bh->K);
  free(bh->Ka);
  free(bh->V);
  if (bh->Vd != bh->Vf) free(bh->Vd);
  free(bh->Vf);
  free(bh->Kb);
  memset(bh, 0, sizeof *bh);
}

/* 0 when the n binary64 values are binary32 numbers below 2^lim in magnitude; 2 when they are
 * finite, below 2^lim and each 0 or at least AC_BT_WIDE_MIN in magnitude, one not a binary32 number
 * (docs/numerics.md §12.2); else 1. */
static int b32_below(const double *d, int64_t n, double lim)
{
  int ok = 1, b32 = 1;
  for (int64_t x = 0; x < n; x++) {
    double a = fabs(d[x]);
    b32 &= (double)(float)d[x] == d[x];
    ok &= a < lim && (a == 0 || a >= AC_BT_WIDE_MIN);
  }
  return !ok ? 1 : b32 ? 0 : 2;
}

float ac_bt_f32_up(double x)
{
  float f = (float)x;
  return fabs((double)f) < fabs(x) ? nextafterf(f, x > 0 ? INFINITY : -INFINITY) : f;
}

float ac_bt_f32_dir(double x, int dir)
{
  float f = (float)x;
  if (dir > 0 && (double)f < x) f = nextafterf(f, INFINITY);
  if (dir < 0 && (double)f > x) f = nextafterf(f, -INFINITY);
  return f;
}

void ac_bt_head_build(ac_bt_head *bh, const ac_or_head *hd, int64_t tk, int64_t dk, int64_t dv)
{
  ac_bt_head_free(bh);
  bh->tk = tk;
  bh->dk = dk;
  bh->dv = dv;
  bh->dvp = (dv + 15) / 16 * 16;
  bh->nb = (dk + AC_ORACLE_QBLOCK - 1) / AC_ORACLE_QBLOCK;
  for (int64_t j = 0; j < tk; j++)
    if (hd->kbad[j]) return;
  for (int64_t x = 0; x < tk * dv; x++)
    if (hd->vcls[x] != AC_VCLS_FINITE) return;
  bh->K = ac_xmalloc((size_t)(tk * dk) * sizeof *bh->K);
  bh->Ka = ac_xmalloc((size_t)(tk * dk) * sizeof *bh->Ka);
  bh->V = ac_xmalloc((size_t)(tk * dv) * sizeof *bh->V);
  for (int64_t x = 0; x < tk * dk; x++) bh->K[x] = ac_or_kval(hd, (size_t)x);
  for (int64_t x = 0; x < tk * dv; x++) bh->V[x] = ac_or_vval(hd, (size_t)x);
  int kw = b32_below(bh->K, tk * dk, 0x1p56), vw = b32_below(bh->V, tk * dv, 0x1p64);
  if (kw == 1 || vw == 1) {
    ac_bt_head_free(bh);
    return;
  }
  double kmax = 0;
  for (int64_t x = 0; x < tk * dk; x++) kmax = fabs(bh->K[x]) > kmax ? fabs(bh->K[x]) : kmax;
  int ke = 0;
  if (kmax > 0) frexp(kmax, &ke), ke--;
  bh->ks = ldexp(1, ke);
  for (int64_t x = 0; x < tk * dk; x++) bh->Ka[x] = ac_bt_f32_up(ldexp(fabs(bh->K[x]), -ke));
  bh->Vf = ac_xcalloc((size_t)(tk * bh->dvp), sizeof *bh->Vf);
  double vmax = 0;
  for (int64_t j = 0; j < tk; j++)
    for (int64_t t = 0; t < dv; t++) {
      double v = bh->V[j * dv + t];
      float f = ac_bt_f32_up(v);
      bh->Vf[j * bh->dvp + t] = f;
      vmax = fabs((double)f) > vmax ? fabs((double)f) : vmax;   /* |V| <= |Vf| */
    }
  bh->vmax = vmax;
  bh->Kb = ac_xmalloc((size_t)(tk * bh->nb) * sizeof *bh->Kb);
  for (int64_t j = 0; j < tk; j++)
    for (int64_t b = 0; b < bh->nb; b++) {
      int64_t t0 = b * AC_ORACLE_QBLOCK, t1 = t0 + AC_ORACLE_QBLOCK < dk ? t0 + AC_ORACLE_QBLOCK : dk;
      double s = 0;
      for (int64_t t = t0; t < t1; t++) s += fabs(bh->K[j * dk + t]);
      bh->Kb[b * tk + j] = s;
    }
  bh->wide = (kw == 2) | (vw == 2) << 1;
  bh->Vd = bh->Vu = bh->Vf;
  if (vw == 2) {
    bh->Vd = ac_xcalloc((size_t)(2 * tk * bh->dvp), sizeof *bh->Vd);
    bh->Vu = bh->Vd + tk * bh->dvp;
    for (int64_t j = 0; j < tk; j++)
      for (int64_t t = 0; t < dv; t++) {
        bh->Vd[j * bh->dvp + t] = ac_bt_f32_dir(bh->V[j * dv + t], -1);
        bh->Vu[j * bh->dvp + t] = ac_bt_f32_dir(bh->V[j * dv + t], 1);
      }
  }
  bh->ok = 1;
}

void ac_bt_rows_size(ac_bt_rows *R, int64_t nr, int64_t dk)
{
  int64_t nb = (dk + AC_ORACLE_QBLOCK - 1) / AC_ORACLE_QBLOCK;
  if (nr > R->cap || dk != R->dk) {
    free(R->Q);
    free(R->Qa);
    R->Q = ac_xmalloc((size_t)(nr * (dk + nb + 1)) * sizeof *R->Q);
    R->Qa = ac_xmalloc((size_t)(nr * dk) * sizeof *R->Qa);
    R->cap = nr;
  }
  R->Qb = R->Q + R->cap * dk;
  R->qs = R->Qb + R->cap * nb;
  R->nr = nr;
  R->dk = dk;
  R->nb = nb;
}

int ac_bt_rows_set(ac_bt_rows *R, int64_t r, const double *q)
{
  int64_t dk = R->dk;
  double *Q = R->Q + r * dk, *Qb = R->Qb + r * R->nb;
  float *Qa = R->Qa + r * dk;
  int wide = b32_below(q, dk, 0x1p56);
  if (wide == 1) return 1;
  double qmax = 0;
  for (int64_t t = 0; t < dk; t++) qmax = fabs(q[t]) > qmax ? fabs(q[t]) : qmax;
  int qe = 0;
  if (qmax > 0) frexp(qmax, &qe), qe--;
  R->qs[r] = ldexp(1, qe);
  for (int64_t t = 0; t < dk; t++) {
    Q[t] = q[t];
    Qa[t] = ac_bt_f32_up(ldexp(fabs(q[t]), -qe));
  }
  for (int64_t b = 0; b < R->nb; b++) {
    int64_t t0 = b * AC_ORACLE_QBLOCK, t1 = t0 + AC_ORACLE_QBLOCK < dk ? t0 + AC_ORACLE_QBLOCK : dk;
    double m = 0;
    for (int64_t t = t0; t < t1; t++) m = fabs(q[t]) > m ? fabs(q[t]) : m;
    Qb[b] = m;
  }
  return wide;
}

void ac_bt_rows_free(ac_bt_rows *R)
{
  free(R->Q);
  free(R->Qa);
  memset(R, 0, sizeof *R);
}

void ac_bt_scores(const ac_bt_rows *R, const ac_bt_head *bh, int64_t k0, int64_t k1, double *zh, float *za, int64_t ld,
                  double *tmp)
{
  int64_t dk = bh->dk, kn = k1 - k0;
  for (int64_t t0 = 0; t0 < dk; t0 += AC_BT_DKC) {
    int64_t w = t0 + AC_BT_DKC < dk ? AC_BT_DKC : dk - t0;
    ac_gemm(0, 1, R->nr, kn, w, R->Q + t0, dk, bh->K + k0 * dk + t0, dk, 0, t0 ? tmp : zh, t0 ? kn : ld);
    if (t0)
      for (int64_t r = 0; r < R->nr; r++)
        for (int64_t j = 0; j < kn; j++) zh[r * ld + j] += tmp[r * kn + j];
  }
  ac_gemm_f32(0, 1, R->nr, kn, dk, R->Qa, dk, bh->Ka + k0 * dk, dk, 0, za, ld);
}
