# tests/kernels.mk: tests of this layer.

# Built-in CPU kernels against naive-f64, and every mutant against its trigger input.
check_PROGRAMS += tests/tcpukernels
TESTS += tests/tcpukernels
tests_tcpukernels_CFLAGS = $(AC_TEST_CFLAGS)
tests_tcpukernels_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)
