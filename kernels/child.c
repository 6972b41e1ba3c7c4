/* child.c: forked children with a time limit, reaped in every case. */
#include "config.h"
#include "child.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

void *ac_shared_alloc(size_t n, ac_err *e)
{
  if (n == 0) n = 1;
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    ac_err_set(e, "cannot map %zu bytes of shared memory: %s", n, strerror(errno));
    return NULL;
  }
  return p;
}

void ac_shared_free(void *p, size_t n)
{
  if (p) munmap(p, n ? n : 1);
}

/* SIGHUP in a group leader whose parent ended: the group goes, the leader with it. */
static void kill_group(int sig)
{
  (void)sig;
  kill(0, SIGKILL);
  _exit(129);
}

void ac_child_setup(int new_group)
{
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS,
                              SIGTERM, SIGINT, SIGPIPE, SIGALRM, SIGCHLD};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &sa, NULL);
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  struct rlimit rl = {0, 0};
  setrlimit(RLIMIT_CORE, &rl);
  if (new_group) {
    /* A session of its own (a group at least, when the parent made it one first), out of the
     * terminal's reach; when the thread that started it ends, SIGHUP kills the whole group. */
    if (setsid() < 0) setpgid(0, 0);
    sa.sa_handler = kill_group;
    sigaction(SIGHUP, &sa, NULL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGHUP);
#endif
  }
}

static void close_all_fds(void)
{
#if defined(__linux__) && defined(SYS_close_range)
  if (syscall(SYS_close_range, 0U, ~0U, 0U) == 0) return;
#endif
  long n = sysconf(_SC_OPEN_MAX);
  if (n < 0 || n > 65536) n = 65536;
  for (long fd = 0; fd < n; fd++) close((int)fd);
}

void ac_child_guard(void)
{
  pid_t pid = fork();
  if (pid <= 0) {
    if (pid == 0) {
      signal(SIGHUP, SIG_DFL);
      sigset_t all;
      sigemptyset(&all);
      sigprocmask(SIG_SETMASK, &all, NULL);
    }
    return;   /* the child goes on (without a guard when fork failed) */
  }
  /* The guard: holds no file of the child's, ends as the child did. */
  close_all_fds();
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) _exit(127);
  if (WIFSIGNALED(st)) {
    signal(WTERMSIG(st), SIG_DFL);
    raise(WTERMSIG(st));
    _exit(128 + WTERMSIG(st));
  }
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

int ac_child_ended(pid_t pid)
{
  siginfo_t si;
  memset(&si, 0, sizeof si);
  for (;;) {
    int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0) return si.si_pid == pid;
    if (errno != EINTR) return 1;   /* not our child (any more): nothing to wait for */
  }
}

int ac_child_end(pid_t pid, int group, double grace_s, int *status)
{
  double t0 = ac_now();
  long nap_ns = 50000;
  int gone = ac_child_ended(pid);
  while (!gone && ac_now() - t0 < grace_s) {
    struct timespec ts = {0, nap_ns};
    nanosleep(&ts, NULL);
    if (nap_ns < 10000000L) nap_ns *= 2;
    gone = ac_child_ended(pid);
  }
  /* Before the reap, so that the group id cannot have been handed to another process. */
  if (group) kill(-pid, SIGKILL);
  if (!gone) kill(pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  ac_child_forget(pid);
  /* what it started and left outside its group (setsid and a second fork) is a child here now */
  ac_child_reap_strays();
  if (status) *status = st;
  return gone;
}

static void fill_outcome(int st, ac_child_outcome *out)
{
  if (WIFEXITED(st)) {
    out->exited = 1;
    out->code = WEXITSTATUS(st);
  } else if (WIFSIGNALED(st)) {
    out->sig = WTERMSIG(st);
  }
}

int ac_child_run(int (*fn)(void *arg), void *arg, double timeout_s, int new_group,
                 ac_child_outcome *out, ac_err *e)
{
  memset(out, 0, sizeof *out);
  int pfd[2];
  if (pipe(pfd) != 0) return ac_err_set(e, "cannot create a pipe: %s", strerror(errno));
  fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
  fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
  fflush(stdout);
  fflush(stderr);
  double t0 = ac_now();
  pid_t pid = ac_child_fork();
  if (pid < 0) {
    int err = errno;
    close(pfd[0]);
    close(pfd[1]);
    return ac_err_set(e, "cannot fork: %s", strerror(err));
  }
  if (pid == 0) {
    close(pfd[0]);
    ac_child_setup(new_group);
    int rc = fn(arg);
    _exit(rc & 0xff);
  }
  if (new_group) setpgid(pid, pid);   /* also from here: no race with a fast kill */
  close(pfd[1]);
  /* The pipe reaches EOF when the child exits (or execs: then we fall back to polling). */
  int st = 0, eof = 0;
  long nap_ns = 50000;
  for (;;) {
    if (ac_child_ended(pid)) break;
    double left = timeout_s > 0 ? timeout_s - (ac_now() - t0) : 1.0;
    if (left <= 0) {
      out->timed_out = 1;
      break;
    }
    int ms = eof ? 2 : 100;
    if (left * 1000.0 < ms) ms = (int)(left * 1000.0) + 1;
    if (eof) {
      long ns = nap_ns < (long)ms * 1000000L ? nap_ns : (long)ms * 1000000L;
      struct timespec ts = {0, ns};
      nanosleep(&ts, NULL);
      if (nap_ns < 2000000L) nap_ns *= 2;
    } else {
      struct pollfd p = {pfd[0], POLLIN, 0};
      int r = poll(&p, 1, ms);
      if (r > 0) {
        char b[64];
        ssize_t k = read(pfd[0], b, sizeof b);
        if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) eof = 1;
      }
    }
  }
  close(pfd[0]);
  /* The child's whole group goes with it, also when it ended by itself. */
  ac_child_end(pid, new_group, 0, &st);
  out->wall_s = ac_now() - t0;
  if (out->timed_out) return 0;
  fill_outcome(st, out);
  return 0;
}
