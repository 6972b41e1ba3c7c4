/* npz.h: minimal strict .npy / .npz (stored zip) reader and writer on libzip. */
#ifndef AC_NPZ_H
#define AC_NPZ_H
#include <stddef.h>
#include <stdint.h>
#include "util.h"

typedef struct {
  char name[64];       /* member name without ".npy" ("q", "meta.json" keeps its name) */
  char descr[8];       /* "<f8", "<f4", "<f2", "<u2", "|u1", ... ; "" for non-npy members */
  int ndim;
  int64_t shape[8];
  const void *data;    /* raw little-endian data in C order (or the bytes of a non-npy member) */
  size_t nbytes;
  int fortran_order;   /* the member was stored in Fortran order (numpy's fortran_order True); the
                          readers hand its data over in C order all the same */
} ac_npz_member;

typedef struct ac_npz_writer ac_npz_writer;
/* Writes to PATH.tmp.PID and renames to PATH on close (atomic). */
ac_npz_writer *ac_npz_create(const char *path, ac_err *e);
int ac_npz_add_array(ac_npz_writer *w, const char *name, const char *descr, int ndim,
                     const int64_t *shape, const void *data, size_t nbytes, ac_err *e);
int ac_npz_add_bytes(ac_npz_writer *w, const char *name, const void *data, size_t nbytes, ac_err *e);
int ac_npz_close(ac_npz_writer *w, ac_err *e);   /* also frees; -1 leaves no file */
void ac_npz_abort(ac_npz_writer *w);

typedef struct ac_npz ac_npz;
/* Opens and validates the zip directory; nothing large is allocated until a member is read.
 * cap_bytes bounds any single member. */
ac_npz *ac_npz_open(const char *path, uint64_t cap_bytes, ac_err *e);
/* The same from an open descriptor, which it takes over (closed in every case). */
ac_npz *ac_npz_open_fd(int fd, const char *path, uint64_t cap_bytes, ac_err *e);
int ac_npz_count(const ac_npz *z);
const char *ac_npz_name(const ac_npz *z, int i);
/* Read a member fully (parsing the npy header unless raw). Owned by z until ac_npz_close_reader. */
int ac_npz_read(ac_npz *z, const char *name, ac_npz_member *m, ac_err *e);
int ac_npz_has(const ac_npz *z, const char *name);
void ac_npz_close_reader(ac_npz *z);
/* A member's shape as "[a,b,c]" ("[]" for a scalar; "(not an array)" for a non-npy member) in buf. */
const char *ac_npz_shape_str(const ac_npz_member *m, char *buf, size_t n);

/* Open an NPZ held in memory (the bytes must outlive the reader); name is used in messages. */
ac_npz *ac_npz_open_buffer(const void *data, size_t n, const char *name, uint64_t cap_bytes, ac_err *e);
/* Uncompressed size of a member as the zip directory states it (npy header included); -1 if absent. */
int64_t ac_npz_member_size(const ac_npz *z, const char *name);
/* Two-step read of an npy member without a second copy: the header alone (m->data stays NULL,
 * m->nbytes is the data size, checked against the zip directory), then the data into a caller
 * buffer of exactly nbytes (CRC checked). */
int ac_npz_read_header(ac_npz *z, const char *name, ac_npz_member *m, ac_err *e);
int ac_npz_read_into(ac_npz *z, const char *name, void *dst, size_t nbytes, ac_err *e);
/* The file name given at open (for messages). */
const char *ac_npz_path(const ac_npz *z);
/* Largest npy header accepted (as numpy's default max_header_size). */
#define AC_NPY_MAX_HEADER 10000

#endif
