/* toracle_ref.c: brute-force reference and case builders for the oracle tests. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "toracle_ref.h"
#include "dtype_mpfr.h"
#include "quant.h"
#include "tdtype_ref.h"

/* ---- quantized tensors, read from their definitions (docs/quantized.md), not from src/core ---- */

/* The number a code stands for (q8_0, int8: signed byte; q4_0: code - 8; q5_0: code - 16; iq4_nl:
 * its table; fp8: the format; e2m1: sign, 2 exponent bits of bias 1, 1 mantissa bit). */
static void ref_code(mpfr_t x, int fmt, uint8_t c)
{
  static const int iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  switch (fmt) {
  case AC_QF_Q8_0:
  case AC_QF_INT8: mpfr_set_si(x, c < 128 ? c : (long)c - 256, MPFR_RNDN); return;
  case AC_QF_Q4_0: mpfr_set_si(x, (long)c - 8, MPFR_RNDN); return;
  case AC_QF_Q5_0: mpfr_set_si(x, (long)c - 16, MPFR_RNDN); return;
  case AC_QF_IQ4_NL: mpfr_set_si(x, iq4nl[c & 15], MPFR_RNDN); return;
  case AC_QF_E4M3FN: ref_read_bits(x, REF_E4M3, c, NULL); return;
  case AC_QF_E5M2: ref_read_bits(x, REF_E5M2, c, NULL); return;
  case AC_QF_E4M3FNUZ: {
    if (c == 0x80) { mpfr_set_nan(x); return; }
    long e = (c >> 3) & 15, m = c & 7;
    mpfr_set_si_2exp(x, e ? 8 + m : m, e ? e - 11 : -10, MPFR_RNDN);
    if (c & 0x80) mpfr_neg(x, x, MPFR_RNDN);
    return;
  }
  case AC_QF_NVFP4:
  case AC_QF_MXFP4: {
    long e = (c >> 1) & 3, m = c & 1;
    mpfr_set_si_2exp(x, e ? 2 + m : m, e ? e - 2 : -1, MPFR_RNDN);
    if (c & 8) mpfr_neg(x, x, MPFR_RNDN);
    return;
  }
  default: mpfr_set_ui(x, c, MPFR_RNDN); return;   /* q4_1, q5_1, int4 */
  }
}

/* Scale element of (b, h, t, d) for the granularity, from the definitions. */
static int64_t ref_scale_index(const ac_qspec *q, const int64_t dim[4], int64_t b, int64_t h, int64_t t, int64_t d)
{
  int64_t H = dim[1], T = dim[2], D = dim[3];
  switch (q->gran) {
  case AC_QG_BLOCK: return ((b * H + h) * T + t) * (D / q->block) + d / q->block;
  case AC_QG_HEAD: return b * H + h;
  case AC_QG_TOKEN: return (b * H + h) * T + t;
  case AC_QG_CHANNEL: return (b * H + h) * D + d;
  default: return 0;
  }
}

void ref_value(mpfr_t out, const ac_case *c, char x, size_t idx)
{
  const ac_problem *p = &c->p;
  int i = x == 'q' ? 0 : x == 'k' ? 1 : 2;
  const void *dense = i == 0 ? c->q : i == 1 ? c->k : c->v;
  const ac_qspec *q = &p->quant[i];
  if (!q->fmt) {
    ac_dtype dt = ac_tensor_dtype(p, x);
    mpfr_set_d(out, ac_load(dt, dense, idx), MPFR_RNDN);
    return;
  }
  const ac_qdata *qd = &c->quant->t[i];
  int64_t dim[4] = {p->batch, x == 'q' ? p->heads : p->kv_heads, x == 'q' ? p->tq : p->tk, x == 'v' ? p->dv : p->dk};
  int64_t n = (int64_t)idx, d = n % dim[3], t = n / dim[3] % dim[2], h = n / dim[3] / dim[2] % dim[1],
          b = n / dim[3] / dim[2] / dim[1];
  int64_t s = ref_scale_index(q, dim, b, h, t, d);
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_t v, sc, a;
  mpfr_inits2(256, v, sc, a, (mpfr_ptr)0);
  ref_code(v, q->fmt, qd->codes[idx]);
  switch (q->fmt) {
  case AC_QF_Q8_0: case AC_QF_Q4_0: case AC_QF_Q4_1: case AC_QF_Q5_0: case AC_QF_Q5_1: case AC_QF_IQ4_NL:
    ref_read_bits(sc, REF_F16, ((const uint16_t *)qd->scales)[s], NULL);
    break;
  case AC_QF_NVFP4: ref_read_bits(sc, REF_E4M3, ((const uint8_t *)qd->scales)[s], NULL); break;
  case AC_QF_MXFP4: {
    uint8_t e = ((const uint8_t *)qd->scales)[s];
    if (e == 255) mpfr_set_nan(sc);
    else mpfr_set_si_2exp(sc, 1, (long)e - 127, MPFR_RNDN);
    break;
  }
  default: {
    uint32_t bits;
    memcpy(&bits, (const char *)qd->scales + 4 * s, 4);
    ref_read_bits(sc, REF_F32, bits, NULL);
  }
  }
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  if (q->fmt == AC_QF_Q4_1 || q->fmt == AC_QF_Q5_1) {          /* d q + m */
    ref_read_bits(a, REF_F16, ((const uint16_t *)qd->aux)[s], NULL);
    mpfr_mul(v, v, sc, MPFR_RNDN);
    mpfr_add(out, v, a, MPFR_RNDN);
  } else if (q->fmt == AC_QF_INT8 || q->fmt == AC_QF_INT4) {   /* (q - z) s */
    mpfr_sub_si(v, v, ((const int8_t *)qd->aux)[s], MPFR_RNDN);
    mpfr_mul(out, v, sc, MPFR_RNDN);
  } else if (q->fmt == AC_QF_NVFP4) {                          /* e2m1 s t */
    uint32_t bits;
    memcpy(&bits, qd->aux, 4);
    ref_read_bits(a, REF_F32, bits, NULL);
    mpfr_mul(v, v, sc, MPFR_RNDN);
    mpfr_mul(out, v, a, MPFR_RNDN);
  } else {
    mpfr_mul(out, v, sc, MPFR_RNDN);
  }
  mpfr_clears(v, sc, a, (mpfr_ptr)0);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
}

int64_t ref_row(const ac_case *c, int64_t b, int64_t h, int64_t i, mpfr_prec_t prec, mpfr_t *o, mpfr_t lse,
                mpfr_t *weights_sum)
{
  const ac_problem *p = &c->p;
  int64_t n = ac_visible_count(p, i), kvh = ac_kv_head(p, h);
  if (n <= 0) return 0;
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_t *s = malloc((size_t)n * sizeof *s), sc, x, y, m, L;
  mpfr_inits2(prec, sc, x, y, m, L, (mpfr_ptr)0);
  if (p->scale_is_default) {
    mpfr_set_si(sc, (long)p->dk, MPFR_RNDN);
    mpfr_rec_sqrt(sc, sc, MPFR_RNDN);
  } else {
    mpfr_set_d(sc, p->scale, MPFR_RNDN);
  }
  for (int64_t j = 0; j < n; j++) {
    mpfr_init2(s[j], prec);
    mpfr_set_zero(s[j], 1);
    for (int64_t t = 0; t < p->dk; t++) {
      ref_value(x, c, 'q', ac_qidx(p, b, h, i, t));
      ref_value(y, c, 'k', ac_kidx(p, b, kvh, j, t));
      mpfr_mul(x, x, y, MPFR_RNDN);
      mpfr_add(s[j], s[j], x, MPFR_RNDN);
    }
    mpfr_mul(s[j], s[j], sc, MPFR_RNDN);
    if (j == 0 || mpfr_greater_p(s[j], m)) mpfr_set(m, s[j], MPFR_RNDN);
  }
  mpfr_set_zero(L, 1);
  for (int64_t j = 0; j < n; j++) {
    mpfr_sub(s[j], s[j], m, MPFR_RNDN);
    mpfr_exp(s[j], s[j], MPFR_RNDN);
    mpfr_add(L, L, s[j], MPFR_RNDN);
  }
  for (int64_t t = 0; t < p->dv; t++) {
    mpfr_set_prec(o[t], prec);
    mpfr_set_zero(o[t], 1);
    for (int64_t j = 0; j < n; j++) {
      ref_value(y, c, 'v', ac_vidx(p, b, kvh, j, t));
      mpfr_mul(y, s[j], y, MPFR_RNDN);
      mpfr_add(o[t], o[t], y, MPFR_RNDN);
    }
    mpfr_div(o[t], o[t], L, MPFR_RNDN);
  }
  if (weights_sum) {
    mpfr_set_prec(*weights_sum, prec);
    mpfr_set_zero(*weights_sum, 1);
    for (int64_t j = 0; j < n; j++) {
      mpfr_div(y, s[j], L, MPFR_RNDN);
      mpfr_add(*weights_sum, *weights_sum, y, MPFR_RNDN);
    }
  }
  mpfr_set_prec(lse, prec);
  mpfr_log(lse, L, MPFR_RNDN);
  mpfr_add(lse, lse, m, MPFR_RNDN);
  for (int64_t j = 0; j < n; j++) mpfr_clear(s[j]);
  free(s);
  mpfr_clears(sc, x, y, m, L, (mpfr_ptr)0);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return n;
}

void ref_case(ac_case *c, ac_dtype t, ac_mask m, int64_t B, int64_t H, int64_t KVH, int64_t tq, int64_t tk,
              int64_t dk, int64_t dv)
{
  ac_err e;
  ac_case_init(c);
  c->p.dtype = t;
  c->p.mask = m;
  c->p.batch = B;
  c->p.heads = H;
  c->p.kv_heads = KVH;
  c->p.tq = tq;
  c->p.tk = tk;
  c->p.dk = dk;
  c->p.dv = dv;
  c->p.scale_is_default = 1;
  c->p.scale = 1.0 / sqrt((double)dk);
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "ac_case_alloc: %s", e.msg);
}

static void *tensor(const ac_case *c, char which)
{
  return which == 'q' ? c->q : which == 'k' ? c->k : c->v;
}

void ref_set(ac_case *c, char which, size_t idx, double x)
{
  ac_store_bits(c->p.dtype, tensor(c, which), idx, ac_encode_f64_ov(c->p.dtype, x, AC_E4M3_SATURATE));
}

double ref_get(const ac_case *c, char which, size_t idx) { return ac_load(c->p.dtype, tensor(c, which), idx); }

static double draw(ac_rng *r, int mode)
{
  switch (mode) {
  case 0: return ac_rng_normal(r);
  case 1: return (double)ac_rng_range(r, -2, 2);
  case 2: return ac_rng_normal(r) * ldexp(1.0, (int)ac_rng_range(r, -12, 6));
  default: return ac_rng_below(r, 3) == 0 ? (double)ac_rng_range(r, -1, 1) : ac_rng_normal(r) * 4;
  }
}

void ref_random_case(ac_case *c, ac_dtype t, ac_rng *r)
{
  int64_t kvh = 1 + (int64_t)ac_rng_below(r, 2), H = kvh * (1 + (int64_t)ac_rng_below(r, 2));
  int64_t tq = 1 + (int64_t)ac_rng_below(r, 4), tk = 1 + (int64_t)ac_rng_below(r, 5);
  int64_t dk = 1 + (int64_t)ac_rng_below(r, 8), dv = 1 + (int64_t)ac_rng_below(r, 3);
  ref_case(c, t, (ac_mask)ac_rng_below(r, 3), 1, H, kvh, tq, tk, dk, dv);
  if (ac_rng_below(r, 10) < 3) {
    static const double sc[] = {0.0, -0.5, 0.3, 2.0, -0.333333333333, 0.125, 1e-3};
    c->p.scale_is_default = 0;
    c->p.scale = sc[ac_rng_below(r, sizeof sc / sizeof sc[0])];
  }
  int mode = (int)ac_rng_below(r, 4);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, draw(r, mode));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, draw(r, mode));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, draw(r, mode));
}

void ref_oracle_lse(const ac_case *c, uint32_t formats, int threads, int lse_f64, ac_oracle_result *r)
{
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = formats;
  o.threads = threads;
  o.lse_f64 = lse_f64;
  ck_assert_msg(ac_oracle_run(c, &o, r, &e) == 0, "ac_oracle_run: %s", e.msg);
}

void ref_oracle(const ac_case *c, uint32_t formats, int threads, ac_oracle_result *r)
{
  ref_oracle_lse(c, formats, threads, 1, r);
}

uint64_t ref_round_bits(ac_dtype t, mpfr_t x, int *amb)
{
  mpfr_t a, b;
  mpfr_inits2(mpfr_get_prec(x), a, b, (mpfr_ptr)0);
  mpfr_mul_2si(a, x, -(long)mpfr_get_prec(x) + 100, MPFR_RNDN);
  mpfr_abs(a, a, MPFR_RNDN);
  mpfr_add(b, x, a, MPFR_RNDN);
  mpfr_sub(a, x, a, MPFR_RNDN);
  uint64_t r = ac_encode_mpfr(t, x, AC_E4M3_SATURATE);
  *amb = ac_encode_mpfr(t, a, AC_E4M3_SATURATE) != r || ac_encode_mpfr(t, b, AC_E4M3_SATURATE) != r;
  mpfr_clears(a, b, (mpfr_ptr)0);
  return r;
}
