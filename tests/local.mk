# tests/: Check programs, one per concept. t00config runs first and prints the build.
AM_TESTS_ENVIRONMENT = srcdir='$(srcdir)'; abs_top_builddir='$(abs_top_builddir)'; \
	PYTHON_NUMPY='$(PYTHON_NUMPY)'; ATTNCHECK_BIN='$(abs_top_builddir)/attncheck'; \
	export srcdir abs_top_builddir PYTHON_NUMPY ATTNCHECK_BIN;
noinst_LIBRARIES += tests/libac_test.a
tests_libac_test_a_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_libac_test_a_SOURCES = tests/testutil.c tests/testutil.h
AC_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
AC_TEST_LIBS = tests/libac_test.a $(CHECK_LIBS)

check_PROGRAMS += tests/t00config
TESTS += tests/t00config
tests_t00config_CFLAGS = $(AC_TEST_CFLAGS)
tests_t00config_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)

include tests/core.mk
include tests/casefile.mk
include tests/oracle.mk
include tests/kernels.mk
include tests/fuzz.mk
include tests/report.mk
include tests/cuda.mk
include tests/compare.mk
