/* quant.c: `test-quant-scribble` proves that the codes and scales of quantized tensors reach a
 * kernel as guarded inputs (kernels/harness_quant.c): it declares q8_0 for K and V, writes into the
 * first K scale, then computes as ggml-ref-f32; the harness must report a write into an input. */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include "testkernels.h"
#include "quant_view.h"

static int scribble_run_quant(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err,
                              size_t n)
{
  if (v->t[1].scales) ((uint16_t *)(uintptr_t)v->t[1].scales)[0] ^= 0x0400;   /* the exponent's low bit */
  return ac_cpu_quant_ref_run(p, t, v, err, n);
}

static int scribble_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "takes quantized tensors only");
  return 1;
}

const attncheck_kernel ac_tk_quant_scribble = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-quant-scribble",
  "q8_0 K and V; writes into its first K scale (an input): GUARD", "fp32", ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all,
  scribble_run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

const ac_quant_kernel ac_tk_quant_entry = {&ac_tk_quant_scribble, 1u << AC_QF_Q8_0, 0, 1, scribble_run_quant};
