/* reaper.c: nothing a kernel starts outlives its case. A process that runs cases is a child
 * subreaper (Linux, PR_SET_CHILD_SUBREAPER): a descendant whose parent ends — a fork of a
 * kernel that called setsid, left its process group and forked again — becomes its child, not
 * init's. The children it forks itself go through ac_child_fork and are registered; at the end
 * of each case ac_child_reap_strays kills and reaps every other child, and again the children
 * those leave, until none is left. Waits stay exact: registered children are waited for by their
 * pid alone, and a stray is reaped only by the pid found here, so that a reaped orphan is never
 * taken for one of attncheck's own children. */
#include "config.h"
#include "child.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define MAX_SCAN     512 /* children looked at per round */
#define STRAY_WAIT_S 5.0 /* a stray SIGKILL cannot end (uninterruptible sleep) is left after this */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t owner; /* the process the state below belongs to: a forked copy starts afresh */
static int reaper;  /* this process is a child subreaper */
static pid_t *kids; /* its own children (ac_child_fork) */
static size_t nkids, capkids;

static void own(void)
{
  pid_t me = getpid();
  if (owner != me) owner = me, nkids = 0, reaper = 0;
}

static void make_reaper(void)
{
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
  if (!reaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) reaper = 1;
#endif
}

void ac_child_subreaper(void)
{
  pthread_mutex_lock(&mu);
  own();
  make_reaper();
  pthread_mutex_unlock(&mu);
}

pid_t ac_child_fork(void)
{
  pthread_mutex_lock(&mu); /* held across fork: no scan of another thread sees the child unregistered */
  own();
  make_reaper();
  if (nkids == capkids) kids = ac_xrealloc(kids, sizeof *kids * (capkids = capkids ? 2 * capkids : 16));
  pid_t pid = fork();
  if (pid > 0) kids[nkids++] = pid;
  pthread_mutex_unlock(&mu); /* in the child too: its one thread is the one that locked it */
  return pid;
}

void ac_child_forget(pid_t pid)
{
  pthread_mutex_lock(&mu);
  own();
  for (size_t i = 0; i < nkids; i++)
    if (kids[i] == pid) kids[i] = kids[--nkids];
  pthread_mutex_unlock(&mu);
}

static int registered(pid_t pid)
{
  for (size_t i = 0; i < nkids; i++)
    if (kids[i] == pid) return 1;
  return 0;
}

/* The children of the threads this process forks from and orphans go to: the calling thread and
 * the main one (a subreaper's orphans go to its main thread while that lives), from
 * /proc/self/task/T/children; -1 when the kernel has no such files. */
static int children_files(pid_t *out, int max)
{
  long tids[2] = {(long)getpid(), 0};
#ifdef SYS_gettid
  tids[1] = (long)syscall(SYS_gettid);
#endif
  int n = 0, any = 0;
  for (int t = 0; t < 2; t++) {
    if (t == 1 && (tids[1] <= 0 || tids[1] == tids[0])) break;
    char p[128], buf[8192];
    snprintf(p, sizeof p, "/proc/self/task/%ld/children", tids[t]);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    any = 1;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[got > 0 ? got : 0] = 0;
    for (char *s = buf, *end; n < max; s = end) {
      long v = strtol(s, &end, 10);
      if (end == s) break;
      out[n++] = (pid_t)v;
    }
  }
  return any ? n : -1;
}

/* The same from every /proc/PID/stat (its fourth field, after the command's closing paren). */
static int children_scan(pid_t *out, int max)
{
  DIR *d = opendir("/proc");
  if (!d) return 0;
  int n = 0;
  long me = (long)getpid();
  struct dirent *de;
  while (n < max && (de = readdir(d))) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
    char p[300], buf[512];
    snprintf(p, sizeof p, "/proc/%s/stat", de->d_name);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    char *rp = strrchr(buf, ')'), st;
    long pp;
    if (rp && sscanf(rp + 1, " %c %ld", &st, &pp) == 2 && pp == me) out[n++] = (pid_t)strtol(de->d_name, NULL, 10);
  }
  closedir(d);
  return n;
}

/* Reaps pid, killed already, within the deadline: 1 when reaped. */
static int reap_by(pid_t pid, double deadline)
{
  long nap = 20000;
  for (;;) {
    pid_t r = waitpid(pid, NULL, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return 1;
    if (ac_now() > deadline) return 0;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 10000000L) nap *= 2;
  }
}

int ac_child_reap_strays(void)
{
  int killed = 0;
  pthread_mutex_lock(&mu);
  own();
  double deadline = ac_now() + STRAY_WAIT_S;
  while (reaper) {
    pid_t c[MAX_SCAN];
    int n = children_files(c, MAX_SCAN);
    if (n < 0) n = children_scan(c, MAX_SCAN);
    int ns = 0;
    for (int i = 0; i < n; i++)
      if (!registered(c[i])) {
        kill(c[i], SIGKILL);
        c[ns++] = c[i];
      }
    if (!ns) break;
    int reaped = 0;
    /* once a stray is reaped, what it started is a child here: the next round finds it */
    for (int i = 0; i < ns; i++) reaped += reap_by(c[i], deadline);
    killed += ns;
    if (!reaped || ac_now() > deadline) break;
  }
  pthread_mutex_unlock(&mu);
  return killed;
}
