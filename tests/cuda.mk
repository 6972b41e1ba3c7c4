# tests/cuda.mk: tests of the CUDA kernel library. tcuda_api always runs (stub or real);
# tcuda_kernels is built with CUDA only and SKIPs (77) without a device. Both link only the
# CUDA library (and the test library): it depends on nothing but the kernel ABI.
AC_CUDA_TESTS = tests/tcuda_api
tests_tcuda_api_LDADD = $(AC_TEST_LIBS) $(AC_CUDA_LINK) -lm
if HAVE_CUDA
AC_CUDA_TESTS += tests/tcuda_kernels
tests_tcuda_kernels_LDADD = $(AC_TEST_LIBS) $(AC_CUDA_LINK) -lm
endif
check_PROGRAMS += $(AC_CUDA_TESTS)
TESTS += $(AC_CUDA_TESTS)
EXTRA_DIST += tests/tcuda_kernels.c

# Commands that need no CUDA kernel never map libcudart (the CUDA module is loaded on demand).
TESTS += tests/tcuda_lazy.sh
dist_noinst_SCRIPTS += tests/tcuda_lazy.sh
if HAVE_CUDA
AM_TESTS_ENVIRONMENT += ATTNCHECK_BUILT_CUDA=yes; export ATTNCHECK_BUILT_CUDA;
endif
