/* bwd_mutants.c: deliberately wrong backward kernels (ABI 3 run_backward), each flash-bwd-f32
 * (flash-bwd-bf16 for mutant-bwd-lse-bf16) with one defect of cpu_backward.h; their forward is
 * the correct flash kernel's, so only the backward can fail. */
#include "config.h"
#include "../cpu_backward.h"

AC_CPU_BWD_KERNEL(ac_mutant_bwd_d_wrong_row, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_D_WRONG_ROW,
                  "mutant-bwd-d-wrong-row", "fp32", "flash-bwd-f32 taking D_i = dO.O of the next query row")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_dk_no_scale, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_DK_NO_SCALE,
                  "mutant-bwd-dk-no-scale", "fp32", "flash-bwd-f32 whose dK misses the softmax scale")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_gqa_no_sum, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_GQA_NO_SUM,
                  "mutant-bwd-gqa-no-sum", "fp32", "flash-bwd-f32 keeping dK, dV of the last query head of a GQA group only")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_no_causal, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_NO_CAUSAL,
                  "mutant-bwd-no-causal", "fp32", "flash-bwd-f32 that ignores the causal mask in the backward")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_no_lse, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_NO_LSE,
                  "mutant-bwd-no-lse", "fp32", "flash-bwd-f32 with P = e^(s - max), not divided by the row sum")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_dp_rounded, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_DP_ROUNDED,
                  "mutant-bwd-dp-rounded", "fp32", "flash-bwd-f32 rounding dP to bf16 before D is subtracted")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_skip_last_tile, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_SKIP_LAST_TILE,
                  "mutant-bwd-skip-last-tile", "fp32", "flash-bwd-f32 whose last query tile adds nothing to dK")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_lse_bf16, ac_cpu_flash_bf16, ATTNCHECK_BF16, 1, AC_BWD_LSE_BF16,
                  "mutant-bwd-lse-bf16", "bf16-fa2",
                  "flash-bwd-bf16 recomputing P from the LSE rounded to bf16 (an LSE buffer in the input dtype)")
AC_CPU_BWD_KERNEL(ac_mutant_bwd_softcap_noderiv, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_NO_CAP_DERIV,
                  "mutant-bwd-softcap-noderiv", "fp32",
                  "flash-bwd-f32 missing the softcap's derivative: dS used as if there were no cap (no 1 - tanh^2)")
AC_CPU_BWD_KERNEL_CAPS(ac_mutant_bwd_dropout_d_unscaled, ac_cpu_flash_f32, ATTNCHECK_F32, 1, AC_BWD_DROP_D_UNSCALED,
                       AC_BWD_CAPS | ATTNCHECK_FEAT_DROPOUT, "mutant-bwd-dropout-d-unscaled", "fp32",
                       "flash-bwd-f32 with dropout whose D = dO.O misses the factor 1 - p that its unscaled dP needs")
