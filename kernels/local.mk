# kernels/: the ABI, harness, plugin loader, built-in CPU kernels, mutants (layer 3).
noinst_LIBRARIES += kernels/libac_kernels.a
kernels_libac_kernels_a_CFLAGS = $(AM_CFLAGS)
kernels_libac_kernels_a_SOURCES = $(AC_CPU_KERNEL_SOURCES) \
	kernels/attncheck_kernel.h kernels/harness.h \
	kernels/harness.c
include kernels/cpu.mk
