/* mutant-f16-acc-pv: docs/bugclasses.md §2.5 "fp16 accumulator overflow / underflow".
 * flash-f16 keeping the P·V accumulator in f16 (rounded after every addition). */
#include "config.h"
#include "mutant_hooks.h"
#define MUT_PV(dt, acc, pr, vrow, n8) mut_pv_f16(dt, acc, pr, vrow, n8)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_f16_acc_pv, ATTNCHECK_F16, "mutant-f16-acc-pv", "fp16-fa2", "flash-f16 with an f16 P.V accumulator")
