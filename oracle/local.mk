# oracle/: the exact oracle (layer 2). Never built with -ffast-math; contraction off.
noinst_LTLIBRARIES += oracle/libac_oracle.la
oracle_libac_oracle_la_CFLAGS = $(AM_CFLAGS) -O2 -ffp-contract=off -fno-fast-math -fvect-cost-model=dynamic
oracle_libac_oracle_la_SOURCES = \
	oracle/oracle.h \
	oracle/oracle_int.h \
	oracle/scores.c \
	oracle/exactcase.c \
	oracle/ziv.c \
	oracle/lsealt.c \
	oracle/round.c \
	oracle/budget.c \
	oracle/infscores.c \
	oracle/varint.h \
	oracle/varscores.c \
	oracle/varziv.c \
	oracle/varfold.c \
	oracle/rows.c \
	oracle/cache.c \
	oracle/oracle.c \
	oracle/layout.c \
	oracle/meanv.c \
	oracle/fast.h \
	oracle/fast.c \
	oracle/fastvar.c \
	oracle/fastmpfr.c \
	oracle/fastdd.c \
	oracle/fastexp.c \
	oracle/fastscores.c \
	oracle/fastdecode.c \
	oracle/gemm.h \
	oracle/gemm.c \
	oracle/blastile.h \
	oracle/blastile.c \
	oracle/blasfwd.h \
	oracle/blasint.h \
	oracle/blasfwd.c \
	oracle/blasrow.c \
	oracle/blaskeys.c \
	oracle/blasrefine.c \
	oracle/blasterms.c
oracle_libac_oracle_la_SOURCES += oracle/grad.h oracle/gradint.h oracle/grad.c oracle/gradrow.c oracle/gradexact.c oracle/gradfast.c oracle/gradoff.c oracle/gradcap.c
oracle_libac_oracle_la_SOURCES += oracle/gradlayout.c
oracle_libac_oracle_la_SOURCES += oracle/gradblas.h oracle/gradblas.c oracle/gradtile.c
