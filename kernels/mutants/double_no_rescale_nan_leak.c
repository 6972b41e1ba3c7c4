/* mutant2-no-rescale-masked-nan-leak: two planted defects: mutant-no-rescale-sum's running sum not
 * rescaled when the max grows, and mutant-masked-nan-leak's masked terms multiplied by 0 (a NaN or
 * inf at a masked key, or a masked logit far above the max, reaches the output), in flash-f32. */
#include "config.h"
#include "cpu_common.h"
#define MUT_L_RESCALE(l, alpha) (l)
#define MUT_COLS(nv, cols) (cols)
#define MUT_P(c, nv, val) ((val) * ((c) < (nv) ? 1.0f : 0.0f))
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_no_rescale_nan_leak, ATTNCHECK_F32, "mutant2-no-rescale-masked-nan-leak", "fp32",
              "two defects: the running sum not rescaled, and masked terms multiplied by 0 (flash-f32)")
