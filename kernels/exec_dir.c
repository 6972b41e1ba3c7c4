/* owner: exec backend */
/* exec_dir.c: the case directories of exec: kernels, TMPDIR/attncheck-KIND-PID-XXXXXX, and the
 * removal of those that killed processes left behind. */
#include "config.h"
#include "exec.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes dir and the files in it (the backend makes no subdirectories). */
void ac_exec_remove_dir(const char *dir)
{
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    char p[1024];
    while ((de = readdir(d)))
      if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
          snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < (int)sizeof p)
        unlink(p);
    closedir(d);
  }
  rmdir(dir);
}

/* Once per process: the case directories that processes killed before their cleanup left in tmp
 * (attncheck-exec-PID-* and attncheck-worker-PID-* of our user whose PID no longer exists). */
static void remove_stale_dirs(const char *tmp)
{
  static int done;
  if (done) return;
  done = 1;
  DIR *d = opendir(tmp);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d))) {
    long pid = 0;
    int end = 0;
    if (sscanf(de->d_name, "attncheck-exec-%ld-%n", &pid, &end) < 1 || !end)
      if (sscanf(de->d_name, "attncheck-worker-%ld-%n", &pid, &end) < 1 || !end) continue;
    if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    char p[1024];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/%s", tmp, de->d_name) >= (int)sizeof p) continue;
    if (lstat(p, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
    ac_exec_remove_dir(p);
  }
  closedir(d);
}

int ac_exec_make_dir(const char *kind, char *dir, size_t n, ac_err *e)
{
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  remove_stale_dirs(tmp);
  if (snprintf(dir, n, "%s/attncheck-%s-%ld-XXXXXX", tmp, kind, (long)getpid()) >= (int)n || !mkdtemp(dir)) {
    int err = errno;
    dir[0] = 0;
    return ac_err_set(e, "cannot create a temporary directory under %s: %s", tmp, strerror(err));
  }
  return 0;
}
