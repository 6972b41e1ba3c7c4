/* tassert: the internal assertion macros of src/core/ac_assert.h, in both modes whatever the build:
 * with AC_ENABLE_ASSERT a false AC_ASSERT or an inexact AC_EXACT prints file:line and the claim
 * on stderr and aborts; without it AC_ASSERT never evaluates its condition and AC_EXACT still
 * makes its call. */
#include "config.h"
#include <mpfr.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

#define AC_ENABLE_ASSERT 1
#include "ac_assert.h"

static int one_plus_one(void) { return 1 + 1; }

static void false_claim(void) { AC_ASSERT(one_plus_one() == 3, "one plus one is three"); }
static void true_claim(void) { AC_ASSERT(one_plus_one() == 2, "one plus one is two"); }
static int false_claim_line = __LINE__ - 2;

static void inexact_op(void)
{
  mpfr_t x;
  mpfr_init2(x, 8);
  AC_EXACT(mpfr_set_ui(x, 257, MPFR_RNDN), "257 holds in 8 bits");
  mpfr_clear(x);
}

#undef AC_ENABLE_ASSERT
#include "ac_assert.h"

static int calls;
static int count_call(void) { calls++; return 0; }
static void off_claims(void) { AC_ASSERT(count_call() == 1, "never evaluated"); AC_EXACT(count_call(), "always called"); }

/* Runs f in a child with stderr on a pipe: its status and what it wrote. */
static int run_child(void (*f)(void), char *err, size_t n)
{
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    f();
    _exit(0);
  }
  close(fd[1]);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < n && (r = read(fd[0], err + got, n - 1 - got)) > 0) got += (size_t)r;
  err[got] = 0;
  close(fd[0]);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  return st;
}

START_TEST(false_assertion_aborts_with_file_line_and_claim)
{
  char err[512], want[128];
  int st = run_child(false_claim, err, sizeof err);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
  snprintf(want, sizeof want, "tassert.c:%d: assertion failed: one plus one is three", false_claim_line);
  ck_assert_msg(strstr(err, want) != NULL, "stderr: '%s', wanted '%s'", err, want);
  ck_assert_msg(strstr(err, "one_plus_one() == 3") != NULL, "stderr: '%s'", err);
}
END_TEST

START_TEST(true_assertion_passes)
{
  char err[512];
  int st = run_child(true_claim, err, sizeof err);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
  ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(inexact_operation_aborts)
{
  char err[512];
  int st = run_child(inexact_op, err, sizeof err);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
  ck_assert_msg(strstr(err, "assertion failed: 257 holds in 8 bits") != NULL, "stderr: '%s'", err);
}
END_TEST

START_TEST(disabled_assertion_is_not_evaluated)
{
  calls = 0;
  off_claims();
  ck_assert_int_eq(calls, 1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("assert");
  TCase *tc = tcase_create("assert");
  tcase_add_test(tc, false_assertion_aborts_with_file_line_and_claim);
  tcase_add_test(tc, true_assertion_passes);
  tcase_add_test(tc, inexact_operation_aborts);
  tcase_add_test(tc, disabled_assertion_is_not_evaluated);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
