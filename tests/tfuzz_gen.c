/* tfuzz_gen.c: every generator family draws valid cases within the limits, the same
 * (family, seed, index) gives the same bytes, and distinct indices give distinct cases. */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "testutil.h"

#define PER_FAMILY 24

static void limits_all(ac_gen_limits *l)
{
  ac_gen_limits_init(l);
  l->dtypes = 0x3f;
  l->masks = 7;
  l->max_t = 4096;
  l->max_elems = (int64_t)1 << 20;
}

static int64_t count_nonfinite(const ac_case *c)
{
  ac_counts n = ac_case_counts(c);
  int64_t bad = 0;
  const void *t[3] = {c->q, c->k, c->v};
  int64_t m[3] = {n.q, n.k, n.v};
  for (int k = 0; k < 3; k++)
    for (int64_t i = 0; i < m[k]; i++)
      if (!isfinite(ac_load(ac_tensor_dtype(&c->p, "qkv"[k]), t[k], (size_t)i))) bad++;
  return bad;
}

START_TEST(every_family_valid)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  ac_gen_limits l;
  limits_all(&l);
  const ac_family *fam = &f[_i];
  for (int64_t k = 0; k < PER_FAMILY; k++) {
    ac_case c;
    ac_err e;
    int rc = ac_generate(fam, ac_test_seed(), k, &l, &c, &e);
    ck_assert_msg(rc == 0, AC_SEED_FMT "%s case %lld: %s", AC_SEED_ARG, fam->name, (long long)k, e.msg);
    ck_assert_msg(ac_problem_validate(&c.p, ac_mem_cap(), &e) == 0, AC_SEED_FMT "%s %lld: %s", AC_SEED_ARG, fam->name,
                  (long long)k, e.msg);
    ac_counts n = ac_case_counts(&c);
    ck_assert_msg(n.q <= l.max_elems && n.k <= l.max_elems && n.v <= l.max_elems && n.o <= l.max_elems,
                  AC_SEED_FMT "%s %lld: tensor beyond max_elems", AC_SEED_ARG, fam->name, (long long)k);
    /* a layout case's T is its longest sequence's (the carrier packs them all) */
    int64_t tq = c.lay ? c.p.l.max_tq : c.p.tq, tk = c.lay ? c.p.l.max_tk : c.p.tk;
    ck_assert_msg(tq <= l.max_t && tk <= l.max_t, AC_SEED_FMT "%s: T beyond max", AC_SEED_ARG, fam->name);
    ck_assert_msg(l.dtypes & (1u << c.p.dtype), AC_SEED_FMT "%s: dtype outside limits", AC_SEED_ARG, fam->name);
    if (!(fam->flags & AC_FAM_NONFINITE))
      ck_assert_msg(count_nonfinite(&c) == 0, AC_SEED_FMT "%s %lld: non-finite value from a finite family", AC_SEED_ARG,
                    fam->name, (long long)k);
    ck_assert_msg(isfinite(c.p.scale), AC_SEED_FMT "%s: scale %a", AC_SEED_ARG, fam->name, c.p.scale);
    json_object *js = json_tokener_parse(c.params_json);
    ck_assert_msg(js != NULL, AC_SEED_FMT "%s: params not JSON: %s", AC_SEED_ARG, fam->name, c.params_json);
    json_object *fv;
    ck_assert(json_object_object_get_ex(js, "family", &fv));
    ck_assert_str_eq(json_object_get_string(fv), fam->name);
    json_object_put(js);
    ck_assert_str_eq(c.generator, fam->name);
    ck_assert_int_eq(c.case_index, k);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(same_seed_same_bytes)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  ac_gen_limits l;
  limits_all(&l);
  const ac_family *fam = &f[_i];
  char p1[512], p2[512];
  snprintf(p1, sizeof p1, "%s/%s-a.npz", ac_test_tmpdir(), fam->name);
  snprintf(p2, sizeof p2, "%s/%s-b.npz", ac_test_tmpdir(), fam->name);
  uint64_t prev = 0;
  int distinct = 0;
  for (int64_t k = 0; k < 6; k++) {
    ac_case a, b, rd;
    ac_err e;
    ck_assert(ac_generate(fam, ac_test_seed(), k, &l, &a, &e) == 0);
    ck_assert(ac_generate(fam, ac_test_seed(), k, &l, &b, &e) == 0);
    ck_assert_msg(ac_case_hash(&a) == ac_case_hash(&b), AC_SEED_FMT "%s %lld: two draws differ", AC_SEED_ARG,
                  fam->name, (long long)k);
    ck_assert_str_eq(a.params_json, b.params_json);
    ck_assert_msg(ac_case_write(&a, p1, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_case_write(&b, p2, &e) == 0, "%s", e.msg);
    char cmd[1200], out[64];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s' && echo same", p1, p2);
    ac_test_system(cmd, out, sizeof out);
    ck_assert_msg(!strncmp(out, "same", 4), AC_SEED_FMT "%s %lld: files differ", AC_SEED_ARG, fam->name, (long long)k);
    ck_assert_msg(ac_case_read(&rd, p1, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_case_hash(&rd) == ac_case_hash(&a), AC_SEED_FMT "%s: read-back hash differs", AC_SEED_ARG, fam->name);
    if (ac_case_hash(&a) != prev) distinct++;
    prev = ac_case_hash(&a);
    ac_case_free(&a);
    ac_case_free(&b);
    ac_case_free(&rd);
  }
  ck_assert_msg(distinct >= 5, AC_SEED_FMT "%s: indices give the same case", AC_SEED_ARG, fam->name);
}
END_TEST

START_TEST(limits_respected)
{
  /* f16 only, no masks but causal, no strides, no non-finite values */
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  l.dtypes = 1u << AC_F16;
  l.masks = 1u << AC_MASK_CAUSAL;
  l.no_strided = 1;
  l.no_nonfinite = 1;
  l.max_t = 256;
  int nf;
  const ac_family *f = ac_families(&nf);
  for (int i = 0; i < nf; i++)
    for (int64_t k = 0; k < 8 && ac_family_usable(&f[i], &l); k++) {   /* mixed_dtypes has no f16 compute */
      ac_case c;
      ac_err e;
      ck_assert(ac_generate(&f[i], ac_test_seed(), k, &l, &c, &e) == 0);
      ck_assert_int_eq(c.p.dtype, AC_F16);
      ck_assert_msg(c.p.mask == AC_MASK_CAUSAL, AC_SEED_FMT "%s: mask %d", AC_SEED_ARG, f[i].name, c.p.mask);
      ck_assert_msg(c.p.q_stride[0] == 0, AC_SEED_FMT "%s: strided despite no_strided", AC_SEED_ARG, f[i].name);
      ck_assert_msg(count_nonfinite(&c) == 0, AC_SEED_FMT "%s: non-finite despite no_nonfinite", AC_SEED_ARG, f[i].name);
      ac_case_free(&c);
    }
}
END_TEST

/* One case in eight comes with the opposite scale and negated keys: the same scores. */
START_TEST(scale_flipped_cases)
{
  const ac_family *f = ac_family_find("late_max");
  ck_assert_ptr_nonnull(f);
  ac_gen_limits l;
  limits_all(&l);
  int flipped = 0;
  for (int64_t i = 0; i < 96; i++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(f, ac_test_seed(), i, &l, &c, &e) == 0, "%s", e.msg);
    int fl = c.params_json && strstr(c.params_json, "\"scale_flipped\"") != NULL;
    if (fl) {
      flipped++;
      ck_assert_msg(!c.p.scale_is_default && c.p.scale < 0, AC_SEED_FMT "case %lld: scale %a", AC_SEED_ARG,
                    (long long)i, c.p.scale);
      /* late_max puts the maximum on the last key: the largest q.(-k) times -|scale| */
      double s0 = 0, s1 = 0;
      for (int64_t x = 0; x < c.p.dk; x++) {
        s0 += ac_load(c.p.dtype, c.q, ac_qidx(&c.p, 0, 0, 0, x)) * ac_load(c.p.dtype, c.k, ac_kidx(&c.p, 0, 0, 0, x));
        s1 += ac_load(c.p.dtype, c.q, ac_qidx(&c.p, 0, 0, 0, x)) *
              ac_load(c.p.dtype, c.k, ac_kidx(&c.p, 0, 0, c.p.tk - 1, x));
      }
      ck_assert_msg(c.p.scale * s1 >= c.p.scale * s0, AC_SEED_FMT "case %lld: %a vs %a", AC_SEED_ARG, (long long)i,
                    c.p.scale * s1, c.p.scale * s0);
    }
    ac_case_free(&c);
  }
  ck_assert_msg(flipped >= 2 && flipped <= 30, AC_SEED_FMT "%d of 96 flipped", AC_SEED_ARG, flipped);
}
END_TEST

START_TEST(family_list)
{
  int nf;
  ac_families(&nf);
  ck_assert_int_ge(nf, 25);
  int idx[64], n;
  ac_err e;
  ck_assert(ac_family_parse_list("normal,late_max", idx, &n, 64, &e) == 0);
  ck_assert_int_eq(n, 2);
  ck_assert(ac_family_parse_list("normal,nosuch", idx, &n, 64, &e) == -1);
  ck_assert(strstr(e.msg, "nosuch") != NULL);
}
END_TEST


/* A fake judge: the finding holds whenever tk >= 2 and dv >= 2 and the case still holds the
 * keys and V columns that carry it: the first and the last key (marked in K's column 0) and
 * V's first and last column (marked in V's row 0), as a defect between the first and the last
 * tile would. Windows alone cannot drop the keys between them (the minimizer used to stop at
 * tk 11, dv 6); dropping ranges reaches tk 2, dv 2. */
static int has_value(ac_dtype t, const void *base, int64_t n, double v)
{
  for (int64_t i = 0; i < n; i++)
    if (ac_load(t, base, (size_t)i) == v) return 1;
  return 0;
}

static int holds_marked(const ac_case *c, void *ctx)
{
  int *calls = ctx;
  (*calls)++;
  ac_counts n = ac_case_counts(c);
  ac_dtype t = c->p.dtype;
  return c->p.tk >= 2 && c->p.dv >= 2 && has_value(t, c->k, n.k, 64.0) && has_value(t, c->k, n.k, 96.0) &&
         has_value(t, c->v, n.v, 48.0) && has_value(t, c->v, n.v, 80.0);
}

START_TEST(minimizer_drops_to_tk2_dv2)
{
  ac_case c, m;
  ac_err e;
  ac_case_init(&c);
  c.p = (ac_problem){.dtype = AC_F32, .mask = AC_MASK_CAUSAL, .batch = 2, .heads = 4, .kv_heads = 2, .tq = 13,
                     .tk = 11, .dk = 7, .dv = 6, .scale_is_default = 1};
  c.p.scale = ac_problem_scale(&c.p);
  ck_assert_msg(ac_case_alloc(&c, &e) == 0, "%s", e.msg);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 1);
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(&c, &r, &d, &d, &d);
  for (int64_t b = 0; b < c.p.batch; b++)
    for (int64_t kh = 0; kh < c.p.kv_heads; kh++) {
      ac_set(AC_F32, c.k, ac_kidx(&c.p, b, kh, 0, 0), 64.0);
      ac_set(AC_F32, c.k, ac_kidx(&c.p, b, kh, c.p.tk - 1, 0), 96.0);
      ac_set(AC_F32, c.v, ac_vidx(&c.p, b, kh, 0, 0), 48.0);
      ac_set(AC_F32, c.v, ac_vidx(&c.p, b, kh, 0, c.p.dv - 1), 80.0);
    }
  int calls = 0;
  ac_min_opts mo = {.max_evals = 200, .max_seconds = 30};
  ck_assert(ac_minimize(&c, 1, 3, 12, 5, holds_marked, &calls, &mo, &m, &e) == 0);
  ck_assert_msg(m.p.tk == 2 && m.p.dv == 2 && m.p.tq == 1 && m.p.dk == 1 && m.p.batch == 1 && m.p.heads == 1,
                AC_SEED_FMT "minimized to B%lld H%lld tq%lld tk%lld dk%lld dv%lld in %d evals", AC_SEED_ARG,
                (long long)m.p.batch, (long long)m.p.heads, (long long)m.p.tq, (long long)m.p.tk, (long long)m.p.dk,
                (long long)m.p.dv, mo.evals);
  ck_assert(holds_marked(&m, &calls));
  ck_assert_int_eq(calls, mo.evals + 1);
  ac_case_free(&c);
  ac_case_free(&m);
}
END_TEST

/* The failure mode a minimized case keeps and defects are told apart by (fuzz/engine/fmode.c):
 * the quantities failing and why, and how far; kinds without elements have none. */
START_TEST(failure_mode_tells_quantities_and_reasons_apart)
{
  ac_eval a, b;
  memset(&a, 0, sizeof a);
  a.kinds = 1u << AC_V_FAIL;
  a.err_w = 1000;
  a.rep.n_fail = 3;
  a.rep.worst = (ac_worst_elem){.valid = 1, .why = AC_WHY_VALUE, .err_w = 1000};
  b = a;
  ac_fmode ma, mb;
  ac_fmode_of(&a, AC_V_FAIL, &ma);
  ck_assert(ma.why[AC_QTY_O] == 1 + AC_WHY_VALUE && ma.why[AC_QTY_LSE] == 0 && ma.size == 1000);
  ck_assert(ac_fmode_holds(&b, &ma) && ac_fmode_covers(&b, &ma));
  b.rep.worst.why = AC_WHY_NONFINITE;   /* another reason: another mode */
  ck_assert(!ac_fmode_holds(&b, &ma) && !ac_fmode_covers(&b, &ma));
  b = a;
  b.rep.lse_fail = 1;   /* the LSE fails too: another mode, which still covers the first */
  b.rep.lse_worst = (ac_worst_elem){.valid = 1, .is_lse = 1, .why = AC_WHY_VALUE, .err_w = 5};
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(!ac_fmode_eq(&ma, &mb) && !ac_fmode_holds(&b, &ma) && ac_fmode_covers(&b, &ma));
  ck_assert(ac_fmode_overlaps(&ma, &mb) && ac_fmode_overlaps(&mb, &ma));
  b = a;
  b.err_w = 1000 / AC_FMODE_SIZE_RATIO / 2;   /* the same mode, far smaller: another defect's */
  ck_assert(!ac_fmode_holds(&b, &ma) && !ac_fmode_covers(&b, &ma));
  b.err_w = 1000 / AC_FMODE_SIZE_RATIO;
  ck_assert(ac_fmode_holds(&b, &ma));
  b = a;   /* only the LSE fails: no quantity in common, no overlap */
  b.rep.n_fail = 0;
  b.rep.lse_fail = 2;
  b.rep.lse_worst = (ac_worst_elem){.valid = 1, .is_lse = 1, .why = AC_WHY_VALUE, .err_w = 7};
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(!ac_fmode_overlaps(&ma, &mb));
  /* a wrong value just above its bound beside one far above it in the other quantity: the far one
   * alone (they may lie in different heads), whichever quantity it is */
  b = a;
  b.rep.worst.err_w = 1.07;
  b.rep.lse_fail = 1;
  b.rep.lse_worst = (ac_worst_elem){.valid = 1, .is_lse = 1, .why = AC_WHY_VALUE, .err_w = 3000};
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] == 0 && mb.why[AC_QTY_LSE] == 1 + AC_WHY_VALUE);
  b.rep.worst.err_w = 3000;
  b.rep.lse_worst.err_w = 1.5;
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] == 1 + AC_WHY_VALUE && mb.why[AC_QTY_LSE] == 0);
  b.rep.lse_worst.err_w = 2.5;   /* past the margin: both */
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] && mb.why[AC_QTY_LSE]);
  b.rep.lse_worst.err_w = 1.5;   /* not far enough from the other: both */
  b.rep.worst.err_w = 20;
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] && mb.why[AC_QTY_LSE]);
  b.rep.worst = (ac_worst_elem){.valid = 1, .why = AC_WHY_NONFINITE, .err_w = INFINITY};   /* beside a non-finite o */
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] == 1 + AC_WHY_NONFINITE && mb.why[AC_QTY_LSE] == 0);
  b.rep.lse_worst = (ac_worst_elem){.valid = 1, .is_lse = 1, .why = AC_WHY_NONFINITE, .err_w = INFINITY};
  b.rep.worst = (ac_worst_elem){.valid = 1, .why = AC_WHY_VALUE, .err_w = 1.5};   /* a non-finite one stays */
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] == 0 && mb.why[AC_QTY_LSE] == 1 + AC_WHY_NONFINITE);
  b.rep.worst.why = AC_WHY_NONFINITE;
  b.rep.worst.err_w = INFINITY;
  ac_fmode_of(&b, AC_V_FAIL, &mb);
  ck_assert(mb.why[AC_QTY_O] && mb.why[AC_QTY_LSE]);
  ac_fmode_of(&a, AC_V_CRASH, &mb);   /* a kind the evaluation does not have */
  ck_assert(mb.kind == AC_V_CRASH && mb.why[AC_QTY_O] == 0 && !ac_fmode_holds(&a, &mb));
  a.kinds |= 1u << AC_V_CRASH;
  ck_assert(ac_fmode_holds(&a, &mb));
}
END_TEST

/* The search policy under synthetic feedback: a pool full of elites of a family stuck at an
 * err/E plateau (neg_logits, err/E 5 forever) next to a family that keeps improving
 * (late_max): the plateaued family is held to cases/families + AC_SHARE_EARN * improvements +
 * AC_SHARE_SLACK (below 25% of the cases), the improving one earns more than its share. */
START_TEST(share_rule_caps_plateau)
{
  int nf;
  const ac_family *fams = ac_families(&nf);
  int fam[AC_SEARCH_MAX_FAM];
  for (int i = 0; i < nf; i++) fam[i] = i;
  ac_search s;
  ac_search_init(&s, fam, nf, 100);
  ac_pool pool;
  ac_pool_init(&pool, 16);
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  l.max_t = 32;
  for (int i = 0; i < 16; i++) {
    ac_case c;
    ac_err e;
    ck_assert(ac_generate(ac_family_find("normal"), ac_test_seed(), i, &l, &c, &e) == 0);
    ck_assert(ac_pool_offer(&pool, &c, i < 12 ? "neg_logits" : "late_max", i < 12 ? 5.0 + i : 1.0));
    ac_case_free(&c);
  }
  int neg = ac_search_slot(&s, "neg_logits"), late = ac_search_slot(&s, "late_max");
  ck_assert(neg >= 0 && late >= 0);
  double late_score = 1.0;
  int64_t worst_excess = INT64_MIN;
  for (int64_t k = 0; k < 4000; k++) {
    ac_rng r;
    ac_rng_init(&r, ac_test_seed(), (uint64_t)k);
    int slot = -1;
    ac_elite *parent = ac_search_next(&s, &pool, k, &r, &slot);
    int f = parent ? ac_search_slot(&s, parent->family) : slot;
    ck_assert(f >= 0 && f < nf);
    double score = f == neg ? 5.0 : f == late ? (late_score *= 1.02) : 0.1 * ac_rng_uniform(&r);
    ac_search_note(&s, f, score);
    int64_t excess = s.cases[neg] - ac_search_cap(&s, neg);
    if (excess > worst_excess) worst_excess = excess;
  }
  ck_assert_msg(worst_excess <= 0, AC_SEED_FMT "neg_logits exceeded its cap by %lld", AC_SEED_ARG,
                (long long)worst_excess);
  ck_assert_msg(s.improvements[neg] <= 1, AC_SEED_FMT "a plateau counted %lld improvements", AC_SEED_ARG,
                (long long)s.improvements[neg]);
  double share_neg = (double)s.cases[neg] / (double)s.total, share_late = (double)s.cases[late] / (double)s.total;
  ck_assert_msg(share_neg < 0.25 && share_neg <= 1.0 / nf + (AC_SHARE_EARN + AC_SHARE_SLACK + 1.0) / (double)s.total,
                AC_SEED_FMT "neg_logits share %.3f", AC_SEED_ARG, share_neg);
  ck_assert_msg(share_late > 2.0 / nf, AC_SEED_FMT "improving late_max got only %.3f", AC_SEED_ARG, share_late);
  for (int i = 0; i < nf; i++)
    ck_assert_msg(s.cases[i] <= ac_search_cap(&s, i) + 1, AC_SEED_FMT "%s: %lld cases, cap %lld", AC_SEED_ARG,
                  fams[i].name, (long long)s.cases[i], (long long)ac_search_cap(&s, i));
  /* the stats give the share, the improvements and the cap of every family */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ac_search_stats(f, fam, nf, s.cases, s.improvements, 1);
  fclose(f);
  ck_assert_msg(strstr(buf, "share.neg_logits=0.0") && strstr(buf, "improvements.late_max=") &&
                    strstr(buf, "share_cap.neg_logits=") && strstr(buf, "share_rule="),
                "%s", buf);
  free(buf);
  ac_pool_free(&pool);
}
END_TEST

/* ---- score patterns at long T and finite sentinels ------------------------------------------ */

static double score_of(const ac_case *c, int64_t i, int64_t j)
{
  double acc = 0;
  for (int64_t x = 0; x < c->p.dk; x++)
    acc += ac_load(c->p.dtype, c->q, ac_qidx(&c->p, 0, 0, i, x)) * ac_load(c->p.dtype, c->k, ac_kidx(&c->p, 0, 0, j, x));
  return ac_problem_scale(&c->p) * acc;
}

static const char *pstr(json_object *js, const char *k)
{
  json_object *v;
  return json_object_object_get_ex(js, k, &v) ? json_object_get_string(v) : NULL;
}

static double pnum(json_object *js, const char *k)
{
  const char *t = pstr(js, k);
  ck_assert_msg(t != NULL, "params lack %s", k);
  return strtod(t, NULL);
}

static int is_edge(int64_t j, int64_t block, int64_t tk) { return j == tk - 1 || j % block == 0 || j % block == block - 1; }

/* The checks every sentinel row must pass: masked keys of the first row that sees keys score
 * at least 1e4 above its visible maximum; banded rows peak at sentinel + d with e^d at an edge
 * of the working format's subnormal / zero / reciprocal-overflow band. Returns the gap or d. */
static double check_sentinel(const ac_case *c, json_object *js, int masked, int64_t key)
{
  const ac_problem *p = &c->p;
  if (masked) {
    int64_t lim = (int64_t)pnum(js, "masked_from");
    int64_t i0 = 0;
    while (ac_row_visible(p, i0) < 1) i0++;
    ck_assert_int_eq(lim, ac_row_visible(p, i0));
    ck_assert(lim >= 1 && lim < p->tk);
    double vmax = -INFINITY, mmax = -INFINITY;
    for (int64_t j = 0; j < p->tk; j++) {
      double sj = score_of(c, i0, j);
      if (j < lim) vmax = sj > vmax ? sj : vmax;
      else mmax = sj > mmax ? sj : mmax;
    }
    ck_assert_msg(mmax - vmax >= 1e4, AC_SEED_FMT "masked keys only %g above the visible ones", AC_SEED_ARG, mmax - vmax);
    return mmax - vmax;
  }
  double sent = pnum(js, "sentinel"), d = pnum(js, "band_offset");
  ac_dtype wt;
  ck_assert(ac_dtype_parse(pstr(js, "working"), &wt) == 0);
  const ac_dtype_info *w = ac_dtype_get(wt);
  double edges[3] = {-log(w->max_finite), w->ieee_emin * M_LN2, (w->ieee_emin - w->prec + 1) * M_LN2};
  int near = 0;
  for (int k = 0; k < 3; k++) near |= fabs(d - edges[k]) <= 1.5;
  ck_assert_msg(near, AC_SEED_FMT "band offset %g off the %s band", AC_SEED_ARG, d, pstr(js, "working"));
  double smax = -INFINITY;
  int64_t last = p->tq - 1;
  for (int64_t j = 0; j < ac_row_visible(p, last); j++) smax = fmax(smax, score_of(c, last, j));
  ck_assert_msg(smax <= sent + d + 0.25 && smax >= sent + d - 2.25 && fabs(score_of(c, last, key) - (sent + d)) <= 0.25,
                AC_SEED_FMT "%s dk %lld: visible maximum %a, key %lld %a, wanted %a", AC_SEED_ARG,
                ac_dtype_name(p->dtype), (long long)p->dk, smax, (long long)key, score_of(c, last, key), sent + d);
  return d;
}

/* long_t draws every pattern at long T, its structure on the edge of a power-of-two block of 64
 * to 4096 keys (or on the last key, the remainder), half the lengths a block multiple +- 1. */
START_TEST(long_t_every_pattern_at_block_edges)
{
  const ac_family *f = ac_family_find("long_t");
  ac_gen_limits l;
  ac_gen_limits_init(&l);   /* f32, T up to 16384 */
  int seen[AC_NPAT] = {0}, multiples = 0, n = 0, all = 0;
  int64_t longest = 0;
  for (int64_t idx = 0; idx < 400 && !all; idx++, n++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(f, ac_test_seed(), idx, &l, &c, &e) == 0, "%s", e.msg);
    const ac_problem *p = &c.p;
    json_object *js = json_tokener_parse(c.params_json);
    const char *pat = pstr(js, "pattern");
    ck_assert_ptr_nonnull(pat);
    int k = 0;
    while (k < AC_NPAT && strcmp(ac_pattern_name(k), pat)) k++;
    ck_assert_msg(k < AC_NPAT, "unknown pattern %s", pat);
    int64_t block = (int64_t)pnum(js, "block"), key = (int64_t)pnum(js, "key");
    ck_assert_msg(p->tk >= 1000, AC_SEED_FMT "case %lld: tk %lld is not long", AC_SEED_ARG, (long long)idx, (long long)p->tk);
    ck_assert_msg(block >= 64 && block <= 4096 && (block & (block - 1)) == 0 && block <= p->tk,
                  AC_SEED_FMT "block %lld", AC_SEED_ARG, (long long)block);
    ck_assert_msg(is_edge(key, block, p->tk), AC_SEED_FMT "%s key %lld not on a block edge (block %lld, tk %lld)",
                  AC_SEED_ARG, pat, (long long)key, (long long)block, (long long)p->tk);
    int64_t rem = p->tk % block;
    multiples += rem <= 1 || rem == block - 1;
    longest = p->tk > longest ? p->tk : longest;
    int64_t last = p->tq - 1, lim = ac_row_visible(p, last);
    ck_assert(lim == p->tk);   /* decode rows (bottom-right) and prefill: the last row sees every key */
    double smax = -INFINITY;
    int64_t jmax = 0;
    for (int64_t j = 0; j < p->tk && k != AC_PAT_NORMAL; j++) {
      double sj = score_of(&c, last, j);
      if (sj > smax) { smax = sj; jmax = j; }
    }
    if (k == AC_PAT_DOMINANT || k == AC_PAT_LARGE_V)
      ck_assert_msg(jmax == key, AC_SEED_FMT "%s: maximum at %lld, not %lld", AC_SEED_ARG, pat, (long long)jmax, (long long)key);
    if (k == AC_PAT_LATE || k == AC_PAT_CREEP)
      ck_assert_msg(is_edge(jmax, block, p->tk), AC_SEED_FMT "%s: maximum at %lld inside a block of %lld", AC_SEED_ARG,
                    pat, (long long)jmax, (long long)block);
    if (k == AC_PAT_TIES)
      for (int64_t j = 0; j < p->tk; j += block)
        ck_assert_msg(score_of(&c, last, j) == smax, AC_SEED_FMT "ties: block start %lld is not a maximum", AC_SEED_ARG,
                      (long long)j);
    if (k == AC_PAT_LARGE_V)
      ck_assert(fabs(ac_load(p->dtype, c.v, 0)) >= 0.5 * ac_dtype_get(p->dtype)->max_finite / (4.0 * (double)p->tk));
    if (k == AC_PAT_SENTINEL_MASKED || k == AC_PAT_SENTINEL_BAND)
      check_sentinel(&c, js, k == AC_PAT_SENTINEL_MASKED, key);
    seen[k]++;
    all = 1;
    for (int q = 0; q < AC_NPAT; q++) all &= seen[q] >= 2;
    json_object_put(js);
    ac_case_free(&c);
  }
  for (int q = 0; q < AC_NPAT; q++)
    ck_assert_msg(seen[q] >= 2, AC_SEED_FMT "pattern %s drawn %d times in %d long_t cases", AC_SEED_ARG,
                  ac_pattern_name(q), seen[q], n);
  ck_assert_msg(multiples >= n / 4, AC_SEED_FMT "only %d of %d lengths at a block multiple +- 1", AC_SEED_ARG, multiples, n);
  ck_assert_msg(longest > 4096, AC_SEED_FMT "longest tk %lld", AC_SEED_ARG, (long long)longest);
}
END_TEST

/* The sentinel family draws both kinds of rows in f16, bf16 and f32: masked keys past 1e4 and
 * past 65504 above the visible ones, and visible maxima in the band of every working format. */
START_TEST(sentinel_rows_generated)
{
  const ac_family *f = ac_family_find("sentinel");
  ck_assert_ptr_nonnull(f);
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  l.dtypes = (1u << AC_F32) | (1u << AC_F16) | (1u << AC_BF16);
  int masked = 0, band = 0, past_65504 = 0, band_f16 = 0;
  for (int64_t idx = 0; idx < 96; idx++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(f, ac_test_seed(), idx, &l, &c, &e) == 0, "%s", e.msg);
    json_object *js = json_tokener_parse(c.params_json);
    int m = !strcmp(pstr(js, "pattern"), "sentinel_masked");
    ck_assert(m || !strcmp(pstr(js, "pattern"), "sentinel_band"));
    double g = check_sentinel(&c, js, m, (int64_t)pnum(js, "key"));
    if (m) {
      masked++;
      past_65504 += g > 65504 + 8;
    } else {
      band++;
      band_f16 += !strcmp(pstr(js, "working"), "f16");
    }
    json_object_put(js);
    ac_case_free(&c);
  }
  ck_assert_msg(masked >= 16 && band >= 16 && past_65504 >= 4 && band_f16 >= 1,
                AC_SEED_FMT "masked %d (past 65504: %d), band %d (f16 working: %d)", AC_SEED_ARG, masked, past_65504,
                band, band_f16);
}
END_TEST

int main(void)
{
  int nf;
  ac_families(&nf);
  Suite *s = suite_create("fuzz_gen");
  TCase *tc = tcase_create("families");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, every_family_valid, 0, nf);
  tcase_add_loop_test(tc, same_seed_same_bytes, 0, nf);
  tcase_add_test(tc, limits_respected);
  tcase_add_test(tc, scale_flipped_cases);
  tcase_add_test(tc, family_list);
  tcase_add_test(tc, minimizer_drops_to_tk2_dv2);
  tcase_add_test(tc, failure_mode_tells_quantities_and_reasons_apart);
  tcase_add_test(tc, share_rule_caps_plateau);
  tcase_add_test(tc, long_t_every_pattern_at_block_edges);
  tcase_add_test(tc, sentinel_rows_generated);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
