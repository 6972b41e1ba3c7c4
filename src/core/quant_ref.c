/* quant_ref.c: the reference quantizers of the formats (docs/quantized.md "Quantizers"), so that
 * generated cases look like the caches engines write. The ggml formats follow ggml's reference
 * quantizers (quantize_row_*_ref in ggml-quants.c, the rules gguf-py's quants.py repeats): binary32
 * arithmetic, q8_0 rounding half away from zero, q4_0 and q5_0 truncating x/d + 8.5 (16.5), q4_1
 * and q5_1 truncating (x - min)/d + 0.5, iq4_nl ggml's search over 15 scales, mxfp4 ggml's nearest
 * e2m1 value under a power-of-two scale. fp8 and the int formats follow the usual min-max rules (vLLM's
 * scale = amax / largest code, PyTorch's asymmetric min-max observer); NVFP4 NVIDIA's two-level
 * rule (tensor scale amax / (6 * 448), e4m3 block scales). */
#include "config.h"
#include "quant.h"
#include <float.h>
#include <math.h>
#include <string.h>

static uint16_t f16(float x) { return ac_f16_from_f32(x); }

/* The first element of largest magnitude (ggml's loop keeps the first). */
static float signed_amax(const float *x, int64_t n)
{
  float amax = 0, max = 0;
  for (int64_t j = 0; j < n; j++)
    if (amax < fabsf(x[j])) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  return max;
}

static void minmax(const float *x, int64_t n, float *mn, float *mx)
{
  *mn = FLT_MAX;
  *mx = -FLT_MAX;
  for (int64_t j = 0; j < n; j++) {
    if (x[j] < *mn) *mn = x[j];
    if (x[j] > *mx) *mx = x[j];
  }
}

/* (int8_t)(v) of ggml for v >= 0: truncation; MIN(top, .). */
static uint8_t trunc_code(float v, int top)
{
  if (!(v >= 0)) return 0;
  float t = truncf(v);
  return t > (float)top ? (uint8_t)top : (uint8_t)t;
}

static void q8_0(const float *x, int64_t n, uint8_t *c, uint64_t *s)
{
  float amax = 0;
  for (int64_t j = 0; j < n; j++) amax = fmaxf(amax, fabsf(x[j]));
  const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
  *s = f16(d);
  for (int64_t j = 0; j < n; j++) {
    float v = x[j] * id;
    c[j] = (uint8_t)(int8_t)roundf(v);
  }
}

/* q4_0 (top 15, offset 8.5, divisor -8) and q5_0 (31, 16.5, -16). */
static void q_0(const float *x, int64_t n, uint8_t *c, uint64_t *s, int top, float off, float div)
{
  const float max = signed_amax(x, n), d = max / div, id = d != 0 ? 1.0f / d : 0.0f;
  *s = f16(d);
  for (int64_t j = 0; j < n; j++) {
    float v = x[j] * id;
    c[j] = trunc_code(v + off, top);
  }
}

/* q4_1 (top 15) and q5_1 (31): d = (max - min) / top, m = min. */
static void q_1(const float *x, int64_t n, uint8_t *c, uint64_t *s, uint64_t *a, int top)
{
  float mn, mx;
  minmax(x, n, &mn, &mx);
  const float d = (mx - mn) / (float)top, id = d != 0 ? 1.0f / d : 0.0f;
  *s = f16(d);
  *a = f16(mn);
  for (int64_t j = 0; j < n; j++) {
    float v = (x[j] - mn) * id;
    c[j] = trunc_code(v + 0.5f, top);
  }
}

/* ggml's best_index_int8: the nearest table entry (ties to the upper one). */
static int best_index(const int8_t *val, float x)
{
  if (x <= val[0]) return 0;
  if (x >= val[15]) return 15;
  int ml = 0, mu = 15;
  while (mu - ml > 1) {
    int mav = (ml + mu) / 2;
    if (x < val[mav]) mu = mav;
    else ml = mav;
  }
  return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

/* ggml's quantize_row_iq4_nl_impl for one block of 32 without importance weights (weights x^2,
 * ntry 7): the scale of the least weighted squared error among 15 tries, then every code again
 * against that binary32 scale (not its f16 rounding), as ggml does. A block below 1e-15 gets
 * scale 0 and the table entry nearest 0 (code 8). */
static void iq4_nl(const float *x, int64_t n, uint8_t *c, uint64_t *s)
{
  const int8_t *values = ac_iq4nl_table;
  float w[64], amax = 0, max = 0;
  for (int64_t j = 0; j < n; j++) {
    w[j] = x[j] * x[j];
    float ax = fabsf(x[j]);
    if (ax > amax) amax = ax, max = x[j];
  }
  if (amax < 1e-15f) {
    *s = f16(0.0f);
    for (int64_t j = 0; j < n; j++) c[j] = (uint8_t)best_index(values, 0.0f);
    return;
  }
  const int ntry = 7;
  float d = -max / values[0], id = 1 / d, sumqx = 0, sumq2 = 0;
  for (int64_t j = 0; j < n; j++) {
    float q = values[best_index(values, id * x[j])];
    sumqx += w[j] * q * x[j];
    sumq2 += w[j] * q * q;
  }
  d = sumqx / sumq2;
  float best = d * sumqx;
  for (int itry = -ntry; itry <= ntry; ++itry) {
    id = (float)(itry + values[0]) / max;
    sumqx = sumq2 = 0;
    for (int64_t j = 0; j < n; j++) {
      float q = values[best_index(values, id * x[j])];
      sumqx += w[j] * q * x[j];
      sumq2 += w[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  *s = f16(d);
  id = d != 0 ? 1 / d : 0;
  for (int64_t j = 0; j < n; j++) c[j] = (uint8_t)best_index(values, id * x[j]);
}

/* ggml's MXFP4: e = floor(log2(amax)) - 2 + 127, the nearest e2m1 value times 2^(e - 127) (the
 * first code of least error). */
static void mxfp4(const float *x, int64_t n, uint8_t *c, uint64_t *s)
{
  float amax = 0;
  for (int64_t j = 0; j < n; j++) amax = fmaxf(amax, fabsf(x[j]));
  int e = amax > 0 ? (int)floorf(log2f(amax)) - 2 + 127 : 0;
  if (e < 0) e = 0;
  if (e > 254) e = 254;
  *s = (uint64_t)e;
  const float d = ldexpf(1.0f, e - 127);
  for (int64_t j = 0; j < n; j++) {
    int bestc = 0;
    float beste = INFINITY;
    for (int k = 0; k < 16; k++) {
      float err = fabsf(d * (float)ac_e2m1_decode((uint8_t)k) - x[j]);
      if (err < beste) beste = err, bestc = k;
    }
    c[j] = (uint8_t)bestc;
  }
}

/* Ties to even at a quantum, saturating: the small float formats below binary32. */
static double round_small(double a, int emin, int mbits, double maxv)
{
  int e;
  frexp(a, &e);   /* a = f 2^e, f in [1/2, 1) */
  e -= 1;
  if (e < emin) e = emin;
  double q = ldexp(1.0, e - mbits), r = rint(a / q) * q;
  return r > maxv ? maxv : r;
}

uint8_t ac_e2m1_encode(double x)
{
  if (isnan(x)) return 0;
  double a = round_small(fabs(x), 0, 1, 6.0);
  uint8_t k = 0;
  for (uint8_t t = 0; t < 8; t++)
    if (ac_e2m1_decode(t) == a) k = t;
  return (uint8_t)(k | (signbit(x) && a != 0 ? 8 : 0));
}

uint8_t ac_e4m3fnuz_encode(double x)
{
  if (isnan(x)) return 0x80;
  double a = round_small(fabs(x), -7, 3, 240.0);
  if (a == 0) return 0;
  int e;
  double f = frexp(a, &e);   /* a = f 2^e */
  int be = e - 1 + 8;        /* biased exponent of a normal value */
  uint8_t code = be >= 1 ? (uint8_t)(be << 3 | ((int)ldexp(f, 4) - 8)) : (uint8_t)ldexp(a, 10);
  return (uint8_t)(code | (x < 0 ? 0x80 : 0));
}

static uint8_t fp8_encode(int fmt, double v)
{
  switch (fmt) {
  case AC_QF_E4M3FN: return ac_e4m3_from_f64(v, AC_E4M3_SATURATE);
  case AC_QF_E4M3FNUZ: return ac_e4m3fnuz_encode(v);
  default: return ac_e5m2_from_f64(fmax(-57344.0, fmin(57344.0, v)));
  }
}

/* fp8 codes of x / s, s = amax / the format's largest value in binary32 (1 when amax is 0). */
static void fp8(int fmt, const float *x, int64_t n, uint8_t *c, uint64_t *s)
{
  float amax = 0, top = fmt == AC_QF_E4M3FN ? 448.0f : fmt == AC_QF_E4M3FNUZ ? 240.0f : 57344.0f;
  for (int64_t j = 0; j < n; j++) amax = fmaxf(amax, fabsf(x[j]));
  float sc = amax / top;
  if (!(sc > 0) || !isfinite(sc)) sc = 1.0f;
  uint32_t b;
  memcpy(&b, &sc, 4);
  *s = b;
  for (int64_t j = 0; j < n; j++) c[j] = fp8_encode(fmt, (double)(x[j] / sc));
}

/* Asymmetric min-max (PyTorch's observer): the range [min(x, 0), max(x, 0)] onto the codes
 * [qmin, qmax], zero point z = qmin - rint(lo / s), code = clamp(rint(x / s) + z). */
static void intq(int fmt, const float *x, int64_t n, uint8_t *c, uint64_t *s, uint64_t *a)
{
  const int qmin = fmt == AC_QF_INT8 ? -128 : 0, qmax = fmt == AC_QF_INT8 ? 127 : ac_qfmt_get(fmt)->code_max;
  float lo, hi;
  minmax(x, n, &lo, &hi);
  lo = fminf(lo, 0.0f);
  hi = fmaxf(hi, 0.0f);
  float sc = (hi - lo) / (float)(qmax - qmin);
  if (!(sc > 0) || !isfinite(sc)) sc = 1.0f;
  float zf = (float)qmin - rintf(lo / sc);
  int z = zf < (float)qmin ? qmin : zf > (float)qmax ? qmax : (int)zf;
  uint32_t b;
  memcpy(&b, &sc, 4);
  *s = b;
  *a = (uint64_t)((unsigned)z & 0xffu);
  for (int64_t j = 0; j < n; j++) {
    float v = rintf(x[j] / sc) + (float)z;
    int q = v < (float)qmin ? qmin : v > (float)qmax ? qmax : (int)v;
    c[j] = (uint8_t)((unsigned)q & 0xffu);
  }
}

float ac_qref_nvfp4_tscale(const float *x, int64_t n)
{
  float amax = 0;
  for (int64_t j = 0; j < n; j++) amax = fmaxf(amax, fabsf(x[j]));
  float t = amax / (6.0f * 448.0f);
  return t > 0 && isfinite(t) ? t : 1.0f;
}

/* NVFP4: block scale e4m3(amax / (6 t)), codes e2m1(x / (s t)). */
static void nvfp4(const float *x, int64_t n, uint8_t *c, uint64_t *s, float t)
{
  float amax = 0;
  for (int64_t j = 0; j < n; j++) amax = fmaxf(amax, fabsf(x[j]));
  uint8_t sb = ac_e4m3_from_f64((double)(amax / (6.0f * t)), AC_E4M3_SATURATE);
  *s = sb;
  double st = ac_decode(AC_E4M3, sb) * (double)t;
  for (int64_t j = 0; j < n; j++) c[j] = st > 0 ? ac_e2m1_encode((double)x[j] / st) : 0;
}

void ac_qref_group(int fmt, const float *x, int64_t n, uint8_t *codes, uint64_t *scale, uint64_t *aux, float tscale)
{
  *aux = 0;
  switch (fmt) {
  case AC_QF_Q8_0: q8_0(x, n, codes, scale); break;
  case AC_QF_Q4_0: q_0(x, n, codes, scale, 15, 8.5f, -8.0f); break;
  case AC_QF_Q5_0: q_0(x, n, codes, scale, 31, 16.5f, -16.0f); break;
  case AC_QF_Q4_1: q_1(x, n, codes, scale, aux, 15); break;
  case AC_QF_Q5_1: q_1(x, n, codes, scale, aux, 31); break;
  case AC_QF_IQ4_NL: iq4_nl(x, n, codes, scale); break;
  case AC_QF_MXFP4: mxfp4(x, n, codes, scale); break;
  case AC_QF_E4M3FN:
  case AC_QF_E4M3FNUZ:
  case AC_QF_E5M2: fp8(fmt, x, n, codes, scale); break;
  case AC_QF_INT8:
  case AC_QF_INT4:
  case AC_QF_INT2:
  case AC_QF_UINT8: intq(fmt, x, n, codes, scale, aux); break;
  case AC_QF_NVFP4: nvfp4(x, n, codes, scale, tscale); break;
  default: memset(codes, 0, (size_t)n), *scale = 0; break;
  }
}
