/* mutant-dv-as-dk: docs/bugclasses.md §2.13 "d_v ≠ d_k".
 * flash-f32 stepping through the rows of V with the row stride of K (V strided with d_k). */
#include "config.h"
#include "cpu_common.h"
#define MUT_V_OFF(p, b, kvh, j, e) ((b) * (p)->v_stride[0] + (kvh) * (p)->v_stride[1] + (j) * (p)->k_stride[2] + (e) * (p)->v_stride[3])
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_dv_as_dk, ATTNCHECK_F32, "mutant-dv-as-dk", "fp32", "flash-f32 reading V rows with the row stride of K")
