# tests/casefile.mk: NPZ case files, gen/info, numpy interoperability (the fuzz-corpus replay is in fuzz/reader.mk).
AC_CASEFILE_TESTS = tests/tnpz tests/tcasefile tests/tcasefile_variants tests/tlayout
AC_CASEFILE_SH = tests/tcli_gen.sh tests/tnumpy.sh
check_PROGRAMS += $(AC_CASEFILE_TESTS)
TESTS += $(AC_CASEFILE_TESTS) $(AC_CASEFILE_SH)
dist_noinst_SCRIPTS += $(AC_CASEFILE_SH)
EXTRA_DIST += tests/numpy_roundtrip.py
