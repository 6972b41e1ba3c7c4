/* dtype.c: element formats, exact decoders and one-step round-to-nearest-even encoders.
 *
 * Every encoder works on the bit pattern of a binary64 value with integer arithmetic
 * (a binary32 input widens to binary64 exactly first), so the result never depends on
 * the floating-point environment and is rounded exactly once. */
#include "config.h"
#include "dtype.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const ac_dtype_info infos[AC_NDTYPES] = {
  [AC_F64] = {"f64", "<f8", 8, 53, -1073, 1024, -1022, DBL_MAX, 0x1p-53},
  [AC_F32] = {"f32", "<f4", 4, 24, -148, 128, -126, FLT_MAX, 0x1p-24},
  [AC_F16] = {"f16", "<f2", 2, 11, -23, 16, -14, 65504.0, 0x1p-11},
  [AC_BF16] = {"bf16", "<u2", 2, 8, -132, 128, -126, 0x1.fep127, 0x1p-8},
  [AC_E4M3] = {"e4m3", "|u1", 1, 4, -8, 9, -6, 448.0, 0x1p-4},
  [AC_E5M2] = {"e5m2", "|u1", 1, 3, -15, 16, -14, 57344.0, 0x1p-3},
};

/* Bit layout of the formats narrower than binary64. */
typedef struct {
  int nbits;      /* total bits */
  int m;          /* stored mantissa bits */
  int bias;       /* exponent bias */
  int expbits;    /* exponent field width */
  int e4m3;       /* 1: no infinity, NaN only at S.1111.111, max finite 0x7e */
} layout;

static const layout layouts[AC_NDTYPES] = {
  [AC_F64] = {64, 52, 1023, 11, 0},
  [AC_F32] = {32, 23, 127, 8, 0},
  [AC_F16] = {16, 10, 15, 5, 0},
  [AC_BF16] = {16, 7, 127, 8, 0},
  [AC_E4M3] = {8, 3, 7, 4, 1},
  [AC_E5M2] = {8, 2, 15, 5, 0},
};

static int valid(ac_dtype t) { return (int)t >= 0 && t < AC_NDTYPES; }

const ac_dtype_info *ac_dtype_get(ac_dtype t) { return valid(t) ? &infos[t] : NULL; }

const char *ac_dtype_name(ac_dtype t) { return valid(t) ? infos[t].name : "?"; }

size_t ac_dtype_size(ac_dtype t) { return valid(t) ? (size_t)infos[t].bytes : 0; }

int ac_dtype_within(ac_dtype narrow, ac_dtype wide)
{
  if (!valid(narrow) || !valid(wide)) return 0;
  const ac_dtype_info *n = &infos[narrow], *w = &infos[wide];
  return n->prec <= w->prec && n->max_finite <= w->max_finite &&
         n->ieee_emin - n->prec >= w->ieee_emin - w->prec;   /* smallest subnormal 2^(emin - prec + 1) */
}

int ac_dtype_parse(const char *s, ac_dtype *out)
{
  static const struct { const char *name; ac_dtype t; } names[] = {
    {"f64", AC_F64}, {"fp64", AC_F64}, {"float64", AC_F64}, {"double", AC_F64},
    {"f32", AC_F32}, {"fp32", AC_F32}, {"float32", AC_F32}, {"float", AC_F32},
    {"f16", AC_F16}, {"fp16", AC_F16}, {"float16", AC_F16}, {"half", AC_F16},
    {"bf16", AC_BF16}, {"bfloat16", AC_BF16},
    {"e4m3", AC_E4M3}, {"fp8e4m3", AC_E4M3}, {"fp8_e4m3", AC_E4M3}, {"fp8-e4m3", AC_E4M3},
    {"e4m3fn", AC_E4M3}, {"float8_e4m3fn", AC_E4M3}, {"float8_e4m3", AC_E4M3},
    {"e5m2", AC_E5M2}, {"fp8e5m2", AC_E5M2}, {"fp8_e5m2", AC_E5M2}, {"fp8-e5m2", AC_E5M2},
    {"float8_e5m2", AC_E5M2},
  };
  if (!s) return -1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(s, names[i].name) == 0) {
      *out = names[i].t;
      return 0;
    }
  return -1;
}

int ac_dtype_parse_list(const char *s, uint32_t *mask, char *bad, size_t n)
{
  *mask = 0;
  if (n) bad[0] = 0;
  for (const char *t = s; t && *t;) {
    const char *end = strchr(t, ',');
    size_t l = end ? (size_t)(end - t) : strlen(t);
    char name[32];
    ac_dtype d;
    snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), t);
    if (l && (l >= sizeof name || ac_dtype_parse(name, &d))) {
      if (n) snprintf(bad, n, "%.*s", (int)l, t);
      return -1;
    }
    if (l) *mask |= 1u << d;
    t = end ? end + 1 : NULL;
  }
  return *mask ? 0 : -1;
}

static uint64_t f64_bits(double x)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static double bits_f64(uint64_t u)
{
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static float bits_f32(uint32_t u)
{
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Round the binary64 value with bit pattern u into layout L (not binary64), nearest-even.
 * Inlined so that each format's constants fold. */
static inline __attribute__((always_inline)) uint64_t round_bits(const layout *L, uint64_t u, ac_e4m3_overflow ov)
{
  const uint64_t sign = (u >> 63) << (L->nbits - 1);
  const uint64_t a = u & 0x7fffffffffffffffULL;
  const uint64_t expmask = ((1ULL << L->expbits) - 1) << L->m;  /* inf for IEEE-like layouts */
  const uint64_t maxfin = L->e4m3 ? 0x7e : expmask - 1;

  /* Special values first: NaN (sign kept, quiet, top payload bits kept), infinity, zero. */
  if (a > 0x7ff0000000000000ULL) {
    if (L->e4m3) return sign | 0x7f;
    uint64_t payload = (a & 0x000fffffffffffffULL) >> (52 - L->m);
    return sign | expmask | (1ULL << (L->m - 1)) | payload;
  }
  if (a == 0x7ff0000000000000ULL) {
    if (L->e4m3) return sign | (ov == AC_E4M3_NAN ? 0x7f : maxfin);
    return sign | expmask;
  }
  if (a == 0) return sign;

  /* |x| = sig * 2^(e - 52) with e the exponent of the leading bit (or -1022 for subnormals). */
  int ex = (int)(a >> 52);
  uint64_t sig = a & 0x000fffffffffffffULL;
  int e;
  if (ex == 0) {
    e = -1022;
  } else {
    e = ex - 1023;
    sig |= 1ULL << 52;
  }
  const int emin = 1 - L->bias;
  const int eq = e > emin ? e : emin;        /* exponent that fixes the quantum */
  const int shift = eq - L->m - (e - 52);    /* low bits of sig below the quantum, >= 52 - m */
  uint64_t r;
  if (shift >= 64) {
    r = 0;                                    /* below half of the smallest subnormal */
  } else {
    r = sig >> shift;
    const uint64_t rem = sig & ((1ULL << shift) - 1);
    const uint64_t half = 1ULL << (shift - 1);
    r += (uint64_t)(rem > half) | ((uint64_t)(rem == half) & r & 1);
  }
  /* r is the magnitude in quanta 2^(eq - m); biased exponent eq + bias >= 1 absorbs the
   * hidden bit, and a carry out of the mantissa moves into the exponent field. */
  const uint64_t enc = ((uint64_t)(eq + L->bias - 1) << L->m) + r;
  if (enc > maxfin) {
    if (L->e4m3) return sign | (ov == AC_E4M3_NAN ? 0x7f : maxfin);
    return sign | expmask;
  }
  return sign | enc;
}

uint16_t ac_f16_from_f64(double x) { return (uint16_t)round_bits(&layouts[AC_F16], f64_bits(x), AC_E4M3_SATURATE); }
uint16_t ac_bf16_from_f64(double x) { return (uint16_t)round_bits(&layouts[AC_BF16], f64_bits(x), AC_E4M3_SATURATE); }
/* binary32 inputs: the common cases round on the binary32 bit pattern directly (rebias, add
 * half a quantum minus one plus the kept lsb, truncate: nearest-even, carries reach the exponent);
 * the rest takes the exact binary64 path, binary32 -> binary64 being exact. */
uint16_t ac_f16_from_f32(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x38800000u && a < 0x477ff000u)   /* result normal: [2^-14, 65520) */
    return (uint16_t)(((u >> 16) & 0x8000u) | ((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13));
  if (a <= 0x33000000u) return (uint16_t)((u >> 16) & 0x8000u);             /* <= 2^-25: ties to +-0 */
  if (a >= 0x477ff000u && a <= 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7c00u);  /* inf */
  return ac_f16_from_f64((double)x);
}

uint16_t ac_bf16_from_f32(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) <= 0x7f800000u)     /* not NaN: same exponent field, subnormals and inf included */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  return ac_bf16_from_f64((double)x);
}
uint8_t ac_e4m3_from_f64(double x, ac_e4m3_overflow ov) { return (uint8_t)round_bits(&layouts[AC_E4M3], f64_bits(x), ov); }
uint8_t ac_e5m2_from_f64(double x) { return (uint8_t)round_bits(&layouts[AC_E5M2], f64_bits(x), AC_E4M3_SATURATE); }

uint64_t ac_encode_f64_ov(ac_dtype t, double x, ac_e4m3_overflow ov)
{
  if (t == AC_F64) return f64_bits(x);
  switch (t) {
  case AC_F32: return round_bits(&layouts[AC_F32], f64_bits(x), ov);
  case AC_F16: return ac_f16_from_f64(x);
  case AC_BF16: return ac_bf16_from_f64(x);
  case AC_E4M3: return ac_e4m3_from_f64(x, ov);
  case AC_E5M2: return ac_e5m2_from_f64(x);
  default: return 0;
  }
}

uint64_t ac_encode_f64(ac_dtype t, double x) { return ac_encode_f64_ov(t, x, AC_E4M3_SATURATE); }

float ac_f16_to_f32(uint16_t h)
{
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  const uint32_t ex = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (ex == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));   /* inf, NaN with payload */
  if (ex == 0) {
    float v = (float)man * 0x1p-24f;                                     /* exact: man < 2^10 */
    return sign ? -v : v;
  }
  return bits_f32(sign | ((ex + 112) << 23) | (man << 13));
}

float ac_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

double ac_decode(ac_dtype t, uint64_t bits)
{
  switch (t) {
  case AC_F64: return bits_f64(bits);
  case AC_F32: return (double)bits_f32((uint32_t)bits);
  case AC_F16: return (double)ac_f16_to_f32((uint16_t)bits);
  case AC_BF16: return (double)ac_bf16_to_f32((uint16_t)bits);
  case AC_E4M3:
  case AC_E5M2: {
    const layout *L = &layouts[t];
    const int neg = (bits >> 7) & 1;
    const unsigned ex = (unsigned)(bits >> L->m) & ((1u << L->expbits) - 1);
    const unsigned man = (unsigned)bits & ((1u << L->m) - 1);
    const unsigned exmax = (1u << L->expbits) - 1;
    double v;
    if (L->e4m3 && ex == exmax && man == (1u << L->m) - 1) v = NAN;
    else if (!L->e4m3 && ex == exmax) v = man ? NAN : INFINITY;
    else if (ex == 0) v = ldexp((double)man, 1 - L->bias - L->m);
    else v = ldexp((double)((1u << L->m) | man), (int)ex - L->bias - L->m);
    return neg ? -v : v;
  }
  default: return NAN;
  }
}

uint64_t ac_load_bits(ac_dtype t, const void *base, size_t i)
{
  switch (ac_dtype_size(t)) {
  case 8: { uint64_t v; memcpy(&v, (const char *)base + 8 * i, 8); return v; }
  case 4: { uint32_t v; memcpy(&v, (const char *)base + 4 * i, 4); return v; }
  case 2: { uint16_t v; memcpy(&v, (const char *)base + 2 * i, 2); return v; }
  case 1: return ((const uint8_t *)base)[i];
  default: return 0;
  }
}

void ac_store_bits(ac_dtype t, void *base, size_t i, uint64_t bits)
{
  switch (ac_dtype_size(t)) {
  case 8: { uint64_t v = bits; memcpy((char *)base + 8 * i, &v, 8); break; }
  case 4: { uint32_t v = (uint32_t)bits; memcpy((char *)base + 4 * i, &v, 4); break; }
  case 2: { uint16_t v = (uint16_t)bits; memcpy((char *)base + 2 * i, &v, 2); break; }
  case 1: ((uint8_t *)base)[i] = (uint8_t)bits; break;
  default: break;
  }
}

static uint64_t exp_field(ac_dtype t, uint64_t bits)
{
  const layout *L = &layouts[t];
  return (bits >> L->m) & ((1ULL << L->expbits) - 1);
}

static uint64_t man_field(ac_dtype t, uint64_t bits) { return bits & ((1ULL << layouts[t].m) - 1); }

int ac_bits_isnan(ac_dtype t, uint64_t bits)
{
  if (!valid(t)) return 0;
  const layout *L = &layouts[t];
  uint64_t exmax = (1ULL << L->expbits) - 1;
  if (L->e4m3) return (bits & 0x7f) == 0x7f;
  return exp_field(t, bits) == exmax && man_field(t, bits) != 0;
}

int ac_bits_isinf(ac_dtype t, uint64_t bits)
{
  if (!valid(t) || layouts[t].e4m3) return 0;
  uint64_t exmax = (1ULL << layouts[t].expbits) - 1;
  return exp_field(t, bits) == exmax && man_field(t, bits) == 0;
}

int ac_bits_issubnormal(ac_dtype t, uint64_t bits)
{
  if (!valid(t)) return 0;
  return exp_field(t, bits) == 0 && man_field(t, bits) != 0;
}

int ac_bits_iszero(ac_dtype t, uint64_t bits)
{
  if (!valid(t)) return 0;
  return exp_field(t, bits) == 0 && man_field(t, bits) == 0;
}

double ac_ulp(ac_dtype t, double x)
{
  if (!valid(t) || isnan(x)) return NAN;
  if (isinf(x)) return INFINITY;
  const ac_dtype_info *d = &infos[t];
  int e = d->ieee_emin;
  if (x != 0) {
    int k;
    frexp(x, &k);           /* |x| = f * 2^k, f in [1/2, 1) */
    if (k - 1 > e) e = k - 1;
  }
  return ldexp(1.0, e - d->prec + 1);
}

const char *ac_bits_hex(ac_dtype t, uint64_t bits, char *buf, size_t n)
{
  int digits = valid(t) ? 2 * infos[t].bytes : 16;
  snprintf(buf, n, "0x%0*llx", digits, (unsigned long long)bits);
  return buf;
}
