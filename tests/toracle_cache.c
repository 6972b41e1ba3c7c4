/* toracle_cache.c: the oracle cache never changes a result. A flipped payload byte, a
 * truncated entry, another scale's entry under the key and another scale's payload spliced
 * behind the header are all misses; a selected-rows entry round-trips; the key covers the
 * options and the inputs. */
#include "config.h"
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "variants.h"

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

/* A fresh cache directory under the test's temporary directory. */
static const char *fresh_dir(const char *name)
{
  static char dir[4][600];
  static int k;
  char *d = dir[k++ % 4];
  snprintf(d, 600, "%s/%s", ac_test_tmpdir(), name);
  mkdir(d, 0755);
  return d;
}

/* The one entry of dir (read whole): its path and bytes. */
static char *entry(const char *dir, char *path, size_t pn, size_t *n)
{
  DIR *dp = opendir(dir);
  ck_assert(dp != NULL);
  struct dirent *de;
  int found = 0;
  while ((de = readdir(dp)))
    if (strstr(de->d_name, ".acor")) {
      ck_assert_msg(!found, "more than one entry in %s", dir);
      snprintf(path, pn, "%s/%s", dir, de->d_name);
      found = 1;
    }
  closedir(dp);
  ck_assert_msg(found, "no entry in %s", dir);
  FILE *f = fopen(path, "rb");
  ck_assert(f != NULL);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc(*n);
  ck_assert(fread(b, 1, *n, f) == *n);
  fclose(f);
  return b;
}

static void put(const char *path, const char *b, size_t n)
{
  FILE *f = fopen(path, "wb");
  ck_assert(f != NULL);
  ck_assert(fwrite(b, 1, n, f) == n);
  fclose(f);
}

static void same_result(const ac_oracle_result *a, const ac_oracle_result *b)
{
  ck_assert_int_eq(a->nrows, b->nrows);
  ck_assert_int_eq(ac_oracle_nstored(a), ac_oracle_nstored(b));
  size_t ne = (size_t)(ac_oracle_nstored(a) * a->p.dv);
  ck_assert(memcmp(a->rows, b->rows, (size_t)a->nrows * sizeof *a->rows) == 0);
  ck_assert(memcmp(a->elems, b->elems, ne * sizeof *a->elems) == 0);
  for (int64_t x = 0; x < a->nrows; x++) ck_assert_int_eq(ac_oracle_slot(a, x), ac_oracle_slot(b, x));
  for (int f = 0; f < AC_NDTYPES; f++) {
    ck_assert((a->o_round[f] == NULL) == (b->o_round[f] == NULL));
    if (a->o_round[f]) ck_assert(memcmp(a->o_round[f], b->o_round[f], ne * 8) == 0);
  }
}

/* A computed and stored result for c in dir. */
static void compute_store(const char *dir, const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r)
{
  ac_err e;
  ck_assert_int_eq(ac_oracle_run(c, o, r, &e), 0);
  ck_assert_int_eq(ac_oracle_cache_store(dir, c, o, r), 0);
}

START_TEST(corrupt_entries_miss)
{
  const char *dir = fresh_dir("corrupt");
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 2, 1, 9, 9, 4, 3);
  fill(&c, 41);
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  ac_oracle_result a, b;
  compute_store(dir, &c, &o, &a);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  same_result(&a, &b);
  ac_oracle_result_free(&b);
  char path[700];
  size_t n;
  char *good = entry(dir, path, sizeof path, &n);
  /* every single byte flipped, header, payload and sum alike: a miss */
  char *bad = malloc(n);
  for (size_t x = 0; x < n; x += (x < 256 ? 1 : 7)) {
    memcpy(bad, good, n);
    bad[x] ^= 0x10;
    put(path, bad, n);
    ck_assert_msg(ac_oracle_cache_load(dir, &c, &o, &b) == -1, "byte %zu of %zu flipped: a hit", x, n);
  }
  /* truncated anywhere, or a byte longer: a miss */
  for (size_t m = 0; m < n; m += 13) {
    put(path, good, m);
    ck_assert_msg(ac_oracle_cache_load(dir, &c, &o, &b) == -1, "truncated to %zu of %zu: a hit", m, n);
  }
  put(path, good, n);
  FILE *f = fopen(path, "ab");
  fputc(0, f);
  fclose(f);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  /* a store replaces the bad entry */
  ck_assert_int_eq(ac_oracle_cache_store(dir, &c, &o, &a), 0);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  same_result(&a, &b);
  ac_oracle_result_free(&b);
  free(bad);
  free(good);
  ac_oracle_result_free(&a);
  ac_case_free(&c);
}
END_TEST

START_TEST(unresolved_not_stored)
{
  /* a result that left elements undecided is not kept: a later oracle may decide them */
  const char *dir = fresh_dir("unresolved");
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 5, 5, 3, 3);
  fill(&c, 7);
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  ac_oracle_result a, b;
  ac_err e;
  ck_assert_int_eq(ac_oracle_run(&c, &o, &a, &e), 0);
  a.n_unresolved = 1;
  ck_assert_int_eq(ac_oracle_cache_store(dir, &c, &o, &a), -1);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  a.n_unresolved = 0;
  ck_assert_int_eq(ac_oracle_cache_store(dir, &c, &o, &a), 0);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  ac_oracle_result_free(&b);
  ac_oracle_result_free(&a);
  ac_case_free(&c);
}
END_TEST

START_TEST(other_scale_spliced_misses)
{
  /* the same q, k, v with another scale: its entry under this key, or its payload behind
   * this entry's header, is never a result */
  const char *da = fresh_dir("scale-a"), *db = fresh_dir("scale-b");
  ac_case c, d;
  ref_case(&c, AC_F16, AC_MASK_NONE, 1, 1, 1, 6, 7, 4, 4);
  fill(&c, 42);
  ac_err e;
  ck_assert_int_eq(ac_case_copy(&d, &c, &e), 0);
  d.p.scale_is_default = 0;
  d.p.scale = 0.75;
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  ac_oracle_result a, b, x;
  compute_store(da, &c, &o, &a);
  compute_store(db, &d, &o, &b);
  ck_assert(memcmp(a.elems, b.elems, (size_t)(a.nrows * a.p.dv) * sizeof *a.elems) != 0);
  char pa[700], pb[700];
  size_t na, nb;
  char *ea = entry(da, pa, sizeof pa, &na), *eb = entry(db, pb, sizeof pb, &nb);
  ck_assert_uint_eq(na, nb);
  ck_assert_str_ne(strrchr(pa, '/'), strrchr(pb, '/'));
  put(pa, eb, nb);   /* the other scale's whole entry */
  ck_assert_int_eq(ac_oracle_cache_load(da, &c, &o, &x), -1);
  /* this header (and key), the other payload and its sum; then with this entry's sum */
  for (int keep_sum = 0; keep_sum < 2; keep_sum++) {
    char *s = malloc(na);
    memcpy(s, eb, nb);
    size_t ne = (size_t)(a.nrows * a.p.dv), nf = (size_t)__builtin_popcount(a.formats);
    size_t hdr = na - 32 - (size_t)a.nrows * sizeof(ac_oracle_row) - ne * (sizeof(ac_oracle_elem) + 8 * nf);
    ck_assert(hdr > 64 && hdr < 400);
    memcpy(s, ea, hdr);
    if (keep_sum) memcpy(s + na - 32, ea + na - 32, 32);
    put(pa, s, na);
    ck_assert_int_eq(ac_oracle_cache_load(da, &c, &o, &x), -1);
    free(s);
  }
  /* the intact entry is still a hit */
  put(pa, ea, na);
  ck_assert_int_eq(ac_oracle_cache_load(da, &c, &o, &x), 0);
  same_result(&a, &x);
  ac_oracle_result_free(&x);
  free(ea);
  free(eb);
  ac_oracle_result_free(&a);
  ac_oracle_result_free(&b);
  ac_case_free(&c);
  ac_case_free(&d);
}
END_TEST

START_TEST(selected_rows_round_trip)
{
  const char *dir = fresh_dir("rows");
  ac_case c;
  ref_case(&c, AC_BF16, AC_MASK_CAUSAL, 1, 2, 1, 40, 40, 4, 3);
  fill(&c, 43);
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  o.rows = "edges+2";
  o.rows_seed = 3;
  ac_oracle_result a, b;
  compute_store(dir, &c, &o, &a);
  ck_assert(a.slot != NULL && a.nsel < a.nrows);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  same_result(&a, &b);
  ac_oracle_result_free(&b);
  /* each option and the inputs are part of the key */
  o.rows_seed = 4;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.rows_seed = 3;
  o.rows = "edges+3";
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.rows = "edges+2";
  o.formats = 1u << AC_F64;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.formats = 0;
  o.lse_f64 = 1;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.lse_f64 = 0;
  o.prec_cap = 4096;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.prec_cap = 1L << 16;
  o.mu[1] *= 2;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  o.mu[1] /= 2;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  ac_oracle_result_free(&b);
  c.p.mask = AC_MASK_CAUSAL_BR;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  c.p.mask = AC_MASK_CAUSAL;
  ref_set(&c, 'k', 5, 3.0);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  ac_oracle_result_free(&a);
  ac_case_free(&c);
}
END_TEST

/* A variant case's key covers its fields and tensors; the plain case keeps its own entry. */
START_TEST(variant_fields_in_key)
{
  const char *dir = fresh_dir("variants");
  ac_case c;
  ac_err e;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 2, 1, 6, 6, 4, 2);
  fill(&c, 47);
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  ac_oracle_result a, b;
  compute_store(dir, &c, &o, &a);
  ac_oracle_result_free(&a);
  ac_features_plain(&c.p);
  c.p.f.used = AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_BOOL_MASK | AC_FEAT_SINKS;
  c.p.f.win_left = 2;
  c.p.f.softcap = 4;
  ck_assert(ac_features_alloc(&c, &e) == 0);
  memset(c.bool_mask, 1, 36);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  compute_store(dir, &c, &o, &a);
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  same_result(&a, &b);
  ac_oracle_result_free(&b);
  /* each field and each tensor */
  c.p.f.win_left = 1;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  c.p.f.win_left = 2;
  c.p.f.softcap = 5;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  c.p.f.softcap = 4;
  c.p.f.win_top_left = 1;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  c.p.f.win_top_left = 0;
  float *fl[] = {c.alibi_slopes, c.sinks};
  for (int k = 0; k < 2; k++) {
    fl[k][1] = 0.5f;
    ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
    fl[k][1] = 0;
  }
  c.bool_mask[7] = 0;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  c.bool_mask[7] = 1;
  ((float *)c.bias)[3] = -1;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), -1);
  ((float *)c.bias)[3] = 0;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  ac_oracle_result_free(&b);
  /* the plain case finds its own entry again */
  c.p.f.used = 0;
  ck_assert_int_eq(ac_oracle_cache_load(dir, &c, &o, &b), 0);
  ac_oracle_result_free(&b);
  ac_oracle_result_free(&a);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_cache");
  TCase *tc = tcase_create("cache");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, corrupt_entries_miss);
  tcase_add_test(tc, other_scale_spliced_misses);
  tcase_add_test(tc, unresolved_not_stored);
  tcase_add_test(tc, selected_rows_round_trip);
  tcase_add_test(tc, variant_fields_in_key);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
