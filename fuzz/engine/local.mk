# fuzz/engine/: evaluation, search, minimizer, findings and campaigns (see README.md).
fuzz_libac_fuzz_la_SOURCES += \
	fuzz/engine/slice.c fuzz/engine/layout_edit.c \
	fuzz/engine/eval.c fuzz/engine/eval_grad.c \
	fuzz/engine/metamorphic.c fuzz/engine/metamorphic_layout.c fuzz/engine/metamorphic_grad.c \
	fuzz/engine/signature.c \
	fuzz/engine/search.c \
	fuzz/engine/minimize.c \
	fuzz/engine/fmode.c fuzz/engine/defect.c fuzz/engine/defect_cases.c fuzz/engine/defects.c \
	fuzz/engine/defects_index.c fuzz/engine/defects_merge.c \
	fuzz/engine/finding.c fuzz/engine/findings_dir.c \
	fuzz/engine/corpus.c \
	fuzz/engine/campaign.h \
	fuzz/engine/campaign.c \
	fuzz/engine/campaign_findings.c fuzz/engine/relabel.c \
	fuzz/engine/supervisor.c \
	fuzz/engine/campaign_end.c fuzz/engine/errors_dir.c \
	fuzz/engine/campaign_json.c \
	fuzz/engine/campdir.c \
	fuzz/engine/journal.h \
	fuzz/engine/journal.c \
	fuzz/engine/journal_draws.c \
	fuzz/engine/redraw.c \
	fuzz/engine/search_variants.c
