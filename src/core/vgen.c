/* vgen.c: generators of attention-variant inputs (vgen.h). */
#include "config.h"
#include "vgen.h"
#include "dropout.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"
#include "layout.h"
#include "variants.h"

static void put(ac_dtype t, void *base, size_t i, double x) { ac_store_bits(t, base, i, ac_encode_f64(t, x)); }

/* Mask element of row i of a (sequence) problem p: the pattern of v. */
static uint8_t mask_val(const ac_vspec *v, const ac_problem *p, int64_t i, int64_t j, ac_rng *r)
{
  int empty = v->bmask == AC_VM_EMPTY_MIDDLE && i >= p->tq / 3 && i < 2 * p->tq / 3;
  switch (v->bmask) {
  case AC_VM_BANDED: return llabs(i + p->tk - p->tq - j) <= 8;
  case AC_VM_SPARSE: return ac_rng_uniform(r) < 0.05;
  default: return ac_rng_uniform(r) < 0.7 && !empty;
  }
}

/* Bias element (b, h, i, j) of a (sequence) problem p: the pattern of v. */
static double bias_val(const ac_vspec *v, const ac_problem *p, int64_t b, int64_t h, int64_t i, int64_t j, ac_rng *r)
{
  double val = ac_rng_normal(r);
  switch (v->bias) {
  case AC_VB_NORMAL: return val * v->bias_scale;
  case AC_VB_NEGINF_BLOCKS:
    return ac_hash2((uint64_t)(b * 7919 + h) * 65536 + (uint64_t)(i / 16), (uint64_t)(j / 16)) % 4 == 0 ? -INFINITY : val;
  case AC_VB_NEGINF_ROWS: return i % 5 == 2 ? -INFINITY : val;
  case AC_VB_SENTINEL: return ac_rng_uniform(r) < 1.0 / 3 ? v->bias_scale : 0.0;
  case AC_VB_NAN_MASKED:
    /* the bias tensor is broadcast: NaN only where no (b, h) it stands for sees the key */
    return !ac_visible(p, i, j) || !ac_in_window(p, i, j) ? NAN : val;
  default: return v->bias_scale * (double)(j - i) / (double)p->tk;
  }
}

/* The bias (mask 0) or boolean mask (mask 1) of c by the patterns of v. A layout case's row t
 * is query t - cu_q[b] of the sequence b that owns it, against that sequence's tq_b and tk_b;
 * the columns past its keys hold 0. */
static void fill_rows(ac_case *c, const ac_vspec *v, ac_rng *r, int mask)
{
  const ac_problem *p = &c->p;
  const int64_t eb = mask ? p->f.mask_b : p->f.bias_b, eh = mask ? p->f.mask_h : p->f.bias_h, cols = ac_bias_cols(p);
  for (int64_t b = 0; b < eb; b++)
    for (int64_t h = 0; h < eh; h++)
      for (int64_t t = 0; t < p->tq; t++) {
        ac_problem s = *p;
        int64_t i = t;
        if (c->lay) {
          int64_t sq = ac_layout_seq_of_row(c, t);
          ac_layout_seq_problem(c, sq, &s);
          i = t - c->lay->cu_q[sq];
        }
        for (int64_t j = 0; j < cols; j++) {
          if (mask) c->bool_mask[ac_bmaskidx(p, b, h, t, j)] = j < s.tk ? mask_val(v, &s, i, j, r) : 0;
          else put(p->f.bias_dtype, c->bias, ac_biasidx(p, b, h, t, j), j < s.tk ? bias_val(v, &s, b, h, i, j, r) : 0.0);
        }
      }
}

static float slope(const ac_vspec *v, const ac_problem *p, int64_t b, int64_t h)
{
  double m = v->alibi_max * exp2(-8.0 * (double)(h + 1) / (double)p->heads);
  return (float)(m * (1.0 + 0.25 * (double)b));
}

/* The LSE of the scale q.k scores of head h's last query row over the keys it sees (mask,
 * window; no other variant): batch 0 of a dense case, the last query of its sequence in a layout
 * case. NAN when the row sees no key or a score is not finite. */
static double last_row_lse(const ac_case *c, int64_t h)
{
  const ac_problem *p = &c->p;
  ac_problem s = *p;
  int64_t tok = p->tq - 1, i = tok, b = 0;
  if (c->lay) {
    b = ac_layout_seq_of_row(c, tok);
    if (ac_layout_tk(c, b) < 1) return NAN;
    ac_layout_seq_problem(c, b, &s);
    i = tok - c->lay->cu_q[b];
  }
  const ac_dtype qd = ac_tensor_dtype(p, 'q'), kd = ac_tensor_dtype(p, 'k');
  const int64_t kh = ac_kv_head(p, h);
  double m = -INFINITY, sum = 0, sc = ac_problem_scale(p);
  for (int64_t j = 0; j < s.tk; j++) {
    if (!ac_visible(&s, i, j) || !ac_in_window(&s, i, j)) continue;
    int64_t key = c->lay ? ac_layout_key(c, b, j) : j;
    double dot = 0;
    for (int64_t x = 0; x < p->dk; x++)
      dot += ac_load(qd, c->q, ac_qidx(p, 0, h, tok, x)) * ac_load(kd, c->k, ac_kidx(p, 0, kh, key, x));
    dot *= sc;
    if (!isfinite(dot)) return NAN;
    if (dot > m) sum = sum * exp(m - dot), m = dot;
    sum += exp(dot - m);
  }
  return m > -INFINITY ? m + log(sum) : NAN;
}

/* The sink of head h by the pattern of v (one draw of r each). */
static double sink_val(const ac_case *c, const ac_vspec *v, int64_t h, ac_rng *r)
{
  if (v->sinks == AC_VS_DOMINANT) return 20 + ac_rng_uniform(r);
  if (v->sinks == AC_VS_VANISHING) return -60 - ac_rng_uniform(r);
  if (v->sinks != AC_VS_LEVEL) return 2 * ac_rng_normal(r);
  double lse = last_row_lse(c, h), u = ac_rng_uniform(r);
  return isfinite(lse) && fabs(lse) < 1e30 ? lse + 6 * u - 3 : 4 * u - 2;
}

int ac_vspec_apply(ac_case *c, const ac_vspec *v, uint64_t seed, ac_err *e)
{
  ac_problem *p = &c->p;
  const ac_features keep = p->f;   /* per-tensor dtypes stay: q, k and v are stored in them */
  ac_features_free(c);
  ac_features_plain(p);
  ac_features *f = &p->f;
  /* per-tensor dtypes and the layout stay (a layout's bias rows are max_tk long) */
  f->used = (v->used & (uint32_t)~(AC_FEAT_MIXED_DTYPES | AC_FEAT_LAYOUTS)) | (keep.used & (AC_FEAT_MIXED_DTYPES | AC_FEAT_LAYOUTS));
  if (keep.used & AC_FEAT_MIXED_DTYPES) f->qd = keep.qd, f->kd = keep.kd, f->vd = keep.vd, f->od = keep.od;
  f->win_left = v->win_left;
  f->win_right = v->win_right;
  f->win_top_left = v->win_top_left;
  f->softcap = v->used & AC_FEAT_SOFTCAP ? v->softcap : 0;
  f->alibi_per_batch = v->alibi_per_batch;
  /* fields of unused features keep their plain values (a case read back has them so) */
  if (f->used & AC_FEAT_BIAS) {
    f->bias_b = v->bias_bcast_b ? 1 : p->batch;
    f->bias_h = v->bias_bcast_h ? 1 : p->heads;
    if (v->bias_dtype > 0) f->bias_dtype = (ac_dtype)(v->bias_dtype - 1);
  }
  if (f->used & AC_FEAT_BOOL_MASK) {
    f->mask_b = v->mask_bcast_b ? 1 : p->batch;
    f->mask_h = v->mask_bcast_h ? 1 : p->heads;
  }
  if (f->used & AC_FEAT_DROPOUT) {
    f->dropout_p = v->dropout_p;
    f->dropout_seed = v->dropout_seed_set ? v->dropout_seed : seed;
  }
  if (!(f->used & AC_FEAT_ALIBI)) f->alibi_per_batch = 0;
  if (!(f->used & AC_FEAT_WINDOW)) {
    f->win_left = f->win_right = -1;
    f->win_top_left = 0;
  }
  if (ac_features_alloc(c, e)) return -1;
  ac_rng r;
  ac_rng_init(&r, seed, 11);
  if (f->used & AC_FEAT_BOOL_MASK) fill_rows(c, v, &r, 1);
  if (f->used & AC_FEAT_BIAS) fill_rows(c, v, &r, 0);
  if (f->used & AC_FEAT_ALIBI)
    for (int64_t b = 0; b < ac_feat_tensor_count(p, AC_FT_SLOPES) / p->heads; b++)
      for (int64_t h = 0; h < p->heads; h++) c->alibi_slopes[b * p->heads + h] = slope(v, p, b, h);
  if (f->used & AC_FEAT_SINKS)
    for (int64_t h = 0; h < p->heads; h++) c->sinks[h] = (float)sink_val(c, v, h, &r);
  if (f->used & AC_FEAT_DESCALE)
    for (int x = 0; x < 3; x++)
      for (int64_t i = 0; i < p->batch * p->kv_heads; i++) {
        double u = 1 + ac_rng_uniform(&r);
        c->descale[x][i] = (float)(v->descale == AC_VD_TINY ? ldexp(u, -12) : v->descale == AC_VD_HUGE ? ldexp(u, 6) : u / 2 + 0.25);
      }
  if (f->used & AC_FEAT_DROPOUT) ac_dropout_fill(p, c->dropout_mask);   /* what the reference kernels draw */
  return 0;
}

void ac_vspec_name(const ac_vspec *v, char *buf, size_t n)
{
  static const char *const bias_names[] = {"bias", "bias-neginf", "bias-infrows", "bias-sentinel", "bias-nanmasked", "bias-ramp"};
  static const char *const mask_names[] = {"bmask", "bmask-band", "bmask-emptymid", "bmask-sparse"};
  static const char *const sink_names[] = {"sink", "sink-dom", "sink-vanish", "sink-level"};
  static const char *const desc_names[] = {"descale", "descale-tiny", "descale-huge"};
  size_t k = 0;
  buf[0] = 0;
#define ADD(...) (k += k < n ? (size_t)snprintf(buf + k, n - k, __VA_ARGS__) : 0)
  if (v->used & AC_FEAT_WINDOW) ADD("%swin%lld,%lld%s", k ? "-" : "", (long long)v->win_left, (long long)v->win_right, v->win_top_left ? "tl" : "");
  if (v->used & AC_FEAT_SOFTCAP) ADD("%scap%g", k ? "-" : "", v->softcap);
  if (v->used & AC_FEAT_ALIBI) ADD("%salibi%g%s", k ? "-" : "", v->alibi_max, v->alibi_per_batch ? "bh" : "");
  if (v->used & AC_FEAT_BIAS) ADD("%s%s%s", k ? "-" : "", bias_names[v->bias], v->bias_bcast_b || v->bias_bcast_h ? "-bc" : "");
  if ((v->used & AC_FEAT_BIAS) && v->bias == AC_VB_SENTINEL) ADD("%g", v->bias_scale);
  if (v->used & AC_FEAT_BOOL_MASK) ADD("%s%s", k ? "-" : "", mask_names[v->bmask]);
  if (v->used & AC_FEAT_SINKS) ADD("%s%s", k ? "-" : "", sink_names[v->sinks]);
  if (v->used & AC_FEAT_DESCALE) ADD("%s%s", k ? "-" : "", desc_names[v->descale]);
  if (v->used & AC_FEAT_DROPOUT) ADD("%sdrop%g", k ? "-" : "", v->dropout_p);
#undef ADD
}
