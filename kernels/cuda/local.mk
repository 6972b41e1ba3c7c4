# kernels/cuda/: the CUDA convenience library, or its stub when CUDA is absent.
noinst_LIBRARIES += kernels/cuda/libac_cuda.a
noinst_HEADERS += kernels/cuda/accuda.h
if HAVE_CUDA
kernels_cuda_libac_cuda_a_SOURCES = kernels/cuda/probe.cu
else
kernels_cuda_libac_cuda_a_SOURCES = kernels/cuda/stub.c
endif
EXTRA_DIST += kernels/cuda/probe.cu kernels/cuda/stub.c
SUFFIXES = .cu
.cu.o:
	$(AM_V_GEN)$(NVCC) $(CUDA_ARCH_FLAGS) -std=c++17 -O2 -Xcompiler -fPIC -I$(top_srcdir)/kernels -I$(top_srcdir)/kernels/cuda -I$(top_builddir) -c $< -o $@
