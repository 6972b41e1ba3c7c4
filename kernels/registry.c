/* registry.c: the built-in kernel lists: correct CPU kernels followed by the CUDA kernels
 * (an empty list when CUDA is not built; asking for them loads the CUDA module), and the
 * mutants, which are never used by default. */
#include "config.h"
#include "util.h"
#include "harness.h"
#include "cpu_common.h"
#include "cpu_ggml.h"
#include "accuda.h"
#include <pthread.h>

/* The mutants (kernels/mutants/), each naming its docs/bugclasses.md section. */
extern const attncheck_kernel ac_mutant_no_max_sub, ac_mutant_max_sentinel, ac_mutant_causal_off_by_one,
  ac_mutant_causal_top_left, ac_mutant_no_rescale_sum, ac_mutant_no_rescale_acc, ac_mutant_tail_unmasked,
  ac_mutant_scale_eighth, ac_mutant_f16_acc_pv, ac_mutant_empty_row_nan, ac_mutant_masked_nan_leak,
  ac_mutant_gqa_modulo, ac_mutant_dv_as_dk, ac_mutant_bf16_rowsum, ac_mutant_fast_exp,
  ac_mutant_head_batch_swap, ac_mutant_f16_score_acc, ac_mutant_cublas_sentinel,
  ac_mutant_bf16_acc16_pv, ac_mutant_window_tile_edge, ac_mutant_softcap_before_scale, ac_mutant_alibi_top_left,
  ac_mutant_alibi_sign, ac_mutant_bias_before_scale, ac_mutant_bool_mask_partial, ac_mutant_sink_lse,
  ac_mutant_descale_twice, ac_mutant_empty_row_stale, ac_mutant_kv_bf16_as_f16,
  ac_mutant_cu_seqlens_off_by_one, ac_mutant_prev_seq_boundary,
  ac_mutant_last_page_whole, ac_mutant_block_table_row, ac_mutant_zero_length_seq, ac_mutant_page_count,
  ac_mutant_gqa_page64_last_page, ac_mutant_block_id_u16, ac_mutant_block_table_past_end,
  ac_mutant_splitkv_first_max, ac_mutant_splitkv_sink_per_split,
  ac_mutant_dropout_rp_in_sum, ac_mutant_dropout_renorm, ac_mutant_dropout_head_reuse;
extern const attncheck_kernel ac_cpu_flash_varlen_f32, ac_cpu_flash_varlen_bf16;
/* the reference kernels of the quantized formats (kernels/cpu_quant.c) */
extern const attncheck_kernel ac_cpu_ggml_ref_f32, ac_cpu_fp8kv_ref_f32, ac_cpu_intkv_ref_f32, ac_cpu_fp4kv_ref_f32;
/* the reference kernels of the quantized paths (kernels/cpu_quant_paths.c) */
extern const attncheck_kernel ac_cpu_ggml_q8_ref_f32, ac_cpu_fp8fold_ref_f32, ac_cpu_kv16_ref_f16, ac_cpu_kv16_ref_bf16;
extern const attncheck_kernel ac_mutant_varlen_bwd_cu_k;   /* varlen backward (kernels/mutants/varlen_bwd_mutants.c) */
extern const attncheck_kernel ac_cpu_naive_bwd_f32, ac_cpu_naive_bwd_bf16, ac_cpu_flash_bwd_f32, ac_cpu_flash_bwd_bf16;
extern const attncheck_kernel ac_mutant_bwd_d_wrong_row, ac_mutant_bwd_dk_no_scale, ac_mutant_bwd_gqa_no_sum,
  ac_mutant_bwd_no_causal, ac_mutant_bwd_no_lse, ac_mutant_bwd_dp_rounded, ac_mutant_bwd_skip_last_tile,
  ac_mutant_bwd_lse_bf16,
  ac_mutant_bwd_softcap_noderiv, ac_mutant_bwd_dropout_d_unscaled;

extern const attncheck_kernel ac_mutant_ggml_bf16_acc, ac_mutant_q8q_as_q4;   /* kernels/mutants/ggml_mutants.c */
/* two planted defects each ("mutant2-" names; kernels/mutants/double_*.c): a campaign must report two */
extern const attncheck_kernel ac_mutant2_off_by_one_f16_acc, ac_mutant2_no_rescale_nan_leak, ac_mutant2_gqa_lse_log2,
  ac_mutant2_fast_exp_top_left, ac_mutant2_dv_as_dk_empty_nan, ac_mutant2_sentinel_tail, ac_mutant2_rowsum_top_left;
/* quantized-cache mutants (kernels/mutants/quant_mutants.c) */
extern const attncheck_kernel ac_mutant_quant_nibble_swap, ac_mutant_quant_q4_no_offset, ac_mutant_quant_next_block_scale,
  ac_mutant_quant_no_v_scale, ac_mutant_quant_no_q_descale, ac_mutant_quant_scale_twice, ac_mutant_quant_fn_as_fnuz,
  ac_mutant_quant_zero_sign, ac_mutant_quant_bf16_scale, ac_mutant_quant_nan_dropped, ac_mutant_quant_qhead_scale,
  ac_mutant_quant_past_seqlen, ac_mutant_quant_pack_order;
/* quantize-on-store: reference kernels (kernels/cpu_quant_store.c) and mutants (kernels/mutants/store_mutants.c) */
extern const attncheck_kernel ac_cpu_store_fp8_ref_f32, ac_cpu_store_minmax_ref_f32, ac_cpu_store_q8_0_ref_f32;
extern const attncheck_kernel ac_mutant_store_prev_scale, ac_mutant_store_round_away, ac_mutant_store_zero_unclamped,
  ac_mutant_store_fp8_nan;

static const attncheck_kernel *const cpu_kernels[] = {
  &ac_cpu_naive_f64,
  &ac_cpu_naive_f32,
  &ac_cpu_naive_nolse_f32,
  &ac_cpu_flash_f32,
  &ac_cpu_flash_exp2_f32,
  &ac_cpu_splitkv_f32,
  &ac_cpu_splitkv_fa_f32,
  &ac_cpu_naive_scaleq_f32,
  &ac_cpu_naive_f16,
  &ac_cpu_naive_scaleq_f16,
  &ac_cpu_flash_f16,
  &ac_cpu_naive_bf16,
  &ac_cpu_naive_scaleq_bf16,
  &ac_cpu_flash_bf16,
  &ac_cpu_cublas_f16,
  &ac_cpu_cublas_bf16,
  &ac_cpu_flash_e4m3,
  &ac_cpu_flash_e5m2,
  &ac_cpu_ggml_f16,
  &ac_cpu_q8q_f32,
  &ac_cpu_flash_varlen_f32,
  &ac_cpu_flash_varlen_bf16,
  &ac_cpu_naive_bwd_f32,
  &ac_cpu_naive_bwd_bf16,
  &ac_cpu_flash_bwd_f32,
  &ac_cpu_flash_bwd_bf16,
  &ac_cpu_ggml_ref_f32,
  &ac_cpu_fp8kv_ref_f32,
  &ac_cpu_intkv_ref_f32,
  &ac_cpu_fp4kv_ref_f32,
  &ac_cpu_ggml_q8_ref_f32,
  &ac_cpu_fp8fold_ref_f32,
  &ac_cpu_kv16_ref_f16,
  &ac_cpu_kv16_ref_bf16,
  &ac_cpu_store_fp8_ref_f32,
  &ac_cpu_store_minmax_ref_f32,
  &ac_cpu_store_q8_0_ref_f32,
};

static const attncheck_kernel *const mutant_kernels[] = {
  &ac_mutant_no_max_sub,
  &ac_mutant_max_sentinel,
  &ac_mutant_causal_off_by_one,
  &ac_mutant_causal_top_left,
  &ac_mutant_no_rescale_sum,
  &ac_mutant_no_rescale_acc,
  &ac_mutant_tail_unmasked,
  &ac_mutant_scale_eighth,
  &ac_mutant_f16_acc_pv,
  &ac_mutant_f16_score_acc,
  &ac_mutant_bf16_rowsum,
  &ac_mutant_empty_row_nan,
  &ac_mutant_masked_nan_leak,
  &ac_mutant_gqa_modulo,
  &ac_mutant_dv_as_dk,
  &ac_mutant_head_batch_swap,
  &ac_mutant_fast_exp,
  &ac_mutant_cublas_sentinel,
  &ac_mutant_bf16_acc16_pv,
  &ac_mutant_window_tile_edge,
  &ac_mutant_softcap_before_scale,
  &ac_mutant_alibi_top_left,
  &ac_mutant_alibi_sign,
  &ac_mutant_bias_before_scale,
  &ac_mutant_bool_mask_partial,
  &ac_mutant_sink_lse,
  &ac_mutant_descale_twice,
  &ac_mutant_empty_row_stale,
  &ac_mutant_kv_bf16_as_f16,
  &ac_mutant_ggml_bf16_acc,
  &ac_mutant_q8q_as_q4,
  &ac_mutant_cu_seqlens_off_by_one,
  &ac_mutant_prev_seq_boundary,
  &ac_mutant_last_page_whole,
  &ac_mutant_block_table_row,
  &ac_mutant_zero_length_seq,
  &ac_mutant_page_count,
  &ac_mutant_gqa_page64_last_page,
  &ac_mutant_block_id_u16,
  &ac_mutant_block_table_past_end,
  &ac_mutant_splitkv_first_max,
  &ac_mutant_splitkv_sink_per_split,
  &ac_mutant_dropout_rp_in_sum,
  &ac_mutant_dropout_renorm,
  &ac_mutant_dropout_head_reuse,
  &ac_mutant_quant_nibble_swap,
  &ac_mutant_quant_q4_no_offset,
  &ac_mutant_quant_next_block_scale,
  &ac_mutant_quant_no_v_scale,
  &ac_mutant_quant_no_q_descale,
  &ac_mutant_quant_scale_twice,
  &ac_mutant_quant_fn_as_fnuz,
  &ac_mutant_quant_zero_sign,
  &ac_mutant_quant_bf16_scale,
  &ac_mutant_quant_nan_dropped,
  &ac_mutant_quant_qhead_scale,
  &ac_mutant_quant_past_seqlen,
  &ac_mutant_quant_pack_order,
  &ac_mutant_store_prev_scale,
  &ac_mutant_store_round_away,
  &ac_mutant_store_zero_unclamped,
  &ac_mutant_store_fp8_nan,
  &ac_mutant_varlen_bwd_cu_k,
  &ac_mutant_bwd_d_wrong_row,
  &ac_mutant_bwd_dk_no_scale,
  &ac_mutant_bwd_gqa_no_sum,
  &ac_mutant_bwd_no_causal,
  &ac_mutant_bwd_no_lse,
  &ac_mutant_bwd_dp_rounded,
  &ac_mutant_bwd_skip_last_tile,
  &ac_mutant_bwd_lse_bf16,
  &ac_mutant_bwd_softcap_noderiv,
  &ac_mutant_bwd_dropout_d_unscaled,
  &ac_mutant2_off_by_one_f16_acc,
  &ac_mutant2_no_rescale_nan_leak,
  &ac_mutant2_gqa_lse_log2,
  &ac_mutant2_fast_exp_top_left,
  &ac_mutant2_dv_as_dk_empty_nan,
  &ac_mutant2_sentinel_tail,
  &ac_mutant2_rowsum_top_left,
};

#define NCPU (sizeof cpu_kernels / sizeof cpu_kernels[0])

static const attncheck_kernel **builtin;
static size_t nbuiltin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_init(void)
{
  size_t ncuda = 0;
  const attncheck_kernel *const *cuda = ac_cuda_kernels(&ncuda);
  if (!cuda) ncuda = 0;
  builtin = ac_xmalloc((NCPU + ncuda) * sizeof *builtin);
  for (size_t i = 0; i < NCPU; i++) builtin[nbuiltin++] = cpu_kernels[i];
  for (size_t i = 0; i < ncuda; i++) builtin[nbuiltin++] = cuda[i];
}

const attncheck_kernel *const *ac_builtin_kernels(size_t *count)
{
  pthread_once(&builtin_once, builtin_init);
  *count = nbuiltin;
  return builtin;
}

const attncheck_kernel *const *ac_cpu_kernels(size_t *count)
{
  *count = NCPU;
  return cpu_kernels;
}

const attncheck_kernel *const *ac_mutant_kernels(size_t *count)
{
  *count = sizeof mutant_kernels / sizeof mutant_kernels[0];
  return mutant_kernels;
}
