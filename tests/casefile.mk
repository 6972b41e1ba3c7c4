# tests/casefile.mk: NPZ case files, gen/info, numpy interoperability (the fuzz-corpus replay is in fuzz/reader.mk).
check_PROGRAMS += tests/tnpz tests/tcasefile
TESTS += tests/tnpz tests/tcasefile tests/tcli_gen.sh tests/tnumpy.sh
tests_tnpz_CFLAGS = $(AC_TEST_CFLAGS)
tests_tnpz_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)
tests_tcasefile_CFLAGS = $(AC_TEST_CFLAGS)
tests_tcasefile_LDADD = $(AC_TEST_LIBS) $(AC_CORE_LIBS)
dist_noinst_SCRIPTS += tests/tcli_gen.sh tests/tnumpy.sh
EXTRA_DIST += tests/numpy_roundtrip.py
