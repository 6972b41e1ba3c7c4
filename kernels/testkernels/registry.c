/* registry.c: the list of test kernels (attncheck list shows them apart; never used by default). */
#include "config.h"
#include "harness.h"
#include "testkernels.h"

const attncheck_kernel *const *ac_test_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {
    &ac_tk_reference_kernel, &ac_tk_crash, &ac_tk_abort, &ac_tk_hang, &ac_tk_exit,
    &ac_tk_guard, &ac_tk_input_write, &ac_tk_unwritten, &ac_tk_error, &ac_tk_unsupported,
    &ac_tk_nondeterministic, &ac_tk_masked_leak, &ac_tk_strides, &ac_tk_dense_only, &ac_tk_crash_dk3, &ac_tk_variants, &ac_tk_variants_scribble,
    &ac_tk_varlen_bias_row, &ac_tk_bwd_dout_clamp, &ac_tk_bwd_key_order,
    &ac_tk_fa3_log2_lse, &ac_tk_alibi_fa2, &ac_tk_alibi_fa2_undeclared, &ac_tk_alibi_abi_as_fa2,
    &ac_tk_quant_scribble,
    &ac_tk_paged_poison,
    &ac_tk_run_refuses, &ac_tk_run_refuses_scribble, &ac_tk_empty_nan, &ac_tk_empty_pinf, &ac_tk_empty_mean_v,
    &ac_tk_paths_f16, &ac_tk_paths_f16_one_class, &ac_tk_paths_bad_class, &ac_tk_leak_row_fail,
    &ac_tk_square_only,
  };
  *count = sizeof list / sizeof list[0];
  return list;
}
