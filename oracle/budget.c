/* budget.c: the budget terms of docs/numerics.md §7.1 for one row, in long double (its exponent
 * range holds fp64 scores and values; the terms only need a few percent of accuracy).
 * A_j = w_j / L from the interval ends of the weights; s_j = m + t_j. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"

void ac_or_row_budget(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, const ac_oracle_opts *o,
                      const double *mu, int nmu)
{
  (void)o;
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dv = w->p->dv, ng = w->ng;
  long double L = mpfr_get_ld(w->Llo, MPFR_RNDN);
  long double c = w->sc.is_default ? 1.0L / sqrtl((long double)w->sc.dk) : fabsl((long double)w->sc.stored);
  long double m = mpfr_get_ld(w->mlo, MPFR_RNDN);
  long double *Ag = ac_xmalloc((size_t)ng * 2 * sizeof *Ag), *tg = Ag + ng;
  for (int64_t g = 0; g < ng; g++) {
    Ag[g] = mpfr_get_ld(w->wlo[g], MPFR_RNDN) / L;
    tg[g] = mpfr_get_ld(w->tlo[g], MPFR_RNDN);
  }
  /* Extremes of z sit at both ends of the sorted order. */
  long double z0 = fabsl(ac_or_fx_to_ld(ac_or_z(w, w->ord[0]), w->nl, w->zlsb));
  long double z1 = fabsl(ac_or_fx_to_ld(ac_or_z(w, w->ord[n - 1]), w->nl, w->zlsb));
  long double zmax = z0 > z1 ? z0 : z1;
  row->max_abs_z = (double)zmax;
  row->max_abs_s = (double)(c * zmax);
  if (w->sc.sign == 0) row->max_abs_s = 0;
  row->m = mpfr_get_d(w->mlo, MPFR_RNDN);

  int64_t *cols = ac_xmalloc((size_t)dv * sizeof *cols), nc = 0;
  for (int64_t t = 0; t < dv; t++)
    if (el[t].accept == AC_ACCEPT_VALUE) cols[nc++] = t;
  int nt = 6 + nmu; /* R, D, S, Sp, G, Gb, F[nmu] */
  long double lcz = 0, lczb = 0, ls = 0;
  double fmass[AC_ORACLE_NMU] = {0};
  /* Per key: A, A|t|, A|s|, A|c|Z, A|c|Zb (long double); the per-element loop runs in binary64
   * when every factor is representable there (all dtypes but fp64 in practice). */
  long double *kf = ac_xmalloc((size_t)n * 5 * sizeof *kf);
  /* variant rows: the score magnitude of each key in place of |s_j| (docs/numerics.md §11.4) */
  const long double *smag = w->var ? ac_or_var_smag(w) : NULL;
  int dbl = 1;
  for (int64_t j = 0; j < n; j++) {
    int64_t g = w->gof[j];
    long double A = Ag[g];
    long double sj = w->sc.sign == 0 ? 0 : m + tg[g];
    long double *f = kf + 5 * j;
    f[0] = A;
    f[1] = A * fabsl(tg[g]);
    f[2] = A * (smag ? smag[j] : fabsl(sj));
    f[3] = A * c * w->Zabs[j];
    f[4] = A * c * w->Zb[j];
    lcz += f[3];
    lczb += f[4];
    ls += f[2];
    for (int k = 0; k < 5; k++)
      if (!(f[k] <= 0x1p1000L)) dbl = 0;
  }
  if (w->p->dtype == AC_F64) dbl = 0;
  if (dbl) {
    double *acc = ac_xcalloc((size_t)(nt * dv), sizeof *acc), *ov = ac_xmalloc((size_t)(2 * dv) * sizeof *ov);
    double *vbuf = ov + dv;   /* a row of V widened from binary32 */
    double *R = acc, *D = acc + dv, *S = acc + 2 * dv, *Sp = acc + 3 * dv, *G = acc + 4 * dv, *Gb = acc + 5 * dv;
    for (int64_t t = 0; t < dv; t++) ov[t] = el[t].accept == AC_ACCEPT_VALUE ? el[t].o : 0;
    for (int64_t j = 0; j < n; j++) {
      const long double *f = kf + 5 * j;
      double A = (double)f[0], at = (double)f[1], as = (double)f[2], ag = (double)f[3], agb = (double)f[4];
      if (A == 0) continue;
      const double *vd = ac_or_vrow(hd, j, dv, vbuf);
      for (int64_t t = 0; t < dv; t++) {
        double v = vd[t], e = fabs(v - ov[t]);
        R[t] += A * fabs(v);
        D[t] += A * e;
        S[t] += at * e;
        Sp[t] += as * e;
        G[t] += ag * e;
        Gb[t] += agb * e;
      }
      for (int q = 0; q < nmu; q++) {
        if (!(A < mu[q])) continue;
        fmass[q] += A;
        double *F = acc + (6 + q) * dv;
        for (int64_t t = 0; t < dv; t++) F[t] += A * fabs(vd[t] - ov[t]);
      }
    }
    for (int64_t k = 0; k < nc; k++) {
      int64_t t = cols[k];
      el[t].R = R[t];
      el[t].D = D[t];
      el[t].S = S[t];
      el[t].Sp = Sp[t];
      el[t].G = G[t];
      el[t].Gb = Gb[t];
      for (int q = 0; q < nmu; q++) el[t].F[q] = acc[(6 + q) * dv + t];
    }
    free(acc); free(ov);
  } else {
    long double *acc = ac_xcalloc((size_t)(dv * nt), sizeof *acc);
    double *vbuf = ac_xmalloc((size_t)dv * sizeof *vbuf);
    for (int64_t j = 0; j < n; j++) {
      const long double *f = kf + 5 * j;
      long double A = f[0];
      if (A == 0) continue;
      const double *vd = ac_or_vrow(hd, j, dv, vbuf);
      for (int q = 0; q < nmu; q++)
        if (A < mu[q]) fmass[q] += (double)A;
      for (int64_t k = 0; k < nc; k++) {
        int64_t t = cols[k];
        long double v = vd[t], e = fabsl(v - (long double)el[t].o), ae = A * e;
        long double *a = acc + t * nt;
        a[0] += A * fabsl(v);
        a[1] += ae;
        a[2] += f[1] * e;
        a[3] += f[2] * e;
        a[4] += f[3] * e;
        a[5] += f[4] * e;
        for (int q = 0; q < nmu; q++)
          if (A < mu[q]) a[6 + q] += ae;
      }
    }
    for (int64_t k = 0; k < nc; k++) {
      int64_t t = cols[k];
      long double *a = acc + t * nt;
      el[t].R = (double)a[0]; el[t].D = (double)a[1]; el[t].S = (double)a[2];
      el[t].Sp = (double)a[3];
      el[t].G = (double)a[4];
      el[t].Gb = (double)a[5];
      for (int q = 0; q < nmu; q++) el[t].F[q] = (double)a[6 + q];
    }
    free(acc);
    free(vbuf);
  }
  free(kf);
  row->lse_cZ = (double)lcz;
  row->lse_cZb = (double)lczb;
  row->lse_s = (double)ls;
  for (int q = 0; q < nmu; q++) row->Fmass[q] = fmass[q];
  free(Ag); free(cols);
}

void ac_or_hull_finish(const double *lo, const double *hi, int64_t n, int64_t dv, ac_oracle_elem *el)
{
  for (int64_t t = 0; t < dv; t++) {
    if (el[t].accept != AC_ACCEPT_VALUE) continue;
    long double o = el[t].o, m = 0;
    if (n > 0 && hi[t] >= lo[t]) {
      long double a = (long double)hi[t] - o, b = o - (long double)lo[t];
      m = fabsl(a) > fabsl(b) ? fabsl(a) : fabsl(b);
    }
    /* rounded up to binary64 so that M never falls below the long double maximum */
    double md = (double)m;
    el[t].M = (long double)md < m ? nextafter(md, INFINITY) : md;
  }
}

void ac_or_row_hull(const ac_or_ws *w, ac_oracle_elem *el)
{
  int64_t n = w->n, dv = w->p->dv;
  /* One pass over the keys in storage order gives both extremes per column. */
  double *lo = ac_xmalloc((size_t)(3 * dv) * sizeof *lo), *hi = lo + dv, *vbuf = hi + dv;
  for (int64_t t = 0; t < dv; t++) lo[t] = INFINITY, hi[t] = -INFINITY;
  for (int64_t j = 0; j < n; j++) {
    const double *vj = ac_or_vrow(w->head, j, dv, vbuf);
    for (int64_t t = 0; t < dv; t++) {
      if (vj[t] < lo[t]) lo[t] = vj[t];
      if (vj[t] > hi[t]) hi[t] = vj[t];
    }
  }
  ac_or_hull_finish(lo, hi, n, dv, el);
  free(lo);
}
