# kernels/cpu.mk: built-in CPU kernels and mutants.
AC_CPU_KERNEL_SOURCES = kernels/registry.c \
	kernels/cpu_common.c kernels/cpu_common.h \
	kernels/cpu_naive_f64.c kernels/cpu_naive.c \
	kernels/cpu_flash.c kernels/cpu_flash_exp2.c kernels/cpu_splitkv.c kernels/cpu_splitkv.h kernels/cpu_cublas.c \
	kernels/cpu_varlen.c kernels/cpu_varlen.h kernels/mutants/layout_mutants.c \
	kernels/mutants/splitkv_mutants.c kernels/mutants/quant_mutants.c kernels/mutants/store_mutants.c \
	kernels/cpu_backward.c kernels/cpu_backward.h kernels/mutants/bwd_mutants.c \
	kernels/mutants/mutant_flash.h kernels/mutants/mutant_hooks.h \
	kernels/mutants/dropout_rp_in_sum.c kernels/mutants/dropout_renorm.c kernels/mutants/dropout_head_reuse.c \
	kernels/mutants/double_off_by_one_f16_acc.c kernels/mutants/double_no_rescale_nan_leak.c \
	kernels/mutants/double_gqa_lse_log2.c kernels/mutants/double_fast_exp_top_left.c \
	kernels/mutants/double_dv_as_dk_empty_nan.c kernels/mutants/double_sentinel_tail.c \
	kernels/mutants/double_rowsum_top_left.c \
	kernels/mutants/no_max_sub.c kernels/mutants/max_sentinel.c \
	kernels/mutants/causal_off_by_one.c kernels/mutants/causal_top_left.c \
	kernels/mutants/no_rescale_sum.c kernels/mutants/no_rescale_acc.c \
	kernels/mutants/tail_unmasked.c kernels/mutants/scale_eighth.c \
	kernels/mutants/f16_acc_pv.c kernels/mutants/f16_score_acc.c kernels/mutants/bf16_rowsum.c \
	kernels/mutants/empty_row_nan.c kernels/mutants/masked_nan_leak.c \
	kernels/mutants/gqa_modulo.c kernels/mutants/dv_as_dk.c kernels/mutants/head_batch_swap.c \
	kernels/mutants/fast_exp.c kernels/mutants/cublas_sentinel.c kernels/mutants/bf16_acc16_pv.c \
	kernels/mutants/window_tile_edge.c kernels/mutants/softcap_before_scale.c \
	kernels/mutants/alibi_top_left.c kernels/mutants/alibi_sign.c kernels/mutants/bias_before_scale.c \
	kernels/mutants/bool_mask_partial.c kernels/mutants/sink_lse.c kernels/mutants/descale_twice.c \
	kernels/mutants/empty_row_stale.c kernels/mutants/kv_bf16_as_f16.c
AC_CPU_KERNEL_SOURCES += kernels/cpu_varlen_bwd.c kernels/mutants/varlen_bwd_mutants.c
AC_CPU_KERNEL_SOURCES += kernels/cpu_ggml.c kernels/cpu_ggml.h kernels/mutants/ggml_mutants.c
