/* quant_case.c: the quantized tensors of a case (quant.h): their arrays, their values, the
 * reference quantization of a tensor, and the index maps that slice a case. */
#include "config.h"
#include "quant.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **dense_slot(ac_case *c, char x) { return x == 'q' ? &c->q : x == 'k' ? &c->k : &c->v; }

static int64_t elems(const int64_t d[4]) { return d[0] * d[1] * d[2] * d[3]; }

static size_t aux_bytes(const ac_qspec *q, int64_t ns)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f || f->aux == AC_QAUX_NONE) return 0;
  return f->aux == AC_QAUX_TSCALE ? 4 : (size_t)ns * ac_qsdtype_size(ac_qspec_zdtype(q));
}

static size_t scale_bytes(const ac_qspec *q, int64_t ns) { return (size_t)ns * ac_qsdtype_size(ac_qspec_sdtype(q)); }

int ac_quant_alloc(ac_case *c, ac_err *e)
{
  if (!ac_problem_quantized(&c->p)) return 0;
  if (ac_quant_validate_problem(&c->p, e)) return -1;
  if (!c->quant) c->quant = ac_xcalloc(1, sizeof *c->quant);
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &c->p.quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    ac_qdata *t = &c->quant->t[i];
    if (!f || t->codes) continue;
    int64_t d[4];
    ac_qdims(&c->p, "qkv"[i], d);
    int64_t ns = ac_qscale_count(q, d);
    t->codes = ac_xcalloc((size_t)elems(d) + 1, 1);
    t->scales = ac_xcalloc(scale_bytes(q, ns) + 4, 1);
    t->aux = f->aux ? ac_xcalloc(aux_bytes(q, ns) + 4, 1) : NULL;
    t->plain = q->store ? ac_xcalloc((size_t)elems(d) + 1, ac_dtype_size(c->p.dtype)) : NULL;
    void **v = dense_slot(c, "qkv"[i]);
    free(*v);
    *v = ac_xcalloc((size_t)elems(d) + 1, sizeof(double));
    ac_quant_decode(c, "qkv"[i]);   /* zero codes are not all +0 (q4_0's d (0 - 8) is -0) */
  }
  return 0;
}

void ac_quant_data_free(struct ac_quant *q)
{
  if (!q) return;
  for (int i = 0; i < 3; i++) {
    free(q->t[i].codes);
    free(q->t[i].scales);
    free(q->t[i].aux);
    free(q->t[i].plain);
  }
  free(q);
}

void ac_quant_free(ac_case *c)
{
  ac_quant_data_free(c->quant);
  c->quant = NULL;
}

static void *dup(const void *p, size_t n)
{
  if (!p) return NULL;
  void *d = ac_xmalloc(n ? n : 1);
  memcpy(d, p, n);
  return d;
}

void ac_quant_copy(ac_case *dst, const ac_case *src)
{
  dst->quant = NULL;
  if (!src->quant) return;
  dst->quant = ac_xcalloc(1, sizeof *dst->quant);
  for (int i = 0; i < 3; i++) {
    const ac_qfmt_info *f = ac_qfmt_get(src->p.quant[i].fmt);
    const ac_qdata *s = &src->quant->t[i];
    if (!f || !s->codes) continue;
    int64_t d[4];
    ac_qdims(&src->p, "qkv"[i], d);
    int64_t ns = ac_qscale_count(&src->p.quant[i], d);
    dst->quant->t[i].codes = dup(s->codes, (size_t)elems(d));
    dst->quant->t[i].scales = dup(s->scales, scale_bytes(&src->p.quant[i], ns));
    dst->quant->t[i].aux = dup(s->aux, aux_bytes(&src->p.quant[i], ns));
    dst->quant->t[i].plain = dup(s->plain, (size_t)elems(d) * ac_dtype_size(src->p.dtype));
  }
}

int ac_quant_check_codes(const ac_case *c, ac_err *e)
{
  for (int i = 0; i < 3; i++) {
    const ac_qfmt_info *f = ac_qfmt_get(c->p.quant[i].fmt);
    if (!f) continue;
    if (!c->quant || !c->quant->t[i].codes) return ac_err_set(e, "%c: quantized without codes", "qkv"[i]);
    if (f->code_signed || f->code_max >= 255) continue;
    int64_t d[4];
    ac_qdims(&c->p, "qkv"[i], d);
    const uint8_t *q = c->quant->t[i].codes;
    for (int64_t x = 0; x < elems(d); x++)
      if (q[x] > f->code_max)
        return ac_err_set(e, "%c_codes: code %u at element %lld is out of %s's range 0..%d", "qkv"[i], (unsigned)q[x],
                          (long long)x, f->name, f->code_max);
  }
  return 0;
}

/* The scale and second parameter of scale element s, as values. */
static void params(const ac_qspec *q, const ac_qfmt_info *f, const ac_qdata *t, int64_t s, double *sv, double *av)
{
  ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  *sv = ac_qscale_value(sd, ac_qsd_load(sd, t->scales, (size_t)s));
  *av = f->aux == AC_QAUX_NONE ? 0 : ac_qscale_value(zd, ac_qsd_load(zd, t->aux, f->aux == AC_QAUX_TSCALE ? 0 : (size_t)s));
}

/* The largest |z s| over the n groups of a tensor with zero points (inf for a non-finite one). */
static double zs_of(const ac_qspec *q, const ac_qdata *t, int64_t n)
{
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  double r = 0;
  for (int64_t s = 0; s < n; s++) {
    double v = fabs(ac_qscale_value(zd, ac_qsd_load(zd, t->aux, (size_t)s)) *
                    ac_qscale_value(sd, ac_qsd_load(sd, t->scales, (size_t)s)));
    if (!(v <= r)) r = isnan(v) ? INFINITY : v;
  }
  return r;
}

void ac_quant_decode(ac_case *c, char x)
{
  int i = ac_qslot(x);
  ac_qspec *q = &c->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f || !c->quant) return;
  const ac_qdata *t = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  double *out = *dense_slot(c, x);
  int64_t last = -1;
  double sv = 0, av = 0;
  const ac_qsdtype zd = ac_qspec_zdtype(q);
  const int fz = f->aux == AC_QAUX_ZERO && zd != AC_QSD_I8 && zd != AC_QSD_U8;   /* a float zero point */
  int rounded = 0;
  double mins_max = 0;
  for (int64_t s = 0; f->aux == AC_QAUX_MIN && s < ac_qscale_count(q, d); s++) {
    double m = fabs(ac_qscale_value(zd, ac_qsd_load(zd, t->aux, (size_t)s)));
    mins_max = isnan(m) || m > mins_max ? (isnan(m) ? INFINITY : m) : mins_max;
  }
  for (int64_t b = 0, n = 0; b < d[0]; b++)
    for (int64_t h = 0; h < d[1]; h++)
      for (int64_t tt = 0; tt < d[2]; tt++)
        for (int64_t e = 0; e < d[3]; e++, n++) {
          int64_t s = ac_qscale_index(q, d, b, h, tt, e);
          if (s != last) params(q, f, t, s, &sv, &av), last = s;
          out[n] = fz ? ac_qvalue_zero(q->fmt, t->codes[n], sv, av, &rounded) : ac_qvalue(q->fmt, t->codes[n], sv, av);
        }
  q->rounded = rounded;
  q->mins_max = mins_max;
  q->zs_max = f->aux == AC_QAUX_MIN ? mins_max : f->aux == AC_QAUX_ZERO ? zs_of(q, t, ac_qscale_count(q, d)) : 0;
}

int64_t ac_qgroup_of(const ac_qspec *q, const int64_t d[4], int64_t s, int64_t *idx)
{
  int64_t n = 0, B = d[0], H = d[1], T = d[2], D = d[3], g = ac_qspec_tgroup(q), tr = ac_qscale_rows(q, T);
  switch (q->gran) {
  case AC_QG_BLOCK: {   /* block e of scale row r of head bh: tokens r g .. of the tile, elements e block .. */
    int64_t nb = D / q->block, bh = s / nb / tr, r = s / nb % tr, d0 = (s % nb) * q->block;
    for (int64_t t = r * g; t < T && t < (r + 1) * g; t++)
      for (int64_t e = 0; e < q->block; e++) idx[n++] = (bh * T + t) * D + d0 + e;
    break;
  }
  case AC_QG_TOKEN:
    for (int64_t e = 0; e < D; e++) idx[n++] = s * D + e;
    break;
  case AC_QG_CHANNEL: {   /* channel e of scale row r of head bh (every token without groups) */
    int64_t e = s % D, r = s / D % tr, bh = s / D / tr, t0 = g ? r * g : 0, t1 = g ? (r + 1) * g : T;
    for (int64_t t = t0; t < T && t < t1; t++) idx[n++] = (bh * T + t) * D + e;
    break;
  }
  case AC_QG_HEAD:
    for (int64_t x = 0; x < T * D; x++) idx[n++] = s * T * D + x;
    break;
  default:
    for (int64_t x = 0; x < B * H * T * D; x++) idx[n++] = x;
    break;
  }
  return n;
}

int64_t ac_qgroup_max(const ac_qspec *q, const int64_t d[4])
{
  int64_t g = ac_qspec_tgroup(q);
  switch (q->gran) {
  case AC_QG_BLOCK: return q->block * (g < d[2] ? g : d[2]);
  case AC_QG_TOKEN: return d[3];
  case AC_QG_CHANNEL: return g && g < d[2] ? g : d[2];
  case AC_QG_HEAD: return d[2] * d[3];
  default: return elems(d);
  }
}

static void store_scale(const ac_qspec *q, const ac_qfmt_info *f, ac_qdata *t, int64_t s, uint64_t sb, uint64_t ab)
{
  ac_qsd_store(ac_qspec_sdtype(q), t->scales, (size_t)s, sb);
  if (f->aux == AC_QAUX_MIN || f->aux == AC_QAUX_ZERO) ac_qsd_store(ac_qspec_zdtype(q), t->aux, (size_t)s, ab);
}

static void run_quantizer(ac_case *c, int i, const float *src);

int ac_quant_apply(ac_case *c, char x, const ac_qspec *spec, ac_err *e)
{
  ac_qspec qn = *spec;
  ac_qspec_normalize(&qn);
  const ac_qspec *q = &qn;
  int i = ac_qslot(x);
  if (i < 0) return ac_err_set(e, "tensor '%c' cannot be quantized", x);
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  if (ac_qspec_check(q, x, d[3], e)) return -1;
  if (c->p.quant[i].fmt) return ac_err_set(e, "%c is quantized already", x);
  const ac_dtype dt = ac_tensor_dtype(&c->p, x);
  int64_t n = elems(d);
  float *src = ac_xmalloc((size_t)(n ? n : 1) * sizeof *src);
  for (int64_t k = 0; k < n; k++) src[k] = (float)ac_load(dt, *dense_slot(c, x), (size_t)k);
  for (int64_t k = 0; q->store && k < n; k++)   /* a store's scales come from its plain values */
    if (!isfinite(src[k])) {
      free(src);
      return ac_err_set(e, "%c: a quantize-on-store tensor takes finite values (element %lld is %g)", x, (long long)k,
                        (double)src[k]);
    }
  void *plain = q->store ? ac_xmalloc((size_t)(n ? n : 1) * ac_dtype_size(dt)) : NULL;
  if (plain) memcpy(plain, *dense_slot(c, x), (size_t)n * ac_dtype_size(dt));
  ac_problem keep = c->p;
  c->p.quant[i] = *q;
  if (ac_quant_validate_problem(&c->p, e) || ac_quant_alloc(c, e)) {
    c->p = keep;
    free(src);
    free(plain);
    return -1;
  }
  if (plain) {
    memcpy(c->quant->t[i].plain, plain, (size_t)n * ac_dtype_size(dt));
    free(plain);
    free(src);
    if (ac_qstore_rule(q->store) == AC_QSR_GIVEN) {   /* the scale (and zero point) the format's reference gives */
      ac_qspec r = *q;
      r.store = 0;
      float *v = ac_xmalloc((size_t)(n ? n : 1) * sizeof *v);
      for (int64_t k = 0; k < n; k++) v[k] = (float)ac_load(dt, c->quant->t[i].plain, (size_t)k);
      c->p.quant[i] = r;
      run_quantizer(c, i, v);
      c->p.quant[i] = *q;
      free(v);
    }
    ac_quant_store_derive(c, x);
    return 0;
  }
  run_quantizer(c, i, src);
  free(src);
  return 0;
}

/* A store tensor's plain values are finite: its quantizer's scales are found from them. */
static int finite_plain(const ac_case *c, char x, ac_err *e)
{
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  const void *pl = c->quant->t[ac_qslot(x)].plain;
  for (int64_t k = 0; k < elems(d); k++)
    if (!isfinite(ac_load(c->p.dtype, pl, (size_t)k)))
      return ac_err_set(e, "%c: a quantize-on-store tensor takes finite values (element %lld is %g)", x, (long long)k,
                        ac_load(c->p.dtype, pl, (size_t)k));
  return 0;
}

int ac_quant_store_check(const ac_case *c, ac_err *e)
{
  for (int i = 0; i < 3; i++)
    if (c->p.quant[i].store && finite_plain(c, "qkv"[i], e)) return -1;
  return 0;
}

/* One group of tensor i by the quantizer of its spec or, for specs of the first formats, the
 * format's reference quantizer (ac_qref_group); scales with a declared dtype and float zero points
 * take the rules of quantize-on-store (absmax for fp8, min-max for int: quant_store.c). */
static void quantize_group(const ac_qspec *q, const float *gx, int64_t m, uint8_t *gc, uint64_t *sb, uint64_t *ab,
                           float ts, double *buf)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!q->store && !q->sdtype && !q->zdtype) {
    ac_qref_group(q->fmt, gx, m, gc, sb, ab, ts);
    return;
  }
  ac_qspec r = *q;
  if (!q->store) {
    ac_qstore st = {!strcmp(f->kind, "fp8") ? AC_QSR_ABSMAX : AC_QSR_MINMAX, AC_QRD_EVEN, AC_QAR_F32, AC_QOV_SAT};
    r.store = ac_qstore_pack(&st);
  }
  for (int64_t k = 0; k < m; k++) buf[k] = gx[k];
  ac_qstore_group(&r, buf, m, gc, sb, ab);
}

/* The quantizer on the n binary32 values src of tensor i (its codes and scales allocated; a given
 * scale's store tensor: its scales set), then its values decoded. */
static void run_quantizer(ac_case *c, int i, const float *src)
{
  const ac_qspec *q = &c->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, "qkv"[i], d);
  int64_t n = elems(d);
  float ts = f->aux == AC_QAUX_TSCALE ? ac_qref_nvfp4_tscale(src, n) : 0.0f;
  if (f->aux == AC_QAUX_TSCALE) memcpy(t->aux, &ts, 4);
  int64_t gm = ac_qgroup_max(q, d), ns = ac_qscale_count(q, d);
  int64_t *idx = ac_xmalloc((size_t)gm * sizeof *idx);
  float *gx = ac_xmalloc((size_t)gm * sizeof *gx);
  double *buf = ac_xmalloc((size_t)gm * sizeof *buf);
  uint8_t *gc = ac_xmalloc((size_t)gm);
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  for (int64_t s = 0; s < ns; s++) {
    int64_t m = ac_qgroup_of(q, d, s, idx);
    for (int64_t k = 0; k < m; k++) gx[k] = src[idx[k]];
    const int per_group = f->aux == AC_QAUX_MIN || f->aux == AC_QAUX_ZERO;   /* nvfp4's aux: one tensor scale */
    uint64_t sb = ac_qsd_load(sd, t->scales, (size_t)s), ab = per_group && t->aux ? ac_qsd_load(zd, t->aux, (size_t)s) : 0;
    quantize_group(q, gx, m, gc, &sb, &ab, ts, buf);
    for (int64_t k = 0; k < m; k++) t->codes[idx[k]] = gc[k];
    store_scale(q, f, t, s, sb, ab);
  }
  free(idx);
  free(gx);
  free(buf);
  free(gc);
  ac_quant_decode(c, "qkv"[i]);
}

void ac_quant_store_derive(ac_case *c, char x)
{
  int i = ac_qslot(x);
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t n = elems(d);
  float *v = ac_xmalloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t k = 0; k < n; k++) v[k] = (float)ac_load(c->p.dtype, c->quant->t[i].plain, (size_t)k);
  run_quantizer(c, i, v);
  free(v);
}

int ac_quant_requantize(ac_case *c, char x)
{
  int i = ac_qslot(x);
  if (i < 0 || !c->p.quant[i].fmt || !c->quant) return 0;
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t n = elems(d);
  const double *v = *dense_slot(c, x);
  if (c->p.quant[i].store) {   /* the values become the plain ones (in the case's dtype), stored again */
    for (int64_t k = 0; k < n; k++) {
      double y = isfinite(v[k]) ? v[k] : 0;
      ac_store_bits(c->p.dtype, c->quant->t[i].plain, (size_t)k, ac_encode_f64(c->p.dtype, y));
    }
    ac_quant_store_derive(c, x);
    return 1;
  }
  float *src = ac_xmalloc((size_t)(n ? n : 1) * sizeof *src);
  for (int64_t k = 0; k < n; k++) src[k] = (float)v[k];
  run_quantizer(c, i, src);
  free(src);
  return 1;
}

void ac_quant_hash(const ac_case *c, void (*word)(void *s, uint64_t w), void (*bytes)(void *s, const void *d, size_t n),
                   void *s)
{
  if (!ac_problem_quantized(&c->p) || !c->quant) return;
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &c->p.quant[i];
    const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
    word(s, (uint64_t)q->fmt * 64 + (uint64_t)q->gran);
    if (!f) continue;
    int64_t d[4];
    ac_qdims(&c->p, "qkv"[i], d);
    int64_t ns = ac_qscale_count(q, d);
    if (ac_qspec_extended(q) || q->store)   /* the first formats keep the hash they had */
      word(s, (uint64_t)q->block ^ (uint64_t)q->tgroup << 16 ^ (uint64_t)q->sdtype << 32 ^ (uint64_t)q->zdtype << 40 ^
                  (uint64_t)q->pack << 48 ^ (uint64_t)(uint32_t)q->store << 20);
    bytes(s, c->quant->t[i].codes, (size_t)elems(d));
    bytes(s, c->quant->t[i].scales, scale_bytes(q, ns));
    if (c->quant->t[i].aux) bytes(s, c->quant->t[i].aux, aux_bytes(q, ns));
    if (c->quant->t[i].plain) bytes(s, c->quant->t[i].plain, (size_t)elems(d) * ac_dtype_size(c->p.dtype));
  }
}

static int64_t at(const int64_t *m, int64_t k) { return m ? m[k] : k; }

/* Block scales move with whole blocks: block k of dst starts at a multiple of the block in src and
 * its elements follow in order. */
static int blocks_whole(const int64_t *dm, int64_t nd, int64_t bs)
{
  for (int64_t k = 0; dm && k < nd; k++) {
    if (dm[k - k % bs] < 0) {   /* a block without a source: every entry -1 (zero codes and scale) */
      if (dm[k] >= 0) return 0;
      continue;
    }
    if (dm[k] != dm[k - k % bs] + k % bs || dm[k - k % bs] % bs) return 0;
  }
  return 1;
}

int ac_quant_remap(const ac_case *src, ac_case *dst, char x, const ac_qmap *m, ac_err *e)
{
  int i = ac_qslot(x);
  const ac_qspec *q = &src->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) return 0;
  dst->p.quant[i] = *q;
  int64_t sd[4], dd[4];
  ac_qdims(&src->p, x, sd);
  ac_qdims(&dst->p, x, dd);
  if (q->gran == AC_QG_BLOCK && (dd[3] % q->block || !blocks_whole(m->d, dd[3], q->block)))
    return ac_err_set(e, "%c: the slice cuts a %s block of %lld", x, f->name, (long long)q->block);
  int64_t g = ac_qspec_tgroup(q);
  if (ac_quant_alloc(dst, e)) return -1;
  if (g > 1 && !blocks_whole(m->t, dd[2], g)) {   /* a token group cut: the values moved, quantized again */
    double *dv = *dense_slot(dst, x);
    const double *sv = *dense_slot((ac_case *)src, x);
    size_t ps = ac_dtype_size(src->p.dtype);
    for (int64_t b = 0, n = 0; b < dd[0]; b++)
      for (int64_t h = 0; h < dd[1]; h++)
        for (int64_t tt = 0; tt < dd[2]; tt++)
          for (int64_t k = 0; k < dd[3]; k++, n++) {
            int64_t B = at(m->b, b), H = at(m->h, h), T = at(m->t, tt), K = at(m->d, k);
            int64_t from = ((B * sd[1] + H) * sd[2] + T) * sd[3] + K;
            int ok = B >= 0 && H >= 0 && T >= 0 && K >= 0;
            dv[n] = ok && isfinite(sv[from]) ? sv[from] : 0;
            if (dst->quant->t[i].plain)
              memcpy((char *)dst->quant->t[i].plain + (size_t)n * ps, ok ? (const char *)src->quant->t[i].plain + (size_t)from * ps
                                                                           : (const char *)&(uint64_t){0}, ps);
          }
    if (q->store) ac_quant_store_derive(dst, x);
    else ac_quant_requantize(dst, x);
    return 0;
  }
  const ac_qdata *s = &src->quant->t[i];
  ac_qdata *t = &dst->quant->t[i];
  size_t ss = ac_qsdtype_size(ac_qspec_sdtype(q)),
         as = f->aux == AC_QAUX_MIN || f->aux == AC_QAUX_ZERO ? ac_qsdtype_size(ac_qspec_zdtype(q)) : 0;
  size_t ps = ac_dtype_size(src->p.dtype);
  if (f->aux == AC_QAUX_TSCALE) memcpy(t->aux, s->aux, 4);
  for (int64_t b = 0, n = 0; b < dd[0]; b++)
    for (int64_t h = 0; h < dd[1]; h++)
      for (int64_t tt = 0; tt < dd[2]; tt++)
        for (int64_t k = 0; k < dd[3]; k++, n++) {
          int64_t B = at(m->b, b), H = at(m->h, h), T = at(m->t, tt), K = at(m->d, k);
          if (B < 0 || H < 0 || T < 0 || K < 0) continue;   /* no source: zero codes and scales */
          int64_t from = ((B * sd[1] + H) * sd[2] + T) * sd[3] + K;
          t->codes[n] = s->codes[from];
          if (t->plain) memcpy((char *)t->plain + (size_t)n * ps, (const char *)s->plain + (size_t)from * ps, ps);
          int64_t so = ac_qscale_index(q, sd, B, H, T, K), dn = ac_qscale_index(q, dd, b, h, tt, k);
          memcpy((char *)t->scales + (size_t)dn * ss, (const char *)s->scales + (size_t)so * ss, ss);
          if (as) memcpy((char *)t->aux + (size_t)dn * as, (const char *)s->aux + (size_t)so * as, as);
        }
  if (q->store) ac_quant_store_derive(dst, x);   /* a store tensor's codes are its quantizer's of the plain values */
  else ac_quant_decode(dst, x);
  return 0;
}

int ac_quant_remap_all(const ac_case *src, ac_case *dst, const ac_qmaps *m, ac_err *e)
{
  if (!ac_problem_quantized(&src->p)) return 0;
  if (!src->quant) return ac_err_set(e, "quantized case without codes");
  const ac_qmap *maps[3] = {&m->q, &m->k, &m->v};
  for (int i = 0; i < 3; i++)
    if (ac_quant_remap(src, dst, "qkv"[i], maps[i], e)) return -1;
  return 0;
}

void ac_quant_stored_alloc(const ac_problem *p, int i, ac_qdata *t, size_t n[3])
{
  const ac_qspec *q = &p->quant[i];
  int64_t d[4];
  ac_qdims(p, "qkv"[i], d);
  const size_t ns = (size_t)ac_qscale_count(q, d);
  const ac_qsdtype zd = ac_qspec_zdtype(q);
  n[0] = (size_t)(d[0] * d[1] * d[2] * d[3]);
  n[1] = ns * ac_qsdtype_size(ac_qspec_sdtype(q));
  n[2] = zd == AC_QSD_N ? 0 : ns * ac_qsdtype_size(zd);
  t->codes = ac_xcalloc(n[0] + 1, 1);
  t->scales = ac_xcalloc(n[1] + 1, 1);
  t->aux = n[2] ? ac_xcalloc(n[2] + 1, 1) : NULL;
}
