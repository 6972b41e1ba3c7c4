# bench/grad_blas.mk: the backward oracle (and budgets) on all rows against a float64 forward + backward with the same BLAS (not run by make check).
noinst_PROGRAMS += bench/grad_blas
bench_grad_blas_SOURCES = bench/grad_blas.c bench/grad_naive.h
bench_grad_blas_CFLAGS = $(AM_CFLAGS) -O2
bench_grad_blas_LDADD = src/judge/libac_judge.la kernels/libac_kernels.la oracle/libac_oracle.la $(AC_CUDA_LINK) $(AC_CORE_LIBS)
