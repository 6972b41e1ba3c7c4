/* oracle.c: the driver: options, row selection, threads, special rows (empty, non-finite
 * q or k), and the per-row pipeline scores -> groups -> Ziv -> budget. Rows are handed to
 * threads in chunks from an atomic counter; every row's result depends only on the row,
 * so the output is identical bit for bit for any number of threads. */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "oracle_int.h"
#include "fast.h"
#include "blasfwd.h"
#include "gemm.h"
#include "variants.h"

void ac_oracle_opts_init(ac_oracle_opts *o)
{
  memset(o, 0, sizeof *o);
  o->prec_cap = 1L << 16;
  /* smallest P kept: fp32 subnormal, fp32 normal (FTZ), fp16 subnormal, fp16 normal */
  o->nmu = 4;
  o->mu[0] = 0x1p-149;
  o->mu[1] = 0x1p-126;
  o->mu[2] = 0x1p-24;
  o->mu[3] = 0x1p-14;
}

void ac_or_ws_init(ac_or_ws *w, const ac_case *cs, const ac_oracle_opts *o, const ac_or_scale *sc,
                   uint32_t formats, int tprec, long cap)
{
  memset(w, 0, sizeof *w);
  w->cs = cs;
  w->p = &cs->p;
  w->opts = o;
  w->sc = *sc;
  w->formats = formats;
  w->tprec = tprec;
  w->prec_cap = cap;
  w->own.b = w->own.kvh = -1;
  w->sub.b = w->sub.kvh = -1;
  int64_t dk = cs->p.dk;
  w->qm = ac_xmalloc((size_t)dk * sizeof *w->qm);
  w->qe = ac_xmalloc((size_t)dk * sizeof *w->qe);
  w->qd = ac_xmalloc((size_t)dk * sizeof *w->qd);
  mpz_init(w->zt);
  mpfr_inits2(64, w->Llo, w->Lhi, w->Lm1lo, w->Lm1hi, w->mlo, w->mhi, w->olo, w->ohi, w->bp, (mpfr_ptr)0);
  mpfr_init2(w->alt_shift, 128);
  ac_or_var_init(w);
  ac_or_drop_init(w);
}

void ac_or_ws_free(ac_or_ws *w)
{
  ac_or_head_free(&w->own);
  ac_or_head_free(&w->sub);
  ac_or_var_free(w);
  free(w->qm); free(w->qe); free(w->qd);
  free(w->z);
  free(w->Zabs);
  free(w->Zb);
  free(w->ord);
  free(w->gst);
  free(w->gof);
  free(w->acc);
  for (int64_t g = 0; g < w->cap_g; g++) {
    mpfr_clear(w->tlo[g]); mpfr_clear(w->thi[g]); mpfr_clear(w->wlo[g]); mpfr_clear(w->whi[g]);
  }
  free(w->tlo); free(w->thi); free(w->wlo); free(w->whi); free(w->Wlo); free(w->Whi);
  for (int64_t k = 0; k < w->cap_prod; k++) mpfr_clear(w->prod[k]);
  free(w->prod); free(w->pp);
  free(w->nlo); free(w->nhi); free(w->pend); free(w->slow);
  mpz_clear(w->zt);
  mpfr_clears(w->Llo, w->Lhi, w->Lm1lo, w->Lm1hi, w->mlo, w->mhi, w->olo, w->ohi, w->bp, (mpfr_ptr)0);
  mpfr_clear(w->alt_shift);
  ac_or_drop_free(w);
}

/* A decoded (batch, kv head), shared: decoded once by the first thread that needs it,
 * freed when its last selected row is done, so live heads never exceed the threads. */
typedef struct {
  ac_or_head h;
  ac_bt_head bt;   /* the BLAS level's forms of it (blasfwd.h), when the case takes that level */
  int64_t rows_left;
  int state;   /* 0 not decoded, 1 decoding, 2 ready */
} shead;

/* The pipeline of a case, chosen once (path_choose): the MPFR levels alone (opts.no_fast: the
 * plain decoder, scores and groups), or the fast decoder, scores and groups with the certified
 * binary64 pass for the rows where it applies to the case (else the MPFR levels). */
typedef void (*or_row_fn)(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t ridx,
                          ac_or_stats *st, const ac_oracle_result *r);
typedef struct {
  void (*head_decode)(ac_or_head *hd, const ac_case *cs, int64_t b, int64_t kvh, const ac_oracle_opts *o,
                      uint32_t formats);
  void (*scores)(ac_or_ws *w);
  void (*groups)(ac_or_ws *w);
  or_row_fn row;
} or_path;

static void head_decode_plain(ac_or_head *hd, const ac_case *cs, int64_t b, int64_t kvh, const ac_oracle_opts *o,
                              uint32_t formats)
{
  (void)o;
  (void)formats;
  ac_or_head_decode(hd, cs, b, kvh);
}

/* ziv.c's levels (0, then MPFR), then budget.c's terms from their weights and the hull term M. */
static void row_levels(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t ridx,
                       ac_or_stats *st, const ac_oracle_result *r)
{
  ac_or_row_eval(w, row, el, obits, ridx, st);
  ac_or_row_budget(w, row, el, w->opts, r->mu, r->nmu);
  ac_or_row_hull(w, el);
  if (w->drop) ac_or_drop_finish(w, el, obits, ridx);   /* o' into o = o' / (1 - p) */
}

/* fast.c: the certified binary64 pass (with its budget terms and M), the MPFR levels where it cannot
 * decide; a row it does not apply to (fp64 inputs beyond binary32's exponent range) goes
 * through the MPFR levels whole. */
static void row_fast(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t ridx,
                     ac_or_stats *st, const ac_oracle_result *r)
{
  if (ac_or_fast_row(w, row, el, obits, ridx, st, r->mu, r->nmu)) row_levels(w, row, el, obits, ridx, st, r);
}

static void path_choose(or_path *P, const ac_case *c, const ac_oracle_opts *o, uint32_t formats)
{
  uint32_t used = c->p.f.used;
  ac_or_scale sc;
  ac_err e;
  int fold = ac_or_scale_init(&sc, &c->p, &e) == 0 && ac_or_var_foldable(&c->p, &sc);
  /* dropout scales o by 1 / (1 - p) (dropout.c): the MPFR levels, whose rounding decisions take it */
  const uint32_t mpfr_only = AC_FEAT_DESCALE | AC_FEAT_MIXED_DTYPES | AC_FEAT_DROPOUT;
  if ((used & AC_OR_VAR_SCORES) && (o->no_fast || (used & mpfr_only))) {
    /* variant scores: the MPFR levels on the scores of varscores.c */
    *P = (or_path){head_decode_plain, ac_or_var_scores, ac_or_var_groups, row_levels};
    return;
  }
  if (used & AC_OR_VAR_SCORES) {   /* the fast path: folded into plain scores of the case's scale, or
                                    * LIN and CAP scores bounded in binary64 (fastvar.c) */
    *P = (or_path){ac_or_fast_head_decode, ac_or_var_scores_fast, fold ? ac_or_fast_groups : ac_or_var_groups,
                   ac_or_fast_case_applies(c, o, formats) || c->p.dtype == AC_F64 ? row_fast : row_levels};
    return;
  }
  if (o->no_fast || (used & mpfr_only)) {   /* the decoder of each tensor's dtype */
    *P = (or_path){head_decode_plain, ac_or_row_scores, ac_or_groups, row_levels};
    return;
  }
  /* fastdecode.c and fastscores.c: the same fields, scores and groups, faster for the narrow dtypes */
  *P = (or_path){ac_or_fast_head_decode, ac_or_fast_scores, ac_or_fast_groups,
                 ac_or_fast_case_applies(c, o, formats) || c->p.dtype == AC_F64 ? row_fast : row_levels};
}

typedef struct {
  const ac_case *cs;
  or_path path;
  shead *heads;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  const ac_oracle_opts *o;
  ac_oracle_result *r;
  const ac_or_scale *sc;
  const int64_t *list;
  int64_t nlist;
  atomic_llong next;
  int tprec;
  int64_t *tiles, ntiles;   /* the BLAS level (blasfwd.h): tile k is list[tiles[2k] ..][0 .. tiles[2k + 1]) */
} job;

typedef struct {
  job *J;
  ac_or_stats st;
  double cpu;   /* this thread's CPU seconds */
} worker;

static void row_fill_special(ac_oracle_result *r, int64_t ridx, uint8_t accept, double o, int64_t dv,
                             ac_or_stats *st)
{
  int64_t slot = ac_oracle_slot(r, ridx);
  for (int64_t t = 0; t < dv; t++) {
    ac_oracle_elem *e = &r->elems[slot * dv + t];
    e->o = o;
    e->accept = accept;
    e->how = AC_HOW_EXACT;
    for (int f = 0; f < AC_NDTYPES; f++) {
      if (!r->o_round[f]) continue;
      uint64_t bits = accept == AC_ACCEPT_EMPTY ? ac_encode_f64((ac_dtype)f, 0.0) : ac_nan_bits((ac_dtype)f);
      r->o_round[f][slot * dv + t] = bits;
    }
  }
  st->exact += dv;
}

static void do_row_visible(ac_or_ws *w, job *J, int64_t ridx, int64_t b, int64_t h, int64_t i, int64_t n,
                           ac_or_stats *st);

static const ac_or_head *head_acquire(job *J, int64_t hid, int64_t b, int64_t kvh)
{
  shead *s = &J->heads[hid];
  pthread_mutex_lock(&J->mu);
  while (s->state == 1) pthread_cond_wait(&J->cv, &J->mu);
  if (s->state == 0) {
    s->state = 1;
    pthread_mutex_unlock(&J->mu);
    J->path.head_decode(&s->h, J->cs, b, kvh, J->o, J->r->formats);
    if (J->tiles) ac_bt_head_build(&s->bt, &s->h, J->cs->p.tk, J->cs->p.dk, J->cs->p.dv);
    pthread_mutex_lock(&J->mu);
    s->state = 2;
    pthread_cond_broadcast(&J->cv);
  }
  pthread_mutex_unlock(&J->mu);
  return &s->h;
}

static void head_release(job *J, int64_t hid)
{
  shead *s = &J->heads[hid];
  pthread_mutex_lock(&J->mu);
  if (--s->rows_left == 0) {
    ac_or_head_free(&s->h);
    ac_bt_head_free(&s->bt);
    s->state = 0;
  }
  pthread_mutex_unlock(&J->mu);
}

/* A row with no key: o = 0, LSE -inf, EMPTY accepted. */
static void row_empty(ac_oracle_result *r, int64_t ridx, int64_t dv, ac_or_stats *st)
{
  ac_oracle_row *row = &r->rows[ridx];
  row->visible = 0;
  row->m = row->lse = -INFINITY;
  row->lse_f32 = -INFINITY;
  row->lse_f64 = -INFINITY;
  row->lse_how = AC_HOW_EXACT;
  row->lse_accept = AC_ACCEPT_EMPTY;
  row_fill_special(r, ridx, AC_ACCEPT_EMPTY, 0.0, dv, st);
}

/* Variants: the visible keys are any subset (mask, window, boolean mask), gathered with the
 * sink into a head of their own (varscores.c) that every path reads like a plain head; every
 * variant row takes its kv head. */
static void do_row_var(ac_or_ws *w, job *J, int64_t ridx, int64_t b, int64_t h, int64_t i, ac_or_stats *st)
{
  const ac_problem *p = &J->cs->p;
  int64_t kvh = ac_kv_head(p, h), hid = b * p->kv_heads + kvh, nvis;
  w->head = head_acquire(J, hid, b, kvh);
  int64_t n = ac_or_row_gather(w, b, h, i, &nvis);
  J->r->rows[ridx].visible = nvis;
  if (n == 0) row_empty(J->r, ridx, p->dv, st);
  else do_row_visible(w, J, ridx, b, h, i, n, st);
  w->head = NULL;
  head_release(J, hid);
}

/* A selected row's elements before it is computed: o NaN. In the worker that computes the row, so
 * that the threads share the first touch of the result's pages. */
static void elems_init(ac_oracle_result *r, int64_t ridx, int64_t dv)
{
  ac_oracle_elem *el = &r->elems[ac_oracle_slot(r, ridx) * dv];
  for (int64_t t = 0; t < dv; t++) el[t].o = NAN;
}

static void do_row(ac_or_ws *w, job *J, int64_t ridx, ac_or_stats *st)
{
  const ac_problem *p = &J->cs->p;
  ac_oracle_result *r = J->r;
  int64_t dv = p->dv;
  int64_t i = ridx % p->tq, bh = ridx / p->tq, h = bh % p->heads, b = bh / p->heads;
  ac_oracle_row *row = &r->rows[ridx];
  row->selected = 1;
  elems_init(r, ridx, dv);
  ac_or_alt_row(w, row, b, h, i);
  if (p->f.used) {
    do_row_var(w, J, ridx, b, h, i, st);
    ac_or_alt_finish(w, row);
    return;
  }
  int64_t n = ac_visible_count(p, i);
  row->visible = n;
  if (n <= 0) {
    row_empty(r, ridx, dv, st);
    ac_or_alt_finish(w, row);
    return;
  }
  int64_t kvh = ac_kv_head(p, h), hid = b * p->kv_heads + kvh;
  w->head = head_acquire(J, hid, b, kvh);
  do_row_visible(w, J, ridx, b, h, i, n, st);
  w->head = NULL;
  head_release(J, hid);
  ac_or_alt_finish(w, row);
}

static void do_row_visible(ac_or_ws *w, job *J, int64_t ridx, int64_t b, int64_t h, int64_t i, int64_t n,
                           ac_or_stats *st)
{
  const ac_problem *p = &J->cs->p;
  ac_oracle_result *r = J->r;
  int64_t dv = p->dv;
  ac_oracle_row *row = &r->rows[ridx];
  int64_t slot = ac_oracle_slot(r, ridx);
  int qbad = ac_or_row_q(w, b, h, i), bad = qbad;
  for (int64_t j = 0; j < n && !bad; j++)
    if (w->head->kbad[j]) bad = 1;
  uint8_t *cls = NULL;
  int rcls = AC_SCLS_FINITE;
  if (bad || w->var) {
    /* The rule table of oracle.h: score classes of the visible keys on IEEE semantics (variants:
     * of the whole score, ALiBi and bias included, and the exact parts of the finite ones). */
    cls = ac_xmalloc((size_t)n);
    rcls = w->var ? ac_or_var_classify(w, n, qbad, cls) : ac_or_inf_classify(w, b, h, i, n, cls);
    if (bad) row->has_nonfinite = 1;
  }
  if (rcls == AC_SCLS_NAN) {
    row->m = row->lse = NAN;
    row->lse_f32 = NAN;
    row->lse_f64 = NAN;
    row->lse_how = AC_HOW_EXACT;
    row->lse_accept = AC_ACCEPT_NAN;
    row->max_abs_s = row->max_abs_z = NAN;
    row_fill_special(r, ridx, AC_ACCEPT_NAN, NAN, dv, st);
    free(cls);
    return;
  }
  const ac_or_head *full = w->head;
  if (rcls != AC_SCLS_FINITE) {
    /* +inf keys: the limit is the mean of V over them (equal weights): their K with q = 0.
     * Otherwise the -inf keys drop out (weight exactly 0). */
    uint8_t want = rcls == AC_SCLS_PINF ? AC_SCLS_PINF : AC_SCLS_FINITE;
    for (int64_t j = 0; j < n; j++) cls[j] = cls[j] == want;
    int64_t kept = ac_or_head_subset(&w->sub, full, &J->cs->p, cls, n);
    if (w->var) ac_or_var_compact(w, cls, n, rcls == AC_SCLS_PINF);
    if (kept == 0) {
      /* every visible score -inf: exp(-inf - (-inf)) is NaN in a kernel that subtracts the
       * maximum, 0/0 in one that does not track it; one that guards m = -inf writes 0 */
      row->m = row->lse = -INFINITY;
      row->lse_f32 = -INFINITY;
      row->lse_f64 = -INFINITY;
      row->lse_how = AC_HOW_EXACT;
      row->lse_accept = AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF;
      row->max_abs_s = row->max_abs_z = 0;
      row_fill_special(r, ridx, AC_ACCEPT_VALUE | AC_ACCEPT_NAN, 0.0, dv, st);
      for (int64_t t = 0; t < dv; t++) {
        r->elems[slot * dv + t].o = 0;
        for (int f = 0; f < AC_NDTYPES; f++)
          if (r->o_round[f]) r->o_round[f][slot * dv + t] = ac_encode_f64((ac_dtype)f, 0.0);
      }
      free(cls);
      return;
    }
    w->head = &w->sub;
    n = kept;
    if (rcls == AC_SCLS_PINF)
      for (int64_t t = 0; t < J->cs->p.dk; t++) { w->qm[t] = 0; w->qe[t] = 0; w->qd[t] = 0; }
  }
  w->n = n;
  J->path.scores(w);
  J->path.groups(w);
  uint64_t *obits[AC_NDTYPES];
  for (int f = 0; f < AC_NDTYPES; f++) obits[f] = r->o_round[f];
  ac_oracle_elem *el = &r->elems[slot * dv];
  J->path.row(w, row, el, obits, slot, st, r);
  for (int64_t t = 0; t < dv; t++)
    if (el[t].accept != AC_ACCEPT_VALUE) row->has_nonfinite = 1;
  row->lse_accept = AC_ACCEPT_VALUE;
  row->max_cZ = ac_or_max_cz(w);
  row->max_cZb = ac_or_max_czb(w);
  if (w->var) ac_or_var_row_terms(w, row);
  row->qk_l1 = ac_or_qk_l1(w);
  if (rcls == AC_SCLS_PINF) {
    /* exp(s - m) with s = m = +inf is NaN in a kernel: NaN accepted everywhere */
    row->lse = row->lse_f64 = INFINITY;
    row->lse_f32 = INFINITY;
    row->lse_err = 0;
    row->lse_how = AC_HOW_EXACT;
    row->lse_accept = AC_ACCEPT_PINF | AC_ACCEPT_NAN;
    row->m = INFINITY;
    for (int64_t t = 0; t < dv; t++) el[t].accept |= AC_ACCEPT_NAN;
  } else if (rcls == AC_SCLS_NINF) {
    /* -inf keys have weight exactly 0. A kernel that processes keys in blocks (tiles,
     * split-K chunks) and meets a block of -inf keys only computes exp(-inf - (-inf)) = NaN
     * there unless it guards an infinite block maximum, and a non-finite V at such a key
     * meets 0·inf or 0·NaN in P·V: NaN is accepted in the row (and its LSE), flagged as
     * coming from weight-0 keys; a finite output is judged against o. */
    for (int64_t t = 0; t < dv; t++) el[t].accept |= AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0;
    row->lse_accept |= AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0;
  }
  w->head = full;
  free(cls);
}

/* The BLAS level: tiles from the counter; the rows a tile leaves go through do_row, before the tile
 * lets its head go (do_row takes and releases the head itself). */
static void tiles_work(ac_or_ws *w, job *J, ac_or_stats *st)
{
  const ac_problem *p = &J->cs->p;
  ac_bt_fwd *f = ac_bt_fwd_new();
  for (;;) {
    int64_t k = (int64_t)atomic_fetch_add(&J->next, 1);
    if (k >= J->ntiles) break;
    const int64_t *rows = J->list + J->tiles[2 * k], nr = J->tiles[2 * k + 1];
    int64_t bh = rows[0] / p->tq, h = bh % p->heads, b = bh / p->heads, kvh = ac_kv_head(p, h);
    int64_t hid = b * p->kv_heads + kvh, nleft = 0, nheld = 0;
    int64_t *left = ac_xmalloc((size_t)nr * sizeof *left);
    for (int64_t x = 0; x < nr; x++) {
      J->r->rows[rows[x]].selected = 1;
      elems_init(J->r, rows[x], p->dv);
      nheld += p->f.used || ac_visible_count(p, rows[x] % p->tq) > 0;
    }
    w->head = head_acquire(J, hid, b, kvh);
    const ac_bt_head *bt = &J->heads[hid].bt;
    if (bt->ok) nleft = ac_bt_fwd_tile(w, f, bt, rows, nr, J->r, st, left);
    else memcpy(left, rows, (size_t)nr * sizeof *left), nleft = nr;
    w->head = NULL;
    for (int64_t x = 0; x < nleft; x++) {
      nheld -= p->f.used || ac_visible_count(p, left[x] % p->tq) > 0;
      do_row(w, J, left[x], st);
    }
    for (int64_t x = 0; x < nheld; x++) head_release(J, hid);
    free(left);
  }
  ac_bt_fwd_free(f);
}

static void *work(void *arg)
{
  worker *W = arg;
  job *J = W->J;
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  ac_or_ws w;
  ac_or_ws_init(&w, J->cs, J->o, J->sc, J->r->formats, J->tprec, J->o->prec_cap > 0 ? J->o->prec_cap : 1L << 16);
  if (J->tiles) {
    tiles_work(&w, J, &W->st);
    goto done;
  }
  const int64_t chunk = 1;   /* one row at a time: no idle thread behind a chunk of the heaviest rows */
  for (;;) {
    int64_t k0 = (int64_t)atomic_fetch_add(&J->next, chunk);
    if (k0 >= J->nlist) break;
    int64_t k1 = k0 + chunk < J->nlist ? k0 + chunk : J->nlist;
    for (int64_t k = k0; k < k1; k++) do_row(&w, J, J->list[k], &W->st);
  }
done:
  ac_or_ws_free(&w);
  mpfr_free_cache();
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) W->cpu = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  return NULL;
}

/* The oracle's memory for this selection and the case's tensors against the memory cap. */
static int mem_check(const ac_problem *p, uint32_t formats, int64_t nsel, long threads, ac_err *e)
{
  ac_counts n;
  if (ac_problem_counts(p, &n, e)) return -1;
  double need = ac_oracle_mem_need(p, formats, nsel, threads);
  double total = need + (double)(n.q + n.k + n.v) * (double)ac_dtype_size(p->dtype) + (double)ac_features_bytes(p);
  uint64_t cap = ac_mem_cap();
  if (total > (double)cap)
    return ac_err_set(e, "the oracle needs about %.0f bytes for %lld rows and the case, more than the memory cap of %llu bytes (ATTNCHECK_MEM_CAP; --rows selects fewer)",
                      total, (long long)nsel, (unsigned long long)cap);
  return 0;
}

int ac_oracle_mem_check(const ac_case *c, const ac_oracle_opts *o, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (c->lay) return 0; /* per sequence, each checked when it runs (layout.c) */
  int64_t nrows = p->batch * p->heads * p->tq, nl = 0;
  if (nrows <= 0) return 0;
  uint8_t *sel = ac_xmalloc((size_t)nrows);
  if (ac_oracle_select_rows(p, o->rows, o->rows_seed, sel, e)) {
    free(sel);
    return -1;
  }
  for (int64_t x = 0; x < nrows; x++) nl += sel[x];
  free(sel);
  long nth = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (nth > (nl + 3) / 4) nth = (nl + 3) / 4;
  if (nth < 1) nth = 1;
  uint32_t formats = (o->formats | (1u << p->dtype) | (1u << ac_or_tdtype(p, 'o'))) & ((1u << AC_NDTYPES) - 1);
  return mem_check(p, formats, nl, nth, e);
}

int ac_oracle_run(const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r, ac_err *e)
{
  double t0 = ac_now();
  ac_oracle_opts def;
  if (!o) { ac_oracle_opts_init(&def); o = &def; }
  if (c->lay) return ac_oracle_run_layout(c, o, r, e);   /* per sequence (layout.c) */
  memset(r, 0, sizeof *r);
  const ac_problem *p = &c->p;
  ac_or_scale sc;
  if (ac_or_scale_init(&sc, p, e)) return -1;
  if (ac_features_validate(p, e)) return -1;
  if ((p->f.used & AC_FEAT_DROPOUT) && !c->dropout_mask) return ac_err_set(e, "dropout: the case has no dropout_mask");
  if ((p->f.used & AC_FEAT_DESCALE) &&
      (ac_or_tdtype(p, 'q') == AC_F64 || ac_or_tdtype(p, 'k') == AC_F64 || ac_or_tdtype(p, 'v') == AC_F64))
    return ac_err_set(e, "descales of fp64 tensors are not supported yet");
  if (p->heads < 1 || p->kv_heads < 1 || p->heads % p->kv_heads || p->tq < 1 || p->tk < 1 || p->dk < 1 ||
      p->dv < 1 || p->batch < 1)
    return ac_err_set(e, "bad problem shape");
  r->p = *p;
  r->nrows = p->batch * p->heads * p->tq;
  uint8_t *sel = ac_xmalloc((size_t)r->nrows);
  if (ac_oracle_select_rows(p, o->rows, o->rows_seed, sel, e)) { free(sel); return -1; }
  r->formats = (o->formats | (1u << p->dtype) | (1u << ac_or_tdtype(p, 'o'))) & ((1u << AC_NDTYPES) - 1);
  r->nmu = o->nmu < 0 ? 0 : o->nmu > AC_ORACLE_NMU ? AC_ORACLE_NMU : o->nmu;
  for (int q = 0; q < r->nmu; q++) r->mu[q] = o->mu[q];
  int64_t *list = ac_xmalloc((size_t)r->nrows * sizeof *list), nl = 0;
  for (int64_t x = 0; x < r->nrows; x++)
    if (sel[x]) list[nl++] = x;
  free(sel);
  long nth = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (nth > (nl + 3) / 4) nth = (nl + 3) / 4;
  if (nth < 1) nth = 1;
  if (mem_check(p, r->formats, nl, nth, e)) { free(list); return -1; }
  r->rows = ac_xcalloc((size_t)r->nrows, sizeof *r->rows);
  if (nl < r->nrows) {   /* elements of the selected rows only, in row order */
    r->slot = ac_xmalloc((size_t)r->nrows * sizeof *r->slot);
    for (int64_t x = 0; x < r->nrows; x++) r->slot[x] = -1;
    for (int64_t k = 0; k < nl; k++) r->slot[list[k]] = k;
    r->nsel = nl;
  }
  int64_t ns = ac_oracle_nstored(r);
  r->elems = ac_xcalloc((size_t)(ns * p->dv), sizeof *r->elems);
  int tprec = o->lse_f64 ? 53 : 24;
  for (int f = 0; f < AC_NDTYPES; f++)
    if (r->formats & (1u << f)) {
      r->o_round[f] = ac_xcalloc((size_t)(ns * p->dv), sizeof **r->o_round);
      if (ac_dtype_get((ac_dtype)f)->prec > tprec) tprec = ac_dtype_get((ac_dtype)f)->prec;
    }
  for (int64_t x = 0; x < r->nrows; x++) r->rows[x].m = r->rows[x].lse = NAN;
  job J = {.cs = c, .o = o, .r = r, .sc = &sc, .tprec = tprec};
  path_choose(&J.path, c, o, r->formats);
  J.list = list;
  J.nlist = nl;
  if (ac_bt_fwd_case_applies(c, o, r->formats, nl)) {
    J.tiles = ac_bt_fwd_tiles(p, list, nl, &J.ntiles);
    ac_gemm_threads();   /* the library loads here, before the workers start (gemm.c) */
  }
  J.heads = ac_xcalloc((size_t)(p->batch * p->kv_heads), sizeof *J.heads);
  for (int64_t k = 0; k < nl; k++) {
    int64_t x = list[k], i = x % p->tq, bh = x / p->tq;
    if (p->f.used || ac_visible_count(p, i) > 0) J.heads[(bh / p->heads) * p->kv_heads + ac_kv_head(p, bh % p->heads)].rows_left++;
  }
  pthread_mutex_init(&J.mu, NULL);
  pthread_cond_init(&J.cv, NULL);
  atomic_init(&J.next, 0);
  worker *ws = ac_xcalloc((size_t)nth, sizeof *ws);
  pthread_t *th = ac_xcalloc((size_t)nth, sizeof *th);
  long started = 0;   /* threads that could not start leave their rows to the others */
  for (long k = 0; k < nth; k++) ws[k].J = &J;
  while (started < nth && pthread_create(&th[started], NULL, work, &ws[started]) == 0) started++;
  if (started == 0) {   /* this thread does the work; its MPFR exponent range is restored */
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    work(&ws[0]);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
  }
  for (long k = 0; k < started; k++) pthread_join(th[k], NULL);
  for (long k = 0; k < nth; k++) {
    r->n_exact += ws[k].st.exact;
    r->n_rounded += ws[k].st.rounded;
    r->n_unresolved += ws[k].st.unresolved;
    r->n_fallback += ws[k].st.fallback;
    r->n_blas += ws[k].st.blas;
    if (ws[k].st.max_prec > r->max_prec) r->max_prec = ws[k].st.max_prec;
    r->cpu_seconds += ws[k].cpu;
    if (ws[k].cpu > r->cpu_max_thread) r->cpu_max_thread = ws[k].cpu;
  }
  r->threads = started ? (int)started : 1;
  r->rows_done = nl;
  for (int64_t x = 0; x < r->nrows; x++) {
    if (r->rows[x].selected) continue;
    r->rows[x].lse_how = AC_HOW_NOT_SELECTED;   /* its elements are not stored (slot -1) */
  }
  for (int64_t k = 0; k < p->batch * p->kv_heads; k++) {
    ac_or_head_free(&J.heads[k].h);
    ac_bt_head_free(&J.heads[k].bt);
  }
  free(J.heads);
  free(J.tiles);
  pthread_mutex_destroy(&J.mu);
  pthread_cond_destroy(&J.cv);
  free(ws); free(th); free(list);
  r->seconds = ac_now() - t0;
  return 0;
}

void ac_oracle_result_free(ac_oracle_result *r)
{
  if (!r) return;
  free(r->rows);
  free(r->slot);
  free(r->elems);
  for (int f = 0; f < AC_NDTYPES; f++) free(r->o_round[f]);
  memset(r, 0, sizeof *r);
}
