# oracle/: the exact oracle (layer 2). Never built with -ffast-math; contraction off.
noinst_LIBRARIES += oracle/libac_oracle.a
oracle_libac_oracle_a_CFLAGS = $(AM_CFLAGS) -ffp-contract=off -fno-fast-math
oracle_libac_oracle_a_SOURCES = \
	oracle/oracle.h \
	oracle/oracle.c
