# kernels/cpu.mk: built-in CPU kernels and mutants.
AC_CPU_KERNEL_SOURCES = kernels/registry.c
