# tests/core.mk: tests of this layer.
AC_CORE_TESTS = tests/tdtype_f16 tests/tdtype_bf16 tests/tdtype tests/trng tests/tproblem tests/tassert tests/tquant \
	tests/tquant_store
check_PROGRAMS += $(AC_CORE_TESTS)
TESTS += $(AC_CORE_TESTS)
# the folders' layering: no include reaches a higher layer (and the check fails when one does)
AC_LAYER_SH = tests/layering.sh tests/layering_selftest.sh
TESTS += $(AC_LAYER_SH)
dist_noinst_SCRIPTS += $(AC_LAYER_SH)
EXTRA_DIST += src/core/README.md src/judge/README.md src/cli/README.md oracle/README.md kernels/README.md \
	fuzz/README.md fuzz/families/README.md fuzz/engine/README.md fuzz/report/README.md
# tescape: the one escaping of text attncheck did not write, and data files opened as data
check_PROGRAMS += tests/tescape
TESTS += tests/tescape
