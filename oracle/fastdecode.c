/* fastdecode.c: decoding of a (batch, kv head) for the narrow dtypes, the same fields as
 * ac_or_head_decode (scores.c) without a libm call per element: values are widened to
 * binary64 (exact) and split into odd significand and exponent from the binary64 bits.
 * In a sampled run the decode is serial work for the first thread reaching the head, so
 * its speed bounds the speedup of the threads. toracle_fast checks the fields against
 * ac_or_head_decode. fp64 goes to ac_or_head_decode. K and V are kept in binary32 alone (kf,
 * vf, which hold every narrow value exactly; kd, vd, km, ke, vm, ve NULL: ac_or_k and ac_or_v
 * split an element where it is needed, ac_or_krow and ac_or_vrow widen a row), which keeps
 * the decoded head at the size of fp32 inputs; for fp32 inputs kf and vf are the case's own
 * arrays (no copy) when they hold no NaN or inf. A quantized tensor's values are binary64
 * (src/core/quant.h): a head whose values all are binary32 numbers takes the same binary32 copy,
 * any other keeps them in kd or vd (binary64, exact; km, ke, vm, ve still NULL).
 * The prefix sums of |V| (vabs) are left out (NULL) when the binary64 pass applies to every
 * row that reads the head: the case's conditions, and for quantized values their exponent range
 * (fast.c's row_applies; a row the pass refuses takes ziv.c's level 0, which reads vabs). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fast.h"
#include "casefile.h"

/* 1 when none of the n values is NaN or inf. */
static int all_finite(const float *a, int64_t n)
{
  int ok = 1;
  for (int64_t x = 0; x < n; x++) ok &= isfinite(a[x]) != 0;
  return ok;
}

/* The binary32 array of a head's K or V: the case's own (fp32, all finite; *own freed and
 * NULL) or *own, (re)allocated for n values, to be filled by the caller. */
static const float *f32_array(float **own, ac_dtype dt, const void *base, size_t off, int64_t n)
{
  if (dt == AC_F32 && all_finite((const float *)base + off, n)) {
    free(*own);
    *own = NULL;
    return (const float *)base + off;
  }
  *own = ac_xrealloc(*own, (size_t)(n ? n : 1) * sizeof **own);
  return *own;
}

static inline double load(ac_dtype dt, const void *base, size_t i)
{
  if (dt == AC_F32) return (double)((const float *)base)[i];
  if (dt == AC_F64) return ((const double *)base)[i];
  return ac_decode(dt, ac_load_bits(dt, base, i));
}

/* 1 when the n binary64 values at base + off are binary32 numbers, or NaN or inf. */
static int all_binary32(const double *a, int64_t n)
{
  int ok = 1;
  for (int64_t x = 0; x < n; x++) ok &= !isfinite(a[x]) || (double)(float)a[x] == a[x];
  return ok;
}

/* K's (V's) home for a head: the binary32 array (the case's own or *own), or, for binary64 values
 * that are not all binary32 numbers, *d (n binary64 values, filled by the caller; *f NULL). */
static void value_arrays(ac_dtype dt, const void *base, size_t off, int64_t n, float **own, const float **f, double **d)
{
  free(*d);
  *d = NULL;
  if (dt == AC_F64 && !all_binary32((const double *)base + off, n)) {
    free(*own);
    *own = NULL;
    *f = NULL;
    *d = ac_xmalloc((size_t)(n ? n : 1) * sizeof **d);
    return;
  }
  *f = f32_array(own, dt, base, off, n);
}

/* 1 when every value of a quantized Q in the rows that read kv head kvh of batch b is in
 * binary32's exponent range (always 1 for a Q that is not quantized: a narrow dtype). */
static int q_rows_in_range(const ac_case *cs, int64_t b, int64_t kvh)
{
  const ac_problem *p = &cs->p;
  if (!ac_tensor_quantized(p, 'q')) return 1;
  const double *q = cs->q;
  for (int64_t h = 0; h < p->heads; h++) {
    if (ac_kv_head(p, h) != kvh) continue;
    for (int64_t x = 0; x < p->tq * p->dk; x++) {
      double d = q[ac_qidx(p, b, h, 0, 0) + (size_t)x];
      if (!isfinite(d)) continue;
      int64_t m;
      int32_t e;
      ac_or_split_bits(d, &m, &e);
      if (!ac_or_fast_in_range(m, e)) return 0;
    }
  }
  return 1;
}

void ac_or_fast_head_decode(ac_or_head *hd, const ac_case *cs, int64_t b, int64_t kvh, const ac_oracle_opts *o,
                            uint32_t formats)
{
  const ac_problem *p = &cs->p;
  ac_dtype dt = p->dtype;
  if (dt == AC_F64) { ac_or_head_decode(hd, cs, b, kvh); return; }
  /* the prefix sums of |V| serve only ziv.c's level 0, which never runs where the binary64
   * pass applies to the whole case and to every row of it */
  int need_vabs = !ac_or_fast_case_applies(cs, o, formats);
  if ((p->f.used & AC_OR_VAR_SCORES) && !need_vabs) {   /* LIN and CAP rows may leave the pass (fastvar.c) */
    ac_or_scale sc;
    ac_err e;
    need_vabs = ac_or_scale_init(&sc, p, &e) != 0 || !ac_or_var_foldable(p, &sc);
  }
  int64_t nk = p->tk * p->dk, nv = p->tk * p->dv, dk = p->dk, dv = p->dv;
  const ac_dtype kt = ac_tensor_dtype(p, 'k'), vt = ac_tensor_dtype(p, 'v');
  /* K and V in binary32 alone: significand and exponent are split from kf and vf where
   * needed (ac_or_k, ac_or_v); the integer dot products scale K exactly (fastscores.c) */
  free(hd->km); free(hd->ke); free(hd->vm); free(hd->ve);
  hd->km = NULL; hd->ke = NULL; hd->vm = NULL; hd->ve = NULL;
  size_t kbase = ac_kidx(p, b, kvh, 0, 0), vbase = ac_vidx(p, b, kvh, 0, 0);   /* dense: x = j d + t */
  value_arrays(kt, cs->k, kbase, nk, &hd->kown, &hd->kf, &hd->kd);
  value_arrays(vt, cs->v, vbase, nv, &hd->vown, &hd->vf, &hd->vd);
  float *kown = hd->kown, *vown = hd->vown;   /* NULL: kf, vf are the case's values already (or kd, vd hold them) */
  double *kd64 = hd->kd, *vd64 = hd->vd;
  hd->kbad = ac_xrealloc(hd->kbad, (size_t)p->tk);
  hd->vcls = ac_xrealloc(hd->vcls, (size_t)nv);
  hd->v_lsb = ac_xrealloc(hd->v_lsb, (size_t)dv * sizeof *hd->v_lsb);
  hd->v_msb = ac_xrealloc(hd->v_msb, (size_t)dv * sizeof *hd->v_msb);
  hd->v_any = ac_xrealloc(hd->v_any, (size_t)dv);
  free(hd->vabs);
  hd->vabs = NULL;
  hd->cap_k = hd->cap_v = 0;   /* a later ac_or_head_decode of this head reallocates every array */
  int32_t lsb = INT32_MAX, msb = INT32_MIN;
  for (int64_t j = 0; j < p->tk; j++) {
    uint8_t bad = 0;
    for (int64_t t = 0; t < dk; t++) {
      size_t x = (size_t)(j * dk + t);
      double d = load(kt, cs->k, kbase + x);
      if (kown) kown[x] = 0;
      if (kd64) kd64[x] = 0;
      if (isnan(d)) { bad = 1; continue; }
      if (isinf(d)) { if (!bad) bad = 2; continue; }
      if (kown) kown[x] = (float)d;   /* exact: every narrow value is a binary32 */
      if (kd64) kd64[x] = d;
      int64_t m;
      int32_t e;
      ac_or_split_bits(d, &m, &e);
      if (m) {
        int32_t top = e + ac_or_bitlen((uint64_t)llabs(m));
        if (e < lsb) lsb = e;
        if (top > msb) msb = top;
      }
    }
    hd->kbad[j] = bad;
  }
  ac_or_head_finish_k(hd, p->tk, dk, lsb, msb);

  for (int64_t t = 0; t < dv; t++) { hd->v_lsb[t] = INT32_MAX; hd->v_msb[t] = INT32_MIN; }
  for (int64_t j = 0; j < p->tk; j++) {
    for (int64_t t = 0; t < dv; t++) {
      size_t x = (size_t)(j * dv + t);
      double d = load(vt, cs->v, vbase + x);
      if (vown) vown[x] = 0;
      if (vd64) vd64[x] = 0;
      if (isnan(d)) { hd->vcls[x] = AC_VCLS_NAN; continue; }
      if (isinf(d)) { hd->vcls[x] = d > 0 ? AC_VCLS_PINF : AC_VCLS_NINF; continue; }
      hd->vcls[x] = AC_VCLS_FINITE;
      if (vown) vown[x] = (float)d;
      if (vd64) vd64[x] = d;
      int64_t m;
      int32_t e;
      ac_or_split_bits(d, &m, &e);
      if (m) {
        int32_t top = e + ac_or_bitlen((uint64_t)llabs(m));
        if (e < hd->v_lsb[t]) hd->v_lsb[t] = e;
        if (top > hd->v_msb[t]) hd->v_msb[t] = top;
      }
    }
  }
  for (int64_t t = 0; t < dv; t++) {
    hd->v_any[t] = hd->v_lsb[t] != INT32_MAX;
    if (!hd->v_any[t]) { hd->v_lsb[t] = 0; hd->v_msb[t] = 0; }
  }
  /* quantized values (binary64) outside binary32's exponent range send their rows to the levels */
  if (!need_vabs && ac_problem_quantized(p))
    need_vabs = !ac_or_fast_head_in_range(hd, dv) || !q_rows_in_range(cs, b, kvh);
  if (need_vabs) {
    hd->vabs = ac_xmalloc((size_t)(nv + dv) * sizeof *hd->vabs);
    uint8_t *fits = ac_xmalloc((size_t)dv);
    for (int64_t t = 0; t < dv; t++)
      fits[t] = ac_or_vcol_bits(hd, t, p->tk, 0) <= 126;
    for (int64_t t = 0; t < dv; t++) hd->vabs[t] = 0;
    for (int64_t j = 0; j < p->tk; j++)
      for (int64_t t = 0; t < dv; t++) {
        size_t x = (size_t)(j * dv + t);
        int32_t e;
        int64_t m = ac_or_v(hd, x, t, &e);
        ac_i128 a = fits[t] ? (ac_i128)((ac_u128)(uint64_t)llabs(m) << (e - hd->v_lsb[t])) : 0;
        hd->vabs[x + (size_t)dv] = hd->vabs[x] + a;
      }
    free(fits);
  }
  hd->b = b;
  hd->kvh = kvh;
}
