# kernels/cuda/: the CUDA library, or its stub when CUDA is absent.
# With CUDA, libac_cuda.la is only the loader (loader.c); the kernels and cudart, cuBLAS and
# cuDNN live in the module attncheck-cuda.so, installed in $(pkglibdir) and dlopen()ed when a
# CUDA kernel is first needed (acmodule.h).
noinst_LTLIBRARIES += kernels/cuda/libac_cuda.la
noinst_HEADERS += kernels/cuda/accuda.h kernels/cuda/acmodule.h
AC_CUDA_SOURCES = kernels/cuda/probe.cu kernels/cuda/runtime.cu kernels/cuda/list.cu \
	kernels/cuda/naive_f32.cu kernels/cuda/flash_f32.cu kernels/cuda/flash_f16.cu kernels/cuda/flash_bf16.cu
AC_CUBLAS_SOURCES = kernels/cuda/cublas_sdpa_f32.cu kernels/cuda/cublas_sdpa_f16.cu
AC_CUDNN_SOURCES = kernels/cuda/cudnn_graph.cu kernels/cuda/cudnn_sdpa_f16.cu kernels/cuda/cudnn_sdpa_bf16.cu
AC_CUDA_HDRS = kernels/cuda/common.cuh kernels/cuda/flash_tc.cuh kernels/cuda/cublas_sdpa.cuh \
	kernels/cuda/cudnn_graph.h
AC_NVCC_DEFS =
kernels_cuda_libac_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) -DAC_PKGLIBDIR='"$(pkglibdir)"'
if HAVE_CUDA
kernels_cuda_libac_cuda_la_SOURCES = kernels/cuda/loader.c
pkglib_LTLIBRARIES = kernels/cuda/attncheck-cuda.la
kernels_cuda_attncheck_cuda_la_SOURCES = $(AC_CUDA_SOURCES) $(AC_CUDA_HDRS)
kernels_cuda_attncheck_cuda_la_LDFLAGS = -module -avoid-version -shared $(CUDA_LDFLAGS)
kernels_cuda_attncheck_cuda_la_LIBADD = $(CUDA_LIBS)
if HAVE_CUBLAS
kernels_cuda_attncheck_cuda_la_SOURCES += $(AC_CUBLAS_SOURCES)
AC_NVCC_DEFS += -DAC_CUDA_WITH_CUBLAS=1
endif
if HAVE_CUDNN
kernels_cuda_attncheck_cuda_la_SOURCES += $(AC_CUDNN_SOURCES)
AC_NVCC_DEFS += -DAC_CUDA_WITH_CUDNN=1
endif
else
kernels_cuda_libac_cuda_la_SOURCES = kernels/cuda/stub.c
endif
EXTRA_DIST += $(AC_CUDA_SOURCES) $(AC_CUBLAS_SOURCES) $(AC_CUDNN_SOURCES) $(AC_CUDA_HDRS) kernels/cuda/stub.c \
	kernels/cuda/loader.c kernels/cuda/cudalt.sh
SUFFIXES = .cu
# nvcc builds the PIC object and cudalt.sh writes the libtool object file that names it.
# Every .cu includes headers from kernels/ and kernels/cuda/; a header change rebuilds all of them.
.cu.lo:
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/kernels/cuda/cudalt.sh $@ \
	  $(NVCC) $(CUDA_ARCH_FLAGS) $(AC_NVCC_DEFS) -std=c++17 -O2 -Xcompiler -fPIC \
	  -Xcompiler -Wall,-Wextra,-fvisibility=hidden $(CUDA_CPPFLAGS) \
	  -I$(top_srcdir)/kernels -I$(top_srcdir)/kernels/cuda -I$(top_builddir) -c $<
$(AC_CUDA_SOURCES:.cu=.lo) $(AC_CUBLAS_SOURCES:.cu=.lo) $(AC_CUDNN_SOURCES:.cu=.lo): \
	$(AC_CUDA_HDRS) kernels/cuda/accuda.h kernels/cuda/acmodule.h kernels/attncheck_kernel.h
# The GPU check script, the PyTorch exec worker and this folder's notes travel with the tarball.
EXTRA_DIST += kernels/cuda/README.md scripts/gpu-check python/attncheck/worker/torch_sdpa.py
