/* layout_bias.c: `test-varlen-bias-row` is flash-varlen-f32 reading the bias and boolean mask
 * rows of sequence b's query i at carrier row i (sequence 0's rows) instead of cu_q[b] + i: a
 * layout case with a bias or boolean mask and a second sequence must FAIL it. */
#include "config.h"
#include "cpu_varlen.h"
#include "testkernels.h"

static int supports(const attncheck_problem *p, char *why, size_t n) { return ac_cpu_layout_supports(p, ATTNCHECK_F32, why, n); }
static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_layout_run(ATTNCHECK_F32, AC_LBUG_BIAS_LOCAL_ROW, "test-varlen-bias-row", p, t, err, n);
}

const attncheck_kernel ac_tk_varlen_bias_row = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-varlen-bias-row",
  "test kernel: flash-varlen-f32 reading every sequence's bias and boolean mask rows from sequence 0's", "fp32",
  ATTNCHECK_MEM_HOST, AC_CPU_LAYOUT_CAPS, supports, run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
