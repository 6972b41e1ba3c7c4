# tests/oracle.mk: tests of the oracle (layer 2); the shared brute force is tests/toracle_ref.c.
# toracle_blas: the BLAS level against the per-row passes (same bits, budget terms within tolerance).
# tbudget, thull: budgets (src/judge/budget.c) against an emulated binary32 kernel on exact oracle values;
# tcli_limits: bad sizes from the command line (compressed members, absurd shapes, the memory cap,
# out of memory); tscaled: budgets of Q and K scaled in the input dtype, E <= W, the metamorphic
# tolerance on scaled underflow.
AC_ORACLE_TESTS = tests/toracle_brute tests/toracle_basic tests/toracle_exact tests/toracle_rows \
	tests/toracle_cache tests/toracle_fast tests/toracle_inf tests/tbudget tests/thull tests/tcli_limits \
	tests/tscaled tests/toracle_variants tests/toracle_varsat tests/toracle_varfold tests/texplain_variants \
	tests/toracle_quant tests/tgemm tests/toracle_blas
# the oracle cache from the command line: damaged entries never change a verdict
AC_ORACLE_SH = tests/tcmd_oracle_cache.sh tests/texplain_variants_cli.sh tests/tcmd_oracle_chunked.sh
check_PROGRAMS += $(AC_ORACLE_TESTS)
# explain's stages of a variant row (a part of the command, compiled in)
tests_texplain_variants_SOURCES = tests/texplain_variants.c src/cli/explain_variants.c
# the variants' brute force, written from the ABI's formula
tests_toracle_variants_SOURCES = tests/toracle_variants.c tests/toracle_varref.c tests/toracle_varref.h
# capped scores far past saturation, on the same brute force
tests_toracle_varsat_SOURCES = tests/toracle_varsat.c tests/toracle_varref.c tests/toracle_varref.h
# FOLD offsets in integers and where they leave them (oracle/varfold.c)
tests_toracle_varfold_SOURCES = tests/toracle_varfold.c tests/toracle_varref.c tests/toracle_varref.h
TESTS += $(AC_ORACLE_TESTS) $(AC_ORACLE_SH)
dist_noinst_SCRIPTS += $(AC_ORACLE_SH)
# the backward oracle (oracle/grad.h) against its own brute force, written from the formula: plain
# attention (tgrad), the variants it takes (tgrad_variants), the softcap (tgrad_softcap) and varlen
# batches (tgrad_layout); the matrix-product level against the older levels (tgrad_blas)
AC_GRAD_TESTS = tests/tgrad tests/tgrad_variants tests/tgrad_softcap tests/tgrad_layout tests/tgrad_blas
check_PROGRAMS += $(AC_GRAD_TESTS)
AC_GRAD_SHARED = tests/tgrad_ref.c tests/tgrad_ref.h tests/tgrad_util.c tests/tgrad_util.h
tests_tgrad_SOURCES = tests/tgrad.c $(AC_GRAD_SHARED)
tests_tgrad_variants_SOURCES = tests/tgrad_variants.c $(AC_GRAD_SHARED)
tests_tgrad_layout_SOURCES = tests/tgrad_layout.c $(AC_GRAD_SHARED)
tests_tgrad_softcap_SOURCES = tests/tgrad_softcap.c $(AC_GRAD_SHARED)
tests_tgrad_blas_SOURCES = tests/tgrad_blas.c $(AC_GRAD_SHARED)
TESTS += $(AC_GRAD_TESTS)
