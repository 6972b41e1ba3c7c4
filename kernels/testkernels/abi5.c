/* abi5.c: test kernels of the ABI 5 declarations (kernels/attncheck_kernel.h): a run() that
 * refuses a case after seeing it, declared empty-row conventions, and the precision class of
 * the path a kernel takes per problem. */
#include "config.h"
#include "testkernels.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dtype.h"

extern const attncheck_kernel ac_cpu_flash_f16, ac_cpu_cublas_f16;

/* The reference, refused by run() (not supports()) when the case has more than 8 keys. */
static int run_refusing(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  if (p->tk > 8) {
    snprintf(err, n, ATTNCHECK_UNSUPPORTED " more than 8 keys (one tile of 8 only)");
    return 1;
  }
  return ac_tk_reference(p, t, 0, err, n);
}

/* The same refusal after writing past the end of o: GUARD all the same. */
static int run_refusing_scribble(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int64_t last = ac_tk_off(p->o_stride, p->batch - 1, p->heads - 1, p->tq - 1, p->dv - 1);
  ac_store_bits((ac_dtype)p->dtype, t->o, (size_t)(last + 1), 0);
  return run_refusing(p, t, err, n);
}

/* The reference with rows of no visible key written as NaN in o and in the LSE (empty rows
 * arise only under causal-bottom-right with tq > tk here: caps 0). */
static int run_empty_nan(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int rc = ac_tk_reference(p, t, 0, err, n);
  ac_dtype dt = (ac_dtype)p->dtype;
  for (int64_t b = 0; !rc && b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT && i < p->tq - p->tk; i++) {
        for (int64_t d = 0; d < p->dv; d++)
          ac_store_bits(dt, t->o, (size_t)ac_tk_off(p->o_stride, b, h, i, d), ac_encode_f64(dt, NAN));
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = NAN;
      }
  return rc;
}

/* The reference with rows of no visible key written as the mean of V over every key (JAX's and MLX's
 * convention, ATTNCHECK_EMPTY_MEAN_V), summed in binary64 and rounded once. */
static int run_empty_mean_v(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int rc = ac_tk_reference(p, t, 0, err, n);
  ac_dtype dt = (ac_dtype)p->dtype;
  for (int64_t b = 0; !rc && b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT && i < p->tq - p->tk; i++)
        for (int64_t d = 0; d < p->dv; d++) {
          double s = 0;
          for (int64_t j = 0; j < p->tk; j++)
            s += ac_load(dt, t->v, (size_t)ac_tk_off(p->v_stride, b, h / (p->heads / p->kv_heads), j, d));
          ac_store_bits(dt, t->o, (size_t)ac_tk_off(p->o_stride, b, h, i, d), ac_encode_f64(dt, s / (double)p->tk));
        }
  return rc;
}

static int run_reference(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_tk_reference(p, t, 0, err, n);
}

/* Two paths of f16 attention: tiles with binary32 scores and sums (flash-f16, fp16-fa2) up to
 * 64 keys, a GEMM composite storing scores and P in f16 (cublas-style-f16, fp16-cublas) beyond. */
static int paths_supports(const attncheck_problem *p, char *why, size_t n)
{
  return ac_cpu_cublas_f16.supports(p, why, n);
}

static int paths_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return (p->tk <= 64 ? ac_cpu_flash_f16.run : ac_cpu_cublas_f16.run)(p, t, err, n);
}

static int paths_class(const attncheck_problem *p, char *cls, size_t n)
{
  snprintf(cls, n, "%s", p->tk <= 64 ? "fp16-fa2" : "fp16-cublas");
  return 1;
}

static int bad_class(const attncheck_problem *p, char *cls, size_t n)
{
  snprintf(cls, n, "%s", p->tk <= 64 ? "fp16-fa2" : "fp16-no-such-class");
  return 1;
}

/* test-leak-row-fail: test-masked-leak (a NaN stored at a masked key reaches the output) that is
 * also wrong by 1 in one interior row of every (batch, head) once a case has more than 48 rows
 * (the fuzzer then judges a row sample, which rarely holds that row): a campaign must label its
 * findings from the whole case (a FAIL), not from the sample (a MASKED-LEAK alone). */
static int supports_f32(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype == ATTNCHECK_F32) return 1;
  snprintf(why, n, "f32 only");
  return 0;
}

static int run_leak_row_fail(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int rc = ac_tk_reference(p, t, 1, err, n);
  int64_t i = p->tq / 2 + 3;
  if (rc || p->batch * p->heads * p->tq <= 48 || i % 16 == 0 || i % 16 == 15 || i >= p->tq - 1) return rc;
  float *o = t->o;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t d = 0; d < p->dv; d++) o[ac_tk_off(p->o_stride, b, h, i, d)] += 1.0f;
  return 0;
}

/* test-square-only: the reference for square self-attention only: supports() refuses GQA,
 * dv != dk, tq != tk and an explicit scale (the fuzzer must not draw them). */
static int supports_square(const attncheck_problem *p, char *why, size_t n)
{
  double s = 1.0 / sqrt((double)p->dk);
  if (p->heads == p->kv_heads && p->dv == p->dk && p->tq == p->tk && fabs(p->scale - s) <= 1e-15 * s) return 1;
  snprintf(why, n, "square self-attention at the default scale only");
  return 0;
}

#define TK5(SYM, NAME, DESC, PREC, SUP, RUN, EO, EL, CLS)                                                        \
  const attncheck_kernel SYM = {                                                                                 \
      ATTNCHECK_KERNEL_INIT, .name = NAME, .description = DESC, .precision = PREC, .memory = ATTNCHECK_MEM_HOST, \
      .supports = SUP,       .run = RUN,   .empty_rows = EO,    .empty_lse = EL,   .precision_of = CLS}

TK5(ac_tk_run_refuses, "test-run-refuses",
    "test kernel: run() answers 'unsupported:' for more than 8 keys (ABI 5: SKIP)", NULL, ac_tk_supports_all,
    run_refusing, 0, 0, NULL);
TK5(ac_tk_run_refuses_scribble, "test-run-refuses-scribble",
    "test kernel: run() writes past o, then answers 'unsupported:' for more than 8 keys (GUARD)", NULL,
    ac_tk_supports_all, run_refusing_scribble, 0, 0, NULL);
TK5(ac_tk_empty_nan, "test-empty-nan",
    "test kernel: declares and writes o = NaN, lse = NaN for rows with no visible key", NULL, ac_tk_supports_all,
    run_empty_nan, ATTNCHECK_EMPTY_NAN, ATTNCHECK_EMPTY_LSE_NAN, NULL);
TK5(ac_tk_empty_mean_v, "test-empty-mean-v",
    "test kernel: declares and writes o = the mean of V over every key for rows with no visible key", NULL,
    ac_tk_supports_all, run_empty_mean_v, ATTNCHECK_EMPTY_MEAN_V, 0, NULL);
TK5(ac_tk_empty_pinf, "test-empty-pinf",
    "test kernel: declares lse = +inf for rows with no visible key but writes -inf", NULL, ac_tk_supports_all,
    run_reference, ATTNCHECK_EMPTY_ZERO, ATTNCHECK_EMPTY_LSE_POS_INF, NULL);
TK5(ac_tk_paths_f16, "test-paths-f16",
    "test kernel: flash-f16 up to 64 keys, cublas-style-f16 beyond; precision_of names each path's class", "fp16-fa2",
    paths_supports, paths_run, 0, 0, paths_class);
TK5(ac_tk_paths_f16_one_class, "test-paths-f16-one-class",
    "test kernel: test-paths-f16 declaring fp16-fa2 for both paths (no precision_of)", "fp16-fa2", paths_supports,
    paths_run, 0, 0, NULL);
TK5(ac_tk_leak_row_fail, "test-leak-row-fail",
    "test kernel: test-masked-leak, and off by 1 in one interior row of each (batch, head) past 48 rows", "fp32",
    supports_f32, run_leak_row_fail, 0, 0, NULL);
TK5(ac_tk_square_only, "test-square-only",
    "test kernel: the reference, refusing GQA, dv != dk, tq != tk and explicit scales in supports()", NULL,
    supports_square, run_reference, 0, 0, NULL);
TK5(ac_tk_paths_bad_class, "test-paths-bad-class",
    "test kernel: test-paths-f16 whose precision_of names an unknown class beyond 64 keys", "fp16-fa2", paths_supports,
    paths_run, 0, 0, bad_class);
