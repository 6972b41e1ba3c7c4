/* tcompare_suite.c: the fixed suite is deterministic, its names are unique, its cases are valid,
 * and it covers what it promises (every mask, tq != tk both ways, GQA, dv != dk, strides, every dtype). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "suite.h"
#include "testutil.h"

START_TEST(names_unique_and_deterministic)
{
  int64_t n = ac_suite_count(AC_SUITE_CI);
  ck_assert(n > 100);
  char(*names)[128] = calloc((size_t)n, sizeof *names);
  for (int64_t i = 0; i < n; i++) {
    ck_assert(ac_suite_describe(AC_SUITE_CI, i, names[i], sizeof names[i], NULL) == 0);
    for (int64_t j = 0; j < i; j++) ck_assert_msg(strcmp(names[i], names[j]), "duplicate name %s", names[i]);
  }
  ck_assert(ac_suite_describe(AC_SUITE_CI, n, names[0], sizeof names[0], NULL) < 0);
  free(names);
}
END_TEST

START_TEST(cases_valid_and_cover)
{
  int64_t n = ac_suite_count(AC_SUITE_CI);
  int masks[3] = {0}, dtypes[AC_NDTYPES] = {0}, tq_gt = 0, tq_lt = 0, gqa = 0, dvne = 0, strided = 0, repeat = 0, rows = 0;
  for (int64_t i = 0; i < n; i++) {
    ac_suite_case a, b;
    ac_err e;
    ck_assert_msg(ac_suite_make(AC_SUITE_CI, i, &a, &e) == 0, "case %lld: %s", (long long)i, e.msg);
    ck_assert_msg(ac_problem_validate(&a.c.p, ac_mem_cap(), &e) == 0, "%s: %s", a.name, e.msg);
    const ac_problem *p = &a.c.p;
    masks[p->mask]++;
    dtypes[p->dtype]++;
    tq_gt += p->tq > p->tk;
    tq_lt += p->tq < p->tk;
    gqa += p->heads != p->kv_heads;
    dvne += p->dv != p->dk;
    strided += p->q_stride[3] != 0;
    repeat += a.repeat;
    rows += a.rows[0] != 0;
    if (i % 7 == 0 && p->tq * p->tk <= 65536) {
      /* the same case twice: the same content */
      ck_assert(ac_suite_make(AC_SUITE_CI, i, &b, &e) == 0);
      ck_assert_msg(ac_case_hash(&a.c) == ac_case_hash(&b.c), "%s not deterministic", a.name);
      ac_suite_case_free(&b);
    }
    ac_suite_case_free(&a);
  }
  for (int m = 0; m < 3; m++) ck_assert(masks[m] > 0);
  for (int t = 0; t < AC_NDTYPES; t++) ck_assert_msg(dtypes[t] > 10, "dtype %d: %d cases", t, dtypes[t]);
  ck_assert(tq_gt && tq_lt && gqa && dvne && strided && repeat && rows);
}
END_TEST

/* Every value pattern also appears at tq = tk, under causal and with no mask (a kernel that
 * supports only square problems meets each), and rows with no visible key appear after rows
 * with visible keys in multi-batch, multi-head cases. */
START_TEST(square_and_empty_rows_cover)
{
  static const char *const dists[] = {"normal", "uniform", "large", "negative", "latemax", "ties", "vones",
                                      "zeroq", "steep", "tail", "largeneg"};
  enum { ND = sizeof dists / sizeof dists[0] };
  int causal_sq[ND] = {0}, none_sq[ND] = {0}, maskednan_sq = 0, empty_later = 0;
  int64_t n = ac_suite_count(AC_SUITE_CI);
  for (int64_t i = 0; i < n; i++) {
    ac_suite_case a;
    ac_err e;
    ck_assert(ac_suite_make(AC_SUITE_CI, i, &a, &e) == 0);
    const ac_problem *p = &a.c.p;
    const char *g = strncmp(a.c.generator, "suite:", 6) ? "" : a.c.generator + 6;
    for (int x = 0; x < ND; x++)
      if (p->tq == p->tk && !strcmp(g, dists[x])) {
        causal_sq[x] += p->mask == AC_MASK_CAUSAL;
        none_sq[x] += p->mask == AC_MASK_NONE;
      }
    maskednan_sq += p->tq == p->tk && p->mask == AC_MASK_CAUSAL && !strcmp(g, "maskednan");
    empty_later += p->batch > 1 && p->heads > 1 && p->mask == AC_MASK_CAUSAL_BR && p->tq > p->tk;
    ac_suite_case_free(&a);
  }
  for (int x = 0; x < ND; x++) {
    ck_assert_msg(causal_sq[x] > 0, "no causal tq = tk case with values '%s'", dists[x]);
    ck_assert_msg(none_sq[x] > 0, "no unmasked tq = tk case with values '%s'", dists[x]);
  }
  ck_assert(maskednan_sq > 0);
  ck_assert(empty_later > 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("compare_suite");
  TCase *tc = tcase_create("suite");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, names_unique_and_deterministic);
  tcase_add_test(tc, cases_valid_and_cover);
  tcase_add_test(tc, square_and_empty_rows_cover);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
