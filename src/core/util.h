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

/* A whole small file, NUL-terminated and malloc'd, or NULL when it cannot be opened. */
char *ac_read_text(const char *path);

#endif
