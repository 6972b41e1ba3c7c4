/* tsuite_html.c: the suite page's row labels are readable whatever their length: a case name is
 * drawn from the grid's left edge (never cut there), the label column widens for long names, and
 * a name beyond its widest is cut at the right with an ellipsis and shown whole in a tooltip. */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "dtype.h"
#include "suite_html.h"

static char *page_of(const char *const *names, int n)
{
  char path[] = "/tmp/attncheck-tsuitehtml-XXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  close(fd);
  ac_suite_cells s = {0};
  for (int i = 0; i < n; i++) ac_suite_cells_add(&s, 0, names[i], AC_F32, AC_STATUS_PASS, 0.5);
  const char *kernels[] = {"k"};
  ac_err e;
  ck_assert_msg(ac_suite_html(path, "ci", kernels, 1, &s, &e) == 0, "%s", e.msg);
  ac_suite_cells_free(&s);
  char *text = ac_read_text(path);
  unlink(path);
  ck_assert(text);
  return text;
}

/* The label element of row text LABEL (its <title> and shown text), or NULL. */
static const char *label(const char *page, const char *shown)
{
  char pat[300];
  snprintf(pat, sizeof pat, "</title>%s</text>", shown);
  return strstr(page, pat);
}

START_TEST(long_names_start_inside_the_grid)
{
  const char *names[] = {"f32-64x64-d32-none", "f32-113x203-d64-causal-bottom-right-b2h4kv2-dtypes-f32.bf16.bf16.f32"};
  char *page = page_of(names, 2);
  const char *l = label(page, "113x203-d64-causal-bottom-right-b2h4kv2-dtypes-f32.bf16.bf16.f32");
  ck_assert_msg(l, "the long name is not drawn whole");
  ck_assert_msg(!strstr(page, "text-anchor=\"end\" font-size=\"11\">113x203"), "label drawn leftwards from its end");
  ck_assert_msg(strstr(page, "<text x=\"6\" y=\""), "labels do not start at the left edge");
  ck_assert_msg(!strstr(page, "\xe2\x80\xa6"), "a name that fits is cut");
  free(page);
}
END_TEST

START_TEST(names_beyond_the_widest_column_are_cut_at_the_right)
{
  char longname[128];
  snprintf(longname, sizeof longname, "f32-%s",
           "0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdefghijklmnopqrstuvwxyz-0123456789END");
  const char *names[] = {longname};
  char *page = page_of(names, 1);
  char title[160];
  snprintf(title, sizeof title, "<title>%s</title>", longname + 4);
  const char *t = strstr(page, title);
  ck_assert_msg(t, "no tooltip with the whole name");
  const char *end = strstr(t, "</text>");
  ck_assert(end);
  ck_assert_msg(end - 3 >= t && !memcmp(end - 3, "\xe2\x80\xa6", 3), "no ellipsis at the right: %.*s", (int)(end - t),
                t);
  ck_assert_msg(!memmem(t + strlen(title), (size_t)(end - t) - strlen(title), "END", 3),
                "the end of the name is shown");
  ck_assert_msg(!memcmp(t + strlen(title), "0123456789abc", 13), "the start of the name is not shown");
  free(page);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("suite_html");
  TCase *tc = tcase_create("labels");
  tcase_add_test(tc, long_names_start_inside_the_grid);
  tcase_add_test(tc, names_beyond_the_widest_column_are_cut_at_the_right);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
