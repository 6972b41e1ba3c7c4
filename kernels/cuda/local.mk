# kernels/cuda/: the CUDA convenience library, or its stub when CUDA is absent.
noinst_LIBRARIES += kernels/cuda/libac_cuda.a
noinst_HEADERS += kernels/cuda/accuda.h
AC_CUDA_SOURCES = kernels/cuda/probe.cu kernels/cuda/runtime.cu kernels/cuda/list.cu \
	kernels/cuda/naive_f32.cu kernels/cuda/flash_f32.cu kernels/cuda/flash_f16.cu kernels/cuda/flash_bf16.cu
AC_CUBLAS_SOURCES = kernels/cuda/cublas_sdpa_f32.cu kernels/cuda/cublas_sdpa_f16.cu
AC_CUDNN_SOURCES = kernels/cuda/cudnn_graph.cu kernels/cuda/cudnn_sdpa_f16.cu kernels/cuda/cudnn_sdpa_bf16.cu
AC_CUDA_HDRS = kernels/cuda/common.cuh kernels/cuda/flash_tc.cuh kernels/cuda/cublas_sdpa.cuh \
	kernels/cuda/cudnn_graph.h
AC_NVCC_DEFS =
if HAVE_CUDA
kernels_cuda_libac_cuda_a_SOURCES = $(AC_CUDA_SOURCES) $(AC_CUDA_HDRS)
if HAVE_CUBLAS
kernels_cuda_libac_cuda_a_SOURCES += $(AC_CUBLAS_SOURCES)
AC_NVCC_DEFS += -DAC_CUDA_WITH_CUBLAS=1
endif
if HAVE_CUDNN
kernels_cuda_libac_cuda_a_SOURCES += $(AC_CUDNN_SOURCES)
AC_NVCC_DEFS += -DAC_CUDA_WITH_CUDNN=1
endif
else
kernels_cuda_libac_cuda_a_SOURCES = kernels/cuda/stub.c
endif
EXTRA_DIST += $(AC_CUDA_SOURCES) $(AC_CUBLAS_SOURCES) $(AC_CUDNN_SOURCES) $(AC_CUDA_HDRS) kernels/cuda/stub.c
SUFFIXES = .cu
# Every .cu includes headers from kernels/ and kernels/cuda/; a header change rebuilds all of them.
.cu.o:
	$(AM_V_GEN)$(NVCC) $(CUDA_ARCH_FLAGS) $(AC_NVCC_DEFS) -std=c++17 -O2 -Xcompiler -fPIC \
	  -Xcompiler -Wall,-Wextra $(CUDA_CPPFLAGS) \
	  -I$(top_srcdir)/kernels -I$(top_srcdir)/kernels/cuda -I$(top_builddir) -c $< -o $@
$(AC_CUDA_SOURCES:.cu=.o) $(AC_CUBLAS_SOURCES:.cu=.o) $(AC_CUDNN_SOURCES:.cu=.o): \
	$(AC_CUDA_HDRS) kernels/cuda/accuda.h kernels/attncheck_kernel.h
# The GPU check script, the PyTorch exec worker and this folder's notes travel with the tarball.
EXTRA_DIST += kernels/cuda/README.md scripts/gpu-check examples/python/torch_sdpa.py
