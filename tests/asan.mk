# tests/asan.mk: tests/asan/attncheck, the command built again with AddressSanitizer and
# UndefinedBehaviorSanitizer (ASAN_TEST_CFLAGS, the flags of --enable-sanitizers) from the sources of
# every library it links but the CUDA loader, so that tests/tasan_extremes.sh runs the oracle, the
# judge and the minimizer instrumented in every build whose compiler can (configure's probe);
# otherwise the test SKIPs with the reason.
AC_ASAN_SH = tests/tasan_extremes.sh
TESTS += $(AC_ASAN_SH)
dist_noinst_SCRIPTS += $(AC_ASAN_SH)
if HAVE_ASAN_TEST
check_PROGRAMS += tests/asan/attncheck
tests_asan_attncheck_SOURCES = $(attncheck_SOURCES) $(fuzz_libac_fuzz_la_SOURCES) $(libattncheck_la_SOURCES) \
	$(src_judge_libac_judge_la_SOURCES) $(kernels_libac_kernels_la_SOURCES) $(oracle_libac_oracle_la_SOURCES) \
	$(src_core_libac_core_la_SOURCES)
tests_asan_attncheck_CFLAGS = $(AM_CFLAGS) $(ASAN_TEST_CFLAGS)
tests_asan_attncheck_LDFLAGS = $(ASAN_TEST_CFLAGS)
tests_asan_attncheck_LDADD = $(AC_CUDA_LINK) $(BLAS_LIBS) $(MPFR_LIBS) $(JSONC_LIBS) $(LIBZIP_LIBS) $(NETTLE_LIBS) -lgmp -lm
endif
