# fuzz/families/: the generator families, one gen_*.c each, and what they share (see README.md).
fuzz_libac_fuzz_la_SOURCES += \
	fuzz/families/families.c \
	fuzz/families/params_qdtype.c \
	fuzz/families/params.c \
	fuzz/families/values.c \
	fuzz/families/shape.c fuzz/families/buckets.c \
	fuzz/families/patterns.c \
	fuzz/families/gen_normal.c \
	fuzz/families/gen_layouts.c \
	fuzz/families/gen_uniform.c \
	fuzz/families/gen_small_int.c \
	fuzz/families/gen_large_mag.c \
	fuzz/families/gen_neg_logits.c \
	fuzz/families/gen_large_v.c \
	fuzz/families/gen_tiny.c \
	fuzz/families/gen_zero_q.c \
	fuzz/families/gen_zero_k.c \
	fuzz/families/gen_ties.c \
	fuzz/families/gen_dominant.c \
	fuzz/families/gen_late_max.c \
	fuzz/families/gen_outlier.c \
	fuzz/families/gen_v_cancel.c \
	fuzz/families/gen_masked_rows.c \
	fuzz/families/gen_nonfinite.c \
	fuzz/families/gen_tile_edge.c \
	fuzz/families/gen_tq_ne_tk.c \
	fuzz/families/gen_head_dim.c \
	fuzz/families/gen_gqa.c \
	fuzz/families/gen_per_head.c \
	fuzz/families/gen_strided.c \
	fuzz/families/gen_long_t.c \
	fuzz/families/gen_split_kv.c \
	fuzz/families/gen_scale.c \
	fuzz/families/gen_mixed.c \
	fuzz/families/gen_sentinel.c \
	fuzz/families/gen_index_overflow.c \
	fuzz/families/vfam.c \
	fuzz/families/gen_window.c \
	fuzz/families/gen_softcap.c \
	fuzz/families/gen_alibi.c \
	fuzz/families/gen_bias.c \
	fuzz/families/gen_bool_mask.c \
	fuzz/families/gen_sinks.c \
	fuzz/families/gen_dropout.c \
	fuzz/families/gen_descale.c \
	fuzz/families/gen_variant_mix.c fuzz/families/gen_mixed_dtypes.c \
	fuzz/families/gen_quant.c
