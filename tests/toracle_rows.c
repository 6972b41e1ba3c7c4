/* toracle_rows.c: row selection (all, lists, edges+K), a selected subset computing exactly
 * what a full run computes for those rows, and the on-disk cache round trip. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"

static void fill(ac_case *c, uint64_t stream)
{
  ac_rng g;
  ac_rng_init(&g, ac_test_seed(), stream);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(&g));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(&g));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(&g));
}

START_TEST(row_specs)
{
  ac_problem p;
  memset(&p, 0, sizeof p);
  p.batch = 1; p.heads = 2; p.kv_heads = 1; p.tq = 40; p.tk = 40; p.dk = p.dv = 4;
  uint8_t sel[80], sel2[80];
  ac_err e;
  ck_assert_int_eq(ac_oracle_select_rows(&p, NULL, 0, sel, &e), 0);
  for (int x = 0; x < 80; x++) ck_assert_int_eq(sel[x], 1);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "0,3-5,79", 0, sel, &e), 0);
  int cnt = 0;
  for (int x = 0; x < 80; x++) cnt += sel[x];
  ck_assert_int_eq(cnt, 5);
  ck_assert(sel[0] && sel[3] && sel[4] && sel[5] && sel[79]);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "80", 0, sel, &e), -1);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "5-3", 0, sel, &e), -1);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "x", 0, sel, &e), -1);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "edges+z", 0, sel, &e), -1);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "edges", 0, sel, &e), 0);
  cnt = 0;
  for (int x = 0; x < 80; x++) {
    int i = x % 40, want = i == 0 || i == 39 || i % 16 == 0 || i % 16 == 15;
    ck_assert_int_eq(sel[x], want);
    cnt += sel[x];
  }
  ck_assert_int_eq(cnt, 12);   /* 0 15 16 31 32 39 per head */
  ck_assert_int_eq(ac_oracle_select_rows(&p, "edges+10", 7, sel, &e), 0);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "edges+10", 7, sel2, &e), 0);
  ck_assert(memcmp(sel, sel2, 80) == 0);
  cnt = 0;
  for (int x = 0; x < 80; x++) cnt += sel[x];
  ck_assert_int_eq(cnt, 22);
  ck_assert_int_eq(ac_oracle_select_rows(&p, "edges+1000", 7, sel, &e), 0);   /* capped at every row */
  for (int x = 0; x < 80; x++) ck_assert_int_eq(sel[x], 1);
}
END_TEST

START_TEST(subset_matches_full_run)
{
  ac_case c;
  ref_case(&c, AC_BF16, AC_MASK_CAUSAL, 1, 2, 1, 20, 20, 8, 3);
  fill(&c, 31);
  ac_oracle_result full, sub;
  ref_oracle(&c, 1u << AC_F32, 2, &full);
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = 1u << AC_F32;
  o.lse_f64 = 1;
  o.rows = "edges+3";
  o.rows_seed = 5;
  ck_assert_int_eq(ac_oracle_run(&c, &o, &sub, &e), 0);
  uint8_t sel[40];
  ck_assert_int_eq(ac_oracle_select_rows(&c.p, o.rows, o.rows_seed, sel, &e), 0);
  int64_t n = 0;
  for (int64_t x = 0; x < 40; x++) {
    ck_assert_int_eq(sub.rows[x].selected, sel[x]);
    if (!sel[x]) {
      /* a row not computed has its own code, never EXACT, and no stored elements */
      ck_assert_int_eq(sub.rows[x].lse_how, AC_HOW_NOT_SELECTED);
      ck_assert_int_eq(ac_oracle_slot(&sub, x), -1);
      continue;
    }
    n++;
    ck_assert(memcmp(&sub.rows[x], &full.rows[x], sizeof sub.rows[x]) == 0);
    int64_t s = ac_oracle_slot(&sub, x);
    ck_assert(s >= 0 && s < n);
    ck_assert(memcmp(&sub.elems[s * 3], &full.elems[x * 3], 3 * sizeof *sub.elems) == 0);
    for (int t = 0; t < 3; t++) ck_assert(sub.o_round[AC_F32][s * 3 + t] == full.o_round[AC_F32][x * 3 + t]);
  }
  for (int64_t x = 0; x < 40; x++)
    if (!sel[x]) ck_assert_int_eq(ac_oracle_slot(&sub, x), -1);
  /* elements are stored for the selected rows only */
  ck_assert_int_eq(sub.rows_done, n);
  ck_assert_int_eq(ac_oracle_nstored(&sub), n);
  ck_assert(n < 40);
  ac_oracle_result_free(&full);
  ac_oracle_result_free(&sub);
  ac_case_free(&c);
}
END_TEST

START_TEST(cache_round_trip)
{
  char dir[512];
  snprintf(dir, sizeof dir, "%s/oracle-cache", ac_test_tmpdir());
  ac_case c;
  ref_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 1, 5, 6, 4, 2);
  fill(&c, 32);
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = 1u << AC_F64;
  ac_oracle_result a, b;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  ck_assert_int_eq(ac_oracle_run(&c, &o, &a, &e), 0);
  ck_assert_int_eq(ac_oracle_cache_store(dir, &c, &o, &a), 0);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  ck_assert(memcmp(a.rows, b.rows, (size_t)a.nrows * sizeof *a.rows) == 0);
  ck_assert(memcmp(a.elems, b.elems, (size_t)(a.nrows * 2) * sizeof *a.elems) == 0);
  for (int f = 0; f < AC_NDTYPES; f++) {
    ck_assert((a.o_round[f] == NULL) == (b.o_round[f] == NULL));
    if (a.o_round[f]) ck_assert(memcmp(a.o_round[f], b.o_round[f], (size_t)(a.nrows * 2) * 8) == 0);
  }
  ck_assert_int_eq(a.n_rounded, b.n_rounded);
  ck_assert_uint_eq(a.formats, b.formats);
  ac_oracle_result_free(&b);
  /* other options, or another case: a miss */
  o.formats = 0;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.formats = 1u << AC_F64;
  ref_set(&c, 'v', 0, 123.0);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  ac_oracle_result_free(&a);
  ac_case_free(&c);
}
END_TEST

START_TEST(commands)
{
  char cmd[2048], out[16384];
  const char *bin = ac_test_attncheck(), *tmp = ac_test_tmpdir();
  snprintf(cmd, sizeof cmd, "'%s' gen --example tiny3 --out '%s/tiny3.npz' 2>&1", bin, tmp);
  int rc = ac_test_system(cmd, out, sizeof out);
  ck_assert_msg(rc == 0, "gen: %d %s", rc, out);
  snprintf(cmd, sizeof cmd, "'%s' explain '%s/tiny3.npz' --row 2 2>&1", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "raw: [1, 1, 2]") && strstr(out, "scaled: [1/√2, 1/√2, √2]"), "%.400s", out);
  ck_assert_msg(strstr(out, "0x3f40725b"), "%.400s", out);
  snprintf(cmd, sizeof cmd, "ATTNCHECK_CACHE=off '%s' oracle '%s/tiny3.npz' -o '%s/o.npz' --formats f16,f64 --lse-f64 2>&1",
           bin, tmp, tmp);
  ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%.400s", out);
  ck_assert_msg(strstr(out, "unresolved 0"), "%.400s", out);
  char path[600];
  snprintf(path, sizeof path, "%s/o.npz", tmp);
  ac_err e;
  ac_npz *z = ac_npz_open(path, 1u << 30, &e);
  ck_assert_msg(z != NULL, "%s", e.msg);
  ac_npz_member m;
  ck_assert_int_eq(ac_npz_read(z, "o_exact_f32", &m, &e), 0);
  ck_assert_int_eq(m.ndim, 4);
  ck_assert_int_eq(m.shape[2], 3);
  float f[6];
  memcpy(f, m.data, sizeof f);
  ck_assert(f[0] == 1.0f && f[1] == 0.0f && f[4] == f[5]);
  ck_assert_int_eq(ac_npz_read(z, "o_exact_f16", &m, &e), 0);
  ck_assert_int_eq(ac_npz_read(z, "o_exact_f64", &m, &e), 0);
  ck_assert_int_eq(ac_npz_read(z, "lse_exact_f32", &m, &e), 0);
  ck_assert_int_eq(ac_npz_read(z, "lse_exact_f64", &m, &e), 0);
  ck_assert_int_eq(ac_npz_read(z, "budget_G", &m, &e), 0);
  ck_assert_int_eq(ac_npz_read(z, "q", &m, &e), 0);
  ac_npz_close_reader(z);
  /* usage errors exit 2 */
  snprintf(cmd, sizeof cmd, "'%s' oracle '%s/tiny3.npz' --bogus 2>&1", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  snprintf(cmd, sizeof cmd, "'%s' oracle '%s/missing.npz' 2>&1", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  snprintf(cmd, sizeof cmd, "ATTNCHECK_CACHE=off '%s' oracle '%s/tiny3.npz' --rows 7 2>&1", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  snprintf(cmd, sizeof cmd, "'%s' explain '%s/tiny3.npz' --row 3 2>&1", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  snprintf(cmd, sizeof cmd, "'%s' explain --help", bin);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  /* the cache: the second run is a hit */
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof cmd, "ATTNCHECK_CACHE='%s/cache' '%s' oracle '%s/tiny3.npz' 2>&1", tmp, bin, tmp);
    ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%.400s", out);
    ck_assert_msg((strstr(out, "from the cache") != NULL) == (k == 1), "run %d: %.300s", k, out);
  }
  /* explain refuses large cases unless forced */
  snprintf(cmd, sizeof cmd, "'%s' gen --out '%s/big.npz' --t 100 --dk 4 --mask causal --seed 1 2>&1", bin, tmp);
  ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%.400s", out);
  snprintf(cmd, sizeof cmd, "'%s' explain '%s/big.npz' --row 99 2>&1", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  ck_assert_msg(strstr(out, "--force"), "%.300s", out);
  snprintf(cmd, sizeof cmd, "'%s' explain '%s/big.npz' --row 99 --force 2>&1 | grep -c 'Σ_j A_j = 1'", bin, tmp);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  ck_assert_msg(atoi(out) == 1, "%.200s", out);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_rows");
  TCase *tc = tcase_create("rows_cache_commands");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, row_specs);
  tcase_add_test(tc, subset_matches_full_run);
  tcase_add_test(tc, cache_round_trip);
  tcase_add_test(tc, commands);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
