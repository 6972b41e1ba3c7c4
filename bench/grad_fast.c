/* bench/grad_fast.c: the backward oracle (oracle/grad.h) against a naive binary64 backward on the
 * same rows and columns (not run by make check). fp32 inputs and dO normal(0,1), causal, default
 * scale, one thread, -O2: the case, the baseline and the line of bench/grad_naive.h (shared with
 * `bench/oracle_fast grad`). The sample: R query rows (dQ) and C key columns (dK, dV) spread evenly.
 *   bench/grad_fast [T d R C [f64]]   (default 4096 128 16 8; f64: round into binary64 too) */
#include "config.h"
#include "grad_naive.h"

int main(int argc, char **argv)
{
  int64_t T = argc > 1 ? atoll(argv[1]) : 4096, d = argc > 2 ? atoll(argv[2]) : 128;
  int64_t R = argc > 3 ? atoll(argv[3]) : 16, C = argc > 4 ? atoll(argv[4]) : 8;
  if (T < 1 || d < 1 || R < 1 || C < 1 || R > T || C > T) {
    fprintf(stderr, "usage: bench/grad_fast [T d R C [f64]]\n");
    return 2;
  }
  ac_case c;
  float *dO;
  gn_make_case(&c, &dO, T, d, AC_MASK_CAUSAL);
  double r = gn_line(&c, dO, R, C, argc > 5 && !strcmp(argv[5], "f64"), "");
  free(dO);
  ac_case_free(&c);
  return r < 0 ? 3 : 0;
}
