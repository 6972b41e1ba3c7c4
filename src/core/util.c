/* util.c: errors, checked allocation, parsers, atomic files. */
#include "config.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ac_err_set(ac_err *e, const char *fmt, ...)
{
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Out of memory anywhere: one line and exit 3 (an internal error, not a crash). Results
 * already written are complete files (written atomically); stdout is flushed. */
void ac_out_of_memory(size_t n)
{
  fprintf(stderr, "attncheck: out of memory allocating %zu bytes\n", n);
  fflush(stdout);
  _exit(AC_EXIT_INTERNAL);
}

static void oom(size_t n) { ac_out_of_memory(n); }

void *ac_xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) oom(n);
  return p;
}

void *ac_xcalloc(size_t n, size_t m)
{
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) oom(n * m);
  return p;
}

void *ac_xrealloc(void *p, size_t n)
{
  void *q = realloc(p, n ? n : 1);
  if (!q) oom(n);
  return q;
}

char *ac_xstrdup(const char *s)
{
  size_t n = strlen(s) + 1;
  char *p = ac_xmalloc(n);
  memcpy(p, s, n);
  return p;
}

int ac_mul_overflow_i64(int64_t a, int64_t b, int64_t *out)
{
  return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

int ac_add_overflow_i64(int64_t a, int64_t b, int64_t *out)
{
  return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

int ac_parse_i64(const char *s, int64_t *out)
{
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

int ac_parse_u64(const char *s, uint64_t *out)
{
  if (!s || !*s || *s == '-') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

int ac_parse_duration(const char *s, double *seconds)
{
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !(v >= 0) || v > 1e9) return -1;
  double mul = 1;
  if (*end) {
    if (end[1]) return -1;
    switch (*end) {
    case 's': mul = 1; break;
    case 'm': mul = 60; break;
    case 'h': mul = 3600; break;
    case 'd': mul = 86400; break;
    default: return -1;
    }
  }
  *seconds = v * mul;
  return 0;
}

int ac_parse_size(const char *s, uint64_t *bytes)
{
  if (!s || !*s || *s == '-') return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !(v >= 0)) return -1;
  double mul = 1;
  if (*end) {
    const char *suf = end;
    switch (*suf) {
    case 'k': case 'K': mul = 1024.0; break;
    case 'm': case 'M': mul = 1024.0 * 1024; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
    default: return -1;
    }
    suf++;
    if (*suf == 'i') suf++;
    if (*suf == 'B' || *suf == 'b') suf++;
    if (*suf) return -1;
  }
  double r = v * mul;
  if (r >= 18446744073709551615.0) return -1;
  *bytes = (uint64_t)r;
  return 0;
}

double ac_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ac_write_file_atomic(const char *path, const void *data, size_t n, ac_err *e)
{
  static atomic_uint seq;   /* two threads of one process writing the same path use two files */
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1)) >= (int)sizeof tmp)
    return ac_err_set(e, "%s: path too long", path);
  /* a new file: never one planted at this name, nor through a symbolic link */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ac_err_set(e, "%s: %s", tmp, strerror(errno));
  const char *p = data;
  size_t left = n;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      unlink(tmp);
      return ac_err_set(e, "%s: %s", tmp, strerror(err));
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd) != 0 && errno != EINVAL) {
    int err = errno;
    close(fd);
    unlink(tmp);
    return ac_err_set(e, "%s: fsync: %s", tmp, strerror(err));
  }
  close(fd);
  if (rename(tmp, path) != 0) {
    int err = errno;
    unlink(tmp);
    return ac_err_set(e, "%s: rename: %s", path, strerror(err));
  }
  return 0;
}

int ac_mkdir_p(const char *path, ac_err *e)
{
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) return ac_err_set(e, "bad directory path '%s'", path);
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == 0) {
      char c = buf[i];
      buf[i] = 0;
      if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return ac_err_set(e, "%s: mkdir: %s", buf, strerror(errno));
      buf[i] = c;
    }
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return ac_err_set(e, "%s: not a directory", path);
  return 0;
}

/* s as one shell word: as is when it holds only safe characters, else in single quotes. */
const char *ac_shquote(const char *s, char *out, size_t n)
{
  size_t o = 0;
  int plain = *s != 0;
  for (const char *t = s; *t && plain; t++)
    plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-", *t) != NULL;
  if (plain) {
    if (strlen(s) >= n) return NULL;
    memcpy(out, s, strlen(s) + 1);
    return out;
  }
  /* 'it'\''s': a quote ends the quoted run, is escaped, and a new run starts */
  if (o + 1 >= n) return NULL;
  out[o++] = '\'';
  for (; *s; s++) {
    if (o + 5 >= n) return NULL;
    if (*s == '\'') {
      memcpy(out + o, "'\\''", 4);
      o += 4;
    } else {
      out[o++] = *s;
    }
  }
  if (o + 2 > n) return NULL;
  out[o++] = '\'';
  out[o] = 0;
  return out;
}

/* A whole small file, NUL-terminated and malloc'd, or NULL when it cannot be opened. */
char *ac_read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0, r;
  char *b = ac_xmalloc(cap);
  while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (n + 1 >= cap) b = ac_xrealloc(b, cap *= 2);
  }
  fclose(f);
  b[n] = 0;
  return b;
}

const char *ac_self_exe(char *out, size_t n)
{
  ssize_t r = n > 1 ? readlink("/proc/self/exe", out, n - 1) : -1;
  if (r <= 0) snprintf(out, n, "attncheck");
  else out[r] = 0;
  return out;
}
