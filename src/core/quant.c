/* quant.c: the quantized formats (quant.h): their table, names, exact values and geometry. */
#include "config.h"
#include "quant.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <mpfr.h>

#define G(x) (1u << (x))
#define NONBLOCK (G(AC_QG_TENSOR) | G(AC_QG_HEAD) | G(AC_QG_TOKEN) | G(AC_QG_CHANNEL))
/* int and fp8 formats take block granularity with a group size of the spec's (group:N, tile:GxN) */
#define ANY (NONBLOCK | G(AC_QG_BLOCK))

static const ac_qfmt_info infos[AC_QF_N] = {
  [AC_QF_Q8_0] = {"q8_0", "ggml", 1, 255, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 34, 0},
  [AC_QF_Q4_0] = {"q4_0", "ggml", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 18, 0},
  [AC_QF_Q4_1] = {"q4_1", "ggml", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_MIN, 20, 0},
  [AC_QF_Q5_0] = {"q5_0", "ggml", 0, 31, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 22, 0},
  [AC_QF_Q5_1] = {"q5_1", "ggml", 0, 31, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_MIN, 24, 0},
  [AC_QF_IQ4_NL] = {"iq4_nl", "ggml", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 18, 0},
  [AC_QF_E4M3FN] = {"e4m3fn", "fp8", 0, 255, 0, ANY, AC_QG_TENSOR, AC_QSD_F32, AC_QAUX_NONE, 0, 0},
  [AC_QF_E4M3FNUZ] = {"e4m3fnuz", "fp8", 0, 255, 0, ANY, AC_QG_TENSOR, AC_QSD_F32, AC_QAUX_NONE, 0, 0},
  [AC_QF_E5M2] = {"e5m2", "fp8", 0, 255, 0, ANY, AC_QG_TENSOR, AC_QSD_F32, AC_QAUX_NONE, 0, 0},
  [AC_QF_INT8] = {"int8", "int", 1, 255, 0, ANY, AC_QG_TOKEN, AC_QSD_F32, AC_QAUX_ZERO, 0, 0},
  [AC_QF_INT4] = {"int4", "int", 0, 15, 0, ANY, AC_QG_TOKEN, AC_QSD_F32, AC_QAUX_ZERO, 0, 4},
  [AC_QF_NVFP4] = {"nvfp4", "fp4", 0, 15, 16, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_E4M3, AC_QAUX_TSCALE, 0, 4},
  [AC_QF_MXFP4] = {"mxfp4", "fp4", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_E8M0, AC_QAUX_NONE, 17, 4},
  [AC_QF_INT2] = {"int2", "int", 0, 3, 0, ANY, AC_QG_TOKEN, AC_QSD_F32, AC_QAUX_ZERO, 0, 2},
  [AC_QF_UINT8] = {"uint8", "int", 0, 255, 0, ANY, AC_QG_TOKEN, AC_QSD_F32, AC_QAUX_ZERO, 0, 0},
};

static const char *const gran_names[AC_QG_N] = {"block", "tensor", "head", "token", "channel"};

const int8_t ac_iq4nl_table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

const ac_qfmt_info *ac_qfmt_get(int fmt) { return fmt > AC_QF_NONE && fmt < AC_QF_N ? &infos[fmt] : NULL; }

const char *ac_qfmt_name(int fmt)
{
  if (fmt == AC_QF_NONE) return "none";
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  return f ? f->name : "?";
}

int ac_qfmt_parse(const char *s, int *fmt)
{
  static const struct { const char *alias; int fmt; } aliases[] = {
    {"fp8_e4m3fn", AC_QF_E4M3FN}, {"float8_e4m3fn", AC_QF_E4M3FN}, {"e4m3", AC_QF_E4M3FN},
    {"fp8_e4m3fnuz", AC_QF_E4M3FNUZ}, {"float8_e4m3fnuz", AC_QF_E4M3FNUZ},
    {"fp8_e5m2", AC_QF_E5M2}, {"float8_e5m2", AC_QF_E5M2},
  };
  if (!s) return -1;
  for (int f = 1; f < AC_QF_N; f++)
    if (!strcasecmp(s, infos[f].name)) {
      *fmt = f;
      return 0;
    }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcasecmp(s, aliases[i].alias)) {
      *fmt = aliases[i].fmt;
      return 0;
    }
  return -1;
}

const char *ac_qgran_name(int gran) { return gran >= 0 && gran < AC_QG_N ? gran_names[gran] : "?"; }

int ac_qgran_parse(const char *s, int *gran)
{
  for (int g = 0; s && g < AC_QG_N; g++)
    if (!strcasecmp(s, gran_names[g])) {
      *gran = g;
      return 0;
    }
  if (s && (!strcasecmp(s, "per-token") || !strcasecmp(s, "token-head"))) return *gran = AC_QG_TOKEN, 0;
  if (s && !strcasecmp(s, "per-channel")) return *gran = AC_QG_CHANNEL, 0;
  if (s && (!strcasecmp(s, "per-tensor") || !strcasecmp(s, "global"))) return *gran = AC_QG_TENSOR, 0;
  if (s && (!strcasecmp(s, "per-head") || !strcasecmp(s, "kv-head"))) return *gran = AC_QG_HEAD, 0;
  return -1;
}

const char *ac_qsdtype_name(ac_qsdtype t)
{
  static const char *const n[AC_QSD_N] = {"f16", "f32", "e4m3", "e8m0", "bf16", "i8", "u8"};
  return (unsigned)t < AC_QSD_N ? n[t] : "?";
}

const char *ac_qsdtype_npy(ac_qsdtype t)
{
  static const char *const n[AC_QSD_N] = {"<f2", "<f4", "|u1", "|u1", "<u2", "|i1", "|u1"};
  return (unsigned)t < AC_QSD_N ? n[t] : "?";
}

size_t ac_qsdtype_size(ac_qsdtype t) { return t == AC_QSD_F16 || t == AC_QSD_BF16 ? 2 : t == AC_QSD_F32 ? 4 : 1; }

ac_dtype ac_qsd_dtype(ac_qsdtype t)
{
  return t == AC_QSD_F16 ? AC_F16 : t == AC_QSD_BF16 ? AC_BF16 : t == AC_QSD_F32 ? AC_F32 : AC_E4M3;
}

uint64_t ac_qsd_load(ac_qsdtype t, const void *a, size_t i) { return ac_load_bits(ac_qsd_dtype(t), a, i); }

void ac_qsd_store(ac_qsdtype t, void *a, size_t i, uint64_t bits) { ac_store_bits(ac_qsd_dtype(t), a, i, bits); }

uint64_t ac_qsd_encode(ac_qsdtype t, double x)
{
  switch (t) {
  case AC_QSD_F16: return ac_encode_f64(AC_F16, x);
  case AC_QSD_BF16: return ac_encode_f64(AC_BF16, x);
  case AC_QSD_F32: return ac_encode_f64(AC_F32, x);
  case AC_QSD_E4M3: return ac_e4m3_from_f64(x, AC_E4M3_SATURATE);
  case AC_QSD_E8M0: {
    if (!(fabs(x) > 0)) return 0;
    int e = ilogb(fabs(x)) + 127;
    return (uint64_t)(e < 0 ? 0 : e > 254 ? 254 : e);
  }
  default: {
    double lo = t == AC_QSD_I8 ? -128 : 0, hi = t == AC_QSD_I8 ? 127 : 255, r = isnan(x) ? 0 : rint(x);
    return (uint64_t)(uint8_t)(int)(r < lo ? lo : r > hi ? hi : r);
  }
  }
}

int ac_qfmt_parse_list(const char *s, uint32_t *mask, char *bad, size_t n)
{
  *mask = 0;
  if (n) bad[0] = 0;
  for (const char *t = s; t && *t;) {
    const char *end = strchr(t, ',');
    size_t l = end ? (size_t)(end - t) : strlen(t);
    char name[32];
    int f;
    snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), t);
    if (l && (l >= sizeof name || ac_qfmt_parse(name, &f))) {
      if (n) snprintf(bad, n, "%.*s", (int)l, t);
      return -1;
    }
    if (l) *mask |= 1u << f;
    t = end ? end + 1 : NULL;
  }
  return *mask ? 0 : -1;
}

const char *ac_qfmt_list(uint32_t mask, char *buf, size_t n)
{
  size_t len = 0;
  if (n) buf[0] = 0;
  for (int f = 1; f < AC_QF_N; f++)
    if (mask >> f & 1u) {
      int w = snprintf(buf + len, n > len ? n - len : 0, "%s%s", len ? "," : "", infos[f].name);
      if (w > 0) len += (size_t)w;
      if (len >= n) break;
    }
  return buf;
}

/* ---- exact values ---------------------------------------------------------------------- */

double ac_e4m3fnuz_decode(uint8_t c)
{
  if (c == 0x80) return NAN;
  int e = (c >> 3) & 15, m = c & 7;
  double v = e ? ldexp(8 + m, e - 11) : ldexp(m, -10);
  return c & 0x80 ? -v : v;
}

double ac_e2m1_decode(uint8_t c)
{
  static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return c & 8 ? -mag[c & 7] : mag[c & 7];
}

double ac_qscale_value(ac_qsdtype t, uint64_t bits)
{
  switch (t) {
  case AC_QSD_F16: return ac_decode(AC_F16, bits);
  case AC_QSD_F32: return ac_decode(AC_F32, bits);
  case AC_QSD_E4M3: return ac_decode(AC_E4M3, bits);
  case AC_QSD_E8M0: return (bits & 0xff) == 0xff ? NAN : ldexp(1.0, (int)(bits & 0xff) - 127);
  case AC_QSD_BF16: return ac_decode(AC_BF16, bits);
  case AC_QSD_I8: return (double)(int8_t)(uint8_t)bits;
  case AC_QSD_U8: return (double)(uint8_t)bits;
  default: return NAN;
  }
}

double ac_qcode_value(int fmt, uint8_t code)
{
  switch (fmt) {
  case AC_QF_Q8_0:
  case AC_QF_INT8: return (double)(int8_t)code;
  case AC_QF_Q4_0: return (double)code - 8;
  case AC_QF_Q5_0: return (double)code - 16;
  case AC_QF_Q4_1:
  case AC_QF_Q5_1:
  case AC_QF_INT4:
  case AC_QF_INT2:
  case AC_QF_UINT8: return (double)code;
  case AC_QF_IQ4_NL: return (double)ac_iq4nl_table[code & 15];
  case AC_QF_E4M3FN: return ac_decode(AC_E4M3, code);
  case AC_QF_E4M3FNUZ: return ac_e4m3fnuz_decode(code);
  case AC_QF_E5M2: return ac_decode(AC_E5M2, code);
  case AC_QF_NVFP4:
  case AC_QF_MXFP4: return ac_e2m1_decode(code);
  default: return NAN;
  }
}

/* Every operation below is exact in binary64 on finite operands (docs/quantized.md "Exact values"):
 * d q has at most 11 + 8 significant bits, d q + m is an integer multiple of 2^-24 below 2^21,
 * (q - z) s has at most 9 + 24 bits, e2m1 s t at most 2 + 4 + 24 bits, all within binary64's
 * exponent range; non-finite scales follow IEEE arithmetic. */
double ac_qvalue(int fmt, uint8_t code, double s, double a)
{
  double q = ac_qcode_value(fmt, code);
  switch (fmt) {
  case AC_QF_Q4_1:
  case AC_QF_Q5_1: return s * q + a;
  case AC_QF_INT8:
  case AC_QF_INT4:
  case AC_QF_INT2:
  case AC_QF_UINT8: return (q - a) * s;
  case AC_QF_NVFP4: return q * s * a;
  default: return q * s;
  }
}

/* q - z and its product with s exact in binary64 when TwoSum and fma say so (every integer zero
 * point, f16 zero points with f16 scales); otherwise the exact value, computed in MPFR, rounded once. */
double ac_qvalue_zero(int fmt, uint8_t code, double s, double z, int *rounded)
{
  double q = ac_qcode_value(fmt, code), d = q - z;
  if (!isfinite(d) || !isfinite(s)) return d * s;
  double bb = d - q, err = (q - (d - bb)) + (-z - bb), v = d * s;
  if (err == 0 && fma(d, s, -v) == 0) return v;
  if (isinf(v) || (v == 0 && d != 0 && s != 0)) return v;   /* beyond binary64's range: never for these dtypes */
  mpfr_t x, y;
  mpfr_inits2(640, x, y, (mpfr_ptr)0);
  mpfr_set_d(x, q, MPFR_RNDN);
  mpfr_set_d(y, z, MPFR_RNDN);
  mpfr_sub(x, x, y, MPFR_RNDN);   /* exact at 640 bits: both within 2^-149 .. 2^128 */
  mpfr_set_d(y, s, MPFR_RNDN);
  mpfr_mul(x, x, y, MPFR_RNDN);   /* exact: at most 2 * 300 bits */
  v = mpfr_get_d(x, MPFR_RNDN);
  if (mpfr_cmp_d(x, v) != 0) *rounded = 1;
  mpfr_clears(x, y, (mpfr_ptr)0);
  return v;
}

/* ---- geometry -------------------------------------------------------------------------- */

int64_t ac_qscale_count(const ac_qspec *q, const int64_t d[4])
{
  switch (q->gran) {
  case AC_QG_BLOCK: return q->block > 0 ? d[0] * d[1] * ac_qscale_rows(q, d[2]) * (d[3] / q->block) : 0;
  case AC_QG_TENSOR: return 1;
  case AC_QG_HEAD: return d[0] * d[1];
  case AC_QG_TOKEN: return d[0] * d[1] * d[2];
  case AC_QG_CHANNEL: return d[0] * d[1] * ac_qscale_rows(q, d[2]) * d[3];
  default: return 0;
  }
}

void ac_qscale_shape(const ac_qspec *q, const int64_t d[4], int64_t s[4], int *ndim)
{
  memset(s, 0, 4 * sizeof *s);
  switch (q->gran) {
  case AC_QG_BLOCK:
    s[0] = d[0], s[1] = d[1], s[2] = ac_qscale_rows(q, d[2]), s[3] = q->block > 0 ? d[3] / q->block : 0, *ndim = 4;
    break;
  case AC_QG_HEAD: s[0] = d[0], s[1] = d[1], *ndim = 2; break;
  case AC_QG_TOKEN: s[0] = d[0], s[1] = d[1], s[2] = d[2], *ndim = 3; break;
  case AC_QG_CHANNEL:   /* [B, H, D], or [B, H, T', D] over token groups */
    if (ac_qspec_tgroup(q)) s[0] = d[0], s[1] = d[1], s[2] = ac_qscale_rows(q, d[2]), s[3] = d[3], *ndim = 4;
    else s[0] = d[0], s[1] = d[1], s[2] = d[3], *ndim = 3;
    break;
  default: s[0] = 1, *ndim = 1; break;
  }
}

void ac_qdims(const ac_problem *p, char x, int64_t d[4])
{
  d[0] = p->batch;
  d[1] = x == 'q' ? p->heads : p->kv_heads;
  d[2] = x == 'q' ? p->tq : p->tk;
  d[3] = x == 'v' ? p->dv : p->dk;
}

uint64_t ac_quant_bytes(const ac_problem *p)
{
  uint64_t total = 0;
  for (int i = 0; i < 3; i++) {
    const ac_qfmt_info *f = ac_qfmt_get(p->quant[i].fmt);
    if (!f) continue;
    int64_t d[4];
    ac_qdims(p, "qkv"[i], d);
    double n = (double)d[0] * (double)d[1] * (double)d[2] * (double)d[3];
    double ns = (double)ac_qscale_count(&p->quant[i], d), s = ns * (double)ac_qsdtype_size(ac_qspec_sdtype(&p->quant[i]));
    double a = f->aux == AC_QAUX_TSCALE ? 4.0 : f->aux ? ns * (double)ac_qsdtype_size(ac_qspec_zdtype(&p->quant[i])) : 0.0;
    if (p->quant[i].store) n += n * (double)ac_dtype_size(p->dtype);   /* the plain values */
    double t = (double)total + n + s + a;
    total = t >= 0x1p63 ? UINT64_MAX : (uint64_t)t;
  }
  return total;
}

int ac_quant_validate_problem(const ac_problem *p, ac_err *e)
{
  if (!ac_problem_quantized(p)) return 0;
  for (int i = 0; i < 3; i++) {
    char x = "qkv"[i];
    if (!p->quant[i].fmt) continue;
    int64_t d[4];
    ac_qdims(p, x, d);
    if (ac_qspec_check(&p->quant[i], x, d[3], e)) return -1;
    if ((p->f.used & AC_FEAT_LAYOUTS) && ac_qspec_tgroup(&p->quant[i]) > 1)
      return ac_err_set(e, "%c: token groups of scales (tile:, channel:G) take dense cases only (a serving layout's "
                           "tokens belong to different sequences)", x);
    if ((p->f.used & AC_FEAT_LAYOUTS) && p->quant[i].store)
      return ac_err_set(e, "%c: quantize-on-store takes dense cases only", x);
    if (p->quant[i].store && p->dtype != AC_F32 && p->dtype != AC_F16 && p->dtype != AC_BF16)
      return ac_err_set(e, "%c: quantize-on-store takes f32, f16 and bf16 values (binary32 holds them), not %s", x,
                        ac_dtype_name(p->dtype));
    const int64_t *st = x == 'q' ? p->q_stride : x == 'k' ? p->k_stride : p->v_stride;
    if (st[0] || st[1] || st[2] || st[3]) {
      int64_t c[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
      if ((p->f.used & AC_FEAT_LAYOUTS) == 0 && memcmp(c, st, sizeof c) != 0)
        return ac_err_set(e, "%c: a quantized tensor takes no strided layout", x);
    }
  }
  if (p->f.used & (AC_FEAT_MIXED_DTYPES | AC_FEAT_DESCALE))
    return ac_err_set(e, "quantized tensors do not combine with %s (their scales are the descales)",
                      p->f.used & AC_FEAT_DESCALE ? "descales" : "per-tensor dtypes");
  return 0;
}
