# src/ layer 4: precision classes, budgets, verdicts.
src_libac_compare_a_CFLAGS = $(AM_CFLAGS)
src_libac_compare_a_SOURCES = \
	src/precision.c src/precision.h \
	src/compare.c src/compare.h
