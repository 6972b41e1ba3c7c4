/* variants.c: the variant inputs of a case (variants.h, docs/variants.md). */
#include "config.h"
#include "variants.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tensor_names[AC_FT_N] = {"bias", "mask", "alibi_slopes", "sinks",
                                                  "descale_q", "descale_k", "descale_v", "dropout_mask"};
static const uint32_t tensor_bits[AC_FT_N] = {AC_FEAT_BIAS, AC_FEAT_BOOL_MASK, AC_FEAT_ALIBI, AC_FEAT_SINKS,
                                              AC_FEAT_DESCALE, AC_FEAT_DESCALE, AC_FEAT_DESCALE, AC_FEAT_DROPOUT};
static const char *const feat_names[] = {"window", "softcap", "alibi", "bias", "bool_mask", "sinks", "mixed_dtypes", "descale",
                                         "varlen", "paged", "dropout"};

const char *ac_feat_tensor_name(ac_feat_tensor t) { return (unsigned)t < AC_FT_N ? tensor_names[t] : "?"; }
uint32_t ac_feat_tensor_bit(ac_feat_tensor t) { return (unsigned)t < AC_FT_N ? tensor_bits[t] : 0; }

/* the quantized tensors' bits (quant.h's ac_quant_features; never in f.used) */
static const struct { uint32_t bit; const char *name; } quant_feats[] = {{AC_FEAT_QUANT_STORE, "quant_store"},
                                                                          {AC_FEAT_QUANT_LAYOUT, "quant_layout"}};

const char *ac_feat_name(uint32_t bit)
{
  for (unsigned i = 0; i < sizeof feat_names / sizeof feat_names[0]; i++)
    if (bit == 1u << i) return feat_names[i];
  for (unsigned i = 0; i < sizeof quant_feats / sizeof quant_feats[0]; i++)
    if (bit == quant_feats[i].bit) return quant_feats[i].name;
  return NULL;
}

const char *ac_feat_list(uint32_t used, char *buf, size_t n)
{
  size_t k = 0;
  if (n) buf[0] = 0;
  for (unsigned i = 0; i < sizeof feat_names / sizeof feat_names[0]; i++)
    if (used & (1u << i) && k < n) k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "," : "", feat_names[i]);
  for (unsigned i = 0; i < sizeof quant_feats / sizeof quant_feats[0]; i++)
    if (used & quant_feats[i].bit && k < n) k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "," : "", quant_feats[i].name);
  return buf;
}

int ac_feat_tensor_shape(const ac_problem *p, ac_feat_tensor t, int64_t shape[4], size_t *elem_size)
{
  if (!(p->f.used & ac_feat_tensor_bit(t))) return 0;
  *elem_size = sizeof(float);
  switch (t) {
  case AC_FT_BIAS:
    *elem_size = ac_dtype_size(p->f.bias_dtype);
    shape[0] = p->f.bias_b, shape[1] = p->f.bias_h, shape[2] = p->tq, shape[3] = ac_bias_cols(p);
    return 4;
  case AC_FT_BOOL_MASK:
    *elem_size = 1;
    shape[0] = p->f.mask_b, shape[1] = p->f.mask_h, shape[2] = p->tq, shape[3] = ac_bias_cols(p);
    return 4;
  case AC_FT_SLOPES:
    if (p->f.alibi_per_batch) {
      shape[0] = (p->f.used & AC_FEAT_LAYOUTS) ? p->l.nseq : p->batch, shape[1] = p->heads;   /* a layout's: per sequence */
      return 2;
    }
    shape[0] = p->heads;
    return 1;
  case AC_FT_SINKS: shape[0] = p->heads; return 1;
  case AC_FT_DROPOUT_MASK:
    *elem_size = 1;
    shape[0] = p->batch, shape[1] = p->heads, shape[2] = p->tq, shape[3] = p->tk;
    return 4;
  default: shape[0] = p->batch, shape[1] = p->kv_heads; return 2;
  }
}

int64_t ac_feat_tensor_count(const ac_problem *p, ac_feat_tensor t)
{
  int64_t shape[4];
  size_t es;
  int nd = ac_feat_tensor_shape(p, t, shape, &es);
  if (!nd) return 0;
  int64_t n = 1;
  for (int i = 0; i < nd; i++)
    if (ac_mul_overflow_i64(n, shape[i], &n)) return -1;
  return n;
}

uint64_t ac_feat_tensor_bytes(const ac_problem *p, ac_feat_tensor t)
{
  int64_t shape[4];
  size_t es;
  int64_t n = ac_feat_tensor_count(p, t);
  uint64_t b;
  if (n < 0) return UINT64_MAX;
  if (!n || !ac_feat_tensor_shape(p, t, shape, &es)) return 0;
  return __builtin_mul_overflow((uint64_t)n, (uint64_t)es, &b) ? UINT64_MAX : b;
}

void **ac_feat_tensor_slot(ac_case *c, ac_feat_tensor t)
{
  switch (t) {
  case AC_FT_BIAS: return &c->bias;
  case AC_FT_BOOL_MASK: return (void **)&c->bool_mask;
  case AC_FT_SLOPES: return (void **)&c->alibi_slopes;
  case AC_FT_SINKS: return (void **)&c->sinks;
  case AC_FT_DESCALE_Q: return (void **)&c->descale[0];
  case AC_FT_DESCALE_K: return (void **)&c->descale[1];
  case AC_FT_DROPOUT_MASK: return (void **)&c->dropout_mask;
  default: return (void **)&c->descale[2];
  }
}

void ac_features_plain(ac_problem *p)
{
  memset(&p->f, 0, sizeof p->f);
  p->f.qd = p->f.kd = p->f.vd = p->f.od = p->f.bias_dtype = p->dtype;
  p->f.win_left = p->f.win_right = -1;
  p->f.bias_b = p->f.bias_h = p->f.mask_b = p->f.mask_h = 1;
}

static int extent_ok(int64_t v, int64_t full) { return v == 1 || v == full; }

int ac_features_validate(const ac_problem *p, ac_err *e)
{
  const ac_features *f = &p->f;
  if (!f->used) return 0;
  if (f->used & ~(uint32_t)AC_FEAT_KNOWN)
    return ac_err_set(e, "features: unknown feature bits 0x%x", (unsigned)(f->used & ~(uint32_t)AC_FEAT_KNOWN));
  if ((f->used & AC_FEAT_DROPOUT) && ac_dropout_p_check(f->dropout_p, e)) return -1;
  if ((f->used & AC_FEAT_DROPOUT) && (f->used & AC_FEAT_LAYOUTS))
    return ac_err_set(e, "dropout: not supported with a serving layout (varlen, paged) yet");
  if (f->used & AC_FEAT_WINDOW) {
    if (f->win_left < -1 || f->win_right < -1)
      return ac_err_set(e, "window: values must be >= -1 (-1 = unbounded), got (%lld, %lld)", (long long)f->win_left,
                        (long long)f->win_right);
  }
  if ((f->used & AC_FEAT_SOFTCAP) && !(isfinite(f->softcap) && f->softcap > 0))
    return ac_err_set(e, "softcap: must be finite and > 0 (got %g)", f->softcap);
  if (f->used & AC_FEAT_BIAS) {
    if (!ac_dtype_get(f->bias_dtype)) return ac_err_set(e, "bias: unknown dtype %d", (int)f->bias_dtype);
    if (!extent_ok(f->bias_b, p->batch) || !extent_ok(f->bias_h, p->heads))
      return ac_err_set(e, "bias: shape [%lld, %lld, tq, tk] does not broadcast to [%lld, %lld, %lld, %lld]", (long long)f->bias_b,
                        (long long)f->bias_h, (long long)p->batch, (long long)p->heads, (long long)p->tq, (long long)ac_bias_cols(p));
  }
  if ((f->used & AC_FEAT_BOOL_MASK) && (!extent_ok(f->mask_b, p->batch) || !extent_ok(f->mask_h, p->heads)))
    return ac_err_set(e, "mask: shape [%lld, %lld, tq, tk] does not broadcast to [%lld, %lld, %lld, %lld]", (long long)f->mask_b,
                      (long long)f->mask_h, (long long)p->batch, (long long)p->heads, (long long)p->tq, (long long)ac_bias_cols(p));
  if (ac_features_dtypes_check(p, e)) return -1;
  if ((f->used & AC_FEAT_DESCALE) &&
      (ac_tensor_dtype(p, 'q') == AC_F64 || ac_tensor_dtype(p, 'k') == AC_F64 || ac_tensor_dtype(p, 'v') == AC_F64))
    return ac_err_set(e, "descale: fp64 tensors take no descales (they scale fp8 and 16-bit inputs)");
  return 0;
}

int ac_dropout_p_check(double p, ac_err *e)
{
  if (!(p >= 0 && p < 1) || (double)(float)p != p)
    return ac_err_set(e, "dropout: p must be a binary32 value in [0, 1) (got %.17g)", p);
  return 0;
}

int ac_features_dtypes_check(const ac_problem *p, ac_err *e)
{
  const ac_features *f = &p->f;
  if (!(f->used & AC_FEAT_MIXED_DTYPES)) return 0;
  const ac_dtype d[4] = {f->qd, f->kd, f->vd, f->od};
  for (int i = 0; i < 4; i++) {
    if (!ac_dtype_get(d[i])) return ac_err_set(e, "variants.dtypes.%c: unknown dtype %d", "qkvo"[i], (int)d[i]);
    /* the class of the compute dtype has no term for rounding an input into it */
    if (i < 3 && !ac_dtype_within(d[i], p->dtype))
      return ac_err_set(e, "variants.dtypes.%c: %s is wider than the compute dtype %s (inputs must convert to it exactly)",
                        "qkvo"[i], ac_dtype_name(d[i]), ac_dtype_name(p->dtype));
  }
  return 0;
}

int ac_features_set_dtypes(ac_problem *p, const ac_dtype d[4], ac_err *e)
{
  ac_features *f = &p->f;
  if (!f->used) ac_features_plain(p);
  f->qd = d[0], f->kd = d[1], f->vd = d[2], f->od = d[3];
  f->used &= ~(uint32_t)AC_FEAT_MIXED_DTYPES;
  for (int i = 0; i < 4; i++)
    if (d[i] != p->dtype) f->used |= AC_FEAT_MIXED_DTYPES;
  if (!(f->used & AC_FEAT_MIXED_DTYPES)) f->qd = f->kd = f->vd = f->od = p->dtype;
  return ac_features_dtypes_check(p, e);
}

uint64_t ac_features_bytes(const ac_problem *p)
{
  uint64_t total = 0;
  for (int t = 0; t < AC_FT_N; t++) {
    uint64_t b = ac_feat_tensor_bytes(p, (ac_feat_tensor)t);
    if (b == UINT64_MAX || __builtin_add_overflow(total, b, &total)) return UINT64_MAX;
  }
  return total;
}

int ac_features_alloc(ac_case *c, ac_err *e)
{
  if (ac_features_validate(&c->p, e)) return -1;
  for (int t = 0; t < AC_FT_N; t++) {
    uint64_t b = ac_feat_tensor_bytes(&c->p, (ac_feat_tensor)t);
    if (b == UINT64_MAX) return ac_err_set(e, "%s: size overflows", ac_feat_tensor_name((ac_feat_tensor)t));
    void **slot = ac_feat_tensor_slot(c, (ac_feat_tensor)t);
    if (b && !*slot) *slot = ac_xcalloc((size_t)b, 1);
  }
  return 0;
}

void ac_features_free(ac_case *c)
{
  for (int t = 0; t < AC_FT_N; t++) {
    void **slot = ac_feat_tensor_slot(c, (ac_feat_tensor)t);
    free(*slot);
    *slot = NULL;
  }
}

void ac_features_copy(ac_case *dst, const ac_case *src)
{
  for (int t = 0; t < AC_FT_N; t++) {
    void **d = ac_feat_tensor_slot(dst, (ac_feat_tensor)t);
    void *s = *ac_feat_tensor_slot((ac_case *)src, (ac_feat_tensor)t);
    uint64_t b = ac_feat_tensor_bytes(&src->p, (ac_feat_tensor)t);
    *d = NULL;
    if (s && b && b != UINT64_MAX) {
      *d = ac_xmalloc((size_t)b);
      memcpy(*d, s, (size_t)b);
    }
  }
}

int ac_features_visible(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j)
{
  const ac_problem *p = &c->p;
  if (!ac_visible(p, i, j) || !ac_in_window(p, i, j)) return 0;
  if ((p->f.used & AC_FEAT_BOOL_MASK) && c->bool_mask && !c->bool_mask[ac_bmaskidx(p, b, h, i, j)]) return 0;
  return 1;
}

double ac_features_slope(const ac_case *c, int64_t b, int64_t h)
{
  const ac_problem *p = &c->p;
  if (!(p->f.used & AC_FEAT_ALIBI) || !c->alibi_slopes) return 0;
  return (double)c->alibi_slopes[p->f.alibi_per_batch ? b * p->heads + h : h];
}

double ac_features_score_f64(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j, double s)
{
  const ac_problem *p = &c->p;
  if (!ac_features_visible(c, b, h, i, j)) return -INFINITY;
  if (p->f.used & AC_FEAT_SOFTCAP) s = p->f.softcap * tanh(s / p->f.softcap);
  if ((p->f.used & AC_FEAT_ALIBI) && c->alibi_slopes) s -= ac_features_slope(c, b, h) * (double)ac_alibi_dist(p, i, j);
  if ((p->f.used & AC_FEAT_BIAS) && c->bias) s += ac_load(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, i, j));
  return s;
}
