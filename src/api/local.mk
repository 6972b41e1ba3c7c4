# src/api/: layer 7, libattncheck: the shared library and its public C API (see src/api/README.md).
# The library folds in every layer the command judges with (core, oracle, kernels, judge); the
# command and the Python package are its clients. Only attncheck_* is the public API; ac_* is
# exported for the command (the fuzz layer and the subcommands), without stability.
AC_LT_VERSION = 0:0:0
lib_LTLIBRARIES += libattncheck.la
libattncheck_la_SOURCES = src/api/attncheck.h src/api/api_int.h src/api/api_ctx.c src/api/api_case.c src/api/api_judge.c
libattncheck_la_LIBADD = src/judge/libac_judge.la kernels/libac_kernels.la oracle/libac_oracle.la $(AC_CUDA_LINK) \
	src/core/libac_core.la $(BLAS_LIBS) $(MPFR_LIBS) $(JSONC_LIBS) $(LIBZIP_LIBS) $(NETTLE_LIBS) -lgmp -lm
libattncheck_la_LDFLAGS = -version-info $(AC_LT_VERSION) -no-undefined -export-symbols-regex '^(attncheck_|ac_)' \
	-Wl,-Bsymbolic-functions
include_attncheck_HEADERS += src/api/attncheck.h
# The library's clients link it and, for the layers it does not hold, their convenience libraries.
AC_LIB_LIBS = libattncheck.la $(BLAS_LIBS) $(MPFR_LIBS) $(JSONC_LIBS) $(LIBZIP_LIBS) $(NETTLE_LIBS) -lgmp -lm
EXTRA_DIST += src/api/README.md
# Their sources include <attncheck/kernel.h>, the build tree's copy (examples/local.mk).
$(libattncheck_la_OBJECTS) $(attncheck_OBJECTS): include/attncheck/kernel.h
