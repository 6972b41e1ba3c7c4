# fuzz/reader.mk: the case-reader fuzz target. Always a check program replaying its corpus;
# with libFuzzer also fuzz/fuzz_case_reader_lf (run: make fuzz-case-reader-run FUZZ_TIME=600).
check_PROGRAMS += fuzz/fuzz_case_reader
TESTS += fuzz/fuzz_case_reader
fuzz_fuzz_case_reader_SOURCES = fuzz/fuzz_case_reader.c
fuzz_fuzz_case_reader_CPPFLAGS = $(AM_CPPFLAGS) -DAC_FUZZ_REPLAY
fuzz_fuzz_case_reader_LDADD = $(AC_CORE_LIBS)

# The corpus is a directory the replay reads at run time (every file in it, whatever its name);
# the tarball gets a copy of the whole directory.
dist-hook: dist-case-reader-corpus
dist-case-reader-corpus:
	$(MKDIR_P) $(distdir)/fuzz/corpus
	cp -pR $(srcdir)/fuzz/corpus/case_reader $(distdir)/fuzz/corpus/
	chmod -R u+w $(distdir)/fuzz/corpus/case_reader

if HAVE_LIBFUZZER
# FUZZ_CC is not CC: the core sources are compiled again, instrumented, by explicit rules.
AC_LFZ_FLAGS = -std=gnu11 $(WARN_CFLAGS) -g -O1 -ffp-contract=off -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
AC_LFZ_COMPILE = $(FUZZ_CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AC_LFZ_FLAGS)
AC_LFZ_DEPS = $(srcdir)/src/core/util.h $(srcdir)/src/core/dtype.h $(srcdir)/src/core/dtype_mpfr.h $(srcdir)/src/core/rng.h \
	$(srcdir)/src/core/problem.h $(srcdir)/src/core/npz.h $(srcdir)/src/core/casefile.h $(srcdir)/src/core/variants.h $(srcdir)/src/core/casefile_variants.h $(top_builddir)/config.h
AC_LFZ_OBJ_LIST = fuzz/lf/util.o fuzz/lf/dtype.o fuzz/lf/dtype_mpfr.o fuzz/lf/rng.o fuzz/lf/problem.o \
	fuzz/lf/npz.o fuzz/lf/casefile.o fuzz/lf/casemeta.o fuzz/lf/casefile_variants.o fuzz/lf/variants.o fuzz/lf/examples.o \
	fuzz/lf/fuzz_case_reader.o
noinst_PROGRAMS += fuzz/fuzz_case_reader_lf
fuzz_fuzz_case_reader_lf_SOURCES =
fuzz_fuzz_case_reader_lf_LDADD = $(AC_LFZ_OBJ_LIST) $(MPFR_LIBS) $(JSONC_LIBS) $(LIBZIP_LIBS) -lgmp -lm
fuzz_fuzz_case_reader_lf_LINK = $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -pthread -o $@
# casefile.c reads and writes the serving layouts with layout.c and casefile_layout.c.
AC_LFZ_DEPS += $(srcdir)/src/core/layout.h $(srcdir)/src/core/casefile_layout.h
AC_LFZ_OBJ_LIST += fuzz/lf/layout.o fuzz/lf/casefile_layout.o
# casefile.c reads and writes quantized tensors with quant*.c and casefile_quant.c.
AC_LFZ_DEPS += $(srcdir)/src/core/quant.h $(srcdir)/src/core/casefile_quant.h
AC_LFZ_OBJ_LIST += fuzz/lf/quant.o fuzz/lf/quant_ref.o fuzz/lf/quant_ggml.o fuzz/lf/quant_case.o fuzz/lf/casefile_quant.o \
	fuzz/lf/quant_spec.o fuzz/lf/quant_store.o fuzz/lf/quant_pack.o
# npz.c reads its members' npy headers with npy.c.
AC_LFZ_DEPS += $(srcdir)/src/core/npy.h
AC_LFZ_OBJ_LIST += fuzz/lf/npy.o
CLEANFILES += $(AC_LFZ_OBJ_LIST)

fuzz/lf/util.o: $(srcdir)/src/core/util.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/util.c
fuzz/lf/dtype.o: $(srcdir)/src/core/dtype.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/dtype.c
fuzz/lf/dtype_mpfr.o: $(srcdir)/src/core/dtype_mpfr.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/dtype_mpfr.c
fuzz/lf/rng.o: $(srcdir)/src/core/rng.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/rng.c
fuzz/lf/npy.o: $(srcdir)/src/core/npy.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/npy.c
fuzz/lf/problem.o: $(srcdir)/src/core/problem.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/problem.c
fuzz/lf/npz.o: $(srcdir)/src/core/npz.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/npz.c
fuzz/lf/casefile_variants.o: $(srcdir)/src/core/casefile_variants.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/casefile_variants.c
fuzz/lf/variants.o: $(srcdir)/src/core/variants.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/variants.c
fuzz/lf/casefile.o: $(srcdir)/src/core/casefile.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/casefile.c
fuzz/lf/casemeta.o: $(srcdir)/src/core/casemeta.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/casemeta.c
fuzz/lf/examples.o: $(srcdir)/src/core/examples.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/examples.c
fuzz/lf/layout.o: $(srcdir)/src/core/layout.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/layout.c
fuzz/lf/casefile_layout.o: $(srcdir)/src/core/casefile_layout.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/casefile_layout.c
fuzz/lf/quant.o: $(srcdir)/src/core/quant.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant.c
fuzz/lf/quant_ref.o: $(srcdir)/src/core/quant_ref.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant_ref.c
fuzz/lf/quant_ggml.o: $(srcdir)/src/core/quant_ggml.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant_ggml.c
fuzz/lf/quant_case.o: $(srcdir)/src/core/quant_case.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant_case.c
fuzz/lf/casefile_quant.o: $(srcdir)/src/core/casefile_quant.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/casefile_quant.c
fuzz/lf/quant_spec.o: $(srcdir)/src/core/quant_spec.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant_spec.c
fuzz/lf/quant_store.o: $(srcdir)/src/core/quant_store.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant_store.c
fuzz/lf/quant_pack.o: $(srcdir)/src/core/quant_pack.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/core/quant_pack.c
fuzz/lf/fuzz_case_reader.o: $(srcdir)/fuzz/fuzz_case_reader.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/fuzz/fuzz_case_reader.c

# A fuzzing session on a scratch copy of the corpus; new crash inputs land in fuzz-case-reader-out/.
# libFuzzer's own exit codes are remapped so that a finding never reads as a skip (77).
FUZZ_TIME = 600
fuzz-case-reader-run: fuzz/fuzz_case_reader_lf$(EXEEXT)
	$(MKDIR_P) fuzz-case-reader-work fuzz-case-reader-out
	cp $(srcdir)/fuzz/corpus/case_reader/* fuzz-case-reader-work/
	nice ./fuzz/fuzz_case_reader_lf$(EXEEXT) -max_len=65536 \
	  -max_total_time=$(FUZZ_TIME) -error_exitcode=1 -timeout_exitcode=1 -rss_limit_mb=2048 \
	  -artifact_prefix=fuzz-case-reader-out/ fuzz-case-reader-work
.PHONY: fuzz-case-reader-run
endif
