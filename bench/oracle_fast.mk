# bench/oracle_fast.mk: the oracle's certified binary64 pass against the naive binary64 baseline (not run by make check).
noinst_PROGRAMS += bench/oracle_fast
bench_oracle_fast_SOURCES = bench/oracle_fast.c bench/naive_baseline.h bench/grad_naive.h
bench_oracle_fast_CFLAGS = $(AM_CFLAGS) -O2
bench_oracle_fast_LDADD = $(AC_ORACLE_LIBS)
