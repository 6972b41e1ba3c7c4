/* quant_adv.c: block-level adversaries of quantized tensors (docs/quantized.md "Adversarial
 * blocks"), for the suite and the fuzz families: values drawn so that the reference quantizer
 * meets its edge cases, or codes and scales edited after it. Each pattern touches some of the
 * tensor's scale groups (blocks, tokens, channels, heads or the tensor), chosen from r. */
#include "config.h"
#include "quant.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[AC_QADV_N] = {"none", "outlier", "zero_blocks", "scale_overflow", "scale_subnormal",
                                             "ties", "asym_range", "nan_in_block", "far_outlier", "given_small", "offset"};

const char *ac_qadv_name(int pattern) { return pattern >= 0 && pattern < AC_QADV_N ? names[pattern] : "?"; }

int ac_qadv_parse(const char *s, int *pattern)
{
  for (int k = 0; k < AC_QADV_N; k++)
    if (!strcmp(s, names[k])) return *pattern = k, 0;
  return -1;
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

/* The largest magnitude of the format's codes, and the exponent range of its scale dtype's
 * subnormals (the scale_subnormal adversary's target). */
static double top_of(int fmt)
{
  switch (fmt) {
  case AC_QF_Q8_0: return 127;
  case AC_QF_Q4_0: case AC_QF_IQ4_NL: return 8;
  case AC_QF_Q5_0: return 16;
  case AC_QF_Q4_1: case AC_QF_INT4: return 15;
  case AC_QF_Q5_1: return 31;
  case AC_QF_E4M3FN: return 448;
  case AC_QF_E4M3FNUZ: return 240;
  case AC_QF_E5M2: return 57344;
  case AC_QF_INT8: case AC_QF_UINT8: return 255;
  case AC_QF_INT2: return 3;
  default: return 6;   /* e2m1 */
  }
}

static void subnormal_range(ac_qsdtype t, int *lo, int *hi)
{
  if (t == AC_QSD_F16) *lo = -24, *hi = -15;
  else if (t == AC_QSD_E4M3) *lo = -9, *hi = -7;
  else if (t == AC_QSD_E8M0) *lo = -127, *hi = -125;
  else *lo = -132, *hi = -127;   /* f32, bf16: values stay within binary32's range (fp8's smallest code 2^-17) */
}

/* Values at ties of the format's quantizer in group idx[0 .. n): q8_0's d = 127/16 / 127 with every
 * other value at (k + 1/2) / 16; fp8: the largest code times 2^-4 and the others at midpoints of
 * adjacent fp8 values times 2^-4; int: a range [-a d, (steps - a) d], d = 2^-4, so that min-max's
 * scale is d and its zero point an integer, the others at (j + 1/2) d. Every quantizer of the
 * format meets a tie on each of them (half-away and half-even differ). */
static void ties(ac_case *c, char x, const ac_qspec *q, const int64_t *idx, int64_t n, int64_t pick, ac_rng *r)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  const double d = 1.0 / 16;
  if (!strcmp(f->kind, "fp8")) {
    double top = top_of(q->fmt);
    for (int64_t k = 0; k < n; k++) {
      double g = ac_qcode_value(q->fmt, (uint8_t)ac_rng_below(r, 0x70)), h = ac_qcode_value(q->fmt, 0);
      for (int t = 1; t < 0x7e; t++) {   /* the next value above g */
        double y = ac_qcode_value(q->fmt, (uint8_t)t);
        if (y > g && (h <= g || y < h)) h = y;
      }
      double v = k == pick ? top : (g + h) / 2;
      set_value(c, x, idx[k], (ac_rng_below(r, 2) ? -v : v) * d);
    }
    return;
  }
  if (!strcmp(f->kind, "int")) {
    int steps = q->fmt == AC_QF_INT8 || q->fmt == AC_QF_UINT8 ? 255 : f->code_max;
    int64_t a = 1 + (int64_t)ac_rng_below(r, (uint64_t)(steps - 1)), other = pick == 0 ? 1 % n : 0;
    for (int64_t k = 0; k < n; k++) {
      double v = k == pick ? (double)(steps - a) : k == other ? (double)-a : (double)ac_rng_range(r, -a, steps - a - 1) + 0.5;
      set_value(c, x, idx[k], v * d);
    }
    return;
  }
  for (int64_t k = 0; k < n; k++)
    set_value(c, x, idx[k], k == pick ? 127.0 / 16 : ((double)ac_rng_range(r, -120, 119) + 0.5) / 16);
}

/* Edits of the values before the quantizer, group by group (one in three, at least one). */
static void before(ac_case *c, char x, const ac_qspec *q, int pat, ac_rng *r)
{
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t ns = ac_qscale_count(q, d), gm = ac_qgroup_max(q, d);
  int64_t first = (int64_t)ac_rng_below(r, (uint64_t)ns);
  int64_t *idx = ac_xmalloc((size_t)gm * sizeof *idx);
  int slo, shi;
  subnormal_range(ac_qspec_sdtype(q), &slo, &shi);
  for (int64_t s = 0; s < ns; s++) {
    if (s != first && ac_rng_below(r, 3)) continue;
    int64_t n = ac_qgroup_of(q, d, s, idx), pick = (int64_t)ac_rng_below(r, (uint64_t)n);
    double amax = 0;
    for (int64_t k = 0; k < n; k++) amax = fmax(amax, fabs(get_value(c, x, idx[k])));
    if (!(amax > 0)) amax = 1;
    double shift = (ac_rng_below(r, 2) ? 1 : -1) * amax * (double)(1 + ac_rng_below(r, 4)) * 1.25;   /* offset */
    /* scale_subnormal: the group's largest at the largest code times a subnormal of the scale dtype */
    double sub = top_of(q->fmt) * ldexp(1.0, slo + (int)ac_rng_below(r, (uint64_t)(shi - slo + 1))) / amax;
    if (pat == AC_QADV_TIES) {
      ties(c, x, q, idx, n, pick, r);
      continue;
    }
    for (int64_t k = 0; k < n; k++) {
      int64_t i = idx[k];
      double v = get_value(c, x, i);
      switch (pat) {
      case AC_QADV_OUTLIER: if (k == pick) set_value(c, x, i, (v < 0 ? -300 : 300) * amax); break;   /* the rest rounds to 0 */
      case AC_QADV_FAR_OUTLIER: if (k != pick) set_value(c, x, i, ldexp(v, -16)); break;   /* the rest 2^-16 of the largest */
      case AC_QADV_ZERO_BLOCKS: set_value(c, x, i, 0.0); break;                                      /* scale 0 */
      case AC_QADV_OFFSET: set_value(c, x, i, v + shift); break;                /* every value of one sign */
      case AC_QADV_SCALE_OVERFLOW: set_value(c, x, i, v * 1e7 / amax); break;   /* amax / 127 past f16's 65504 */
      case AC_QADV_SCALE_SUBNORMAL: set_value(c, x, i, v * sub); break;          /* a subnormal scale */
      case AC_QADV_ASYM: /* +M first and -M: q4_0's d = M / -8 maps -M to 7 d = -7M/8 */
        set_value(c, x, i, k == 0 ? amax : k == pick || k == n - 1 ? -amax : v);
        break;
      default: break;
      }
    }
  }
  free(idx);
}

/* Edits of the codes and scales after it: a NaN scale (ggml, int, nvfp4, mxfp4: e8m0 255) or fp8 NaN
 * codes (e4m3fn's 0x7f and 0xff, e5m2's, e4m3fnuz's 0x80) inside some groups; for scale_subnormal on
 * mxfp4, blocks of exponent 0 (2^-127). */
static void after(ac_case *c, char x, const ac_qspec *q, int pat, ac_rng *r)
{
  int i = ac_qslot(x);
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qdata *t = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t ns = ac_qscale_count(q, d), gm = ac_qgroup_max(q, d), s = (int64_t)ac_rng_below(r, (uint64_t)ns);
  const ac_qsdtype sd = ac_qspec_sdtype(q);
  if (pat == AC_QADV_SCALE_SUBNORMAL) {   /* mxfp4 */
    for (int64_t g = 0; g < ns; g++)
      if (g == s || !ac_rng_below(r, 3)) ((uint8_t *)t->scales)[g] = 0;
    return;
  }
  if (!strcmp(f->kind, "fp8")) {
    static const uint8_t fn[] = {0x7f, 0xff}, e5[] = {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff};
    uint8_t nan = q->fmt == AC_QF_E4M3FNUZ ? 0x80 : q->fmt == AC_QF_E5M2 ? e5[ac_rng_below(r, 6)] : fn[ac_rng_below(r, 2)];
    int64_t *idx = ac_xmalloc((size_t)gm * sizeof *idx), n = ac_qgroup_of(q, d, s, idx);
    t->codes[idx[ac_rng_below(r, (uint64_t)n)]] = nan;
    free(idx);
    return;
  }
  uint64_t nan = sd == AC_QSD_E8M0 ? 0xff : sd == AC_QSD_E4M3 ? 0x7f : ac_nan_bits(ac_qsd_dtype(sd));
  ac_qsd_store(sd, t->scales, (size_t)s, nan);
}

/* given_small: a store tensor's given scales divided by 2 to 16 in some groups, so that values pass the
 * largest code (saturation or NaN); its codes derived again. */
static void given_small(ac_case *c, char x, const ac_qspec *q, ac_rng *r)
{
  ac_qdata *t = &c->quant->t[ac_qslot(x)];
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  int64_t ns = ac_qscale_count(q, d), first = (int64_t)ac_rng_below(r, (uint64_t)ns);
  const ac_qsdtype sd = ac_qspec_sdtype(q);
  for (int64_t s = 0; s < ns; s++)
    if (s == first || !ac_rng_below(r, 2)) {
      double v = ac_qscale_value(sd, ac_qsd_load(sd, t->scales, (size_t)s));
      ac_qsd_store(sd, t->scales, (size_t)s, ac_qsd_encode(sd, ldexp(v, -1 - (int)ac_rng_below(r, 4))));
    }
  ac_quant_store_derive(c, x);
}

int ac_quant_adversary(ac_case *c, char x, const ac_qspec *q, int pattern, ac_rng *r, ac_err *e)
{
  if (pattern < 0 || pattern >= AC_QADV_N) return ac_err_set(e, "unknown block pattern %d", pattern);
  const int mx = ac_qspec_sdtype(q) == AC_QSD_E8M0, given = ac_qstore_rule(q->store) == AC_QSR_GIVEN;
  if (q->store && (pattern == AC_QADV_NAN || pattern == AC_QADV_SCALE_OVERFLOW))   /* a store's values stay finite */
    pattern = AC_QADV_NONE;
  if (pattern == AC_QADV_GIVEN_SMALL && !given) pattern = AC_QADV_NONE;
  /* (c - z) s with a float zero point and a tiny scale has bits far below 2^-149, which the oracle's
   * fast level-0 sums (oracle/ziv.c) do not take for now: a store (whose quantizer sets z) keeps no
   * subnormal scales there, and another tensor's zero points are rounded to integers below */
  const ac_qsdtype zd = ac_qspec_zdtype(q);
  const int fz = ac_qfmt_get(q->fmt)->aux == AC_QAUX_ZERO && zd != AC_QSD_I8 && zd != AC_QSD_U8;
  if (q->store && fz && pattern == AC_QADV_SCALE_SUBNORMAL) pattern = AC_QADV_NONE;
  int edit_after = pattern == AC_QADV_NAN || (pattern == AC_QADV_SCALE_SUBNORMAL && mx);
  if (!edit_after && pattern != AC_QADV_NONE && pattern != AC_QADV_GIVEN_SMALL) before(c, x, q, pattern, r);
  if (ac_quant_apply(c, x, q, e)) return -1;
  if (pattern == AC_QADV_GIVEN_SMALL) given_small(c, x, q, r);
  if (pattern == AC_QADV_SCALE_SUBNORMAL && fz && !q->store) {
    ac_qdata *t = &c->quant->t[ac_qslot(x)];
    int64_t d[4];
    ac_qdims(&c->p, x, d);
    for (int64_t g = 0; g < ac_qscale_count(q, d); g++)
      ac_qsd_store(zd, t->aux, (size_t)g, ac_qsd_encode(zd, rint(ac_qscale_value(zd, ac_qsd_load(zd, t->aux, (size_t)g)))));
    ac_quant_decode(c, x);
  }
  if (edit_after && !q->store) {
    after(c, x, q, pattern, r);
    ac_quant_decode(c, x);
  }
  return 0;
}

/* A scale of dtype t, its value times f, rounded back into t (e8m0: its exponent moved by one). */
static void scale_times(ac_qsdtype t, void *scales, int64_t s, double f)
{
  switch (t) {
  case AC_QSD_F16:
  case AC_QSD_BF16:
  case AC_QSD_F32: ac_qsd_store(t, scales, (size_t)s, ac_qsd_encode(t, f * ac_qscale_value(t, ac_qsd_load(t, scales, (size_t)s)))); break;
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
  int64_t ns = ac_qscale_count(q, d), s = (int64_t)ac_rng_below(r, (uint64_t)ns);
  int64_t *idx = ac_xmalloc((size_t)ac_qgroup_max(q, d) * sizeof *idx), gl = ac_qgroup_of(q, d, s, idx);
  int top = f->code_signed ? 255 : f->code_max;
  switch (q->store ? 3 : ac_rng_below(r, 3)) {
  case 0: {
    int64_t k = idx[ac_rng_below(r, (uint64_t)gl)];
    t->codes[k] = (uint8_t)ac_rng_below(r, (uint64_t)top + 1);
    snprintf(desc, nd, "quant: %c code %lld to %u", x, (long long)k, (unsigned)t->codes[k]);
    break;
  }
  case 1: {
    int up = (int)ac_rng_below(r, 2);
    for (int64_t k = 0; k < gl; k++) {
      uint8_t *cd = &t->codes[idx[k]];
      int v = *cd + (up ? 1 : -1);
      if (!f->code_signed && (v < 0 || v > top)) continue;
      *cd = (uint8_t)v;
    }
    snprintf(desc, nd, "quant: %c codes of group %lld %s by one", x, (long long)s, up ? "up" : "down");
    break;
  }
  case 2: {
    double fct = ac_rng_below(r, 2) ? 2.0 : 0.5;
    scale_times(ac_qspec_sdtype(q), t->scales, s, fct);
    snprintf(desc, nd, "quant: %c scale %lld x%g", x, (long long)s, fct);
    break;
  }
  default: {   /* a store tensor: its codes follow its plain values; one of those moves by a code step */
    int64_t k = idx[ac_rng_below(r, (uint64_t)gl)];
    double v = ac_load(c->p.dtype, t->plain, (size_t)k);
    double nv = ac_rng_below(r, 2) ? v * 2 : v + (ac_rng_below(r, 2) ? fabs(v) : -fabs(v)) / 16;
    ac_store_bits(c->p.dtype, t->plain, (size_t)k, ac_encode_f64(c->p.dtype, isfinite(nv) ? nv : v));
    snprintf(desc, nd, "quant: %c plain value %lld to %g", x, (long long)k, ac_load(c->p.dtype, t->plain, (size_t)k));
    free(idx);
    ac_quant_store_derive(c, x);
    return 1;
  }
  }
  free(idx);
  ac_quant_decode(c, x);
  return 1;
}

int ac_quant_apply_specs(ac_case *c, const char *const spec[3], const char *adversary, uint64_t seed, ac_err *e)
{
  int pat = AC_QADV_NONE;
  if (adversary && ac_qadv_parse(adversary, &pat)) return ac_err_set(e, "--kv-adversary: unknown pattern '%s'", adversary);
  ac_rng r;
  ac_rng_init(&r, seed, 0x6b76616476ull);
  for (int i = 0; i < 3; i++) {
    ac_qspec q;
    ac_err qe;
    if (spec[i] && (ac_qspec_parse(spec[i], &q, &qe) || ac_quant_adversary(c, "qkv"[i], &q, i ? pat : AC_QADV_NONE, &r, &qe)))
      return ac_err_set(e, "--%c-format: %s", "qkv"[i], qe.msg);
  }
  return 0;
}
