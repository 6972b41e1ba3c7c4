# bench/quant_judge.mk: judging a quantized case against the same values in binary32 (not run by make check).
noinst_PROGRAMS += bench/quant_judge
bench_quant_judge_SOURCES = bench/quant_judge.c
bench_quant_judge_CFLAGS = $(AM_CFLAGS) -O2
bench_quant_judge_LDADD = $(AC_ALL_LIBS)
