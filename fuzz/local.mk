# fuzz/: layer 5 (families) and 6 (engine, report): the fuzzer, and the libFuzzer targets (see README.md).
noinst_LTLIBRARIES += fuzz/libac_fuzz.la
fuzz_libac_fuzz_la_CFLAGS = $(AM_CFLAGS)
fuzz_libac_fuzz_la_SOURCES = fuzz/fuzz.h
include fuzz/families/local.mk
include fuzz/engine/local.mk
include fuzz/report/local.mk
# The campaign demo of ./quickstart.sh, the fuzzing guide and the Slurm array example.
dist_noinst_SCRIPTS += scripts/demo scripts/slurm-check scripts/killtest
EXTRA_DIST += docs/fuzzing.md contrib/slurm/attncheck-fuzz.sbatch docs/report-campaign.png docs/report-suite.png
include fuzz/reader.mk
