# bench/oracle_mem.mk: peak memory of `attncheck oracle --rows edges+8` against its inputs (not run by make check).
noinst_PROGRAMS += bench/oracle_mem
bench_oracle_mem_SOURCES = bench/oracle_mem.c
bench_oracle_mem_CFLAGS = $(AM_CFLAGS) -O2
bench_oracle_mem_LDADD = $(AC_CORE_LIBS)
