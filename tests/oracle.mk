# tests/oracle.mk: tests of the oracle (layer 2). toracle_ref.c is the shared brute force.
AC_TORACLE_SRC = tests/toracle_ref.c tests/toracle_ref.h
check_PROGRAMS += tests/toracle_brute
TESTS += tests/toracle_brute
tests_toracle_brute_SOURCES = tests/toracle_brute.c $(AC_TORACLE_SRC)
tests_toracle_brute_CFLAGS = $(AC_TEST_CFLAGS)
tests_toracle_brute_LDADD = $(AC_TEST_LIBS) $(AC_ORACLE_LIBS)
check_PROGRAMS += tests/toracle_basic
TESTS += tests/toracle_basic
tests_toracle_basic_SOURCES = tests/toracle_basic.c $(AC_TORACLE_SRC)
tests_toracle_basic_CFLAGS = $(AC_TEST_CFLAGS)
tests_toracle_basic_LDADD = $(AC_TEST_LIBS) $(AC_ORACLE_LIBS)
