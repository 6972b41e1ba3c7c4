/* tharness_worker: one persistent child serves many cases with the results of one-shot
 * runs; a crash or a hang ends that child only, and the next case gets a fresh one. */
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "tharness_util.h"

static void no_zombies(void)
{
  errno = 0;
  ck_assert_msg(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child process was left behind");
}

START_TEST(worker_serves_many_cases_like_one_shot_runs)
{
  ac_kernel *k = th_kernel("test-reference");
  ac_worker *w = ac_worker_new(k);
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.timeout_s = 10;
  for (int i = 0; i < 12; i++) {
    ac_case c;
    /* Growing shapes: the shared file grows between cases. */
    th_case(&c, i % 3 == 0 ? AC_F16 : AC_F32, (ac_mask)(i % 3), 1 + i % 2, 2, 1 + i % 2, 3 + 5 * i, 4 + 7 * i, 8, 4 + i,
            100 + (uint64_t)i);
    o.want_lse = i % 2;
    ac_run_result a, b;
    ac_err e;
    ck_assert_msg(ac_worker_run(w, &c, &o, &a, &e) == 0, "case %d: %s", i, e.msg);
    ac_run_opts once = o;
    once.persistent = 0;
    ck_assert(ac_harness_run(k, &c, &once, &b, &e) == 0);
    ck_assert_msg(a.status == AC_RUN_OK, "case %d: %s: %s", i, ac_run_status_name(a.status), a.msg);
    ck_assert_msg(ac_harness_repeat_equal(&a, &b), "case %d: worker and one-shot results differ", i);
    ck_assert(a.guard_ok && a.n_unwritten == 0);
    ac_run_result_free(&a);
    ac_run_result_free(&b);
    ac_case_free(&c);
  }
  ck_assert_int_eq(ac_worker_starts(w), 1);
  ac_worker_free(w);
  /* The kernel's own worker, used by ac_harness_run by default, starts once too. */
  ck_assert_ptr_nonnull(k->worker);
  for (int i = 0; i < 3; i++) {
    ac_case c;
    th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 150 + (uint64_t)i);
    ac_run_result a;
    ac_err e;
    ck_assert(ac_harness_run(k, &c, NULL, &a, &e) == 0);
    ck_assert_int_eq(a.status, AC_RUN_OK);
    ac_run_result_free(&a);
    ac_case_free(&c);
  }
  ck_assert_int_eq(ac_worker_starts(k->worker), 1);
  ac_kernel_free(k);
  no_zombies();
}
END_TEST

/* A worker struct copied into a forked process is not used there: the copy starts its own. */
START_TEST(worker_copies_in_forked_processes_start_their_own)
{
  ac_kernel *k = th_kernel("test-reference");
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 160);
  ac_run_result a;
  ac_err e;
  ck_assert(ac_harness_run(k, &c, NULL, &a, &e) == 0);
  ac_run_result_free(&a);
  pid_t pid = fork();
  if (pid == 0) {
    ac_run_result b;
    int ok = ac_harness_run(k, &c, NULL, &b, &e) == 0 && b.status == AC_RUN_OK && ac_worker_starts(k->worker) == 2;
    ac_kernel_free(k);
    _exit(ok ? 0 : 1);
  }
  int st;
  ck_assert(waitpid(pid, &st, 0) == pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the forked process could not run through its own worker");
  ck_assert(ac_harness_run(k, &c, NULL, &a, &e) == 0);
  ck_assert_int_eq(a.status, AC_RUN_OK);
  ck_assert_int_eq(ac_worker_starts(k->worker), 1);
  ac_run_result_free(&a);
  ac_kernel_free(k);
  ac_case_free(&c);
  no_zombies();
}
END_TEST

START_TEST(worker_crash_and_hang_restart_the_worker)
{
  ac_kernel *k = th_kernel("test-crash-dk3");
  ac_worker *w = ac_worker_new(k);
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.timeout_s = 10;
  const int dks[5] = {4, 3, 4, 3, 4};
  for (int i = 0; i < 5; i++) {
    ac_case c;
    th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 3, 3, dks[i], 2, 200 + (uint64_t)i);
    ac_run_result r;
    ac_err e;
    ck_assert(ac_worker_run(w, &c, &o, &r, &e) == 0);
    if (dks[i] == 3)
      ck_assert_msg(r.status == AC_RUN_CRASH && (r.sig == SIGSEGV || th_sanitized()), "case %d: %s: %s", i, ac_run_status_name(r.status), r.msg);
    else
      ck_assert_msg(r.status == AC_RUN_OK, "case %d: %s: %s", i, ac_run_status_name(r.status), r.msg);
    ac_run_result_free(&r);
    ac_case_free(&c);
  }
  ck_assert_int_eq(ac_worker_starts(w), 3);
  ac_worker_free(w);
  ac_kernel_free(k);

  k = th_kernel("test-hang");
  w = ac_worker_new(k);
  o.timeout_s = 1.0;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 300);
  ac_run_result r;
  ac_err e;
  double t0 = ac_now();
  ck_assert(ac_worker_run(w, &c, &o, &r, &e) == 0);
  double dt = ac_now() - t0;
  ck_assert_msg(r.status == AC_RUN_TIMEOUT, "%s: %s", ac_run_status_name(r.status), r.msg);
  ck_assert_msg(dt >= 0.99 && dt < 2.0, "timeout after %a s", dt);
  ac_run_result_free(&r);
  ac_worker_free(w);
  ac_kernel_free(k);
  ac_case_free(&c);
  no_zombies();
}
END_TEST

START_TEST(worker_sees_nondeterminism_and_errors)
{
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 2, 2, 4, 4, 4, 4, 400);
  ac_kernel *k = th_kernel("test-nondeterministic");
  ac_worker *w = ac_worker_new(k);
  ac_run_result a, b;
  ac_err e;
  ck_assert(ac_worker_run(w, &c, NULL, &a, &e) == 0);
  ck_assert(ac_worker_run(w, &c, NULL, &b, &e) == 0);
  ck_assert(a.status == AC_RUN_OK && b.status == AC_RUN_OK);
  ck_assert_msg(!ac_harness_repeat_equal(&a, &b), "two runs in one worker agreed bit for bit");
  ac_run_result_free(&a);
  ac_run_result_free(&b);
  ac_worker_free(w);
  ac_kernel_free(k);
  k = th_kernel("test-error");
  w = ac_worker_new(k);
  ck_assert(ac_worker_run(w, &c, NULL, &a, &e) == 0);
  ck_assert_int_eq(a.status, AC_RUN_KERNEL_ERROR);
  ck_assert_str_eq(a.msg, "test-error: deliberate failure (workspace too small)");
  ac_run_result_free(&a);
  ck_assert_int_eq(ac_worker_starts(w), 1);
  ac_worker_free(w);
  ac_kernel_free(k);
  k = th_kernel("test-guard");
  w = ac_worker_new(k);
  for (int i = 0; i < 2; i++) {
    ck_assert(ac_worker_run(w, &c, NULL, &a, &e) == 0);
    ck_assert(!a.guard_ok);
    ac_run_result_free(&a);
  }
  ck_assert_int_eq(ac_worker_starts(w), 2);   /* retired after each out-of-bounds write */
  ac_worker_free(w);
  ac_kernel_free(k);
  ac_case_free(&c);
  no_zombies();
}
END_TEST

int main(void)
{
  Suite *s = suite_create("harness_worker");
  TCase *tc = tcase_create("worker");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, worker_serves_many_cases_like_one_shot_runs);
  tcase_add_test(tc, worker_crash_and_hang_restart_the_worker);
  tcase_add_test(tc, worker_sees_nondeterminism_and_errors);
  tcase_add_test(tc, worker_copies_in_forked_processes_start_their_own);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
