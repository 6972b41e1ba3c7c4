# src/cli/: layer 7, the attncheck command (see src/cli/README.md).
bin_PROGRAMS += attncheck
attncheck_SOURCES = src/cli/main.c src/cli/commands.h \
	src/cli/cmd_gen.c src/cli/gen_variants.c src/cli/gen_variants.h src/cli/cmd_info.c src/cli/cmd_oracle.c src/cli/cmd_explain.c src/cli/explain_variants.c src/cli/explain_variants.h \
	src/cli/explain_grad.c src/cli/explain_grad.h \
	src/cli/cmd_list.c \
	src/cli/cmd_check.c src/cli/cmd_suite.c src/cli/cmd_compare.c src/cli/cmd_fuzz.c src/cli/cmd_replay.c \
	src/cli/cmd_merge.c src/cli/cmd_report.c src/cli/suite_html.c src/cli/suite_html.h \
	src/cli/cmd_quant_report.c src/cli/quant_report_html.c src/cli/quant_report_html.h
# The command links libattncheck (src/api) and the fuzzer. Its run path finds the library beside
# it (the build tree's .libs/attncheck, which findings' repro.sh name, runs without libtool's
# wrapper), in ../lib of an installed prefix (DESTDIR installs included), and in $(libdir).
attncheck_LDADD = fuzz/libac_fuzz.la $(AC_LIB_LIBS)
attncheck_LDFLAGS = -Wl,-rpath,'$$ORIGIN' -Wl,-rpath,'$$ORIGIN/../lib' -R $(libdir)
