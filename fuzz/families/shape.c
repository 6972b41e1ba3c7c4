/* shape.c: drawing shapes, masks, dtypes and layouts within a campaign's limits. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "fuzz.h"

void ac_gen_limits_init(ac_gen_limits *l)
{
  memset(l, 0, sizeof *l);
  l->dtypes = 1u << AC_F32;
  l->masks = 7;
  l->max_t = 16384;
  l->max_elems = (int64_t)1 << 22;
  l->max_d = 512;
  l->features = AC_FEAT_ALL;
  l->backward = 1;
  l->shapes = AC_SHAPE_ALL;
}

static int64_t clampi(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

int64_t ac_draw_tile_len(ac_rng *r, int64_t max)
{
  static const int64_t tiles[] = {16, 32, 64, 128};
  int64_t t;
  switch (ac_rng_below(r, 4)) {
  case 0: t = ((int64_t)1 << ac_rng_range(r, 1, 9)) + ac_rng_range(r, -1, 1); break;
  case 1: t = tiles[ac_rng_below(r, 4)] * ac_rng_range(r, 1, 4) + ac_rng_range(r, -1, 1); break;
  case 2: t = ac_rng_range(r, 1, 15); break;
  default: t = tiles[ac_rng_below(r, 4)] + ac_rng_range(r, -2, 2); break;
  }
  return clampi(t, 1, max);
}

int64_t ac_draw_len(ac_rng *r, int64_t max)
{
  uint64_t u = ac_rng_below(r, 100);
  int64_t t;
  if (u < 50) t = ac_rng_range(r, 1, 24);
  else if (u < 68) t = ac_rng_range(r, 25, 80);
  else if (u < 93) t = ac_draw_tile_len(r, 300);
  else t = (int64_t)exp(ac_rng_uniform(r) * log(1024.0));
  return clampi(t, 1, max);
}

int64_t ac_draw_head_dim(ac_rng *r)
{
  static const int64_t common[] = {16, 32, 64, 64, 64, 8, 32, 16};
  static const int64_t odd[] = {1, 2, 3, 5, 7, 31, 33, 48, 59, 63, 65, 80, 96, 111, 128, 160, 256};
  uint64_t u = ac_rng_below(r, 10);
  if (u < 6) return common[ac_rng_below(r, 8)];
  if (u < 9) return odd[ac_rng_below(r, sizeof odd / sizeof odd[0])];
  return ac_rng_range(r, 1, 130);
}

ac_dtype ac_draw_dtype(ac_rng *r, const ac_gen_limits *l)
{
  uint32_t m = l->dtypes ? l->dtypes : (1u << AC_F32);
  int n = __builtin_popcount(m);
  int k = (int)ac_rng_below(r, (uint64_t)n);
  for (int t = 0; t < AC_NDTYPES; t++)
    if (m & (1u << t)) {
      if (k == 0) return (ac_dtype)t;
      k--;
    }
  return AC_F32;
}

ac_mask ac_draw_mask(ac_rng *r, const ac_gen_limits *l)
{
  uint32_t m = l->masks ? l->masks : 7;
  int n = __builtin_popcount(m);
  int k = (int)ac_rng_below(r, (uint64_t)n);
  for (int t = 0; t < 3; t++)
    if (m & (1u << t)) {
      if (k == 0) return (ac_mask)t;
      k--;
    }
  return AC_MASK_NONE;
}

static void pick_heads(ac_rng *r, ac_problem *p)
{
  static const int64_t kvh[] = {1, 1, 2, 1, 2, 4};
  uint64_t u = ac_rng_below(r, 8);
  p->heads = u < 4 ? 1 : u < 6 ? 2 : ac_rng_range(r, 3, 4);
  p->kv_heads = p->heads;
  if (ac_rng_below(r, 5) == 0) {
    /* GQA / MQA */
    int64_t kv = kvh[ac_rng_below(r, 6)];
    int64_t g = ac_rng_range(r, 2, 4);
    p->kv_heads = kv;
    p->heads = kv * g;
  }
}

void ac_draw_shape(ac_rng *r, const ac_gen_limits *l, ac_problem *p)
{
  memset(p, 0, sizeof *p);
  p->dtype = ac_draw_dtype(r, l);
  p->mask = ac_draw_mask(r, l);
  p->batch = ac_rng_below(r, 6) == 0 ? 2 : 1;
  pick_heads(r, p);
  int64_t cap = l->max_t < 1024 ? l->max_t : 1024;
  p->tq = ac_draw_len(r, cap);
  p->tk = ac_rng_below(r, 3) == 0 ? ac_draw_len(r, cap) : p->tq;
  /* one shape in twelve decodes: one or two query rows against the keys (kernels often take a
   * separate path there) */
  if (ac_rng_below(r, 12) == 0) {
    p->tq = 1 + (int64_t)ac_rng_below(r, 2);
    if (p->tk < 3) p->tk = 2 + ac_draw_len(r, cap);
  }
  p->dk = ac_draw_head_dim(r);
  p->dv = ac_rng_below(r, 5) == 0 ? ac_draw_head_dim(r) : p->dk;
  p->scale_is_default = 1;
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_clamp_shape(p, l);
}

void ac_clamp_shape(ac_problem *p, const ac_gen_limits *l)
{
  int64_t cap = l->max_elems > 0 ? l->max_elems : ((int64_t)1 << 22);
  if (l->max_t > 0) {
    if (p->tq > l->max_t) p->tq = l->max_t;
    if (p->tk > l->max_t) p->tk = l->max_t;
  }
  if (l->max_d > 0) {
    if (p->dk > l->max_d) p->dk = l->max_d;
    if (p->dv > l->max_d) p->dv = l->max_d;
  }
  for (int guard = 0; guard < 200; guard++) {
    int64_t d = p->dk > p->dv ? p->dk : p->dv;
    int64_t h = p->heads > p->kv_heads ? p->heads : p->kv_heads;
    int64_t t = p->tq > p->tk ? p->tq : p->tk;
    double n = (double)p->batch * (double)h * (double)t * (double)d;
    if (n <= (double)cap) break;
    if (p->batch > 1) p->batch = 1;
    else if (t > 1) {
      if (p->tq >= p->tk) p->tq = (p->tq + 1) / 2; else p->tk = (p->tk + 1) / 2;
    } else if (p->heads > 1) { p->heads = 1; p->kv_heads = 1; }
    else if (p->dk >= p->dv) p->dk = (p->dk + 1) / 2;
    else p->dv = (p->dv + 1) / 2;
  }
  if (p->scale_is_default) p->scale = 1.0 / sqrt((double)p->dk);
}

void ac_params_shape(ac_params *pb, const ac_problem *p)
{
  ac_params_str(pb, "dtype", ac_dtype_name(p->dtype));
  ac_params_str(pb, "mask", ac_mask_name(p->mask));
  ac_params_int(pb, "batch", p->batch);
  ac_params_int(pb, "heads", p->heads);
  ac_params_int(pb, "kv_heads", p->kv_heads);
  ac_params_int(pb, "tq", p->tq);
  ac_params_int(pb, "tk", p->tk);
  ac_params_int(pb, "dk", p->dk);
  ac_params_int(pb, "dv", p->dv);
  if (!p->scale_is_default) ac_params_dbl(pb, "scale", p->scale);
}

/* Layout kinds: 0 padded rows, 1 padded rows and heads, 2 BSHD (t-major), 3 heads-major. */
static void one_layout(int kind, int64_t pad_d, int64_t pad_t, int64_t B, int64_t H, int64_t T, int64_t D, int64_t s[4])
{
  switch (kind) {
  case 2: s[3] = 1; s[1] = D + pad_d; s[2] = H * s[1]; s[0] = T * s[2]; break;
  case 3: s[3] = 1; s[2] = D + pad_d; s[0] = T * s[2]; s[1] = B * s[0]; break;
  case 1: s[3] = 1; s[2] = D + pad_d; s[1] = (T + pad_t) * s[2]; s[0] = H * s[1] + pad_t; break;
  default: s[3] = 1; s[2] = D + pad_d; s[1] = T * s[2]; s[0] = H * s[1]; break;
  }
}

void ac_draw_strides(ac_rng *r, ac_problem *p)
{
  int kind = (int)ac_rng_below(r, 4);
  int64_t pad_d = ac_rng_range(r, 0, 8), pad_t = ac_rng_range(r, 0, 3);
  if (kind == 0 && pad_d == 0) pad_d = 1;
  one_layout(kind, pad_d, pad_t, p->batch, p->heads, p->tq, p->dk, p->q_stride);
  one_layout(kind, pad_d, pad_t, p->batch, p->kv_heads, p->tk, p->dk, p->k_stride);
  one_layout(kind, pad_d, pad_t, p->batch, p->kv_heads, p->tk, p->dv, p->v_stride);
  one_layout((int)ac_rng_below(r, 4), ac_rng_range(r, 0, 4), 0, p->batch, p->heads, p->tq, p->dv, p->o_stride);
}
