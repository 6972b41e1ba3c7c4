# tests/fuzz.mk: tests of the fuzzer (generators, campaigns, resume, shards, exec kernels).
AC_FUZZ_TESTS = tests/tfuzz_gen tests/tfuzz_variants tests/tfuzz_layouts tests/tfuzz_quant
AC_FUZZ_SH = tests/tfuzz_campaign.sh tests/tfuzz_resume.sh tests/tfuzz_shard.sh tests/tfuzz_exec.sh \
	tests/tfuzz_metamorphic.sh tests/tfuzz_lock.sh tests/tfuzz_fulldisk.sh tests/tfuzz_trust.sh \
	tests/texec_decl.sh tests/texec_python.sh tests/tfuzz_variant_families.sh tests/tfuzz_mixed_dtypes.sh \
	tests/texec_layouts.sh tests/tfuzz_layout_families.sh tests/tfuzz_grad.sh tests/texec_grad.sh tests/texec_grad_torch.sh tests/tfuzz_grad_meta.sh \
	tests/tfuzz_redraw.sh tests/tfuzz_interrupt.sh tests/tjudged_nothing.sh
check_PROGRAMS += $(AC_FUZZ_TESTS)
TESTS += $(AC_FUZZ_TESTS) $(AC_FUZZ_SH)
dist_noinst_SCRIPTS += $(AC_FUZZ_SH) tests/journal_stats.sh
EXTRA_DIST += python/attncheck/worker/numpy_sdpa.py python/attncheck/worker/torch_sdpa.py python/attncheck/worker/protocol.py
# tmerge_untrusted.sh: merge, replay and report take a campaign directory as data (no link followed,
# no FIFO or device opened, only a finding's files, repro.sh written anew, each refusal named).
TESTS += tests/tmerge_untrusted.sh
dist_noinst_SCRIPTS += tests/tmerge_untrusted.sh
