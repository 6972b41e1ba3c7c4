/* quant_adv.c: block-level adversaries of quantized tensors (docs/quantized.md "Adversarial
 * blocks"), for the suite and the fuzz families: values drawn so that the reference quantizer
 * meets its edge cases, or codes and scales edited after it. Each pattern touches some of the
 * tensor's scale groups (blocks, tokens, channels, heads or the tensor), chosen from r. */
#include "config.h"
#include "quant.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const names[AC_QADV_N] = {"none", "outlier", "zero_blocks", "scale_overflow", "scale_subnormal",
                                             "ties", "asym_range", "nan_in_block"};

const char *ac_qadv_name(int pattern) { return pattern >= 0 && pattern < AC_QADV_N ? names[pattern] : "?"; }

int ac_qadv_parse(const char *s, int *pattern)
{
  for (int k = 0; k < AC_QADV_N; k++)
    if (!strcmp(s, names[k])) return *pattern = k, 0;
  return -1;
}

/* The dense index of element k of the n elements of scale group s (quant_case.c's grouping). */
static int64_t member(const ac_qspec *q, const int64_t d[4], int64_t s, int64_t k)
{
  int64_t T = d[2], D = d[3];
  switch (q->gran) {
  case AC_QG_BLOCK: {
    int64_t nb = D / q->block;
    return (s / nb) * D + (s % nb) * q->block + k;
  }
  case AC_QG_TOKEN: return s * D + k;
  case AC_QG_CHANNEL: return ((s / D) * T + k) * D + s % D;
  case AC_QG_HEAD: return s * T * D + k;
  default: return k;
  }
}

static int64_t group_len(const ac_qspec *q, const int64_t d[4])
{
  switch (q->gran) {
  case AC_QG_BLOCK: return q->block;
  case AC_QG_TOKEN: return d[3];
  case AC_QG_CHANNEL: return d[2];
  case AC_QG_HEAD: return d[2] * d[3];
  default: return d[0] * d[1] * d[2] * d[3];
  }
}

static void *values(ac_case *c, char x) { return x == 'q' ? c->q : x == 'k' ? c->k : c->v; }

/* Element i of tensor x (not yet quantized: its own dtype) set to v rounded into that dtype, or read. */
static void set_value(ac_case *c, char x, int64_t i, double v)
{
  ac_dtype t = ac_tensor_dtype(&c->p, x);
  ac_store_bits(t, values(c, x), (size_t)i, ac_encode_f64(t, v));
}

static double get_value(ac_case *c, char x, int64_t i)
{
  return ac_load(ac_tensor_dtype(&c->p, x), values(c, x), (size_t)i);
}

/* Edits of the values before the quantizer, group by group (one in three, at least one). */
static void before(ac_case *c, char x, const ac_qspec *q, int pat, ac_rng *r)
{
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t ns = ac_qscale_count(q, d), n = group_len(q, d);
  int64_t first = (int64_t)ac_rng_below(r, (uint64_t)ns);
  for (int64_t s = 0; s < ns; s++) {
    if (s != first && ac_rng_below(r, 3)) continue;
    int64_t pick = (int64_t)ac_rng_below(r, (uint64_t)n);
    double amax = 0;
    for (int64_t k = 0; k < n; k++) amax = fmax(amax, fabs(get_value(c, x, member(q, d, s, k))));
    if (!(amax > 0)) amax = 1;
    for (int64_t k = 0; k < n; k++) {
      int64_t i = member(q, d, s, k);
      double v = get_value(c, x, i);
      switch (pat) {
      case AC_QADV_OUTLIER: if (k == pick) set_value(c, x, i, (v < 0 ? -300 : 300) * amax); break;   /* the rest rounds to 0 */
      case AC_QADV_ZERO_BLOCKS: set_value(c, x, i, 0.0); break;                                      /* scale 0 */
      case AC_QADV_SCALE_OVERFLOW: set_value(c, x, i, v * 1e7 / amax); break;   /* amax / 127 past f16's 65504 */
      case AC_QADV_SCALE_SUBNORMAL: set_value(c, x, i, v * 1e-6 / amax); break; /* scales below f16's 2^-14 */
      case AC_QADV_TIES:   /* x / d = k + 1/2 at d = 2^-4: every code a tie of the rounding rule */
        set_value(c, x, i, k == pick ? 127.0 / 16 : ((double)ac_rng_range(r, -120, 119) + 0.5) / 16);
        break;
      case AC_QADV_ASYM: /* +M first and -M: q4_0's d = M / -8 maps -M to 7 d = -7M/8 */
        set_value(c, x, i, k == 0 ? amax : k == pick || k == n - 1 ? -amax : v);
        break;
      default: break;
      }
    }
  }
}

/* Edits of the codes and scales after it: a NaN scale (ggml, int, nvfp4, mxfp4) or fp8 NaN codes
 * inside some groups. */
static void after(ac_case *c, char x, const ac_qspec *q, ac_rng *r)
{
  int i = ac_qslot(x);
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t ns = ac_qscale_count(q, d), n = group_len(q, d), s = (int64_t)ac_rng_below(r, (uint64_t)ns);
  if (!strcmp(f->kind, "fp8")) {
    uint8_t nan = q->fmt == AC_QF_E4M3FNUZ ? 0x80 : q->fmt == AC_QF_E5M2 ? 0x7e : 0x7f;
    t->codes[member(q, d, s, (int64_t)ac_rng_below(r, (uint64_t)n))] = nan;
    return;
  }
  switch (f->sdtype) {
  case AC_QSD_F16: ac_store_bits(AC_F16, t->scales, (size_t)s, 0x7e00); break;
  case AC_QSD_F32: ac_store_bits(AC_F32, t->scales, (size_t)s, 0x7fc00000); break;
  default: ((uint8_t *)t->scales)[s] = f->sdtype == AC_QSD_E8M0 ? 0xff : 0x7f; break;
  }
}

int ac_quant_adversary(ac_case *c, char x, const ac_qspec *q, int pattern, ac_rng *r, ac_err *e)
{
  if (pattern < 0 || pattern >= AC_QADV_N) return ac_err_set(e, "unknown block pattern %d", pattern);
  if (pattern != AC_QADV_NAN && pattern != AC_QADV_NONE) before(c, x, q, pattern, r);
  if (ac_quant_apply(c, x, q, e)) return -1;
  if (pattern == AC_QADV_NAN) {
    after(c, x, q, r);
    ac_quant_decode(c, x);
  }
  return 0;
}

/* A scale of dtype t, its value times f, rounded back into t (e8m0: its exponent moved by one). */
static void scale_times(ac_qsdtype t, void *scales, int64_t s, double f)
{
  switch (t) {
  case AC_QSD_F16: ac_store_bits(AC_F16, scales, (size_t)s, ac_encode_f64(AC_F16, f * ac_load(AC_F16, scales, (size_t)s))); break;
  case AC_QSD_F32: ac_store_bits(AC_F32, scales, (size_t)s, ac_encode_f64(AC_F32, f * ac_load(AC_F32, scales, (size_t)s))); break;
  case AC_QSD_E4M3: {
    uint8_t *b = (uint8_t *)scales + s;
    *b = ac_e4m3_from_f64(f * ac_decode(AC_E4M3, *b), AC_E4M3_SATURATE);
    break;
  }
  default: {
    uint8_t *b = (uint8_t *)scales + s;
    int e = *b + (f > 1 ? 1 : -1);
    *b = (uint8_t)(e < 0 ? 0 : e > 254 ? 254 : e);
  }
  }
}

int ac_quant_mutate(ac_case *c, ac_rng *r, char *desc, size_t nd)
{
  int have[3], n = 0;
  for (int i = 0; i < 3; i++)
    if (c->p.quant[i].fmt && c->quant) have[n++] = i;
  if (!n) return 0;
  int i = have[ac_rng_below(r, (uint64_t)n)];
  char x = "qkv"[i];
  const ac_qspec *q = &c->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t ns = ac_qscale_count(q, d), gl = group_len(q, d), s = (int64_t)ac_rng_below(r, (uint64_t)ns);
  int top = f->code_signed ? 255 : f->code_max;
  switch (ac_rng_below(r, 3)) {
  case 0: {
    int64_t k = member(q, d, s, (int64_t)ac_rng_below(r, (uint64_t)gl));
    t->codes[k] = (uint8_t)ac_rng_below(r, (uint64_t)top + 1);
    snprintf(desc, nd, "quant: %c code %lld to %u", x, (long long)k, (unsigned)t->codes[k]);
    break;
  }
  case 1: {
    int up = (int)ac_rng_below(r, 2);
    for (int64_t k = 0; k < gl; k++) {
      uint8_t *cd = &t->codes[member(q, d, s, k)];
      int v = *cd + (up ? 1 : -1);
      if (!f->code_signed && (v < 0 || v > top)) continue;
      *cd = (uint8_t)v;
    }
    snprintf(desc, nd, "quant: %c codes of group %lld %s by one", x, (long long)s, up ? "up" : "down");
    break;
  }
  default: {
    double fct = ac_rng_below(r, 2) ? 2.0 : 0.5;
    scale_times(f->sdtype, t->scales, s, fct);
    snprintf(desc, nd, "quant: %c scale %lld x%g", x, (long long)s, fct);
  }
  }
  ac_quant_decode(c, x);
  return 1;
}
