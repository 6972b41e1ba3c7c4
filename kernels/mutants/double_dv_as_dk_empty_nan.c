/* mutant2-dv-as-dk-empty-row-nan: two planted defects: mutant-dv-as-dk's V rows read with the row
 * stride of K, and mutant-empty-row-nan's 0/0 for rows with no visible key, in flash-f32. */
#include "config.h"
#include "cpu_common.h"
#define MUT_V_OFF(p, b, kvh, j, e) ((b) * (p)->v_stride[0] + (kvh) * (p)->v_stride[1] + (j) * (p)->k_stride[2] + (e) * (p)->v_stride[3])
#define MUT_EMPTY(p, i) ((void)(p), (void)(i), 0)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_dv_as_dk_empty_nan, ATTNCHECK_F32, "mutant2-dv-as-dk-empty-row-nan", "fp32",
              "two defects: V rows read with the row stride of K, and NaN for fully masked rows (flash-f32)")
