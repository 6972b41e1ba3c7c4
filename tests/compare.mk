# tests/compare.mk: precision classes, budgets, verdicts, commands check/suite/compare/list.
AC_COMPARE_TEST_LIBS = src/libac_compare.a kernels/libac_kernels.a oracle/libac_oracle.a $(AC_CUDA_LINK) $(AC_CORE_LIBS)

check_PROGRAMS += tests/tcompare
TESTS += tests/tcompare
tests_tcompare_CFLAGS = $(AC_TEST_CFLAGS)
tests_tcompare_LDADD = $(AC_TEST_LIBS) $(AC_COMPARE_TEST_LIBS)

# Command-level tests; they share one oracle cache in the build tree (tests/cache-compare).
TESTS += tests/tcmd_verdicts.sh tests/tcmd_suite_correct.sh tests/tcmd_suite_mutants.sh tests/tcmd_compare.sh \
	tests/tcmd_precision_dtypes.sh tests/tcmd_report_fields.sh
dist_noinst_SCRIPTS += tests/tcmd_verdicts.sh tests/tcmd_suite_correct.sh tests/tcmd_suite_mutants.sh tests/tcmd_compare.sh \
	tests/tcmd_precision_dtypes.sh tests/tcmd_report_fields.sh
# Usage errors and bad command-line input: exit 2 with one line, for every command.
TESTS += tests/tcli_usage.sh
dist_noinst_SCRIPTS += tests/tcli_usage.sh
# The mutant run reuses the oracle results the correct kernels' run stored.
tests/tcmd_suite_mutants.log: tests/tcmd_suite_correct.log

check_PROGRAMS += tests/tcompare_suite
TESTS += tests/tcompare_suite
tests_tcompare_suite_CFLAGS = $(AC_TEST_CFLAGS)
tests_tcompare_suite_LDADD = $(AC_TEST_LIBS) $(AC_COMPARE_TEST_LIBS)

# The shared oracle cache of the command tests lives in the build tree.
clean-local: clean-local-cache-compare
clean-local-cache-compare:
	-rm -rf tests/cache-compare

check_PROGRAMS += tests/tdomain
TESTS += tests/tdomain
tests_tdomain_CFLAGS = $(AC_TEST_CFLAGS)
tests_tdomain_LDADD = $(AC_TEST_LIBS) $(AC_COMPARE_TEST_LIBS)
