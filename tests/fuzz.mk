# tests/fuzz.mk: tests of the fuzzer (generators, campaigns, resume, shards, exec kernels).
AC_FUZZ_TESTS = tests/tfuzz_gen tests/tfuzz_variants tests/tfuzz_layouts tests/tfuzz_quant tests/tdefect_trigger
AC_FUZZ_SH = tests/tfuzz_campaign.sh tests/tfuzz_resume.sh tests/tfuzz_shard.sh tests/tfuzz_exec.sh \
	tests/tfuzz_metamorphic.sh tests/tfuzz_lock.sh tests/tfuzz_fulldisk.sh tests/tfuzz_trust.sh \
	tests/texec_decl.sh tests/texec_python.sh tests/tfuzz_variant_families.sh tests/tfuzz_mixed_dtypes.sh \
	tests/texec_layouts.sh tests/tfuzz_layout_families.sh tests/tfuzz_grad.sh tests/texec_grad.sh tests/texec_grad_torch.sh tests/tfuzz_grad_meta.sh \
	tests/tfuzz_redraw.sh tests/tfuzz_interrupt.sh tests/tjudged_nothing.sh tests/tfuzz_errors.sh tests/texec_empty_rows.sh \
	tests/trepro_exec.sh
check_PROGRAMS += $(AC_FUZZ_TESTS)
TESTS += $(AC_FUZZ_TESTS) $(AC_FUZZ_SH)
dist_noinst_SCRIPTS += $(AC_FUZZ_SH) tests/journal_stats.sh
EXTRA_DIST += python/attncheck/worker/numpy_sdpa.py python/attncheck/worker/torch_sdpa.py python/attncheck/worker/protocol.py \
	python/attncheck/worker/protocol_quant.py
# tmerge_untrusted.sh: merge, replay and report take a campaign directory as data (no link followed,
# no FIFO or device opened, only a finding's files, repro.sh written anew, each refusal named).
TESTS += tests/tmerge_untrusted.sh
dist_noinst_SCRIPTS += tests/tmerge_untrusted.sh
# an f16 gradient overflowing at one scale of dO only is no GRAD-METAMORPHIC (metamorphic_grad.c)
TESTS += tests/tfuzz_grad_meta_overflow.sh
dist_noinst_SCRIPTS += tests/tfuzz_grad_meta_overflow.sh
EXTRA_DIST += tests/data/grad_meta_overflow_f16.npz
# tfuzz_serving: split_kv, sinks and page_table draw the split-KV and serving-layout structure
# their defects need (docs/bugclasses.md §2.25, §2.26).
check_PROGRAMS += tests/tfuzz_serving
TESTS += tests/tfuzz_serving
# tfuzz_defects.sh: one defect for the findings of one planted defect (campaign shards and their
# merge), two for a mutant2- kernel (docs/fuzzing.md "Defects").
TESTS += tests/tfuzz_defects.sh
dist_noinst_SCRIPTS += tests/tfuzz_defects.sh
# tfuzz_relabel.sh: a finding judged on a row sample is labelled from every row of its case (or
# of its minimized form past the work bound), as `check` labels it.
# tfuzz_shapes.sh: the fuzzer draws only the shapes a kernel declares (gqa, dv-ne-dk, tq-ne-tk,
# scale) and counts the draws it discards; --shape-buckets keeps dense cases to N shapes and
# reports first runs of a shape apart; repro.sh sets the environment a worker declares.
# texec_class.sh: a one-shot command judged under its declared class, a worker's class per case
# ("ok class=NAME"), list of declared shapes and notes, torch_sdpa.py's CPU fallback.
TESTS += tests/tfuzz_relabel.sh tests/tfuzz_shapes.sh tests/texec_class.sh
dist_noinst_SCRIPTS += tests/tfuzz_relabel.sh tests/tfuzz_shapes.sh tests/texec_class.sh
