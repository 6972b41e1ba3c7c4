/* quant.c: the quantized formats (quant.h): their table, names, exact values and geometry. */
#include "config.h"
#include "quant.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define G(x) (1u << (x))
#define NONBLOCK (G(AC_QG_TENSOR) | G(AC_QG_HEAD) | G(AC_QG_TOKEN) | G(AC_QG_CHANNEL))

static const ac_qfmt_info infos[AC_QF_N] = {
  [AC_QF_Q8_0] = {"q8_0", "ggml", 1, 255, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 34},
  [AC_QF_Q4_0] = {"q4_0", "ggml", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 18},
  [AC_QF_Q4_1] = {"q4_1", "ggml", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_MIN, 20},
  [AC_QF_Q5_0] = {"q5_0", "ggml", 0, 31, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 22},
  [AC_QF_Q5_1] = {"q5_1", "ggml", 0, 31, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_MIN, 24},
  [AC_QF_IQ4_NL] = {"iq4_nl", "ggml", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_F16, AC_QAUX_NONE, 18},
  [AC_QF_E4M3FN] = {"e4m3fn", "fp8", 0, 255, 0, NONBLOCK, AC_QG_TENSOR, AC_QSD_F32, AC_QAUX_NONE, 0},
  [AC_QF_E4M3FNUZ] = {"e4m3fnuz", "fp8", 0, 255, 0, NONBLOCK, AC_QG_TENSOR, AC_QSD_F32, AC_QAUX_NONE, 0},
  [AC_QF_E5M2] = {"e5m2", "fp8", 0, 255, 0, NONBLOCK, AC_QG_TENSOR, AC_QSD_F32, AC_QAUX_NONE, 0},
  [AC_QF_INT8] = {"int8", "int", 1, 255, 0, NONBLOCK, AC_QG_TOKEN, AC_QSD_F32, AC_QAUX_ZERO, 0},
  [AC_QF_INT4] = {"int4", "int", 0, 15, 0, NONBLOCK, AC_QG_TOKEN, AC_QSD_F32, AC_QAUX_ZERO, 0},
  [AC_QF_NVFP4] = {"nvfp4", "fp4", 0, 15, 16, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_E4M3, AC_QAUX_TSCALE, 0},
  [AC_QF_MXFP4] = {"mxfp4", "fp4", 0, 15, 32, G(AC_QG_BLOCK), AC_QG_BLOCK, AC_QSD_E8M0, AC_QAUX_NONE, 17},
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
  static const char *const n[] = {"f16", "f32", "e4m3", "e8m0"};
  return (unsigned)t < 4 ? n[t] : "?";
}

const char *ac_qsdtype_npy(ac_qsdtype t)
{
  static const char *const n[] = {"<f2", "<f4", "|u1", "|u1"};
  return (unsigned)t < 4 ? n[t] : "?";
}

size_t ac_qsdtype_size(ac_qsdtype t) { return t == AC_QSD_F16 ? 2 : t == AC_QSD_F32 ? 4 : 1; }

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

int ac_qspec_parse(const char *s, ac_qspec *q, ac_err *e)
{
  char name[64];
  const char *colon = strchr(s, ':');
  size_t l = colon ? (size_t)(colon - s) : strlen(s);
  snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), s);
  memset(q, 0, sizeof *q);
  int fmt, gran;
  if (l >= sizeof name || ac_qfmt_parse(name, &fmt))
    return ac_err_set(e, "unknown quantized format '%.40s' (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, e4m3fn, e4m3fnuz, "
                         "e5m2, int8, int4, nvfp4, mxfp4)", name);
  const ac_qfmt_info *f = &infos[fmt];
  gran = (int)f->gran;
  if (colon && ac_qgran_parse(colon + 1, &gran))
    return ac_err_set(e, "unknown granularity '%.40s' (block, tensor, head, token, channel)", colon + 1);
  if (!(f->grans >> gran & 1u)) {
    char ok[96] = "";
    for (int g = 0; g < AC_QG_N; g++)
      if (f->grans >> g & 1u) snprintf(ok + strlen(ok), sizeof ok - strlen(ok), "%s%s", ok[0] ? ", " : "", gran_names[g]);
    return ac_err_set(e, "%s takes no %s granularity (it takes %s)", f->name, gran_names[gran], ok);
  }
  q->fmt = fmt;
  q->gran = gran;
  q->block = gran == AC_QG_BLOCK ? f->block : 0;
  return 0;
}

const char *ac_qspec_str(const ac_qspec *q, char *buf, size_t n)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) snprintf(buf, n, "%s", ac_qfmt_name(q->fmt));
  else if (q->gran == (int)f->gran) snprintf(buf, n, "%s", f->name);
  else snprintf(buf, n, "%s:%s", f->name, ac_qgran_name(q->gran));
  return buf;
}

int ac_qspec_check(const ac_qspec *q, char tensor, int64_t d, ac_err *e)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) return ac_err_set(e, "%c: unknown quantized format %d", tensor, (int)q->fmt);
  if (q->gran < 0 || q->gran >= AC_QG_N || !(f->grans >> q->gran & 1u))
    return ac_err_set(e, "%c: %s takes no %s granularity", tensor, f->name, ac_qgran_name(q->gran));
  int64_t want = q->gran == AC_QG_BLOCK ? f->block : 0;
  if (q->block != want)
    return ac_err_set(e, "%c: %s's block is %lld elements, not %lld", tensor, f->name, (long long)want, (long long)q->block);
  if (want && d % want != 0)
    return ac_err_set(e, "%c: d%c %lld is not a multiple of %s's block of %lld (the format defines no padding)", tensor,
                      tensor == 'v' ? 'v' : 'k', (long long)d, f->name, (long long)want);
  return 0;
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
  }
  return NAN;
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
  case AC_QF_INT4: return (double)code;
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
  case AC_QF_INT4: return (q - a) * s;
  case AC_QF_NVFP4: return q * s * a;
  default: return q * s;
  }
}

/* ---- geometry -------------------------------------------------------------------------- */

int64_t ac_qscale_count(const ac_qspec *q, const int64_t d[4])
{
  switch (q->gran) {
  case AC_QG_BLOCK: return q->block > 0 ? d[0] * d[1] * d[2] * (d[3] / q->block) : 0;
  case AC_QG_TENSOR: return 1;
  case AC_QG_HEAD: return d[0] * d[1];
  case AC_QG_TOKEN: return d[0] * d[1] * d[2];
  case AC_QG_CHANNEL: return d[0] * d[1] * d[3];
  default: return 0;
  }
}

void ac_qscale_shape(const ac_qspec *q, const int64_t d[4], int64_t s[4], int *ndim)
{
  memset(s, 0, 4 * sizeof *s);
  switch (q->gran) {
  case AC_QG_BLOCK: s[0] = d[0], s[1] = d[1], s[2] = d[2], s[3] = q->block > 0 ? d[3] / q->block : 0, *ndim = 4; break;
  case AC_QG_HEAD: s[0] = d[0], s[1] = d[1], *ndim = 2; break;
  case AC_QG_TOKEN: s[0] = d[0], s[1] = d[1], s[2] = d[2], *ndim = 3; break;
  case AC_QG_CHANNEL: s[0] = d[0], s[1] = d[1], s[2] = d[3], *ndim = 3; break;
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
    double s = (double)ac_qscale_count(&p->quant[i], d) * (double)ac_qsdtype_size(f->sdtype);
    double a = f->aux == AC_QAUX_TSCALE ? 4.0 : f->aux ? s : 0.0;
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
