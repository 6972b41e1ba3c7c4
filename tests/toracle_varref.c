/* toracle_varref.c: the brute force of toracle_varref.h. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "toracle_varref.h"
#include "dtype_mpfr.h"
#include "variants.h"

#define PREC VREF_PREC

static double tval(const ac_case *c, char x, size_t idx, int64_t b, int64_t kvh)
{
  const ac_problem *p = &c->p;
  int mixed = (p->f.used & AC_FEAT_MIXED_DTYPES) != 0;
  ac_dtype dt = !mixed ? p->dtype : x == 'q' ? p->f.qd : x == 'k' ? p->f.kd : p->f.vd;
  const void *base = x == 'q' ? c->q : x == 'k' ? c->k : c->v;
  double d = ac_load(dt, base, idx);
  if (p->f.used & AC_FEAT_DESCALE) d *= c->descale[x == 'q' ? 0 : x == 'k' ? 1 : 2][b * p->kv_heads + kvh];
  return d;
}

/* Visibility straight from the ABI text. */
static int vref_visible(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j)
{
  const ac_problem *p = &c->p;
  if (p->mask == AC_MASK_CAUSAL && j > i) return 0;
  if (p->mask == AC_MASK_CAUSAL_BR && j > i + p->tk - p->tq) return 0;
  if (p->f.used & AC_FEAT_WINDOW) {
    int64_t off = p->f.win_top_left ? 0 : p->tk - p->tq;
    if (p->f.win_left >= 0 && j < i + off - p->f.win_left) return 0;
    if (p->f.win_right >= 0 && j > i + off + p->f.win_right) return 0;
  }
  if (p->f.used & AC_FEAT_BOOL_MASK) {
    int64_t bb = p->f.mask_b > 1 ? b : 0, hh = p->f.mask_h > 1 ? h : 0;
    if (!c->bool_mask[((bb * p->f.mask_h + hh) * p->tq + i) * p->tk + j]) return 0;
  }
  return 1;
}

int vref_row(const ac_case *c, int64_t b, int64_t h, int64_t i, mpfr_t *o, mpfr_t lse, int64_t *nvis)
{
  const ac_problem *p = &c->p;
  int64_t kvh = h / (p->heads / p->kv_heads), tk = p->tk;
  mpfr_t *s = malloc((size_t)(tk + 1) * sizeof *s), sc, x, y, L;
  mpfr_inits2(PREC, sc, x, y, L, (mpfr_ptr)0);
  if (p->scale_is_default) {
    mpfr_set_si(sc, (long)p->dk, MPFR_RNDN);
    mpfr_rec_sqrt(sc, sc, MPFR_RNDN);
  } else {
    mpfr_set_d(sc, p->scale, MPFR_RNDN);
  }
  int64_t n = 0;
  int nan = 0;
  uint8_t *vis = calloc((size_t)tk, 1);
  for (int64_t j = 0; j < tk; j++) {
    mpfr_init2(s[j], PREC);
    if (!(vis[j] = (uint8_t)vref_visible(c, b, h, i, j))) continue;
    n++;
    mpfr_set_zero(s[j], 1);
    for (int64_t t = 0; t < p->dk; t++) {
      mpfr_set_d(x, tval(c, 'q', ac_qidx(p, b, h, i, t), b, kvh), MPFR_RNDN);
      mpfr_mul_d(x, x, tval(c, 'k', ac_kidx(p, b, kvh, j, t), b, kvh), MPFR_RNDN);
      mpfr_add(s[j], s[j], x, MPFR_RNDN);
    }
    mpfr_mul(s[j], s[j], sc, MPFR_RNDN);
    if (p->f.used & AC_FEAT_SOFTCAP) {
      mpfr_div_d(s[j], s[j], p->f.softcap, MPFR_RNDN);
      mpfr_tanh(s[j], s[j], MPFR_RNDN);
      mpfr_mul_d(s[j], s[j], p->f.softcap, MPFR_RNDN);
    }
    if (p->f.used & AC_FEAT_ALIBI) {
      double m = c->alibi_slopes[p->f.alibi_per_batch ? b * p->heads + h : h];
      int64_t d = i + p->tk - p->tq - j;
      mpfr_set_d(x, m, MPFR_RNDN);
      mpfr_mul_si(x, x, (long)(d < 0 ? -d : d), MPFR_RNDN);
      mpfr_sub(s[j], s[j], x, MPFR_RNDN);
    }
    if (p->f.used & AC_FEAT_BIAS) {
      int64_t bb = p->f.bias_b > 1 ? b : 0, hh = p->f.bias_h > 1 ? h : 0;
      double bv = ac_load(p->f.bias_dtype, c->bias, (size_t)(((bb * p->f.bias_h + hh) * p->tq + i) * p->tk + j));
      mpfr_add_d(s[j], s[j], bv, MPFR_RNDN);
    }
    nan |= mpfr_nan_p(s[j]) != 0;
  }
  int sink = (p->f.used & AC_FEAT_SINKS) != 0;
  *nvis = n;
  int rc = VR_VALUE;
  if (!n && !sink) rc = VR_EMPTY;
  else if (nan) rc = VR_NAN;
  if (rc == VR_VALUE) {
    mpfr_set_zero(L, 1);
    for (int64_t j = 0; j < tk; j++) {
      if (!vis[j]) continue;
      mpfr_exp(s[j], s[j], MPFR_RNDN);
      mpfr_add(L, L, s[j], MPFR_RNDN);
    }
    if (sink) {
      mpfr_set_d(x, c->sinks[h], MPFR_RNDN);
      mpfr_exp(x, x, MPFR_RNDN);
      mpfr_add(L, L, x, MPFR_RNDN);
    }
    if (mpfr_zero_p(L)) rc = VR_ZERO;
  }
  if (rc == VR_VALUE) {
    for (int64_t t = 0; t < p->dv; t++) {
      mpfr_set_zero(o[t], 1);
      for (int64_t j = 0; j < tk; j++) {
        if (!vis[j]) continue;
        mpfr_mul_d(y, s[j], tval(c, 'v', ac_vidx(p, b, kvh, j, t), b, kvh), MPFR_RNDN);
        mpfr_add(o[t], o[t], y, MPFR_RNDN);
      }
      mpfr_div(o[t], o[t], L, MPFR_RNDN);
    }
    mpfr_log(lse, L, MPFR_RNDN);
  }
  for (int64_t j = 0; j < tk; j++) mpfr_clear(s[j]);
  free(s);
  free(vis);
  mpfr_clears(sc, x, y, L, (mpfr_ptr)0);
  return rc;
}

uint64_t vref_round(ac_dtype t, mpfr_t x, int *amb)
{
  mpfr_t a, b;
  mpfr_inits2(PREC, a, b, (mpfr_ptr)0);
  mpfr_mul_2si(a, x, -2400, MPFR_RNDN);
  mpfr_abs(a, a, MPFR_RNDN);
  mpfr_add(b, x, a, MPFR_RNDN);
  mpfr_sub(a, x, a, MPFR_RNDN);
  uint64_t r = ac_encode_mpfr(t, x, AC_E4M3_SATURATE);
  *amb = ac_encode_mpfr(t, a, AC_E4M3_SATURATE) != r || ac_encode_mpfr(t, b, AC_E4M3_SATURATE) != r;
  mpfr_clears(a, b, (mpfr_ptr)0);
  return r;
}
