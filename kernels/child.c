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
  if (new_group) setpgid(0, 0);
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
  pid_t pid = fork();
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
  int st = 0, reaped = 0, eof = 0;
  long nap_ns = 50000;
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      reaped = 1;
      break;
    }
    if (w < 0 && errno != EINTR) break;
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
  if (!reaped) {
    if (new_group) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  }
  out->wall_s = ac_now() - t0;
  if (out->timed_out) return 0;
  fill_outcome(st, out);
  return 0;
}
