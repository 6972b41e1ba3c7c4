/* tdtype_bf16: binary32 -> bf16 rounding. All 2^32 inputs against a reference that rounds with
 * the FPU (add and subtract a binary64 constant whose ulp is the bf16 quantum), a random sample
 * and every halfway case against MPFR. */
#include "config.h"
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include "dtype.h"
#include "rng.h"
#include "util.h"
#include "tdtype_ref.h"
#include "testutil.h"

/* Reference: for |x| with binary32 biased exponent E (1 for subnormals), the bf16 quantum is
 * q = 2^(E - 127 - 7). C = 1.5 * 2^52 * q has ulp q and |x| < 2^-43 C, so (|x| + C) - C is |x|
 * rounded to a multiple of q by the FPU, nearest-even. NaN: quiet, payload truncated. */
static uint16_t ref_bf16(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7fc0 | ((a >> 16) & 0x7f));
  const double ax = fabs((double)x);
  if (isinf(ax)) return sign | 0x7f80;
  int E = (int)(a >> 23);
  if (E == 0) E = 1;
  /* C = ldexp(1.5, E - 127 - 7 + 52), built directly (ldexp is slow in a 2^32 loop) */
  const uint64_t cb = ((uint64_t)(E - 127 - 7 + 52 + 1023) << 52) | (1ULL << 51);
  double C;
  memcpy(&C, &cb, sizeof C);
  const double r = (ax + C) - C;
  if (r >= 0x1p128) return sign | 0x7f80;
  float f = (float)r;   /* exact: r has at most 8 significant bits and is in range */
  uint32_t fb;
  memcpy(&fb, &f, sizeof fb);
  return (uint16_t)(sign | (fb >> 16));
}

static void ref_block(const float *x, uint16_t *out, int n)
{
  for (int i = 0; i < n; i++) out[i] = ref_bf16(x[i]);
}

/* The reference itself against MPFR on a sample and the halfway cases, so a wrong reference
 * cannot pass unnoticed. */
START_TEST(reference_matches_mpfr)
{
  char msg[512] = "";
  uint64_t bad = ref_sample_f32(REF_BF16, ref_bf16, 200000, ac_test_seed() + 1, msg, sizeof msg);
  ck_assert_msg(bad == 0, AC_SEED_FMT "reference: %llu mismatches; first: %s", AC_SEED_ARG, (unsigned long long)bad, msg);
  bad = ref_halfway_f32(REF_BF16, ref_bf16, msg, sizeof msg);
  ck_assert_msg(bad == 0, "reference: %llu mismatches; first: %s", (unsigned long long)bad, msg);
}
END_TEST

START_TEST(all_binary32_match_reference)
{
  uint32_t in = 0;
  uint16_t got = 0, want = 0;
  double t0 = ac_now();
  uint64_t bad = ref_exhaustive_f32(ac_bf16_from_f32, ref_block, ref_test_threads(), &in, &got, &want);
  fprintf(stderr, "bf16 exhaustive: %.1f s with %d thread(s)\n", ac_now() - t0, ref_test_threads());
  float x;
  memcpy(&x, &in, sizeof x);
  ck_assert_msg(bad == 0, "%llu of 2^32 inputs differ; first: 0x%08x (%a) gave 0x%04x, reference 0x%04x",
                (unsigned long long)bad, in, (double)x, got, want);
}
END_TEST

START_TEST(random_binary32_match_mpfr)
{
  char msg[512] = "";
  /* 10^7; 10^8 when expensive; 10^6 in sanitizer builds, which look for memory errors, not roundings */
  uint64_t n = ac_test_expensive() ? 100000000 : strcmp(AC_BUILD_SANITIZERS, "yes") == 0 ? 1000000 : 10000000;
  double t0 = ac_now();
  uint64_t bad = ref_sample_f32(REF_BF16, ac_bf16_from_f32, n, ac_test_seed(), msg, sizeof msg);
  fprintf(stderr, "bf16 MPFR sample of %llu: %.1f s\n", (unsigned long long)n, ac_now() - t0);
  ck_assert_msg(bad == 0, AC_SEED_FMT "%llu mismatches; first: %s", AC_SEED_ARG, (unsigned long long)bad, msg);
}
END_TEST

START_TEST(every_halfway_case_matches_mpfr)
{
  char msg[512] = "";
  uint64_t bad = ref_halfway_f32(REF_BF16, ac_bf16_from_f32, msg, sizeof msg);
  ck_assert_msg(bad == 0, "%llu mismatches; first: %s", (unsigned long long)bad, msg);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("dtype_bf16");
  TCase *tc = tcase_create("bf16");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, reference_matches_mpfr);
  tcase_add_test(tc, all_binary32_match_reference);
  tcase_add_test(tc, random_binary32_match_mpfr);
  tcase_add_test(tc, every_halfway_case_matches_mpfr);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
