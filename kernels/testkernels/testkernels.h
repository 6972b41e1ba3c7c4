/* testkernels.h: purpose-built kernels that each prove one verdict kind of the harness
 * and the comparison (crash, hang, guard overwrite, unwritten output, ...). */
#ifndef AC_TESTKERNELS_H
#define AC_TESTKERNELS_H
#include "attncheck_kernel.h"

/* A plain, correct reference computed in binary64 for every dtype, reading and writing
 * through the problem's strides. leak_masked: masked terms are multiplied by 0 instead of
 * skipped, so a NaN in a masked value reaches the output. */
int ac_tk_reference(const attncheck_problem *p, const attncheck_tensors *t, int leak_masked, char *err, size_t n);
/* Supports every host problem. */
int ac_tk_supports_all(const attncheck_problem *p, char *why, size_t n);
/* Offset of element [b][h][i][d] of a strided tensor. */
static inline int64_t ac_tk_off(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{ return b * s[0] + h * s[1] + i * s[2] + d * s[3]; }

extern const attncheck_kernel ac_tk_reference_kernel, ac_tk_crash, ac_tk_abort, ac_tk_hang, ac_tk_exit,
    ac_tk_guard, ac_tk_input_write, ac_tk_unwritten, ac_tk_error, ac_tk_unsupported,
    ac_tk_nondeterministic, ac_tk_masked_leak, ac_tk_strides, ac_tk_dense_only, ac_tk_crash_dk3,
    ac_tk_variants, ac_tk_variants_scribble, ac_tk_varlen_bias_row, ac_tk_bwd_dout_clamp, ac_tk_bwd_key_order,
    ac_tk_fa3_log2_lse, ac_tk_alibi_fa2, ac_tk_alibi_fa2_undeclared, ac_tk_alibi_abi_as_fa2,
    ac_tk_paged_poison, ac_tk_quant_scribble;
/* ABI 5 declarations (abi5.c) */
extern const attncheck_kernel ac_tk_run_refuses, ac_tk_run_refuses_scribble, ac_tk_empty_nan, ac_tk_empty_pinf,
    ac_tk_empty_mean_v,
    ac_tk_paths_f16, ac_tk_paths_f16_one_class, ac_tk_paths_bad_class, ac_tk_leak_row_fail,
    ac_tk_square_only;

#endif
