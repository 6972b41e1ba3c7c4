/* tcli_limits.c: bad sizes from the outside. A compressed zip member is refused (exit 2, one
 * line) by the reader, `info` and `oracle`; an absurd declared shape is exit 2 before any
 * allocation (under a virtual memory limit the commands could not exceed that way); the
 * oracle's memory for the rows judged is checked against the memory cap (exit 2), and running
 * out of memory is exit 3 with one line, never an abort. */
#include "config.h"
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include "testutil.h"
#include "casefile.h"

static const char *tmp_path(const char *name)
{
  static char buf[8][600];
  static int k;
  char *b = buf[k++ % 8];
  snprintf(b, 600, "%s/%s", ac_test_tmpdir(), name);
  return b;
}

/* A case written by gen (args appended to the command). */
static const char *gen(const char *name, const char *args)
{
  const char *p = tmp_path(name);
  char cmd[2048], out[4096];
  snprintf(cmd, sizeof cmd, "'%s' gen --out '%s' %s 2>&1", ac_test_attncheck(), p, args);
  ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  return p;
}

/* Copy src to dst: member zname replaced by text (when not NULL) and stored with method. */
static const char *rezip(const char *src, const char *dst_name, const char *zname, const char *text, int method)
{
  const char *dst = tmp_path(dst_name);
  int err = 0;
  unlink(dst);
  zip_t *in = zip_open(src, ZIP_RDONLY, &err), *out = zip_open(dst, ZIP_CREATE | ZIP_EXCL, &err);
  ck_assert(in && out);
  zip_int64_t cnt = zip_get_num_entries(in, 0);
  for (zip_int64_t i = 0; i < cnt; i++) {
    const char *name = zip_get_name(in, (zip_uint64_t)i, 0);
    int mine = !strcmp(name, zname);
    zip_source_t *s = mine && text ? zip_source_buffer(out, text, strlen(text), 0)
                                   : zip_source_zip(out, in, (zip_uint64_t)i, 0, 0, -1);
    zip_int64_t idx = zip_file_add(out, name, s, 0);
    ck_assert_int_ge(idx, 0);
    zip_set_file_compression(out, (zip_uint64_t)idx, mine ? method : ZIP_CM_STORE, 0);
  }
  ck_assert_int_eq(zip_close(out), 0);
  zip_discard(in);
  return dst;
}

/* Runs cmd (stderr only captured) and checks its exit code and that it printed one line
 * containing needle. */
static void expect(int code, const char *needle, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expect(int code, const char *needle, const char *fmt, ...)
{
  char cmd[4096], out[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd - 32, fmt, ap);
  va_end(ap);
  strcat(cmd, " 2>&1 >/dev/null");
  int rc = ac_test_system(cmd, out, sizeof out);
  ck_assert_msg(rc == code, "exit %d, expected %d: %s\n%s", rc, code, cmd, out);
  char *nl = strchr(out, '\n');
  ck_assert_msg(nl && !nl[1], "not one line on stderr: %s\n%s", cmd, out);
  ck_assert_msg(strstr(out, needle), "'%s' not in: %s", needle, out);
}

START_TEST(compressed_members_are_refused)
{
  const char *good = gen("small.npz", "--t 8 --dk 4 --seed 1");
  const char *bin = ac_test_attncheck();
  static const char *const members[] = {"q.npy", "v.npy", "meta.json"};
  for (int m = 0; m < 3; m++) {
    char name[64];
    snprintf(name, sizeof name, "deflated%d.npz", m);
    const char *p = rezip(good, name, members[m], NULL, ZIP_CM_DEFLATE);
    ac_case c;
    ac_err e;
    ck_assert_int_eq(ac_case_read(&c, p, &e), -1);
    ck_assert_msg(strstr(e.msg, "compressed") && strstr(e.msg, p), "%s", e.msg);
    expect(2, "compressed", "'%s' info '%s'", bin, p);
    expect(2, "compressed", "ATTNCHECK_CACHE=off '%s' oracle '%s'", bin, p);
  }
}
END_TEST

START_TEST(absurd_shapes_are_refused_before_allocating)
{
  const char *good = gen("small2.npz", "--t 8 --dk 4 --seed 2");
  const char *bin = ac_test_attncheck();
  /* 2^40 rows of q: far beyond the cap and the address space allowed below */
  static const char *const meta[] = {
    "{\"schema\": 1, \"dtype\": \"f32\", \"mask\": \"none\", \"batch\": 1, \"heads\": 1, \"kv_heads\": 1, "
    "\"tq\": 1099511627776, \"tk\": 8, \"dk\": 4, \"dv\": 4, \"scale\": \"default\"}",
    "{\"schema\": 1, \"dtype\": \"f64\", \"mask\": \"none\", \"batch\": 65536, \"heads\": 65536, \"kv_heads\": 1, "
    "\"tq\": 8, \"tk\": 8, \"dk\": 4, \"dv\": 4, \"scale\": \"default\"}",
  };
  for (int k = 0; k < 2; k++) {
    char name[64];
    snprintf(name, sizeof name, "absurd%d.npz", k);
    const char *p = rezip(good, name, "meta.json", meta[k], ZIP_CM_STORE);
    /* the virtual memory limit proves nothing is allocated first; AddressSanitizer's shadow
     * memory cannot live under it */
    const char *lim = strcmp(AC_BUILD_SANITIZERS, "yes") ? "ulimit -v 400000; " : "";
    expect(2, "memory cap", "%s'%s' info '%s'", lim, bin, p);
    expect(2, "memory cap", "%sATTNCHECK_CACHE=off '%s' oracle '%s'", lim, bin, p);
  }
}
END_TEST

START_TEST(oracle_memory_follows_the_rows_and_the_cap)
{
  /* 4096 x 128 f32: 6 MiB of inputs; every row needs about 80 MiB, edges+0 about 35 MiB */
  const char *p = gen("mid.npz", "--t 4096 --dk 128 --mask causal --seed 3");
  const char *bin = ac_test_attncheck();
  /* with -o the result of every row is kept (without it, `oracle` runs chunk by chunk) */
  expect(2, "memory cap", "ATTNCHECK_MEM_CAP=64M ATTNCHECK_CACHE=off '%s' oracle '%s' --threads 1 -o '%s'", bin, p,
         tmp_path("mid-all.npz"));
  char cmd[2048], out[4096];
  snprintf(cmd, sizeof cmd, "ATTNCHECK_MEM_CAP=64M ATTNCHECK_CACHE=off '%s' oracle -q '%s' --threads 1 --rows 0,4095 2>&1",
           bin, p);
  ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
  /* the option, and the output file's members (every row) against the cap */
  expect(2, "memory cap", "ATTNCHECK_CACHE=off '%s' oracle '%s' --threads 1 --mem-cap 64M -o '%s'", bin, p,
         tmp_path("mid-all.npz"));
  /* without -o the rows run in chunks: the same selection fits under the cap */
  snprintf(cmd, sizeof cmd, "ATTNCHECK_MEM_CAP=64M ATTNCHECK_CACHE=off '%s' oracle -q '%s' --threads 1 2>&1", bin, p);
  ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
  expect(2, "output file", "ATTNCHECK_CACHE=off '%s' oracle -q '%s' --threads 1 --rows 0 --mem-cap 48M -o '%s'", bin, p,
         tmp_path("mid-out.npz"));
  ck_assert(access(tmp_path("mid-out.npz"), F_OK) != 0);
}
END_TEST

START_TEST(out_of_memory_is_exit_3_in_one_line)
{
  /* the smallest virtual memory limit (in steps of 16 MiB) under which `info` of the case
   * runs; the oracle's result for every row (about 50 MiB more) cannot fit under it. Not under
   * AddressSanitizer: its shadow memory needs terabytes of address space (no ulimit -v). */
  if (!strcmp(AC_BUILD_SANITIZERS, "yes")) return;
  const char *p = gen("oom.npz", "--t 4096 --dk 128 --mask causal --seed 4");
  const char *bin = ac_test_attncheck();
  char cmd[2048], out[4096];
  long lim = 0;
  for (long kb = 32768; kb <= 4L << 20; kb += 16384) {
    snprintf(cmd, sizeof cmd, "ulimit -v %ld; '%s' info '%s' >/dev/null 2>&1", kb, bin, p);
    if (ac_test_system(cmd, out, sizeof out) == 0) { lim = kb; break; }
  }
  ck_assert_msg(lim > 0, "info does not run under 4 GiB of virtual memory");
  expect(3, "out of memory", "ulimit -v %ld; ATTNCHECK_CACHE=off '%s' oracle '%s' --threads 1 -o '%s'", lim + 8192, bin, p,
         tmp_path("oom-out.npz"));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cli_limits");
  TCase *tc = tcase_create("limits");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, compressed_members_are_refused);
  tcase_add_test(tc, absurd_shapes_are_refused_before_allocating);
  tcase_add_test(tc, oracle_memory_follows_the_rows_and_the_cap);
  tcase_add_test(tc, out_of_memory_is_exit_3_in_one_line);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
