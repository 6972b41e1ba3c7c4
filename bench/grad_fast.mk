# bench/grad_fast.mk: the backward oracle against a naive binary64 backward on the same rows and columns (not run by make check).
noinst_PROGRAMS += bench/grad_fast
bench_grad_fast_SOURCES = bench/grad_fast.c bench/grad_naive.h
bench_grad_fast_CFLAGS = $(AM_CFLAGS) -O2
bench_grad_fast_LDADD = $(AC_ORACLE_LIBS)
