/* gradlayout.c: the exact backward of a varlen case (docs/backward.md §7): every sequence is
 * the dense case of its own that the forward's layout oracle uses (layout.h,
 * ac_layout_seq_case: its rows of q and dO, its keys, its rows of the bias and boolean mask,
 * its ALiBi slopes), computed by the dense backward (grad.c) and mapped back into the carrier's
 * packed rows (dQ: h * total_q + cu_q[b] + i) and columns (dK, dV: kvh * total_k + cu_k[b] + j).
 * A sequence without queries has dK = dV = 0 for its keys; one without keys has dQ = 0 (its
 * one hidden key is no column). dσ_h, summed over the sequences, is the sum of their enclosures
 * (each the binary64 value and proven bound of its sequence; the additions' roundings added to the
 * bound), correctly rounded to binary32, the ABI's dσ, where both ends of that enclosure round
 * alike, else unresolved (counted, never judged). Paged cases are refused: a paged KV cache is an
 * inference layout, training kernels take varlen batches. The statistics count what the
 * sequences computed (a sequence asked for columns only computes one row of dQ besides). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"
#include "layout.h"

/* The list "x,y,..." of the selected entries of sel over the sequence's n rows (or columns)
 * per head: entry h * len + i of the sequence is carrier entry h * total + first + i. "0" (one
 * entry, dropped when mapping back) when none is; *any says whether one is. */
static char *seq_list(const uint8_t *sel, int64_t heads, int64_t total, int64_t first, int64_t len, int *any)
{
  int64_t n = 0;
  for (int64_t h = 0; h < heads; h++)
    for (int64_t i = 0; i < len; i++) n += sel[h * total + first + i];
  *any = n > 0;
  size_t cap = (size_t)(n + 1) * 21 + 2, at = 0;
  char *s = ac_xmalloc(cap);
  snprintf(s, cap, "0");
  for (int64_t h = 0; h < heads; h++)
    for (int64_t i = 0; i < len; i++)
      if (sel[h * total + first + i])
        at += (size_t)snprintf(s + at, cap - at, "%s%lld", at ? "," : "", (long long)(h * len + i));
  return s;
}

/* Entry x of the sequence's tensor S into entry X of the carrier's T. */
static void put(ac_grad_tensor *T, int64_t X, const ac_grad_tensor *S, int64_t x)
{
  if (T->slot[X] < 0 || S->slot[x] < 0) return;
  int64_t d = T->d, D = T->slot[X] * d, s = S->slot[x] * d;
  memcpy(&T->el[D], &S->el[s], (size_t)d * sizeof *T->el);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (T->bits[f] && S->bits[f]) memcpy(&T->bits[f][D], &S->bits[f][s], (size_t)d * sizeof *T->bits[f]);
}

/* Exact zeros in the selected columns of keys [k0, k0 + tk) (a sequence no query sees). */
static void zero_cols(ac_grad_result *r, ac_grad_tensor *T, int64_t k0, int64_t tk)
{
  const ac_problem *p = &r->p;
  for (int64_t kvh = 0; kvh < p->kv_heads; kvh++)
    for (int64_t j = 0; j < tk; j++) {
      int64_t s = T->slot[kvh * p->tk + k0 + j];
      for (int64_t t = 0; s >= 0 && t < T->d; t++) {
        T->el[s * T->d + t] = (ac_grad_elem){0.0, 0.0, AC_HOW_EXACT, AC_ACCEPT_VALUE};
        for (int f = 0; f < AC_NDTYPES; f++)
          if (T->bits[f]) T->bits[f][s * T->d + t] = ac_encode_f64((ac_dtype)f, 0.0);
        r->n_exact++, r->n_zero++;
      }
    }
}

/* Sequence b's result sr into the carrier's r: its rows, columns, statistics and dσ terms. */
static void seq_merge(const ac_case *c, int64_t b, const ac_grad_result *sr, ac_grad_result *r, int any_cols)
{
  const ac_problem *p = &c->p;
  const int64_t tq = ac_layout_tq(c, b), tk = ac_layout_tk(c, b), q0 = c->lay->cu_q[b], k0 = c->lay->cu_k[b];
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < tq; i++) put(&r->dq, h * p->tq + q0 + i, &sr->dq, h * tq + i);
  for (int64_t kvh = 0; any_cols && kvh < p->kv_heads; kvh++)
    for (int64_t j = 0; j < tk; j++) {
      put(&r->dk, kvh * p->tk + k0 + j, &sr->dk, kvh * tk + j);
      put(&r->dv, kvh * p->tk + k0 + j, &sr->dv, kvh * tk + j);
    }
  int64_t ndx = 0, ndr = 0, ndu = 0, ndz = 0; /* its dσ elements, which are no element of the carrier's */
  for (int64_t h = 0; h < r->dsink.nsel; h++) {
    const ac_grad_elem *s = ac_grad_at(&sr->dsink, h, 0);
    ac_grad_elem *d = &r->dsink.el[r->dsink.slot[h]];
    double sum = d->g + s->g; /* |sum - (d->g + s->g)| <= 2^-53 |sum| */
    d->g_err = nextafter(nextafter(d->g_err + s->g_err, INFINITY) + 0x1p-53 * fabs(sum), INFINITY);
    d->g = sum;
    d->accept |= s->accept;
    if (s->how == AC_HOW_UNRESOLVED)
      ndu++;
    else if (s->how == AC_HOW_EXACT)
      ndx++, ndz += s->g == 0;
    else
      ndr++;
  }
  r->n_exact += sr->n_exact - ndx, r->n_rounded += sr->n_rounded - ndr, r->n_zero += sr->n_zero - ndz;
  r->n_unresolved += sr->n_unresolved - ndu, r->n_highprec += sr->n_highprec, r->n_fast += sr->n_fast;
  r->n_blas += sr->n_blas;
  if (sr->passes > r->passes) r->passes = sr->passes;
  if (sr->max_prec > r->max_prec) r->max_prec = sr->max_prec;
}

/* dσ_h: the sum of the sequences' values and bounds, correctly rounded to binary32 where both ends
 * of it round alike; else unresolved. */
static void dsink_finish(ac_grad_result *r)
{
  ac_grad_tensor *T = &r->dsink;
  for (int64_t h = 0; h < T->nsel; h++) {
    ac_grad_elem *d = &T->el[T->slot[h]];
    uint64_t *bits = &T->bits[AC_F32][T->slot[h]];
    if (d->accept != AC_ACCEPT_VALUE) {
      *d = (ac_grad_elem){NAN, 0.0, AC_HOW_EXACT, AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF};
      *bits = ac_nan_bits(AC_F32);
      r->n_exact++;
      continue;
    }
    double lo = d->g_err > 0 ? nextafter(d->g - d->g_err, -INFINITY) : d->g;
    double hi = d->g_err > 0 ? nextafter(d->g + d->g_err, INFINITY) : d->g;
    uint64_t a = ac_encode_f64(AC_F32, lo), b = ac_encode_f64(AC_F32, hi);
    if (ac_bits_iszero(AC_F32, a) && ac_bits_iszero(AC_F32, b)) a = b = 0; /* a zero of either sign: +0 */
    *bits = a;
    if (a != b) {
      d->how = AC_HOW_UNRESOLVED;
      r->n_unresolved++;
    } else if (d->g_err > 0) {
      d->how = AC_HOW_ROUNDED;
      r->n_rounded++;
    } else {
      d->how = AC_HOW_EXACT;
      r->n_exact++;
      r->n_zero += d->g == 0;
    }
  }
}

/* The dense backward of sequence b (cc: the case with dO) on the selected rows and columns. */
static int seq_run(const ac_case *cc, int64_t b, const ac_grad_opts *o, const uint8_t *rs, const uint8_t *cs,
                   ac_grad_result *r, ac_err *e)
{
  const ac_problem *p = &cc->p;
  const int64_t tk = ac_layout_tk(cc, b);
  int any_r, any_c;
  char *rl = seq_list(rs, p->heads, p->tq, cc->lay->cu_q[b], ac_layout_tq(cc, b), &any_r);
  char *cl = seq_list(cs, p->kv_heads, p->tk, cc->lay->cu_k[b], tk, &any_c);
  int rc = 0;
  if (ac_layout_tq(cc, b) == 0) {   /* no query sees its keys */
    zero_cols(r, &r->dk, cc->lay->cu_k[b], tk);
    zero_cols(r, &r->dv, cc->lay->cu_k[b], tk);
  } else if (any_r || any_c || r->dsink.nsel) {
    ac_case sub;
    ac_grad_result sr;
    ac_grad_opts so = *o;
    so.rows = rl, so.cols = cl;
    rc = ac_layout_seq_case(cc, b, &sub, e);
    if (rc == 0) {
      rc = ac_grad_run(&sub, sub.dout, &so, &sr, e);
      if (rc == 0) {   /* "0" stood for no row: the sequence's dQ rows stay unmapped */
        if (!any_r) memset(sr.dq.slot, 0xff, (size_t)sr.dq.n * sizeof *sr.dq.slot);
        seq_merge(cc, b, &sr, r, any_c);
        ac_grad_result_free(&sr);
      }
      ac_case_free(&sub);
    }
    if (rc != 0) {
      char m[sizeof e->msg];
      snprintf(m, sizeof m, "%s", e->msg);
      ac_err_set(e, "sequence %lld: %s", (long long)b, m);
    }
  }
  free(rl);
  free(cl);
  return rc;
}

int ac_grad_run_layout(const ac_case *c, const void *dout, const ac_grad_opts *o, ac_grad_result *r, ac_err *e)
{
  const ac_problem *p = &c->p;
  memset(r, 0, sizeof *r);
  if (p->f.used & AC_FEAT_PAGED)
    return ac_err_set(e, "the backward oracle takes varlen batches, not paged KV caches (an inference layout)");
  if (ac_layout_validate(c, e)) return -1;
  int64_t nrows = p->heads * p->tq, ncols = p->kv_heads * p->tk;
  uint8_t *rs = ac_xmalloc((size_t)nrows + 1), *cs = ac_xmalloc((size_t)ncols + 1);
  if (ac_gr_select(p, o, rs, cs, e)) {
    free(rs), free(cs);
    return -1;
  }
  double t0 = ac_now();
  r->p = *p;
  r->formats = (o->formats | (1u << p->dtype)) & ((1u << AC_NDTYPES) - 1);
  ac_gr_tensor_init(&r->dq, nrows, p->dk, rs, r->formats);
  ac_gr_tensor_init(&r->dk, ncols, p->dk, cs, r->formats);
  ac_gr_tensor_init(&r->dv, ncols, p->dv, cs, r->formats);
  uint8_t *hs = ac_xmalloc((size_t)p->heads + 1);
  memset(hs, (p->f.used & AC_FEAT_SINKS) != 0, (size_t)p->heads);   /* dσ_h of every head */
  ac_gr_tensor_init(&r->dsink, p->heads, 1, hs, 1u << AC_F32);      /* the ABI's dσ: binary32 */
  free(hs);
  for (int64_t h = 0; h < r->dsink.nsel; h++) r->dsink.el[h] = (ac_grad_elem){0.0, 0.0, AC_HOW_EXACT, AC_ACCEPT_VALUE};
  ac_case cc = *c;   /* the case with this dO, for the sequences' rows of it */
  cc.dout = (void *)dout;
  int rc = 0;
  for (int64_t b = 0; rc == 0 && b < p->l.nseq; b++) rc = seq_run(&cc, b, o, rs, cs, r, e);
  free(rs), free(cs);
  if (rc != 0) {
    ac_grad_result_free(r);
    return -1;
  }
  dsink_finish(r);
  r->seconds = ac_now() - t0;
  return 0;
}
