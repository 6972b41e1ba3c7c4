/* treport_defects: findings grouped into distinct defects (fuzz/report/groups.c, docs/fuzzing.md
 * "Distinct defects"). A findings directory holding one defect found by several families and
 * rows (minimized alike, their report.json with the minimizer's "mechanism", or, as older
 * versions stored them, only the worst element, position and minimized size) and two other
 * mechanisms lists three defects first, with their counts, in the text summary and in
 * report.html; the finding directories are read, never changed. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"
#include "testutil.h"

static void finding(const char *dir, const char *sig, const char *body)
{
  char p[4400];
  snprintf(p, sizeof p, "%s/findings/%s", dir, sig);
  ck_assert_int_eq(mkdir(p, 0755), 0);
  snprintf(p, sizeof p, "%s/findings/%s/report.json", dir, sig);
  FILE *f = fopen(p, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"signature\":\"%s\",\"kind\":\"FAIL\",\"policy\":\"fail\",%s}\n", sig, body);
  fclose(f);
  /* a finding holds its case (a directory without one is not read as a finding) */
  ac_case c;
  ac_err e;
  ac_case_init(&c);
  ck_assert(ac_case_example(&c, "tiny3", &e) == 0);
  snprintf(p, sizeof p, "%s/findings/%s/case.npz", dir, sig);
  ck_assert_msg(ac_case_write(&c, p, &e) == 0, "%s", e.msg);
  ac_case_free(&c);
}

#define MECH(T, ROW) \
  "\"mechanism\":{\"shape\":\"f32 none tq1 tk65-128\",\"tensor\":\"" T "\",\"why\":\"value\",\"row\":\"" ROW "\"}"
#define SIZES "\"size\":\"B1 H4/2 tq100 tk300 dk16 dv16 f32 causal\",\"minimized\":true,"

static char *read_all(const char *path)
{
  char *t = ac_read_text(path);
  ck_assert_msg(t != NULL, "%s", path);
  return t;
}

START_TEST(one_defect_one_line)
{
  char dir[4200], p[4400];
  snprintf(dir, sizeof dir, "%s/camp", ac_test_tmpdir());
  snprintf(p, sizeof p, "%s/findings", dir);
  ac_err e;
  ck_assert(ac_mkdir_p(p, &e) == 0);
  finding(dir, "k__FAIL__normal__first",
          "\"family\":\"normal\",\"position\":\"first\",\"err_w\":900," SIZES
          "\"minimized_size\":\"B1 H1/1 tq1 tk65 dk1 dv1 f32 none\"," MECH("lse", "first"));
  finding(dir, "k__FAIL__late_max__interior",
          "\"family\":\"late_max\",\"position\":\"interior\",\"err_w\":800," SIZES
          "\"minimized_size\":\"B1 H1/1 tq1 tk65 dk3 dv1 f32 none\"," MECH("lse", "first"));
  /* stored before mechanisms were recorded: the worst element, position and minimized size (one
   * row: the worst row of the minimized case is its first, wherever it was in the case found) */
  finding(dir, "k__FAIL__gqa__interior",
          "\"family\":\"gqa\",\"position\":\"interior\",\"err_w\":700," SIZES
          "\"minimized_size\":\"B1 H1/1 tq1 tk70 dk9 dv1 f32 none\",\"mismatch\":\"\",\"worst\":{\"tensor\":\"lse\"}");
  finding(dir, "k__FAIL__ties__tile-edge",
          "\"family\":\"ties\",\"position\":\"tile-edge\",\"err_w\":600," SIZES
          "\"minimized_size\":\"B1 H1/1 tq1 tk65 dk2 dv1 f32 none\"," MECH("o", "first"));
  finding(
      dir, "k__FAIL__normal__last",
      "\"family\":\"normal\",\"position\":\"last\",\"err_w\":500," SIZES
      "\"minimized_size\":\"B1 H1/1 tq9 tk9 dk2 dv1 f32 causal\","
      "\"mechanism\":{\"shape\":\"f32 causal tq9-16 tk9-16\",\"tensor\":\"lse\",\"why\":\"value\",\"row\":\"last\"}");
  snprintf(p, sizeof p, "%s/summary.txt", ac_test_tmpdir());
  FILE *f = fopen(p, "w");
  ac_findings_summary(dir, f, 20);
  fclose(f);
  char *t = read_all(p);
  ck_assert_msg(strstr(t, ": 5 (5 with policy fail), 3 distinct defects") != NULL, "%s", t);
  const char *d1 = strstr(t, "defect 1: FAIL"), *d2 = strstr(t, "defect 2: FAIL"), *d3 = strstr(t, "defect 3: FAIL"),
             *l1 = strstr(t, "  1. FAIL");
  ck_assert_msg(d1 && d2 && d3 && l1 && d1 < d2 && d2 < d3 && d3 < l1, "defects are not listed first:\n%s", t);
  const char *x1 = strstr(t, "x3   lse value, row first, f32 none tq1 tk65-128 (families: normal, late_max, gqa)");
  const char *x2 = strstr(t, "x1   o value, row first, f32 none tq1 tk65-128"),
             *x3 = strstr(t, "x1   lse value, row last, f32 causal tq9-16 tk9-16");
  ck_assert_msg(x1 && x2 && x3 && d1 < x1 && x1 < d2 && d2 < x2 && x2 < d3 && d3 < x3, "%s", t);
  ck_assert_msg(strstr(t, "family=gqa row=interior case=0 defect=1") != NULL, "%s", t);
  ck_assert_msg(strstr(t, "family=ties row=tile-edge case=0 defect=2") != NULL, "%s", t);
  free(t);
  ck_assert(ac_report_html(dir, &e) == 0);
  snprintf(p, sizeof p, "%s/report.html", dir);
  t = read_all(p);
  const char *h = strstr(t, "Distinct defects (3)"), *fl = strstr(t, "Findings (5)");
  ck_assert_msg(h && fl && h < fl, "report.html: no defects table before the findings");
  ck_assert_msg(strstr(h, "<td class=\"n\">3</td><td>lse value, row first, f32 none tq1 tk65-128</td>") != NULL, "%s",
                h);
  free(t);
  /* nothing stored changes */
  snprintf(p, sizeof p, "%s/findings/k__FAIL__gqa__interior/report.json", dir);
  t = read_all(p);
  ck_assert(strstr(t, "mechanism") == NULL);
  free(t);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("report_defects");
  TCase *tc = tcase_create("groups");
  suite_add_tcase(s, tc);
  tcase_add_test(tc, one_defect_one_line);
  return ac_test_run(s);
}
