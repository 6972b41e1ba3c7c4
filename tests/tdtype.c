/* tdtype: format table, names, exact decoders (every pattern read by MPFR field by field),
 * binary64 -> every format against MPFR (10^6 values aimed at bands, subnormals, halfway
 * cases, overflow and underflow edges), the MPFR encoder, classification, ulps, NaN codes. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include "dtype.h"
#include "dtype_mpfr.h"
#include "problem.h"
#include "rng.h"
#include "util.h"
#include "tdtype_ref.h"
#include "testutil.h"

static const ac_dtype ALL[REF_N] = {AC_F64, AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};

static double f64_of(uint64_t u)
{
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static uint64_t bits_of(double d)
{
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

START_TEST(table_matches_format_definitions)
{
  for (int f = 0; f < REF_N; f++) {
    const ac_dtype_info *d = ac_dtype_get(ALL[f]);
    const ref_fmt *F = &ref_fmts[f];
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->name, F->name);
    ck_assert_int_eq(d->bytes * 8, F->nbits);
    ck_assert_int_eq(d->prec, F->prec);
    ck_assert_int_eq(d->mpfr_emin, F->emin);
    ck_assert_int_eq(d->mpfr_emax, F->emax);
    ck_assert_int_eq(d->ieee_emin, 1 - F->bias);
    ck_assert(d->u == ldexp(1.0, -F->prec));
    ck_assert_int_eq((int)ac_dtype_size(ALL[f]), F->nbits / 8);
    /* max_finite: the largest code that is neither inf nor NaN, read by MPFR */
    uint64_t top = F->e4m3 ? 0x7e : ((((1ULL << F->expbits) - 1) << F->m) - 1);
    MPFR_DECL_INIT(x, 64);
    ck_assert_int_eq(ref_read_bits(x, f, top, NULL), REF_FINITE);
    REF_REQUIRE(mpfr_cmp_d(x, d->max_finite) == 0, "%s max_finite %a", F->name, d->max_finite);
  }
  ck_assert_ptr_null(ac_dtype_get(AC_NDTYPES));
  ck_assert_str_eq(ac_dtype_get(AC_F16)->npy, "<f2");
  ck_assert_str_eq(ac_dtype_get(AC_BF16)->npy, "<u2");
}
END_TEST

START_TEST(names_parse_and_print)
{
  static const struct { const char *s; ac_dtype t; } ok[] = {
    {"f64", AC_F64}, {"fp64", AC_F64}, {"float64", AC_F64}, {"double", AC_F64}, {"f32", AC_F32},
    {"FP32", AC_F32}, {"float32", AC_F32}, {"f16", AC_F16}, {"half", AC_F16}, {"float16", AC_F16},
    {"bf16", AC_BF16}, {"bfloat16", AC_BF16}, {"e4m3", AC_E4M3}, {"fp8e4m3", AC_E4M3},
    {"float8_e4m3fn", AC_E4M3}, {"e5m2", AC_E5M2}, {"fp8_e5m2", AC_E5M2},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    ac_dtype t = AC_NDTYPES;
    REF_REQUIRE(ac_dtype_parse(ok[i].s, &t) == 0 && t == ok[i].t, "parse %s", ok[i].s);
  }
  for (int f = 0; f < REF_N; f++) {
    ac_dtype t;
    ck_assert_int_eq(ac_dtype_parse(ac_dtype_name(ALL[f]), &t), 0);
    ck_assert_int_eq(t, ALL[f]);
  }
  ac_dtype t;
  ck_assert_int_eq(ac_dtype_parse("f8", &t), -1);
  ck_assert_int_eq(ac_dtype_parse("", &t), -1);
  ck_assert_int_eq(ac_dtype_parse(NULL, &t), -1);
  char buf[32];
  ck_assert_str_eq(ac_bits_hex(AC_F16, 0x3c00, buf, sizeof buf), "0x3c00");
  ck_assert_str_eq(ac_bits_hex(AC_E4M3, 0x7, buf, sizeof buf), "0x07");
  ck_assert_str_eq(ac_bits_hex(AC_F32, 0x3f800000, buf, sizeof buf), "0x3f800000");
}
END_TEST

/* Every f16/bf16/e4m3/e5m2 pattern: decode equals MPFR's field-by-field reading; classification
 * agrees; the MPFR decoder agrees; re-encoding a non-NaN value gives the same pattern back. */
START_TEST(every_pattern_decodes_exactly)
{
  MPFR_DECL_INIT(want, 64);
  MPFR_DECL_INIT(got, 64);
  for (int f = REF_F16; f < REF_N; f++) {
    const ac_dtype t = ALL[f];
    const uint64_t n = 1ULL << ref_fmts[f].nbits;
    for (uint64_t b = 0; b < n; b++) {
      int quiet;
      const int kind = ref_read_bits(want, f, b, &quiet);
      const double d = ac_decode(t, b);
      const int neg = (int)(b >> (ref_fmts[f].nbits - 1));
      REF_REQUIRE(ac_bits_isnan(t, b) == (kind == REF_NAN), "%s 0x%llx isnan", ref_fmts[f].name, (unsigned long long)b);
      REF_REQUIRE(ac_bits_isinf(t, b) == (kind == REF_INF), "%s 0x%llx isinf", ref_fmts[f].name, (unsigned long long)b);
      if (kind == REF_NAN) {
        REF_REQUIRE(isnan(d) && (signbit(d) != 0) == neg, "%s 0x%llx: %a", ref_fmts[f].name, (unsigned long long)b, d);
        continue;
      }
      REF_REQUIRE(mpfr_cmp_d(want, d) == 0 && (signbit(d) != 0) == neg, "%s 0x%llx decodes to %a",
                    ref_fmts[f].name, (unsigned long long)b, d);
      ac_decode_mpfr(got, t, b);
      REF_REQUIRE(mpfr_equal_p(got, want) && mpfr_signbit(got) == mpfr_signbit(want), "%s 0x%llx mpfr decode",
                    ref_fmts[f].name, (unsigned long long)b);
      REF_REQUIRE(ac_bits_iszero(t, b) == (d == 0), "%s 0x%llx iszero", ref_fmts[f].name, (unsigned long long)b);
      const int sub = d != 0 && fabs(d) < ldexp(1.0, 1 - ref_fmts[f].bias);
      REF_REQUIRE(ac_bits_issubnormal(t, b) == sub, "%s 0x%llx issubnormal", ref_fmts[f].name, (unsigned long long)b);
      uint64_t back = ac_encode_f64_ov(t, d, AC_E4M3_NAN);
      REF_REQUIRE(back == b, "%s 0x%llx re-encodes to 0x%llx", ref_fmts[f].name, (unsigned long long)b,
                    (unsigned long long)back);
      back = ac_encode_mpfr(t, want, AC_E4M3_NAN);
      REF_REQUIRE(back == b, "%s 0x%llx MPFR re-encodes to 0x%llx", ref_fmts[f].name, (unsigned long long)b,
                    (unsigned long long)back);
    }
  }
  /* the binary32 helpers agree with the generic decoder */
  for (uint32_t b = 0; b < 65536; b++) {
    float a = ac_f16_to_f32((uint16_t)b), c = ac_bf16_to_f32((uint16_t)b);
    double da = ac_decode(AC_F16, b), dc = ac_decode(AC_BF16, b);
    REF_REQUIRE((isnan(a) && isnan(da)) || (bits_of((double)a) == bits_of(da)), "f16 0x%04x", b);
    REF_REQUIRE((isnan(c) && isnan(dc)) || (bits_of((double)c) == bits_of(dc)), "bf16 0x%04x", b);
  }
}
END_TEST

/* A value of format f: random finite pattern decoded by MPFR (as a double). */
static double random_format_value(ac_rng *g, int f, uint64_t *code)
{
  MPFR_DECL_INIT(x, 64);
  for (;;) {
    uint64_t b = ac_rng_next(g) & ((ref_fmts[f].nbits == 64 ? 0 : (1ULL << ref_fmts[f].nbits)) - 1);
    if (ref_read_bits(x, f, b, NULL) == REF_FINITE) {
      *code = b;
      return mpfr_get_d(x, MPFR_RNDN);
    }
  }
}

/* 10^6 binary64 inputs of many kinds. */
static double random_input(ac_rng *g)
{
  const int f = (int)ac_rng_below(g, REF_N - 1) + 1;   /* a narrow format to aim at */
  const ref_fmt *F = &ref_fmts[f];
  const double sign = (ac_rng_next(g) & 1) ? -1.0 : 1.0;
  uint64_t code;
  switch (ac_rng_below(g, 10)) {
  case 0: return f64_of(ac_rng_next(g));                                       /* any pattern */
  case 1: {                                                                     /* any band */
    uint64_t e = ac_rng_below(g, 2047);
    return f64_of((ac_rng_next(g) & 0x800fffffffffffffULL) | (e << 52));
  }
  case 2: return f64_of(ac_rng_next(g) & 0x800fffffffffffffULL);              /* binary64 subnormal */
  case 3: {                                                                     /* the format's range +- 4 binades */
    long e = (long)ac_rng_range(g, F->emin - 5, F->emax + 4);
    return sign * ldexp(1.0 + ac_rng_uniform(g), (int)e);
  }
  case 4: case 5: {                                                             /* halfway, maybe nudged */
    double a = random_format_value(g, f, &code);
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    mpfr_set_d(x, a, MPFR_RNDN);
    uint64_t up = (code & ((1ULL << (F->nbits - 1)) - 1)) + 1;   /* next code away from zero */
    if (ref_read_bits(y, f, up | (code & (1ULL << (F->nbits - 1))), NULL) != REF_FINITE || (F->e4m3 && (up & 0x7f) == 0x7f))
      mpfr_set_ui_2exp(y, 1, F->emax, MPFR_RNDN), mpfr_setsign(y, y, mpfr_signbit(x), MPFR_RNDN);
    mpfr_add(x, x, y, MPFR_RNDN);
    mpfr_div_2ui(x, x, 1, MPFR_RNDN);
    double m = mpfr_get_d(x, MPFR_RNDN);
    switch (ac_rng_below(g, 4)) {
    case 0: return nextafter(m, INFINITY);
    case 1: return nextafter(m, -INFINITY);
    default: return m;
    }
  }
  case 6: {                                                                     /* overflow edge */
    double mx = ldexp(1.0, F->emax) * (1 - ldexp(1.0, -F->prec));             /* largest finite */
    if (F->e4m3) mx = 448;
    double hulp = ldexp(1.0, F->emax - F->prec - 1);                           /* half an ulp there */
    double pts[] = {mx, mx + hulp, mx + 2 * hulp, mx + 3 * hulp, ldexp(1.0, F->emax), 464, 480, 496};
    double p = pts[ac_rng_below(g, F->e4m3 ? 8 : 5)];
    int k = (int)ac_rng_range(g, -3, 3);
    for (; k > 0; k--) p = nextafter(p, INFINITY);
    for (; k < 0; k++) p = nextafter(p, 0);
    return sign * p;
  }
  case 7: {                                                                     /* underflow edge */
    double tiny = ldexp(1.0, F->emin - 1);                                      /* smallest subnormal */
    double p = tiny * (double)ac_rng_range(g, 0, 8) / 2;
    int k = (int)ac_rng_range(g, -2, 2);
    for (; k > 0; k--) p = nextafter(p, INFINITY);
    for (; k < 0 && p > 0; k++) p = nextafter(p, 0);
    return sign * p;
  }
  case 8: return sign * ldexp(ac_rng_uniform(g), F->emin + (int)ac_rng_range(g, -2, 12));  /* subnormal range */
  default: {                                                                    /* specials */
    static const double sp[] = {0.0, INFINITY, NAN, 1.0, 0.5, 2.0};
    double v = sp[ac_rng_below(g, 6)];
    return sign * v;
  }
  }
}

START_TEST(random_binary64_match_mpfr)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 11);
  mpfr_t r[REF_N];
  for (int f = 0; f < REF_N; f++) mpfr_init2(r[f], ref_fmts[f].prec);
  const long n = ac_test_expensive() ? 10000000 : 1000000;
  char why[256];
  double t0 = ac_now();
  for (long i = 0; i < n; i++) {
    const double x = random_input(&g);
    const int neg = signbit(x) != 0;
    for (int f = 0; f < REF_N; f++) {
      const ac_dtype t = ALL[f];
      for (int ov = 0; ov <= (ref_fmts[f].e4m3 ? 1 : 0); ov++) {
        uint64_t got = ac_encode_f64_ov(t, x, (ac_e4m3_overflow)ov);
        int ok;
        if (isnan(x) && t == AC_F64) {
          ok = got == bits_of(x);   /* binary64 -> binary64 is the identity, payload and all */
          snprintf(why, sizeof why, "expected the same NaN");
        } else if (isnan(x)) {
          ok = ref_is_quiet_nan(f, got, neg);
          snprintf(why, sizeof why, "expected a quiet NaN of the same sign");
        } else if (isinf(x) && ref_fmts[f].e4m3) {
          ok = got == (((uint64_t)neg << 7) | (ov ? 0x7f : 0x7e));
          snprintf(why, sizeof why, "e4m3 infinity");
        } else {
          ref_round_d(r[f], f, x);
          ok = ref_bits_match(f, got, r[f], ov, why, sizeof why);
        }
        REF_REQUIRE(ok, AC_SEED_FMT "input %d: %a (0x%016llx) -> %s (ov %d) gave 0x%llx: %s", AC_SEED_ARG, (int)i, x,
                      (unsigned long long)bits_of(x), ref_fmts[f].name, ov, (unsigned long long)got, why);
      }
    }
    /* the dedicated entry points agree with the generic one */
    REF_REQUIRE(ac_f16_from_f64(x) == ac_encode_f64(AC_F16, x) && ac_bf16_from_f64(x) == ac_encode_f64(AC_BF16, x) &&
                    ac_e4m3_from_f64(x, AC_E4M3_NAN) == ac_encode_f64_ov(AC_E4M3, x, AC_E4M3_NAN) &&
                    ac_e4m3_from_f64(x, AC_E4M3_SATURATE) == ac_encode_f64(AC_E4M3, x) &&
                    ac_e5m2_from_f64(x) == ac_encode_f64(AC_E5M2, x),
                "entry points disagree on %a", x);
    /* binary32 entry points: x rounded to binary32 first is a binary32 input */
    const float xf = (float)x;
    REF_REQUIRE(ac_f16_from_f32(xf) == ac_f16_from_f64((double)xf), "f16 from f32 %a", (double)xf);
    REF_REQUIRE(ac_bf16_from_f32(xf) == ac_bf16_from_f64((double)xf), "bf16 from f32 %a", (double)xf);
  }
  fprintf(stderr, "binary64 sample of %ld against MPFR: %.1f s\n", n, ac_now() - t0);
  for (int f = 0; f < REF_N; f++) mpfr_clear(r[f]);
}
END_TEST

START_TEST(special_values)
{
  /* e4m3: 448 is the top; 464 is a tie to the even 448; above overflows */
  ck_assert_uint_eq(ac_e4m3_from_f64(448, AC_E4M3_NAN), 0x7e);
  ck_assert_uint_eq(ac_e4m3_from_f64(464, AC_E4M3_NAN), 0x7e);
  ck_assert_uint_eq(ac_e4m3_from_f64(nextafter(464, 1000), AC_E4M3_NAN), 0x7f);
  ck_assert_uint_eq(ac_e4m3_from_f64(nextafter(464, 1000), AC_E4M3_SATURATE), 0x7e);
  ck_assert_uint_eq(ac_e4m3_from_f64(-1e30, AC_E4M3_SATURATE), 0xfe);
  ck_assert_uint_eq(ac_e4m3_from_f64(-INFINITY, AC_E4M3_SATURATE), 0xfe);
  ck_assert_uint_eq(ac_e4m3_from_f64(-INFINITY, AC_E4M3_NAN), 0xff);
  ck_assert_uint_eq(ac_e4m3_from_f64(-NAN, AC_E4M3_SATURATE), 0xff);
  ck_assert_uint_eq(ac_e4m3_from_f64(0x1p-10, AC_E4M3_SATURATE), 0x00);     /* half the smallest: even 0 */
  ck_assert_uint_eq(ac_e4m3_from_f64(0x1.8p-9, AC_E4M3_SATURATE), 0x02);    /* 1.5 quanta: even 2 */
  ck_assert_uint_eq(ac_e4m3_from_f64(-0.0, AC_E4M3_SATURATE), 0x80);
  /* e5m2 is IEEE-like */
  ck_assert_uint_eq(ac_e5m2_from_f64(57344), 0x7b);
  ck_assert_uint_eq(ac_e5m2_from_f64(61440), 0x7c);
  ck_assert_uint_eq(ac_e5m2_from_f64(nextafter(61440, 0)), 0x7b);
  ck_assert_uint_eq(ac_e5m2_from_f64(-INFINITY), 0xfc);
  ck_assert(ac_bits_isnan(AC_E5M2, ac_e5m2_from_f64(NAN)));
  /* f16 / bf16 */
  ck_assert_uint_eq(ac_f16_from_f64(65520), 0x7c00);
  ck_assert_uint_eq(ac_f16_from_f64(nextafter(65520, 0)), 0x7bff);
  ck_assert_uint_eq(ac_f16_from_f64(0x1p-25), 0x0000);
  ck_assert_uint_eq(ac_f16_from_f64(nextafter(0x1p-25, 1)), 0x0001);
  ck_assert_uint_eq(ac_f16_from_f64(-0x1p-1074), 0x8000);
  ck_assert_uint_eq(ac_bf16_from_f64(0x1.ffp127), 0x7f80);
  ck_assert_uint_eq(ac_bf16_from_f64(nextafter(0x1.ffp127, 0)), 0x7f7f);
  ck_assert_uint_eq(ac_bf16_from_f64(1.0 + 0x1p-8), 0x3f80);
  ck_assert_uint_eq(ac_bf16_from_f64(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);       /* sticky below the half */
  ck_assert_uint_eq(ac_f16_from_f64(1.0 + 0x1p-11 + 0x1p-52), 0x3c01);
  /* binary64 -> binary32 without the FPU's help, double rounding trap: */
  ck_assert_uint_eq(ac_encode_f64(AC_F32, 1.0 + 0x1p-24 + 0x1p-52), 0x3f800001);
  ck_assert_uint_eq(ac_encode_f64(AC_F32, 0x1p-150), 0);
  ck_assert_uint_eq(ac_encode_f64(AC_F32, nextafter(0x1p-150, 1)), 1);
  ck_assert_uint_eq(ac_encode_f64(AC_F32, -1e300), 0xff800000u);
  /* NaN: sign kept, quiet, payload's top bits kept */
  ck_assert_uint_eq(ac_f16_from_f32(-NAN), 0xfe00);
  ck_assert_uint_eq(ac_encode_f64(AC_F32, f64_of(0x7ff4000000000001ULL)), 0x7fe00000u);
  ck_assert_uint_eq(ac_bf16_from_f64(f64_of(0xfff0000000000001ULL)), 0xffc0);
  ck_assert_uint_eq(ac_encode_f64(AC_F64, -0.0), 0x8000000000000000ULL);
}
END_TEST

START_TEST(nan_codes_are_distinctive_quiet_nans)
{
  for (int f = 0; f < REF_N; f++) {
    const ac_dtype t = ALL[f];
    const uint64_t b = ac_nan_bits(t);
    REF_REQUIRE(ref_is_quiet_nan(f, b, 0), "%s NaN code 0x%llx", ref_fmts[f].name, (unsigned long long)b);
    ck_assert(ac_bits_isnan(t, b));
    ck_assert(isnan(ac_decode(t, b)));
    /* differs from the NaN the encoder makes from a computed (default) NaN, except e4m3's only code */
    if (!ref_fmts[f].e4m3)
      REF_REQUIRE(b != ac_encode_f64(t, NAN), "%s NaN code equals the default NaN", ref_fmts[f].name);
  }
}
END_TEST

/* ulp per docs/numerics.md §9 against MPFR: ulp(x) = 2^(max(e, emin) - p + 1), e from MPFR's exponent. */
START_TEST(ulp_matches_definition)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 12);
  MPFR_DECL_INIT(x, 64);
  for (int i = 0; i < 200000; i++) {
    double v = random_input(&g);
    if (!isfinite(v)) continue;
    for (int f = 0; f < REF_N; f++) {
      const ref_fmt *F = &ref_fmts[f];
      long e = 1 - F->bias;
      if (v != 0) {
        mpfr_set_d(x, v, MPFR_RNDN);
        long ex = (long)mpfr_get_exp(x) - 1;
        if (ex > e) e = ex;
      }
      double want = ldexp(1.0, (int)(e - F->prec + 1));
      double got = ac_ulp(ALL[f], v);
      REF_REQUIRE(got == want, AC_SEED_FMT "ulp %s of %a: %a, want %a", AC_SEED_ARG, F->name, v, got, want);
    }
  }
  ck_assert(ac_ulp(AC_F16, 1.0) == 0x1p-10);
  ck_assert(ac_ulp(AC_F16, 0.0) == 0x1p-24);
  ck_assert(ac_ulp(AC_E4M3, 448) == 32);
  ck_assert(ac_ulp(AC_F64, 0.0) == 0x1p-1074);
  ck_assert(isnan(ac_ulp(AC_F32, NAN)));
}
END_TEST

/* The MPFR encoder: values with more bits than binary64 (sticky below a binary64's reach),
 * exponents beyond every format, directed rounding for interval ends. */
START_TEST(mpfr_encoder_rounds_once)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 13);
  mpfr_t x, lo, hi, r[REF_N];
  mpfr_inits2(300, x, lo, hi, (mpfr_ptr)0);
  for (int f = 0; f < REF_N; f++) mpfr_init2(r[f], ref_fmts[f].prec);
  char why[256];
  const mpfr_exp_t emin0 = mpfr_get_emin(), emax0 = mpfr_get_emax();
  for (int i = 0; i < 100000; i++) {
    const double m = random_input(&g);
    if (!isfinite(m)) continue;
    for (int f = 0; f < REF_N; f++) {
      const ac_dtype t = ALL[f];
      /* m + tiny and m - tiny: a sticky bit far below binary64's reach */
      mpfr_set_d(x, m, MPFR_RNDN);
      mpfr_set_d(lo, m == 0 ? 0x1p-1074 : fabs(m), MPFR_RNDN);
      mpfr_mul_2si(lo, lo, -200, MPFR_RNDN);
      mpfr_add(hi, x, lo, MPFR_RNDN);
      mpfr_sub(lo, x, lo, MPFR_RNDN);
      for (int k = 0; k < 2; k++) {
        mpfr_ptr v = k ? lo : hi;
        uint64_t got = ac_encode_mpfr(t, v, AC_E4M3_SATURATE);
        ref_round(r[f], f, v);
        REF_REQUIRE(ref_bits_match(f, got, r[f], 0, why, sizeof why), AC_SEED_FMT "%s: %a %c tiny gave 0x%llx: %s",
                      AC_SEED_ARG, ac_dtype_name(t), m, k ? '-' : '+', (unsigned long long)got, why);
      }
      REF_REQUIRE(ac_encode_mpfr(t, x, AC_E4M3_NAN) == ac_encode_f64_ov(t, m, AC_E4M3_NAN), AC_SEED_FMT "%s: %a",
                    AC_SEED_ARG, ac_dtype_name(t), m);
      /* directed: RNDD <= x <= RNDU, both at most one code apart, equal iff exact */
      uint64_t d = ac_encode_mpfr_rnd(t, hi, MPFR_RNDD, AC_E4M3_SATURATE);
      uint64_t u = ac_encode_mpfr_rnd(t, hi, MPFR_RNDU, AC_E4M3_SATURATE);
      double dv = ac_decode(t, d), uv = ac_decode(t, u);
      REF_REQUIRE(mpfr_cmp_d(hi, dv) >= 0 || (ref_fmts[f].e4m3 && fabs(dv) == 448),
                    AC_SEED_FMT "%s RNDD of %a+tiny gave %a", AC_SEED_ARG, ac_dtype_name(t), m, dv);
      REF_REQUIRE(mpfr_cmp_d(hi, uv) <= 0 || (ref_fmts[f].e4m3 && fabs(uv) == 448),
                    AC_SEED_FMT "%s RNDU of %a+tiny gave %a", AC_SEED_ARG, ac_dtype_name(t), m, uv);
      REF_REQUIRE(dv < uv || (ref_fmts[f].e4m3 && fabs(dv) == 448) || (isinf(dv) && dv == uv),
                    AC_SEED_FMT "%s RNDD/RNDU of %a+tiny: %a %a", AC_SEED_ARG, ac_dtype_name(t), m, dv, uv);
      if (dv != uv && !(ref_fmts[f].e4m3 && (fabs(dv) == 448 || fabs(uv) == 448))) {
        const uint64_t mag = (1ULL << (ref_fmts[f].nbits - 1)) - 1;
        const uint64_t md = d & mag, mu = u & mag;
        REF_REQUIRE((md > mu ? md - mu : mu - md) == 1, AC_SEED_FMT "%s RNDD/RNDU of %a+tiny not adjacent: %a %a",
                      AC_SEED_ARG, ac_dtype_name(t), m, dv, uv);
      }
    }
  }
  /* exponents far outside every format, in MPFR's extended range */
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_set_ui_2exp(x, 3, -100000, MPFR_RNDN);
  mpfr_set_ui_2exp(hi, 3, 100000, MPFR_RNDN);
  mpfr_neg(lo, hi, MPFR_RNDN);
  for (int f = 0; f < REF_N; f++) {
    const ac_dtype t = ALL[f];
    ck_assert_uint_eq(ac_encode_mpfr(t, x, AC_E4M3_NAN), 0);
    ck_assert_uint_eq(ac_encode_mpfr_rnd(t, x, MPFR_RNDU, AC_E4M3_NAN), 1);   /* smallest subnormal */
    ck_assert_uint_eq(ac_encode_mpfr(t, hi, AC_E4M3_SATURATE), ac_encode_f64(t, INFINITY));
    ck_assert_uint_eq(ac_encode_mpfr_rnd(t, hi, MPFR_RNDD, AC_E4M3_NAN), ac_encode_f64(t, ac_dtype_get(t)->max_finite));
    ck_assert_uint_eq(ac_encode_mpfr_rnd(t, lo, MPFR_RNDU, AC_E4M3_NAN), ac_encode_f64(t, -ac_dtype_get(t)->max_finite));
    REF_REQUIRE(mpfr_get_emin() == mpfr_get_emin_min() && mpfr_get_emax() == mpfr_get_emax_max(),
                  "exponent range not restored");
  }
  mpfr_set_emin(emin0);
  mpfr_set_emax(emax0);
  ck_assert_uint_eq(ac_encode_mpfr(AC_E4M3, hi, AC_E4M3_NAN), 0x7f);
  mpfr_set_nan(x);
  ck_assert(ac_bits_isnan(AC_F16, ac_encode_mpfr(AC_F16, x, AC_E4M3_NAN)));
  ck_assert(ac_bits_isnan(AC_E4M3, ac_encode_mpfr(AC_E4M3, x, AC_E4M3_SATURATE)));
  mpfr_clears(x, lo, hi, (mpfr_ptr)0);
  for (int f = 0; f < REF_N; f++) mpfr_clear(r[f]);
}
END_TEST

START_TEST(load_store_round_trip)
{
  unsigned char buf[64];
  for (int f = 0; f < REF_N; f++) {
    const ac_dtype t = ALL[f];
    const uint64_t mask = ref_fmts[f].nbits == 64 ? ~0ULL : (1ULL << ref_fmts[f].nbits) - 1;
    memset(buf, 0xa5, sizeof buf);
    for (size_t i = 0; i < 4; i++) ac_store_bits(t, buf, i, (0x0123456789abcdefULL * (i + 1)) & mask);
    for (size_t i = 0; i < 4; i++) ck_assert_uint_eq(ac_load_bits(t, buf, i), (0x0123456789abcdefULL * (i + 1)) & mask);
    ck_assert_uint_eq(buf[4 * ac_dtype_size(t)], 0xa5);   /* nothing written past element 3 */
  }
  float one = 1.0f;
  ck_assert(ac_load(AC_F32, &one, 0) == 1.0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("dtype");
  TCase *tc = tcase_create("dtype");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, table_matches_format_definitions);
  tcase_add_test(tc, names_parse_and_print);
  tcase_add_test(tc, every_pattern_decodes_exactly);
  tcase_add_test(tc, random_binary64_match_mpfr);
  tcase_add_test(tc, special_values);
  tcase_add_test(tc, nan_codes_are_distinctive_quiet_nans);
  tcase_add_test(tc, ulp_matches_definition);
  tcase_add_test(tc, mpfr_encoder_rounds_once);
  tcase_add_test(tc, load_store_round_trip);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
