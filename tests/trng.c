/* trng: xoshiro256** and splitmix64 known answers, stream reproducibility and independence,
 * distribution sanity of uniform, bounded, range and normal draws. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"
#include "testutil.h"

#define REQUIRE(expr, ...)                  \
  do {                                      \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* Published first outputs: xoshiro256** from state {1,2,3,4}, splitmix64 from state 0. */
START_TEST(known_answers)
{
  static const uint64_t xo[] = {11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL};
  ac_rng r = {{1, 2, 3, 4}};
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(ac_rng_next(&r), xo[i]);
  static const uint64_t sm[] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL};
  uint64_t s = 0;
  for (int i = 0; i < 3; i++) ck_assert_uint_eq(ac_splitmix64(&s), sm[i]);
}
END_TEST

/* Case k of a run regenerated alone equals case k generated after all the others. */
START_TEST(stream_regenerates_alone)
{
  const uint64_t seed = ac_test_seed();
  enum { K = 500, N = 64 };
  static uint64_t seq[K][N];
  for (int k = 0; k < K; k++) {
    ac_rng r;
    ac_rng_init(&r, seed, (uint64_t)k);
    for (int i = 0; i < N; i++) seq[k][i] = ac_rng_next(&r);
  }
  for (int k = K - 1; k >= 0; k -= 37) {
    ac_rng r;
    ac_rng_init(&r, seed, (uint64_t)k);
    for (int i = 0; i < N; i++)
      REQUIRE(ac_rng_next(&r) == seq[k][i], AC_SEED_FMT "stream %d output %d not reproducible", AC_SEED_ARG, k, i);
  }
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Different streams and different seeds start differently (no collision among 2*10^5 first words),
 * and neighbouring streams are not shifted copies of each other. */
START_TEST(streams_differ)
{
  enum { K = 100000 };
  uint64_t *first = malloc(2 * K * sizeof *first);
  ck_assert_ptr_nonnull(first);
  const uint64_t seed = ac_test_seed();
  for (int k = 0; k < K; k++) {
    ac_rng r;
    ac_rng_init(&r, seed, (uint64_t)k);
    first[k] = ac_rng_next(&r);
    ac_rng_init(&r, seed + 1 + (uint64_t)k, 0);
    first[K + k] = ac_rng_next(&r);
  }
  qsort(first, 2 * K, sizeof *first, cmp_u64);
  for (int i = 1; i < 2 * K; i++) REQUIRE(first[i] != first[i - 1], AC_SEED_FMT "collision of first outputs", AC_SEED_ARG);
  free(first);
  /* stream 1 is not stream 0 advanced by a few steps */
  ac_rng a, b;
  ac_rng_init(&a, seed, 0);
  ac_rng_init(&b, seed, 1);
  uint64_t b0 = ac_rng_next(&b);
  for (int i = 0; i < 1000; i++) REQUIRE(ac_rng_next(&a) != b0, AC_SEED_FMT "stream 1 appears in stream 0", AC_SEED_ARG);
  /* hash2 depends on both words and their order */
  ck_assert_uint_ne(ac_hash2(1, 2), ac_hash2(2, 1));
  ck_assert_uint_ne(ac_hash2(seed, 0), ac_hash2(seed, 1));
  ck_assert_uint_ne(ac_hash2(seed, 0), ac_hash2(seed + 1, 0));
  ck_assert_uint_eq(ac_hash2(seed, 5), ac_hash2(seed, 5));
}
END_TEST

START_TEST(uniform_is_uniform)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 1);
  enum { N = 1000000, BINS = 100 };
  long count[BINS] = {0};
  double sum = 0, sum2 = 0;
  for (int i = 0; i < N; i++) {
    double u = ac_rng_uniform(&r);
    REQUIRE(u >= 0 && u < 1, AC_SEED_FMT "uniform out of [0,1): %a", AC_SEED_ARG, u);
    REQUIRE(u == ldexp(floor(ldexp(u, 53)), -53), AC_SEED_FMT "not a multiple of 2^-53: %a", AC_SEED_ARG, u);
    sum += u;
    sum2 += u * u;
    count[(int)(u * BINS)]++;
  }
  double mean = sum / N, var = sum2 / N - mean * mean;
  ck_assert_msg(fabs(mean - 0.5) < 6 * sqrt(1.0 / 12 / N), AC_SEED_FMT "mean %a", AC_SEED_ARG, mean);
  ck_assert_msg(fabs(var - 1.0 / 12) < 0.002, AC_SEED_FMT "variance %a", AC_SEED_ARG, var);
  double chi2 = 0, e = (double)N / BINS;
  for (int b = 0; b < BINS; b++) chi2 += ((double)count[b] - e) * ((double)count[b] - e) / e;
  /* 99 degrees of freedom: mean 99, sd 14; 200 is beyond 7 sd */
  ck_assert_msg(chi2 < 200, AC_SEED_FMT "chi-square %g over %d bins", AC_SEED_ARG, chi2, BINS);
}
END_TEST

START_TEST(bounded_draws)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 2);
  long c3[3] = {0};
  for (int i = 0; i < 300000; i++) {
    uint64_t v = ac_rng_below(&r, 3);
    REQUIRE(v < 3, "below(3) gave %llu", (unsigned long long)v);
    c3[v]++;
  }
  for (int i = 0; i < 3; i++) ck_assert_msg(labs(c3[i] - 100000) < 2000, AC_SEED_FMT "below(3) count %ld", AC_SEED_ARG, c3[i]);
  ck_assert_uint_eq(ac_rng_below(&r, 1), 0);
  const uint64_t big = (1ULL << 63) + 12345;
  for (int i = 0; i < 1000; i++) REQUIRE(ac_rng_below(&r, big) < big, "below(2^63+12345) out of range");
  int seen_lo = 0, seen_hi = 0;
  for (int i = 0; i < 10000; i++) {
    int64_t v = ac_rng_range(&r, -3, 4);
    REQUIRE(v >= -3 && v <= 4, "range(-3,4) gave %lld", (long long)v);
    seen_lo |= v == -3;
    seen_hi |= v == 4;
  }
  ck_assert(seen_lo && seen_hi);
  ck_assert_int_eq(ac_rng_range(&r, 7, 7), 7);
  int neg = 0, pos = 0;
  for (int i = 0; i < 1000; i++) {
    int64_t v = ac_rng_range(&r, INT64_MIN, INT64_MAX);
    neg += v < 0;
    pos += v > 0;
  }
  ck_assert(neg > 400 && pos > 400);
}
END_TEST

START_TEST(normal_is_standard_normal)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 3);
  enum { N = 1000000 };
  double sum = 0, sum2 = 0, sum4 = 0;
  long within1 = 0;
  for (int i = 0; i < N; i++) {
    double z = ac_rng_normal(&r);
    REQUIRE(isfinite(z), "normal gave %a", z);
    sum += z;
    sum2 += z * z;
    sum4 += z * z * z * z;
    within1 += fabs(z) < 1;
  }
  double mean = sum / N, var = sum2 / N - mean * mean, kurt = sum4 / N;
  ck_assert_msg(fabs(mean) < 6 / sqrt(N), AC_SEED_FMT "mean %g", AC_SEED_ARG, mean);
  ck_assert_msg(fabs(var - 1) < 6 * sqrt(2.0 / N), AC_SEED_FMT "variance %g", AC_SEED_ARG, var);
  ck_assert_msg(fabs(kurt - 3) < 0.1, AC_SEED_FMT "fourth moment %g", AC_SEED_ARG, kurt);
  ck_assert_msg(fabs((double)within1 / N - 0.682689) < 0.003, AC_SEED_FMT "P(|z|<1) = %g", AC_SEED_ARG, (double)within1 / N);
}
END_TEST

START_TEST(split_is_reproducible_and_distinct)
{
  ac_rng a, b, ca, cb;
  ac_rng_init(&a, ac_test_seed(), 9);
  ac_rng_init(&b, ac_test_seed(), 9);
  ac_rng_split(&a, &ca);
  ac_rng_split(&b, &cb);
  for (int i = 0; i < 100; i++) {
    uint64_t x = ac_rng_next(&ca);
    REQUIRE(x == ac_rng_next(&cb), "split not reproducible");
    REQUIRE(x != ac_rng_next(&a), "child repeats the parent");
    ac_rng_next(&b);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rng");
  TCase *tc = tcase_create("rng");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, known_answers);
  tcase_add_test(tc, stream_regenerates_alone);
  tcase_add_test(tc, streams_differ);
  tcase_add_test(tc, uniform_is_uniform);
  tcase_add_test(tc, bounded_draws);
  tcase_add_test(tc, normal_is_standard_normal);
  tcase_add_test(tc, split_is_reproducible_and_distinct);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
