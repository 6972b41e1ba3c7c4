/* cpu_backward.h: the CPU backward pass (ABI 3 run_backward) that the correct backward kernels
 * and the backward mutants share (cpu_backward.c, mutants/bwd_mutants.c). */
#ifndef AC_CPU_BACKWARD_H
#define AC_CPU_BACKWARD_H
#include "cpu_common.h"

/* Deliberate defects, for the backward mutants (0 in a correct kernel). */
enum {
  AC_BWD_D_WRONG_ROW = 1 << 0,     /* D_i from the dP of row i+1 of the head (the last row: row 0) */
  AC_BWD_DK_NO_SCALE = 1 << 1,     /* dK without the scale */
  AC_BWD_GQA_NO_SUM = 1 << 2,      /* dK, dV of a kv head from the last query head of its group only */
  AC_BWD_NO_CAUSAL = 1 << 3,       /* the causal mask ignored in the backward (P recomputed for every key) */
  AC_BWD_NO_LSE = 1 << 4,          /* P = e^(s - max) without dividing by the row sum */
  AC_BWD_DP_ROUNDED = 1 << 5,      /* dP rounded to bf16 before D is subtracted */
  AC_BWD_SKIP_LAST_TILE = 1 << 6,  /* the last query tile adds nothing to dK */
  AC_BWD_LSE_BF16 = 1 << 7,        /* flash: P = e^(s - lse) with the given LSE rounded to bf16 (kept in the input dtype) */
  AC_BWD_NO_CAP_DERIV = 1 << 8,    /* softcap: dS used as if there were no cap (no 1 - tanh² factor) */
  AC_BWD_DROP_D_UNSCALED = 1 << 9, /* dropout: D = dO·O not scaled by 1 - p where dP is left unscaled */
};

typedef struct {
  int dt;        /* ATTNCHECK_F32 or ATTNCHECK_BF16 */
  int flash;     /* 1: P = e^(s - lse) from the given LSE, D_i = dO_i·O_i from the given O, query tiles of
                    AC_BWD_TILE rows; 0: P materialized from the scores (max, sum), D_i = Σ_j P_ij dP_ij */
  unsigned defects;
} ac_cpu_bwd_cfg;

#define AC_BWD_TILE 16
/* Features the backward kernels take (descales and per-tensor dtypes excluded). */
#define AC_BWD_CAPS                                                                                            \
  (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP | ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_BIAS |             \
   ATTNCHECK_FEAT_BOOL_MASK | ATTNCHECK_FEAT_SINKS)

int ac_cpu_backward(const ac_cpu_bwd_cfg *cfg, const attncheck_problem *p, const attncheck_tensors *t,
                    const attncheck_grad_tensors *g, char *err, size_t err_len);

/* A host kernel SYM whose forward is FWD's (supports and run) and whose backward is
 * ac_cpu_backward with (DT, FLASH, DEFECTS); caps CAPS | ATTNCHECK_CAP_BACKWARD, backward_caps CAPS
 * (AC_CPU_BWD_KERNEL: AC_BWD_CAPS). */
#define AC_CPU_BWD_KERNEL(SYM, FWD, DT, FLASH, DEFECTS, NAME, PREC, DESC) \
  AC_CPU_BWD_KERNEL_CAPS(SYM, FWD, DT, FLASH, DEFECTS, AC_BWD_CAPS, NAME, PREC, DESC)
#define AC_CPU_BWD_KERNEL_CAPS(SYM, FWD, DT, FLASH, DEFECTS, CAPS, NAME, PREC, DESC)                            \
  static int SYM##_supports(const attncheck_problem *p, char *why, size_t why_len)                               \
  {                                                                                                               \
    return FWD.supports(p, why, why_len);                                                                         \
  }                                                                                                               \
  static int SYM##_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)         \
  {                                                                                                               \
    return FWD.run(p, t, err, err_len);                                                                           \
  }                                                                                                               \
  static int SYM##_bwd(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g,   \
                       char *err, size_t err_len)                                                                 \
  {                                                                                                               \
    const ac_cpu_bwd_cfg cfg = {DT, FLASH, DEFECTS};                                                              \
    return ac_cpu_backward(&cfg, p, t, g, err, err_len);                                                          \
  }                                                                                                               \
  extern const attncheck_kernel SYM;                                                                              \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, PREC,                \
                                ATTNCHECK_MEM_HOST, (CAPS) | ATTNCHECK_CAP_BACKWARD, SYM##_supports,             \
                                SYM##_run, {NULL, NULL, NULL, NULL}, SYM##_bwd, CAPS, 0, 0, 0, NULL, 0, 0, NULL};

#endif
