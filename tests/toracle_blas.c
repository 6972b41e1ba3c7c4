/* toracle_blas.c: the oracle's BLAS level (oracle/blasfwd.h, docs/numerics.md §12.2-§12.6) against
 * its per-row passes (ac_oracle_opts.blas = -1, tested against the brute force by toracle_brute and
 * toracle_fast) on random and adversarial cases in every narrow dtype, the level forced on
 * (blas = 1) so that small cases take it:
 * - every correctly rounded output (the case dtype and f16, bf16, e4m3, e5m2) and every binary32 LSE
 *   is the same bit for bit, what is accepted is the same, the enclosures of o and LSE overlap;
 * - every budget term agrees within the tolerance §12.5 states (and is never below the per-row
 *   value by more), and so do the row terms, and the class budget W of the dtype's class;
 * - the results are the same bit for bit on 1 and 2 threads;
 * - cases built to leave elements to the per-row levels (exact ties, breakpoints, keys one bit
 *   apart, constant or zero columns, subnormal products) reach them (n_fallback > 0), and the
 *   rows the level cannot take (NaN and inf in q, K or V, |V| >= 2^64) go whole to the per-row
 *   path with the same answers;
 * - quantized Q, K and V of every granularity, scale dtype and packing: the same answers, at least
 *   9 in 10 elements decided by the level (n_blas), values that are not binary32 numbers included;
 *   such values built against careless bounds (ties, midpoints, a large K beside tiny ones, V's
 *   binary32 images across o): the same answers, and the sums of |V - o| and M never below the
 *   per-row passes' by more than the stated tolerance. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "budget.h"
#include "dropout.h"
#include "precision.h"
#include "quant.h"
#include "variants.h"

#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

static const uint32_t EXTRA = (1u << AC_F16) | (1u << AC_BF16) | (1u << AC_E4M3) | (1u << AC_E5M2);

static void run(const ac_case *c, int blas, int threads, ac_oracle_result *r)
{
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = EXTRA;
  o.threads = threads;
  o.blas = blas;
  o.nmu = ac_precision_mu_list(o.mu, AC_ORACLE_NMU);
  ck_assert_msg(ac_oracle_run(c, &o, r, &e) == 0, "ac_oracle_run: %s", e.msg);
}

static void save(const ac_case *c, const char *what, int k)
{
  ac_err e;
  char path[256];
  snprintf(path, sizeof path, "%s/toracle_blas-%s-%d.npz", ac_test_tmpdir(), what, k);
  if (ac_case_write(c, path, &e) == 0) fprintf(stderr, "case written to %s\n", path);
}

/* A term of the level (a) against the per-row pass's (b): within 2^-12 of b plus comp (what the
 * approximation of o moves it by, §12.5) plus an absolute floor, and never below b by more. */
static int term_ok(double a, double b, double comp, double floor)
{
  if (a == b) return 1;
  double tol = 0x1p-12 * fabs(b) + comp + floor;
  return isfinite(a) && fabs(a - b) <= tol;
}

typedef struct { int64_t elems, fallback, left_rows; } tally;

/* 1 when a value of V is not a binary32 number (a quantized V with binary32 scales): the level's budget
 * sums read V's binary32 image rounded away from zero (§12.5), within 2^-23 |V| of V. */
static int wide_v(const ac_case *c)
{
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.v; x++) {
    double v = ac_load(ac_tensor_dtype(&c->p, 'v'), c->v, (size_t)x);
    if (isfinite(v) && (double)(float)v != v) return 1;
  }
  return 0;
}

static void compare(const ac_case *c, const ac_oracle_result *A, const ac_oracle_result *B, const char *fam, int k)
{
  const ac_problem *p = &c->p;
  int wv = wide_v(c);
  const char *dn = ac_dtype_name(p->dtype);
  const ac_precision *cls = ac_precision_default(p->dtype);
  ac_dtype od = ac_tensor_dtype(p, 'o');
  REQUIRE(A->n_unresolved == 0 && B->n_unresolved == 0, AC_SEED_FMT "%s %s case %d: unresolved %lld / %lld", AC_SEED_ARG,
          fam, dn, k, (long long)A->n_unresolved, (long long)B->n_unresolved);
  for (int64_t x = 0; x < A->nrows; x++) {
    const ac_oracle_row *a = &A->rows[x], *b = &B->rows[x];
    REQUIRE(a->selected == b->selected && a->visible == b->visible && a->lse_accept == b->lse_accept &&
              a->has_nonfinite == b->has_nonfinite,
            AC_SEED_FMT "%s %s case %d row %lld: selected, visible, accept or has_nonfinite differ", AC_SEED_ARG, fam, dn, k,
            (long long)x);
    if (!(isnan(a->lse_f32) && isnan(b->lse_f32)))
      REQUIRE(ac_encode_f64(AC_F32, a->lse_f32) == ac_encode_f64(AC_F32, b->lse_f32),
              AC_SEED_FMT "%s %s case %d row %lld: LSE %a (BLAS) vs %a (per row)", AC_SEED_ARG, fam, dn, k, (long long)x,
              (double)a->lse_f32, (double)b->lse_f32);
    if (isfinite(a->lse) && isfinite(b->lse))
      REQUIRE(fabs(a->lse - b->lse) <= a->lse_err + b->lse_err, AC_SEED_FMT "%s %s case %d row %lld: LSE enclosures apart",
              AC_SEED_ARG, fam, dn, k, (long long)x);
    int val = a->visible > 0 && a->lse_accept == AC_ACCEPT_VALUE && !a->has_nonfinite;
    if (val) {
      double rt[][2] = {{a->lse_cZ, b->lse_cZ}, {a->lse_cZb, b->lse_cZb}, {a->lse_s, b->lse_s}, {a->max_cZ, b->max_cZ},
                        {a->max_cZb, b->max_cZb}, {a->max_abs_z, b->max_abs_z}, {a->max_abs_s, b->max_abs_s},
                        {a->qk_l1, b->qk_l1}};
      /* with c = 0 the per-row passes keep the keys in storage order and take max |z| over the first
       * and the last key only; the level takes every key's */
      int c0 = !p->scale_is_default && p->scale == 0;
      for (size_t q = 0; q < sizeof rt / sizeof rt[0]; q++)
        REQUIRE(term_ok(rt[q][0], rt[q][1], 0, 0x1p-1000) || (c0 && q == 5 && rt[q][0] >= rt[q][1]),
                AC_SEED_FMT "%s %s case %d row %lld: row term %zu %a vs %a", AC_SEED_ARG, fam, dn, k, (long long)x, q,
                rt[q][0], rt[q][1]);
      REQUIRE(fabs(a->m - b->m) <= 0x1p-40 * (fabs(b->m) + b->max_cZ) + 0x1p-1000,
              AC_SEED_FMT "%s %s case %d row %lld: m %a vs %a", AC_SEED_ARG, fam, dn, k, (long long)x, a->m, b->m);
      for (int q = 0; q < A->nmu; q++)
        REQUIRE(term_ok(a->Fmass[q], b->Fmass[q], 0, 0x1p-1000), AC_SEED_FMT "%s %s case %d row %lld: Fmass[%d] %a vs %a",
                AC_SEED_ARG, fam, dn, k, (long long)x, q, a->Fmass[q], b->Fmass[q]);
    }
    if (!a->selected) continue;
    int64_t sa = ac_oracle_slot(A, x), sb = ac_oracle_slot(B, x);
    for (int64_t t = 0; t < p->dv; t++) {
      const ac_oracle_elem *ea = &A->elems[sa * p->dv + t], *eb = &B->elems[sb * p->dv + t];
      for (int f = 0; f < AC_NDTYPES; f++)
        if (A->o_round[f])
          REQUIRE(A->o_round[f][sa * p->dv + t] == B->o_round[f][sb * p->dv + t],
                  AC_SEED_FMT "%s %s case %d row %lld col %lld: %s bits %llx (BLAS) vs %llx (per row), o %a +- %a",
                  AC_SEED_ARG, fam, dn, k, (long long)x, (long long)t, ac_dtype_name((ac_dtype)f),
                  (unsigned long long)A->o_round[f][sa * p->dv + t], (unsigned long long)B->o_round[f][sb * p->dv + t],
                  ea->o, ea->o_err);
      REQUIRE(ea->accept == eb->accept, AC_SEED_FMT "%s %s case %d: accept differs", AC_SEED_ARG, fam, dn, k);
      if (ea->accept != AC_ACCEPT_VALUE || !val) continue;
      REQUIRE(fabs(ea->o - eb->o) <= ea->o_err + eb->o_err, AC_SEED_FMT "%s %s case %d row %lld col %lld: enclosures apart",
              AC_SEED_ARG, fam, dn, k, (long long)x, (long long)t);
      /* what o's approximation moves a term Σ A x |V - o| by (and V's binary32 image where V is not
       * binary32), and the binary32 floor (§12.5) */
      double dO = ea->o_err + eb->o_err + 0x1p-23 * fabs(eb->o) + (wv ? 0x1p-21 * (fabs(eb->o) + eb->M) : 0), fl = (double)a->visible * 0x1p-140 * (eb->M + fabs(eb->o) + 1);
      double tm[][3] = {{ea->R, eb->R, 0}, {ea->D, eb->D, dO}, {ea->S, eb->S, dO * (fabs(b->m) + b->max_abs_s + 1) * 2},
                        {ea->Sp, eb->Sp, dO * (b->max_abs_s + 1)}, {ea->G, eb->G, dO * b->max_cZ},
                        {ea->Gb, eb->Gb, dO * b->max_cZb}, {ea->M, eb->M, dO}};
      for (size_t q = 0; q < sizeof tm / sizeof tm[0]; q++)
        REQUIRE(term_ok(tm[q][0], tm[q][1], tm[q][2], fl), AC_SEED_FMT "%s %s case %d row %lld col %lld: term %zu %a vs %a",
                AC_SEED_ARG, fam, dn, k, (long long)x, (long long)t, q, tm[q][0], tm[q][1]);
      /* where V is not binary32, the sums of |V - o| (D, S, S', G, Gb) and M are never below the truth
       * (the per-row passes' binary64 values) by more than the binary32 sums' relative 2^-14 (§12.5)
       * and what the two o's distance moves them by */
      const double wsum[] = {0, 1, (fabs(b->m) + b->max_abs_s + 1) * 2, b->max_abs_s + 1, b->max_cZ, b->max_cZb, 1};
      for (size_t q = 1; wv && q < 7; q++)
        REQUIRE(tm[q][0] >= tm[q][1] * (1 - 0x1p-12) - (ea->o_err + eb->o_err) * wsum[q] - fl, AC_SEED_FMT "%s %s case %d row %lld col %lld: term %zu %a below %a",
                AC_SEED_ARG, fam, dn, k, (long long)x, (long long)t, q, tm[q][0], tm[q][1]);
      for (int q = 0; q < A->nmu; q++)
        REQUIRE(term_ok(ea->F[q], eb->F[q], dO + 0x1p-12 * eb->D, fl), AC_SEED_FMT "%s %s case %d row %lld col %lld: F[%d] %a vs %a",
                AC_SEED_ARG, fam, dn, k, (long long)x, (long long)t, q, ea->F[q], eb->F[q]);
      ac_bound wa, wb;
      ac_budget_elem(cls, p, od, a, ea, A->mu, A->nmu, &wa);
      ac_budget_elem(cls, p, od, b, eb, B->mu, B->nmu, &wb);
      /* the terms of W (its fixed part, half an ulp at |o| + W_terms, may jump at a binade) */
      REQUIRE(fabs(wa.W_terms - wb.W_terms) <= 0x1p-6 * wb.W_terms + 4 * (ea->o_err + eb->o_err) + fl,
              AC_SEED_FMT "%s %s case %d row %lld col %lld: W_terms %a vs %a", AC_SEED_ARG, fam, dn, k, (long long)x,
              (long long)t, wa.W_terms, wb.W_terms);
    }
  }
}

/* The same results, bit for bit, on 1 and 2 threads. */
static void same_bits(const ac_oracle_result *A, const ac_oracle_result *B, int64_t dv)
{
  int64_t ns = ac_oracle_nstored(A);
  for (int64_t x = 0; x < ns * dv; x++) {
    const ac_oracle_elem *a = &A->elems[x], *b = &B->elems[x];
    if (memcmp(a, b, sizeof *a))
      ck_abort_msg("element %lld: o %a/%a err %a/%a R %a/%a D %a/%a M %a/%a how %d/%d acc %d/%d", (long long)x, a->o, b->o,
                   a->o_err, b->o_err, a->R, b->R, a->D, b->D, a->M, b->M, a->how, b->how, a->accept, b->accept);
  }
  for (int64_t x = 0; x < A->nrows; x++) ck_assert(memcmp(&A->rows[x], &B->rows[x], sizeof A->rows[x]) == 0);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (A->o_round[f]) ck_assert(memcmp(A->o_round[f], B->o_round[f], (size_t)(ns * dv) * 8) == 0);
}

enum { F_RANDOM, F_TIES, F_BREAKPOINT, F_NEAR, F_CONSTANT, F_SUBNORMAL, F_MAGNITUDE, F_SPECIAL, NFAM };
static const char *fam_name[NFAM] = {"random", "ties", "breakpoint", "near", "constant", "subnormal", "magnitude",
                                     "special"};

/* A value of dtype t near x, moved by s steps of its bits. */
static double nudge(ac_dtype t, double x, int s)
{
  uint64_t b = ac_encode_f64_ov(t, x, AC_E4M3_SATURATE);
  uint64_t b2 = b + (uint64_t)(int64_t)s;
  if (ac_bits_isnan(t, b2) || ac_bits_isinf(t, b2)) return ac_decode(t, b);
  return ac_decode(t, b2);
}

static void build(ac_case *c, ac_dtype dt, int fam, ac_rng *r)
{
  int big = ac_rng_below(r, 8) == 0;
  int64_t kvh = 1 + (int64_t)ac_rng_below(r, 2), H = kvh * (1 + (int64_t)ac_rng_below(r, 2));
  int64_t tq = 1 + (int64_t)ac_rng_below(r, big ? 200 : 40), tk = 1 + (int64_t)ac_rng_below(r, big ? 300 : 60);
  int64_t dk = 1 + (int64_t)ac_rng_below(r, big ? 70 : 20), dv = 1 + (int64_t)ac_rng_below(r, big ? 40 : 20);
  ref_case(c, dt, (ac_mask)ac_rng_below(r, 3), 1 + (int64_t)ac_rng_below(r, 2), H, kvh, tq, tk, dk, dv);
  ac_problem *p = &c->p;
  ac_features_plain(p);
  if (ac_rng_below(r, 5) == 0) {   /* a sliding window */
    p->f.used = AC_FEAT_WINDOW;
    p->f.win_left = (int64_t)ac_rng_below(r, 12) - 1;
    p->f.win_right = (int64_t)ac_rng_below(r, 6) - 1;
    p->f.win_top_left = (int)ac_rng_below(r, 2);
  }
  if (ac_rng_below(r, 4) == 0) {
    static const double sc[] = {0.0, -0.5, 0.3, 2.0, 0.125, -1.0};
    p->scale_is_default = 0;
    p->scale = sc[ac_rng_below(r, sizeof sc / sizeof sc[0])];
  }
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(p, &n, &e) == 0);
  double sq = ac_rng_below(r, 3) ? 1 : 4;
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r) * sq);
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(r) * sq);
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(r));
  int64_t nk = p->batch * p->kv_heads * p->tk;
  switch (fam) {
  case F_TIES:   /* keys copied from a few, so that scores tie exactly; V tied too */
    for (int64_t j = 1; j < nk; j++) {
      int64_t s = (int64_t)ac_rng_below(r, (uint64_t)(j < 3 ? j : 3));
      for (int64_t t = 0; t < p->dk; t++) ref_set(c, 'k', (size_t)(j * p->dk + t), ref_get(c, 'k', (size_t)(s * p->dk + t)));
      if (ac_rng_below(r, 2))
        for (int64_t t = 0; t < p->dv; t++) ref_set(c, 'v', (size_t)(j * p->dv + t), ref_get(c, 'v', (size_t)(s * p->dv + t)));
    }
    break;
  case F_BREAKPOINT: {   /* two equal top keys whose V are neighbours in a format: their mean is a breakpoint */
    static const ac_dtype outs[] = {AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
    ac_dtype of = ac_rng_below(r, 2) ? p->dtype : outs[ac_rng_below(r, 4)];
    for (int64_t j = 0; j < nk; j++) {
      double big_score = j % p->tk < 2 ? 3.0 : -30.0 * ac_rng_uniform(r);
      ref_set(c, 'k', (size_t)(j * p->dk), big_score);
      for (int64_t t = 1; t < p->dk; t++) ref_set(c, 'k', (size_t)(j * p->dk + t), 0);
      for (int64_t t = 0; t < p->dv; t++) {
        double a = ac_decode(of, ac_encode_f64(of, ac_rng_normal(r) * 2)), b = nudge(of, a, 1);
        double v = j % p->tk == 0 ? a : j % p->tk == 1 ? b : ac_rng_normal(r);
        ref_set(c, 'v', (size_t)(j * p->dv + t), nudge(dt, v, 0));
      }
    }
    for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, x % p->dk == 0 ? 4.0 : 0);
    break;
  }
  case F_NEAR:   /* keys one bit apart: scores that differ in the last bits */
    for (int64_t j = 1; j < nk; j++)
      for (int64_t t = 0; t < p->dk; t++)
        ref_set(c, 'k', (size_t)(j * p->dk + t), nudge(dt, ref_get(c, 'k', (size_t)t), (int)ac_rng_below(r, 3) - 1));
    break;
  case F_CONSTANT:   /* constant and zero columns of V: exact cases */
    for (int64_t j = 0; j < nk; j++)
      for (int64_t t = 0; t < p->dv; t++)
        if (t % 3 != 2) ref_set(c, 'v', (size_t)(j * p->dv + t), t % 3 == 0 ? 0.0 : nudge(dt, 0.7, 0));
    break;
  case F_SUBNORMAL: {   /* products far below the normal range, V tiny */
    const ac_dtype_info *in = ac_dtype_get(dt);
    int lo = in->ieee_emin - in->prec + 1;
    for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ldexp(ac_rng_normal(r), lo + 3));
    for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ldexp(ac_rng_normal(r), lo + (int)ac_rng_below(r, 8)));
    break;
  }
  case F_MAGNITUDE:   /* large scores: most weights tiny, many keys below every threshold */
    for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r) * (dt == AC_E4M3 ? 16 : 30));
    break;
  case F_SPECIAL: {   /* non-finite inputs (the rule table), |V| past 2^64: rows the level hands back */
    int what = (int)ac_rng_below(r, 4);
    if (what == 0) ref_set(c, 'q', (size_t)ac_rng_below(r, (uint64_t)n.q), NAN);
    if (what == 1) ref_set(c, 'k', (size_t)ac_rng_below(r, (uint64_t)n.k), -INFINITY);
    if (what == 2) ref_set(c, 'v', (size_t)ac_rng_below(r, (uint64_t)n.v), ac_rng_below(r, 2) ? NAN : INFINITY);
    if (what == 3 && (dt == AC_F32 || dt == AC_BF16)) ref_set(c, 'v', (size_t)ac_rng_below(r, (uint64_t)n.v), 0x1p70);
    break;
  }
  }
}

static const ac_dtype dtypes[] = {AC_F32, AC_BF16, AC_F16, AC_E4M3, AC_E5M2};

START_TEST(blas_matches_the_per_row_passes)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x626c6173);
  int64_t ncases = ac_test_expensive() ? 3000 : 120, fb[NFAM] = {0}, elems = 0;
  for (int64_t k = 0; k < ncases; k++) {
    int fam = (int)(k % NFAM);
    ac_dtype dt = dtypes[(k / NFAM) % 5];
    ac_case c;
    build(&c, dt, fam, &r);
    ac_oracle_result A, B;
    run(&c, 1, 1, &A);
    run(&c, -1, 1, &B);
    if (A.n_unresolved || B.n_unresolved) save(&c, "unresolved", (int)k);
    compare(&c, &A, &B, fam_name[fam], (int)k);
    fb[fam] += A.n_fallback;
    elems += A.rows_done * c.p.dv;
    if (k % 7 == 0) {   /* threads */
      ac_oracle_result A2;
      run(&c, 1, 2, &A2);
      same_bits(&A, &A2, c.p.dv);
      ac_oracle_result_free(&A2);
    }
    ac_oracle_result_free(&A);
    ac_oracle_result_free(&B);
    ac_case_free(&c);
  }
  fprintf(stderr, "toracle_blas: %lld cases, %lld elements; left to the per-row levels:", (long long)ncases,
          (long long)elems);
  for (int f = 0; f < NFAM; f++) fprintf(stderr, " %s %lld", fam_name[f], (long long)fb[f]);
  fprintf(stderr, "\n");
  /* the families built for it reach the per-row levels */
  ck_assert_msg(fb[F_BREAKPOINT] > 0 && fb[F_CONSTANT] > 0 && fb[F_SPECIAL] > 0, "no element reached the per-row levels");
}
END_TEST

/* Where the level does not apply (fp64 inputs, a binary64 format, a binary64 LSE, dropout: its rows
 * take the MPFR levels, docs/dropout.md), blas = 1 changes nothing, bit for bit; on quantized K and V
 * with values at the ends of their codes' range its answers are those of the per-row passes. */
START_TEST(blas_elsewhere_is_the_per_row_path)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x6e6f626c);
  for (int k = 0; k < 18; k++) {
    ac_case c;
    build(&c, k % 4 == 0 ? AC_F64 : AC_F32, F_RANDOM, &r);
    if (k >= 16) {   /* dropout p = 0.17 and 1/2, 300 keys: a size the level takes by default */
      ac_case_free(&c);
      ref_case(&c, k == 16 ? AC_BF16 : AC_F32, AC_MASK_CAUSAL_BR, 1, 2, 1, 40, 300, 32, 16);
      ac_counts n;
      ac_err e;
      ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
      const int64_t cnt[3] = {n.q, n.k, n.v};
      for (int w = 0; w < 3; w++)
        for (int64_t x = 0; x < cnt[w]; x++) ref_set(&c, "qkv"[w], (size_t)x, ac_rng_normal(&r));
      ac_features_plain(&c.p);
      c.p.f.used = AC_FEAT_DROPOUT;
      c.p.f.dropout_p = k == 16 ? 0x1.5c28f6p-3 : 0.5;
      c.p.f.dropout_seed = ac_rng_next(&r);
      ck_assert_msg(ac_features_alloc(&c, &e) == 0, "%s", e.msg);
      ac_dropout_fill(&c.p, c.dropout_mask);
    }
    if (k % 4 == 3) {   /* K and V in q8_0 blocks of 32, one value of each block 10^4 times the rest */
      ac_case_free(&c);
      ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 40, 300, 64, 32);
      ac_counts n;
      ac_err e;
      ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
      for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, ac_rng_normal(&r));
      for (int64_t x = 0; x < n.k; x++) ref_set(&c, 'k', (size_t)x, ac_rng_normal(&r) * (x % 32 ? 1 : 1e4));
      for (int64_t x = 0; x < n.v; x++) ref_set(&c, 'v', (size_t)x, ac_rng_normal(&r) * (x % 32 ? 1 : 1e4));
      ac_qspec q;
      ck_assert_msg(ac_qspec_parse("q8_0", &q, &e) == 0, "%s", e.msg);
      ck_assert_msg(ac_quant_apply(&c, 'k', &q, &e) == 0 && ac_quant_apply(&c, 'v', &q, &e) == 0, "%s", e.msg);
    }
    ac_oracle_opts o;
    ac_err e;
    ac_oracle_result A, B;
    ac_oracle_opts_init(&o);
    o.threads = 1;
    o.formats = k % 4 == 1 && k < 16 ? 1u << AC_F64 : 0;
    o.lse_f64 = k % 4 == 2 && k < 16;
    o.blas = 1;
    ck_assert(ac_oracle_run(&c, &o, &A, &e) == 0);
    o.blas = -1;
    ck_assert(ac_oracle_run(&c, &o, &B, &e) == 0);
    if (k % 4 == 3)   /* the level takes the blocks of binary32 values: its answers, its terms within §12.5 */
      compare(&c, &A, &B, "q8_0-outliers", k);
    else
      same_bits(&A, &B, c.p.dv);
    ac_oracle_result_free(&A);
    ac_oracle_result_free(&B);
    ac_case_free(&c);
  }
}
END_TEST

/* Quantized K and V (and Q) of every granularity, dtype and packing (docs/quantized.md): the level
 * takes the heads and rows, binary32 numbers or not (float zero points, products of f32 scales),
 * and every answer is that of the per-row passes. */
START_TEST(blas_quantized_matches_the_per_row_passes)
{
  static const char *const specs[] = {"q8_0", "q4_1", "mxfp4:packed=low", "e4m3fn:token", "int8:group:32",
                                      "int4:group:64:packed=low", "int2:group:32:zero=f32:packed=high",
                                      "e4m3fn:group:128:scale=bf16", "int8:tile:1x128:scale=f16", "int8:tile:128x128",
                                      "int4:channel:64:packed=high", "uint8:token:zero=f32"};
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x71626c61);
  for (int k = 0; k < (int)(sizeof specs / sizeof *specs); k++) {
    ac_case c;
    ref_case(&c, AC_F32, k % 2 ? AC_MASK_CAUSAL : AC_MASK_NONE, 1, 2, 1, 24, 160, 128, 128);
    ac_counts n;
    ac_err e;
    ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
    for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, ac_rng_normal(&r));
    for (int64_t x = 0; x < n.k; x++) ref_set(&c, 'k', (size_t)x, ac_rng_normal(&r) * (x % 37 ? 1 : 30));
    for (int64_t x = 0; x < n.v; x++) ref_set(&c, 'v', (size_t)x, ac_rng_normal(&r));
    ac_qspec q;
    ck_assert_msg(ac_qspec_parse(specs[k], &q, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_quant_apply(&c, 'k', &q, &e) == 0 && ac_quant_apply(&c, 'v', &q, &e) == 0, "%s: %s", specs[k], e.msg);
    if (k % 3 == 0) {
      ck_assert(ac_qspec_parse("e4m3fn:head", &q, &e) == 0);
      ck_assert_msg(ac_quant_apply(&c, 'q', &q, &e) == 0, "%s", e.msg);
    }
    ac_oracle_result A, B;
    run(&c, 1, 1, &A);
    run(&c, -1, 1, &B);
    compare(&c, &A, &B, specs[k], k);
    /* the level took the heads and rows: at least 9 in 10 elements decided in its tiles */
    int64_t elems = c.p.batch * c.p.heads * c.p.tq * c.p.dv;
    REQUIRE(B.n_blas == 0 && 10 * A.n_blas >= 9 * elems, "%s: %lld of %lld elements decided by the level", specs[k],
            (long long)A.n_blas, (long long)elems);
    ac_oracle_result_free(&A);
    ac_oracle_result_free(&B);
    ac_case_free(&c);
  }
}
END_TEST

/* Sets element (t, d) of quantized tensor x (batch 1, head h) to code times scale: the scale of its
 * group (every element of the group takes the last one set), its code. */
static void qset(ac_case *c, char x, int64_t h, int64_t t, int64_t d, int code, float scale)
{
  const ac_qspec *q = &c->p.quant[ac_qslot(x)];
  ac_qdata *qd = &c->quant->t[ac_qslot(x)];
  int64_t dims[4];
  ac_qdims(&c->p, x, dims);
  uint32_t bits;
  memcpy(&bits, &scale, sizeof bits);
  ac_qsd_store(AC_QSD_F32, qd->scales, (size_t)ac_qscale_index(q, dims, 0, h, t, d), bits);
  qd->codes[((h * dims[2]) + t) * dims[3] + d] = (uint8_t)(int8_t)code;
}

/* A binary32 scale m 2^e (1 <= m < 2) whose significand ends in the bits of low (odd: 24 bits). */
static float wscale(int e, uint32_t low) { return (float)ldexp(1 + ldexp((double)low, -23), e); }

/* Values that are not binary32 numbers (int8 codes times binary32 scales, zero points 0), built to
 * break a careless bound of the level: o on binary32 ties (constant columns of 25-bit values), near
 * midpoints and on them (rows of one key round V itself), K with one large value and many tiny ones
 * (|K| 2^-ke below binary32's normal range), V columns whose values lie within a few units of
 * binary32 of each other, all negative, their binary32 images on both sides of o. The level takes
 * them (n_blas) and every answer is that of the per-row passes. */
START_TEST(blas_wide_values_match_the_per_row_passes)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x77696465);
  for (int k = 0; k < 8; k++) {
    int fam = k % 4;
    ac_case c;
    ref_case(&c, AC_F32, k < 4 ? AC_MASK_CAUSAL : AC_MASK_CAUSAL_BR, 1, 2, 1, 40, 300, 64, 32);
    ac_counts n;
    ac_err e;
    ck_assert(ac_problem_counts(&c.p, &n, &e) == 0);
    for (int64_t x = 0; x < n.q; x++) ref_set(&c, 'q', (size_t)x, ac_rng_normal(&r));
    for (int64_t x = 0; x < n.k; x++) ref_set(&c, 'k', (size_t)x, ac_rng_normal(&r));
    for (int64_t x = 0; x < n.v; x++) ref_set(&c, 'v', (size_t)x, ac_rng_normal(&r));
    ac_qspec q;
    ck_assert(ac_qspec_parse("int8:group:16", &q, &e) == 0);
    for (int w = 0; w < 3; w++) ck_assert_msg(ac_quant_apply(&c, "qkv"[w], &q, &e) == 0, "%s", e.msg);
    for (int w = 0; w < 3; w++) {   /* zero points 0 */
      int64_t dims[4];
      ac_qdims(&c.p, "qkv"[w], dims);
      if (c.quant->t[w].aux)
        memset(c.quant->t[w].aux, 0, (size_t)ac_qscale_count(&q, dims) * ac_qsdtype_size(ac_qspec_zdtype(&q)));
    }
    for (int64_t h = 0; h < 2; h++)   /* q: random codes, random 24-bit scales */
      for (int64_t i = 0; i < c.p.tq; i++)
        for (int64_t d = 0; d < c.p.dk; d++)
          qset(&c, 'q', h, i, d, (int)ac_rng_range(&r, -127, 127), wscale(-6, (uint32_t)ac_rng_below(&r, 1u << 22) * 2 + 1));
    for (int64_t h = 0; h < 1; h++) {   /* one kv head */
      for (int64_t j = 0; j < c.p.tk; j++) {
        for (int64_t d = 0; d < c.p.dk; d++) {
          int big = fam == 2 && d == 0, code = fam == 2 && d > 0 && d < 16 ? 0 : (int)ac_rng_range(&r, -127, 127);
          qset(&c, 'k', h, j, d, big ? 127 : code,
               fam == 2 ? wscale(big || d < 16 ? 3 : -126 + (int)(j % 3), (uint32_t)ac_rng_below(&r, 1u << 22) * 2 + 1)
                        : wscale(-7, (uint32_t)ac_rng_below(&r, 1u << 22) * 2 + 1));
        }
        for (int64_t d = 0; d < c.p.dv; d++) {
          int code;
          float sc;
          if (fam == 0) {   /* constant columns: 3 (1 + 2^-23) 2^-3 and odd multiples, binary32 ties */
            code = (int)(2 * (d % 20) + 1) * (d % 2 ? -1 : 1);
            sc = wscale(-3, 1);
          } else if (fam == 1) {   /* 127 (1 + 32 2^-23) is a tie, 127 (1 + 31 2^-23) 2^-6 units from one */
            code = j % 2 ? 127 : -127;
            sc = wscale(-4, 31 + (uint32_t)(j % 3 == 0));
          } else if (fam == 3) {   /* -c s_j, the s_j a few units apart */
            code = -(int)(100 + d);
            sc = wscale(-7, 0x2aaaab + 2 * (uint32_t)ac_rng_below(&r, 4));
          } else {
            code = (int)ac_rng_range(&r, -127, 127);
            sc = wscale(-7, (uint32_t)ac_rng_below(&r, 1u << 22) * 2 + 1);
          }
          qset(&c, 'v', h, j, d, code, sc);
        }
      }
    }
    for (int w = 0; w < 3; w++) ac_quant_decode(&c, "qkv"[w]);
    REQUIRE(wide_v(&c), "case %d: V holds binary32 numbers only", k);
    ac_oracle_result A, B;
    run(&c, 1, 1, &A);
    run(&c, -1, 1, &B);
    compare(&c, &A, &B, "wide", k);
    int64_t elems = c.p.batch * c.p.heads * c.p.tq * c.p.dv;
    REQUIRE(A.n_blas > elems / 4, "case %d: %lld of %lld elements decided by the level", k, (long long)A.n_blas,
            (long long)elems);
    ac_oracle_result_free(&A);
    ac_oracle_result_free(&B);
    ac_case_free(&c);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_blas");
  TCase *tc = tcase_create("blas");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, blas_matches_the_per_row_passes);
  tcase_add_test(tc, blas_elsewhere_is_the_per_row_path);
  tcase_add_test(tc, blas_quantized_matches_the_per_row_passes);
  tcase_add_test(tc, blas_wide_values_match_the_per_row_passes);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
