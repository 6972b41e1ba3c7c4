/* defect_cases.c: a case without one thing a defect may need, for the fingerprints of defect.c:
 * one batch or one head of it, its kv heads repeated for every query head (no GQA), dv equal to dk,
 * contiguous, another mask, the default scale (Q rescaled to keep the scores) or one ±2^k times it,
 * zeros or the largest finite values in place of its non-finite inputs, its values in a wider dtype,
 * V scaled below 1, its keys repeated, or without every feature of a trigger at once. Each is the same case in every
 * other respect. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "quant.h"
#include "variants.h"

/* A plain dense case of one dtype: what the value edits below can rewrite element by element. */
static int plain_values(const ac_case *c)
{
  const ac_problem *p = &c->p;
  return !c->lay && !ac_problem_quantized(p) && !(p->f.used & (AC_FEAT_MIXED_DTYPES | AC_FEAT_LAYOUTS));
}

/* out's dO a copy of c's (none when c has none): a case of the same output shape. */
static void same_dout(ac_case *out, const ac_case *c)
{
  if (!c->dout) return;
  out->dout = ac_xmalloc(ac_case_bytes(c, 'o') + 1);
  memcpy(out->dout, c->dout, ac_case_bytes(c, 'o'));
}

/* p's strides all zero: the contiguous layout, whatever its dims become. */
static void packed(ac_problem *p)
{
  memset(p->q_stride, 0, sizeof p->q_stride);
  memset(p->k_stride, 0, sizeof p->k_stride);
  memset(p->v_stride, 0, sizeof p->v_stride);
  memset(p->o_stride, 0, sizeof p->o_stride);
}

/* Strides other than the contiguous layout's (a case file names those of a contiguous case too). */
int ac_dcase_strided(const ac_case *c)
{
  const ac_problem *p = &c->p;
  ac_problem d = *p;
  packed(&d);
  ac_problem_default_strides(&d);
  for (int i = 0; i < 4; i++)
    if ((p->q_stride[i] && p->q_stride[i] != d.q_stride[i]) || (p->k_stride[i] && p->k_stride[i] != d.k_stride[i]) ||
        (p->v_stride[i] && p->v_stride[i] != d.v_stride[i]) || (p->o_stride[i] && p->o_stride[i] != d.o_stride[i]))
      return 1;
  return 0;
}

/* A case whose inputs can be edited one by one: one dtype, or quantized tensors (their codes and
 * scales; not one a kernel quantizes itself) beside plain ones in it; a layout case's carrier
 * arrays whole (slots no sequence reads too). */
static int editable(const ac_case *c)
{
  const ac_problem *p = &c->p;
  if (p->f.used & AC_FEAT_MIXED_DTYPES) return 0;
  for (int x = 0; x < 3; x++)
    if (p->quant[x].fmt && (p->quant[x].store || !c->quant)) return 0;
  return 1;
}

int ac_dcase_nonfinite(const ac_case *c)
{
  if (!editable(c)) return 0;
  ac_counts n = ac_case_counts(c);
  const void *t[3] = {c->q, c->k, c->v};
  const int64_t cnt[3] = {n.q, n.k, n.v};
  for (int x = 0; x < 3; x++) {
    const ac_dtype d = ac_tensor_dtype(&c->p, "qkv"[x]);   /* binary64 values of a quantized one */
    for (int64_t i = 0; i < cnt[x]; i++)
      if (!isfinite(ac_load(d, t[x], (size_t)i))) return 1;
  }
  return 0;
}

/* The finite stored value of dtype t in place of non-finite v: 0, or (largest) the largest finite
 * one of v's sign (NaN positive). */
static uint64_t finite_sd(ac_qsdtype t, double v, int largest)
{
  if (!largest) return ac_qsd_encode(t, 0);
  const double m = t == AC_QSD_E8M0 ? 0x1p127 : ac_dtype_get(ac_qsd_dtype(t))->max_finite;
  return ac_qsd_encode(t, v < 0 ? -m : m);
}

/* Quantized tensor x of out with finite_sd's values for its NaN and infinite scales, mins and zero
 * points, code 0 for its NaN and infinite fp8 codes, its values decoded again. */
static void finite_quant(ac_case *out, char x, int largest)
{
  const int i = ac_qslot(x);
  const ac_qspec *q = &out->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &out->quant->t[i];
  int64_t d[4];
  ac_qdims(&out->p, x, d);
  const int64_t ns = ac_qscale_count(q, d), ne = d[0] * d[1] * d[2] * d[3];
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  for (int64_t k = 0; k < ns; k++) {
    const double v = ac_qscale_value(sd, ac_qsd_load(sd, t->scales, (size_t)k));
    if (!isfinite(v)) ac_qsd_store(sd, t->scales, (size_t)k, finite_sd(sd, v, largest));
  }
  const int64_t na = zd == AC_QSD_N || !t->aux ? 0 : f->aux == AC_QAUX_TSCALE ? 1 : ns;
  for (int64_t k = 0; k < na; k++) {
    const double v = ac_qscale_value(zd, ac_qsd_load(zd, t->aux, (size_t)k));
    if (!isfinite(v)) ac_qsd_store(zd, t->aux, (size_t)k, finite_sd(zd, v, largest));
  }
  for (int64_t k = 0; k < ne; k++)
    if (!isfinite(ac_qcode_value(q->fmt, t->codes[k]))) t->codes[k] = 0;
  ac_quant_decode(out, x);
}

/* A slice of c: batch `at` alone (what 0) or query head `at` alone (1). */
int ac_dcase_slice(const ac_case *c, int what, int64_t at, ac_case *out, ac_err *e)
{
  ac_slice s;
  ac_slice_all(&c->p, &s);
  if (what == 0) s.b0 = at, s.nb = 1;
  else s.h0 = at, s.nh = 1;
  return ac_case_slice(c, &s, out, e);
}

/* The quantized tensors of out (c with V padded by zero columns, dense values copied): Q's and K's
 * codes and scales c's, V's c's with the new columns' codes and scales zero (under a scale they
 * share with old columns, the first code that decodes to 0); refused (-1) unless V's values decode
 * to c's and to exact zeros in the new columns. */
static int pad_quant(const ac_case *c, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  const ac_qmap id = {NULL, NULL, NULL, NULL};
  if (ac_quant_remap(c, out, 'q', &id, e) || ac_quant_remap(c, out, 'k', &id, e)) return -1;
  if (!ac_tensor_quantized(p, 'v')) return 0;
  int64_t *dm = ac_xmalloc((size_t)out->p.dv * sizeof *dm);
  for (int64_t y = 0; y < out->p.dv; y++) dm[y] = y < p->dv ? y : -1;
  const ac_qmap mv = {NULL, NULL, NULL, dm};
  int rc = ac_quant_remap(c, out, 'v', &mv, e);
  free(dm);
  if (rc) return -1;
  const ac_problem *q = &out->p;
  /* a new column's code 0 under a scale it shares with old columns (per token, per head, with a zero
   * point) need not be the value 0: the first code that decodes to 0 there */
  const ac_qfmt_info *f = ac_qfmt_get(q->quant[2].fmt);
  uint8_t *codes = out->quant->t[2].codes;
  for (int k = 0, bad = 1; bad && k < 256 && (f->code_signed || k <= f->code_max); k++) {
    bad = 0;
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t j = 0; j < p->tk; j++)
          for (int64_t y = p->dv; y < q->dv; y++) {
            const size_t at = ac_vidx(q, b, kh, j, y);
            if (ac_load(AC_F64, out->v, at) != 0) codes[at] = (uint8_t)k, bad = 1;
          }
    if (bad) ac_quant_decode(out, 'v');
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++)
        for (int64_t y = 0; y < q->dv; y++) {
          const double v = ac_load(AC_F64, out->v, ac_vidx(q, b, kh, j, y));
          const double want = y < p->dv ? ac_load(AC_F64, c->v, ac_vidx(p, b, kh, j, y)) : 0;
          if (!(v == want || (isnan(v) && isnan(want)))) return ac_err_set(e, "V's zero columns do not quantize to zeros");
        }
  return 0;
}

/* c with dv = dk, its scores unchanged: V's columns cut to dk from y (each output column is its
 * own), or zero columns added to V (and dO) up to dk (their outputs are exactly 0); contiguous
 * either way, as a slice is. */
int ac_dcase_dv_eq_dk(const ac_case *c, int64_t y, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (p->dv > p->dk) {
    ac_slice s;
    ac_slice_all(p, &s);
    s.ndv = p->dk;
    s.y0 = y < 0 ? 0 : y < p->dv - p->dk ? y : p->dv - p->dk;
    return ac_case_slice(c, &s, out, e);
  }
  if (p->dv == p->dk || c->lay) return ac_err_set(e, "not padded");
  ac_case_init(out);
  out->p = *p;
  packed(&out->p);
  out->p.dv = p->dk;
  if (ac_case_alloc(out, e)) return -1;
  ac_features_copy(out, c);
  memcpy(out->q, c->q, ac_case_bytes(c, 'q'));
  memcpy(out->k, c->k, ac_case_bytes(c, 'k'));
  const ac_dtype dv = ac_tensor_dtype(p, 'v'), od = ac_tensor_dtype(p, 'o');
  const ac_problem *q = &out->p;
  if (c->dout) out->dout = ac_xcalloc(ac_case_bytes(out, 'o') + 1, 1);
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++)
        for (int64_t z = 0; z < p->dv; z++)
          ac_store_bits(dv, out->v, ac_vidx(q, b, kh, j, z), ac_load_bits(dv, c->v, ac_vidx(p, b, kh, j, z)));
    for (int64_t h = 0; c->dout && h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t z = 0; z < p->dv; z++)
          ac_store_bits(od, out->dout, ac_oidx(q, b, h, i, z), ac_load_bits(od, c->dout, ac_oidx(p, b, h, i, z)));
  }
  if (ac_problem_quantized(p) && pad_quant(c, out, e)) {
    ac_case_free(out);
    return -1;
  }
  ac_case_copy_origin(out, c);
  return 0;
}

int ac_dcase_contiguous(const ac_case *c, ac_case *out, ac_err *e)
{
  if (ac_case_copy(out, c, e)) return -1;
  packed(&out->p);
  return 0;
}

int ac_dcase_mask(const ac_case *c, ac_mask m, ac_case *out, ac_err *e)
{
  if (ac_case_copy(out, c, e)) return -1;
  out->p.mask = m;
  return 0;
}

/* Query row i of c alone with the keys it sees (a prefix under the masks), unmasked: the same
 * attention for that row. */
int ac_dcase_row_unmasked(const ac_case *c, int64_t i, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  int64_t n = ac_visible_count(p, i);
  if (c->lay || n < 1 || i < 0 || i >= p->tq) return ac_err_set(e, "no such row");
  ac_slice s;
  ac_slice_all(p, &s);
  s.i0 = i, s.ni = 1, s.nj = n;
  if (ac_case_slice(c, &s, out, e)) return -1;
  out->p.mask = AC_MASK_NONE;
  return 0;
}

/* -v, exactly in every dtype (a zero stays a zero: fnuz formats have no -0). */
static double neg_exact(double v) { return v == 0 ? v : -v; }

/* The explicit scale s of c as the default one: s = 1/sqrt(n) exactly for a head dim n >= dk (n at most
 * 4096), with Q and K padded by zero columns up to n, the scores unchanged. */
static int scale_as_dk(const ac_case *c, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  double s = fabs(ac_problem_scale(p)), n = s > 0 ? nearbyint(1 / (s * s)) : 0;
  const int neg = ac_problem_scale(p) < 0;   /* -Q with the scale's magnitude: the same scores */
  if (!(n >= (double)p->dk && n <= 4096) || 1 / sqrt(n) != s || c->lay || ac_problem_quantized(p) || p->f.used ||
      ac_dcase_strided(c))
    return ac_err_set(e, "not a default scale");
  ac_case_init(out);
  out->p = *p;
  packed(&out->p);
  out->p.dk = (int64_t)n;
  out->p.scale_is_default = 1;
  out->p.scale = ac_problem_scale(&out->p);
  if (ac_case_alloc(out, e)) return -1;
  const ac_problem *q = &out->p;
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t x = 0; x < p->dk; x++)
          if (!neg) ac_store_bits(p->dtype, out->q, ac_qidx(q, b, h, i, x), ac_load_bits(p->dtype, c->q, ac_qidx(p, b, h, i, x)));
          else ac_set(p->dtype, out->q, ac_qidx(q, b, h, i, x), neg_exact(ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, x))));
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++)
        for (int64_t x = 0; x < p->dk; x++)
          ac_store_bits(p->dtype, out->k, ac_kidx(q, b, kh, j, x), ac_load_bits(p->dtype, c->k, ac_kidx(p, b, kh, j, x)));
  }
  memcpy(out->v, c->v, ac_case_bytes(c, 'v'));
  same_dout(out, c);
  ac_case_copy_origin(out, c);
  return 0;
}

/* c with the default scale; keep_scores: and the same scores, exactly where that can be (the old
 * scale a power of two times the default one, or 1/sqrt(n) for a larger head dim n: Q and K padded
 * with zero columns), else as near as Q's dtype allows (Q times the old scale over the default one,
 * rounded; Q = 0 for a zero scale, exactly). */
int ac_dcase_default_scale(const ac_case *c, int keep_scores, ac_case *out, int *exact, ac_err *e)
{
  if (exact) *exact = 0;
  if (keep_scores && (c->lay || ac_tensor_quantized(&c->p, 'q'))) return ac_err_set(e, "not rescaled");
  const double old = ac_problem_scale(&c->p);
  int ex;
  ac_problem d = c->p;
  d.scale_is_default = 1;
  const double r = old / ac_problem_scale(&d);
  const int pow2 = fabs(frexp(r, &ex)) == 0.5;
  if (keep_scores && !pow2 && scale_as_dk(c, out, e) == 0) {
    if (exact) *exact = 1;
    return 0;
  }
  if (ac_case_copy(out, c, e)) return -1;
  if (exact) *exact = keep_scores && pow2;
  out->p.scale_is_default = 1;
  out->p.scale = ac_problem_scale(&out->p);
  if (!keep_scores) return 0;
  const ac_dtype t = ac_tensor_dtype(&c->p, 'q');
  ac_counts n = ac_case_counts(c);
  for (int64_t i = 0; i < n.q; i++) ac_set(t, out->q, (size_t)i, r * ac_load(t, c->q, (size_t)i));
  return 0;
}

int ac_dcase_snap_scale(const ac_case *c, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_problem d = *p;
  d.scale_is_default = 1;
  const double def = ac_problem_scale(&d), r = ac_problem_scale(p) / def;
  int ex;
  if (p->scale_is_default || !isfinite(r) || r == 0 || fabs(frexp(r, &ex)) == 0.5) return ac_err_set(e, "nothing to snap");
  const double k = nearbyint(log2(fabs(r)));
  if (ac_case_copy(out, c, e)) return -1;
  out->p.scale = copysign(ldexp(def, (int)k), r);
  return 0;
}

int ac_dcase_finite(const ac_case *c, int largest, ac_case *out, ac_err *e)
{
  if (!editable(c)) return ac_err_set(e, "not a dense case of editable values");
  if (ac_case_copy(out, c, e)) return -1;
  ac_counts n = ac_case_counts(out);
  void *t[3] = {out->q, out->k, out->v};
  const int64_t cnt[3] = {n.q, n.k, n.v};
  const double m = ac_dtype_get(out->p.dtype)->max_finite;
  for (int x = 0; x < 3; x++) {
    if (out->p.quant[x].fmt) {   /* its scales and codes */
      finite_quant(out, "qkv"[x], largest);
      continue;
    }
    for (int64_t i = 0; i < cnt[x]; i++) {
      double v = ac_load(out->p.dtype, t[x], (size_t)i);
      if (!isfinite(v)) ac_set(out->p.dtype, t[x], (size_t)i, !largest ? 0.0 : v < 0 ? -m : m);
    }
  }
  return 0;
}

/* c with kv_heads = heads: K and V (and the kv heads' descales) of query head h are those of kv
 * head h / (heads / kv_heads), which every kernel reads alike whether it shares them or not. */
int ac_dcase_expand_kv(const ac_case *c, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (p->heads == p->kv_heads) return ac_err_set(e, "no kv heads to repeat");
  ac_case_init(out);
  out->p = *p;
  out->p.kv_heads = p->heads;
  memset(out->p.k_stride, 0, sizeof out->p.k_stride);
  memset(out->p.v_stride, 0, sizeof out->p.v_stride);
  if (ac_case_alloc(out, e)) return -1;
  ac_features_copy(out, c);
  const ac_problem *q = &out->p;
  const ac_dtype dk = ac_tensor_dtype(p, 'k'), dv = ac_tensor_dtype(p, 'v');
  memcpy(out->q, c->q, ac_case_bytes(c, 'q'));
  if (p->f.used & AC_FEAT_DESCALE)
    for (int x = 0; x < 3; x++) {
      free(out->descale[x]);
      out->descale[x] = ac_xmalloc(sizeof(float) * (size_t)(q->batch * q->heads));
      for (int64_t b = 0; b < q->batch; b++)
        for (int64_t h = 0; h < q->heads; h++)
          out->descale[x][b * q->heads + h] = c->descale[x][b * p->kv_heads + ac_kv_head(p, h)];
    }
  for (int64_t b = 0; b < q->batch; b++)
    for (int64_t h = 0; h < q->heads; h++)
      for (int64_t j = 0; j < q->tk; j++) {
        const int64_t kh = ac_kv_head(p, h);
        for (int64_t x = 0; x < q->dk; x++)
          ac_store_bits(dk, out->k, ac_kidx(q, b, h, j, x), ac_load_bits(dk, c->k, ac_kidx(p, b, kh, j, x)));
        for (int64_t y = 0; y < q->dv; y++)
          ac_store_bits(dv, out->v, ac_vidx(q, b, h, j, y), ac_load_bits(dv, c->v, ac_vidx(p, b, kh, j, y)));
      }
  if (ac_problem_quantized(p)) {   /* codes and scales: kv head h / group for query head h */
    int64_t *hm = ac_xmalloc((size_t)q->heads * sizeof *hm);
    for (int64_t h = 0; h < q->heads; h++) hm[h] = ac_kv_head(p, h);
    const ac_qmap id = {NULL, NULL, NULL, NULL}, mh = {NULL, hm, NULL, NULL};
    const int rc = ac_quant_remap(c, out, 'q', &id, e) || ac_quant_remap(c, out, 'k', &mh, e) || ac_quant_remap(c, out, 'v', &mh, e);
    free(hm);
    if (rc) {
      ac_case_free(out);
      return -1;
    }
  }
  same_dout(out, c);
  ac_case_copy_origin(out, c);
  return 0;
}

/* c's values in dtype t (each exactly representable there: t is wider), the variants kept (a
 * bias keeps its own dtype). */
int ac_dcase_widen(const ac_case *c, ac_dtype t, ac_case *out, ac_err *e)
{
  if (!plain_values(c) || ((c->p.f.used & AC_FEAT_DESCALE) && t == AC_F64)) return ac_err_set(e, "not widened");
  ac_case_init(out);
  out->p = c->p;
  out->p.dtype = t;
  if (ac_case_alloc(out, e)) return -1;
  ac_features_copy(out, c);
  ac_counts n = ac_case_counts(c);
  const void *src[3] = {c->q, c->k, c->v};
  void *dst[3] = {out->q, out->k, out->v};
  const int64_t cnt[3] = {n.q, n.k, n.v};
  for (int x = 0; x < 3; x++)
    for (int64_t i = 0; i < cnt[x]; i++) ac_store_bits(t, dst[x], (size_t)i, ac_encode_f64(t, ac_load(c->p.dtype, src[x], (size_t)i)));
  if (c->dout) {
    out->dout = ac_xmalloc(ac_case_bytes(out, 'o') + 1);
    for (int64_t i = 0; i < n.o; i++)
      ac_store_bits(t, out->dout, (size_t)i, ac_encode_f64(t, ac_load(c->p.dtype, c->dout, (size_t)i)));
  }
  ac_case_copy_origin(out, c);
  return 0;
}

/* Stored value k of dtype t times 2^-ex, exactly (-1 where it cannot be). */
static int halve_sd(ac_qsdtype t, void *a, size_t k, int ex)
{
  const double w = ldexp(ac_qscale_value(t, ac_qsd_load(t, a, k)), -ex);
  const uint64_t b = ac_qsd_encode(t, w);
  if (ac_qscale_value(t, b) != w) return -1;
  ac_qsd_store(t, a, k, b);
  return 0;
}

/* Quantized V of out times 2^-ex through its scales (and mins; NVFP4: its tensor scale), each
 * exactly, the values decoded again and checked against c's. */
static int small_quant_v(const ac_case *c, ac_case *out, int ex, ac_err *e)
{
  const ac_qspec *q = &out->p.quant[2];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &out->quant->t[2];
  int64_t d[4];
  ac_qdims(&out->p, 'v', d);
  const int64_t ns = ac_qscale_count(q, d);
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  int rc = q->store ? -1 : 0;
  if (f->aux == AC_QAUX_TSCALE) rc = rc || halve_sd(zd, t->aux, 0, ex);
  for (int64_t k = 0; !rc && f->aux != AC_QAUX_TSCALE && k < ns; k++)
    rc = halve_sd(sd, t->scales, (size_t)k, ex) || (f->aux == AC_QAUX_MIN && halve_sd(zd, t->aux, (size_t)k, ex));
  if (rc) return ac_err_set(e, "V's scales not scaled exactly");
  ac_quant_decode(out, 'v');
  for (int64_t i = 0; i < d[0] * d[1] * d[2] * d[3]; i++)
    if (ac_load(AC_F64, out->v, (size_t)i) != ldexp(ac_load(AC_F64, c->v, (size_t)i), -ex)) return ac_err_set(e, "V not scaled exactly");
  return 0;
}

int ac_dcase_small_v(const ac_case *c, ac_case *out, ac_err *e)
{
  if (!editable(c)) return ac_err_set(e, "not a dense case of editable values");
  const ac_dtype t = ac_tensor_dtype(&c->p, 'v');   /* binary64 values of a quantized V */
  const int64_t nv = ac_case_counts(c).v;
  double vmax = 0;
  for (int64_t i = 0; i < nv; i++) {
    double v = fabs(ac_load(t, c->v, (size_t)i));
    if (!isfinite(v)) return ac_err_set(e, "V not finite");
    vmax = v > vmax ? v : vmax;
  }
  int ex;
  frexp(vmax, &ex);
  if (!(vmax > 0) || ex <= 0) return ac_err_set(e, "V below 1 already");
  if (ac_case_copy(out, c, e)) return -1;
  if (ac_tensor_quantized(&c->p, 'v')) {
    if (small_quant_v(c, out, ex, e) == 0) return 0;
    ac_case_free(out);
    return -1;
  }
  for (int64_t i = 0; i < nv; i++) ac_set(t, out->v, (size_t)i, ldexp(ac_load(t, c->v, (size_t)i), -ex));
  return 0;
}

int ac_dcase_repeat_keys(const ac_case *c, int r, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (!plain_values(c) || p->mask != AC_MASK_NONE || p->f.used || ac_dcase_strided(c) || r < 2 || p->tk > INT64_MAX / r / 4)
    return ac_err_set(e, "not a dense case of plain values without a mask or variants");
  ac_case_init(out);
  out->p = *p;
  packed(&out->p);
  out->p.tk = p->tk * r;
  if (ac_case_alloc(out, e)) return -1;
  const ac_problem *q = &out->p;
  memcpy(out->q, c->q, ac_case_bytes(c, 'q'));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < q->tk; j++) {   /* key j is key j mod tk */
        for (int64_t x = 0; x < p->dk; x++)
          ac_store_bits(p->dtype, out->k, ac_kidx(q, b, kh, j, x), ac_load_bits(p->dtype, c->k, ac_kidx(p, b, kh, j % p->tk, x)));
        for (int64_t y = 0; y < p->dv; y++)
          ac_store_bits(p->dtype, out->v, ac_vidx(q, b, kh, j, y), ac_load_bits(p->dtype, c->v, ac_vidx(p, b, kh, j % p->tk, y)));
      }
  same_dout(out, c);
  ac_case_copy_origin(out, c);
  return 0;
}

int ac_dcase_large_v(const ac_case *c, int r, ac_case *out, ac_err *e)
{
  const ac_dtype t = c->p.dtype;
  const double top = ac_dtype_get(t)->max_finite;
  /* a correct kernel's binary32 sums of tk such values do not overflow (binary16, fp8; not bfloat16) */
  if (!(top * (double)c->p.tk * r < FLT_MAX)) return ac_err_set(e, "V's range as wide as binary32's");
  double vmax = 0;
  for (int64_t i = 0, nv = ac_case_counts(c).v; i < nv; i++) {
    const double v = fabs(ac_load(t, c->v, (size_t)i));
    if (!isfinite(v)) return ac_err_set(e, "V not finite");
    vmax = v > vmax ? v : vmax;
  }
  if (!(vmax > 0)) return ac_err_set(e, "V all zero");
  if (ac_dcase_repeat_keys(c, r, out, e)) return -1;
  int ex;
  frexp(vmax, &ex);                /* vmax in [2^(ex-1), 2^ex) */
  const int top_ex = ilogb(top);   /* top in [2^top_ex, 2^(top_ex+1)) */
  for (int64_t i = 0, nv = ac_case_counts(out).v; i < nv; i++)   /* largest |V| in [2^(top_ex-1), 2^top_ex): exact */
    ac_set(t, out->v, (size_t)i, ldexp(fabs(ac_load(t, out->v, (size_t)i)), top_ex - ex));
  return 0;
}

int ac_dcase_keep_layout(const ac_case *from, int rc, ac_case *cand)
{
  ac_err e;
  if (rc || !from->lay || cand->lay) return rc;
  const ac_problem *a = &from->p, *b = &cand->p;
  /* the same tokens (a head cut or repeated, a value edited): the same layout; else none */
  if (b->batch == 1 && b->tq == a->tq && b->tk == a->tk && (b->f.used & AC_FEAT_LAYOUTS) == (a->f.used & AC_FEAT_LAYOUTS)) {
    ac_layout_copy(cand, from);
    cand->p.l = a->l;
    if (ac_layout_validate(cand, &e) == 0) return 0;
  }
  ac_case_free(cand);
  return -1;
}

/* cur replaced by the case rc/nx built from it (0), or left as it is (-1, e set). */
static int step(ac_case *cur, int rc, ac_case *nx)
{
  rc = ac_dcase_keep_layout(cur, rc, nx);
  if (rc) return -1;
  ac_case_free(cur);
  *cur = *nx;
  return 0;
}

int ac_dcase_without(const ac_case *c, uint32_t t, ac_case *out, ac_err *e)
{
  ac_case cur, nx;
  if (ac_case_copy(&cur, c, e)) return -1;
  const ac_problem *p = &cur.p;   /* follows cur */
  int rc = 0;
  if ((t & AC_DF_STRIDED) && ac_dcase_strided(&cur)) rc = step(&cur, ac_dcase_contiguous(&cur, &nx, e), &nx);
  if (!rc && (t & AC_DF_BATCHES) && p->batch > 1) rc = step(&cur, ac_dcase_slice(&cur, 0, 0, &nx, e), &nx);
  if (!rc && (t & AC_DF_GQA) && p->heads != p->kv_heads)
    rc = step(&cur, ac_dcase_expand_kv(&cur, &nx, e) == 0 ? 0 : ac_dcase_slice(&cur, 1, 0, &nx, e), &nx);
  if (!rc && (t & AC_DF_HEADS) && p->heads > 1) rc = step(&cur, ac_dcase_slice(&cur, 1, 0, &nx, e), &nx);
  if (!rc && (t & AC_DF_SCALE) && !p->scale_is_default)
    rc = step(&cur, ac_dcase_default_scale(&cur, 1, &nx, NULL, e) == 0 ? 0 : ac_dcase_default_scale(&cur, 0, &nx, NULL, e), &nx);
  if (!rc && (t & AC_DF_DV_NE_DK) && p->dv != p->dk) rc = step(&cur, ac_dcase_dv_eq_dk(&cur, -1, &nx, e), &nx);
  if (!rc && (t & AC_DF_CAUSAL_BR) && p->mask == AC_MASK_CAUSAL_BR)
    rc = step(&cur, ac_dcase_mask(&cur, AC_MASK_CAUSAL, &nx, e), &nx);
  else if (!rc && (t & AC_DF_CAUSAL) && (p->mask == AC_MASK_CAUSAL || p->mask == AC_MASK_CAUSAL_BR))
    rc = step(&cur, ac_dcase_mask(&cur, AC_MASK_NONE, &nx, e), &nx);
  if (!rc && (t & AC_DF_NONFINITE) && ac_dcase_nonfinite(&cur)) rc = step(&cur, ac_dcase_finite(&cur, 0, &nx, e), &nx);
  for (uint32_t bit = 1; !rc && (bit & AC_FEAT_ALL); bit <<= 1)
    if ((t & (bit << AC_DF_VARIANT_SHIFT)) && (p->f.used & bit))
      rc = step(&cur, ac_case_without_feature(&cur, bit, &nx, e), &nx);
  if (rc) {
    ac_case_free(&cur);
    return -1;
  }
  *out = cur;
  return 0;
}

int ac_dcase_layout_kept(const ac_case *c)
{
  return c->lay && !((c->p.f.used & AC_FEAT_VARLEN) && c->p.l.nseq == 1);
}

int ac_dcase_seq(const ac_case *c, int64_t b, ac_case *out, ac_err *e)
{
  if (!c->lay || b < 0 || b >= c->p.l.nseq) return ac_err_set(e, "no sequence %lld", (long long)b);
  return ac_layout_seq_case(c, b, out, e);
}

int ac_dcase_as_varlen(const ac_case *c, ac_case *out, ac_err *e)
{
  /* a dense case of batch 1 is the carrier of one sequence: its rows and keys in order */
  if (c->lay || c->p.batch != 1 || (c->p.f.used & ~(uint32_t)AC_FEAT_ALL) || ac_dcase_strided(c))
    return ac_err_set(e, "no varlen form of one sequence");
  if (ac_case_copy(out, c, e)) return -1;
  const int64_t tq = out->p.tq, tk = out->p.tk;
  ac_layout_alloc(out, AC_FEAT_VARLEN, 1, 0, 0);
  out->lay->cu_q[1] = (int32_t)tq;
  out->lay->cu_k[1] = (int32_t)tk;
  ac_layout_finish(out);
  if (ac_layout_validate(out, e)) {
    ac_case_free(out);
    return -1;
  }
  return 0;
}
