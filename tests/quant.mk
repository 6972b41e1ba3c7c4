# tests/quant.mk: quantized tensors (docs/quantized.md) from the outside: ggml's layouts and quantizers
# against gguf-py (SKIP without it), the command line (gen, info, check, suite, fuzz), the exec protocol
# (SKIP without numpy), quant-report. The C tests are tquant (core.mk), toracle_quant (oracle.mk) and
# tfuzz_quant (fuzz.mk). tquant_mutants.sh: the quantized mutants found by fuzz.
check_PROGRAMS += tests/quant/ggml_tool
tests_quant_ggml_tool_LDADD = $(AC_CORE_LIBS)
# extreme scales of every format and granularity as case files (tquant_extremes.sh, tasan_extremes.sh)
check_PROGRAMS += tests/quant/extremes
tests_quant_extremes_LDADD = tests/libac_test.a $(AC_CORE_LIBS)
AC_QUANT_SH = tests/tquant_gguf.sh tests/tquant_cli.sh tests/texec_quant.sh tests/tquant_report.sh tests/tquant_explain.sh tests/tquant_classes.sh tests/tquant_mutants.sh \
	tests/tquant_extremes.sh
TESTS += $(AC_QUANT_SH)
dist_noinst_SCRIPTS += $(AC_QUANT_SH)
EXTRA_DIST += tests/quant/gguf_ref.py tests/data/kv16_softcap_standard.npz
