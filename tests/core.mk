# tests/core.mk: tests of this layer.
TDTYPE_REF = tests/tdtype_ref.c tests/tdtype_ref.h

check_PROGRAMS += tests/tdtype_f16 tests/tdtype_bf16 tests/tdtype tests/trng tests/tproblem tests/tassert
TESTS += tests/tdtype_f16 tests/tdtype_bf16 tests/tdtype tests/trng tests/tproblem tests/tassert

tests_tdtype_f16_SOURCES = tests/tdtype_f16.c $(TDTYPE_REF)
tests_tdtype_f16_CFLAGS = $(AC_TEST_CFLAGS)
tests_tdtype_f16_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)

tests_tdtype_bf16_SOURCES = tests/tdtype_bf16.c $(TDTYPE_REF)
tests_tdtype_bf16_CFLAGS = $(AC_TEST_CFLAGS)
tests_tdtype_bf16_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)

tests_tdtype_SOURCES = tests/tdtype.c $(TDTYPE_REF)
tests_tdtype_CFLAGS = $(AC_TEST_CFLAGS)
tests_tdtype_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)

tests_trng_CFLAGS = $(AC_TEST_CFLAGS)
tests_trng_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)

tests_tproblem_CFLAGS = $(AC_TEST_CFLAGS)
tests_tproblem_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)

tests_tassert_CFLAGS = $(AC_TEST_CFLAGS)
tests_tassert_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)
