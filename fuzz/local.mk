# fuzz/: generators, search, campaigns, minimizer (layer 5), and libFuzzer targets.
noinst_LIBRARIES += fuzz/libac_fuzz.a
fuzz_libac_fuzz_a_CFLAGS = $(AM_CFLAGS)
fuzz_libac_fuzz_a_SOURCES = \
	fuzz/fuzz.h \
	fuzz/families.c \
	fuzz/params.c \
	fuzz/values.c \
	fuzz/shape.c \
	fuzz/slice.c \
	fuzz/eval.c \
	fuzz/metamorphic.c \
	fuzz/signature.c \
	fuzz/search.c \
	fuzz/minimize.c \
	fuzz/finding.c \
	fuzz/summary.c \
	fuzz/plot.h \
	fuzz/plot.c \
	fuzz/report_data.h \
	fuzz/report_data.c \
	fuzz/report_html.h \
	fuzz/report_html.c \
	fuzz/report_row.c \
	fuzz/corpus.c \
	fuzz/campaign.h \
	fuzz/campaign.c \
	fuzz/campaign_findings.c \
	fuzz/supervisor.c \
	fuzz/campdir.c \
	fuzz/journal.h \
	fuzz/journal.c \
	fuzz/patterns.c \
	fuzz/gen_normal.c \
	fuzz/gen_uniform.c \
	fuzz/gen_small_int.c \
	fuzz/gen_large_mag.c \
	fuzz/gen_neg_logits.c \
	fuzz/gen_large_v.c \
	fuzz/gen_tiny.c \
	fuzz/gen_zero_q.c \
	fuzz/gen_zero_k.c \
	fuzz/gen_ties.c \
	fuzz/gen_dominant.c \
	fuzz/gen_late_max.c \
	fuzz/gen_outlier.c \
	fuzz/gen_v_cancel.c \
	fuzz/gen_masked_rows.c \
	fuzz/gen_nonfinite.c \
	fuzz/gen_tile_edge.c \
	fuzz/gen_tq_ne_tk.c \
	fuzz/gen_head_dim.c \
	fuzz/gen_gqa.c \
	fuzz/gen_per_head.c \
	fuzz/gen_strided.c \
	fuzz/gen_long_t.c \
	fuzz/gen_scale.c \
	fuzz/gen_mixed.c \
	fuzz/gen_sentinel.c \
	fuzz/gen_index_overflow.c \
	fuzz/vfam.c \
	fuzz/search_variants.c \
	fuzz/gen_window.c \
	fuzz/gen_softcap.c \
	fuzz/gen_alibi.c \
	fuzz/gen_bias.c \
	fuzz/gen_bool_mask.c \
	fuzz/gen_sinks.c \
	fuzz/gen_descale.c \
	fuzz/gen_variant_mix.c
# The campaign demo of ./quickstart.sh, the fuzzing guide and the Slurm array example.
dist_noinst_SCRIPTS += scripts/demo scripts/slurm-check scripts/killtest
EXTRA_DIST += docs/fuzzing.md contrib/slurm/attncheck-fuzz.sbatch docs/report-campaign.png docs/report-suite.png
include fuzz/reader.mk
