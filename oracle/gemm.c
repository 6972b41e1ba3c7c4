/* gemm.c: ac_gemm on OpenBLAS (docs/numerics.md §12).
 *
 * OpenBLAS computes every element of a product with binary64 multiplications, additions and
 * FMAs in some order (blocked, vectorized, split over threads along m and n, never along k),
 * which is all the bound of gemm.h needs: Higham, Accuracy and Stability of Numerical
 * Algorithms, (3.5) and §3.1, for any order and with FMA; an underflowing product or FMA adds at
 * most 2^-1075 absolutely, later scaled by at most 1 + gamma_n < 2, hence the (k + beta) 2^-1074
 * (binary32, ac_gemm_f32: the same with u = 2^-24 and 2^-149).
 * The library is loaded at the first product (dlopen of the file configure found, AC_BLAS_LIB)
 * with OPENBLAS_NUM_THREADS=1 in the environment for the time of its constructor, so that its pool
 * has no thread: the oracle's workers split the tiles, the work of --threads N is one pool, a
 * process that never multiplies never loads it, and nothing of the library's lives across a fork
 * (OpenBLAS also shuts a pool down before a fork and restarts it after, pthread_atfork). */
#include "config.h"
#include "gemm.h"
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util.h"

static struct {
  __typeof__(&cblas_dgemm) dgemm;
  __typeof__(&cblas_sgemm) sgemm;
  __typeof__(&openblas_set_num_threads) set_threads;
  __typeof__(&openblas_get_num_threads) get_threads;
  __typeof__(&openblas_get_config) config;
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *sym(void *h, const char *name)
{
  void *f = dlsym(h, name);
  if (!f) {
    fprintf(stderr, "attncheck: %s lacks %s\n", AC_BLAS_LIB, name);
    fflush(stdout);
    _exit(AC_EXIT_INTERNAL);
  }
  return f;
}

static void load(void)
{
  const char *was = getenv("OPENBLAS_NUM_THREADS");
  char *keep = was ? strdup(was) : NULL;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  void *h = dlopen(AC_BLAS_LIB, RTLD_NOW | RTLD_LOCAL);
  if (keep) setenv("OPENBLAS_NUM_THREADS", keep, 1);
  else unsetenv("OPENBLAS_NUM_THREADS");
  free(keep);
  if (!h) {
    fprintf(stderr, "attncheck: cannot load OpenBLAS: %s\n", dlerror());
    fflush(stdout);
    _exit(AC_EXIT_INTERNAL);
  }
  *(void **)&lib.dgemm = sym(h, "cblas_dgemm");
  *(void **)&lib.sgemm = sym(h, "cblas_sgemm");
  *(void **)&lib.set_threads = sym(h, "openblas_set_num_threads");
  *(void **)&lib.get_threads = sym(h, "openblas_get_num_threads");
  *(void **)&lib.config = sym(h, "openblas_get_config");
  lib.set_threads(1);
}

void ac_gemm_set_threads(int n)
{
  pthread_once(&once, load);
  lib.set_threads(n < 1 ? 1 : n);
}

int ac_gemm_threads(void)
{
  pthread_once(&once, load);
  return lib.get_threads();
}

void ac_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
             int64_t ldb, double beta, double *C, int64_t ldc)
{
  pthread_once(&once, load);
  if (m <= 0 || n <= 0) return;
  lib.dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
            (blasint)k, 1.0, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}

void ac_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc)
{
  pthread_once(&once, load);
  if (m <= 0 || n <= 0) return;
  lib.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
            (blasint)k, 1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
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
  pthread_once(&once, load);
  return lib.config();
}
