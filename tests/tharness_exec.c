/* tharness_exec: a command as a kernel ('exec:COMMAND {in} {out}'): outputs read back from
 * the NPZ it writes, its failures turned into KERNEL-ERROR, CRASH and TIMEOUT. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "tharness_util.h"

static char helper[4096];

static ac_run_result run_mode(const char *mode, const ac_case *c, double timeout_s, int want_lse)
{
  char spec[4400];
  snprintf(spec, sizeof spec, "exec:%s %s {in} {out}", helper, mode);
  ac_kernel *k = th_kernel(spec);
  ck_assert_int_eq(k->kind, AC_KIND_EXEC);
  char why[64];
  ck_assert_int_eq(ac_kernel_supports(k, &c->p, why, sizeof why), 1);
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.timeout_s = timeout_s;
  o.want_lse = want_lse;
  ac_run_result r;
  ac_err e;
  ck_assert_msg(ac_harness_run(k, c, &o, &r, &e) == 0, "%s: %s", mode, e.msg);
  ac_kernel_free(k);
  return r;
}

START_TEST(exec_kernel_output_matches_builtin)
{
  ac_case c;
  th_case(&c, AC_BF16, AC_MASK_CAUSAL, 1, 2, 1, 3, 4, 5, 6, 50);
  ac_run_result r = run_mode("ok", &c, 20, 1);
  ck_assert_msg(r.status == AC_RUN_OK, "%s: %s", ac_run_status_name(r.status), r.msg);
  ac_kernel *ref = th_kernel("test-reference");
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.want_lse = 1;
  ac_run_result b;
  ac_err e;
  ck_assert(ac_harness_run(ref, &c, &o, &b, &e) == 0);
  ck_assert_msg(ac_harness_repeat_equal(&r, &b), "exec output differs from the in-tree run");
  ac_run_result_free(&r);
  r = run_mode("nolse", &c, 20, 1);
  ck_assert_int_eq(r.status, AC_RUN_OK);
  ck_assert_ptr_null(r.lse);
  ck_assert_int_eq(memcmp(r.o, b.o, (size_t)b.o_count * 2), 0);
  ac_run_result_free(&r);
  ac_run_result_free(&b);
  ac_kernel_free(ref);
  ac_case_free(&c);
}
END_TEST

START_TEST(exec_failures_become_statuses)
{
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 51);
  ac_run_result r = run_mode("fail", &c, 20, 0);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  ck_assert_str_eq(r.msg, "command exited with status 4: exec kernel: deliberate failure");
  ac_run_result_free(&r);
  r = run_mode("crash", &c, 20, 0);
  /* (A sanitized helper reports the access and exits 1 instead.) */
  ck_assert_msg((r.status == AC_RUN_CRASH && r.sig == SIGSEGV) || (th_sanitized() && r.status == AC_RUN_KERNEL_ERROR), "%s %d: %s", ac_run_status_name(r.status), r.sig, r.msg);
  ac_run_result_free(&r);
  r = run_mode("noout", &c, 20, 0);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  ck_assert_msg(strstr(r.msg, "command output unreadable") != NULL, "%s", r.msg);
  ac_run_result_free(&r);
  r = run_mode("badshape", &c, 20, 0);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  /* the whole shapes, expected and received (not only the rank, which is the same here) */
  ck_assert_msg(strstr(r.msg, "output 'o' must be <f4 with shape [1,1,2,2] (dtype f32), got <f4 of shape [1,1,1,4]") !=
                    NULL,
                "%s", r.msg);
  ac_run_result_free(&r);
  r = run_mode("badlse", &c, 20, 1);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  ck_assert_msg(strstr(r.msg, "output 'lse' must be <f4 (or <f8) with shape [1,1,2], got <f4 of shape [1,2]") != NULL,
                "%s", r.msg);
  ac_run_result_free(&r);
  double t0 = ac_now();
  r = run_mode("hang", &c, 1.0, 0);
  double dt = ac_now() - t0;
  ck_assert_int_eq(r.status, AC_RUN_TIMEOUT);
  ck_assert_msg(dt < 2.5, "timeout after %a s", dt);
  ac_run_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(exec_specs_are_checked)
{
  ac_kernel **list = NULL;
  int n = 0;
  ac_err e;
  ck_assert(ac_kernel_resolve("exec:cat {in}", &list, &n, &e) == -1);
  ck_assert_msg(strstr(e.msg, "must contain {in} and {out}") != NULL, "%s", e.msg);
  ck_assert(ac_kernel_resolve("exec:", &list, &n, &e) == -1);
  ck_assert_int_eq(n, 0);
  free(list);
}
END_TEST

int main(void)
{
  const char *top = getenv("abs_top_builddir");
  snprintf(helper, sizeof helper, "%s/tests/tharness_execkernel", top ? top : ".");
  Suite *s = suite_create("harness_exec");
  TCase *tc = tcase_create("exec");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, exec_kernel_output_matches_builtin);
  tcase_add_test(tc, exec_failures_become_statuses);
  tcase_add_test(tc, exec_specs_are_checked);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
