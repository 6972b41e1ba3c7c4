/* infscores.c: the score class of each visible key of a row whose q or visible keys hold a
 * non-finite value (the rule table of oracle.h), and the reduced head of the keys that
 * keep a weight. IEEE semantics on the stored values: a product q_t·k_t is NaN when either
 * factor is NaN or one is ±inf and the other 0, ±inf when one factor is infinite, finite
 * otherwise; a sum holding +inf and -inf terms is NaN; c = 0 times an infinity is NaN and
 * c < 0 flips it. Finite values are taken exactly (a kernel's own overflow of finite
 * products is the domain rule's business, not this file's). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"

int ac_or_inf_classify(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t n, uint8_t *cls)
{
  const ac_problem *p = w->p;
  const ac_case *cs = w->cs;
  ac_dtype dt = p->dtype;
  int64_t kvh = ac_kv_head(p, h), dk = p->dk;
  double *q = ac_xmalloc((size_t)dk * sizeof *q);
  for (int64_t t = 0; t < dk; t++) q[t] = ac_decode(dt, ac_load_bits(dt, cs->q, ac_qidx(p, b, h, i, t)));
  int row = AC_SCLS_FINITE;
  for (int64_t j = 0; j < n; j++) {
    int pos = 0, neg = 0, nan = 0;
    for (int64_t t = 0; t < dk && !nan; t++) {
      double a = q[t], k = ac_decode(dt, ac_load_bits(dt, cs->k, ac_kidx(p, b, kvh, j, t)));
      if (isnan(a) || isnan(k)) { nan = 1; break; }
      if (!isinf(a) && !isinf(k)) continue;
      if (a == 0 || k == 0) { nan = 1; break; }
      if ((a > 0) == (k > 0)) pos = 1;
      else neg = 1;
    }
    uint8_t c = AC_SCLS_FINITE;
    if (nan || (pos && neg)) c = AC_SCLS_NAN;
    else if (pos || neg) {
      if (w->sc.sign == 0) c = AC_SCLS_NAN;
      else c = (pos == (w->sc.sign > 0)) ? AC_SCLS_PINF : AC_SCLS_NINF;
    }
    cls[j] = c;
    if (c == AC_SCLS_NAN) row = AC_SCLS_NAN;
    else if (c == AC_SCLS_PINF && row != AC_SCLS_NAN) row = AC_SCLS_PINF;
    else if (c == AC_SCLS_NINF && row == AC_SCLS_FINITE) row = AC_SCLS_NINF;
  }
  free(q);
  return row;
}

int64_t ac_or_head_subset(ac_or_head *dst, const ac_or_head *src, const ac_problem *p, const uint8_t *keep,
                          int64_t n)
{
  int64_t dk = p->dk, dv = p->dv, m = 0;
  int64_t nk = n * dk, nv = n * dv;
  int k_me = src->km != NULL;   /* the subset keeps the source's K representation (kd, vd in binary64) */
  free(dst->kown); free(dst->vown);
  dst->kown = NULL; dst->vown = NULL; dst->kf = NULL; dst->vf = NULL;
  if (!k_me) { free(dst->km); free(dst->ke); dst->km = NULL; dst->ke = NULL; }
  if (nk > dst->cap_k || (k_me && !dst->km) || !dst->kd) {
    if (k_me) {
      dst->km = ac_xrealloc(dst->km, (size_t)(nk ? nk : 1) * sizeof *dst->km);
      dst->ke = ac_xrealloc(dst->ke, (size_t)(nk ? nk : 1) * sizeof *dst->ke);
    }
    dst->kd = ac_xrealloc(dst->kd, (size_t)(nk ? nk : 1) * sizeof *dst->kd);
    dst->kbad = ac_xrealloc(dst->kbad, (size_t)(n ? n : 1));
    dst->cap_k = nk;
  }
  int with_me = src->vm != NULL;   /* the subset keeps the source's V representation */
  if (!with_me) { free(dst->vm); free(dst->ve); dst->vm = NULL; dst->ve = NULL; }
  if (nv > dst->cap_v || (with_me && !dst->vm) || !dst->vd) {
    if (with_me) {
      dst->vm = ac_xrealloc(dst->vm, (size_t)(nv ? nv : 1) * sizeof *dst->vm);
      dst->ve = ac_xrealloc(dst->ve, (size_t)(nv ? nv : 1) * sizeof *dst->ve);
    }
    dst->vd = ac_xrealloc(dst->vd, (size_t)(nv ? nv : 1) * sizeof *dst->vd);
    dst->vcls = ac_xrealloc(dst->vcls, (size_t)(nv ? nv : 1));
    dst->vabs = ac_xrealloc(dst->vabs, (size_t)(nv + dv) * sizeof *dst->vabs);
    dst->v_lsb = ac_xrealloc(dst->v_lsb, (size_t)dv * sizeof *dst->v_lsb);
    dst->v_msb = ac_xrealloc(dst->v_msb, (size_t)dv * sizeof *dst->v_msb);
    dst->v_any = ac_xrealloc(dst->v_any, (size_t)dv);
    dst->cap_v = nv;
  }
  dst->k_l1max = src->k_l1max;
  for (int64_t j = 0; j < n; j++) {
    if (!keep[j]) continue;
    if (k_me) {
      memcpy(dst->km + m * dk, src->km + j * dk, (size_t)dk * sizeof *dst->km);
      memcpy(dst->ke + m * dk, src->ke + j * dk, (size_t)dk * sizeof *dst->ke);
    }
    for (int64_t t = 0; t < dk; t++) dst->kd[m * dk + t] = ac_or_kval(src, (size_t)(j * dk + t));
    dst->kbad[m] = 0;
    if (with_me) {
      memcpy(dst->vm + m * dv, src->vm + j * dv, (size_t)dv * sizeof *dst->vm);
      memcpy(dst->ve + m * dv, src->ve + j * dv, (size_t)dv * sizeof *dst->ve);
    }
    for (int64_t t = 0; t < dv; t++) dst->vd[m * dv + t] = ac_or_vval(src, (size_t)(j * dv + t));
    memcpy(dst->vcls + m * dv, src->vcls + j * dv, (size_t)dv);
    m++;
  }
  /* The head's windows (lsb, msb over all its keys) contain the subset's: the fixed-point
   * layouts stay valid, and both oracle paths see the same reduced head. */
  dst->k_any = src->k_any; dst->k_lsb = src->k_lsb; dst->k_msb = src->k_msb;
  memcpy(dst->v_lsb, src->v_lsb, (size_t)dv * sizeof *dst->v_lsb);
  memcpy(dst->v_msb, src->v_msb, (size_t)dv * sizeof *dst->v_msb);
  memcpy(dst->v_any, src->v_any, (size_t)dv);
  for (int64_t t = 0; t < dv; t++) dst->vabs[t] = 0;
  for (int64_t j = 0; j < m; j++)
    for (int64_t t = 0; t < dv; t++) {
      size_t x = (size_t)(j * dv + t);
      int fits = ac_or_vcol_bits(dst, t, p->tk, 0) <= 126;
      int32_t e;
      int64_t M = ac_or_v(dst, x, t, &e);
      ac_i128 a = fits && dst->vcls[x] == AC_VCLS_FINITE
                      ? (ac_i128)((ac_u128)(uint64_t)llabs(M) << (e - dst->v_lsb[t])) : 0;
      dst->vabs[x + (size_t)dv] = dst->vabs[x] + a;
    }
  dst->b = src->b;
  dst->kvh = src->kvh;
  return m;
}
