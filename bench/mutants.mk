# bench/mutants: cases until the fuzzer finds every mutant, against a random-normal baseline,
# and campaign throughput on small shapes; --defects: the defects each mutant's campaigns report.
noinst_PROGRAMS += bench/mutants
bench_mutants_SOURCES = bench/mutants.c bench/mutants.h bench/mutants_defects.c
bench_mutants_LDADD = $(AC_ALL_LIBS)
# The findings and defects two builds report for the same campaigns, side by side (a script).
EXTRA_DIST += bench/defects_before_after.sh
