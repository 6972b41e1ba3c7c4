/* search_variants.c: mutations of the attention variants of a case (the search's ac_mutate draws
 * one for a variant case instead of a mask or scale change half the time): the window to a
 * neighbouring width, the softcap, one ALiBi slope, sink or descale doubled or halved, a bias
 * row perturbed or one bias element to -inf, a few boolean-mask bits flipped or a row emptied.
 * Shapes never change here: the variant tensors keep theirs. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include "fuzz.h"
#include "variants.h"

static void mutate_bias(ac_case *c, ac_rng *r, double sigma, const ac_gen_limits *l, char *desc, size_t nd)
{
  ac_problem *p = &c->p;
  ac_dtype t = p->f.bias_dtype;
  int64_t b = (int64_t)ac_rng_below(r, (uint64_t)p->f.bias_b), h = (int64_t)ac_rng_below(r, (uint64_t)p->f.bias_h);
  int64_t i = (int64_t)ac_rng_below(r, (uint64_t)p->tq);
  if (!l->no_nonfinite && ac_rng_below(r, 3) == 0) {
    int64_t j = (int64_t)ac_rng_below(r, (uint64_t)p->tk);
    ac_store_bits(t, c->bias, ac_biasidx(p, b, h, i, j), ac_encode_f64(t, -INFINITY));
    snprintf(desc, nd, "variant: bias (%lld,%lld,%lld,%lld) to -inf", (long long)b, (long long)h, (long long)i, (long long)j);
    return;
  }
  for (int64_t j = 0; j < p->tk; j++) {
    size_t x = ac_biasidx(p, b, h, i, j);
    double v = ac_load(t, c->bias, x);
    if (isfinite(v)) ac_set(t, c->bias, x, v + sigma * ac_rng_normal(r));
  }
  snprintf(desc, nd, "variant: bias row (%lld,%lld,%lld) perturbed sigma=%g", (long long)b, (long long)h, (long long)i, sigma);
}

static void mutate_mask(ac_case *c, ac_rng *r, char *desc, size_t nd)
{
  ac_problem *p = &c->p;
  int64_t b = (int64_t)ac_rng_below(r, (uint64_t)p->f.mask_b), h = (int64_t)ac_rng_below(r, (uint64_t)p->f.mask_h);
  int64_t i = (int64_t)ac_rng_below(r, (uint64_t)p->tq);
  if (ac_rng_below(r, 4) == 0) {
    for (int64_t j = 0; j < p->tk; j++) c->bool_mask[ac_bmaskidx(p, b, h, i, j)] = 0;
    snprintf(desc, nd, "variant: mask row (%lld,%lld,%lld) emptied", (long long)b, (long long)h, (long long)i);
    return;
  }
  int n = 1 + (int)ac_rng_below(r, 4);
  for (int k = 0; k < n; k++) {
    size_t x = ac_bmaskidx(p, b, h, i, (int64_t)ac_rng_below(r, (uint64_t)p->tk));
    c->bool_mask[x] = (uint8_t)!c->bool_mask[x];
  }
  snprintf(desc, nd, "variant: %d mask bits of row (%lld,%lld,%lld) flipped", n, (long long)b, (long long)h, (long long)i);
}

/* One float of a [n] tensor times 2 or 1/2 (plus a sink's shift). */
static void mutate_float(float *v, int64_t n, ac_rng *r, double shift, const char *what, char *desc, size_t nd)
{
  int64_t i = (int64_t)ac_rng_below(r, (uint64_t)n);
  double f = ac_rng_below(r, 2) ? 2.0 : 0.5;
  v[i] = shift != 0 ? (float)(v[i] + shift) : (float)(v[i] * f);
  snprintf(desc, nd, "variant: %s[%lld] %s", what, (long long)i, shift != 0 ? "shifted" : f > 1 ? "doubled" : "halved");
}

static int64_t near_width(int64_t w, ac_rng *r)
{
  static const int64_t tiles[] = {16, 32, 64, 128};
  switch (ac_rng_below(r, 3)) {
  case 0: return w < 0 ? 0 : w + ac_rng_range(r, w > 0 ? -1 : 0, 1);
  case 1: return tiles[ac_rng_below(r, 4)] + ac_rng_range(r, -1, 1);
  default: return ac_rng_below(r, 2) ? -1 : 0;
  }
}

void ac_mutate_variant(ac_case *c, ac_rng *r, double sigma, const ac_gen_limits *l, char *desc, size_t nd)
{
  ac_problem *p = &c->p;
  uint32_t bits[8];
  int n = 0;
  for (uint32_t b = 1; b & AC_FEAT_ALL; b <<= 1)
    if ((p->f.used & b) && b != AC_FEAT_MIXED_DTYPES) bits[n++] = b;
  if (!n) return;
  switch (bits[ac_rng_below(r, (uint64_t)n)]) {
  case AC_FEAT_WINDOW:
    if (ac_rng_below(r, 2)) p->f.win_left = near_width(p->f.win_left, r);
    else p->f.win_right = near_width(p->f.win_right, r);
    snprintf(desc, nd, "variant: window (%lld, %lld)", (long long)p->f.win_left, (long long)p->f.win_right);
    break;
  case AC_FEAT_SOFTCAP:
    p->f.softcap *= ac_rng_below(r, 2) ? 2.0 : 0.5;
    p->f.softcap = fmin(fmax(p->f.softcap, 0x1p-10), 0x1p20);   /* stays finite and > 0 */
    snprintf(desc, nd, "variant: softcap %g", p->f.softcap);
    break;
  case AC_FEAT_ALIBI:
    mutate_float(c->alibi_slopes, ac_feat_tensor_count(p, AC_FT_SLOPES), r, 0, "alibi slope", desc, nd);
    break;
  case AC_FEAT_BIAS: mutate_bias(c, r, sigma, l, desc, nd); break;
  case AC_FEAT_BOOL_MASK: mutate_mask(c, r, desc, nd); break;
  case AC_FEAT_SINKS: mutate_float(c->sinks, p->heads, r, 4 * sigma * ac_rng_normal(r) + 1e-3, "sink", desc, nd); break;
  default: {
    int x = (int)ac_rng_below(r, 3);
    mutate_float(c->descale[x], p->batch * p->kv_heads, r, 0, x == 0 ? "descale_q" : x == 1 ? "descale_k" : "descale_v", desc, nd);
  }
  }
}
