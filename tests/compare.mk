# tests/compare.mk: precision classes, budgets, verdicts, commands check/suite/compare/list.
AC_COMPARE_TESTS = tests/tcompare tests/tcompare_suite tests/tdomain
# tprecision_parts: classes as sets of parts, class strings, specs with parts (docs/numerics.md §6.1).
AC_COMPARE_TESTS += tests/tprecision_parts
# tdropout_mask: the DROPOUT-MASK verdict: no false alarm on correct generators, every structure caught.
AC_COMPARE_TESTS += tests/tdropout_mask
# tquant_dq: the class part dq=f32 against a kernel dequantizing c s - z s in binary32 (numerics.md §7.17).
AC_COMPARE_TESTS += tests/tquant_dq
check_PROGRAMS += $(AC_COMPARE_TESTS)
TESTS += $(AC_COMPARE_TESTS)
# tpreset_budgets: every budget of every preset class on the calibration corpus, bit for bit against
# tests/data/preset_budgets.txt (computed before the classes were built from parts).
check_PROGRAMS += tests/tpreset_budgets
TESTS += tests/tpreset_budgets
tests_tpreset_budgets_SOURCES = tests/tpreset_budgets.c bench/calcase.c bench/calibrate.h
tests_tpreset_budgets_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/bench
EXTRA_DIST += tests/data/preset_budgets.txt

# Command-level tests; they share one oracle cache in the build tree (tests/cache-compare).
# tcli_usage.sh: usage errors and bad command-line input: exit 2 with one line, for every command.
AC_COMPARE_SH = tests/tcmd_verdicts.sh tests/tcmd_suite_correct.sh tests/tcmd_suite_mutants.sh \
	tests/tcmd_compare.sh tests/tcmd_precision_dtypes.sh tests/tcli_usage.sh tests/tcmd_report_fields.sh \
	tests/tcmd_layouts.sh tests/tcmd_layout_bias.sh tests/tcmd_compare_grad.sh \
	tests/tcli_small_promises.sh tests/tcache_trust.sh
# tcmd_zero_budget.sh: no LSE or output a kernel rounds gets W = 0 (a sink-only row, one key, empty rows).
AC_COMPARE_SH += tests/tcmd_zero_budget.sh
# tcmd_dropout.sh: dropout with the kernel's keep-mask: gen, check forward and backward, the mutants, fuzz, exec.
AC_COMPARE_SH += tests/tcmd_dropout.sh
# tcmd_alibi_lse.sh: FlashAttention-2's causal ALiBi LSE, declared (caps bit, exec handshake, --alibi-lse) and judged exactly.
AC_COMPARE_SH += tests/tcmd_alibi_lse.sh
# tcmd_classes.sh: class strings (a preset's string judges as its name), refusals, several classes in one run.
AC_COMPARE_SH += tests/tcmd_classes.sh
# tcmd_ggml_kernels.sh: ggml-f16-style and q8q-f32-style PASS their presets, the mutants just past them FAIL.
AC_COMPARE_SH += tests/tcmd_ggml_kernels.sh
TESTS += $(AC_COMPARE_SH)
dist_noinst_SCRIPTS += $(AC_COMPARE_SH)
# The mutant run reuses the oracle results the correct kernels' run stored.
tests/tcmd_suite_mutants.log: tests/tcmd_suite_correct.log

# The shared oracle cache of the command tests lives in the build tree.
clean-local: clean-local-cache-compare
clean-local-cache-compare:
	-rm -rf tests/cache-compare
