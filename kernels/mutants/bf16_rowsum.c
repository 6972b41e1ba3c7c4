/* mutant-bf16-rowsum: docs/bugclasses.md §2.5 "fp16 accumulator overflow / underflow".
 * flash-bf16 keeping the running row sum l in bf16: at long T additions of P < 1 are lost. */
#include "config.h"
#include "cpu_common.h"
#define MUT_L_STORE(dt, x) ac_cpu_round_f32(ATTNCHECK_BF16, x)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_bf16_rowsum, ATTNCHECK_BF16, "mutant-bf16-rowsum", "bf16-fa2", "flash-bf16 with the row sum in bf16")
