/* buckets.c: the shapes a campaign may draw: the shape features a kernel takes (gqa, dv != dk,
 * tq != tk, an explicit scale) and shape buckets (fuzz --shape-buckets), applied to every case a
 * family draws before its tensors are allocated. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "fuzz.h"

uint32_t ac_shapes_used(const ac_problem *p)
{
  uint32_t s = 0;
  if (p->kv_heads != p->heads) s |= AC_SHAPE_GQA;
  if (p->dv != p->dk) s |= AC_SHAPE_DV_NE_DK;
  if (p->tq != p->tk) s |= AC_SHAPE_TQ_NE_TK;
  if (!p->scale_is_default) s |= AC_SHAPE_SCALE;
  return s;
}

static int same_bucket(const ac_shape_bucket *a, const ac_shape_bucket *b)
{
  return a->batch == b->batch && a->heads == b->heads && a->kv_heads == b->kv_heads && a->tq == b->tq &&
         a->tk == b->tk && a->dk == b->dk && a->dv == b->dv;
}

void ac_gen_buckets(ac_gen_limits *l, uint64_t seed, int n)
{
  ac_gen_limits lb = *l;
  lb.nbuckets = 0;
  if (lb.max_t <= 0 || lb.max_t > 512) lb.max_t = 512;
  if (n > AC_MAX_BUCKETS) n = AC_MAX_BUCKETS;
  l->nbuckets = 0;
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, 0x6275636b657473ull), 0);
  for (int tries = 0; l->nbuckets < n && tries < 64 * n; tries++) {
    ac_problem p;
    ac_draw_shape(&r, &lb, &p);
    ac_gen_conform(&p, &lb);
    ac_shape_bucket b = {p.batch, p.heads, p.kv_heads, p.tq, p.tk, p.dk, p.dv};
    int dup = 0;
    for (int i = 0; i < l->nbuckets && !dup; i++) dup = same_bucket(&l->bucket[i], &b);
    if (!dup) l->bucket[l->nbuckets++] = b;
  }
}

static double ldist(int64_t a, int64_t b)
{
  return fabs(log2((double)(a > 0 ? a : 1)) - log2((double)(b > 0 ? b : 1)));
}

int ac_bucket_nearest(const ac_gen_limits *l, const ac_problem *p)
{
  int best = -1;
  double bd = INFINITY;
  for (int i = 0; i < l->nbuckets; i++) {
    const ac_shape_bucket *b = &l->bucket[i];
    double d = ldist(p->batch, b->batch) + ldist(p->heads, b->heads) + ldist(p->kv_heads, b->kv_heads) +
               ldist(p->tq, b->tq) + ldist(p->tk, b->tk) + ldist(p->dk, b->dk) + ldist(p->dv, b->dv);
    if (d < bd) bd = d, best = i;
  }
  return best;
}

int ac_gen_conform(ac_problem *p, const ac_gen_limits *l)
{
  const ac_problem before = *p;
  uint32_t s = l->shapes;
  if (!(s & AC_SHAPE_GQA)) p->kv_heads = p->heads;
  if (!(s & AC_SHAPE_DV_NE_DK)) p->dv = p->dk;
  if (!(s & AC_SHAPE_TQ_NE_TK)) p->tq = p->tk = p->tq < p->tk ? p->tq : p->tk;
  int b = (p->f.used & AC_FEAT_LAYOUTS) ? -1 : ac_bucket_nearest(l, p);
  if (b >= 0) {
    const ac_shape_bucket *k = &l->bucket[b];
    p->batch = k->batch, p->heads = k->heads, p->kv_heads = k->kv_heads;
    p->tq = k->tq, p->tk = k->tk, p->dk = k->dk, p->dv = k->dv;
  }
  if (!(s & AC_SHAPE_SCALE) || p->scale_is_default) {
    p->scale_is_default = 1;
    p->scale = 1.0 / sqrt((double)p->dk);
  }
  /* strides drawn for the old dimensions do not fit the new ones: the contiguous layout */
  if (p->batch != before.batch || p->heads != before.heads || p->kv_heads != before.kv_heads || p->tq != before.tq ||
      p->tk != before.tk || p->dk != before.dk || p->dv != before.dv) {
    memset(p->q_stride, 0, sizeof p->q_stride);
    memset(p->k_stride, 0, sizeof p->k_stride);
    memset(p->v_stride, 0, sizeof p->v_stride);
    memset(p->o_stride, 0, sizeof p->o_stride);
  }
  return b;
}
