/* calcase.c: the case draws of bench/calibrate (normal, uniform, large magnitude, zero Q, ties,
 * late maximum, V cancellation, long T on a row sample; every dtype and mask), their attention
 * variants and mixed-dtype copies: the calibration corpus, shared with the backward mode
 * (calibrate_grad.c) and tests/tpreset_budgets (the budgets of every preset class on it). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"
#include "variants.h"
#include "vgen.h"
#include "calibrate.h"

enum { F_NORMAL, F_UNIFORM, F_LARGE4, F_LARGE16, F_ZEROQ, F_TIES, F_LATEMAX, F_CANCEL, F_LONG, NFAM };
static const char *const fam_names[NFAM] = {"normal", "uniform", "large4", "large16", "zeroq",
                                            "ties", "latemax", "cancel", "longT"};
static const int64_t dims[] = {1, 3, 8, 16, 32, 59, 64, 128};

static void put(ac_dtype t, void *base, size_t i, double x) { ac_store_bits(t, base, i, ac_encode_f64(t, x)); }

/* Draws case k of dtype t into c; returns the family; rows receives a row spec ("" = all). */
int cal_make_case(ac_dtype t, uint64_t seed, ac_case *c, char *rows, size_t rn, char *desc, size_t dn)
{
  ac_rng r;
  ac_rng_init(&r, seed, 0);
  int fam = (int)ac_rng_below(&r, NFAM);
  ac_problem *p = &c->p;
  memset(p, 0, sizeof *p);
  p->dtype = t;
  p->mask = (ac_mask)ac_rng_below(&r, 3);
  p->batch = 1;
  p->kv_heads = 1 + (int64_t)ac_rng_below(&r, 2);
  p->heads = p->kv_heads * (1 + (int64_t)ac_rng_below(&r, 2));
  p->dk = dims[ac_rng_below(&r, sizeof dims / sizeof dims[0])];
  p->dv = ac_rng_below(&r, 4) ? p->dk : dims[ac_rng_below(&r, sizeof dims / sizeof dims[0])];
  p->tq = 1 + (int64_t)ac_rng_below(&r, 32);
  p->tk = 1 + (int64_t)ac_rng_below(&r, 130);
  rows[0] = 0;
  if (fam == F_LONG) {
    static const int64_t longt[] = {512, 1024, 2048, 4096};
    p->tk = longt[ac_rng_below(&r, 4)];
    p->tq = 16;
    p->heads = p->kv_heads = 1;
    if (p->dk > 64) p->dk = 64;
    if (p->dv > 64) p->dv = 64;
    if (p->mask == AC_MASK_CAUSAL) p->mask = AC_MASK_CAUSAL_BR;
    snprintf(rows, rn, "edges+0");
  }
  p->scale_is_default = 1;
  p->scale = 1 / sqrt((double)p->dk);
  ac_err e;
  if (ac_case_alloc(c, &e) < 0) {
    fprintf(stderr, "calibrate: %s\n", e.msg);
    exit(3);
  }
  ac_counts n;
  ac_problem_counts(p, &n, &e);
  ac_rng rq, rk, rv;
  ac_rng_split(&r, &rq);
  ac_rng_split(&r, &rk);
  ac_rng_split(&r, &rv);
  double sq = 1, sk = 1;
  if (fam == F_LARGE4) sq = sk = 2;
  if (fam == F_LARGE16) sq = sk = 4;
  for (int64_t x = 0; x < n.q; x++)
    put(t, c->q, (size_t)x, fam == F_ZEROQ ? 0 : fam == F_UNIFORM ? 2 * ac_rng_uniform(&rq) - 1
                                             : fam == F_LATEMAX ? 1 : sq * ac_rng_normal(&rq));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++) {
        for (int64_t d = 0; d < p->dk; d++) {
          double x = fam == F_UNIFORM ? 2 * ac_rng_uniform(&rk) - 1 : sk * ac_rng_normal(&rk);
          if (fam == F_LATEMAX) x = 30.0 / sqrt((double)p->dk) * (double)j / (double)p->tk + 0.05 * x;
          put(t, c->k, ac_kidx(p, b, kh, j, d), x);
        }
        for (int64_t d = 0; d < p->dv; d++) {
          double x = fam == F_UNIFORM ? 2 * ac_rng_uniform(&rv) - 1 : ac_rng_normal(&rv);
          if (fam == F_CANCEL) x = (j % 2 ? -4 : 4) + 0.01 * x;
          put(t, c->v, ac_vidx(p, b, kh, j, d), x);
        }
      }
  if (fam == F_TIES) {
    /* every key equal to key 0 except a few */
    size_t es = ac_dtype_size(t);
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 1; j < p->tk; j++)
        if (ac_rng_below(&r, 8))
          memcpy((char *)c->k + ac_kidx(p, 0, kh, j, 0) * es, (char *)c->k + ac_kidx(p, 0, kh, 0, 0) * es,
                 (size_t)p->dk * es);
  }
  c->seed = seed;
  snprintf(desc, dn, "%s %s %lldx%lld d%lld/%lld h%lld/%lld %s seed %llu", fam_names[fam], ac_dtype_name(t),
           (long long)p->tq, (long long)p->tk, (long long)p->dk, (long long)p->dv, (long long)p->heads,
           (long long)p->kv_heads, ac_mask_name(p->mask), (unsigned long long)seed);
  return fam;
}

/* A variant of case c (the same Q, K, V) with features drawn among caps: a sliding window, a
 * softcap, ALiBi slopes, an N(0,1) bias, a random boolean mask, sinks, descales (src/core/vgen.c). */
int cal_make_variant(const ac_case *c, uint32_t caps, uint64_t seed, ac_case *out, const char *desc, char *vdesc,
                        size_t n)
{
  ac_rng r;
  ac_rng_init(&r, seed, 0x7661);
  ac_vspec v;
  memset(&v, 0, sizeof v);
  caps &= AC_FEAT_ALL & ~(uint32_t)AC_FEAT_MIXED_DTYPES;
  if (c->p.dtype == AC_F64) caps &= ~(uint32_t)AC_FEAT_DESCALE;   /* fp64 tensors have no descales */
  for (int guard = 0; !v.used && guard < 16; guard++) v.used = (uint32_t)ac_rng_below(&r, 256) & caps;
  if (!v.used) return -1;
  v.win_left = ac_rng_range(&r, 0, c->p.tk);
  v.win_right = ac_rng_below(&r, 2) ? 0 : -1;
  v.win_top_left = ac_rng_below(&r, 4) == 0;
  static const double caps_c[] = {30, 5, 1, 50};
  v.softcap = caps_c[ac_rng_below(&r, 4)];
  v.alibi_max = ac_rng_below(&r, 2) ? 1 : 0.0625;
  v.alibi_per_batch = ac_rng_below(&r, 4) == 0;
  /* the patterns of src/core/vgen.h: sentinels at the formats' large finite values, -inf
   * blocks and rows, NaN under masked keys, ramps; banded and emptied masks; sinks that
   * dominate or vanish; tiny and huge descales */
  static const double sentinels[] = {-1e4, -65504, -1e9, -3.4028234663852886e38};
  v.bias = (int)ac_rng_below(&r, 6);
  v.bias_scale = v.bias == AC_VB_SENTINEL ? sentinels[ac_rng_below(&r, 4)] : v.bias == AC_VB_SLOPE ? 8 : 1;
  v.bias_bcast_b = (int)ac_rng_below(&r, 2);
  v.bias_bcast_h = (int)ac_rng_below(&r, 2);
  v.bmask = (int)ac_rng_below(&r, 4);
  v.sinks = (int)ac_rng_below(&r, 3);
  v.descale = (int)ac_rng_below(&r, 3);
  ac_err e;
  if (ac_case_copy(out, c, &e)) return -1;
  if (ac_vspec_apply(out, &v, seed, &e)) {
    ac_case_free(out);
    return -1;
  }
  char name[120];
  ac_vspec_name(&v, name, sizeof name);
  snprintf(vdesc, n, "%s +%s", desc, name);
  return 0;
}

/* A mixed-dtype variant of the plain case c (the paths of ggml and FlashAttention 3): a binary32
 * case with K and V rounded to f16 or bf16, an fp8 case with a bf16, f16 or f32 output. -1 for
 * the other dtypes. */
int cal_make_mixed(const ac_case *c, uint64_t seed, ac_case *out, const char *desc, char *vdesc, size_t n)
{
  return cal_make_mixed_kv(c, seed, -1, out, desc, vdesc, n);
}

int cal_make_mixed_kv(const ac_case *c, uint64_t seed, int kv, ac_case *out, const char *desc, char *vdesc, size_t n)
{
  ac_dtype t = c->p.dtype, d[4] = {t, t, t, t};
  ac_rng r;
  ac_rng_init(&r, seed, 0x6d78);
  static const ac_dtype outs[] = {AC_BF16, AC_F16, AC_F32};
  if (t == AC_F32) {
    d[1] = d[2] = ac_rng_below(&r, 2) ? AC_F16 : AC_BF16;
    if (kv >= 0) d[1] = d[2] = (ac_dtype)kv;
  } else if (t == AC_E4M3 || t == AC_E5M2)
    d[3] = outs[ac_rng_below(&r, 3)];
  else
    return -1;
  ac_err e;
  ac_counts nc;
  if (c->p.f.used || ac_problem_counts(&c->p, &nc, &e)) return -1;
  ac_case_init(out);
  out->p = c->p;
  if (ac_features_set_dtypes(&out->p, d, &e) || ac_case_alloc(out, &e)) {
    ac_case_free(out);
    return -1;
  }
  for (int64_t x = 0; x < nc.q; x++) ac_store_bits(d[0], out->q, (size_t)x, ac_encode_f64(d[0], ac_load(t, c->q, (size_t)x)));
  for (int64_t x = 0; x < nc.k; x++) ac_store_bits(d[1], out->k, (size_t)x, ac_encode_f64(d[1], ac_load(t, c->k, (size_t)x)));
  for (int64_t x = 0; x < nc.v; x++) ac_store_bits(d[2], out->v, (size_t)x, ac_encode_f64(d[2], ac_load(t, c->v, (size_t)x)));
  out->seed = c->seed;
  snprintf(vdesc, n, "%s +dtypes-%s.%s.%s.%s", desc, ac_dtype_name(d[0]), ac_dtype_name(d[1]), ac_dtype_name(d[2]),
           ac_dtype_name(d[3]));
  return 0;
}

