# src/ layer 4: budgets, verdicts, reports, the fixed suite (precision classes are in the core).
src_libac_compare_a_CFLAGS = $(AM_CFLAGS)
src_libac_compare_a_SOURCES = \
	src/verdict.c src/verdict.h \
	src/budget.c src/budget.h \
	src/compare.c src/compare.h \
	src/domain.c \
	src/report.c src/report.h \
	src/judge.c src/judge.h \
	src/suite.c src/suite.h \
	src/tap.c src/tap.h \
	src/judge_args.c src/judge_args.h
