# bench/oracle.mk: the oracle against the naive binary64 baseline and naive MPFR (not run by make check).
noinst_PROGRAMS += bench/oracle
bench_oracle_SOURCES = bench/oracle.c bench/naive_baseline.h
bench_oracle_CFLAGS = $(AM_CFLAGS) -O2
bench_oracle_LDADD = $(AC_ORACLE_LIBS)
