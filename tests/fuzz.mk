# tests/fuzz.mk: tests of the fuzzer (generators, campaigns, resume, shards, exec kernels).
check_PROGRAMS += tests/tfuzz_gen
TESTS += tests/tfuzz_gen tests/tfuzz_campaign.sh tests/tfuzz_resume.sh tests/tfuzz_shard.sh tests/tfuzz_exec.sh tests/tfuzz_metamorphic.sh tests/tfuzz_lock.sh \
	tests/tfuzz_fulldisk.sh tests/tfuzz_trust.sh tests/texec_decl.sh tests/texec_python.sh
dist_noinst_SCRIPTS += tests/tfuzz_campaign.sh tests/tfuzz_resume.sh tests/tfuzz_shard.sh tests/tfuzz_exec.sh tests/tfuzz_metamorphic.sh tests/tfuzz_lock.sh \
	tests/journal_stats.sh tests/tfuzz_fulldisk.sh tests/tfuzz_trust.sh tests/texec_decl.sh tests/texec_python.sh
tests_tfuzz_gen_CFLAGS = $(AC_TEST_CFLAGS)
tests_tfuzz_gen_LDADD = $(AC_TEST_LIBS) $(AC_ALL_LIBS)
EXTRA_DIST += examples/python/sdpa_numpy.py examples/python/torch_sdpa.py examples/python/attncheck_worker.py
