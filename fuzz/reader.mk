# fuzz/reader.mk: the case-reader fuzz target. Always a check program replaying its corpus;
# with libFuzzer also fuzz/fuzz_case_reader_lf (run: make fuzz-case-reader-run FUZZ_TIME=600).
check_PROGRAMS += fuzz/fuzz_case_reader
TESTS += fuzz/fuzz_case_reader
fuzz_fuzz_case_reader_SOURCES = fuzz/fuzz_case_reader.c
fuzz_fuzz_case_reader_CPPFLAGS = $(AM_CPPFLAGS) -DAC_FUZZ_REPLAY
fuzz_fuzz_case_reader_LDADD = $(AC_CORE_LIBS)

AC_CASE_READER_CORPUS = \
	fuzz/corpus/case_reader/bad-crc.npz \
	fuzz/corpus/case_reader/bad-descr.npz \
	fuzz/corpus/case_reader/bad-dtype.npz \
	fuzz/corpus/case_reader/bad-empty.npz \
	fuzz/corpus/case_reader/bad-fortran.npz \
	fuzz/corpus/case_reader/bad-huge.npz \
	fuzz/corpus/case_reader/bad-json-array.npz \
	fuzz/corpus/case_reader/bad-json.npz \
	fuzz/corpus/case_reader/bad-kv-heads.npz \
	fuzz/corpus/case_reader/bad-magic.npz \
	fuzz/corpus/case_reader/bad-mask.npz \
	fuzz/corpus/case_reader/bad-negative-dim.npz \
	fuzz/corpus/case_reader/bad-no-meta.npz \
	fuzz/corpus/case_reader/bad-no-q.npz \
	fuzz/corpus/case_reader/bad-not-zip.npz \
	fuzz/corpus/case_reader/bad-npy-header-long.npz \
	fuzz/corpus/case_reader/bad-npy-magic.npz \
	fuzz/corpus/case_reader/bad-npy-short-data.npz \
	fuzz/corpus/case_reader/bad-overflow.npz \
	fuzz/corpus/case_reader/bad-scale-decimal.npz \
	fuzz/corpus/case_reader/bad-scale-inf.npz \
	fuzz/corpus/case_reader/bad-schema-2.npz \
	fuzz/corpus/case_reader/bad-shape-tq.npz \
	fuzz/corpus/case_reader/bad-stride-negative.npz \
	fuzz/corpus/case_reader/bad-truncated-tail.npz \
	fuzz/corpus/case_reader/bad-truncated.npz \
	fuzz/corpus/case_reader/bad-unpacked-fortran.bin \
	fuzz/corpus/case_reader/bad-zero-dim.npz \
	fuzz/corpus/case_reader/fuzz-0087f9b4ac896395 \
	fuzz/corpus/case_reader/fuzz-0301a67837e7d9b8 \
	fuzz/corpus/case_reader/fuzz-039900c42fddbd09 \
	fuzz/corpus/case_reader/fuzz-048c8e627977de51 \
	fuzz/corpus/case_reader/fuzz-05b1622b822a165b \
	fuzz/corpus/case_reader/fuzz-081d1d6e4b68be48 \
	fuzz/corpus/case_reader/fuzz-086e00cb4a93c40b \
	fuzz/corpus/case_reader/fuzz-087533fbdfbc47e9 \
	fuzz/corpus/case_reader/fuzz-08cf15bb17c0c697 \
	fuzz/corpus/case_reader/fuzz-094310d935b550db \
	fuzz/corpus/case_reader/fuzz-0b22c61dfed16ea4 \
	fuzz/corpus/case_reader/fuzz-0e8c5b8dbbb8e283 \
	fuzz/corpus/case_reader/fuzz-0e92eb2ecce18830 \
	fuzz/corpus/case_reader/fuzz-0fc0df34b5306250 \
	fuzz/corpus/case_reader/fuzz-107b3648f76388f9 \
	fuzz/corpus/case_reader/fuzz-1302c36af6ad6909 \
	fuzz/corpus/case_reader/fuzz-1305a6590710ed40 \
	fuzz/corpus/case_reader/fuzz-13eb86c9dd13d4cf \
	fuzz/corpus/case_reader/fuzz-168fd78ac5ad63ab \
	fuzz/corpus/case_reader/fuzz-16fcf79efc784ebe \
	fuzz/corpus/case_reader/fuzz-17589b113738c6f4 \
	fuzz/corpus/case_reader/fuzz-18b8fc1d98bebb86 \
	fuzz/corpus/case_reader/fuzz-1da07874044239de \
	fuzz/corpus/case_reader/fuzz-1f8c0d456b9e9560 \
	fuzz/corpus/case_reader/fuzz-2118be8034d135b8 \
	fuzz/corpus/case_reader/fuzz-2227e05baee8b19c \
	fuzz/corpus/case_reader/fuzz-22a15863e4f80be1 \
	fuzz/corpus/case_reader/fuzz-22af837f9d5bbbd3 \
	fuzz/corpus/case_reader/fuzz-272132ac3be92367 \
	fuzz/corpus/case_reader/fuzz-27e95b790e9585e2 \
	fuzz/corpus/case_reader/fuzz-2a906d13877e9d7b \
	fuzz/corpus/case_reader/fuzz-2bbd875c333139ed \
	fuzz/corpus/case_reader/fuzz-2bd02ec7dddee9f9 \
	fuzz/corpus/case_reader/fuzz-2c938d4715148c79 \
	fuzz/corpus/case_reader/fuzz-2db70750f8ddefdc \
	fuzz/corpus/case_reader/fuzz-2e01d3cfdb0a54f2 \
	fuzz/corpus/case_reader/fuzz-2f705bff6492e972 \
	fuzz/corpus/case_reader/fuzz-311abf957b8824cd \
	fuzz/corpus/case_reader/fuzz-3563dfb977e50639 \
	fuzz/corpus/case_reader/fuzz-36285c64147e5a71 \
	fuzz/corpus/case_reader/fuzz-3851a08f74a44fc6 \
	fuzz/corpus/case_reader/fuzz-387793c03e2b8812 \
	fuzz/corpus/case_reader/fuzz-39236479b3ed5c83 \
	fuzz/corpus/case_reader/fuzz-39b42f92c0a9e5c3 \
	fuzz/corpus/case_reader/fuzz-3c96c0d85455bfdb \
	fuzz/corpus/case_reader/fuzz-3c9db9b14fcddbfe \
	fuzz/corpus/case_reader/fuzz-3ebdab03ea11f2ef \
	fuzz/corpus/case_reader/fuzz-3f088df0cab5e87b \
	fuzz/corpus/case_reader/fuzz-41f9bd088a737ed4 \
	fuzz/corpus/case_reader/fuzz-43dd5af024b6b7f4 \
	fuzz/corpus/case_reader/fuzz-4847e23178d330a6 \
	fuzz/corpus/case_reader/fuzz-488e0b82f7266229 \
	fuzz/corpus/case_reader/fuzz-4a9ee9d6e75a1a85 \
	fuzz/corpus/case_reader/fuzz-4c807ade1f0b37b0 \
	fuzz/corpus/case_reader/fuzz-4c9367f7673e924f \
	fuzz/corpus/case_reader/fuzz-50ca251b585fa49d \
	fuzz/corpus/case_reader/fuzz-512064385cdfbd52 \
	fuzz/corpus/case_reader/fuzz-51c2ebb74e14bad7 \
	fuzz/corpus/case_reader/fuzz-52371985353345df \
	fuzz/corpus/case_reader/fuzz-552f5f8ad90cdf5e \
	fuzz/corpus/case_reader/fuzz-55836c9b926388b2 \
	fuzz/corpus/case_reader/fuzz-588103140bd35d92 \
	fuzz/corpus/case_reader/fuzz-5bc1addd545bac38 \
	fuzz/corpus/case_reader/fuzz-5cab8e67de7a716a \
	fuzz/corpus/case_reader/fuzz-5d1d4d3b9c654723 \
	fuzz/corpus/case_reader/fuzz-5e90eca630986a8f \
	fuzz/corpus/case_reader/fuzz-616bab4e0fb7477f \
	fuzz/corpus/case_reader/fuzz-6204d1c38d8f8c08 \
	fuzz/corpus/case_reader/fuzz-622fd616b0aaf13b \
	fuzz/corpus/case_reader/fuzz-62d2be0f517fde96 \
	fuzz/corpus/case_reader/fuzz-65528321f7140f9c \
	fuzz/corpus/case_reader/fuzz-6643962df0345efd \
	fuzz/corpus/case_reader/fuzz-664abfad01c98775 \
	fuzz/corpus/case_reader/fuzz-66b06e49ecb69a6f \
	fuzz/corpus/case_reader/fuzz-691e1930de6a3195 \
	fuzz/corpus/case_reader/fuzz-69b9ec7e75fe852c \
	fuzz/corpus/case_reader/fuzz-6a53f3f6280e86d8 \
	fuzz/corpus/case_reader/fuzz-6d6cb2aeef7175d3 \
	fuzz/corpus/case_reader/fuzz-70fad3f5ab6ecea1 \
	fuzz/corpus/case_reader/fuzz-712feaa7775b2c4b \
	fuzz/corpus/case_reader/fuzz-718b9fc8af357ed2 \
	fuzz/corpus/case_reader/fuzz-77a40f995da8e7ae \
	fuzz/corpus/case_reader/fuzz-78457740dd891f7b \
	fuzz/corpus/case_reader/fuzz-79a6e9c73a068f61 \
	fuzz/corpus/case_reader/fuzz-7c6f09d577fc8a1e \
	fuzz/corpus/case_reader/fuzz-7d70e8e363486277 \
	fuzz/corpus/case_reader/fuzz-7fc141bafcbbbef5 \
	fuzz/corpus/case_reader/fuzz-81447b3ecd2d1ed0 \
	fuzz/corpus/case_reader/fuzz-8199c6c68febe276 \
	fuzz/corpus/case_reader/fuzz-81a78031c023488d \
	fuzz/corpus/case_reader/fuzz-82531280186b31c9 \
	fuzz/corpus/case_reader/fuzz-840fe68d78b8a80e \
	fuzz/corpus/case_reader/fuzz-8420bb4c1d410d41 \
	fuzz/corpus/case_reader/fuzz-84f5f92668a6091f \
	fuzz/corpus/case_reader/fuzz-85e900527b01655b \
	fuzz/corpus/case_reader/fuzz-87ee1623cf3ae6f2 \
	fuzz/corpus/case_reader/fuzz-88f0077e083e33fb \
	fuzz/corpus/case_reader/fuzz-89961bdb9ef74a29 \
	fuzz/corpus/case_reader/fuzz-8aa6399017362c6b \
	fuzz/corpus/case_reader/fuzz-8e50ce5745249210 \
	fuzz/corpus/case_reader/fuzz-8efd86fb78a56a51 \
	fuzz/corpus/case_reader/fuzz-8fd5659b758e3bb0 \
	fuzz/corpus/case_reader/fuzz-94fc7b27bd120c2c \
	fuzz/corpus/case_reader/fuzz-965e7edf572b0cb3 \
	fuzz/corpus/case_reader/fuzz-9712241dd09eae6b \
	fuzz/corpus/case_reader/fuzz-97b45a55d8419134 \
	fuzz/corpus/case_reader/fuzz-982cb70304b80237 \
	fuzz/corpus/case_reader/fuzz-983a1d532f1f786c \
	fuzz/corpus/case_reader/fuzz-998a7a64db5a705c \
	fuzz/corpus/case_reader/fuzz-9a218cc4e2942e70 \
	fuzz/corpus/case_reader/fuzz-9aef98fbffddf8d5 \
	fuzz/corpus/case_reader/fuzz-9b73dae708fadd00 \
	fuzz/corpus/case_reader/fuzz-9c75bcbe6e923120 \
	fuzz/corpus/case_reader/fuzz-9d31fbb1a21981f2 \
	fuzz/corpus/case_reader/fuzz-9d814be3044631f2 \
	fuzz/corpus/case_reader/fuzz-9e4ac9f8130f5ad6 \
	fuzz/corpus/case_reader/fuzz-a1cbe854d32cfe4f \
	fuzz/corpus/case_reader/fuzz-a2cf99566bfd9542 \
	fuzz/corpus/case_reader/fuzz-a59937d2ababd529 \
	fuzz/corpus/case_reader/fuzz-a676549431d998bc \
	fuzz/corpus/case_reader/fuzz-a798db9471d09c59 \
	fuzz/corpus/case_reader/fuzz-acbc35f424db7678 \
	fuzz/corpus/case_reader/fuzz-ace5b564a71739ca \
	fuzz/corpus/case_reader/fuzz-ad55748e73edb50f \
	fuzz/corpus/case_reader/fuzz-ae9788140ece8218 \
	fuzz/corpus/case_reader/fuzz-af062be73bd33757 \
	fuzz/corpus/case_reader/fuzz-b04f3ee8f5e43fa3 \
	fuzz/corpus/case_reader/fuzz-b329d422ac68e75e \
	fuzz/corpus/case_reader/fuzz-b4d0c02d8be57a79 \
	fuzz/corpus/case_reader/fuzz-b54db8ef723bc60a \
	fuzz/corpus/case_reader/fuzz-b7602203047007c4 \
	fuzz/corpus/case_reader/fuzz-ba9d3dc00f3ea8c8 \
	fuzz/corpus/case_reader/fuzz-bd4b89d7502471a4 \
	fuzz/corpus/case_reader/fuzz-bdb0bf6bde3be9e1 \
	fuzz/corpus/case_reader/fuzz-bde8a8d0285f863d \
	fuzz/corpus/case_reader/fuzz-be57c64e630bbddb \
	fuzz/corpus/case_reader/fuzz-be836a787086c6b7 \
	fuzz/corpus/case_reader/fuzz-bf97875eafe9e8e2 \
	fuzz/corpus/case_reader/fuzz-bfd3f68dc3bf7276 \
	fuzz/corpus/case_reader/fuzz-c583cb5b622dbbd1 \
	fuzz/corpus/case_reader/fuzz-c599e81cde6beabe \
	fuzz/corpus/case_reader/fuzz-c5f2ed5df0a73b6a \
	fuzz/corpus/case_reader/fuzz-c83a49db1b246a52 \
	fuzz/corpus/case_reader/fuzz-cecc7211eb90d741 \
	fuzz/corpus/case_reader/fuzz-d4c9639529434648 \
	fuzz/corpus/case_reader/fuzz-d63b990ffd1afd56 \
	fuzz/corpus/case_reader/fuzz-d794ce4d1a159fe8 \
	fuzz/corpus/case_reader/fuzz-d8ad1cf1279bc964 \
	fuzz/corpus/case_reader/fuzz-d9f2a1266a402467 \
	fuzz/corpus/case_reader/fuzz-db6e814a862b6c5c \
	fuzz/corpus/case_reader/fuzz-dcc321e1ea2ce845 \
	fuzz/corpus/case_reader/fuzz-dd63d55b5fc64471 \
	fuzz/corpus/case_reader/fuzz-e084e4643c196bfa \
	fuzz/corpus/case_reader/fuzz-e4e1fffa81dbc735 \
	fuzz/corpus/case_reader/fuzz-e5f7471ea1bef448 \
	fuzz/corpus/case_reader/fuzz-e63dbb4253be9677 \
	fuzz/corpus/case_reader/fuzz-e7001776dfc7d2e7 \
	fuzz/corpus/case_reader/fuzz-e797f8ed3318f1a5 \
	fuzz/corpus/case_reader/fuzz-e94e7b354420dd45 \
	fuzz/corpus/case_reader/fuzz-ec12cb2340248bb2 \
	fuzz/corpus/case_reader/fuzz-ecd45d385e493145 \
	fuzz/corpus/case_reader/fuzz-ee1f46dade691969 \
	fuzz/corpus/case_reader/fuzz-ef13d17d5e10dc96 \
	fuzz/corpus/case_reader/fuzz-f26be379aa4c9f4a \
	fuzz/corpus/case_reader/fuzz-f3cf894722128e61 \
	fuzz/corpus/case_reader/fuzz-f424058c363806b1 \
	fuzz/corpus/case_reader/fuzz-f570c01a9b99aa7f \
	fuzz/corpus/case_reader/fuzz-f59b9044be752ee4 \
	fuzz/corpus/case_reader/fuzz-f62b377e35d7eb15 \
	fuzz/corpus/case_reader/fuzz-f68dd78ab00dc5c0 \
	fuzz/corpus/case_reader/fuzz-fb467bb25be45fcf \
	fuzz/corpus/case_reader/fuzz-fbdf82391c67628f \
	fuzz/corpus/case_reader/fuzz-fceb7862f2c614b7 \
	fuzz/corpus/case_reader/fuzz-fd3df2bc1992d3fe \
	fuzz/corpus/case_reader/fuzz-fd7f0aa2b07c64ac \
	fuzz/corpus/case_reader/fuzz-fe9ebd683c3ae1a9 \
	fuzz/corpus/case_reader/fuzz-feb940e5ca6b29a7 \
	fuzz/corpus/case_reader/fuzz-fefaf5025679c69f \
	fuzz/corpus/case_reader/fuzz-ff59a3c52ba462e8 \
	fuzz/corpus/case_reader/ok-bf16-gqa.npz \
	fuzz/corpus/case_reader/ok-e4m3-zero-scale.npz \
	fuzz/corpus/case_reader/ok-e5m2-negzero-scale.npz \
	fuzz/corpus/case_reader/ok-f16-br-strided.npz \
	fuzz/corpus/case_reader/ok-f32-causal-o-lse.npz \
	fuzz/corpus/case_reader/ok-f64-none.npz \
	fuzz/corpus/case_reader/ok-unpacked-bf16-gqa.bin \
	fuzz/corpus/case_reader/ok-unpacked-e4m3-zero-scale.bin \
	fuzz/corpus/case_reader/ok-unpacked-e5m2-negzero-scale.bin \
	fuzz/corpus/case_reader/ok-unpacked-f16-br-strided.bin \
	fuzz/corpus/case_reader/ok-unpacked-f32-causal-o-lse.bin \
	fuzz/corpus/case_reader/ok-unpacked-f64-none.bin
dist_noinst_DATA += $(AC_CASE_READER_CORPUS)

if HAVE_LIBFUZZER
# FUZZ_CC is not CC: the core sources are compiled again, instrumented, by explicit rules.
AC_LFZ_FLAGS = -std=gnu11 $(WARN_CFLAGS) -g -O1 -ffp-contract=off -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
AC_LFZ_COMPILE = $(FUZZ_CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AC_LFZ_FLAGS)
AC_LFZ_DEPS = $(srcdir)/src/util.h $(srcdir)/src/dtype.h $(srcdir)/src/dtype_mpfr.h $(srcdir)/src/rng.h \
	$(srcdir)/src/problem.h $(srcdir)/src/npz.h $(srcdir)/src/casefile.h $(top_builddir)/config.h
AC_LFZ_OBJ_LIST = fuzz/lf/util.o fuzz/lf/dtype.o fuzz/lf/dtype_mpfr.o fuzz/lf/rng.o fuzz/lf/problem.o \
	fuzz/lf/npz.o fuzz/lf/casefile.o fuzz/lf/examples.o fuzz/lf/fuzz_case_reader.o
noinst_PROGRAMS += fuzz/fuzz_case_reader_lf
fuzz_fuzz_case_reader_lf_SOURCES =
fuzz_fuzz_case_reader_lf_LDADD = $(AC_LFZ_OBJ_LIST) $(MPFR_LIBS) $(JSONC_LIBS) $(LIBZIP_LIBS) -lgmp -lm
fuzz_fuzz_case_reader_lf_LINK = $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -pthread -o $@
CLEANFILES += $(AC_LFZ_OBJ_LIST)

fuzz/lf/util.o: $(srcdir)/src/util.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/util.c
fuzz/lf/dtype.o: $(srcdir)/src/dtype.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/dtype.c
fuzz/lf/dtype_mpfr.o: $(srcdir)/src/dtype_mpfr.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/dtype_mpfr.c
fuzz/lf/rng.o: $(srcdir)/src/rng.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/rng.c
fuzz/lf/problem.o: $(srcdir)/src/problem.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/problem.c
fuzz/lf/npz.o: $(srcdir)/src/npz.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/npz.c
fuzz/lf/casefile.o: $(srcdir)/src/casefile.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/casefile.c
fuzz/lf/examples.o: $(srcdir)/src/examples.c $(AC_LFZ_DEPS)
	@$(MKDIR_P) fuzz/lf
	$(AM_V_CC)$(AC_LFZ_COMPILE) -c -o $@ $(srcdir)/src/examples.c
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
