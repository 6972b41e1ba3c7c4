# bench/mutants: cases until the fuzzer finds every mutant, against a random-normal baseline,
# and campaign throughput on small shapes.
noinst_PROGRAMS += bench/mutants
bench_mutants_SOURCES = bench/mutants.c
bench_mutants_LDADD = $(AC_ALL_LIBS)
