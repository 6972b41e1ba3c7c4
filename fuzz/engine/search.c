/* search.c: the evolutionary phase: an elite pool of the cases with the largest err/E, and
 * mutations of values (relative steps that shrink when a parent stops improving), of shapes
 * (lengths to tile edges, extensions; a layout case's sequence lengths and pages,
 * fuzz/engine/layout_edit.c), of the mask and of the scale, and of the attention variants of a
 * variant case (fuzz/engine/search_variants.c). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "quant.h"

void ac_pool_init(ac_pool *p, int cap)
{
  p->e = ac_xcalloc((size_t)cap, sizeof *p->e);
  p->n = 0;
  p->cap = cap;
}

void ac_pool_free(ac_pool *p)
{
  for (int i = 0; i < p->n; i++) ac_case_free(&p->e[i].c);
  free(p->e);
  p->e = NULL;
  p->n = p->cap = 0;
}

int ac_pool_offer(ac_pool *p, const ac_case *c, const char *family, double score)
{
  return ac_pool_offer_from(p, c, family, score, -1);
}

int ac_pool_offer_from(ac_pool *p, const ac_case *c, const char *family, double score, int64_t from)
{
  if (!(score > 0) || !isfinite(score) || score >= 1e299) return 0;
  if (ac_case_elems(c) > ((int64_t)1 << 20)) return 0;   /* keep the pool small in memory */
  int slot0 = p->n < p->cap ? -1 : 0;
  if (slot0 == 0) {
    for (int i = 1; i < p->n; i++)
      if (p->e[i].score < p->e[slot0].score) slot0 = i;
    if (p->e[slot0].score >= score) return 0;   /* cheap rejection before hashing */
  }
  uint64_t h = ac_case_hash(c);
  for (int i = 0; i < p->n; i++)
    if (p->e[i].hash == h) return 0;
  int slot;
  if (p->n < p->cap) {
    slot = p->n++;
  } else {
    slot = 0;
    for (int i = 1; i < p->n; i++)
      if (p->e[i].score < p->e[slot].score) slot = i;
    if (p->e[slot].score >= score) return 0;
    ac_case_free(&p->e[slot].c);
  }
  ac_err e;
  if (ac_case_copy(&p->e[slot].c, c, &e)) {
    p->e[slot] = p->e[--p->n];
    return 0;
  }
  p->e[slot].score = score;
  p->e[slot].hash = h;
  p->e[slot].sigma = 0.5;
  p->e[slot].tries = 0;
  p->e[slot].from = from;
  snprintf(p->e[slot].family, sizeof p->e[slot].family, "%s", family);
  return 1;
}

ac_elite *ac_pool_pick(ac_pool *p, ac_rng *r)
{
  if (p->n == 0) return NULL;
  /* tournament of two: the better one wins */
  int a = (int)ac_rng_below(r, (uint64_t)p->n), b = (int)ac_rng_below(r, (uint64_t)p->n);
  return &p->e[p->e[a].score >= p->e[b].score ? a : b];
}

/* ---- the search policy: fresh draw or mutation, and the family shares ---------------------- */

void ac_search_init(ac_search *s, const int *fam, int n, int64_t sweep_n)
{
  memset(s, 0, sizeof *s);
  s->n = n < AC_SEARCH_MAX_FAM ? n : AC_SEARCH_MAX_FAM;
  for (int i = 0; i < s->n; i++) s->fam[i] = fam[i];
  s->sweep_n = sweep_n;
}

int ac_search_slot(const ac_search *s, const char *name)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  for (int i = 0; i < s->n; i++)
    if (!strcmp(f[s->fam[i]].name, name)) return i;
  return -1;
}

static int64_t share_cap(int64_t total, int n, int64_t improvements, int64_t slack)
{
  return total / (n > 0 ? n : 1) + AC_SHARE_EARN * improvements + slack;
}

int64_t ac_search_cap(const ac_search *s, int f)
{
  return share_cap(s->total, s->n, s->improvements[f], AC_SHARE_SLACK);
}

static int over_cap(const ac_search *s, int f) { return f < 0 || s->cases[f] >= ac_search_cap(s, f); }

static int costly(const ac_search *s, int f)
{
  int nf;
  return (ac_families(&nf)[s->fam[f]].flags & AC_FAM_COSTLY) != 0;
}

/* The sweep's family for case k: k mod families, a costly family only one turn in
 * AC_SEARCH_COSTLY_TURN (else a random other one); a family over its cap gives way to the
 * cheap family with the fewest cases. */
static int sweep_slot(const ac_search *s, int64_t k, ac_rng *r)
{
  int slot = (int)(k % s->n);
  if (costly(s, slot) && (k / s->n) % AC_SEARCH_COSTLY_TURN != 0 && s->n > 1) {
    slot = (slot + 1 + (int)ac_rng_below(r, (uint64_t)(s->n - 1))) % s->n;
    if (costly(s, slot)) slot = (slot + 1) % s->n;
  }
  if (!over_cap(s, slot)) return slot;
  int best = slot;
  for (int i = 0; i < s->n; i++)
    if (!costly(s, i) && (s->cases[i] < s->cases[best] || costly(s, best))) best = i;
  return best;
}

ac_elite *ac_search_next(ac_search *s, ac_pool *pool, int64_t k, ac_rng *r, int *slot)
{
  int sweep = k < s->sweep_n || pool->n == 0 || ac_rng_uniform(r) < AC_SEARCH_P_SWEEP;
  if (!sweep) {
    ac_elite *parent = ac_pool_pick(pool, r);
    if (!over_cap(s, ac_search_slot(s, parent->family))) return parent;
    /* the family is past its share: the best elite of a family within its own */
    parent = NULL;
    for (int i = 0; i < pool->n; i++)
      if (!over_cap(s, ac_search_slot(s, pool->e[i].family)) && (!parent || pool->e[i].score > parent->score))
        parent = &pool->e[i];
    if (parent) return parent;
  }
  *slot = sweep_slot(s, k, r);
  return NULL;
}

int ac_search_note(ac_search *s, int f, double score)
{
  if (f < 0 || f >= s->n) return 0;
  s->total++;
  s->cases[f]++;
  if (!(score > 0) || !(score < 1e299) || !(score > s->best[f] * (1.0 + AC_SHARE_GAIN))) return 0;
  s->best[f] = score;
  s->improvements[f]++;
  return 1;
}

void ac_search_stats(FILE *f, const int *fam, int n, const int64_t *cases, const int64_t *improvements, int jobs)
{
  int nf;
  const ac_family *fams = ac_families(&nf);
  int64_t total = 0;
  for (int i = 0; i < n; i++) total += cases[i];
  fprintf(f, "share_rule=cases(F) <= cases/%d + %d*improvements(F) + %d*%d (improvement: err/E above the family's "
             "best by %g%%)\n", n, AC_SHARE_EARN, AC_SHARE_SLACK, jobs, 100.0 * AC_SHARE_GAIN);
  for (int i = 0; i < n; i++) {
    double cap = (double)share_cap(total, n, improvements[i], (int64_t)AC_SHARE_SLACK * jobs);
    fprintf(f, "share.%s=%.4f\nimprovements.%s=%lld\nshare_cap.%s=%.4f\n", fams[fam[i]].name,
            total > 0 ? (double)cases[i] / (double)total : 0.0, fams[fam[i]].name, (long long)improvements[i],
            fams[fam[i]].name, total > 0 ? (cap < (double)total ? cap : (double)total) / (double)total : 1.0);
  }
}

/* Multiply the selected elements of one tensor by (1 + sigma N(0,1)). */
static void perturb(ac_case *c, ac_rng *r, double sigma, char *desc, size_t nd)
{
  ac_counts n = ac_case_counts(c);
  int which = (int)ac_rng_below(r, 3);
  void *base = which == 0 ? c->q : which == 1 ? c->k : c->v;
  int64_t cnt = which == 0 ? n.q : which == 1 ? n.k : n.v;
  int64_t row = which == 2 ? c->p.dv : c->p.dk;
  int how = (int)ac_rng_below(r, 3);
  int64_t lo = 0, hi = cnt;
  if (how == 0) {
    lo = (int64_t)ac_rng_below(r, (uint64_t)cnt);
    hi = lo + 1;
  } else if (how == 1) {
    lo = row * (int64_t)ac_rng_below(r, (uint64_t)(cnt / row));
    hi = lo + row;
  }
  double frac = how == 2 ? 0.1 : 1.0;
  for (int64_t i = lo; i < hi; i++) {
    if (how == 2 && ac_rng_uniform(r) >= frac) continue;
    const ac_dtype t = ac_tensor_dtype(&c->p, "qkv"[which]);
    double v = ac_load(t, base, (size_t)i);
    if (!isfinite(v)) continue;
    double nv = v * (1.0 + sigma * ac_rng_normal(r));
    if (v == 0) nv = sigma * ac_rng_normal(r) * 0.1;
    ac_set(t, base, (size_t)i, nv);
  }
  snprintf(desc, nd, "perturb %s %s sigma=%g", which == 0 ? "q" : which == 1 ? "k" : "v",
           how == 0 ? "element" : how == 1 ? "row" : "10%", sigma);
}

/* Copy one key (and optionally its V) over another: ties and repeated maxima. */
static void tie_keys(ac_case *c, ac_rng *r, char *desc, size_t nd)
{
  ac_problem *p = &c->p;
  if (p->tk < 2) return;
  int64_t a = (int64_t)ac_rng_below(r, (uint64_t)p->tk), b = (int64_t)ac_rng_below(r, (uint64_t)p->tk);
  for (int64_t bb = 0; bb < p->batch; bb++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t x = 0; x < p->dk; x++)
        ac_store_bits(ac_tensor_dtype(p, 'k'), c->k, ac_kidx(p, bb, kh, b, x),
                      ac_load_bits(ac_tensor_dtype(p, 'k'), c->k, ac_kidx(p, bb, kh, a, x)));
  snprintf(desc, nd, "tie key %lld to key %lld", (long long)b, (long long)a);
}

/* Scale one query row or one key by 2^k: magnitude and the position of the maximum. */
static void scale_row(ac_case *c, ac_rng *r, double sigma, char *desc, size_t nd)
{
  ac_problem *p = &c->p;
  int isq = (int)ac_rng_below(r, 2);
  double f = exp2((ac_rng_below(r, 2) ? 1 : -1) * (1.0 + 4.0 * sigma * ac_rng_uniform(r)));
  int64_t bb = (int64_t)ac_rng_below(r, (uint64_t)p->batch);
  if (isq) {
    int64_t h = (int64_t)ac_rng_below(r, (uint64_t)p->heads), i = (int64_t)ac_rng_below(r, (uint64_t)p->tq);
    for (int64_t x = 0; x < p->dk; x++) {
      size_t k = ac_qidx(p, bb, h, i, x);
      ac_set(ac_tensor_dtype(p, 'q'), c->q, k, ac_load(ac_tensor_dtype(p, 'q'), c->q, k) * f);
    }
  } else {
    int64_t kh = (int64_t)ac_rng_below(r, (uint64_t)p->kv_heads), j = (int64_t)ac_rng_below(r, (uint64_t)p->tk);
    for (int64_t x = 0; x < p->dk; x++) {
      size_t k = ac_kidx(p, bb, kh, j, x);
      ac_set(ac_tensor_dtype(p, 'k'), c->k, k, ac_load(ac_tensor_dtype(p, 'k'), c->k, k) * f);
    }
  }
  snprintf(desc, nd, "scale a %s row by %g", isq ? "query" : "key", f);
}

/* One element to a special class value: +-0, subnormal, the dtype's top, a power of two. */
static void special(ac_case *c, ac_rng *r, char *desc, size_t nd)
{
  ac_counts n = ac_case_counts(c);
  int which = (int)ac_rng_below(r, 3);
  void *base = which == 0 ? c->q : which == 1 ? c->k : c->v;
  int64_t cnt = which == 0 ? n.q : which == 1 ? n.k : n.v;
  size_t i = (size_t)ac_rng_below(r, (uint64_t)cnt);
  const ac_dtype t = ac_tensor_dtype(&c->p, "qkv"[which]);
  const ac_dtype_info *d = ac_dtype_get(t);
  double v;
  switch (ac_rng_below(r, 4)) {
  case 0: v = 0.0; break;
  case 1: v = ldexp(1.0, d->ieee_emin - d->prec + 1) * (double)ac_rng_range(r, 1, 3); break;
  case 2: v = (which == 2 ? 0.5 : 0.01) * d->max_finite; break;
  default: v = ldexp(1.0, (int)ac_rng_range(r, -6, 6)); break;
  }
  if (ac_rng_below(r, 2)) v = -v;
  ac_set(t, base, i, v);
  snprintf(desc, nd, "special value %a in %c", v, "qkv"[which]);
}

static int64_t near_tile(int64_t t, ac_rng *r)
{
  static const int64_t tiles[] = {16, 32, 64, 128};
  int64_t tile = tiles[ac_rng_below(r, 4)];
  int64_t m = (t + tile / 2) / tile;
  if (m < 1) m = 1;
  int64_t v = m * tile + ac_rng_range(r, -1, 1);
  return v < 1 ? 1 : v;
}

int ac_mutate(const ac_case *parent, double sigma, ac_rng *r, const ac_gen_limits *l, ac_case *child, char *desc,
              size_t nd, ac_err *e)
{
  int op = (int)ac_rng_below(r, 10);
  desc[0] = 0;
  if (parent->lay && (op <= 1 || op == 9)) {
    /* a layout case: its sequences' lengths or its pages (a perturbation when that is no valid case) */
    if (ac_mutate_layout(parent, r, l, child, desc, nd, e) == 0) return 0;
    op = 2;
  }
  if (l->nbuckets && (op <= 1 || op == 9)) op = 2; /* shape buckets: the shape stays one of them */
  if (op <= 1 || op == 9) {
    /* shape: tq / tk to a tile edge, +-1, or doubled */
    const ac_problem *p = &parent->p;
    int64_t tq = p->tq, tk = p->tk;
    switch (ac_rng_below(r, 4)) {
    case 0: tk = near_tile(tk, r); break;
    case 1: tq = near_tile(tq, r); break;
    case 2: tk = tk + ac_rng_range(r, -1, 1); tq = tq + ac_rng_range(r, -1, 1); break;
    default: tk = tk * 2 + ac_rng_range(r, -1, 1); break;
    }
    int64_t cap = l->max_t < 2048 ? l->max_t : 2048;
    if (tq < 1) tq = 1;
    if (tk < 1) tk = 1;
    if (tq > cap) tq = cap;
    if (tk > cap) tk = cap;
    int64_t dmax = p->dk > p->dv ? p->dk : p->dv, hmax = p->heads;
    while (tq > 1 && (double)p->batch * (double)hmax * (double)tq * (double)dmax > (double)l->max_elems) tq /= 2;
    while (tk > 1 && (double)p->batch * (double)hmax * (double)tk * (double)dmax > (double)l->max_elems) tk /= 2;
    if (ac_case_resize_t(parent, tq, tk, r, child, e)) return -1;
    snprintf(desc, nd, "resize tq %lld->%lld tk %lld->%lld", (long long)p->tq, (long long)tq, (long long)p->tk,
             (long long)tk);
    return 0;
  }
  if (ac_case_copy(child, parent, e)) return -1;
  child->has_o = child->has_lse = 0;
  child->o = NULL;
  child->lse = NULL;
  /* quantized tensors: one mutation in three of their codes and scales; the value mutations below
   * are quantized again by the format's reference quantizer */
  if (ac_problem_quantized(&child->p) && op >= 2 && op <= 7 && ac_rng_below(r, 3) == 0 && ac_quant_mutate(child, r, desc, nd))
    return 0;
  switch (op) {
  case 2: case 3: case 4: perturb(child, r, sigma, desc, nd); break;
  case 5: tie_keys(child, r, desc, nd); break;
  case 6: scale_row(child, r, sigma, desc, nd); break;
  case 7: special(child, r, desc, nd); break;
  default: {
    if (child->p.f.used && ac_rng_below(r, 2)) {
      ac_mutate_variant(child, r, sigma, l, desc, nd);
    } else if (ac_rng_below(r, 2) || l->nbuckets || !(l->shapes & AC_SHAPE_SCALE)) {
      ac_mask m = ac_draw_mask(r, l);
      child->p.mask = m;
      snprintf(desc, nd, "mask %s", ac_mask_name(m));
    } else {
      double f = ac_rng_below(r, 2) ? 2.0 : 0.5;
      child->p.scale = ac_problem_scale(&child->p) * f;
      child->p.scale_is_default = 0;
      snprintf(desc, nd, "scale x%g", f);
    }
  }
  }
  if (op >= 2 && op <= 7)   /* a value changed: its quantized tensor anew (nothing for a plain one) */
    for (const char *x = "qkv"; *x; x++) ac_quant_requantize(child, *x);
  return 0;
}
