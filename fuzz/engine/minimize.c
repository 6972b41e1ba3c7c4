/* minimize.c: shrink a finding while it still holds: the batch and head of the worst element,
 * then the attention variants it does not need, then, until nothing smaller holds, halves of
 * every dimension and dropped ranges of rows, keys and columns (delta debugging; the variant
 * tensors are cut with them, fuzz/engine/slice.c), then simpler values (zeros, fewer significant bits, small
 * integers), greedily, within an evaluation and time budget. A layout case loses sequences and
 * tokens instead (fuzz/engine/layout_edit.c). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "variants.h"

typedef struct {
  ac_case cur;
  ac_holds_fn holds;
  void *ctx;
  ac_min_opts *mo;
  double deadline;
} mstate;

static int budget_left(mstate *m) { return m->mo->evals < m->mo->max_evals && ac_now() < m->deadline; }

/* Takes ownership of cand: keeps it as the current case when the finding still holds. */
static int try_case(mstate *m, ac_case *cand)
{
  if (!budget_left(m)) {
    ac_case_free(cand);
    return 0;
  }
  m->mo->evals++;
  if (m->holds(cand, m->ctx)) {
    ac_case_free(&m->cur);
    m->cur = *cand;
    return 1;
  }
  ac_case_free(cand);
  return 0;
}

static int try_slice(mstate *m, const ac_slice *s)
{
  ac_case cand;
  ac_err e;
  if (ac_case_slice(&m->cur, s, &cand, &e)) return 0;
  return try_case(m, &cand);
}

static int strided(const ac_problem *p)
{
  for (int i = 0; i < 4; i++)
    if (p->q_stride[i] || p->k_stride[i] || p->v_stride[i] || p->o_stride[i]) return 1;
  return 0;
}

static int64_t clampi(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

static int try_drop(mstate *m, int which, int64_t a, int64_t n)
{
  ac_case cand;
  ac_err e;
  if (ac_case_drop(&m->cur, which, a, n, &cand, &e)) return 0;
  return try_case(m, &cand);
}

static int64_t dim_len(const ac_problem *p, int which)
{
  return which == 0 ? p->tq : which == 1 ? p->tk : which == 2 ? p->dk : p->dv;
}

/* Halve one dimension (0 tq, 1 tk, 2 dk, 3 dv) while the finding holds: the rows up to and at
 * the hint (rows), the hint column (dv), the first half, the second half. */
static int halve_dim(mstate *m, int which, int64_t *hint)
{
  int any = 0;
  for (int round = 0; round < 64 && budget_left(m); round++) {
    const ac_problem *p = &m->cur.p;
    int64_t len = dim_len(p, which);
    if (len <= 1) break;
    int64_t h = clampi(*hint, 0, len - 1);
    int64_t cand[4][2];
    int nc = 0;
    if (which == 0) { cand[nc][0] = 0; cand[nc][1] = h + 1; nc++; cand[nc][0] = h; cand[nc][1] = 1; nc++; }
    if (which == 3) { cand[nc][0] = h; cand[nc][1] = 1; nc++; }
    cand[nc][0] = 0; cand[nc][1] = len / 2; nc++;
    if (nc < 4) { cand[nc][0] = len / 2; cand[nc][1] = len - len / 2; nc++; }
    int progressed = 0;
    for (int k = 0; k < nc && !progressed; k++) {
      if (cand[k][1] < 1 || cand[k][1] >= len) continue;
      ac_slice s;
      ac_slice_all(p, &s);
      int64_t *a = which == 0 ? &s.i0 : which == 1 ? &s.j0 : which == 2 ? &s.x0 : &s.y0;
      int64_t *n = which == 0 ? &s.ni : which == 1 ? &s.nj : which == 2 ? &s.ndk : &s.ndv;
      *a = cand[k][0];
      *n = cand[k][1];
      if (try_slice(m, &s)) {
        progressed = 1;
        *hint = (h >= cand[k][0] && h < cand[k][0] + cand[k][1]) ? h - cand[k][0] : cand[k][1] / 2;
      }
    }
    if (!progressed) break;
    any = 1;
  }
  return any;
}

/* Drop ranges of one dimension (delta debugging): len/4, len/8, ..., 1 rows, keys or columns
 * at a time (halves are halve_dim's), at both ends always and anywhere between them while a
 * size takes at most MIN_DROP_TRIES ranges, so that a finding that needs the first and the
 * last key loses the keys between them. */
#define MIN_DROP_TRIES 64
static int drop_dim(mstate *m, int which, int64_t *hint)
{
  int any = 0;
  int64_t len0 = dim_len(&m->cur.p, which);
  for (int64_t chunk = len0 >= 4 ? len0 / 4 : 1; chunk >= 1 && budget_left(m); chunk /= 2) {
    for (int64_t a = 0; a < dim_len(&m->cur.p, which) && budget_left(m); a += chunk) {
      int64_t len = dim_len(&m->cur.p, which), n = chunk < len - a ? chunk : len - a;
      if (len / chunk > MIN_DROP_TRIES && a > 0 && a + n < len) {
        a = len - chunk - chunk;   /* only the last range remains to try */
        continue;
      }
      if (n >= len || !try_drop(m, which, a, n)) continue;
      any = 1;
      if (*hint >= a + n) *hint -= n;
      else if (*hint >= a) *hint = a > 0 ? a - 1 : 0;
      a -= chunk;   /* the range now holds the next elements */
    }
  }
  return any;
}

/* Value simplifications of one tensor; returns 1 if any was kept. */
static int simplify_values(mstate *m, int which)
{
  int any = 0;
  /* a quantized tensor's values are its codes' (src/core/quant.h): not simplified one by one */
  if (ac_tensor_quantized(&m->cur.p, "qkv"[which])) return 0;
  ac_counts n = ac_case_counts(&m->cur);
  int64_t cnt = which == 0 ? n.q : which == 1 ? n.k : n.v;
  ac_dtype t = ac_tensor_dtype(&m->cur.p, "qkv"[which]);
  /* 1: every finite value to 2, then 4 significant bits; 2: to the nearest integer when |x| >= 1 */
  for (int mode = 0; mode < 3 && budget_left(m); mode++) {
    ac_case cand;
    ac_err e;
    if (ac_case_copy(&cand, &m->cur, &e)) return any;
    void *base = which == 0 ? cand.q : which == 1 ? cand.k : cand.v;
    int changed = 0;
    for (int64_t i = 0; i < cnt; i++) {
      double v = ac_load(t, base, (size_t)i), nv = v;
      if (!isfinite(v) || v == 0) continue;
      if (mode < 2) {
        int ex;
        double fr = frexp(v, &ex);
        int bits = mode == 0 ? 2 : 4;
        nv = ldexp(round(ldexp(fr, bits)), ex - bits);
      } else if (fabs(v) >= 1) {
        nv = round(v);
      }
      if (nv != v) {
        ac_set(t, base, (size_t)i, nv);
        changed = 1;
      }
    }
    if (changed && try_case(m, &cand)) any = 1;
    else if (!changed) ac_case_free(&cand);
  }
  /* zero chunks, halving the chunk size (delta debugging) */
  for (int64_t chunk = cnt / 2; chunk >= 1 && budget_left(m); chunk /= 2) {
    if (cnt / chunk > 64) break;
    for (int64_t lo = 0; lo < cnt && budget_left(m); lo += chunk) {
      ac_case cand;
      ac_err e;
      if (ac_case_copy(&cand, &m->cur, &e)) return any;
      void *base = which == 0 ? cand.q : which == 1 ? cand.k : cand.v;
      int changed = 0;
      for (int64_t i = lo; i < lo + chunk && i < cnt; i++)
        if (!ac_bits_iszero(t, ac_load_bits(t, base, (size_t)i)) && !ac_bits_isnan(t, ac_load_bits(t, base, (size_t)i))) {
          ac_set(t, base, (size_t)i, 0.0);
          changed = 1;
        }
      if (changed && try_case(m, &cand)) any = 1;
      else if (!changed) ac_case_free(&cand);
    }
  }
  return any;
}

/* A finding that needs fewer attention variants shows without the others: each is left out
 * in turn while the finding holds. */
static void drop_features(mstate *m)
{
  for (uint32_t bit = 1; bit & AC_FEAT_ALL && budget_left(m); bit <<= 1) {
    if (!(m->cur.p.f.used & bit) || bit == AC_FEAT_MIXED_DTYPES) continue;
    ac_case cand;
    ac_err e;
    if (ac_case_without_feature(&m->cur, bit, &cand, &e) == 0) try_case(m, &cand);
  }
}

static int try_relayout(mstate *m, const ac_relayout *s)
{
  ac_case cand;
  ac_err e;
  if (ac_layout_relen(&m->cur, s, NULL, &cand, &e)) return 0;
  return try_case(m, &cand);
}

/* A layout case: the sequence of the worst row alone, each sequence dropped in turn, each
 * sequence's query and key lengths halved, then less one, until nothing smaller holds. */
static void shrink_layout(mstate *m, int64_t hint_row)
{
  for (int progressed = 1; progressed && budget_left(m);) {
    progressed = 0;
    int64_t n = m->cur.p.l.nseq, *buf = ac_xmalloc((size_t)(6 * n) * sizeof *buf), *sub = buf + 3 * n;
    ac_relayout s, t = {0, sub, sub + n, sub + 2 * n, 0};
    ac_relayout_of(&m->cur, &s, buf);
    t.page_size = s.page_size;
    int64_t keep = ac_layout_seq_of_row(&m->cur, clampi(hint_row, 0, m->cur.p.tq - 1));
    for (int64_t x = n > 1 ? -1 : n; x < n && !progressed && budget_left(m); x++) {
      t.nseq = 0;
      for (int64_t b = 0; b < n; b++)
        if (x < 0 ? b == keep : b != x) sub[t.nseq] = b, sub[n + t.nseq] = s.tq[b], sub[2 * n + t.nseq] = s.tk[b], t.nseq++;
      memmove(sub + t.nseq, sub + n, (size_t)t.nseq * sizeof *sub);   /* tq, tk: [t.nseq] each */
      memmove(sub + 2 * t.nseq, sub + 2 * n, (size_t)t.nseq * sizeof *sub);
      t.tq = sub + t.nseq, t.tk = sub + 2 * t.nseq;
      progressed = t.nseq > 0 && try_relayout(m, &t);
      t.tq = sub + n, t.tk = sub + 2 * n;
    }
    for (int step = 0; step < 4 && !progressed && budget_left(m); step++)
      for (int64_t b = 0; b < n && !progressed && budget_left(m); b++) {
        int64_t *len = &buf[(step % 2 ? 2 : 1) * n + b], was = *len;
        if (was == 0) continue;
        *len = step < 2 ? was / 2 : was - 1;
        progressed = try_relayout(m, &s);
        *len = was;
      }
    free(buf);
  }
}

int ac_minimize(const ac_case *c, int64_t hint_b, int64_t hint_h, int64_t hint_i, int64_t hint_d, ac_holds_fn holds,
                void *ctx, ac_min_opts *mo, ac_case *out, ac_err *e)
{
  mstate m;
  if (ac_case_copy(&m.cur, c, e)) return -1;
  m.holds = holds;
  m.ctx = ctx;
  m.mo = mo;
  mo->evals = 0;
  m.deadline = mo->max_seconds > 0 ? ac_now() + mo->max_seconds : INFINITY;   /* no clock unless asked */
  if (mo->max_evals <= 0) mo->max_evals = 200;
  /* the first evaluation is the case itself: a judge that keeps state (the mechanism of the
   * finding) learns it there; a finding that does not hold on its own case is not shrunk */
  mo->evals++;
  if (!holds(&m.cur, ctx)) {
    *out = m.cur;
    return 0;
  }
  int64_t hb = hint_b < 0 ? 0 : hint_b, hh = hint_h < 0 ? 0 : hint_h;
  int64_t hi = hint_i < 0 ? m.cur.p.tq / 2 : hint_i, hd = hint_d < 0 ? 0 : hint_d, hj = m.cur.p.tk - 1, hx = 0;
  if (strided(&m.cur.p)) {
    ac_slice s;
    ac_slice_all(&m.cur.p, &s);
    try_slice(&m, &s);   /* the slice is contiguous */
  }
  /* a layout case (varlen, paged): fewer and shorter sequences */
  if (m.cur.lay) {
    drop_features(&m);
    shrink_layout(&m, hint_i < 0 ? 0 : hint_i);
  }
  if (!m.cur.lay && !strided(&m.cur.p)) {
    /* batch and heads of the worst element, then any single one */
    if (m.cur.p.batch > 1) {
      ac_slice s;
      ac_slice_all(&m.cur.p, &s);
      s.b0 = clampi(hb, 0, m.cur.p.batch - 1);
      s.nb = 1;
      if (!try_slice(&m, &s))
        for (int64_t b = 0; b < m.cur.p.batch && b < 4 && m.cur.p.batch > 1; b++) {
          ac_slice_all(&m.cur.p, &s);
          s.b0 = b;
          s.nb = 1;
          if (try_slice(&m, &s)) break;
        }
    }
    if (m.cur.p.heads > 1) {
      ac_slice s;
      ac_slice_all(&m.cur.p, &s);
      int64_t h = clampi(hh, 0, m.cur.p.heads - 1);
      s.h0 = h;
      s.nh = 1;
      if (!try_slice(&m, &s)) {
        int64_t g = m.cur.p.heads / m.cur.p.kv_heads;
        ac_slice_all(&m.cur.p, &s);
        s.h0 = (h / g) * g;
        s.nh = g;
        if (g < m.cur.p.heads) try_slice(&m, &s);
      }
    }
    drop_features(&m);
    /* a defect that does not need the mask shows on the unmasked case, where one row can stand
     * for all */
    if (m.cur.p.mask != AC_MASK_NONE) {
      ac_case cand;
      if (ac_case_copy(&cand, &m.cur, e) == 0) {
        cand.p.mask = AC_MASK_NONE;
        try_case(&m, &cand);
      }
    }
    /* until nothing smaller holds: halve every dimension, then drop ranges of each */
    static const int order[4] = {0, 3, 1, 2};
    int64_t *hints[4] = {&hi, &hj, &hx, &hd};
    for (int round = 0; budget_left(&m); round++) {
      int any = 0;
      for (int k = 0; k < 4; k++) any |= halve_dim(&m, order[k], hints[order[k]]);
      if (any) continue;
      for (int k = 0; k < 4; k++) any |= drop_dim(&m, order[k], hints[order[k]]);
      if (!any) break;
    }
  }
  for (int which = 2; which >= 0 && budget_left(&m); which--) simplify_values(&m, which);
  *out = m.cur;
  return 0;
}

double ac_case_oracle_work(const ac_case *c)
{
  const ac_problem *p = &c->p;
  return (double)p->batch * (double)p->heads * (double)p->tq * (double)p->tk * (double)(p->dk + p->dv);
}

int64_t ac_case_elems(const ac_case *c)
{
  ac_counts n;
  if (ac_problem_counts(&c->p, &n, NULL)) return 0;
  return n.q + n.k + n.v;
}

void ac_case_size_str(const ac_case *c, char *buf, size_t n)
{
  const ac_problem *p = &c->p;
  snprintf(buf, n, "B%lld H%lld/%lld tq%lld tk%lld dk%lld dv%lld %s %s", (long long)p->batch, (long long)p->heads,
           (long long)p->kv_heads, (long long)p->tq, (long long)p->tk, (long long)p->dk, (long long)p->dv,
           ac_dtype_name(p->dtype), ac_mask_name(p->mask));
}
