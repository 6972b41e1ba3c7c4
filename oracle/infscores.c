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

void ac_or_q_values(const ac_or_ws *w, int64_t b, int64_t h, int64_t i, double *q)
{
  const ac_problem *p = w->p;
  ac_dtype dt = ac_or_tdtype(p, 'q');
  double ds = ac_or_descale(w->cs, 'q', b, ac_kv_head(p, h));
  for (int64_t t = 0; t < p->dk; t++) q[t] = ac_decode(dt, ac_load_bits(dt, w->cs->q, ac_qidx(p, b, h, i, t))) * ds;
}

uint8_t ac_or_inf_key_class(const ac_or_ws *w, const double *q, int64_t b, int64_t kvh, int64_t j)
{
  const ac_problem *p = w->p;
  ac_dtype dt = ac_or_tdtype(p, 'k');
  double ds = ac_or_descale(w->cs, 'k', b, kvh);
  int pos = 0, neg = 0, nan = 0;
  for (int64_t t = 0; t < p->dk && !nan; t++) {
    double a = q[t], k = ac_decode(dt, ac_load_bits(dt, w->cs->k, ac_kidx(p, b, kvh, j, t))) * ds;
    if (isnan(a) || isnan(k)) { nan = 1; break; }
    if (!isinf(a) && !isinf(k)) continue;
    if (a == 0 || k == 0) { nan = 1; break; }
    if ((a > 0) == (k > 0)) pos = 1;
    else neg = 1;
  }
  if (nan || (pos && neg)) return AC_SCLS_NAN;
  if (!pos && !neg) return AC_SCLS_FINITE;
  if (w->sc.sign == 0) return AC_SCLS_NAN;
  return (pos == (w->sc.sign > 0)) ? AC_SCLS_PINF : AC_SCLS_NINF;
}

int ac_or_inf_classify(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t n, uint8_t *cls)
{
  double *q = ac_xmalloc((size_t)w->p->dk * sizeof *q);
  ac_or_q_values(w, b, h, i, q);
  int row = AC_SCLS_FINITE;
  for (int64_t j = 0; j < n; j++) {
    uint8_t c = ac_or_inf_key_class(w, q, b, ac_kv_head(w->p, h), w->rkey ? w->rkey[j] : j);
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
  int64_t *idx = ac_xmalloc((size_t)(n ? n : 1) * sizeof *idx), m = 0;
  for (int64_t j = 0; j < n; j++)
    if (keep[j]) idx[m++] = j;
  ac_or_head_pick(dst, src, p, idx, m, 0, 0);
  memset(dst->kbad, 0, (size_t)m);   /* the kept keys score finite or +inf alike */
  free(idx);
  return m;
}

void ac_or_head_pick(ac_or_head *dst, const ac_or_head *src, const ac_problem *p, const int64_t *idx, int64_t m,
                     int64_t nzero, int64_t from)
{
  int64_t dk = p->dk, dv = p->dv, n = m + nzero;
  int64_t nk = n * dk, nv = n * dv;
  int k_me = src->km != NULL;   /* the subset keeps the source's K representation (kd, vd in binary64) */
  /* binary32 rows (fastdecode.c) stay binary32 in kown, vown: half the bytes, and the binary32
   * loops of the fast path */
  int k_f = src->kf != NULL, v_f = src->vf != NULL;
  if (!k_f) { free(dst->kown); dst->kown = NULL; }
  if (!v_f) { free(dst->vown); dst->vown = NULL; }
  if (k_f) { free(dst->kd); dst->kd = NULL; }
  if (v_f) { free(dst->vd); dst->vd = NULL; }
  dst->kf = NULL; dst->vf = NULL;
  if (!k_me) { free(dst->km); free(dst->ke); dst->km = NULL; dst->ke = NULL; }
  /* capacities grow by half at least: the rows of a head pick ever more keys (causal masks) */
  int64_t cn = n + n / 2 + 1, ck = cn * dk, cv = cn * dv;
  if (nk > dst->cap_k || (k_me && !dst->km) || !(k_f ? (void *)dst->kown : (void *)dst->kd)) {
    if (k_me) {
      dst->km = ac_xrealloc(dst->km, (size_t)(ck ? ck : 1) * sizeof *dst->km);
      dst->ke = ac_xrealloc(dst->ke, (size_t)(ck ? ck : 1) * sizeof *dst->ke);
    }
    if (k_f) dst->kown = ac_xrealloc(dst->kown, (size_t)(ck ? ck : 1) * sizeof *dst->kown);
    else dst->kd = ac_xrealloc(dst->kd, (size_t)(ck ? ck : 1) * sizeof *dst->kd);
    dst->kbad = ac_xrealloc(dst->kbad, (size_t)cn);
    dst->cap_k = ck;
  }
  int with_me = src->vm != NULL;   /* the subset keeps the source's V representation */
  if (!with_me) { free(dst->vm); free(dst->ve); dst->vm = NULL; dst->ve = NULL; }
  if (nv > dst->cap_v || (with_me && !dst->vm) || !(v_f ? (void *)dst->vown : (void *)dst->vd)) {
    if (with_me) {
      dst->vm = ac_xrealloc(dst->vm, (size_t)(cv ? cv : 1) * sizeof *dst->vm);
      dst->ve = ac_xrealloc(dst->ve, (size_t)(cv ? cv : 1) * sizeof *dst->ve);
    }
    if (v_f) dst->vown = ac_xrealloc(dst->vown, (size_t)(cv ? cv : 1) * sizeof *dst->vown);
    else dst->vd = ac_xrealloc(dst->vd, (size_t)(cv ? cv : 1) * sizeof *dst->vd);
    dst->vcls = ac_xrealloc(dst->vcls, (size_t)(cv ? cv : 1));
    dst->vabs = ac_xrealloc(dst->vabs, (size_t)(cv + dv) * sizeof *dst->vabs);
    dst->v_lsb = ac_xrealloc(dst->v_lsb, (size_t)dv * sizeof *dst->v_lsb);
    dst->v_msb = ac_xrealloc(dst->v_msb, (size_t)dv * sizeof *dst->v_msb);
    dst->v_any = ac_xrealloc(dst->v_any, (size_t)dv);
    dst->cap_v = cv;
  }
  dst->kf = k_f ? dst->kown : NULL;
  dst->vf = v_f ? dst->vown : NULL;
  dst->k_l1max = src->k_l1max;
  for (int64_t r = from; r < n; r++) {
    if (r >= m) {   /* a zero key: K = 0, V = 0 (exponents: the windows' lsb, set below) */
      for (int64_t t = 0; t < dk; t++) {
        if (k_me) { dst->km[r * dk + t] = 0; dst->ke[r * dk + t] = src->k_lsb; }
        if (k_f) dst->kown[r * dk + t] = 0;
        else dst->kd[r * dk + t] = 0;
      }
      dst->kbad[r] = 0;
      for (int64_t t = 0; t < dv; t++) {
        if (with_me) { dst->vm[r * dv + t] = 0; dst->ve[r * dv + t] = src->v_lsb[t]; }
        if (v_f) dst->vown[r * dv + t] = 0;
        else dst->vd[r * dv + t] = 0;
        dst->vcls[r * dv + t] = AC_VCLS_FINITE;
      }
      continue;
    }
    int64_t j = idx[r];
    if (k_me) {
      memcpy(dst->km + r * dk, src->km + j * dk, (size_t)dk * sizeof *dst->km);
      memcpy(dst->ke + r * dk, src->ke + j * dk, (size_t)dk * sizeof *dst->ke);
    }
    if (k_f) memcpy(dst->kown + r * dk, src->kf + j * dk, (size_t)dk * sizeof *dst->kown);
    else for (int64_t t = 0; t < dk; t++) dst->kd[r * dk + t] = ac_or_kval(src, (size_t)(j * dk + t));
    dst->kbad[r] = src->kbad[j];
    if (with_me) {
      memcpy(dst->vm + r * dv, src->vm + j * dv, (size_t)dv * sizeof *dst->vm);
      memcpy(dst->ve + r * dv, src->ve + j * dv, (size_t)dv * sizeof *dst->ve);
    }
    if (v_f) memcpy(dst->vown + r * dv, src->vf + j * dv, (size_t)dv * sizeof *dst->vown);
    else for (int64_t t = 0; t < dv; t++) dst->vd[r * dv + t] = ac_or_vval(src, (size_t)(j * dv + t));
    memcpy(dst->vcls + r * dv, src->vcls + j * dv, (size_t)dv);
  }
  /* The head's windows (lsb, msb over all its keys) contain the subset's: the fixed-point
   * layouts stay valid, and both oracle paths see the same reduced head. */
  dst->k_any = src->k_any; dst->k_lsb = src->k_lsb; dst->k_msb = src->k_msb;
  memcpy(dst->v_lsb, src->v_lsb, (size_t)dv * sizeof *dst->v_lsb);
  memcpy(dst->v_msb, src->v_msb, (size_t)dv * sizeof *dst->v_msb);
  memcpy(dst->v_any, src->v_any, (size_t)dv);
  /* the prefix sums of |V|, where the source has them (the fast decoder leaves them out when
   * the binary64 pass applies to every row: only ziv.c's level 0 reads them) */
  if (src->vabs) ac_or_head_vabs(dst, p, n);
  else for (int64_t t = 0; t < dv; t++) dst->vabs[t] = 0;
  dst->b = src->b;
  dst->kvh = src->kvh;
}

void ac_or_head_vabs(ac_or_head *dst, const ac_problem *p, int64_t n)
{
  int64_t dv = p->dv;
  for (int64_t t = 0; t < dv; t++) dst->vabs[t] = 0;
  for (int64_t j = 0; j < n; j++)   /* (all of them: from does not apply to the sums) */
    for (int64_t t = 0; t < dv; t++) {
      size_t x = (size_t)(j * dv + t);
      int fits = ac_or_vcol_bits(dst, t, p->tk, 0) <= 126;
      if (!fits) { dst->vabs[x + (size_t)dv] = dst->vabs[x]; continue; }
      int32_t e;
      int64_t M = ac_or_v(dst, x, t, &e);
      ac_i128 a = fits && dst->vcls[x] == AC_VCLS_FINITE
                      ? (ac_i128)((ac_u128)(uint64_t)llabs(M) << (e - dst->v_lsb[t])) : 0;
      dst->vabs[x + (size_t)dv] = dst->vabs[x] + a;
    }
}
