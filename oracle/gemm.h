/* gemm.h: the binary64 matrix products of the oracle's certified level 0 (docs/numerics.md
 * §12), behind one small interface so that a device implementation (cuBLAS) can sit beside
 * the CPU one (OpenBLAS, gemm.c).
 *
 * Matrices are row-major with leading dimensions in elements. The error of every computed
 * element holds for any summation order, with or without FMA (docs/numerics.md §12.1):
 *     |C - (op(A) op(B) + beta C0)| <= gamma_{k+beta} (|op(A)| |op(B)| + beta |C0|) + (k + beta) 2^-1074
 * provided no partial result overflows (every sum of |a||b| below 2^1023). */
#ifndef AC_GEMM_H
#define AC_GEMM_H

#include <stdint.h>

/* C = op(A) op(B) + beta C; op(A) is m x k, op(B) k x n; ta, tb: 0 as stored, 1 transposed;
 * beta 0 (C is not read) or 1. */
void ac_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
             int64_t ldb, double beta, double *C, int64_t ldc);

/* gamma_n = n 2^-53 / (1 - n 2^-53), rounded upwards (+inf when n 2^-53 >= 1/2). */
double ac_gemm_gamma(int64_t n);

/* The same product in binary32 (u = 2^-24), with the same argument:
 *     |C - (op(A) op(B) + beta C0)| <= gamma32_{k+beta} (|op(A)| |op(B)| + beta |C0|) + (k + beta) 2^-149
 * provided no partial result overflows (every sum of |a||b| below 2^127). */
void ac_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc);
/* gamma32_n = n 2^-24 / (1 - n 2^-24), rounded upwards (+inf when n 2^-24 >= 1/2). */
double ac_gemm_gamma_f32(int64_t n);

/* Threads inside one product. The oracle's own worker threads split the tiles and call it with
 * 1 (the default); n > 1 lets the library use its own pool. Process-wide. */
void ac_gemm_set_threads(int n);
int ac_gemm_threads(void);

/* The library, its version and the kernel it chose ("OpenBLAS 0.3.21 DYNAMIC_ARCH ... SkylakeX ..."). */
const char *ac_gemm_backend(void);

#endif /* AC_GEMM_H */
