# src/judge/: layer 4, budgets, verdicts, reports, the fixed suite (see src/judge/README.md).
noinst_LTLIBRARIES += src/judge/libac_judge.la
src_judge_libac_judge_la_CFLAGS = $(AM_CFLAGS)
src_judge_libac_judge_la_SOURCES = \
	src/judge/verdict.c src/judge/verdict.h \
	src/judge/budget.c src/judge/budget.h \
	src/judge/budget_grad.c src/judge/budget_grad.h src/judge/budget_grad_int.h src/judge/budget_grad_tile.c src/judge/grad_judge.c src/judge/grad_judge.h src/judge/grad_report.c \
	src/judge/compare.c src/judge/compare_opts.c src/judge/compare.h \
	src/judge/domain.c \
	src/judge/report.c src/judge/report.h src/judge/report_classes.c src/judge/report_classes.h \
	src/judge/judge.c src/judge/judge.h \
	src/judge/suite.c src/judge/suite_values.c src/judge/suite_values.h src/judge/suite.h src/judge/suite_layouts.c src/judge/suite_quant.c src/judge/quant_report.c src/judge/quant_report.h src/judge/suite_grad.c \
	src/judge/tap.c src/judge/tap.h \
	src/judge/judge_args.c src/judge/judge_args.h
src_judge_libac_judge_la_SOURCES += src/judge/budget_grad_layout.c src/judge/suite_grad_layout.c
