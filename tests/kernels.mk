# tests/kernels.mk: tests of this layer.

# The harness: every misbehaviour becomes its status; strides and pre-fills reach kernels;
# texec_decl_parse: an exec worker's declaration (the hello handshake), parsing and capability
# checks; tcpukernels: built-in CPU kernels against naive-f64, and every mutant against its trigger;
# tvariants: the ABI 2 variants of the CPU kernels against a long-double reference, and every
# variant mutant exposed; tharness_grad: the ABI 3 backward entry, its harness run, dO in the case
# file, the backward kernels and mutants against the exact backward.
AC_KERNELS_TESTS = tests/tharness tests/tharness_worker tests/tharness_exec tests/tharness_variants tests/tharness_grad tests/tplugin \
	tests/texec_decl_parse tests/tcpukernels tests/tvariants
# tharness_grad_varlen: the backward of varlen batches at the kernel boundary (guards, unwritten
# elements, paged refused, the varlen backward kernels and mutant against the exact backward).
AC_KERNELS_TESTS += tests/tharness_grad_varlen
# tcontain.sh: nothing a kernel or exec worker starts outlives its case or hangs attncheck;
# tcmd_list_caps.sh: `attncheck list` shows each kernel's ABI 2 caps.
# tcmd_mixed_dtypes.sh: per-tensor dtypes from gen through info, explain, the kernels and refusals.
# tcli_grad.sh: the backward from gen --grad through info, check --grad and the suite's backward cases.
# tgrad_tight.sh: a backward one step a precision lower (mutant-bwd-lse-bf16) FAILs at err/W 1.5 to 50.
# tcalibrate_grad.sh: bench/calibrate --grad on a few cases: its table, counts, --write-case and refusals.
AC_KERNELS_SH = tests/plugin_refused.sh tests/plugin_suite.sh tests/tinstall_plugin.sh tests/tcontain.sh tests/plugin_abspath.sh \
	tests/plugin_abi1.sh tests/plugin_abi2.sh tests/plugin_abi3.sh tests/tcmd_list_caps.sh tests/tcmd_mixed_dtypes.sh tests/tcli_grad.sh \
	tests/tgrad_tight.sh tests/tcalibrate_grad.sh
check_PROGRAMS += $(AC_KERNELS_TESTS) tests/tharness_execkernel
TESTS += $(AC_KERNELS_TESTS) $(AC_KERNELS_SH)
dist_noinst_SCRIPTS += $(AC_KERNELS_SH)
noinst_HEADERS += tests/tharness_util.h

# Plugins the loader must refuse (and one with two kernels); built as modules by make check, most
# of them seeing only the ABI header.
AC_TPLUGIN_CPPFLAGS = -I$(top_srcdir)/kernels
AC_TPLUGIN_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
check_LTLIBRARIES += tests/tplugin_badabi.la tests/tplugin_small.la tests/tplugin_nosym.la \
	tests/tplugin_empty.la tests/tplugin_multi.la tests/tplugin_malformed.la tests/tplugin_misbehave.la
tests_tplugin_badabi_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_badabi_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_small_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_small_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_nosym_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_empty_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_empty_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_multi_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_multi_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_malformed_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_malformed_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_misbehave_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_misbehave_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_misbehave_la_LIBADD = -lm
# A plugin declaring FlashAttention-2's causal ALiBi LSE (ATTNCHECK_CAP_ALIBI_LSE_FA2; tests/tcmd_alibi_lse.sh).
check_LTLIBRARIES += tests/tplugin_alibi.la
tests_tplugin_alibi_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_alibi_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_alibi_la_LIBADD = -lm

# An ABI 1 plugin: the example plugin of the release before ABI 2, built against the frozen
# version 1 header (tests/abi1/attncheck/kernel.h); tests/plugin_abi1.sh runs suite ci on it.
check_LTLIBRARIES += tests/abi1/myplugin_v1.la
tests_abi1_myplugin_v1_la_SOURCES = tests/abi1/myplugin_v1.c
tests_abi1_myplugin_v1_la_CPPFLAGS = -I$(top_srcdir)/tests/abi1
tests_abi1_myplugin_v1_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_abi1_myplugin_v1_la_LIBADD = -lm
noinst_HEADERS += tests/abi1/attncheck/kernel.h

# An ABI 2 plugin: the example plugin as released with ABI 2, built against the frozen version 2
# header (tests/abi2/attncheck/kernel.h); tests/plugin_abi2.sh runs it and checks layout SKIPs.
check_LTLIBRARIES += tests/abi2/myplugin_v2.la
tests_abi2_myplugin_v2_la_SOURCES = tests/abi2/myplugin_v2.c
tests_abi2_myplugin_v2_la_CPPFLAGS = -I$(top_srcdir)/tests/abi2
tests_abi2_myplugin_v2_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_abi2_myplugin_v2_la_LIBADD = -lm
noinst_HEADERS += tests/abi2/attncheck/kernel.h
# A version 3 plugin with a backward, built against the frozen version 3 header
# (tests/abi3/attncheck/kernel.h); tests/plugin_abi3.sh checks what its run_backward is handed.
check_LTLIBRARIES += tests/abi3/myplugin_v3.la
tests_abi3_myplugin_v3_la_SOURCES = tests/abi3/myplugin_v3.c
tests_abi3_myplugin_v3_la_CPPFLAGS = -I$(top_srcdir)/tests/abi3
tests_abi3_myplugin_v3_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_abi3_myplugin_v3_la_LIBADD = -lm
noinst_HEADERS += tests/abi3/attncheck/kernel.h
# tcli_grad_varlen.sh: the backward of varlen batches (gen --grad, check --grad, explain --seq, suite).
TESTS += tests/tcli_grad_varlen.sh
dist_noinst_SCRIPTS += tests/tcli_grad_varlen.sh

EXTRA_DIST += tests/data/grad_sink_subnormal.npz tests/data/grad_sentinel_tie.npz
# tcontain_escape.sh: nothing a kernel or exec worker starts outlives its case, not even what leaves
# its session and group (setsid) and forks again. tforge_lines.sh: what a kernel or worker says is
# escaped in every output (no forged line, no terminal control).
TESTS += tests/tcontain_escape.sh tests/tforge_lines.sh
# treaper: orphans of a case are its children's strays, killed and reaped; registered children never
check_PROGRAMS += tests/treaper
TESTS += tests/treaper
dist_noinst_SCRIPTS += tests/tcontain_escape.sh tests/tforge_lines.sh
# plugin_fuzz.sh: a 300-case fuzz campaign on each of the example plugin's kernels ends with 0 findings.
TESTS += tests/plugin_fuzz.sh
dist_noinst_SCRIPTS += tests/plugin_fuzz.sh
# tplugin_lse: a correct o with an unwritten or NaN LSE and no ATTNCHECK_CAP_NO_LSE (tcli_hints.sh).
check_LTLIBRARIES += tests/tplugin_lse.la
tests_tplugin_lse_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_lse_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_lse_la_LIBADD = -lm
# tcli_hints.sh: exec: hints, "did you mean", durations without a unit, the ATTNCHECK_CAP_NO_LSE hint.
TESTS += tests/tcli_hints.sh
dist_noinst_SCRIPTS += tests/tcli_hints.sh
# tserving.sh: a paged cache's unused block-table entries are -1 and the pages they address (-1,
# num_pages) hold NaN, so a kernel that dereferences one reads NaN; each split-KV and layout
# mutant of docs/bugclasses.md §2.25-2.26 FAILs on its trigger and PASSes without it.
TESTS += tests/tserving.sh
dist_noinst_SCRIPTS += tests/tserving.sh
# A version 4 plugin, built against the frozen version 4 header (tests/abi4/attncheck/kernel.h);
# tests/plugin_abi4.sh runs it as ABI 4 did (an error of its run() stays a kernel error).
check_LTLIBRARIES += tests/abi4/myplugin_v4.la
tests_abi4_myplugin_v4_la_SOURCES = tests/abi4/myplugin_v4.c
tests_abi4_myplugin_v4_la_CPPFLAGS = -I$(top_srcdir)/tests/abi4
tests_abi4_myplugin_v4_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_abi4_myplugin_v4_la_LIBADD = -lm
noinst_HEADERS += tests/abi4/attncheck/kernel.h
# plugin_abi4.sh: the version 4 plugin loads, PASSes, and its "unsupported:" error is still a FAIL.
# plugin_readme.sh: the README's plugin builds from the build tree (attncheck-uninstalled.pc) under
# -Wall -Wextra -Werror and passes.
# tabi5.sh: ABI 5: run() refusals (SKIP, never a finding), declared empty-row conventions, the
# precision class per problem in every report, and what `list` shows of them.
TESTS += tests/plugin_abi4.sh tests/plugin_readme.sh tests/tabi5.sh
dist_noinst_SCRIPTS += tests/plugin_abi4.sh tests/plugin_readme.sh tests/tabi5.sh
# tplugin_quant: a plugin reading quantized K, V and Q from ABI 5's tensors.quant; a version 5 plugin
# built against the header before them (tests/abi5/attncheck/kernel.h). tplugin_quant.sh: the first
# PASSes on its formats, reading codes without scales FAILs, both ABI 5 plugins without formats SKIP.
check_LTLIBRARIES += tests/tplugin_quant.la tests/abi5/myplugin_v5.la
tests_tplugin_quant_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_quant_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_quant_la_LIBADD = -lm
tests_abi5_myplugin_v5_la_SOURCES = tests/abi5/myplugin_v5.c
tests_abi5_myplugin_v5_la_CPPFLAGS = -I$(top_srcdir)/tests/abi5
tests_abi5_myplugin_v5_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_abi5_myplugin_v5_la_LIBADD = -lm
noinst_HEADERS += tests/abi5/attncheck/kernel.h
TESTS += tests/tplugin_quant.sh
dist_noinst_SCRIPTS += tests/tplugin_quant.sh
# tplugin_quant_paged: a plugin written from the header alone reading quantized K and V of dense,
# varlen and paged caches (codes and scales, or ggml's blocks, at (page, slot)), one of them
# declaring ATTNCHECK_CAP_QUANT_ONLY. tplugin_quant_paged.sh: PASS on shuffled pages of every
# format it reads; `list` and a campaign of the layout families for the quantized-only one.
check_LTLIBRARIES += tests/tplugin_quant_paged.la
noinst_HEADERS += tests/tplugin_qdecode.h
tests_tplugin_quant_paged_la_CPPFLAGS = $(AC_TPLUGIN_CPPFLAGS)
tests_tplugin_quant_paged_la_LDFLAGS = $(AC_TPLUGIN_LDFLAGS)
tests_tplugin_quant_paged_la_LIBADD = -lm
TESTS += tests/tplugin_quant_paged.sh
dist_noinst_SCRIPTS += tests/tplugin_quant_paged.sh
