/* varlen_bwd_mutants.c: a varlen backward defect (docs/bugclasses.md "Serving layouts"):
 * flash-varlen-f32 whose forward is right and whose backward (kernels/cpu_varlen_bwd.c) reads
 * cu_seqlens_k off by one, so each sequence but the last takes the next one's first key. */
#include "config.h"
#include "../cpu_varlen.h"

static int vb_supports(const attncheck_problem *p, char *why, size_t n) { return ac_cpu_layout_supports(p, ATTNCHECK_F32, why, n); }
static int vb_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_layout_run(ATTNCHECK_F32, AC_LBUG_NONE, "mutant-varlen-bwd-cu-k", p, t, err, n);
}
static int vb_bwd(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err, size_t n)
{
  return ac_cpu_varlen_backward(ATTNCHECK_F32, AC_VBWD_CU_K_OFF_BY_ONE, "mutant-varlen-bwd-cu-k", p, t, g, err, n);
}

const attncheck_kernel ac_mutant_varlen_bwd_cu_k = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "mutant-varlen-bwd-cu-k", "flash-varlen-f32 whose backward "
  "reads cu_seqlens_k off by one (each sequence takes the next one's first key; the forward is right)", "fp32",
  ATTNCHECK_MEM_HOST, AC_CPU_LAYOUT_CAPS | ATTNCHECK_CAP_BACKWARD, vb_supports, vb_run, {NULL, NULL, NULL, NULL},
  vb_bwd, AC_CPU_VARLEN_BWD_CAPS, 0, 0, 0, NULL, 0, 0, NULL};
