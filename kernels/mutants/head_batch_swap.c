/* mutant-head-batch-swap: docs/bugclasses.md §2.15 "head/batch mix-up".
 * flash-f32 addressing K and V with the batch and head strides swapped. */
#include "config.h"
#include "cpu_common.h"
#define MUT_K_OFF(p, b, kvh, j, d) ((b) * (p)->k_stride[1] + (kvh) * (p)->k_stride[0] + (j) * (p)->k_stride[2] + (d) * (p)->k_stride[3])
#define MUT_V_OFF(p, b, kvh, j, e) ((b) * (p)->v_stride[1] + (kvh) * (p)->v_stride[0] + (j) * (p)->v_stride[2] + (e) * (p)->v_stride[3])
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_head_batch_swap, ATTNCHECK_F32, "mutant-head-batch-swap", "fp32", "flash-f32 with batch and head strides swapped for K and V")
