# src/: the core library (layer 1), compare and budgets (layer 4), and the command (layer 6).
noinst_LIBRARIES += src/libac_core.a src/libac_compare.a
src_libac_core_a_CFLAGS = $(AM_CFLAGS)
src_libac_core_a_SOURCES = \
	src/util.c src/util.h src/ac_assert.h \
	src/dtype.c src/dtype.h \
	src/dtype_mpfr.c src/dtype_mpfr.h \
	src/rng.c src/rng.h \
	src/npy.c src/npy.h \
	src/problem.c src/problem.h \
	src/npz.c src/npz.h \
	src/casefile.c src/casefile.h src/casemeta.c \
	src/casefile_variants.c src/casefile_variants.h \
	src/layout.c src/layout.h src/layout_build.c src/casefile_layout.c src/casefile_layout.h \
	src/variants.c src/variants.h \
	src/vgen.c src/vgen.h \
	src/precision.c src/precision.h \
	src/examples.c

include src/compare.mk

bin_PROGRAMS += attncheck
attncheck_SOURCES = src/main.c src/commands.h \
	src/cmd_gen.c src/cmd_info.c src/cmd_oracle.c src/cmd_explain.c src/explain_variants.c src/explain_variants.h \
	src/cmd_list.c \
	src/cmd_check.c src/cmd_suite.c src/cmd_compare.c src/cmd_fuzz.c src/cmd_replay.c \
	src/cmd_merge.c src/cmd_report.c src/suite_html.c src/suite_html.h
attncheck_LDADD = $(AC_ALL_LIBS)
