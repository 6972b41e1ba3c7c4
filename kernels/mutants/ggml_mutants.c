/* ggml_mutants.c: cpu_ggml.c's kernels with one defect each, just past their class's budget
 * (docs/bugclasses.md, the precision-class rows):
 *   mutant-ggml-bf16-acc  ggml-f16-style with its V accumulator in bf16 where f16 was meant (8x the
 *                         rounding of each step and rescale); declared ggml-f16; f16 cases, no variants;
 *   mutant-q8q-as-q4      q8q-f32-style quantizing Q with 4-bit codes (d = max|x|/7, the vec_dot type
 *                         of a 4-bit K taken for Q's) where q8_0 was meant: 18x the block error;
 *                         declared q8q-f32; f32 cases, no variants (tests/tcpukernels.c triggers). */
#include "config.h"
#include "../cpu_ggml.h"

static int bf16acc_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports_caps(p, ATTNCHECK_F16, 0, why, why_len);
}

static int bf16acc_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return ac_cpu_ggml_run(AC_GGML_F16_BF16ACC, "mutant-ggml-bf16-acc", p, t, err, err_len);
}

static int q8q4_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports_caps(p, ATTNCHECK_F32, 0, why, why_len);
}

static int q8q4_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return ac_cpu_ggml_run(AC_GGML_Q8_AS_Q4, "mutant-q8q-as-q4", p, t, err, err_len);
}

const attncheck_kernel ac_mutant_ggml_bf16_acc = {ATTNCHECK_ABI_VERSION,
                                                  sizeof(attncheck_kernel),
                                                  "mutant-ggml-bf16-acc",
                                                  "ggml-f16-style with a bf16 V accumulator, declared ggml-f16",
                                                  "ggml-f16",
                                                  ATTNCHECK_MEM_HOST,
                                                  0,
                                                  bf16acc_supports,
                                                  bf16acc_run,
                                                  {NULL, NULL, NULL, NULL},
                                                  NULL,
                                                  0,
                                                  0,
                                                  0,
                                                  0,
                                                  NULL,
                                                   0,
                                                   0, NULL};

const attncheck_kernel ac_mutant_q8q_as_q4 = {
    ATTNCHECK_ABI_VERSION,
    sizeof(attncheck_kernel),
    "mutant-q8q-as-q4",
    "q8q-f32-style quantizing Q with 4-bit codes where q8_0 was meant, declared q8q-f32",
    "q8q-f32",
    ATTNCHECK_MEM_HOST,
    0,
    q8q4_supports,
    q8q4_run,
    {NULL, NULL, NULL, NULL},
    NULL,
    0,
    0,
    0,
    0,
    NULL,
     0,
     0, NULL};
