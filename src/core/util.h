/* util.h: errors, exit codes, checked allocation and small parsers shared by every layer. */
#ifndef AC_UTIL_H
#define AC_UTIL_H
#include <stddef.h>
#include <stdint.h>

/* Exit codes (DESIGN.md): 2 nothing could run; 1 a verdict with policy fail;
 * 3 internal error or unresolved oracle element; 4 a suite or campaign that judged no case at
 * all (every case SKIP; --allow-all-skipped: 0); 0 otherwise. */
enum { AC_EXIT_OK = 0, AC_EXIT_FAIL = 1, AC_EXIT_USAGE = 2, AC_EXIT_INTERNAL = 3, AC_EXIT_NOTHING_JUDGED = 4 };

/* An error message filled by a failing library call; functions return 0 or -1. */
typedef struct { char msg[512]; } ac_err;

/* Formats into e (if non-NULL) and returns -1. */
int ac_err_set(ac_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that ends the process on failure with one line on stderr and exit 3
 * (ac_out_of_memory, also GMP's and MPFR's allocator in the command). */
void *ac_xmalloc(size_t n);
void *ac_xcalloc(size_t n, size_t m);
void *ac_xrealloc(void *p, size_t n);
char *ac_xstrdup(const char *s);
void ac_out_of_memory(size_t n) __attribute__((noreturn));

/* a*b and a+b with overflow detection: return -1 on overflow. */
int ac_mul_overflow_i64(int64_t a, int64_t b, int64_t *out);
int ac_add_overflow_i64(int64_t a, int64_t b, int64_t *out);

/* "30s", "20m", "8h", "2d" or plain seconds; -1 on bad input. */
int ac_parse_duration(const char *s, double *seconds);
/* "8G", "512M", "1024" (bytes); -1 on bad input. */
int ac_parse_size(const char *s, uint64_t *bytes);
/* Strict integer parse; -1 on bad input. */
int ac_parse_i64(const char *s, int64_t *out);
int ac_parse_u64(const char *s, uint64_t *out);

/* Monotonic seconds. */
double ac_now(void);

/* Write a whole file atomically: write to PATH.tmp.PID.N (N unique in the process), fsync, rename. */
int ac_write_file_atomic(const char *path, const void *data, size_t n, ac_err *e);
int ac_mkdir_p(const char *path, ac_err *e);

/* s as one shell word (as is when safe, else single-quoted); NULL when it does not fit in n. */
const char *ac_shquote(const char *s, char *out, size_t n);

/* The absolute path of the running program (/proc/self/exe) into out, or "attncheck" when it cannot
 * be read. Returns out. */
const char *ac_self_exe(char *out, size_t n);

/* A whole small file, NUL-terminated and malloc'd, or NULL when it cannot be opened. */
char *ac_read_text(const char *path);

/* Text attncheck did not write (kernels' and workers' messages, names and reasons, what case
 * files and findings directories hold) made safe for every output, the one escaping used
 * everywhere: \n \r \t as those two characters, other C0 controls, DEL, the C1 controls (ESC,
 * CSI) and bytes that are not UTF-8 as \xHH, U+2028 and U+2029 as \u2028 and \u2029; the rest
 * (backslashes included) as it is, so escaping twice changes nothing. At most n - 1 bytes, cut
 * between characters. Returns out. */
const char *ac_str_escape(const char *s, char *out, size_t n);
/* The same, whole and malloc'd. */
char *ac_str_escape_dup(const char *s);
/* The same in place, within the n bytes of s's buffer. */
void ac_str_escape_inplace(char *s, size_t n);

/* Files someone else may have written (findings directories, shards), opened as data: no
 * symbolic link followed, a FIFO or device never opened, only a regular file of at most max
 * bytes, as fstat of the opened file says; -1 with one line (label: why) otherwise.
 * ac_data_openat: NAME under dirfd; ac_data_dir_openat: a directory NAME under dirfd (no link);
 * ac_data_open: ROOT as named, then each component of REL ('/'-separated) without following a
 * link (ROOT NULL: from the working directory). */
int ac_data_openat(int dirfd, const char *name, const char *label, uint64_t max, ac_err *e);
int ac_data_dir_openat(int dirfd, const char *name, const char *label, ac_err *e);
int ac_data_open(const char *root, const char *rel, uint64_t max, ac_err *e);
/* The whole of such a file, NUL-terminated and malloc'd (its length in *len): NULL with e. */
char *ac_data_read_fd(int fd, uint64_t max, size_t *len, const char *label, ac_err *e);
char *ac_data_read(const char *root, const char *rel, uint64_t max, size_t *len, ac_err *e);

#endif
