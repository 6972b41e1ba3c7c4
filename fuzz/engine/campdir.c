/* campdir.c: one campaign per directory (DIR/lock, held with flock by the running supervisor),
 * and the temporary files and directories a killed run leaves behind. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "journal.h"

static long read_pid(int fd)
{
  char buf[64];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = 0;
  return strtol(buf, NULL, 10);
}

int ac_campaign_lock(const char *dir, int *fdp, long *prev, ac_err *e)
{
  char p[4096];
  *fdp = -1;
  *prev = 0;
  if (snprintf(p, sizeof p, "%s/lock", dir) >= (int)sizeof p) return ac_err_set(e, "%s: path too long", dir);
  int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ac_err_set(e, "%s: %s", p, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err != EWOULDBLOCK) {
      close(fd);
      return ac_err_set(e, "%s: flock: %s", p, strerror(err));
    }
    /* the holder writes its pid right after taking the lock: give it a moment */
    for (int i = 0; i < 20 && (*prev = read_pid(fd)) == 0; i++) {
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    close(fd);
    return 1;
  }
  long old = read_pid(fd);
  if (old > 0 && old != (long)getpid()) *prev = old;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
    int err = errno;
    close(fd);
    return ac_err_set(e, "%s: %s", p, strerror(err));
  }
  *fdp = fd;
  return 0;
}

void ac_campaign_unlock(int fd)
{
  if (fd < 0) return;
  /* a lock file without a pid was left by a holder that ended cleanly: nothing to take over */
  int rc = ftruncate(fd, 0);
  (void)rc;   /* a pid left behind only makes the next run log a takeover */
  close(fd);
}

/* PID of a temporary name, 0 if name is none: NAME.tmp.PID or NAME.tmp.PID.N (files; the second
 * is ac_write_file_atomic's) or .tmp-...-PID (dirs). */
static long tmp_pid(const char *name, int *is_dir)
{
  const char *t = strstr(name, ".tmp.");
  *is_dir = 0;
  if (!strncmp(name, ".tmp-", 5)) {
    t = strrchr(name, '-');
    *is_dir = 1;
  } else if (t) {
    t += 4;
  } else {
    return 0;
  }
  char *end;
  long pid = strtol(t + 1, &end, 10);
  if (!*is_dir && *end == '.' && end[1]) { /* .N: a sequence number */
    char *e2;
    strtoul(end + 1, &e2, 10);
    if (*e2 == 0 && e2[-1] >= '0' && e2[-1] <= '9') end = e2;
  }
  return *end == 0 && pid > 0 ? pid : 0;
}

static int gone(long pid) { return kill((pid_t)pid, 0) != 0 && errno == ESRCH; }

static void rm_dir_files(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char p[4400];
    if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < (int)sizeof p) unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* Removes the temporary entries of dead processes in dir; depth 1: also inside subdirectories. */
static int clean(const char *dir, int depth)
{
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char p[4400];
    if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p) continue;
    int is_dir;
    long pid = tmp_pid(de->d_name, &is_dir);
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (pid && gone(pid) && (S_ISDIR(st.st_mode) ? 1 : 0) == is_dir) {
      if (is_dir) rm_dir_files(p);
      else unlink(p);
      n++;
    } else if (!pid && depth > 0 && S_ISDIR(st.st_mode)) {
      n += clean(p, depth - 1);
    }
  }
  closedir(d);
  return n;
}

int ac_campaign_clean_tmp(const char *dir)
{
  char p[4096];
  int n = clean(dir, 0);
  snprintf(p, sizeof p, "%s/findings", dir);
  n += clean(p, 1);
  snprintf(p, sizeof p, "%s/errors", dir);
  n += clean(p, 0);
  snprintf(p, sizeof p, "%s/corpus", dir);
  n += clean(p, 0);
  snprintf(p, sizeof p, "%s/seeds", dir);
  n += clean(p, 0);
  return n;
}
