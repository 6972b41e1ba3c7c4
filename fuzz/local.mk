# fuzz/: generators, search, campaigns, minimizer (layer 5), and libFuzzer targets.
noinst_LIBRARIES += fuzz/libac_fuzz.a
fuzz_libac_fuzz_a_CFLAGS = $(AM_CFLAGS)
fuzz_libac_fuzz_a_SOURCES = \
	fuzz/fuzz.h \
	fuzz/families.c
