/* quant_store.c: the quantizers of quantize-on-store tensors (quant.h "quantize-on-store",
 * docs/quantized.md "Quantize-on-store"): the codes, scales and zero points a kernel that quantizes
 * its own cache must write for its plain K and V, by the rule, rounding, arithmetic and overflow it
 * declares. Exact arithmetic is MPFR's (every step exact, each stored quantity rounded once); the
 * binary32 one is C's float arithmetic, step by step as the rule is written. */
#include "config.h"
#include "quant.h"
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dtype_mpfr.h"

static const char *const rules[AC_QSR_N] = {"none", "absmax", "minmax", "given", "ggml"};
static const char *const rounds[AC_QRD_N] = {"even", "away", "trunc"};
static const char *const ariths[AC_QAR_N] = {"f32", "exact"};
static const char *const overflows[AC_QOV_N] = {"sat", "nan"};

static int word_in(const char *w, size_t l, const char *const *set, int n)
{
  for (int k = 0; k < n; k++)
    if (strlen(set[k]) == l && !strncmp(w, set[k], l)) return k;
  return -1;
}

int ac_qstore_parse(const char *s, int32_t *v, ac_err *e)
{
  ac_qstore q = {AC_QSR_NONE, AC_QRD_EVEN, AC_QAR_F32, AC_QOV_SAT};
  int first = 1;
  for (const char *t = s; t;) {
    const char *end = strchr(t, '-');
    size_t l = end ? (size_t)(end - t) : strlen(t);
    int k;
    if (first && (k = word_in(t, l, rules, AC_QSR_N)) > 0) q.rule = k;
    else if (!first && (k = word_in(t, l, rounds, AC_QRD_N)) >= 0) q.round = k;
    else if (!first && (k = word_in(t, l, ariths, AC_QAR_N)) >= 0) q.arith = k;
    else if (!first && (k = word_in(t, l, overflows, AC_QOV_N)) >= 0) q.overflow = k;
    else
      return ac_err_set(e, "store quantizer '%.60s': unknown word '%.*s' (RULE-ROUND-ARITH-OVERFLOW: absmax, minmax, "
                           "given, ggml; even, away, trunc; f32, exact; sat, nan)", s, (int)(l < 20 ? l : 20), t);
    first = 0;
    t = end ? end + 1 : NULL;
  }
  if (q.rule == AC_QSR_GGML && (q.round || q.arith || q.overflow))
    return ac_err_set(e, "store quantizer '%.60s': ggml's rule has its own rounding and arithmetic (write \"ggml\")", s);
  *v = ac_qstore_pack(&q);
  return 0;
}

int ac_qstore_list_parse(const char *s, int32_t *q, int max, ac_err *e)
{
  int n = 0;
  ac_err pe;
  for (const char *t = s; t && *t;) {
    const char *end = strchr(t, ',');
    size_t l = end ? (size_t)(end - t) : strlen(t);
    char w[64];
    snprintf(w, sizeof w, "%.*s", (int)(l < sizeof w ? l : sizeof w - 1), t);
    int32_t v;
    if (ac_qstore_parse(w, &v, &pe)) return e ? ac_err_set(e, "%s", pe.msg) : -1;
    if (n < max) q[n++] = v;
    t = end ? end + 1 : NULL;
  }
  return n;
}

const char *ac_qstore_str(int32_t v, char *buf, size_t n)
{
  ac_qstore q;
  ac_qstore_unpack(v, &q);
  if (q.rule == AC_QSR_GGML || q.rule <= 0 || q.rule >= AC_QSR_N || q.round >= AC_QRD_N || q.arith >= AC_QAR_N ||
      q.overflow >= AC_QOV_N)
    snprintf(buf, n, "%s", q.rule > 0 && q.rule < AC_QSR_N ? rules[q.rule] : "?");
  else
    snprintf(buf, n, "%s-%s-%s-%s", rules[q.rule], rounds[q.round], ariths[q.arith], overflows[q.overflow]);
  return buf;
}

int ac_qstore_check(const ac_qspec *q, char tensor, ac_err *e)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  ac_qstore s;
  ac_qstore_unpack(q->store, &s);
  char st[64];
  ac_qstore_str(q->store, st, sizeof st);
  (void)tensor;
  if (!f || s.rule <= 0 || s.rule >= AC_QSR_N || s.round >= AC_QRD_N || s.arith >= AC_QAR_N || s.overflow >= AC_QOV_N)
    return ac_err_set(e, "unknown store quantizer %d", (int)q->store);
  int fp8 = !strcmp(f->kind, "fp8"), in = !strcmp(f->kind, "int");
  int ok = s.rule == AC_QSR_ABSMAX   ? fp8 || q->fmt == AC_QF_INT8
           : s.rule == AC_QSR_MINMAX ? in
           : s.rule == AC_QSR_GIVEN  ? fp8 || in
                                     : f->ggml_bytes != 0;
  if (!ok)
    return ac_err_set(e, "store=%s: %s stores no %s (absmax: fp8 and int8; minmax: int; given: fp8 and int; ggml: the "
                         "ggml formats and mxfp4)", st, rules[s.rule], f->name);
  if (s.overflow == AC_QOV_NAN && !fp8) return ac_err_set(e, "store=%s: nan on overflow is fp8's (int codes saturate)", st);
  if (s.rule == AC_QSR_ABSMAX && q->fmt == AC_QF_INT8 && ac_qspec_zdtype(q) != AC_QSD_I8)
    return ac_err_set(e, "store=%s: int8's absmax rule has the integer zero point 0", st);
  return 0;
}

/* ---- codes from a quotient -------------------------------------------------------------- */

/* The positive finite values of an fp8 format in increasing order with their codes. */
typedef struct { double v[128]; uint8_t code[128]; int n; double next; } fp8_grid;

static double fp8_value(int fmt, uint8_t c) { return ac_qcode_value(fmt, c); }

static const fp8_grid *grid_of(int fmt)
{
  static fp8_grid g[3];
  static int ready[3];
  int k = fmt == AC_QF_E4M3FN ? 0 : fmt == AC_QF_E4M3FNUZ ? 1 : 2;
  if (!ready[k]) {
    fp8_grid *x = &g[k];
    x->n = 0;
    for (int c = 1; c < 128; c++) {   /* codes 1..127 increase with their value: sign bit clear */
      double v = fp8_value(fmt, (uint8_t)c);
      if (isfinite(v) && v > 0) x->v[x->n] = v, x->code[x->n++] = (uint8_t)c;
    }
    double top = x->v[x->n - 1];
    x->next = top + (top - x->v[x->n - 2]);   /* the value after the largest, had the format one more */
    ready[k] = 1;
  }
  return &g[k];
}

/* |num| / den (den > 0 finite) against g (every product exact in binary64: g and a midpoint have at
 * most 5 significant bits, den at most 24): -1, 0, 1. */
static int cmp_q(double anum, double g, double den)
{
  double p = g * den;
  return anum < p ? -1 : anum > p ? 1 : 0;
}

/* The fp8 code of num / den rounded by mode, overflow as ov (num finite or not, den > 0). */
static uint8_t fp8_code(int fmt, double num, double den, int mode, int ov)
{
  const uint8_t nan = fmt == AC_QF_E4M3FNUZ ? 0x80 : fmt == AC_QF_E5M2 ? 0x7e : 0x7f;
  if (isnan(num)) return nan;
  const fp8_grid *g = grid_of(fmt);
  const int neg = signbit(num) != 0;
  const double a = fabs(num);
  uint8_t code;
  int lo = -1, hi = g->n;   /* g->v[lo] * den <= a < g->v[hi] * den (index -1: 0) */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (cmp_q(a, g->v[mid], den) >= 0) lo = mid;
    else hi = mid;
  }
  double below = lo < 0 ? 0 : g->v[lo], above = hi < g->n ? g->v[hi] : g->next;
  int up;
  if (lo >= 0 && cmp_q(a, below, den) == 0) up = 0;
  else if (mode == AC_QRD_TRUNC) up = 0;
  else {
    int c = cmp_q(a, (below + above) / 2, den);
    up = c > 0 || (c == 0 && (mode == AC_QRD_AWAY || (lo >= 0 && (g->code[lo] & 1))));
  }
  if (up && hi == g->n) {   /* past the largest finite value */
    if (ov == AC_QOV_SAT) code = g->code[g->n - 1];
    else return fmt == AC_QF_E5M2 ? (uint8_t)(neg ? 0xfc : 0x7c) : (uint8_t)(fmt == AC_QF_E4M3FNUZ ? 0x80 : neg ? 0xff : 0x7f);
  } else {
    int i = up ? hi : lo;
    code = i < 0 ? 0 : g->code[i];
  }
  if (isinf(num) && ov == AC_QOV_NAN) return fmt == AC_QF_E5M2 ? (uint8_t)(neg ? 0xfc : 0x7c) : nan;
  if (neg && (code || fmt != AC_QF_E4M3FNUZ)) code |= 0x80;   /* fnuz has no -0 */
  return code;
}

static double round_mode(double v, int mode) { return mode == AC_QRD_AWAY ? round(v) : mode == AC_QRD_TRUNC ? trunc(v) : rint(v); }

static void int_range(int fmt, int *qmin, int *qmax)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  *qmin = fmt == AC_QF_INT8 ? -128 : 0;
  *qmax = fmt == AC_QF_INT8 ? 127 : f->code_max;
}

static uint8_t clamp_code(double v, int qmin, int qmax)
{
  int c = isnan(v) ? qmin : v < qmin ? qmin : v > qmax ? qmax : (int)v;
  return (uint8_t)(int8_t)c;   /* int8's codes as their bytes; the others are 0 .. 255 */
}

/* R(x / s + z) in exact arithmetic (MPFR at 640 bits decides every tie: the sum's distance from a
 * half integer, when not 0, is far above 2^-640 of it). */
static double exact_round_sum(double x, double s, double z, int mode, mpfr_t t, mpfr_t u)
{
  mpfr_set_d(t, x, MPFR_RNDN);
  mpfr_div_d(t, t, s, MPFR_RNDN);
  mpfr_set_d(u, z, MPFR_RNDN);
  mpfr_add(t, t, u, MPFR_RNDN);
  mpfr_rnd_t r = mode == AC_QRD_AWAY ? MPFR_RNDNA : mode == AC_QRD_TRUNC ? MPFR_RNDZ : MPFR_RNDN;
  if (r == MPFR_RNDNA) mpfr_round(t, t);
  else mpfr_rint(t, t, r);
  return mpfr_get_d(t, MPFR_RNDN);
}

/* ---- one group ----------------------------------------------------------------------------- */

typedef struct {
  const ac_qspec *q;
  ac_qstore st;
  ac_qsdtype sd, zd;
  int qmin, qmax;
  mpfr_t t, u;
} store_ctx;

/* A scale computed as s: rounded into the scale dtype (exact: from s's exact value, which t holds). */
static uint64_t stored_scale(store_ctx *x, double s32, int exact)
{
  ac_dtype dt = ac_qsd_dtype(x->sd);
  uint64_t b = exact ? ac_encode_mpfr(dt, x->t, AC_E4M3_SATURATE) : ac_encode_f64(dt, s32);
  double v = ac_decode(dt, b);
  return v > 0 && isfinite(v) ? b : ac_encode_f64(dt, 1.0);
}

static void store_absmax(store_ctx *x, const double *v, int64_t n, uint64_t *scale, uint64_t *aux)
{
  const int fmt = x->q->fmt;
  double a = 0;
  for (int64_t j = 0; j < n; j++) a = fmax(a, fabs(v[j]));
  const double top = fmt == AC_QF_E4M3FN ? 448 : fmt == AC_QF_E4M3FNUZ ? 240 : fmt == AC_QF_E5M2 ? 57344 : 127;
  float s32 = (float)a / (float)top;
  if (x->st.arith == AC_QAR_EXACT) mpfr_set_d(x->t, a, MPFR_RNDN), mpfr_div_d(x->t, x->t, top, MPFR_RNDN);
  *scale = stored_scale(x, s32, x->st.arith == AC_QAR_EXACT);
  *aux = 0;
}

static void store_minmax(store_ctx *x, const double *v, int64_t n, uint64_t *scale, uint64_t *aux)
{
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t j = 0; j < n; j++) lo = fmin(lo, v[j]), hi = fmax(hi, v[j]);
  const int exact = x->st.arith == AC_QAR_EXACT;
  const double steps = (double)(x->qmax - x->qmin);
  float s32 = ((float)hi - (float)lo) / (float)steps;
  if (exact) mpfr_set_d(x->t, hi, MPFR_RNDN), mpfr_sub_d(x->t, x->t, lo, MPFR_RNDN), mpfr_div_d(x->t, x->t, steps, MPFR_RNDN);
  *scale = stored_scale(x, s32, exact);
  const double ss = ac_qscale_value(x->sd, *scale);
  if (x->zd == AC_QSD_I8 || x->zd == AC_QSD_U8) {   /* z = qmin - R(lo / s), clamped to the codes */
    double r = exact ? exact_round_sum(lo, ss, 0, x->st.round, x->t, x->u) : round_mode((double)((float)lo / (float)ss), x->st.round);
    double z = x->qmin - r;
    z = z < x->qmin ? x->qmin : z > x->qmax ? x->qmax : z;
    *aux = (uint64_t)(uint8_t)(int)(x->zd == AC_QSD_I8 ? (z < -128 ? -128 : z > 127 ? 127 : z) : (z < 0 ? 0 : z > 255 ? 255 : z));
  } else {   /* a float zero point qmin - lo / s, rounded into its dtype */
    if (exact) {
      mpfr_set_d(x->t, lo, MPFR_RNDN);
      mpfr_div_d(x->t, x->t, ss, MPFR_RNDN);
      mpfr_si_sub(x->t, x->qmin, x->t, MPFR_RNDN);
      *aux = ac_encode_mpfr(ac_qsd_dtype(x->zd), x->t, AC_E4M3_SATURATE);
    } else {
      *aux = ac_encode_f64(ac_qsd_dtype(x->zd), (double)((float)x->qmin - (float)lo / (float)ss));
    }
  }
}

/* The codes of the group's values against its (stored) scale and zero point. */
static void store_codes(store_ctx *x, const double *v, int64_t n, uint8_t *codes, uint64_t scale, uint64_t aux)
{
  const int fmt = x->q->fmt, exact = x->st.arith == AC_QAR_EXACT;
  const double ss = ac_qscale_value(x->sd, scale);
  const int fp8 = !strcmp(ac_qfmt_get(fmt)->kind, "fp8"), izero = x->zd == AC_QSD_I8 || x->zd == AC_QSD_U8;
  const double z = x->zd == AC_QSD_N ? 0 : ac_qscale_value(x->zd, aux);
  for (int64_t j = 0; j < n; j++) {
    if (fp8) {
      codes[j] = exact ? fp8_code(fmt, v[j], ss, x->st.round, x->st.overflow)
                       : fp8_code(fmt, (double)((float)v[j] / (float)ss), 1.0, x->st.round, x->st.overflow);
      continue;
    }
    double c;
    if (exact) c = izero ? exact_round_sum(v[j], ss, 0, x->st.round, x->t, x->u) + z : exact_round_sum(v[j], ss, z, x->st.round, x->t, x->u);
    else {
      float q = (float)v[j] / (float)ss;
      c = izero ? round_mode((double)q, x->st.round) + z : round_mode((double)(q + (float)z), x->st.round);
    }
    codes[j] = clamp_code(c, x->qmin, x->qmax);
  }
}

void ac_qstore_group(const ac_qspec *q, const double *v, int64_t n, uint8_t *codes, uint64_t *scale, uint64_t *aux)
{
  store_ctx x = {.q = q, .sd = ac_qspec_sdtype(q), .zd = ac_qspec_zdtype(q)};
  ac_qstore_unpack(q->store, &x.st);
  if (x.st.rule == AC_QSR_GGML) {
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    for (int64_t j = 0; j < n; j++) f[j] = (float)v[j];
    ac_qref_group(q->fmt, f, n, codes, scale, aux, 0.0f);
    free(f);
    return;
  }
  if (x.zd == AC_QSD_N || !strcmp(ac_qfmt_get(q->fmt)->kind, "fp8")) x.zd = AC_QSD_N;
  int_range(q->fmt, &x.qmin, &x.qmax);
  mpfr_inits2(640, x.t, x.u, (mpfr_ptr)0);
  if (x.st.rule == AC_QSR_ABSMAX) store_absmax(&x, v, n, scale, aux);
  else if (x.st.rule == AC_QSR_MINMAX) store_minmax(&x, v, n, scale, aux);
  if (x.st.rule == AC_QSR_ABSMAX && q->fmt == AC_QF_INT8) x.qmin = -127;   /* symmetric: -127 .. 127 */
  store_codes(&x, v, n, codes, *scale, *aux);
  mpfr_clears(x.t, x.u, (mpfr_ptr)0);
}
