/* tescape: ac_str_escape, the one escaping of text attncheck did not write: every control byte,
 * C1 control, line separator and byte that is not UTF-8 comes out as a visible escape, other
 * UTF-8 text and backslashes as they are, so that escaping twice changes nothing; output cut to
 * its buffer between characters, never inside an escape or a UTF-8 sequence. And the data files
 * of src/core/datafile.c: no link followed, no FIFO opened, no file over its size. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "util.h"

static void esc_is(const char *in, const char *want)
{
  char out[256];
  ac_str_escape(in, out, sizeof out);
  ck_assert_msg(!strcmp(out, want), "escape(%s) = '%s', expected '%s'", in, out, want);
  char twice[256];
  ac_str_escape(out, twice, sizeof twice);
  ck_assert_msg(!strcmp(twice, out), "escaping '%s' again gave '%s'", out, twice);
}

START_TEST(controls_and_bad_bytes_are_visible_escapes)
{
  esc_is("boom\nPASS  inj", "boom\\nPASS  inj");
  esc_is("a\rb\tc", "a\\rb\\tc");
  esc_is("\033[2K\033]0;t\007", "\\x1b[2K\\x1b]0;t\\x07");
  esc_is("del\177", "del\\x7f");
  esc_is("csi \302\233 nel \302\205", "csi \\x9b nel \\x85");            /* C1 controls in UTF-8 */
  esc_is("ls \342\200\250 ps \342\200\251", "ls \\u2028 ps \\u2029");    /* line and paragraph separators */
  esc_is("ff \377 lone \200 cut \303", "ff \\xff lone \\x80 cut \\xc3"); /* not UTF-8 */
  esc_is("overlong \300\257 surrogate \355\240\200", "overlong \\xc0\\xaf surrogate \\xed\\xa0\\x80");
  esc_is("plain ascii, back\\slash", "plain ascii, back\\slash");
  esc_is("UTF-8 \303\251t\303\251 \342\202\254 \360\237\231\202",
         "UTF-8 \303\251t\303\251 \342\202\254 \360\237\231\202");
}
END_TEST

START_TEST(cut_between_characters)
{
  char out[8];
  ac_str_escape("abcd\nefg", out, sizeof out); /* "abcd\n" is 6 bytes, 'e' the 7th */
  ck_assert_str_eq(out, "abcd\\ne");
  ac_str_escape("abcde\033x", out, sizeof out); /* \x1b needs 4: it does not fit after "abcde" */
  ck_assert_str_eq(out, "abcde");
  ac_str_escape("abcdef\303\251", out, sizeof out); /* a two-byte letter at the end does not fit */
  ck_assert_str_eq(out, "abcdef");
  char buf[12] = "ab\ncd\033ef";
  ac_str_escape_inplace(buf, sizeof buf);
  ck_assert_str_eq(buf, "ab\\ncd\\x1be");
  char *d = ac_str_escape_dup("\n\n\n\342\200\250");
  ck_assert_str_eq(d, "\\n\\n\\n\\u2028");
  free(d);
}
END_TEST

START_TEST(data_files_follow_no_link_and_open_no_fifo)
{
  const char *dir = ac_test_tmpdir();
  char p[4200], q[4200];
  snprintf(p, sizeof p, "%s/esc-data", dir);
  mkdir(p, 0755);
  snprintf(q, sizeof q, "%s/esc-data/ok", dir);
  FILE *f = fopen(q, "w");
  ck_assert_ptr_nonnull(f);
  fputs("hello", f);
  fclose(f);
  snprintf(q, sizeof q, "%s/esc-data/link", dir);
  ck_assert_int_eq(symlink("ok", q), 0);
  snprintf(q, sizeof q, "%s/esc-data/fifo", dir);
  ck_assert_int_eq(mkfifo(q, 0644), 0);
  snprintf(q, sizeof q, "%s/esc-data/sub", dir);
  mkdir(q, 0755);
  snprintf(q, sizeof q, "%s/esc-data/sublink", dir);
  ck_assert_int_eq(symlink("sub", q), 0);
  ac_err e;
  size_t n;
  char *t = ac_data_read(p, "ok", 100, &n, &e);
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(t, "hello");
  free(t);
  ck_assert_ptr_null(ac_data_read(p, "ok", 4, &n, &e));
  ck_assert_msg(strstr(e.msg, "5 bytes, more than the 4"), "%s", e.msg);
  ck_assert_int_lt(ac_data_open(p, "link", 100, &e), 0);
  ck_assert_msg(strstr(e.msg, "link: a symbolic link"), "%s", e.msg);
  ck_assert_int_lt(ac_data_open(p, "fifo", 100, &e), 0); /* returns at once: never opened */
  ck_assert_msg(strstr(e.msg, "fifo: a FIFO"), "%s", e.msg);
  ck_assert_int_lt(ac_data_open(p, "sub", 100, &e), 0);
  ck_assert_msg(strstr(e.msg, "a directory"), "%s", e.msg);
  snprintf(q, sizeof q, "%s/esc-data/sub/x", dir);
  f = fopen(q, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  int fd = ac_data_open(p, "sub/x", 100, &e);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_lt(ac_data_open(p, "sublink/x", 100, &e), 0); /* a link as a directory on the way */
  ck_assert_msg(strstr(e.msg, "sublink: a symbolic link"), "%s", e.msg);
}
END_TEST

int main(void)
{
  const char *dir = ac_test_tmpdir();
  Suite *s = suite_create("escape");
  TCase *tc = tcase_create("escape");
  tcase_add_test(tc, controls_and_bad_bytes_are_visible_escapes);
  tcase_add_test(tc, cut_between_characters);
  tcase_add_test(tc, data_files_follow_no_link_and_open_no_fifo);
  suite_add_tcase(s, tc);
  int rc = ac_test_run(s);
  if (rc == 0) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  return rc;
}
