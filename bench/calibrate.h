/* calibrate.h: the case draws of bench/calibrate (calcase.c), shared with its backward mode
 * (calibrate_grad.c) and tests/tpreset_budgets. */
#ifndef AC_BENCH_CALIBRATE_H
#define AC_BENCH_CALIBRATE_H
#include <stddef.h>
#include <stdint.h>
#include "casefile.h"

/* Draws the case of seed (dtype t) into c; returns its family; rows receives the forward's row
 * spec ("" = all), desc a one-line description. */
int cal_make_case(ac_dtype t, uint64_t seed, ac_case *c, char *rows, size_t rn, char *desc, size_t dn);
/* A variant of c (the same Q, K, V, dO) with features drawn among caps into out; vdesc is desc
 * with the variant's name. -1 when caps allow none. */
int cal_make_variant(const ac_case *c, uint32_t caps, uint64_t seed, ac_case *out, const char *desc, char *vdesc,
                     size_t n);
/* A mixed-dtype copy of the plain case c (the paths of ggml and FlashAttention 3): a binary32 case
 * with K and V rounded to f16 or bf16, an fp8 case with a bf16, f16 or f32 output. -1 for the
 * other dtypes. */
int cal_make_mixed(const ac_case *c, uint64_t seed, ac_case *out, const char *desc, char *vdesc, size_t n);
/* The same with K and V of an f32 case in dtype kv (-1: f16 or bf16 as drawn). */
int cal_make_mixed_kv(const ac_case *c, uint64_t seed, int kv, ac_case *out, const char *desc, char *vdesc, size_t n);
/* The q-quantile of v[0..n) (sorts v; 0 for n = 0). */
double cal_quantile(double *v, int64_t n, double q);
/* bench/calibrate --grad ...: argv[0] is "--grad" (calibrate_grad.c). */
int cal_grad_main(int argc, char **argv);

#endif
