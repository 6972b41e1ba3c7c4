/* tdtype_f16: binary32 -> f16 rounding. All 2^32 inputs against GCC's _Float16 conversion,
 * a random sample and every halfway case against MPFR. */
#include "config.h"
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include "dtype.h"
#include "rng.h"
#include "util.h"
#include "tdtype_ref.h"
#include "testutil.h"

#ifdef __FLT16_MAX__
static void gcc_block(const float *x, uint16_t *out, int n)
{
  for (int i = 0; i < n; i++) {
    _Float16 h = (_Float16)x[i];
    memcpy(&out[i], &h, sizeof h);
  }
}

#if defined(__x86_64__) || defined(__i386__)
/* The same conversion compiled for F16C (vcvtps2ph): much faster than libgcc's soft-fp. */
__attribute__((target("f16c"))) static void gcc_block_f16c(const float *x, uint16_t *out, int n)
{
  for (int i = 0; i < n; i++) {
    _Float16 h = (_Float16)x[i];
    memcpy(&out[i], &h, sizeof h);
  }
}
#endif

static ref_block_fn reference(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("f16c")) return gcc_block_f16c;
#endif
  return gcc_block;
}

/* The two references must agree where both exist. */
START_TEST(gcc_references_agree)
{
  ref_block_fn ref = reference();
  float x[4096];
  uint16_t a[4096], b[4096];
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), 3);
  for (int i = 0; i < 4096; i++) {
    uint32_t u = (uint32_t)ac_rng_next(&g);
    memcpy(&x[i], &u, sizeof u);
  }
  ref(x, a, 4096);
  gcc_block(x, b, 4096);
  for (int i = 0; i < 4096; i++)
    REF_REQUIRE(a[i] == b[i], AC_SEED_FMT "references differ at %a: 0x%04x vs 0x%04x", AC_SEED_ARG, (double)x[i], a[i], b[i]);
}
END_TEST

START_TEST(all_binary32_match_gcc_float16)
{
  uint32_t in = 0;
  uint16_t got = 0, want = 0;
  double t0 = ac_now();
  uint64_t bad = ref_exhaustive_f32(ac_f16_from_f32, reference(), ref_test_threads(), &in, &got, &want);
  fprintf(stderr, "f16 exhaustive: %.1f s with %d thread(s)\n", ac_now() - t0, ref_test_threads());
  float x;
  memcpy(&x, &in, sizeof x);
  ck_assert_msg(bad == 0, "%llu of 2^32 inputs differ; first: 0x%08x (%a) gave 0x%04x, _Float16 gives 0x%04x",
                (unsigned long long)bad, in, (double)x, got, want);
}
END_TEST
#endif

START_TEST(random_binary32_match_mpfr)
{
  char msg[512] = "";
  /* 10^7; 10^8 when expensive; 10^6 in sanitizer builds, which look for memory errors, not roundings */
  uint64_t n = ac_test_expensive() ? 100000000 : strcmp(AC_BUILD_SANITIZERS, "yes") == 0 ? 1000000 : 10000000;
  double t0 = ac_now();
  uint64_t bad = ref_sample_f32(REF_F16, ac_f16_from_f32, n, ac_test_seed(), msg, sizeof msg);
  fprintf(stderr, "f16 MPFR sample of %llu: %.1f s\n", (unsigned long long)n, ac_now() - t0);
  ck_assert_msg(bad == 0, AC_SEED_FMT "%llu mismatches; first: %s", AC_SEED_ARG, (unsigned long long)bad, msg);
}
END_TEST

START_TEST(every_halfway_case_matches_mpfr)
{
  char msg[512] = "";
  uint64_t bad = ref_halfway_f32(REF_F16, ac_f16_from_f32, msg, sizeof msg);
  ck_assert_msg(bad == 0, "%llu mismatches; first: %s", (unsigned long long)bad, msg);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("dtype_f16");
  TCase *tc = tcase_create("f16");
  tcase_set_timeout(tc, 900);
#ifdef __FLT16_MAX__
  tcase_add_test(tc, gcc_references_agree);
  tcase_add_test(tc, all_binary32_match_gcc_float16);
#else
  fprintf(stderr, "this compiler has no _Float16: the exhaustive comparison is skipped\n");
#endif
  tcase_add_test(tc, random_binary32_match_mpfr);
  tcase_add_test(tc, every_halfway_case_matches_mpfr);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
