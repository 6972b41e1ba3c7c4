/* mutant-kv-bf16-as-f16: docs/bugclasses.md §2.24 "attention variants" (per-tensor dtypes).
 * flash-f32 with f16 or bf16 K and V that decodes every 16-bit K and V as f16: a dispatch on the
 * element size ("half") instead of the dtype. Right for f16 K and V and for plain cases. */
#include "config.h"
#include "cpu_common.h"
#define MUT_KV_DTYPE(d) ((d) == ATTNCHECK_BF16 ? ATTNCHECK_F16 : (d))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_kv_bf16_as_f16, "mutant-kv-bf16-as-f16", "flash-f32 decoding bf16 K and V as f16")
