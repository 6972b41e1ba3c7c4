/* datafile.c: files someone else may have written (findings directories, shards, their logs and
 * stats), opened as data: no link followed, never blocking on a FIFO or opening a device, a
 * regular file of a bounded size, decided by fstat of what was opened. */
#include "config.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
  if (S_ISLNK(m)) return "a symbolic link (not followed)";
  if (S_ISDIR(m)) return "a directory, not a file";
  if (S_ISFIFO(m)) return "a FIFO, not a regular file";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device, not a regular file";
  if (S_ISSOCK(m)) return "a socket, not a regular file";
  return "not a regular file";
}

int ac_data_openat(int dirfd, const char *name, const char *label, uint64_t max, ac_err *e)
{
  struct stat st;
  /* a first look without opening: a FIFO or a device is never opened */
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return ac_err_set(e, "%s: %s", label, strerror(errno));
  if (!S_ISREG(st.st_mode)) return ac_err_set(e, "%s: %s", label, kind_of(st.st_mode));
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return ac_err_set(e, "%s: %s", label, errno == ELOOP ? kind_of(S_IFLNK) : strerror(errno));
  /* what was opened decides (it may have been replaced since the look) */
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return ac_err_set(e, "%s: %s", label, kind_of(st.st_mode));
  }
  if ((uint64_t)st.st_size > max) {
    close(fd);
    return ac_err_set(e, "%s: %lld bytes, more than the %llu it may have", label, (long long)st.st_size,
                      (unsigned long long)max);
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

int ac_data_dir_openat(int dirfd, const char *name, const char *label, ac_err *e)
{
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return ac_err_set(e, "%s: %s", label, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return ac_err_set(e, "%s: %s", label, S_ISLNK(st.st_mode) ? kind_of(st.st_mode) : "not a directory");
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ac_err_set(e, "%s: %s", label,
                      errno == ELOOP || errno == ENOTDIR ? "not a directory (or a link)" : strerror(errno));
  return fd;
}

int ac_data_open(const char *root, const char *rel, uint64_t max, ac_err *e)
{
  char label[4400];
  int cur = root ? open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD; /* the root as named */
  if (cur < 0) return ac_err_set(e, "%s: %s", root, strerror(errno));
  size_t ll = (size_t)snprintf(label, sizeof label, "%s", root ? root : "");
  const char *s = rel;
  int fd = -1;
  for (;;) {
    const char *sl = strchr(s, '/');
    size_t cl = sl ? (size_t)(sl - s) : strlen(s);
    char comp[1024];
    if (cl == 0 || cl >= sizeof comp) {
      ac_err_set(e, "%s/%s: bad path", root ? root : ".", rel);
      break;
    }
    memcpy(comp, s, cl);
    comp[cl] = 0;
    if (ll < sizeof label) ll += (size_t)snprintf(label + ll, sizeof label - ll, "%s%s", ll ? "/" : "", comp);
    if (!sl) {
      fd = ac_data_openat(cur, comp, label, max, e);
      break;
    }
    int next = ac_data_dir_openat(cur, comp, label, e);
    if (cur != AT_FDCWD) close(cur);
    cur = next;
    if (cur < 0) return -1;
    s = sl + 1;
  }
  if (cur != AT_FDCWD) close(cur);
  return fd;
}

char *ac_data_read_fd(int fd, uint64_t max, size_t *len, const char *label, ac_err *e)
{
  size_t cap = 4096, n = 0;
  char *b = ac_xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) b = ac_xrealloc(b, cap *= 2);
    ssize_t r = read(fd, b + n, cap - n - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      ac_err_set(e, "%s: %s", label, strerror(errno));
      free(b);
      return NULL;
    }
    if (r == 0) break;
    n += (size_t)r;
    if (n > max) { /* it grew past its size while being read */
      ac_err_set(e, "%s: more than the %llu bytes it may have", label, (unsigned long long)max);
      free(b);
      return NULL;
    }
  }
  b[n] = 0;
  if (len) *len = n;
  return b;
}

char *ac_data_read(const char *root, const char *rel, uint64_t max, size_t *len, ac_err *e)
{
  int fd = ac_data_open(root, rel, max, e);
  if (fd < 0) return NULL;
  char label[4400];
  snprintf(label, sizeof label, "%s%s%s", root ? root : "", root ? "/" : "", rel);
  char *b = ac_data_read_fd(fd, max, len, label, e);
  close(fd);
  return b;
}
