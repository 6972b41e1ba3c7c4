# src/core/: layer 1, the data model every other layer builds on (see src/core/README.md).
noinst_LTLIBRARIES += src/core/libac_core.la
src_core_libac_core_la_CFLAGS = $(AM_CFLAGS)
src_core_libac_core_la_SOURCES = \
	src/core/util.c src/core/util.h src/core/ac_assert.h \
	src/core/escape.c src/core/datafile.c \
	src/core/suggest.c src/core/suggest.h \
	src/core/dtype.c src/core/dtype.h \
	src/core/dtype_mpfr.c src/core/dtype_mpfr.h \
	src/core/rng.c src/core/rng.h \
	src/core/npy.c src/core/npy.h \
	src/core/problem.c src/core/problem.h \
	src/core/npz.c src/core/npz.h \
	src/core/casefile.c src/core/casefile.h src/core/casemeta.c \
	src/core/dout.c src/core/dout.h \
	src/core/casefile_variants.c src/core/casefile_variants.h \
	src/core/layout.c src/core/layout.h src/core/layout_build.c \
	src/core/casefile_layout.c src/core/casefile_layout.h \
	src/core/quant.c src/core/quant.h src/core/quant_ref.c src/core/quant_ggml.c src/core/quant_case.c \
	src/core/quant_adv.c src/core/quant_spec.c src/core/quant_store.c src/core/quant_pack.c \
	src/core/casefile_quant.c src/core/casefile_quant.h \
	src/core/variants.c src/core/variants.h \
	src/core/dropout.c src/core/dropout.h \
	src/core/vgen.c src/core/vgen.h \
	src/core/precision.c src/core/precision.h src/core/precision_parts.c src/core/precision_print.c \
	src/core/examples.c
