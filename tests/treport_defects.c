/* treport_defects: a directory's findings in their defects (fuzz/report/summary.c, groups.c,
 * fuzz/engine/defects.c, defects_index.c; docs/fuzzing.md "Defects"). A findings directory with
 * four findings of defect 1 (four families, one with the smallest case), one SUSPECT of defect 2,
 * a CRASH that did not fail again (listed apart as unconfirmed, not counted) and one finding stored
 * without a defect (an older version's: grouped by its mechanism) lists three defects first, one line each with the best case, what it needs, its findings and families
 * (in the order of their findings' names) and the best finding's repro.sh, the finding without a
 * defect last, then the number of findings; report.html has the defects table
 * and the defects-over-time plot; defects.json is rebuilt from the findings and read back; the
 * finding directories are read, never changed. A defect of a wrong value and its overflow is told
 * by its wrong value in either order of reading; a NaN defect that a wrong value joined by a
 * trigger is not. A finding a stopped campaign left pending is listed apart, not counted. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"
#include "testutil.h"

static void finding(const char *dir, const char *sig, const char *kind, const char *policy, const char *body)
{
  char p[4400];
  snprintf(p, sizeof p, "%s/findings/%s", dir, sig);
  ck_assert_int_eq(mkdir(p, 0755), 0);
  snprintf(p, sizeof p, "%s/findings/%s/report.json", dir, sig);
  FILE *f = fopen(p, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"signature\":\"%s\",\"kind\":\"%s\",\"policy\":\"%s\",\"kernel_spec\":\"k\",%s}\n", sig, kind, policy, body);
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

/* A "defect" member: id, failure mode, needs, the case that shows it and its elements. */
#define DEFECT(ID, KIND, FAILS, NEEDS, SIZE, EL)                                                                    \
  "\"defect\":{\"id\":" #ID ",\"kind\":\"" KIND "\",\"fails\":{" FAILS "},\"needs\":[" NEEDS                      \
  "],\"checked\":true,\"reproduced\":true,\"case\":\"minimized.npz\",\"size\":\"" SIZE "\",\"elements\":" #EL "}"
#define D1(EL) DEFECT(1, "FAIL", "\"o\":\"value\",\"lse\":\"value\"", "", "B1 H1/1 tq1 tk65 dk1 dv1 f32 none", EL)

static char *read_all(const char *path)
{
  char *t = ac_read_text(path);
  ck_assert_msg(t != NULL, "%s", path);
  return t;
}

/* dir: a campaign directory NAME under the test's tmpdir, its findings/ made. */
static void camp_dir(char *dir, size_t n, const char *name)
{
  char p[4400];
  ac_err e;
  snprintf(dir, n, "%s/%s", ac_test_tmpdir(), name);
  snprintf(p, sizeof p, "%s/findings", dir);
  ck_assert(ac_mkdir_p(p, &e) == 0);
}

/* The summary of dir as text (path: where it was written). */
static char *summary_of(const char *dir, char *path, size_t n)
{
  snprintf(path, n, "%s/summary.txt", ac_test_tmpdir());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  ac_findings_summary(dir, f, 20);
  fclose(f);
  return read_all(path);
}

START_TEST(one_defect_one_line)
{
  char dir[4200], p[4400];
  ac_err e;
  camp_dir(dir, sizeof dir, "camp");
  finding(dir, "k__FAIL__normal__first", "FAIL", "fail", "\"family\":\"normal\",\"err_w\":900,\"found_after_s\":1.5," D1(131));
  finding(dir, "k__FAIL__late_max__interior", "FAIL", "fail", "\"family\":\"late_max\",\"err_w\":800,\"found_after_s\":0.5," D1(130));
  finding(dir, "k__METAMORPHIC__gqa__interior", "METAMORPHIC", "fail",
          "\"family\":\"gqa+mut\",\"err_w\":700,\"found_after_s\":4," D1(140));
  finding(dir, "k__FAIL__ties__tile-edge", "FAIL", "fail", "\"family\":\"ties\",\"err_w\":600,\"found_after_s\":9," D1(197));
  finding(dir, "k__SUSPECT__normal__last", "SUSPECT", "warn",
          "\"family\":\"normal\",\"err_w\":0.5,\"found_after_s\":3," DEFECT(2, "SUSPECT", "\"lse\":\"value\"", "\"causal\"",
                                                                             "B1 H1/1 tq2 tk9 dk2 dv1 f32 causal", 40));
  /* a crash that did not crash again when judged again: listed apart, not counted */
  finding(dir, "k__CRASH__large_mag__none", "CRASH", "fail",
          "\"family\":\"large_mag\",\"err_w\":0,\"found_after_s\":2,\"defect\":{\"id\":3,\"kind\":\"CRASH\",\"fails\":{},"
          "\"needs\":[\"heads\"],\"checked\":true,\"reproduced\":false,\"case\":\"case.npz\","
          "\"size\":\"B1 H2/2 tq300 tk300 dk8 dv8 f32 none\",\"elements\":4800}");
  /* stored by an older version: no defect, grouped by the mechanism it records */
  finding(dir, "k__FAIL__normal__last", "FAIL", "fail",
          "\"family\":\"normal\",\"position\":\"last\",\"err_w\":500,\"minimized\":true,"
          "\"minimized_size\":\"B1 H1/1 tq9 tk9 dk2 dv1 f32 causal\","
          "\"mechanism\":{\"shape\":\"f32 causal tq9-16 tk9-16\",\"tensor\":\"lse\",\"why\":\"value\",\"row\":\"last\"}");
  char *t = summary_of(dir, p, sizeof p);
  ck_assert_msg(strstr(t, "3 defects (2 with policy fail) in ") == t, "%s", t);
  const char *d1 = strstr(t, "\ndefect 1: FAIL o value and the LSE value on 1 query x 65 keys (dk 1, dv 1, f32); needs "
                              "nothing else; 4 findings from 4 families (late_max normal ties gqa); repro: "),
             *d2 = strstr(t, "\ndefect 2: SUSPECT the LSE value on 2 queries x 9 keys (dk 2, dv 1, f32); needs causal; 1 "
                             "finding from 1 family (normal); repro: "),
             *g = strstr(t, "\nnot judged again: FAIL lse value, row last, f32 causal tq9-16 tk9-16 (grouped by mechanism); 1 finding"),
             *u = strstr(t, "\nunconfirmed 3: CRASH the run on 300 queries x 300 keys (dk 8, dv 8, f32); needs heads; did not fail "
                            "again when judged again; 1 finding from 1 family (large_mag); repro: "),
             *n = strstr(t, "\n7 findings (6 with policy fail) in ");
  ck_assert_msg(d1 && d2 && g && u && n && d1 < d2 && d2 < g && g < u && u < n, "not one line per defect, the recorded ones first:\n%s", t);
  ck_assert_msg(strstr(d1, "/findings/k__FAIL__late_max__interior/repro.sh\n") != NULL, "defect 1: not its smallest case:\n%s", t);
  ck_assert_int_eq((int)(strchr(n + 1, '\n') - t + 1), (int)strlen(t));   /* the findings' line ends it */
  free(t);
  /* the index, rebuilt from the findings and read back */
  ac_defect_list l, r;
  ck_assert(ac_defects_rebuild(dir, &l, &e) == 0);
  ck_assert(ac_defects_index_read(dir, &r) == 0);
  ck_assert_int_eq(l.n, 3);
  ck_assert_int_eq(r.n, 3);
  ck_assert(ac_defect_confirmed(&r.v[0]) && ac_defect_confirmed(&r.v[1]) && !ac_defect_confirmed(&r.v[2]));
  ck_assert_int_eq(r.unassigned, 1);
  ck_assert(r.v[0].id == 1 && r.v[0].nfind == 4 && r.v[0].nfam == 4 && r.v[0].fail && r.v[0].rep_elems == 130);
  ck_assert_str_eq(r.v[0].rep, "k__FAIL__late_max__interior");
  ck_assert(r.v[0].first_s == 0.5 && r.v[1].id == 2 && !r.v[1].fail && r.v[1].fp.feats == AC_DF_CAUSAL);
  ck_assert(ac_defect_same(&l.v[0].fp, &r.v[0].fp) && !ac_defect_same(&r.v[0].fp, &r.v[1].fp));
  ac_defects_free(&l);
  ac_defects_free(&r);
  snprintf(p, sizeof p, "%s/defects.json", dir);
  t = read_all(p);
  ck_assert_msg(strstr(t, "\"repro\":\"findings/k__FAIL__late_max__interior/repro.sh\"") != NULL, "%s", t);
  free(t);
  ck_assert(ac_report_html(dir, &e) == 0);
  snprintf(p, sizeof p, "%s/report.html", dir);
  t = read_all(p);
  const char *h = strstr(t, "Defects (3)"), *fl = strstr(t, "Findings (7)");
  ck_assert_msg(strstr(t, "3 defects, 7 findings. 1 more finding did not fail again") != NULL, "report.html: the unconfirmed one counted");
  ck_assert_msg(strstr(h, "<tr><td>(3)</td><td class=\"fail\">CRASH") != NULL, "report.html: the unconfirmed one not listed apart");
  ck_assert_msg(h && fl && h < fl, "report.html: no defects table before the findings");
  ck_assert_msg(strstr(t, "<svg id=\"plot-defects-time\"") != NULL, "report.html: no defects-over-time plot");
  ck_assert_msg(strstr(h, "<td class=\"n\">4</td><td>o value and the LSE value on 1 query x 65 keys") != NULL, "%s", h);
  free(t);
  /* nothing stored changes */
  snprintf(p, sizeof p, "%s/findings/k__FAIL__normal__last/report.json", dir);
  t = read_all(p);
  ck_assert(strstr(t, "\"defect\"") == NULL);
  free(t);
}
END_TEST

/* A defect opened by an overflow (o alone non-finite): a finding of wrong values that joined it by a
 * trigger leaves it as it is; one that joined as its wrong value (overflow_of_value) tells it from
 * then on, and its case becomes the best one, in either order of reading; the index keeps both. */
#define DOV(ID, FAILS, EXTRA, EL)                                                                                \
  "\"defect\":{\"id\":" #ID ",\"kind\":\"FAIL\",\"fails\":{" FAILS "},\"needs\":[],\"checked\":true,"           \
  "\"reproduced\":true,\"case\":\"minimized.npz\",\"size\":\"B1 H1/1 tq1 tk2 dk1 dv1 f16 none\",\"elements\":" #EL EXTRA "}"
START_TEST(overflow_of_a_wrong_value)
{
  for (int order = 0; order < 2; order++) {
    char dir[4200];
    ac_err e;
    camp_dir(dir, sizeof dir, order ? "ov1" : "ov0");
    /* findings are read in the order of their names: a_ first with order 0 */
    finding(dir, order ? "z_over" : "a_over", "FAIL", "fail", "\"family\":\"large_v\"," DOV(1, "\"o\":\"non-finite\"", "", 5));
    finding(dir, "p_trig", "FAIL", "fail", "\"family\":\"normal\"," DOV(2, "\"o\":\"value\"", ",\"trigger\":[\"causal\"]", 3));
    finding(dir, order ? "a_value" : "z_value", "FAIL", "fail",
            "\"family\":\"normal\"," DOV(1, "\"o\":\"value\"", ",\"overflow_of_value\":true", 9));
    finding(dir, "n_nan", "FAIL", "fail", "\"family\":\"normal\"," DOV(2, "\"o\":\"non-finite\"", "", 7));
    ac_defect_list l, r;
    ck_assert(ac_defects_rebuild(dir, &l, &e) == 0);
    ck_assert(ac_defects_index_read(dir, &r) == 0);
    ck_assert_int_eq(r.n, 2);
    ac_defect_list *v[2] = {&l, &r};
    for (int k = 0; k < 2; k++) {
      const ac_defect_info *d1 = &v[k]->v[0], *d2 = &v[k]->v[1];
      ck_assert(d1->id == 1 && d1->overflowed && d1->fp.mode.why[AC_QTY_O] == 1 + AC_WHY_VALUE);
      ck_assert_str_eq(d1->rep, order ? "a_value" : "z_value");   /* its wrong value, not the smaller overflow */
      ck_assert(d1->rep_derived == 0);
      /* a NaN defect that a wrong value joined by a trigger stays a NaN defect */
      ck_assert(d2->id == 2 && !d2->overflowed && d2->fp.mode.why[AC_QTY_O] == 1 + AC_WHY_NONFINITE);
      ck_assert_str_eq(d2->rep, "n_nan");
    }
    ac_defects_free(&l);
    ac_defects_free(&r);
  }
}
END_TEST

/* A finding a campaign stopped before minimizing (minimize_state pending, no defect) is listed
 * apart and not counted: its defect is not known yet (--resume judges it). */
START_TEST(pending_findings_apart)
{
  char dir[4200], p[4400];
  ac_err e;
  camp_dir(dir, sizeof dir, "pend");
  finding(dir, "k__FAIL__normal__first", "FAIL", "fail", "\"family\":\"normal\",\"err_w\":9,\"found_after_s\":1," D1(131));
  finding(dir, "k__CRASH__long_t__none", "CRASH", "fail",
          "\"family\":\"long_t\",\"err_w\":0,\"found_after_s\":59.9,\"minimize_state\":\"pending\",\"size\":\"B1 H1/1 tq5000 tk5000 dk64 dv64 f32 causal\"");
  char *t = summary_of(dir, p, sizeof p);
  ck_assert_msg(strstr(t, "1 defect (1 with policy fail) in ") == t, "%s", t);
  const char *a = strstr(t, "\ndefect 1: FAIL o value"),
             *b = strstr(t, "\n1 finding not judged again before the campaign stopped (pending; attncheck fuzz --resume judges them), not counted:\npending: CRASH "),
             *c = strstr(t, "\n2 findings (2 with policy fail) in ");
  ck_assert_msg(a && b && c && a < b && b < c && !strstr(t, "not judged again: "), "%s", t);
  free(t);
  ck_assert(ac_report_html(dir, &e) == 0);
  snprintf(p, sizeof p, "%s/report.html", dir);
  t = read_all(p);
  ck_assert_msg(strstr(t, "1 defects, 2 findings. 1 finding not judged again before the campaign stopped") != NULL &&
                strstr(t, "Defects (1)") != NULL && strstr(t, "(pending: the campaign stopped before it was judged again; not counted)") != NULL,
                "report.html: the pending finding counted");
  free(t);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("report_defects");
  TCase *tc = tcase_create("groups");
  suite_add_tcase(s, tc);
  tcase_add_test(tc, one_defect_one_line);
  tcase_add_test(tc, overflow_of_a_wrong_value);
  tcase_add_test(tc, pending_findings_apart);
  return ac_test_run(s);
}
