/* tpreset_budgets.c: every budget of every preset class (docs/numerics.md §6) on a fixed part of
 * the calibration corpus (bench/calcase.c: seeds 2^40 + i, every dtype in turn, a variant of every
 * even case and a mixed-dtype copy of every odd one), hashed bit for bit: per element W, E, their
 * terms and the fixed part, per row the LSE's, the exp-argument bound and the domain rule. The
 * hashes in tests/data/preset_budgets.txt were computed before the classes were built from parts;
 * a preset whose budget moves by one bit fails here. A class string equal to a preset's parts
 * judges as the preset (its hash is checked too).
 *   tests/tpreset_budgets --write FILE   prints the hashes (after an intended change of a budget).
 * ATTNCHECK_PRESET_CASES overrides the number of cases (the stored hashes are for the default). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "budget.h"
#include "calibrate.h"
#include "compare.h"
#include "oracle.h"
#include "vgen.h"

#define NCASES 1000
#define MAXCLS 64

typedef struct {
  const char *name;
  uint64_t h;
  int64_t n;
} phash;

static void mix(uint64_t *h, uint64_t v)
{
  for (int b = 0; b < 8; b++) {
    *h ^= (v >> (8 * b)) & 0xff;
    *h *= 0x100000001b3ull;
  }
}

static void mixd(uint64_t *h, double d)
{
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  mix(h, v);
}

static void mixb(uint64_t *h, const ac_bound *b)
{
  mixd(h, b->W);
  mixd(h, b->E);
  mixd(h, b->W_terms);
  mixd(h, b->E_terms);
  mixd(h, b->fixed);
}

/* The budgets of class cls on case c against its oracle r, into ph. */
static void hash_case(const ac_precision *cls, const ac_case *c, const ac_oracle_result *r, phash *ph)
{
  const ac_problem *p = &c->p;
  ac_dtype od = ac_tensor_dtype(p, 'o');
  uint8_t *vthr = ac_class_rows_beyond(c, cls);
  for (int64_t row = 0; row < r->nrows; row++) {
    const ac_oracle_row *rw = &r->rows[row];
    if (!rw->selected) continue;
    const ac_oracle_elem *els = &r->elems[ac_oracle_slot(r, row) * p->dv];
    ac_bound b;
    for (int64_t t = 0; t < p->dv; t++) {
      ac_budget_elem(cls, p, od, rw, &els[t], r->mu, r->nmu, &b);
      mixb(&ph->h, &b);
      ph->n++;
    }
    ac_budget_lse(cls, p, rw, &b);
    mixb(&ph->h, &b);
    mixd(&ph->h, ac_budget_exp_arg_delta(cls, p, rw));
    char why[160];
    mix(&ph->h, (uint64_t)ac_row_out_of_domain(cls, p, rw, els, vthr, row, why, sizeof why));
  }
  free(vthr);
}

static int oracle_of(const ac_case *c, const char *rows, ac_oracle_result *r)
{
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = 0;
  oo.rows = rows[0] ? rows : NULL;
  oo.rows_seed = c->seed;
  oo.nmu = ac_precision_mu_list(oo.mu, AC_ORACLE_NMU);
  ac_err e;
  if (ac_oracle_run(c, &oo, r, &e) < 0) {
    fprintf(stderr, "tpreset_budgets: oracle: %s\n", e.msg);
    return -1;
  }
  return 0;
}

static void hash_all(const ac_precision *const *cls, int ncls, phash *ph, const ac_case *c, const char *rows)
{
  ac_oracle_result r;
  if (oracle_of(c, rows, &r) < 0) return;
  for (int x = 0; x < ncls; x++) hash_case(cls[x], c, &r, &ph[x]);
  ac_oracle_result_free(&r);
}

/* The corpus: case i of the calibration draws, its variant (even i) or mixed-dtype copy (odd i). */
static void run_corpus(const ac_precision *const *cls, int ncls, phash *ph, int64_t ncases)
{
  static const ac_dtype dts[] = {AC_F64, AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
  for (int64_t i = 0; i < ncases; i++) {
    ac_case c, v;
    ac_case_init(&c);
    char rows[32], desc[200], vdesc[320];
    uint64_t seed = (1ull << 40) + (uint64_t)i;
    cal_make_case(dts[i % 6], seed, &c, rows, sizeof rows, desc, sizeof desc);
    hash_all(cls, ncls, ph, &c, rows);
    int rc = i % 2 == 0 ? cal_make_variant(&c, AC_FEAT_ALL, seed, &v, desc, vdesc, sizeof vdesc)
                        : cal_make_mixed(&c, seed, &v, desc, vdesc, sizeof vdesc);
    if (rc == 0) {
      hash_all(cls, ncls, ph, &v, rows);
      ac_case_free(&v);
    }
    ac_case_free(&c);
  }
}

static int64_t ncases_env(void)
{
  const char *s = getenv("ATTNCHECK_PRESET_CASES");
  return s && *s ? atoll(s) : NCASES;
}

static int presets(const ac_precision **cls)
{
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  int k = 0;
  for (size_t i = 0; i < n && k < MAXCLS; i++) cls[k++] = &t[i];
  return k;
}

START_TEST(preset_budgets_unchanged)
{
  const ac_precision *cls[MAXCLS];
  int n = presets(cls);
  phash ph[MAXCLS];
  memset(ph, 0, sizeof ph);
  for (int x = 0; x < n; x++) ph[x].name = cls[x]->name, ph[x].h = 0xcbf29ce484222325ull;
  for (int x = 0; x < n; x++) {   /* a preset's string is the preset: its budgets are these */
    char str[512];
    const ac_precision *c = NULL;
    ac_err e;
    ac_precision_string(cls[x], str, sizeof str);
    ck_assert_msg(ac_precision_lookup(str, &c, &e) == 0 && c == cls[x], "%s: its string '%s' is another class", cls[x]->name,
                  str);
  }
  int64_t ncases = ncases_env();
  run_corpus(cls, n, ph, ncases);
  FILE *f = fopen(ac_test_data("preset_budgets.txt"), "r");
  ck_assert_msg(f != NULL, "tests/data/preset_budgets.txt missing");
  char line[256], name[128];
  int checked = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long h;
    long long cnt, nc;
    if (line[0] == '#' || sscanf(line, "%127s %llx %lld %lld", name, &h, &cnt, &nc) != 4) continue;
    if (nc != ncases) continue;
    int found = 0;
    for (int x = 0; x < n; x++)
      if (!strcmp(ph[x].name, name)) {
        found = 1;
        checked++;
        if (ph[x].h != h || ph[x].n != cnt) {
          fprintf(stderr, "preset %s: budgets hash %016llx over %lld elements, stored %016llx over %lld\n", name,
                  (unsigned long long)ph[x].h, (long long)ph[x].n, h, cnt);
          bad++;
        }
      }
    ck_assert_msg(found, "preset %s of tests/data/preset_budgets.txt is not in the table", name);
  }
  fclose(f);
  ck_assert_msg(ncases != NCASES || checked >= 15, "only %d presets checked", checked);
  ck_assert_msg(bad == 0, "%d presets changed their budgets", bad);
}
END_TEST

static int write_hashes(const char *path)
{
  const ac_precision *cls[MAXCLS];
  int n = presets(cls);
  phash ph[MAXCLS];
  memset(ph, 0, sizeof ph);
  for (int x = 0; x < n; x++) ph[x].name = cls[x]->name, ph[x].h = 0xcbf29ce484222325ull;
  int64_t ncases = ncases_env();
  run_corpus(cls, n, ph, ncases);
  FILE *f = fopen(path, "w");
  if (!f) return 2;
  fprintf(f, "# tests/tpreset_budgets --write: class, FNV-1a 64 hash of every budget, elements, cases\n");
  for (int x = 0; x < n; x++)
    fprintf(f, "%s %016llx %lld %lld\n", ph[x].name, (unsigned long long)ph[x].h, (long long)ph[x].n, (long long)ncases);
  return fclose(f) ? 2 : 0;
}

int main(int argc, char **argv)
{
  if (argc == 3 && !strcmp(argv[1], "--write")) return write_hashes(argv[2]);
  Suite *s = suite_create("preset_budgets");
  TCase *tc = tcase_create("presets");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, preset_budgets_unchanged);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
