/* metamorphic_layout.c: metamorphic checks of the serving layouts (docs/layouts.md), without
 * the oracle and on every row. A varlen or paged batch must give each of its sequences what
 * that sequence gives alone (a batch of one; a paged one keeps every page, the block-table
 * row and cache length of that sequence only), and a paged cache what the same keys give
 * packed densely (a varlen batch of the same sequences). The exact outputs are equal, so the
 * two runs agree within twice the class bound of each sequence's dense case from its inputs
 * alone (metamorphic.c, ac_meta_dense_tols). Cases with variants are not checked. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "variants.h"

enum { T_ALONE = 0, T_DENSE };

/* Copies the rows of tokens [t0, t0 + n) of a carrier tensor [H][T][D] into [H][T2][D] at s0. */
static void copy_tokens(ac_dtype dt, const void *src, int64_t T, void *dst, int64_t T2, int64_t H, int64_t D, int64_t t0,
                        int64_t s0, int64_t n)
{
  size_t es = ac_dtype_size(dt);
  for (int64_t h = 0; h < H; h++)
    memcpy((char *)dst + (size_t)((h * T2 + s0) * D) * es, (const char *)src + (size_t)((h * T + t0) * D) * es,
           (size_t)(n * D) * es);
}

/* Sequence b alone, in the case's own layout. */
static int build_alone(const ac_case *c, int64_t b, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  int64_t tq = ac_layout_tq(c, b), tk = ac_layout_tk(c, b);
  int paged = (p->f.used & AC_FEAT_PAGED) != 0;
  ac_case_init(out);
  out->p = *p;
  ac_layout_alloc(out, paged ? AC_FEAT_PAGED : AC_FEAT_VARLEN, 1, p->l.page_size, p->l.max_pages);
  out->p.f.used |= p->f.used & AC_FEAT_ALL;
  out->p.l.num_pages = p->l.num_pages;
  out->lay->cu_q[1] = (int32_t)tq;
  if (paged) {
    out->lay->cache_seqlens[0] = (int32_t)tk;
    memcpy(out->lay->block_table, c->lay->block_table + b * p->l.max_pages, (size_t)p->l.max_pages * sizeof(int32_t));
  } else {
    out->lay->cu_k[1] = (int32_t)tk;
  }
  ac_layout_finish(out);
  if (ac_case_alloc(out, e)) return -1;
  copy_tokens(p->dtype, c->q, p->tq, out->q, tq, p->heads, p->dk, c->lay->cu_q[b], 0, tq);
  if (paged) {
    memcpy(out->k, c->k, ac_case_bytes(c, 'k'));
    memcpy(out->v, c->v, ac_case_bytes(c, 'v'));
  } else {
    copy_tokens(p->dtype, c->k, p->tk, out->k, tk, p->kv_heads, p->dk, c->lay->cu_k[b], 0, tk);
    copy_tokens(p->dtype, c->v, p->tk, out->v, tk, p->kv_heads, p->dv, c->lay->cu_k[b], 0, tk);
  }
  ac_features_copy(out, c);
  return ac_layout_validate(out, e);
}

/* A paged case as a varlen batch: each sequence's keys packed in order. */
static int build_dense(const ac_case *c, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  int64_t n = p->l.nseq;
  ac_case_init(out);
  out->p = *p;
  ac_layout_alloc(out, AC_FEAT_VARLEN, n, 0, 0);
  out->p.f.used |= p->f.used & AC_FEAT_ALL;
  for (int64_t b = 0; b < n; b++) {
    out->lay->cu_q[b + 1] = c->lay->cu_q[b + 1];
    out->lay->cu_k[b + 1] = out->lay->cu_k[b] + c->lay->cache_seqlens[b];
  }
  if (out->lay->cu_k[n] < 1) return ac_err_set(e, "no key to pack");
  ac_layout_finish(out);
  if (ac_case_alloc(out, e)) return -1;
  memcpy(out->q, c->q, ac_case_bytes(c, 'q'));
  for (int64_t b = 0; b < n; b++)
    for (int64_t j = 0; j < ac_layout_tk(c, b); j++) {
      int64_t t = ac_layout_key(c, b, j);
      copy_tokens(p->dtype, c->k, p->tk, out->k, out->p.tk, p->kv_heads, p->dk, t, out->lay->cu_k[b] + j, 1);
      copy_tokens(p->dtype, c->v, p->tk, out->v, out->p.tk, p->kv_heads, p->dv, t, out->lay->cu_k[b] + j, 1);
    }
  ac_features_copy(out, c);
  return ac_layout_validate(out, e);
}

/* Compares the rows of sequence b: the original run ra and the transformed rb (whose carrier
 * places token i of b at row offset t0b). */
static void compare_seq(const ac_case *c, const ac_precision *prec, int64_t b, const ac_run_result *ra,
                        const ac_case *tc, const ac_run_result *rb, int64_t t0b, ac_meta_result *m)
{
  const ac_problem *p = &c->p;
  ac_case sub;
  ac_err e;
  double *tol = NULL;
  int64_t tq = ac_layout_tq(c, b), dv = p->dv;
  if (tq < 1) return;
  if (ac_layout_tk(c, b) > 0) {
    if (ac_layout_seq_case(c, b, &sub, &e)) return;
    tol = ac_meta_dense_tols(&sub, prec);
    ac_case_free(&sub);
  }
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < tq; i++)
      for (int64_t d = 0; d < dv; d++) {
        size_t ia = (size_t)((h * p->tq + c->lay->cu_q[b] + i) * dv + d), ib = (size_t)((h * tc->p.tq + t0b + i) * dv + d);
        if ((ra->unwritten && ra->unwritten[ia]) || (rb->unwritten && rb->unwritten[ib])) continue;
        double va = ac_load(p->dtype, ra->o, ia), vb = ac_load(p->dtype, rb->o, ib), t = tol ? tol[(h * tq + i) * dv + d] : 0;
        double diff = fabs(va - vb), ratio;
        m->n_compared++;
        if (isnan(va) && isnan(vb)) continue;
        if (isnan(va) || isnan(vb) || !isfinite(diff)) ratio = INFINITY;
        else if (va == vb) ratio = 0;
        else ratio = t > 0 ? diff / t : INFINITY;
        if (ratio > m->worst_ratio || (m->i < 0 && ratio > 0)) {
          m->worst_ratio = ratio;
          m->b = b, m->h = h, m->i = i, m->d = d;
          m->a = va, m->t = vb, m->diff = diff, m->tol = t;
        }
        if (ratio > 1) m->n_bad++;
      }
  free(tol);
}

int ac_meta_layout_check(const ac_kernel *k, const ac_run_opts *ro, const ac_case *c, const ac_precision *prec,
                         const ac_run_result *ra, ac_meta_result *m, ac_err *e)
{
  const ac_problem *p = &c->p;
  if ((p->f.used & AC_FEAT_ALL) || !c->lay || !isfinite(ac_problem_scale(p))) return 0;
  for (int x = 0; x < 3; x++) {
    const void *t = x == 0 ? c->q : x == 1 ? c->k : c->v;
    for (size_t i = 0, n = ac_case_bytes(c, "qkv"[x]) / ac_dtype_size(p->dtype); i < n; i++)
      if (!isfinite(ac_load(p->dtype, t, i))) return 0;
  }
  ac_rng r;
  ac_rng_init(&r, ac_case_hash(c) ^ 0x6c61796f7574ull, 0);
  int which = (p->f.used & AC_FEAT_PAGED) && ac_rng_below(&r, 2) ? T_DENSE : T_ALONE;
  int64_t b = (int64_t)ac_rng_below(&r, (uint64_t)p->l.nseq);
  for (int64_t x = 0; x < p->l.nseq && ac_layout_tq(c, b) == 0; x++) b = (b + 1) % p->l.nseq;
  ac_case tc;
  int brc = which == T_DENSE ? build_dense(c, &tc, e) : build_alone(c, b, &tc, e);
  if (brc) {
    ac_case_free(&tc);
    return 0;   /* nothing to compare (e.g. no key at all to pack) */
  }
  snprintf(m->transform, sizeof m->transform, which == T_DENSE ? "paged keys packed densely (varlen)"
                                                               : "sequence %lld alone", (long long)b);
  char why[256];
  ac_run_result rb;
  ac_err he;
  memset(&rb, 0, sizeof rb);
  if (!ac_kernel_supports(k, &tc.p, why, sizeof why) || ac_harness_run(k, &tc, ro, &rb, &he) || rb.status != AC_RUN_OK ||
      !rb.o || !rb.guard_ok) {
    ac_run_result_free(&rb);
    ac_case_free(&tc);
    return 0;
  }
  m->checked = 1;
  if (which == T_DENSE)
    for (int64_t s = 0; s < p->l.nseq; s++) compare_seq(c, prec, s, ra, &tc, &rb, c->lay->cu_q[s], m);
  else
    compare_seq(c, prec, b, ra, &tc, &rb, 0, m);
  m->bad = m->n_bad > 0;
  ac_run_result_free(&rb);
  ac_case_free(&tc);
  return 0;
}
