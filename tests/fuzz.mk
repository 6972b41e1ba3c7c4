# tests/fuzz.mk: tests of the fuzzer (generators, campaigns, resume, shards, exec kernels).
check_PROGRAMS += tests/tfuzz_gen
TESTS += tests/tfuzz_gen
tests_tfuzz_gen_CFLAGS = $(AC_TEST_CFLAGS)
tests_tfuzz_gen_LDADD = $(AC_TEST_LIBS) fuzz/libac_fuzz.a $(AC_CORE_LIBS)
