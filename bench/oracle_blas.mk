# bench/oracle_blas.mk: the oracle on every row against the float64 BLAS attention a user would write (not run by make check).
noinst_PROGRAMS += bench/oracle_blas
bench_oracle_blas_SOURCES = bench/oracle_blas.c
bench_oracle_blas_CFLAGS = $(AM_CFLAGS) -O2
bench_oracle_blas_LDADD = $(AC_ORACLE_LIBS)
