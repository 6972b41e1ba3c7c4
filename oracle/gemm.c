/* gemm.c: ac_gemm on OpenBLAS (docs/numerics.md §12).
 *
 * OpenBLAS computes every element of a product with binary64 multiplications, additions and
 * FMAs in some order (blocked, vectorized, split over threads along m and n, never along k),
 * which is all the bound of gemm.h needs: Higham, Accuracy and Stability of Numerical
 * Algorithms, (3.5) and §3.1, for any order and with FMA; an underflowing product or FMA adds at
 * most 2^-1075 absolutely, later scaled by at most 1 + gamma_n < 2, hence the (k + beta) 2^-1074
 * (binary32, ac_gemm_f32: the same with u = 2^-24 and 2^-149).
 * The library is asked for one thread by default: the oracle's workers split the tiles, so the
 * work of --threads N is one pool, and its idle pool has nothing to lose across fork (OpenBLAS
 * also shuts its pool down before a fork and restarts it after, pthread_atfork). */
#include "config.h"
#include "gemm.h"
#include <cblas.h>
#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init_threads(void) { openblas_set_num_threads(1); }

void ac_gemm_set_threads(int n)
{
  pthread_once(&once, init_threads);
  openblas_set_num_threads(n < 1 ? 1 : n);
}

int ac_gemm_threads(void)
{
  pthread_once(&once, init_threads);
  return openblas_get_num_threads();
}

void ac_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
             int64_t ldb, double beta, double *C, int64_t ldc)
{
  pthread_once(&once, init_threads);
  if (m <= 0 || n <= 0) return;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
              (blasint)n, (blasint)k, 1.0, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}

void ac_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc)
{
  pthread_once(&once, init_threads);
  if (m <= 0 || n <= 0) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
              (blasint)n, (blasint)k, 1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}

double ac_gemm_gamma_f32(int64_t n)
{
  double nu = (double)n * 0x1p-24;   /* exact for n < 2^53 */
  if (!(nu < 0.5)) return __builtin_inf();
  return nu / (1 - nu) * (1 + 0x1p-51);   /* as ac_gemm_gamma, in binary64 */
}

double ac_gemm_gamma(int64_t n)
{
  double nu = (double)n * 0x1p-53;   /* exact for n < 2^53 */
  if (!(nu < 0.5)) return __builtin_inf();
  /* 1 - nu is exact (a multiple of 2^-53 in [1/2, 1]); the division errs by at most 2^-53
   * relatively and the product by 2^-53 again, so g (1 + 2^-51) rounded is above nu / (1 - nu) */
  double g = nu / (1 - nu);
  return g * (1 + 0x1p-51);
}

const char *ac_gemm_backend(void)
{
  /* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64" */
  return openblas_get_config();
}
