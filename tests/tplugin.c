/* tplugin: the plugin loader takes PATH.so and PATH.so:NAME, runs the example plugin, and
 * refuses with one clear line a shared object without the symbol, with no kernels, with
 * another abi_version or with a struct_size smaller than v1's, and a list with an absurd count,
 * a name used twice, a control character in a name or an unknown precision class; a plugin's
 * code runs in children only, and nothing it starts outlives its case. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "tharness_util.h"

static const char *so_path(const char *rel)
{
  static char buf[4][4096];
  static int slot;
  const char *top = getenv("abs_top_builddir");
  char *b = buf[slot++ & 3];
  snprintf(b, sizeof buf[0], "%s/%s", top ? top : ".", rel);
  return b;
}

static void refused(const char *rel, const char *expect)
{
  ac_kernel **list = NULL;
  int n = 0;
  ac_err e;
  const char *path = so_path(rel);
  ck_assert_msg(ac_kernel_resolve(path, &list, &n, &e) == -1, "%s was accepted", path);
  ck_assert_int_eq(n, 0);
  ck_assert_msg(strstr(e.msg, path) == e.msg, "message does not start with the file: %s", e.msg);
  ck_assert_msg(strstr(e.msg, expect) != NULL, "message '%s' lacks '%s'", e.msg, expect);
  ck_assert_msg(strchr(e.msg, '\n') == NULL, "message is not one line: %s", e.msg);
  free(list);
}

START_TEST(wrong_abi_plugins_are_refused)
{
  refused("tests/.libs/tplugin_badabi.so", "abi_version 999; this attncheck speaks abi_version 1 to 5");
  refused("tests/.libs/tplugin_small.so", "smaller than attncheck_kernel v1");
  refused("tests/.libs/tplugin_nosym.so", "not an attncheck plugin (no attncheck_plugin_kernels symbol)");
  refused("tests/.libs/tplugin_empty.so", "returned no kernels");
  refused("tests/.libs/no_such_plugin.so", "no such plugin file");
}
END_TEST

START_TEST(malformed_plugin_lists_are_refused)
{
  static const char *const defect[][2] = {
    {"count", "returned a count of 1099511627776 (at most 4096 kernels)"},
    {"dup", "kernels 0 and 1 are both named 'malformed-ok'"},
    {"ctrl", "kernel 1 has a control character (byte 0x0a) in its name"},
    {"precision", "kernel 'malformed-prec' names an unknown precision class 'fp33-fa9'"},
  };
  for (size_t i = 0; i < sizeof defect / sizeof defect[0]; i++) {
    setenv("AC_TPLUGIN_DEFECT", defect[i][0], 1);
    refused("tests/.libs/tplugin_malformed.so", defect[i][1]);
  }
  unsetenv("AC_TPLUGIN_DEFECT");
  ac_kernel **list = NULL;
  int n = 0;
  ac_err e;
  ck_assert_msg(ac_kernel_resolve(so_path("tests/.libs/tplugin_malformed.so"), &list, &n, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(n, 1);
  ac_kernel_list_free(list, n);
}
END_TEST

START_TEST(plugin_lists_and_selects_kernels)
{
  ac_kernel **list = NULL;
  int n = 0;
  ac_err e;
  const char *path = so_path("tests/.libs/tplugin_multi.so");
  ck_assert_msg(ac_kernel_resolve(path, &list, &n, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(n, 2);
  ck_assert_str_eq(list[0]->name, "multi-zero");
  ck_assert_str_eq(list[1]->name, "multi-fail");
  ck_assert_int_eq(list[0]->kind, AC_KIND_PLUGIN);
  ck_assert_str_eq(list[0]->origin, path);
  ck_assert_str_eq(list[0]->precision, "fp32");
  ck_assert_ptr_null(list[1]->precision);
  char spec[4200];
  snprintf(spec, sizeof spec, "%s:multi-fail", path);
  ck_assert_msg(ac_kernel_resolve(spec, &list, &n, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(n, 3);
  ck_assert_str_eq(list[2]->name, "multi-fail");
  /* Each kernel holds its own reference on the library. */
  ac_kernel_free(list[0]);
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 20);
  ac_run_result r;
  ck_assert(ac_harness_run(list[2], &c, NULL, &r, &e) == 0);
  ck_assert_int_eq(r.status, AC_RUN_KERNEL_ERROR);
  ck_assert_str_eq(r.msg, "multi-fail: always fails");
  ac_run_result_free(&r);
  ac_kernel_free(list[1]);
  ac_kernel_free(list[2]);
  free(list);
  list = NULL;
  n = 0;
  snprintf(spec, sizeof spec, "%s:nope", path);
  ck_assert(ac_kernel_resolve(spec, &list, &n, &e) == -1);
  ck_assert_msg(strstr(e.msg, "no kernel named 'nope' in the plugin (it has: multi-zero, multi-fail)"), "%s", e.msg);
  ck_assert(ac_kernel_resolve("no-such-kernel", &list, &n, &e) == -1);
  ck_assert_msg(strstr(e.msg, "unknown kernel 'no-such-kernel'"), "%s", e.msg);
  ck_assert_int_eq(n, 0);
  free(list);
  ac_case_free(&c);
}
END_TEST

/* The example plugin against the binary64 reference: every mask, GQA, strides, LSE. */
START_TEST(example_plugin_runs_correctly)
{
  char spec[4200];
  snprintf(spec, sizeof spec, "%s:myplugin-naive-f32", so_path("examples/plugin/.libs/myplugin.so"));
  ac_kernel *k = th_kernel(spec);
  ck_assert_str_eq(k->name, "myplugin-naive-f32");
  ck_assert_str_eq(k->precision, "fp32");
  ac_kernel *ref = th_kernel("test-reference");
  for (int mask = 0; mask < 3; mask++) {
    ac_case c;
    th_case(&c, AC_F32, (ac_mask)mask, 2, 4, 2, 5, 9, 16, 12, 30 + (uint64_t)mask);
    if (mask == 2) {
      const int64_t qs[4] = {5 * 4 * 16, 16, 4 * 16, 1};   /* [b][t][h][d] */
      memcpy(c.p.q_stride, qs, sizeof qs);
      const int64_t os[4] = {4 * 5 * 16, 5 * 16, 16, 1};   /* padded head dim */
      memcpy(c.p.o_stride, os, sizeof os);
    }
    ac_run_opts o;
    ac_run_opts_init(&o);
    o.want_lse = 1;
    ac_run_result a, b;
    ac_err e;
    ck_assert(ac_harness_run(k, &c, &o, &a, &e) == 0);
    ck_assert(ac_harness_run(ref, &c, &o, &b, &e) == 0);
    ck_assert_msg(a.status == AC_RUN_OK, "mask %d: %s: %s", mask, ac_run_status_name(a.status), a.msg);
    ck_assert_msg(a.guard_ok && a.n_unwritten == 0 && a.n_lse_unwritten == 0, "mask %d: %s", mask, a.guard_msg);
    for (int64_t i = 0; i < a.o_count; i++) {
      double x = ac_load(AC_F32, a.o, (size_t)i), y = ac_load(AC_F32, b.o, (size_t)i);
      ck_assert_msg(fabs(x - y) <= 1e-5 * (1 + fabs(y)), AC_SEED_FMT "mask %d o[%lld] = %a, reference %a", AC_SEED_ARG,
                    mask, (long long)i, x, y);
    }
    for (int64_t i = 0; i < a.lse_count; i++)
      ck_assert_msg(fabs(a.lse[i] - b.lse[i]) <= 1e-5 * (1 + fabs(b.lse[i])), AC_SEED_FMT "mask %d lse[%lld] = %a, reference %a",
                    AC_SEED_ARG, mask, (long long)i, a.lse[i], b.lse[i]);
    ac_run_result_free(&a);
    ac_run_result_free(&b);
    ac_case_free(&c);
  }
  ac_case c;
  th_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 40);
  char why[128];
  ck_assert_int_eq(ac_kernel_supports(k, &c.p, why, sizeof why), 0);
  ck_assert_str_eq(why, "myplugin handles f32 only");
  ac_case_free(&c);
  ac_kernel_free(k);
  ac_kernel_free(ref);
}
END_TEST

/* 1 when pid has ended (or is a zombie) within 2 s. */
static int process_gone(long pid)
{
  for (int i = 0; i < 200; i++) {
    char p[64], st[512] = "";
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f) return 1;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = 0;
    const char *rp = strrchr(st, ')');
    if (!rp || rp[1] != ' ' || rp[2] == 'Z') return 1;
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  return 0;
}

/* supports() in a probe child: answers cached, a crash there is the run's CRASH; a one-shot
 * child's grandchild is gone when the run returns. */
START_TEST(plugin_code_runs_in_children_only)
{
  const char *path = so_path("tests/.libs/tplugin_misbehave.so");
  char spec[4200];
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 3, 3, 4, 4, 41);
  char why[256];
  snprintf(spec, sizeof spec, "%s:naive-f32", path);
  ac_kernel *k = th_kernel(spec);
  ck_assert_int_eq(ac_kernel_supports(k, &c.p, why, sizeof why), 1);
  c.p.mask = AC_MASK_CAUSAL;
  ck_assert_int_eq(ac_kernel_supports(k, &c.p, why, sizeof why), 0);
  ck_assert_str_eq(why, "fp32 without a mask only");
  c.p.mask = AC_MASK_NONE;
  ac_kernel_free(k);

  snprintf(spec, sizeof spec, "%s:segv-supports", path);
  k = th_kernel(spec);
  ck_assert_int_eq(ac_kernel_supports(k, &c.p, why, sizeof why), 1);
  ck_assert_str_eq(why, "supports() was killed by SIGSEGV in a probe");
  ac_run_result r;
  ac_err e;
  ck_assert(ac_harness_run(k, &c, NULL, &r, &e) == 0);
  ck_assert_int_eq(r.status, AC_RUN_CRASH);
  ck_assert_msg(strstr(r.msg, "SIGSEGV") && strstr(r.msg, "in supports()"), "%s", r.msg);
  ac_run_result_free(&r);
  ac_kernel_free(k);

  char pidfile[] = "/tmp/attncheck-tplugin-pid-XXXXXX";
  int fd = mkstemp(pidfile);
  ck_assert_int_ge(fd, 0);
  close(fd);
  setenv("TCONTAIN_PIDFILE", pidfile, 1);
  snprintf(spec, sizeof spec, "%s:fork-run", path);
  k = th_kernel(spec);
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.persistent = 0;
  ck_assert(ac_harness_run(k, &c, &o, &r, &e) == 0);
  ck_assert_msg(r.status == AC_RUN_OK, "%s", r.msg);
  ac_run_result_free(&r);
  FILE *f = fopen(pidfile, "r");
  long pid = 0;
  ck_assert(f && fscanf(f, "%ld", &pid) == 1 && pid > 0);
  fclose(f);
  unlink(pidfile);
  int gone = process_gone(pid);
  if (!gone) kill((pid_t)pid, SIGKILL);
  ck_assert_msg(gone, "the kernel's child %ld outlived its case", pid);
  ac_kernel_free(k);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("plugin");
  TCase *tc = tcase_create("plugin");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, wrong_abi_plugins_are_refused);
  tcase_add_test(tc, malformed_plugin_lists_are_refused);
  tcase_add_test(tc, plugin_lists_and_selects_kernels);
  tcase_add_test(tc, example_plugin_runs_correctly);
  tcase_add_test(tc, plugin_code_runs_in_children_only);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
