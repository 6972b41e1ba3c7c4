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

static size_t aux_bytes(const ac_qfmt_info *f, int64_t ns)
{
  switch (f->aux) {
  case AC_QAUX_MIN: return (size_t)ns * 2;
  case AC_QAUX_ZERO: return (size_t)ns;
  case AC_QAUX_TSCALE: return 4;
  default: return 0;
  }
}

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
    t->scales = ac_xcalloc((size_t)ns + 1, ac_qsdtype_size(f->sdtype));
    t->aux = f->aux ? ac_xcalloc(aux_bytes(f, ns) + 1, 1) : NULL;
    void **v = dense_slot(c, "qkv"[i]);
    free(*v);
    *v = ac_xcalloc((size_t)elems(d) + 1, sizeof(double));
    ac_quant_decode(c, "qkv"[i]);   /* zero codes are not all +0 (q4_0's d (0 - 8) is -0) */
  }
  return 0;
}

void ac_quant_free(ac_case *c)
{
  if (!c->quant) return;
  for (int i = 0; i < 3; i++) {
    free(c->quant->t[i].codes);
    free(c->quant->t[i].scales);
    free(c->quant->t[i].aux);
  }
  free(c->quant);
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
    dst->quant->t[i].scales = dup(s->scales, (size_t)ns * ac_qsdtype_size(f->sdtype));
    dst->quant->t[i].aux = dup(s->aux, aux_bytes(f, ns));
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
static void params(const ac_qfmt_info *f, const ac_qdata *t, int64_t s, double *sv, double *av)
{
  *sv = ac_qscale_value(f->sdtype, f->sdtype == AC_QSD_F16   ? ac_load_bits(AC_F16, t->scales, (size_t)s)
                                   : f->sdtype == AC_QSD_F32 ? ac_load_bits(AC_F32, t->scales, (size_t)s)
                                                             : ((const uint8_t *)t->scales)[s]);
  switch (f->aux) {
  case AC_QAUX_MIN: *av = ac_decode(AC_F16, ac_load_bits(AC_F16, t->aux, (size_t)s)); break;
  case AC_QAUX_ZERO: *av = (double)((const int8_t *)t->aux)[s]; break;
  case AC_QAUX_TSCALE: *av = ac_decode(AC_F32, ac_load_bits(AC_F32, t->aux, 0)); break;
  default: *av = 0; break;
  }
}

void ac_quant_decode(ac_case *c, char x)
{
  int i = ac_qslot(x);
  const ac_qspec *q = &c->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f || !c->quant) return;
  const ac_qdata *t = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  double *out = *dense_slot(c, x);
  int64_t last = -1;
  double sv = 0, av = 0;
  for (int64_t b = 0, n = 0; b < d[0]; b++)
    for (int64_t h = 0; h < d[1]; h++)
      for (int64_t tt = 0; tt < d[2]; tt++)
        for (int64_t e = 0; e < d[3]; e++, n++) {
          int64_t s = ac_qscale_index(q, d, b, h, tt, e);
          if (s != last) params(f, t, s, &sv, &av), last = s;
          out[n] = ac_qvalue(q->fmt, t->codes[n], sv, av);
        }
}

/* The element indices of scale group s, in storage order, into idx (returns their number). */
static int64_t group_of(const ac_qspec *q, const int64_t d[4], int64_t s, int64_t *idx)
{
  int64_t n = 0, B = d[0], H = d[1], T = d[2], D = d[3];
  switch (q->gran) {
  case AC_QG_BLOCK: {
    int64_t nb = D / q->block, row = s / nb, d0 = (s % nb) * q->block;
    for (int64_t e = 0; e < q->block; e++) idx[n++] = row * D + d0 + e;
    break;
  }
  case AC_QG_TOKEN:
    for (int64_t e = 0; e < D; e++) idx[n++] = s * D + e;
    break;
  case AC_QG_CHANNEL: {
    int64_t bh = s / D, e = s % D;
    for (int64_t t = 0; t < T; t++) idx[n++] = (bh * T + t) * D + e;
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

static int64_t group_max(const ac_qspec *q, const int64_t d[4])
{
  switch (q->gran) {
  case AC_QG_BLOCK: return q->block;
  case AC_QG_TOKEN: return d[3];
  case AC_QG_CHANNEL: return d[2];
  case AC_QG_HEAD: return d[2] * d[3];
  default: return elems(d);
  }
}

static void store_scale(const ac_qfmt_info *f, ac_qdata *t, int64_t s, uint64_t sb, uint64_t ab)
{
  if (f->sdtype == AC_QSD_F16) ac_store_bits(AC_F16, t->scales, (size_t)s, sb);
  else if (f->sdtype == AC_QSD_F32) ac_store_bits(AC_F32, t->scales, (size_t)s, sb);
  else ((uint8_t *)t->scales)[s] = (uint8_t)sb;
  if (f->aux == AC_QAUX_MIN) ac_store_bits(AC_F16, t->aux, (size_t)s, ab);
  else if (f->aux == AC_QAUX_ZERO) ((uint8_t *)t->aux)[s] = (uint8_t)ab;
}

static void run_quantizer(ac_case *c, int i, const float *src);

int ac_quant_apply(ac_case *c, char x, const ac_qspec *q, ac_err *e)
{
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
  ac_problem keep = c->p;
  c->p.quant[i] = *q;
  if (ac_quant_validate_problem(&c->p, e) || ac_quant_alloc(c, e)) {
    c->p = keep;
    free(src);
    return -1;
  }
  run_quantizer(c, i, src);
  free(src);
  return 0;
}

/* The reference quantizer on the n binary32 values src of tensor i (its codes and scales allocated),
 * then its values decoded. */
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
  int64_t gm = group_max(q, d), ns = ac_qscale_count(q, d);
  int64_t *idx = ac_xmalloc((size_t)gm * sizeof *idx);
  float *gx = ac_xmalloc((size_t)gm * sizeof *gx);
  uint8_t *gc = ac_xmalloc((size_t)gm);
  for (int64_t s = 0; s < ns; s++) {
    int64_t m = group_of(q, d, s, idx);
    for (int64_t k = 0; k < m; k++) gx[k] = src[idx[k]];
    uint64_t sb, ab;
    ac_qref_group(q->fmt, gx, m, gc, &sb, &ab, ts);
    for (int64_t k = 0; k < m; k++) t->codes[idx[k]] = gc[k];
    store_scale(f, t, s, sb, ab);
  }
  free(idx);
  free(gx);
  free(gc);
  ac_quant_decode(c, "qkv"[i]);
}

int ac_quant_requantize(ac_case *c, char x)
{
  int i = ac_qslot(x);
  if (i < 0 || !c->p.quant[i].fmt || !c->quant) return 0;
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t n = elems(d);
  const double *v = *dense_slot(c, x);
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
    bytes(s, c->quant->t[i].codes, (size_t)elems(d));
    bytes(s, c->quant->t[i].scales, (size_t)ns * ac_qsdtype_size(f->sdtype));
    if (c->quant->t[i].aux) bytes(s, c->quant->t[i].aux, aux_bytes(f, ns));
  }
}

static int64_t at(const int64_t *m, int64_t k) { return m ? m[k] : k; }

/* Block scales move with whole blocks: block k of dst starts at a multiple of the block in src and
 * its elements follow in order. */
static int blocks_whole(const int64_t *dm, int64_t nd, int64_t bs)
{
  for (int64_t k = 0; dm && k < nd; k++)
    if (dm[k] != dm[k - k % bs] + k % bs || dm[k - k % bs] % bs) return 0;
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
  if (ac_quant_alloc(dst, e)) return -1;
  const ac_qdata *s = &src->quant->t[i];
  ac_qdata *t = &dst->quant->t[i];
  size_t ss = ac_qsdtype_size(f->sdtype), as = f->aux == AC_QAUX_MIN ? 2 : 1;
  if (f->aux == AC_QAUX_TSCALE) memcpy(t->aux, s->aux, 4);
  for (int64_t b = 0, n = 0; b < dd[0]; b++)
    for (int64_t h = 0; h < dd[1]; h++)
      for (int64_t tt = 0; tt < dd[2]; tt++)
        for (int64_t k = 0; k < dd[3]; k++, n++) {
          int64_t B = at(m->b, b), H = at(m->h, h), T = at(m->t, tt), K = at(m->d, k);
          if (B < 0 || H < 0 || T < 0 || K < 0) continue;   /* no source: zero codes and scales */
          t->codes[n] = s->codes[((B * sd[1] + H) * sd[2] + T) * sd[3] + K];
          int64_t so = ac_qscale_index(q, sd, B, H, T, K), dn = ac_qscale_index(q, dd, b, h, tt, k);
          memcpy((char *)t->scales + (size_t)dn * ss, (const char *)s->scales + (size_t)so * ss, ss);
          if (f->aux == AC_QAUX_MIN || f->aux == AC_QAUX_ZERO)
            memcpy((char *)t->aux + (size_t)dn * as, (const char *)s->aux + (size_t)so * as, as);
        }
  ac_quant_decode(dst, x);
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
