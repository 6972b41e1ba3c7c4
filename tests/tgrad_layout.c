/* tgrad_layout.c: the backward oracle on varlen cases (oracle/gradlayout.c, docs/backward.md §7):
 * every sequence of random packed batches (empty sequences on either side, tq_b != tk_b, GQA,
 * every mask, windows, per-sequence ALiBi, bias, boolean masks, sinks) against the brute force
 * of tests/tgrad_ref.c on the sequence's own dense case, through the carrier's packed rows and
 * columns; the keys of a sequence without queries are exact zeros, dσ is the sum over the
 * sequences, a sampled selection maps to the same packed rows, paged cases are refused. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dout.h"
#include "layout.h"
#include "testutil.h"
#include "tgrad_util.h"
#include "vgen.h"

#define PREC GT_PREC

/* Tensor S of the carrier's result seen as the n rows (or columns) of sequence b: entry
 * h * len + i is carrier entry h * total + first + i. */
static ac_grad_tensor view(const ac_grad_tensor *S, int64_t heads, int64_t total, int64_t first, int64_t len)
{
  ac_grad_tensor T = *S;
  T.n = heads * len;
  T.slot = malloc((size_t)(T.n + 1) * sizeof *T.slot);
  for (int64_t h = 0; h < heads; h++)
    for (int64_t i = 0; i < len; i++) T.slot[h * len + i] = S->slot[h * total + first + i];
  return T;
}

/* Every sequence of c (with dO) against the brute force; r the carrier's result. */
static void check_sequences(const ac_case *c, const ac_grad_result *r)
{
  const ac_problem *p = &c->p;
  double dsink[64] = {0};
  for (int64_t b = 0; b < p->l.nseq; b++) {
    const int64_t tq = ac_layout_tq(c, b), tk = ac_layout_tk(c, b), k0 = c->lay->cu_k[b];
    if (tq == 0) {   /* no query sees these keys */
      for (int64_t kvh = 0; kvh < p->kv_heads; kvh++)
        for (int64_t j = 0; j < tk; j++)
          for (int64_t t = 0; t < p->dk || t < p->dv; t++) {
            if (t < p->dk) gt_assert_exact_zero(&r->dk, kvh * p->tk + k0 + j, t);
            if (t < p->dv) gt_assert_exact_zero(&r->dv, kvh * p->tk + k0 + j, t);
          }
      continue;
    }
    ac_case sub;
    ac_err e;
    ck_assert_msg(ac_layout_seq_case(c, b, &sub, &e) == 0, "%s", e.msg);
    ac_grad_result v;
    memset(&v, 0, sizeof v);
    v.p = sub.p;
    v.dq = view(&r->dq, p->heads, p->tq, c->lay->cu_q[b], tq);
    v.dk = view(&r->dk, p->kv_heads, p->tk, k0, tk);
    v.dv = view(&r->dv, p->kv_heads, p->tk, k0, tk);
    if (tk == 0) v.dk.n = v.dv.n = 0;   /* its one hidden key is no column */
    ac_grad_result sd;   /* the sequence's own dσ (the carrier's is the sum) */
    memset(&sd, 0, sizeof sd);
    if (p->f.used & AC_FEAT_SINKS) {
      gt_run(&sub, sub.dout, "0", "0", &sd);
      v.dsink = sd.dsink;
      for (int64_t h = 0; h < p->heads; h++) dsink[h] += ac_grad_at(&sd.dsink, h, 0)->g;
    }
    gt_against_brute(&sub, sub.dout, &v, PREC);
    free(v.dq.slot), free(v.dk.slot), free(v.dv.slot);
    if (p->f.used & AC_FEAT_SINKS) ac_grad_result_free(&sd);
    ac_case_free(&sub);
  }
  for (int64_t h = 0; h < r->dsink.nsel; h++) {
    const ac_grad_elem *el = ac_grad_at(&r->dsink, h, 0);
    ck_assert_msg(fabs(el->g - dsink[h]) <= el->g_err + 0x1p-50 * fabs(dsink[h]), "dsink %lld: %a against %a",
                  (long long)h, el->g, dsink[h]);
  }
}

/* A random varlen case with dO: 1-4 sequences of 0-5 queries and 0-6 keys, variant v (or none). */
static void random_case(ac_case *c, ac_rng *rng, const ac_vspec *v, int k)
{
  static const ac_dtype dts[] = {AC_F32, AC_BF16, AC_F16, AC_F64};
  static const int64_t hs[][2] = {{1, 1}, {2, 1}, {2, 2}, {4, 2}};
  int64_t n = 1 + (int64_t)ac_rng_below(rng, 4), tq[4], tk[4], sq = 0, sk = 0;
  for (int64_t b = 0; b < n; b++) {
    tq[b] = (int64_t)ac_rng_below(rng, 6), tk[b] = (int64_t)ac_rng_below(rng, 7);
    sq += tq[b], sk += tk[b];
  }
  if (sq == 0) tq[n - 1] = 3;
  if (sk == 0) tk[0] = 2;
  const int64_t *h = hs[ac_rng_below(rng, 4)];
  ac_layout_case_spec s = {.dtype = dts[k % 4], .mask = (ac_mask)ac_rng_below(rng, 3), .heads = h[0], .kv_heads = h[1],
                           .dk = 1 + (int64_t)ac_rng_below(rng, 4), .dv = 1 + (int64_t)ac_rng_below(rng, 4), .sigma = 1,
                           .lay = {.kind = AC_FEAT_VARLEN, .nseq = n, .tq = tq, .tk = tk}, .v = v};
  ac_err e;
  ck_assert_msg(ac_layout_case_make(c, &s, ac_rng_next(rng), &e) == 0, "%s", e.msg);
  static const char *const pats[] = {"normal", "zero-rows", "cancel"};
  ck_assert_msg(ac_dout_generate(c, pats[ac_rng_below(rng, 3)], ac_rng_next(rng), &e) == 0, "%s", e.msg);
}

START_TEST(varlen_against_brute)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 21);
  static const ac_vspec vs[] = {
    {0},
    {.used = AC_FEAT_WINDOW, .win_left = 2, .win_right = 0},
    {.used = AC_FEAT_WINDOW, .win_left = 1, .win_right = 1, .win_top_left = 1},
    {.used = AC_FEAT_ALIBI, .alibi_max = 1, .alibi_per_batch = 1},
    {.used = AC_FEAT_BIAS, .bias = AC_VB_NEGINF_ROWS},
    {.used = AC_FEAT_BOOL_MASK, .bmask = AC_VM_RANDOM},
    {.used = AC_FEAT_SINKS, .sinks = AC_VS_NORMAL},
    {.used = AC_FEAT_WINDOW | AC_FEAT_SINKS | AC_FEAT_ALIBI, .win_left = 3, .win_right = -1, .alibi_max = 0.5,
     .sinks = AC_VS_DOMINANT},
  };
  const int nv = (int)(sizeof vs / sizeof vs[0]), ncases = ac_test_expensive() ? 800 : 160;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    const ac_vspec *v = &vs[k % nv];
    random_case(&c, &rng, v->used ? v : NULL, k / nv);
    ac_grad_result r;
    gt_run(&c, c.dout, NULL, NULL, &r);
    check_sequences(&c, &r);
    ac_grad_result_free(&r);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(varlen_edges)
{
  /* sequences without queries or keys at both ends and in the middle, tq_b > tk_b and < tk_b,
   * causal bottom-right (rows of a sequence with tq_b > tk_b are empty), GQA 4/2, sampled rows
   * and columns (packed indices) */
  int64_t tq[] = {0, 3, 5, 0, 2, 4}, tk[] = {3, 0, 2, 4, 6, 0};
  ac_layout_case_spec s = {.dtype = AC_F32, .mask = AC_MASK_CAUSAL_BR, .heads = 4, .kv_heads = 2, .dk = 3, .dv = 2,
                           .sigma = 1, .lay = {.kind = AC_FEAT_VARLEN, .nseq = 6, .tq = tq, .tk = tk}};
  ac_case c;
  ac_err e;
  ck_assert_msg(ac_layout_case_make(&c, &s, 77, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_dout_generate(&c, "normal", 5, &e) == 0, "%s", e.msg);
  ac_grad_result r;
  gt_run(&c, c.dout, NULL, NULL, &r);
  check_sequences(&c, &r);
  /* sequence 1 (no keys, packed queries 0-2): dQ = 0 exactly */
  for (int64_t h = 0; h < 4; h++)
    for (int64_t i = 0; i < 3; i++)
      for (int64_t t = 0; t < 3; t++) gt_assert_exact_zero(&r.dq, h * c.p.tq + 0 + i, t);
  ac_grad_result rs;   /* a sample: the same packed rows and columns as the full result */
  gt_run(&c, c.dout, "1,9,30-35", "2,7,20", &rs);
  ck_assert_int_eq(rs.dq.nsel, 8);
  ck_assert_int_eq(rs.dk.nsel, 3);
  const ac_grad_tensor *A[] = {&rs.dq, &rs.dk, &rs.dv}, *B[] = {&r.dq, &r.dk, &r.dv};
  for (int t = 0; t < 3; t++)
    for (int64_t x = 0; x < A[t]->n; x++)
      for (int64_t y = 0; A[t]->slot[x] >= 0 && y < A[t]->d; y++)
        ck_assert(ac_grad_bits(A[t], AC_F32, x, y) == ac_grad_bits(B[t], AC_F32, x, y));
  ac_grad_result_free(&rs);
  ac_grad_result_free(&r);
  ac_case_free(&c);
  /* a paged case: no dO, no backward */
  int64_t pq[] = {1, 2}, pk[] = {5, 9};
  ac_layout_case_spec ps = {.dtype = AC_F32, .mask = AC_MASK_NONE, .heads = 2, .kv_heads = 1, .dk = 4, .dv = 4, .sigma = 1,
                            .lay = {.kind = AC_FEAT_PAGED, .nseq = 2, .tq = pq, .tk = pk, .page_size = 4}};
  ck_assert_msg(ac_layout_case_make(&c, &ps, 3, &e) == 0, "%s", e.msg);
  ck_assert_int_ne(ac_dout_generate(&c, "normal", 5, &e), 0);
  ck_assert_msg(strstr(e.msg, "paged") != NULL, "%s", e.msg);
  c.dout = calloc(ac_case_bytes(&c, 'o') + 1, 1);
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  ck_assert_int_ne(ac_grad_run(&c, c.dout, &go, &r, &e), 0);
  ck_assert_msg(strstr(e.msg, "paged") != NULL, "%s", e.msg);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("grad_layout");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, varlen_against_brute);
  tcase_add_test(tc, varlen_edges);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
