/* npy.h: the .npy array format inside an NPZ member (header text, data order); internal to
 * npz.c, which keeps the zip container. */
#ifndef AC_NPY_H
#define AC_NPY_H
#include <stddef.h>
#include <stdint.h>
#include "npz.h"

#define AC_NPY_MAGIC "\x93NUMPY"

/* Item size in bytes of a numpy descr ("<f4" -> 4); -1 when it is not one we accept. */
int ac_npy_itemsize(const char *descr);
/* A version 1.0 npy member (padded header, then the nbytes of data) in a fresh buffer *out
 * of *size bytes; -1 with a message naming path and the member name when descr, ndim or
 * shape is bad or does not match nbytes. */
int ac_npy_encode(const char *path, const char *name, const char *descr, int ndim, const int64_t *shape,
                  const void *data, size_t nbytes, void **out, size_t *size, ac_err *e);
/* Parses the header dict (n bytes at h) into m's descr, fortran_order, ndim and shape. */
int ac_npy_parse_dict(const char *h, size_t n, ac_npz_member *m, const char *path, const char *name, ac_err *e);
/* The nbytes of elements of isz bytes at data, stored in Fortran order, put in C order in place. */
void ac_npy_fortran_to_c(void *data, int ndim, const int64_t *shape, int isz, size_t nbytes);

#endif
