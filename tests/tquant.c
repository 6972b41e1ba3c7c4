/* tquant.c: quantized tensors (src/core/quant*.c, casefile_quant.c): format names and specs, every
 * code's value against the MPFR reading of tests/toracle_ref.c under ordinary and special scales,
 * the small-float encoders, ggml's block bytes, the reference quantizers' rules, case files written
 * and read back for every format and granularity, and bad case files refused with one line. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "casefile.h"
#include "npz.h"
#include "quant.h"
#include "testutil.h"
#include "toracle_ref.h"

START_TEST(specs_parse_and_refuse)
{
  ac_qspec q;
  ac_err e;
  char buf[64];
  ck_assert(ac_qspec_parse("q4_0", &q, &e) == 0 && q.fmt == AC_QF_Q4_0 && q.gran == AC_QG_BLOCK && q.block == 32);
  ck_assert_str_eq(ac_qspec_str(&q, buf, sizeof buf), "q4_0");
  ck_assert(ac_qspec_parse("e4m3fn:token", &q, &e) == 0 && q.gran == AC_QG_TOKEN && q.block == 0);
  ck_assert_str_eq(ac_qspec_str(&q, buf, sizeof buf), "e4m3fn:token");
  ck_assert(ac_qspec_parse("fp8_e4m3fnuz", &q, &e) == 0 && q.fmt == AC_QF_E4M3FNUZ && q.gran == AC_QG_TENSOR);
  ck_assert(ac_qspec_parse("nvfp4", &q, &e) == 0 && q.block == 16);
  ck_assert(ac_qspec_parse("int4:channel", &q, &e) == 0 && q.gran == AC_QG_CHANNEL);
  ck_assert(ac_qspec_parse("q4_0:token", &q, &e) == -1);
  ck_assert_msg(strstr(e.msg, "q4_0 takes no token granularity (it takes block)"), "%s", e.msg);
  ck_assert(ac_qspec_parse("q3_k", &q, &e) == -1 && strstr(e.msg, "unknown quantized format 'q3_k'"));
  ck_assert(ac_qspec_parse("int8:rows", &q, &e) == -1 && strstr(e.msg, "unknown granularity 'rows'"));
  ck_assert(ac_qspec_parse("q8_0", &q, &e) == 0);
  ck_assert(ac_qspec_check(&q, 'k', 59, &e) == -1);
  ck_assert_msg(strstr(e.msg, "dk 59 is not a multiple of q8_0's block of 32 (the format defines no padding)"), "%s", e.msg);
  ck_assert(ac_qspec_check(&q, 'k', 96, &e) == 0);
  uint32_t m;
  char bad[32];
  ck_assert(ac_qfmt_parse_list("q8_0,int4", &m, bad, sizeof bad) == 0 && m == (1u << AC_QF_Q8_0 | 1u << AC_QF_INT4));
  ck_assert(ac_qfmt_parse_list("q8_0,zz", &m, bad, sizeof bad) == -1 && !strcmp(bad, "zz"));
}
END_TEST

/* A k of one row of format fmt with the given code in every element and scale bits sbits. */
static void one_row(ac_case *c, int fmt, int gran)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  int64_t d = f->block ? f->block : 8;
  ref_case(c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 1, d, d);
  c->p.quant[1] = (ac_qspec){.fmt = fmt, .gran = gran, .block = gran == AC_QG_BLOCK ? f->block : 0};
  ac_err e;
  ck_assert_msg(ac_quant_alloc(c, &e) == 0, "%s", e.msg);
}

static uint64_t scale_pattern(ac_qsdtype t, int k)
{
  static const uint64_t f16[] = {0x3c00, 0x0001, 0x7bff, 0x7c00, 0x7e00, 0x0000, 0xb555, 0x2e66};
  static const uint64_t f32[] = {0x3f800000, 0x00000001, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0, 0xbeaaaaab, 0x3c23d70a};
  static const uint64_t e4m3[] = {0x38, 0x01, 0x7e, 0x7f, 0xff, 0x00, 0xb9, 0x2a};
  static const uint64_t e8m0[] = {127, 0, 254, 255, 255, 1, 130, 100};
  return t == AC_QSD_F16 ? f16[k] : t == AC_QSD_F32 ? f32[k] : t == AC_QSD_E4M3 ? e4m3[k] : e8m0[k];
}

/* Every code of every format under eight scales (1, the smallest subnormal, the largest finite,
 * inf, NaN, 0, a negative and an ordinary one) and seven mins or zero points: the decoded value
 * is the MPFR reading of the definition, NaN where it is NaN. */
START_TEST(every_code_value_exact)
{
  int fmt = AC_QF_Q8_0 + _i;
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  ac_case c;
  one_row(&c, fmt, (int)f->gran);
  int64_t n = c.p.dk, top = f->code_signed ? 255 : f->code_max;
  mpfr_t v;
  mpfr_init2(v, 256);
  static const uint16_t mins[] = {0, 0x3c00, 0xfbff, 0x7bff, 0x0001, 0x7c00, 0xfe00};
  static const int8_t zeros[] = {0, 1, -128, 127, 7, -3, 15};
  for (int k = 0; k < 8; k++)
    for (int a = 0; a < 7; a++)
      for (int64_t c0 = 0; c0 <= top; c0 += n) {
        ac_qdata *t = &c.quant->t[1];
        for (int64_t x = 0; x < n; x++) t->codes[x] = (uint8_t)(c0 + x <= top ? c0 + x : top);
        uint64_t sb = scale_pattern(f->sdtype, k);
        if (f->sdtype == AC_QSD_F16) ac_store_bits(AC_F16, t->scales, 0, sb);
        else if (f->sdtype == AC_QSD_F32) ac_store_bits(AC_F32, t->scales, 0, sb);
        else ((uint8_t *)t->scales)[0] = (uint8_t)sb;
        if (f->aux == AC_QAUX_MIN) ac_store_bits(AC_F16, t->aux, 0, mins[a]);
        if (f->aux == AC_QAUX_ZERO) ((int8_t *)t->aux)[0] = zeros[a];
        if (f->aux == AC_QAUX_TSCALE) ac_store_bits(AC_F32, t->aux, 0, scale_pattern(AC_QSD_F32, (k + a) % 8));
        ac_quant_decode(&c, 'k');
        for (int64_t x = 0; x < n; x++) {
          ref_value(v, &c, 'k', (size_t)x);
          double got = ((const double *)c.k)[x];
          int ok = mpfr_nan_p(v) ? isnan(got) : !isnan(got) && mpfr_cmp_d(v, got) == 0;
          ck_assert_msg(ok, "%s code %u scale %llx aux %d: %a, reference %a", f->name, (unsigned)t->codes[x],
                        (unsigned long long)sb, a, got, mpfr_get_d(v, MPFR_RNDN));
        }
      }
  mpfr_clear(v);
  ac_case_free(&c);
}
END_TEST

START_TEST(small_float_encoders)
{
  for (int c = 0; c < 256; c++) {
    double v = ac_e4m3fnuz_decode((uint8_t)c);
    if (c == 0x80) {
      ck_assert(isnan(v));
      continue;
    }
    uint8_t back = ac_e4m3fnuz_encode(v);
    ck_assert_msg(back == c || (c == 0 && back == 0), "fnuz %02x -> %a -> %02x", c, v, back);
  }
  ck_assert(ac_e4m3fnuz_decode(0x7f) == 240 && ac_e4m3fnuz_decode(0x01) == 0x1p-10 && ac_e4m3fnuz_encode(1e9) == 0x7f);
  ck_assert(ac_e4m3fnuz_encode(NAN) == 0x80 && ac_e4m3fnuz_encode(-0.0) == 0);
  for (int c = 0; c < 16; c++) ck_assert(ac_e2m1_encode(ac_e2m1_decode((uint8_t)c)) == (c == 8 ? 0 : c));
  ck_assert(ac_e2m1_encode(2.5) == 4 && ac_e2m1_encode(3.5) == 6 && ac_e2m1_encode(5.0) == 6 && ac_e2m1_encode(99) == 7);
  ck_assert(ac_e2m1_encode(0.25) == 0 && ac_e2m1_encode(0.75) == 2 && ac_e2m1_encode(-1.25) == (8 | 2));
}
END_TEST

/* ggml's byte layouts: a block whose codes are their own indices (masked to the format's width). */
START_TEST(ggml_block_bytes)
{
  uint8_t c[32], back[32], blk[40];
  uint16_t d, m;
  for (int j = 0; j < 32; j++) c[j] = (uint8_t)(j & 15);
  ck_assert(ac_qggml_pack(AC_QF_Q4_0, c, 0x3c00, 0, blk) == 0);
  ck_assert(blk[0] == 0x00 && blk[1] == 0x3c);
  for (int j = 0; j < 16; j++) ck_assert_int_eq(blk[2 + j], (j & 15) | ((j + 16) & 15) << 4);
  for (int j = 0; j < 32; j++) c[j] = (uint8_t)j;
  ck_assert(ac_qggml_pack(AC_QF_Q5_1, c, 0x1234, 0xabcd, blk) == 0);
  ck_assert(blk[0] == 0x34 && blk[1] == 0x12 && blk[2] == 0xcd && blk[3] == 0xab);
  ck_assert(blk[4] == 0x00 && blk[5] == 0x00 && blk[6] == 0xff && blk[7] == 0xff);   /* fifth bits: codes 16..31 */
  ck_assert(blk[8] == (0 | 0 << 4) && blk[9] == (1 | 1 << 4));
  ck_assert(ac_qggml_unpack(AC_QF_Q5_1, blk, back, &d, &m) == 0 && d == 0x1234 && m == 0xabcd);
  ck_assert(memcmp(back, c, 32) == 0);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x67676d6c);
  for (int fmt = AC_QF_Q8_0; fmt < AC_QF_N; fmt++) {
    const ac_qfmt_info *f = ac_qfmt_get(fmt);
    if (!f->ggml_bytes) {
      ck_assert(ac_qggml_pack(fmt, c, 0, 0, blk) == -1);
      continue;
    }
    for (int k = 0; k < 200; k++) {
      for (int j = 0; j < 32; j++) c[j] = (uint8_t)ac_rng_below(&r, (uint64_t)f->code_max + 1);
      uint16_t d0 = (uint16_t)ac_rng_below(&r, fmt == AC_QF_MXFP4 ? 256 : 65536), m0 = (uint16_t)ac_rng_below(&r, 65536);
      if (f->aux != AC_QAUX_MIN) m0 = 0;
      memset(blk, 0xee, sizeof blk);
      ck_assert(ac_qggml_pack(fmt, c, d0, m0, blk) == 0);
      ck_assert_int_eq(blk[f->ggml_bytes], 0xee);
      ck_assert(ac_qggml_unpack(fmt, blk, back, &d, &m) == 0);
      ck_assert_msg(d == d0 && m == m0 && memcmp(back, c, 32) == 0, "%s round trip", f->name);
    }
  }
}
END_TEST

/* The reference quantizers' rules on one block. */
START_TEST(reference_quantizers)
{
  float x[32];
  uint8_t c[32];
  uint64_t s, a;
  for (int j = 0; j < 32; j++) x[j] = (float)(j - 10) / 4;   /* -2.5 .. 5.25 */
  ac_qref_group(AC_QF_Q8_0, x, 32, c, &s, &a, 0);
  ck_assert(s == ac_f16_from_f32(5.25f / 127) && (int8_t)c[31] == 127 && (int8_t)c[10] == 0);
  ac_qref_group(AC_QF_Q4_0, x, 32, c, &s, &a, 0);   /* d = max / -8: the largest element gets code 0 */
  ck_assert(s == ac_f16_from_f32(5.25f / -8) && c[31] == 0 && c[10] == 8);
  ac_qref_group(AC_QF_Q4_1, x, 32, c, &s, &a, 0);
  ck_assert(a == ac_f16_from_f32(-2.5f) && c[0] == 0 && c[31] == 15);
  ac_qref_group(AC_QF_INT8, x, 32, c, &s, &a, 0);
  ck_assert((int8_t)c[31] == 127 && (int8_t)c[0] == -128);
  memset(x, 0, sizeof x);
  ac_qref_group(AC_QF_Q4_0, x, 32, c, &s, &a, 0);   /* a block of zeros: scale 0, code 8 */
  ck_assert(s == 0x8000 && c[5] == 8);   /* d = 0 / -8 = -0, as ggml stores it */
  ac_qref_group(AC_QF_IQ4_NL, x, 32, c, &s, &a, 0);
  ck_assert(s == 0 && c[0] == 8);
  ac_qref_group(AC_QF_E4M3FN, x, 32, c, &s, &a, 0);   /* no scale 0: 1 */
  ck_assert(s == 0x3f800000 && c[0] == 0);
  x[3] = 1e4f;   /* an outlier zeroes the rest of the block (q8_0: |x| < d / 2) */
  x[4] = 1.0f;
  ac_qref_group(AC_QF_Q8_0, x, 32, c, &s, &a, 0);
  ck_assert(c[3] == 127 && c[4] == 0);
}
END_TEST

/* A case of every format and granularity written and read back: codes, scales, values, hash. */
START_TEST(case_files_round_trip)
{
  int fmt = AC_QF_Q8_0 + _i;
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  for (int g = 0; g < AC_QG_N; g++) {
    if (!(f->grans >> g & 1u)) continue;
    ac_case c, back;
    ac_err e;
    ref_case(&c, AC_F32, AC_MASK_CAUSAL, 2, 4, 2, 3, 5, 64, 32);
    ac_rng r;
    ac_rng_init(&r, ac_test_seed(), (uint64_t)(fmt * 16 + g));
    ac_counts n;
    ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
    for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, ac_rng_normal(&r));
    for (int64_t x = 0; x < n.k; x++) ref_set(&c, 'k', (size_t)x, ac_rng_normal(&r));
    for (int64_t x = 0; x < n.v; x++) ref_set(&c, 'v', (size_t)x, ac_rng_normal(&r));
    /* block granularity of an int or fp8 format: groups of 32 along d */
    ac_qspec q = {.fmt = fmt, .gran = g, .block = g == AC_QG_BLOCK ? (f->block ? f->block : 32) : 0};
    for (const char *x = "qkv"; *x; x++) ck_assert_msg(ac_quant_apply(&c, *x, &q, &e) == 0, "%s", e.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/rt-%s-%d.npz", ac_test_tmpdir(), f->name, g);
    ck_assert_msg(ac_case_write(&c, path, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_case_read(&back, path, &e) == 0, "%s", e.msg);
    ck_assert(back.p.quant[1].fmt == fmt && back.p.quant[1].gran == g && ac_case_hash(&back) == ac_case_hash(&c));
    ck_assert(memcmp(back.k, c.k, ac_case_bytes(&c, 'k')) == 0 && memcmp(back.q, c.q, ac_case_bytes(&c, 'q')) == 0);
    ck_assert(memcmp(back.quant->t[2].codes, c.quant->t[2].codes, (size_t)n.v) == 0);
    ac_case copy;
    ck_assert(ac_case_copy(&copy, &back, &e) == 0 && ac_case_hash(&copy) == ac_case_hash(&c));
    ac_case_free(&copy);
    ac_case_free(&back);
    ac_case_free(&c);
  }
}
END_TEST

/* Copies every member of src into dst but `name`, which is replaced by the given array (descr ""
 * drops it). */
static void rewrite(const char *src, const char *dst, const char *name, const char *descr, int ndim, const int64_t *shape,
                    const void *data, size_t nbytes)
{
  ac_err e;
  ac_npz *z = ac_npz_open(src, 1ull << 30, &e);
  ck_assert_msg(z != NULL, "%s", e.msg);
  ac_npz_writer *w = ac_npz_create(dst, &e);
  ck_assert(w != NULL);
  for (int i = 0; i < ac_npz_count(z); i++) {
    const char *mn = ac_npz_name(z, i);
    char base[64];
    snprintf(base, sizeof base, "%s", mn);
    char *dot = strstr(base, ".npy");
    if (dot) *dot = 0;
    if (!strcmp(base, name)) continue;
    ac_npz_member m;
    ck_assert(ac_npz_read(z, base, &m, &e) == 0);
    if (m.descr[0]) ck_assert(ac_npz_add_array(w, base, m.descr, m.ndim, m.shape, m.data, m.nbytes, &e) == 0);
    else ck_assert(ac_npz_add_bytes(w, base, m.data, m.nbytes, &e) == 0);
  }
  if (descr[0]) ck_assert(ac_npz_add_array(w, name, descr, ndim, shape, data, nbytes, &e) == 0);
  ck_assert(ac_npz_close(w, &e) == 0);
  ac_npz_close_reader(z);
}

/* info on a bad file: exit 2, one line on stderr naming the file and the problem. */
static void refused(const char *path, const char *want)
{
  char cmd[2048], out[4096];
  snprintf(cmd, sizeof cmd, "'%s' info '%s' 2>&1 >/dev/null", ac_test_attncheck(), path);
  int rc = ac_test_system(cmd, out, sizeof out);
  ck_assert_msg(rc == 2, "%s: exit %d (%s)", path, rc, out);
  ck_assert_msg(strstr(out, want) && strchr(out, '\n') == out + strlen(out) - 1, "%s: '%s' lacks '%s'", path, out, want);
}

/* dst: src with `from` replaced by `to` in its meta.json. */
static void rewrite_meta(const char *src, const char *dst, const char *from, const char *to)
{
  ac_err e;
  ac_npz *z = ac_npz_open(src, 1ull << 30, &e);
  ck_assert(z != NULL);
  ac_npz_member m;
  ck_assert(ac_npz_read(z, "meta.json", &m, &e) == 0);
  char *text = ac_xmalloc(m.nbytes + 256);
  const char *at = strstr((const char *)m.data, from);
  ck_assert_msg(at != NULL, "meta.json lacks %s", from);
  size_t pre = (size_t)(at - (const char *)m.data);
  snprintf(text, m.nbytes + 256, "%.*s%s%s", (int)pre, (const char *)m.data, to, at + strlen(from));
  ac_npz_close_reader(z);
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.nometa", dst);
  rewrite(src, tmp, "meta.json", "", 0, NULL, NULL, 0);
  z = ac_npz_open(tmp, 1ull << 30, &e);
  ac_npz_writer *w = ac_npz_create(dst, &e);
  for (int i = 0; i < ac_npz_count(z); i++) {
    char base[64];
    snprintf(base, sizeof base, "%s", ac_npz_name(z, i));
    char *dot = strstr(base, ".npy");
    if (dot) *dot = 0;
    ck_assert(ac_npz_read(z, base, &m, &e) == 0);
    ck_assert(ac_npz_add_array(w, base, m.descr, m.ndim, m.shape, m.data, m.nbytes, &e) == 0);
  }
  ck_assert(ac_npz_add_bytes(w, "meta.json", text, strlen(text), &e) == 0);
  ck_assert(ac_npz_close(w, &e) == 0);
  ac_npz_close_reader(z);
  free(text);
}

START_TEST(bad_files_refused)
{
  ac_case c;
  ac_err e;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 32, 32);
  ac_qspec q4 = {.fmt = AC_QF_Q4_0, .gran = AC_QG_BLOCK, .block = 32};
  ck_assert(ac_quant_apply(&c, 'k', &q4, &e) == 0);
  ac_qspec i8 = {.fmt = AC_QF_INT8, .gran = AC_QG_TOKEN, .block = 0};
  ck_assert(ac_quant_apply(&c, 'v', &i8, &e) == 0);
  char good[512], bad[512];
  snprintf(good, sizeof good, "%s/good.npz", ac_test_tmpdir());
  snprintf(bad, sizeof bad, "%s/bad.npz", ac_test_tmpdir());
  ck_assert(ac_case_write(&c, good, &e) == 0);
  uint8_t codes[64];
  memcpy(codes, c.quant->t[1].codes, 64);
  codes[37] = 16;
  const int64_t cs[4] = {1, 1, 2, 32}, ss[4] = {1, 1, 1, 1}, ds[4] = {1, 1, 2, 32};
  rewrite(good, bad, "k_codes", "|u1", 4, cs, codes, 64);
  refused(bad, "k_codes: code 16 at element 37 is out of q4_0's range 0..15");
  rewrite(good, bad, "k_scales", "<f2", 4, ss, c.quant->t[1].scales, 2);
  refused(bad, "member 'k_scales' has shape [1,1,1,1], meta.json's quant implies [1,1,2,1]");
  rewrite(good, bad, "k_scales", "<f4", 4, (const int64_t[]){1, 1, 2, 1}, codes, 8);
  refused(bad, "member 'k_scales' has descr '<f4', its format needs '<f2'");
  rewrite(good, bad, "v_zeros", "", 0, NULL, NULL, 0);
  refused(bad, "member 'v_zeros' missing (meta.json quant.v)");
  rewrite(good, bad, "k", "<f4", 4, ds, c.q, 256);
  refused(bad, "member 'k' beside a quantized k");
  rewrite(good, bad, "q_scales", "<f2", 1, (const int64_t[]){1}, codes, 2);
  refused(bad, "member 'q_scales' without a quantized tensor in meta.json's quant");
  rewrite_meta(good, bad, "\"q4_0\"", "\"q3_k\"");
  refused(bad, "meta.json quant.k.format: unknown format 'q3_k'");
  rewrite_meta(good, bad, "\"block\":32", "\"block\":16");
  refused(bad, "k: q4_0's block is 32 elements, not 16");
  rewrite_meta(good, bad, "\"granularity\":\"block\"", "\"granularity\":\"token\"");
  refused(bad, "k: q4_0 takes no token granularity");
  rewrite_meta(good, bad, "\"scale_dtype\":\"f16\"", "\"scale_dtype\":\"f32\"");
  refused(bad, "meta.json quant.k: q4_0: scale dtype f32 (it takes f16)");
  c.p.dk = 48;   /* the problem: a head dim the block does not divide */
  ck_assert(ac_problem_validate(&c.p, 1u << 30, &e) == -1);
  ck_assert_msg(strstr(e.msg, "dk 48 is not a multiple of q4_0's block of 32"), "%s", e.msg);
  c.p.dk = 32;
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("quant");
  TCase *tc = tcase_create("quant");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, specs_parse_and_refuse);
  tcase_add_loop_test(tc, every_code_value_exact, 0, AC_QF_N - AC_QF_Q8_0);
  tcase_add_test(tc, small_float_encoders);
  tcase_add_test(tc, ggml_block_bytes);
  tcase_add_test(tc, reference_quantizers);
  tcase_add_loop_test(tc, case_files_round_trip, 0, AC_QF_N - AC_QF_Q8_0);
  tcase_add_test(tc, bad_files_refused);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
