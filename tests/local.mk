# tests/: Check programs, one per concept. t00config runs first and prints the build.
# A fragment lists its Check programs once (AC_*_TESTS: built by make check and run) and its
# scripts once (AC_*_SH: run and distributed). A test program is tests/NAME.c compiled with
# AM_CFLAGS (Check's flags included) and linked with the default LDADD below: the test library
# and every attncheck library (a static library adds only the objects a test uses). A program
# that differs says so with its own _SOURCES, _CFLAGS or _LDADD.
AM_TESTS_ENVIRONMENT = srcdir='$(srcdir)'; abs_top_builddir='$(abs_top_builddir)'; \
	PYTHON_NUMPY='$(PYTHON_NUMPY)'; ATTNCHECK_BIN='$(abs_top_builddir)/attncheck'; \
	export srcdir abs_top_builddir PYTHON_NUMPY ATTNCHECK_BIN;
# The shared test code: helpers, the MPFR reference of the dtypes, the brute-force oracle.
noinst_LIBRARIES += tests/libac_test.a
tests_libac_test_a_SOURCES = tests/testutil.c tests/testutil.h tests/tdtype_ref.c tests/tdtype_ref.h \
	tests/toracle_ref.c tests/toracle_ref.h tests/quant/qspecial.c tests/quant/qspecial.h
AC_TEST_LIBS = tests/libac_test.a $(CHECK_LIBS)
LDADD = $(AC_TEST_LIBS) $(AC_ALL_LIBS)

check_PROGRAMS += tests/t00config
TESTS += tests/t00config

include tests/core.mk
include tests/casefile.mk
include tests/oracle.mk
include tests/kernels.mk
include tests/fuzz.mk
include tests/report.mk
include tests/cuda.mk
include tests/compare.mk
include tests/docs.mk
include tests/python.mk
include tests/contrib.mk
include tests/quant.mk
include tests/asan.mk
