/* meanv.c: empty rows as the mean of V (the mean-v convention, docs/numerics.md §5).
 *
 * JAX (jax.nn.dot_product_attention) and MLX (mx.fast.scaled_dot_product_attention) replace a
 * masked score by a large finite negative number instead of -inf, so a row that sees no key gives
 * every key the same score and the softmax the same weight: o_i = (1/n) Σ_j V_j over the n keys
 * the kernel was given for the row's sequence and kv head (every key of a dense case, its own
 * keys for a sequence of a serving layout), whatever the mask, window or boolean mask hid. That
 * is the oracle's row for q = 0 over those keys with nothing masked (every score 0): an exact
 * rational, decided by the exact-case test and judged with the budget terms of equal weights.
 * V enters as the exact values the oracle reads (quantized codes times their scales, descaled
 * values), which binary64 holds. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "layout.h"
#include "oracle.h"
#include "oracle_int.h"

/* A deep copy of r. */
static void result_copy(const ac_oracle_result *r, ac_oracle_result *out)
{
  *out = *r;
  int64_t ns = ac_oracle_nstored(r), dv = r->p.dv;
  out->rows = ac_xmalloc((size_t)r->nrows * sizeof *r->rows);
  memcpy(out->rows, r->rows, (size_t)r->nrows * sizeof *r->rows);
  if (r->slot) {
    out->slot = ac_xmalloc((size_t)r->nrows * sizeof *r->slot);
    memcpy(out->slot, r->slot, (size_t)r->nrows * sizeof *r->slot);
  }
  out->elems = ac_xmalloc((size_t)(ns * dv + 1) * sizeof *r->elems);
  memcpy(out->elems, r->elems, (size_t)(ns * dv) * sizeof *r->elems);
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!r->o_round[f]) continue;
    out->o_round[f] = ac_xmalloc((size_t)(ns * dv + 1) * sizeof **r->o_round);
    memcpy(out->o_round[f], r->o_round[f], (size_t)(ns * dv) * sizeof **r->o_round);
  }
}

/* The case whose row (b, kvh) is the mean of V over the n keys of sequence b (key j at carrier
 * position key[j], NULL: j itself) and kv head kvh: binary64, q = k = 0 (dk 1), no mask. */
static int aux_case(const ac_case *c, int64_t nb, const int64_t *bs, int64_t n, const int64_t *key, ac_case *a,
                    ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_case_init(a);
  a->p.dtype = AC_F64;
  a->p.mask = AC_MASK_NONE;
  a->p.batch = nb;
  a->p.heads = a->p.kv_heads = p->kv_heads;
  a->p.tq = 1, a->p.tk = n, a->p.dk = 1, a->p.dv = p->dv;
  a->p.scale_is_default = 1, a->p.scale = 1.0;
  if (ac_case_alloc(a, e) != 0) return -1;
  ac_dtype vt = ac_or_tdtype(p, 'v');
  double *v = a->v;
  for (int64_t x = 0; x < nb; x++)
    for (int64_t h = 0; h < p->kv_heads; h++) {
      double ds = ac_or_descale(c, 'v', bs[x], h);
      for (int64_t j = 0; j < n; j++) {
        int64_t t = key ? key[j] : j;
        size_t src = (size_t)(((bs[x] * p->kv_heads + h) * p->tk + t) * p->dv);
        double *dst = v + ((x * p->kv_heads + h) * n + j) * p->dv;
        for (int64_t d = 0; d < p->dv; d++) dst[d] = ac_load(vt, c->v, src + (size_t)d) * ds;
      }
    }
  return 0;
}

/* Row x of out (selected, empty) becomes row y of the auxiliary result; its LSE stays the empty
 * row's (the convention judges it). */
static void take_row(ac_oracle_result *out, int64_t x, const ac_oracle_result *ar, int64_t y)
{
  int64_t dv = out->p.dv, ds = ac_oracle_slot(out, x), ss = ac_oracle_slot(ar, y);
  ac_oracle_row keep = out->rows[x], *row = &out->rows[x];
  *row = ar->rows[y];
  row->lse = keep.lse, row->lse_f32 = keep.lse_f32, row->lse_f64 = keep.lse_f64;
  row->lse_how = keep.lse_how, row->lse_accept = keep.lse_accept;
  row->lse_alt_how = keep.lse_alt_how, row->lse_alt_f32 = keep.lse_alt_f32;
  row->alibi_shift = keep.alibi_shift, row->lse_alt = keep.lse_alt, row->lse_alt_err = keep.lse_alt_err;
  memcpy(&out->elems[ds * dv], &ar->elems[ss * dv], (size_t)dv * sizeof *out->elems);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (out->o_round[f] && ar->o_round[f])
      memcpy(&out->o_round[f][ds * dv], &ar->o_round[f][ss * dv], (size_t)dv * sizeof **out->o_round);
}

static int is_empty(const ac_oracle_result *r, int64_t x)
{
  return r->rows[x].selected && (r->rows[x].lse_accept & AC_ACCEPT_EMPTY);
}

static int aux_run(const ac_case *a, const ac_oracle_result *r, ac_oracle_result *ar, ac_err *e)
{
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  o.formats = r->formats;
  o.nmu = r->nmu;
  for (int q = 0; q < r->nmu; q++) o.mu[q] = r->mu[q];
  return ac_oracle_run(a, &o, ar, e);
}

/* Dense case: one auxiliary case of every batch and kv head. */
static int mean_v_dense(const ac_case *c, ac_oracle_result *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  int64_t *bs = ac_xmalloc((size_t)p->batch * sizeof *bs);
  for (int64_t b = 0; b < p->batch; b++) bs[b] = b;
  ac_case a;
  int rc = aux_case(c, p->batch, bs, p->tk, NULL, &a, e);
  free(bs);
  ac_oracle_result ar;
  if (rc == 0) rc = aux_run(&a, out, &ar, e);
  ac_case_free(&a);
  if (rc != 0) return -1;
  int64_t g = p->heads / p->kv_heads;
  for (int64_t x = 0; x < out->nrows; x++) {
    int64_t bh = x / p->tq, h = bh % p->heads, b = bh / p->heads;
    if (is_empty(out, x)) take_row(out, x, &ar, b * p->kv_heads + h / g);
  }
  ac_oracle_result_free(&ar);
  return 0;
}

/* Serving layout: sequence by sequence over its own keys (a sequence without keys keeps its
 * empty rows: no key to average). */
static int mean_v_layout(const ac_case *c, ac_oracle_result *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  int64_t g = p->heads / p->kv_heads;
  for (int64_t b = 0; b < p->l.nseq; b++) {
    int64_t tq = ac_layout_tq(c, b), q0 = c->lay->cu_q[b], n = ac_layout_tk(c, b), any = 0;
    for (int64_t h = 0; h < p->heads && !any; h++)
      for (int64_t i = 0; i < tq && !any; i++) any = is_empty(out, h * p->tq + q0 + i);
    if (!any || n <= 0) continue;
    int64_t *key = ac_xmalloc((size_t)n * sizeof *key), zero = 0;
    for (int64_t j = 0; j < n; j++) key[j] = ac_layout_key(c, b, j);
    ac_case a;
    int rc = aux_case(c, 1, &zero, n, key, &a, e);
    free(key);
    ac_oracle_result ar;
    if (rc == 0) rc = aux_run(&a, out, &ar, e);
    ac_case_free(&a);
    if (rc != 0) return -1;
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < tq; i++)
        if (is_empty(out, h * p->tq + q0 + i)) take_row(out, h * p->tq + q0 + i, &ar, h / g);
    ac_oracle_result_free(&ar);
  }
  return 0;
}

int ac_oracle_mean_v(const ac_case *c, const ac_oracle_result *r, ac_oracle_result *out, ac_err *e)
{
  result_copy(r, out);
  int64_t any = 0;
  for (int64_t x = 0; x < r->nrows && !any; x++) any = is_empty(r, x);
  if (!any) return 0;
  int rc = c->lay ? mean_v_layout(c, out, e) : mean_v_dense(c, out, e);
  if (rc != 0) {
    char m[sizeof e->msg];
    snprintf(m, sizeof m, "%s", e->msg);
    ac_oracle_result_free(out);
    return ac_err_set(e, "mean-v empty rows: %s", m);
  }
  return 0;
}
