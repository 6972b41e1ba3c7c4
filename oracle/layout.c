/* layout.c: the oracle of a serving-layout case (docs/layouts.md): each sequence is a dense
 * case of its own (src/layout.h, ac_layout_seq_case) that the exact oracle computes, through
 * the cache under that dense case's key, so that a case that differs only in its layout (pages
 * reordered, sequences repacked) reuses every per-sequence result. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"
#include "oracle.h"
#include "oracle_int.h"

/* The selected rows of sequence b as a row list of its dense case ("h*tq_b+i,..."), NULL when
 * all are selected; *any 0 when none is. */
static char *seq_rows(const ac_case *c, int64_t b, const uint8_t *sel, int *any)
{
  const ac_problem *p = &c->p;
  int64_t tq = ac_layout_tq(c, b), q0 = c->lay->cu_q[b], n = 0;
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < tq; i++) n += sel[h * p->tq + q0 + i];
  *any = n > 0;
  if (n == 0 || n == p->heads * tq) return NULL;
  size_t cap = (size_t)n * 21 + 1, len = 0;
  char *s = ac_xmalloc(cap);
  s[0] = 0;
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < tq; i++)
      if (sel[h * p->tq + q0 + i]) len += (size_t)snprintf(s + len, cap - len, "%s%lld", len ? "," : "", (long long)(h * tq + i));
  return s;
}

/* The dense result of sequence b: from the cache, or computed and stored. */
static int seq_result(const ac_case *c, int64_t b, const ac_oracle_opts *o, const char *rows, ac_oracle_result *sr,
                      ac_err *e)
{
  ac_case sub;
  if (ac_layout_seq_case(c, b, &sub, e) != 0) return -1;
  ac_oracle_opts so = *o;
  so.rows = rows;
  const char *dir = ac_oracle_cache_dir();
  int rc = 0;
  if (ac_oracle_cache_load(dir, &sub, &so, sr) != 0) {
    rc = ac_oracle_run(&sub, &so, sr, e);
    if (rc == 0) ac_oracle_cache_store(dir, &sub, &so, sr);
  }
  ac_case_free(&sub);
  if (rc != 0) {
    char m[sizeof e->msg];
    snprintf(m, sizeof m, "%s", e->msg);
    ac_err_set(e, "sequence %lld: %s", (long long)b, m);
  }
  return rc;
}

/* Rows and elements of sequence b's result into the carrier's. */
static void seq_copy(const ac_case *c, int64_t b, const ac_oracle_result *sr, ac_oracle_result *r)
{
  const ac_problem *p = &c->p;
  int64_t tq = ac_layout_tq(c, b), q0 = c->lay->cu_q[b], dv = p->dv;
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < tq; i++) {
      int64_t x = h * tq + i, X = h * p->tq + q0 + i, ss = ac_oracle_slot(sr, x), ds = ac_oracle_slot(r, X);
      if (ss < 0 || ds < 0) continue;
      r->rows[X] = sr->rows[x];
      memcpy(&r->elems[ds * dv], &sr->elems[ss * dv], (size_t)dv * sizeof *r->elems);
      for (int f = 0; f < AC_NDTYPES; f++)
        if (r->o_round[f] && sr->o_round[f])
          memcpy(&r->o_round[f][ds * dv], &sr->o_round[f][ss * dv], (size_t)dv * sizeof **r->o_round);
    }
  r->rows_done += sr->rows_done;
  r->n_exact += sr->n_exact;
  r->n_rounded += sr->n_rounded;
  r->n_unresolved += sr->n_unresolved;
  r->n_fallback += sr->n_fallback;
  if (sr->max_prec > r->max_prec) r->max_prec = sr->max_prec;
  if (sr->threads > r->threads) r->threads = sr->threads;
  r->cpu_seconds += sr->cpu_seconds;
  r->cpu_max_thread += sr->cpu_max_thread;
}

/* The carrier result with the selected rows' storage, every row not selected yet. */
static void result_init(const ac_case *c, const ac_oracle_opts *o, const uint8_t *sel, ac_oracle_result *r)
{
  const ac_problem *p = &c->p;
  r->p = *p;
  r->nrows = p->heads * p->tq;
  r->formats = (o->formats | (1u << p->dtype)) & ((1u << AC_NDTYPES) - 1);
  r->nmu = o->nmu < 0 ? 0 : o->nmu > AC_ORACLE_NMU ? AC_ORACLE_NMU : o->nmu;
  for (int q = 0; q < r->nmu; q++) r->mu[q] = o->mu[q];
  int64_t nl = 0;
  for (int64_t x = 0; x < r->nrows; x++) nl += sel[x];
  r->rows = ac_xcalloc((size_t)r->nrows, sizeof *r->rows);
  if (nl < r->nrows) {
    r->slot = ac_xmalloc((size_t)r->nrows * sizeof *r->slot);
    for (int64_t x = 0, k = 0; x < r->nrows; x++) r->slot[x] = sel[x] ? k++ : -1;
    r->nsel = nl;
  }
  int64_t ns = ac_oracle_nstored(r);
  r->elems = ac_xcalloc((size_t)(ns * p->dv), sizeof *r->elems);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (r->formats & (1u << f)) r->o_round[f] = ac_xcalloc((size_t)(ns * p->dv), sizeof **r->o_round);
  for (int64_t x = 0; x < r->nrows; x++) {
    r->rows[x].m = r->rows[x].lse = NAN;
    r->rows[x].lse_how = AC_HOW_NOT_SELECTED;
  }
  for (int64_t x = 0; x < ns * p->dv; x++) r->elems[x].o = NAN;
}

int ac_oracle_run_layout(const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r, ac_err *e)
{
  double t0 = ac_now();
  memset(r, 0, sizeof *r);
  ac_err le;
  if (ac_layout_validate(c, &le) != 0) return ac_err_set(e, "%s", le.msg);
  const ac_problem *p = &c->p;
  int64_t nrows = p->heads * p->tq;
  uint8_t *sel = ac_xmalloc((size_t)nrows);
  if (ac_oracle_select_rows(p, o->rows, o->rows_seed, sel, e) != 0) {
    free(sel);
    return -1;
  }
  result_init(c, o, sel, r);
  int rc = 0;
  for (int64_t b = 0; rc == 0 && b < p->l.nseq; b++) {
    int any;
    char *rows = seq_rows(c, b, sel, &any);
    if (any) {
      ac_oracle_result sr;
      rc = seq_result(c, b, o, rows, &sr, e);
      if (rc == 0) seq_copy(c, b, &sr, r);
      if (rc == 0) ac_oracle_result_free(&sr);
    }
    free(rows);
  }
  free(sel);
  if (rc != 0) {
    ac_oracle_result_free(r);
    return -1;
  }
  r->seconds = ac_now() - t0;
  return 0;
}
