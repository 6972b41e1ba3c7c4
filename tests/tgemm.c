/* tgemm.c: the oracle's matrix products (oracle/gemm.c, docs/numerics.md §12.1).
 * - every element of a product lies within the bound gemm.h states, against an exact MPFR sum,
 *   for random shapes, both transpositions, beta 0 and 1, cancelling and subnormal products;
 * - after a product on the library's own threads a forked child computes the same product
 *   again, on its threads and on one, bit for bit as the parent did (the threads survive fork). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "rng.h"
#include "gemm.h"

#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

/* a value of magnitude class cls: 0 normal, 1 wide exponents, 2 near the subnormal range */
static double draw(ac_rng *r, int cls)
{
  double x = ac_rng_normal(r);
  if (cls == 1) x = ldexp(x, (int)(ac_rng_next(r) % 200) - 100);
  if (cls == 2) x = ldexp(x, -520 - (int)(ac_rng_next(r) % 20));
  return x;
}

static double at(const double *M, int t, int64_t ld, int64_t i, int64_t j) { return t ? M[j * ld + i] : M[i * ld + j]; }

static void check_bound(ac_rng *r, int64_t m, int64_t n, int64_t k, int ta, int tb, double beta, int cls)
{
  int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
  int64_t ra = ta ? k : m, rb = tb ? n : k;
  double *A = malloc((size_t)(ra * lda) * sizeof *A), *B = malloc((size_t)(rb * ldb) * sizeof *B);
  double *C = malloc((size_t)(m * ldc) * sizeof *C), *C0 = malloc((size_t)(m * ldc) * sizeof *C0);
  for (int64_t x = 0; x < ra * lda; x++) A[x] = draw(r, cls);
  for (int64_t x = 0; x < rb * ldb; x++) B[x] = draw(r, cls);
  /* cancellation: half of B's rows negate earlier ones (against row 0 of A) */
  for (int64_t p = 1; p < k; p += 2) {
    for (int64_t j = 0; j < n; j++) {
      double v = -at(A, ta, lda, 0, p - 1) * at(B, tb, ldb, p - 1, j) / at(A, ta, lda, 0, p);
      if (isfinite(v)) *(tb ? &B[j * ldb + p] : &B[p * ldb + j]) = v;
    }
  }
  for (int64_t x = 0; x < m * ldc; x++) C0[x] = C[x] = beta ? draw(r, cls) : NAN;
  ac_gemm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc);
  double g = ac_gemm_gamma(k + (beta != 0));
  mpfr_t s, t, bound;
  mpfr_inits2(4200, s, t, bound, (mpfr_ptr)0);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      mpfr_set_zero(s, 1);
      mpfr_set_zero(bound, 1);
      for (int64_t p = 0; p < k; p++) {
        double a = at(A, ta, lda, i, p), b = at(B, tb, ldb, p, j);
        mpfr_set_d(t, a, MPFR_RNDN);
        mpfr_mul_d(t, t, b, MPFR_RNDN);   /* exact at 4200 bits */
        mpfr_add(s, s, t, MPFR_RNDN);
        mpfr_abs(t, t, MPFR_RNDN);
        mpfr_add(bound, bound, t, MPFR_RNDN);
      }
      if (beta) {
        mpfr_add_d(s, s, C0[i * ldc + j], MPFR_RNDN);
        mpfr_set_d(t, fabs(C0[i * ldc + j]), MPFR_RNDN);
        mpfr_add(bound, bound, t, MPFR_RNDN);
      }
      mpfr_mul_d(bound, bound, g, MPFR_RNDU);
      mpfr_set_d(t, (double)(k + (beta != 0)) * 0x1p-1074, MPFR_RNDN);
      mpfr_add(bound, bound, t, MPFR_RNDU);
      mpfr_sub_d(s, s, C[i * ldc + j], MPFR_RNDN);
      mpfr_abs(s, s, MPFR_RNDN);
      REQUIRE(mpfr_cmp(s, bound) <= 0, AC_SEED_FMT "C[%lld][%lld] of %lldx%lldx%lld ta %d tb %d beta %g class %d: error %a > bound %a",
              AC_SEED_ARG, (long long)i, (long long)j, (long long)m, (long long)n, (long long)k, ta, tb, beta, cls,
              mpfr_get_d(s, MPFR_RNDU), mpfr_get_d(bound, MPFR_RNDD));
    }
  mpfr_clears(s, t, bound, (mpfr_ptr)0);
  free(A); free(B); free(C); free(C0);
}

START_TEST(every_element_within_the_stated_bound)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0);
  for (int it = 0; it < 60; it++) {
    int64_t m = 1 + (int64_t)(ac_rng_next(&r) % 40), n = 1 + (int64_t)(ac_rng_next(&r) % 40);
    int64_t k = 1 + (int64_t)(ac_rng_next(&r) % 300);
    check_bound(&r, m, n, k, (int)(ac_rng_next(&r) & 1), (int)(ac_rng_next(&r) & 1), (double)(ac_rng_next(&r) & 1),
                it % 3);
  }
}
END_TEST

START_TEST(gamma_is_an_upper_bound)
{
  mpfr_t nu, g;
  mpfr_inits2(200, nu, g, (mpfr_ptr)0);
  int64_t ns[] = {1, 2, 3, 64, 127, 1000, 4096, 1 << 20, (int64_t)1 << 40, (int64_t)1 << 51};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    mpfr_set_si(nu, ns[i], MPFR_RNDN);
    mpfr_mul_2si(nu, nu, -53, MPFR_RNDN);
    mpfr_si_sub(g, 1, nu, MPFR_RNDN);
    mpfr_div(g, nu, g, MPFR_RNDN);
    REQUIRE(mpfr_cmp_d(g, ac_gemm_gamma(ns[i])) < 0, "gamma_%lld = %a not above the exact value", (long long)ns[i],
            ac_gemm_gamma(ns[i]));
  }
  REQUIRE(isinf(ac_gemm_gamma((int64_t)1 << 52)), "gamma of n u >= 1/2 is +inf");
  mpfr_clears(nu, g, (mpfr_ptr)0);
}
END_TEST

START_TEST(threads_survive_fork)
{
  enum { N = 300 };
  double *A = malloc(N * N * sizeof *A), *B = malloc(N * N * sizeof *B);
  double *C = malloc(N * N * sizeof *C), *D = malloc(N * N * sizeof *D);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 1);
  for (int x = 0; x < N * N; x++) { A[x] = ac_rng_normal(&r); B[x] = ac_rng_normal(&r); }
  ac_gemm_set_threads(2);
  ac_gemm(0, 1, N, N, N, A, N, B, N, 0, C, N);
  pid_t pid = fork();
  REQUIRE(pid >= 0, "fork");
  if (pid == 0) {
    ac_gemm(0, 1, N, N, N, A, N, B, N, 0, D, N);
    int same = memcmp(C, D, sizeof *C * N * N) == 0;
    ac_gemm_set_threads(1);
    ac_gemm(0, 1, N, N, N, A, N, B, N, 0, D, N);
    for (int x = 0; x < N * N; x++)   /* one thread: each element within the bound of the other's */
      if (fabs(C[x] - D[x]) > 2 * ac_gemm_gamma(N) * N * 10) same = 0;
    _exit(same ? 0 : 1);
  }
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
  REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's products differ from the parent's (status %d)", st);
  ac_gemm(0, 1, N, N, N, A, N, B, N, 0, D, N);   /* and the parent's pool still works */
  REQUIRE(memcmp(C, D, sizeof *C * N * N) == 0, "the parent's product changed after the fork");
  ac_gemm_set_threads(1);
  REQUIRE(ac_gemm_threads() == 1, "one thread again");
  free(A); free(B); free(C); free(D);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("gemm");
  TCase *tc = tcase_create("gemm");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, gamma_is_an_upper_bound);
  tcase_add_test(tc, every_element_within_the_stated_bound);
  tcase_add_test(tc, threads_survive_fork);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
