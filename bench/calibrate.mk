# bench/calibrate.mk: calibration of kappa on the correct CPU kernels, and with --grad of the backward
# budgets on the backward kernels (not run by make check; its printout is tests/data/calibration.txt).
noinst_PROGRAMS += bench/calibrate
bench_calibrate_SOURCES = bench/calibrate.c bench/calibrate.h bench/calcase.c bench/calibrate_grad.c
bench_calibrate_CFLAGS = $(AM_CFLAGS) -O2
bench_calibrate_LDADD = src/judge/libac_judge.la kernels/libac_kernels.la oracle/libac_oracle.la $(AC_CUDA_LINK) $(AC_CORE_LIBS)
