# tests/kernels.mk: tests of this layer.

# The harness: every misbehaviour becomes its status; strides and pre-fills reach kernels.
check_PROGRAMS += tests/tharness tests/tharness_worker tests/tharness_exec tests/tharness_execkernel tests/tplugin
TESTS += tests/tharness tests/tharness_worker tests/tharness_exec tests/tplugin tests/plugin_refused.sh tests/plugin_suite.sh tests/plugin_abspath.sh tests/tinstall_plugin.sh
noinst_HEADERS += tests/tharness_util.h
dist_noinst_SCRIPTS += tests/plugin_refused.sh tests/plugin_suite.sh tests/plugin_abspath.sh tests/tinstall_plugin.sh
tests_tharness_CFLAGS = $(AC_TEST_CFLAGS)
tests_tharness_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)
tests_tharness_worker_CFLAGS = $(AC_TEST_CFLAGS)
tests_tharness_worker_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)
tests_tharness_exec_CFLAGS = $(AC_TEST_CFLAGS)
tests_tharness_exec_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)
tests_tharness_execkernel_CFLAGS = $(AM_CFLAGS)
tests_tharness_execkernel_LDADD = $(AC_KERNELS_LIBS)
# An exec worker's declaration (the hello handshake): parsing and capability checks.
check_PROGRAMS += tests/texec_decl_parse
TESTS += tests/texec_decl_parse
tests_texec_decl_parse_CFLAGS = $(AC_TEST_CFLAGS)
tests_texec_decl_parse_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)
tests_tplugin_CFLAGS = $(AC_TEST_CFLAGS)
tests_tplugin_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)

# Plugins the loader must refuse (and one with two kernels); built as modules by make check.
AC_TPLUGIN_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
check_LTLIBRARIES += tests/tplugin_badabi.la tests/tplugin_small.la tests/tplugin_nosym.la \
	tests/tplugin_empty.la tests/tplugin_multi.la tests/tplugin_malformed.la tests/tplugin_misbehave.la
tests_tplugin_badabi_la_SOURCES = tests/tplugin_badabi.c
tests_tplugin_badabi_la_CPPFLAGS = -I$(top_srcdir)/kernels
tests_tplugin_badabi_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_small_la_SOURCES = tests/tplugin_small.c
tests_tplugin_small_la_CPPFLAGS = -I$(top_srcdir)/kernels
tests_tplugin_small_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_nosym_la_SOURCES = tests/tplugin_nosym.c
tests_tplugin_nosym_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_empty_la_SOURCES = tests/tplugin_empty.c
tests_tplugin_empty_la_CPPFLAGS = -I$(top_srcdir)/kernels
tests_tplugin_empty_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_multi_la_SOURCES = tests/tplugin_multi.c
tests_tplugin_multi_la_CPPFLAGS = -I$(top_srcdir)/kernels
tests_tplugin_multi_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_malformed_la_SOURCES = tests/tplugin_malformed.c
tests_tplugin_malformed_la_CPPFLAGS = -I$(top_srcdir)/kernels
tests_tplugin_malformed_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_misbehave_la_SOURCES = tests/tplugin_misbehave.c
tests_tplugin_misbehave_la_CPPFLAGS = -I$(top_srcdir)/kernels
tests_tplugin_misbehave_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_misbehave_la_LIBADD = -lm

# Nothing a kernel or exec worker starts outlives its case or hangs attncheck.
TESTS += tests/tcontain.sh
dist_noinst_SCRIPTS += tests/tcontain.sh

# Built-in CPU kernels against naive-f64, and every mutant against its trigger input.
check_PROGRAMS += tests/tcpukernels
TESTS += tests/tcpukernels
tests_tcpukernels_CFLAGS = $(AC_TEST_CFLAGS)
tests_tcpukernels_LDADD = $(AC_TEST_LIBS) $(AC_KERNELS_LIBS)
