/* store_mutants.c: defects of kernels that quantize their own cache (docs/bugclasses.md §2.30,
 * docs/quantized.md "Quantize-on-store"), each a store reference kernel of kernels/cpu_quant_store.c
 * with one change of its quantizer (AC_SBUG_..., quant_view.h), declaring that kernel's formats,
 * quantizers and class. */
#include "config.h"
#include <stdio.h>
#include "cpu_common.h"
#include "quant_view.h"

static int smut_supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) {
    snprintf(why, n, "dense cases only (a quantize-on-store case is dense)");
    return 0;
  }
  return ac_cpu_naive_f32.supports(p, why, n);
}

#define SMUT(SYM, BUG, NAME, DESC, FORMATS, QUANTIZERS, CLASS)                                                     \
  static int SYM##_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)              \
  {                                                                                                              \
    return ac_cpu_store_run(BUG, p, t, err, n);                                                                  \
  }                                                                                                              \
  static int SYM##_qrun(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err,    \
                        size_t n)                                                                                \
  {                                                                                                              \
    (void)v;                                                                                                     \
    return ac_cpu_store_run(BUG, p, t, err, n);                                                                  \
  }                                                                                                              \
  extern const attncheck_kernel SYM;                                                                             \
  const attncheck_kernel SYM = {ATTNCHECK_KERNEL_INIT,   .name = NAME,           .description = DESC,            \
                                .precision = CLASS,       .memory = ATTNCHECK_MEM_HOST,                           \
                                .caps = AC_CPU_STORE_CAPS, .supports = smut_supports, .run = SYM##_run,          \
                                .store_quantizers = QUANTIZERS};                                                 \
  static const ac_quant_kernel SYM##_entry = {&SYM, FORMATS, 0, 1, SYM##_qrun};

SMUT(ac_mutant_store_prev_scale, AC_SBUG_PREV_SCALE, "mutant-store-prev-scale",
     "store-fp8-ref-f32 storing each token's fp8 codes with the scale of the token before (the first its own)",
     AC_CPU_STORE_FP8_FORMATS, "absmax-even-f32-sat", "kv-f32")
SMUT(ac_mutant_store_round_away, AC_SBUG_ROUND_AWAY, "mutant-store-round-away",
     "store-minmax-ref-f32 rounding ties of x / s + z away from zero where nearest-even is declared",
     AC_CPU_STORE_MINMAX_FORMATS, "minmax-even-f32-sat", "dq-f32")
SMUT(ac_mutant_store_zero_unclamped, AC_SBUG_ZERO_UNCLAMPED, "mutant-store-zero-unclamped",
     "store-minmax-ref-f32 leaving min-max's integer zero point unclamped (a group that does not reach 0)",
     AC_CPU_STORE_MINMAX_FORMATS, "minmax-even-f32-sat", "dq-f32")
SMUT(ac_mutant_store_fp8_nan, AC_SBUG_FP8_NAN, "mutant-store-fp8-nan",
     "store-fp8-ref-f32 storing values past the largest fp8 code as NaN (e5m2: inf) where saturation is declared",
     AC_CPU_STORE_FP8_FORMATS, AC_CPU_STORE_FP8_QUANTIZERS, "kv-f32")

static const ac_quant_kernel *const entries[] = {&ac_mutant_store_prev_scale_entry, &ac_mutant_store_round_away_entry,
                                                 &ac_mutant_store_zero_unclamped_entry, &ac_mutant_store_fp8_nan_entry};

const ac_quant_kernel *ac_store_mutant_entry_of(const attncheck_kernel *k)
{
  for (size_t i = 0; k && i < sizeof entries / sizeof entries[0]; i++)
    if (entries[i]->k == k) return entries[i];
  return NULL;
}
