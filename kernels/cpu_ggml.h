/* cpu_ggml.h: ggml's CPU flash-attention arithmetic (cpu_ggml.c), shared with its mutants. */
#ifndef AC_CPU_GGML_H
#define AC_CPU_GGML_H
#include "cpu_common.h"

typedef enum {
  AC_GGML_F16,         /* ggml-f16-style: Q rounded to f16, f16 V accumulator */
  AC_GGML_Q8,          /* q8q-f32-style: Q rounded to q8_0 blocks, binary32 V accumulator */
  AC_GGML_F16_BF16ACC, /* mutant: the V accumulator in bf16 where f16 was meant */
  AC_GGML_Q8_AS_Q4     /* mutant: Q quantized with 4-bit codes (max|x|/7) where q8_0 was meant */
} ac_ggml_mode;

int ac_cpu_ggml_run(ac_ggml_mode m, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                    size_t err_len);
/* A key's Q.K as a kernel forms it from the row of Q as given (before its q8 rounding) and key j of
 * kv head kvh of batch b, in place of the dot of the rounded row with K's values (ggml's q4_1 and
 * q5_1 K against Q's q8_1 blocks, cpu_quant_paths.c). */
typedef struct {
  float (*dot)(void *ctx, const float *q_row, int64_t b, int64_t kvh, int64_t j);
  void *ctx;
} ac_ggml_dot;
int ac_cpu_ggml_run_dot(ac_ggml_mode m, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                        const ac_ggml_dot *dot, char *err, size_t err_len);
/* supports() of ggml-f16-style: f16 K and V with f32 Q and O, or f16 throughout. */
int ac_cpu_ggml_f16_supports(const attncheck_problem *p, char *why, size_t why_len);
/* q8_0 of x[0..n) into q (dequantized values f16(d) code, d = max|x|/qmax over each block of 32,
 * the last partial; qmax 127, or 7 for a 4-bit defect). */
void ac_cpu_q8_row(const float *x, float *q, int64_t n, int qmax);

extern const attncheck_kernel ac_cpu_ggml_f16, ac_cpu_q8q_f32;

#endif
