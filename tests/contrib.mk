# tests/contrib.mk: the plugins of contrib/, built against software attncheck does not ship.
# contrib_ggml.sh: contrib/ggml built against the ggml of $GGML_DIR and judged (SKIP without it);
# tests/data/ggml_*.npz are the ggml failures docs/ggml.md records, replayed there.
AC_CONTRIB_SH = tests/contrib_ggml.sh
TESTS += $(AC_CONTRIB_SH)
dist_noinst_SCRIPTS += $(AC_CONTRIB_SH)
EXTRA_DIST += contrib/ggml/Makefile contrib/ggml/ggml_adapter.h contrib/ggml/ggml_io.c \
	contrib/ggml/ggml_kernels.c tests/data/ggml_fa_softcap_tiled_padding.npz tests/data/ggml_fa_f16_acc_overflow.npz \
	tests/data/ggml_fa_tiled_masked_inf.npz tests/data/ggml_softmax_bf16_daz.npz \
	tests/data/ggml_softmax_masked_overflow.npz tests/data/ggml_fa_f16_dot_overflow.npz \
	tests/data/ggml_fa_quant_inf_scale.npz docs/ggml.md
