/* treaper: kernels/reaper.c. A process that forks through ac_child_fork is a child subreaper: an
 * orphan that left its parent's session and group becomes its child and ac_child_reap_strays
 * kills and reaps it, and what it started; a registered child is never touched, its wait and its
 * exit status stay its own; a child forked past the registry counts as a stray. */
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "child.h"
#include "testutil.h"

/* 1 when pid exists and is not a zombie. */
static int alive(pid_t pid)
{
  char p[64], buf[256];
  snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' && rp[2] != 'Z';
}

/* A registered child that forks a process which leaves its session, forks a sleeper (whose pid
 * and whose own sleeping child's pid come back on a pipe) and ends: the sleepers are orphans. */
static pid_t escape(pid_t out[2])
{
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t x = ac_child_fork();
  ck_assert_int_ge(x, 0);
  if (x == 0) {
    setsid();
    pid_t y = fork();
    if (y == 0) {
      pid_t z = fork(); /* the sleeper's own child: reaped only once the sleeper is */
      if (z == 0) {
        sleep(30);
        _exit(0);
      }
      pid_t me[2] = {getpid(), z};
      if (write(fd[1], me, sizeof me) != (ssize_t)sizeof me) _exit(1);
      sleep(30);
      _exit(0);
    }
    _exit(y > 0 ? 0 : 1);
  }
  close(fd[1]);
  ck_assert_int_eq(read(fd[0], out, 2 * sizeof(pid_t)), (ssize_t)(2 * sizeof(pid_t)));
  close(fd[0]);
  return x;
}

START_TEST(strays_go_registered_children_stay)
{
#if !defined(__linux__) || !defined(PR_SET_CHILD_SUBREAPER)
  return;
#endif
  pid_t keep = ac_child_fork();
  ck_assert_int_ge(keep, 0);
  if (keep == 0) {
    usleep(300000);
    _exit(7);
  }
  pid_t esc[2];
  pid_t x = escape(esc);
  ck_assert(alive(esc[0]) && alive(esc[1]));
  int st = 0;
  ac_child_end(x, 0, 5.0, &st); /* reaps x, then the strays: the orphaned sleeper and its child */
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ck_assert_msg(!alive(esc[0]) && !alive(esc[1]), "an orphan of a case outlived it");
  ck_assert_int_lt(waitpid(esc[0], NULL, WNOHANG), 0); /* reaped already: no zombie left */
  ck_assert_msg(alive(keep), "a registered child was taken for a stray");
  ck_assert_int_eq(waitpid(keep, &st, 0), keep);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7);
  ac_child_forget(keep);
}
END_TEST

START_TEST(a_child_forked_past_the_registry_is_a_stray)
{
#if !defined(__linux__) || !defined(PR_SET_CHILD_SUBREAPER)
  return;
#endif
  ac_child_subreaper();
  pid_t c = fork();
  if (c == 0) {
    sleep(30);
    _exit(0);
  }
  ck_assert_int_gt(c, 0);
  ck_assert_int_eq(ac_child_reap_strays(), 1);
  ck_assert(!alive(c));
  ck_assert_int_eq(ac_child_reap_strays(), 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("reaper");
  TCase *tc = tcase_create("reaper");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, strays_go_registered_children_stay);
  tcase_add_test(tc, a_child_forked_past_the_registry_is_a_stray);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
