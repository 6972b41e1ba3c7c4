/* tquant_store.c: the quantized layouts and quantize-on-store of src/core (quant_spec.c, quant_pack.c,
 * quant_store.c, casefile_quant.c; docs/quantized.md): specs of group, tile and channel-group scales,
 * dtypes, packing and quantizers parsed, printed and refused with one line; packed codes at the bit
 * positions the ABI names; float zero points exact where binary64 holds them and flagged where it
 * does not; every quantizer rule against values worked out by hand (ties, binary32 against exact
 * arithmetic, saturation against NaN, clamped zero points, given scales); case files of every
 * extended spec and store written and read back, and malformed ones refused. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "casefile.h"
#include "dtype_mpfr.h"
#include "quant.h"
#include "testutil.h"
#include "toracle_ref.h"

START_TEST(specs_round_trip_and_refusals)
{
  static const char *const ok[] = {"int4:group:64",
                                   "e4m3fn:tile:128x128",
                                   "int2:channel:32:zero=f16",
                                   "int4:scale=bf16:zero=f32:packed=low",
                                   "nvfp4:packed=high",
                                   "int8:group:32:store=minmax-away-f32-sat",
                                   "e5m2:head:store=given-even-exact-nan",
                                   "q8_0:store=ggml"};
  char buf[128];
  ac_qspec q, r;
  ac_err e;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    ck_assert_msg(ac_qspec_parse(ok[i], &q, &e) == 0, "%s: %s", ok[i], e.msg);
    ck_assert_str_eq(ac_qspec_str(&q, buf, sizeof buf), ok[i]);
    ck_assert(ac_qspec_parse(buf, &r, &e) == 0 && !memcmp(&q, &r, sizeof q));
  }
  ck_assert(ac_qspec_parse("int4:group:64", &q, &e) == 0 && q.gran == AC_QG_BLOCK && q.block == 64 && q.tgroup == 0);
  ck_assert(ac_qspec_parse("e4m3fn:tile:4x32", &q, &e) == 0 && q.block == 32 && ac_qspec_tgroup(&q) == 4);
  ck_assert(ac_qscale_rows(&q, 10) == 3 && ac_qspec_extended(&q));
  ck_assert(ac_qspec_parse("int4:token", &q, &e) == 0 && !ac_qspec_extended(&q) && ac_quant_features(&(ac_problem){0}) == 0);
  static const char *const bad[][2] = {
    {"int4:group", "group needs a size"},
    {"int4:group:0", "group size '0'"},
    {"q4_0:tile:2x32", "q4_0: token groups"},
    {"int8:packed=low", "int8: codes packed only when narrower than a byte"},
    {"e4m3fn:zero=f16", "e4m3fn: f16 zero points (it has none)"},
    {"q8_0:scale=f32", "q8_0: scale dtype f32 (it takes f16)"},
    {"int4:channel:1", "channel size '1'"},
    {"int4:store=absmax-even-f32-sat", "absmax stores no int4"},
    {"int8:store=minmax-even-f32-nan", "nan on overflow is fp8's"},
    {"e4m3fn:store=ggml", "ggml stores no e4m3fn"},
    {"e4m3fn:store=absmax-odd", "unknown word 'odd'"},
    {"int4:rows=2", "unknown option 'rows=2'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg(ac_qspec_parse(bad[i][0], &q, &e) == -1, "%s accepted", bad[i][0]);
    ck_assert_msg(strstr(e.msg, bad[i][1]) && !strchr(e.msg, '\n'), "%s: '%s' lacks '%s'", bad[i][0], e.msg, bad[i][1]);
  }
  ck_assert(ac_qspec_parse("int4:group:48", &q, &e) == 0 && ac_qspec_check(&q, 'k', 64, &e) == -1);
  ck_assert_msg(strstr(e.msg, "dk 64 is not a multiple of int4's group of 48"), "%s", e.msg);
  ck_assert(ac_qspec_parse("int2:packed=low", &q, &e) == 0 && ac_qspec_check(&q, 'v', 6, &e) == -1);
  ck_assert_msg(strstr(e.msg, "dv 6 is not a multiple of the 4 codes a byte packs"), "%s", e.msg);
}
END_TEST

/* Element d of a row at the bit position the ABI names: low first, d % per from the low end. */
START_TEST(packed_codes_at_their_bits)
{
  ac_qspec q4 = {.fmt = AC_QF_INT4, .gran = AC_QG_TOKEN, .pack = AC_QPACK_LOW_FIRST}, q2 = q4;
  q2.fmt = AC_QF_INT2;
  const uint8_t c4[4] = {0x1, 0xa, 0x7, 0xf}, c2[8] = {1, 2, 3, 0, 3, 3, 0, 1};
  uint8_t b[4], back[8];
  ac_qpack(&q4, c4, 4, b);
  ck_assert(b[0] == 0xa1 && b[1] == 0xf7);
  q4.pack = AC_QPACK_HIGH_FIRST;
  ac_qpack(&q4, c4, 4, b);
  ck_assert(b[0] == 0x1a && b[1] == 0x7f);
  ac_qunpack(&q4, b, 4, back);
  ck_assert(!memcmp(back, c4, 4));
  ac_qpack(&q2, c2, 8, b);   /* crumbs 1,2,3,0 from the low end: 0b00111001 */
  ck_assert(b[0] == 0x39 && b[1] == 0x4f);
  for (int d = 0; d < 8; d++) ck_assert(ac_qpacked_code(AC_QPACK_LOW_FIRST, 2, b, d) == c2[d]);
  q2.pack = AC_QPACK_HIGH_FIRST;
  ac_qpack(&q2, c2, 8, b);
  ck_assert(b[0] == 0x6c && ac_qpacked_code(AC_QPACK_HIGH_FIRST, 2, b, 2) == 3);
}
END_TEST

/* (q - z) s with a float zero point: exact whenever binary64 holds it, else its rounding, flagged. */
START_TEST(float_zero_points)
{
  int rounded = 0;
  ck_assert(ac_qvalue_zero(AC_QF_INT4, 9, 0.5, 1.25, &rounded) == 3.875 && !rounded);
  /* f16 zero point and scale: at most 41 + 11 bits, always exact */
  ck_assert(ac_qvalue_zero(AC_QF_UINT8, 255, ldexp(2047, -24), ldexp(1, -24), &rounded) ==
                ldexp(255.0 * (1 << 24) - 1, -24) * ldexp(2047, -24) &&
            !rounded);
  /* f32 zero point 2^-30 beside code 255, f32 scale of 24 bits: 8 + 30 + 24 bits, rounded */
  double s = 1 + 0x1p-23, z = 0x1p-30, v = ac_qvalue_zero(AC_QF_UINT8, 255, s, z, &rounded);
  ck_assert(rounded);
  mpfr_t x;
  mpfr_init2(x, 200);
  mpfr_set_d(x, 255, MPFR_RNDN);
  mpfr_sub_d(x, x, z, MPFR_RNDN);
  mpfr_mul_d(x, x, s, MPFR_RNDN);
  ck_assert(v == mpfr_get_d(x, MPFR_RNDN) && mpfr_cmp_d(x, v) != 0);
  mpfr_clear(x);
  rounded = 0;
  ck_assert(isnan(ac_qvalue_zero(AC_QF_INT4, 1, INFINITY, 1, &rounded)) && !rounded);   /* inf x 0 */
}
END_TEST

/* One group quantized by a store spec: codes, scale and aux bits. */
static void store(const char *spec, const double *x, int n, uint8_t *codes, uint64_t *sb, uint64_t *ab)
{
  ac_qspec q;
  ac_err e;
  ck_assert_msg(ac_qspec_parse(spec, &q, &e) == 0, "%s: %s", spec, e.msg);
  ac_qstore_group(&q, x, n, codes, sb, ab);
}

START_TEST(quantizer_rules)
{
  uint8_t c[8];
  uint64_t sb, ab = 0;
  /* absmax to e4m3fn: s = 7/448 = 2^-6 exactly; -0.5 / 2^-6 = -32 (0xe0); 0.0234375 / 2^-6 = 1.5 (0x3c) */
  const double a[4] = {7, -0.5, 0.0234375, 0};
  store("e4m3fn:tensor:store=absmax-even-f32-sat", a, 4, c, &sb, &ab);
  ck_assert(sb == 0x3c800000 && c[0] == 0x7e && c[1] == 0xe0 && c[2] == 0x3c && c[3] == 0);
  /* ties: 9.5 * 2^-6 / 2^-6 = 9.5 lies between e4m3fn's 9 (0x51) and 10 (0x52): even gives 10, away 10;
   * 8.5 between 8 (0x50, even) and 9: even 8, away 9, trunc 8 */
  const double t[3] = {7, 8.5 / 64, 9.5 / 64};
  store("e4m3fn:tensor:store=absmax-even-f32-sat", t, 3, c, &sb, &ab);
  ck_assert(c[1] == 0x50 && c[2] == 0x52);
  store("e4m3fn:tensor:store=absmax-away-f32-sat", t, 3, c, &sb, &ab);
  ck_assert(c[1] == 0x51 && c[2] == 0x52);
  store("e4m3fn:tensor:store=absmax-trunc-f32-sat", t, 3, c, &sb, &ab);
  ck_assert(c[1] == 0x50 && c[2] == 0x51);
  /* given scale 1: 470 saturates to 448 (0x7e) or, non-saturating, is NaN (e5m2: inf) */
  const double g[2] = {470, -470};
  sb = 0x3f800000;
  store("e4m3fn:tensor:store=given-even-f32-sat", g, 2, c, &sb, &ab);
  ck_assert(c[0] == 0x7e && c[1] == 0xfe && sb == 0x3f800000);
  store("e4m3fn:tensor:store=given-even-f32-nan", g, 2, c, &sb, &ab);
  ck_assert(c[0] == 0x7f && c[1] == 0xff);
  const double g5[1] = {70000};
  store("e5m2:tensor:store=given-even-f32-nan", g5, 1, c, &sb, &ab);
  ck_assert(c[0] == 0x7c);
  /* min-max to uint8 on a range that does not reach 0: [2, 2 + 255/64]: s = 1/64, z = 0 - 128 clamped to 0
   * (integer), or -128 as a float zero point */
  const double m[3] = {2, 2 + 255.0 / 64, 2 + 1.5 / 64};
  store("uint8:token:store=minmax-even-f32-sat", m, 3, c, &sb, &ab);
  ck_assert(sb == 0x3c800000 && ab == 0 && c[0] == 128 && c[1] == 255 && c[2] == 130);
  store("uint8:token:zero=f32:store=minmax-even-f32-sat", m, 3, c, &sb, &ab);
  ck_assert(ab == 0xc3000000 && c[0] == 0 && c[1] == 255 && c[2] == 2);   /* 1.5 rounds to 2 */
  store("uint8:token:zero=f32:store=minmax-away-f32-sat", m, 3, c, &sb, &ab);
  ck_assert(c[2] == 2);
  const double m2[3] = {2, 2 + 255.0 / 64, 2 + 2.5 / 64};
  store("uint8:token:zero=f32:store=minmax-even-f32-sat", m2, 3, c, &sb, &ab);
  ck_assert(c[2] == 2);
  store("uint8:token:zero=f32:store=minmax-away-f32-sat", m2, 3, c, &sb, &ab);
  ck_assert(c[2] == 3);
  /* min-max's scale derived in binary32 (max - min and the quotient rounded there, then rounded to
   * f16) against exactly (once): pairs where they differ, each the rounding its rule names */
  int found = 0;
  mpfr_t x;
  mpfr_init2(x, 200);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 17);
  for (int k = 0; k < 100000 && found < 3; k++) {
    float hi = 1.0f + (float)ac_rng_below(&r, 1u << 23) * 0x1p-23f, lo = -(float)ldexp((double)ac_rng_below(&r, 1u << 20), -44);
    double v[2] = {lo, hi};
    uint64_t s32, sx;
    store("uint8:token:scale=f16:store=minmax-even-f32-sat", v, 2, c, &s32, &ab);
    store("uint8:token:scale=f16:store=minmax-even-exact-sat", v, 2, c, &sx, &ab);
    mpfr_set_d(x, hi, MPFR_RNDN);
    mpfr_sub_d(x, x, lo, MPFR_RNDN);
    mpfr_div_ui(x, x, 255, MPFR_RNDN);
    ck_assert(sx == ac_encode_mpfr(AC_F16, x, AC_E4M3_SATURATE));   /* once, from the exact quotient */
    ck_assert(s32 == ac_encode_f64(AC_F16, (double)((hi - lo) / 255.0f)));
    found += s32 != sx;
  }
  mpfr_clear(x);
  ck_assert_msg(found, "no min and max where binary32 and exact scales differ");
  /* ggml: quantize_row_q8_0_ref, codes half away from zero */
  double q8[32] = {127, 0.5, -0.5, 1.5};
  store("q8_0:store=ggml", q8, 32, c, &sb, &ab);
  ck_assert(sb == 0x3c00 && (int8_t)c[1] == 1 && (int8_t)c[2] == -1 && (int8_t)c[3] == 2);
}
END_TEST

/* A case of one batch, 2 heads, its K and V quantized by spec (their values drawn from the seed). */
static void make_case(ac_case *c, const char *spec, int adversary)
{
  ac_err e;
  ref_case(c, AC_F32, AC_MASK_CAUSAL, 1, 2, 2, 5, 9, 64, 32);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x73746f);
  ac_counts n;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(&r));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(&r));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(&r));
  ac_qspec q;
  ck_assert_msg(ac_qspec_parse(spec, &q, &e) == 0, "%s", e.msg);
  for (const char *x = "kv"; *x; x++) ck_assert_msg(ac_quant_adversary(c, *x, &q, adversary, &r, &e) == 0, "%s: %s", spec, e.msg);
}

START_TEST(case_files_of_layouts_and_stores)
{
  static const char *const specs[] = {"int4:group:16:packed=low:zero=f16", "int2:tile:3x32:scale=bf16:packed=high",
                                      "uint8:channel:4:zero=f32",          "e4m3fn:tile:2x16:scale=f16",
                                      "mxfp4:packed=low",                  "nvfp4:packed=high",
                                      "e4m3fn:token:store=absmax-even-f32-sat", "int4:group:32:zero=bf16:store=minmax-away-f32-sat",
                                      "e5m2:head:store=given-even-f32-nan", "q8_0:store=ggml"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    ac_case c, back;
    ac_err e;
    make_case(&c, specs[i], AC_QADV_NONE);
    char path[512];
    snprintf(path, sizeof path, "%s/ls-%zu.npz", ac_test_tmpdir(), i);
    ck_assert_msg(ac_case_write(&c, path, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_case_read(&back, path, &e) == 0, "%s: %s", specs[i], e.msg);
    ck_assert_msg(!memcmp(&back.p.quant[1], &c.p.quant[1], sizeof c.p.quant[1]) && ac_case_hash(&back) == ac_case_hash(&c),
                  "%s: read back differs", specs[i]);
    ck_assert(memcmp(back.k, c.k, ac_case_bytes(&c, 'k')) == 0 && memcmp(back.quant->t[2].codes, c.quant->t[2].codes, 9 * 2 * 32) == 0);
    /* the values are the codes' (brute force of tests/toracle_ref.c): exact, or their binary64 rounding */
    mpfr_t v;
    mpfr_init2(v, 256);
    for (size_t x = 0; x < 2 * 9 * 64; x++) {
      ref_value(v, &back, 'k', x);
      double got = ((const double *)back.k)[x];
      ck_assert_msg(mpfr_cmp_d(v, got) == 0 || (back.p.quant[1].rounded && mpfr_get_d(v, MPFR_RNDN) == got),
                    "%s: element %zu %a, reference %a", specs[i], x, got, mpfr_get_d(v, MPFR_RNDN));
    }
    mpfr_clear(v);
    char cmd[1200], out[4096];
    snprintf(cmd, sizeof cmd, "python3 -c \"import numpy as n; z = n.load('%s'); print(sorted(z.files))\" 2>/dev/null", path);
    if (ac_test_system(cmd, out, sizeof out) == 0 && c.p.quant[1].store)   /* a store's file: its plain values */
      ck_assert_msg(strstr(out, "'k'") && !strstr(out, "k_codes"), "%s: members %s", specs[i], out);
    ac_case_free(&back);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(store_edits_follow_the_plain_values)
{
  ac_case c, out;
  ac_err e;
  make_case(&c, "int4:group:32:store=minmax-even-f32-sat", AC_QADV_TIES);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 5);
  char desc[160];
  ck_assert(ac_quant_mutate(&c, &r, desc, sizeof desc) == 1 && strstr(desc, "plain value"));
  ck_assert(ac_case_copy(&out, &c, &e) == 0);
  ac_quant_store_derive(&out, 'k');   /* its codes are its quantizer's of its plain values, again */
  ck_assert(!memcmp(out.quant->t[1].codes, c.quant->t[1].codes, 9 * 2 * 64));
  ac_case_free(&out);
  ac_case_free(&c);
  /* non-finite plain values are refused: a store's scales come from its values */
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 32, 32);
  ref_set(&c, 'k', 3, NAN);
  ac_qspec q;
  ck_assert(ac_qspec_parse("e4m3fn:token:store=absmax-even-f32-sat", &q, &e) == 0);
  ck_assert(ac_quant_apply(&c, 'k', &q, &e) == -1);
  ck_assert_msg(strstr(e.msg, "takes finite values (element 3 is "), "%s", e.msg);
  ck_assert(!c.p.quant[1].fmt);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("quant_store");
  TCase *tc = tcase_create("quant_store");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, specs_round_trip_and_refusals);
  tcase_add_test(tc, packed_codes_at_their_bits);
  tcase_add_test(tc, float_zero_points);
  tcase_add_test(tc, quantizer_rules);
  tcase_add_test(tc, case_files_of_layouts_and_stores);
  tcase_add_test(tc, store_edits_follow_the_plain_values);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
