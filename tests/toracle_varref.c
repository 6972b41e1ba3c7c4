/* toracle_varref.c: the brute force of toracle_varref.h. */
#include "config.h"
#include <check.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include "toracle_varref.h"
#include "dtype_mpfr.h"
#include "variants.h"
#include "testutil.h"
#include "oracle.h"

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
    /* dropout (docs/dropout.md): the normalized weights times the keep-mask and 1 / (1 - p) */
    const uint8_t *keep = p->f.used & AC_FEAT_DROPOUT ? c->dropout_mask + (size_t)(((b * p->heads + h) * p->tq + i) * tk) : NULL;
    for (int64_t t = 0; t < p->dv; t++) {
      mpfr_set_zero(o[t], 1);
      for (int64_t j = 0; j < tk; j++) {
        if (!vis[j] || (keep && !keep[j])) continue;
        mpfr_mul_d(y, s[j], tval(c, 'v', ac_vidx(p, b, kvh, j, t), b, kvh), MPFR_RNDN);
        mpfr_add(o[t], o[t], y, MPFR_RNDN);
      }
      mpfr_div(o[t], o[t], L, MPFR_RNDN);
      if (keep) {
        mpfr_set_ui(x, 1, MPFR_RNDN);
        mpfr_sub_d(x, x, p->f.dropout_p, MPFR_RNDN);   /* exact at PREC bits */
        mpfr_div(o[t], o[t], x, MPFR_RNDN);
      }
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

/* The oracle (1 and 3 threads: identical bytes) against the brute force on every row of c. */
void vref_check_case(const ac_case *c, const char *what, vstats *vs)
{
  const ac_problem *p = &c->p;
  ac_oracle_result r, r3;
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.threads = 1;
  o.formats = (1u << AC_F64) | (1u << AC_F32) | (1u << AC_F16);
  o.lse_f64 = 1;
  ck_assert_msg(ac_oracle_run(c, &o, &r, &e) == 0, "%s: %s", what, e.msg);
  o.threads = 3;
  ck_assert_msg(ac_oracle_run(c, &o, &r3, &e) == 0, "%s: %s", what, e.msg);
  size_t ne = (size_t)(r.nrows * p->dv);
  ck_assert_msg(!memcmp(r.rows, r3.rows, (size_t)r.nrows * sizeof *r.rows) && !memcmp(r.elems, r3.elems, ne * sizeof *r.elems),
                "%s: results differ between 1 and 3 threads", what);
  ck_assert_msg(r.n_unresolved == 0, AC_SEED_FMT "%s: %lld unresolved", AC_SEED_ARG, what, (long long)r.n_unresolved);
  /* the MPFR levels alone (windows and boolean masks alone take the fast path) round alike */
  ac_oracle_result_free(&r3);
  o.no_fast = 1;
  ck_assert_msg(ac_oracle_run(c, &o, &r3, &e) == 0, "%s: %s", what, e.msg);
  for (int f = 0; f < AC_NDTYPES; f++)
    ck_assert_msg(!r.o_round[f] || !memcmp(r.o_round[f], r3.o_round[f], ne * sizeof(uint64_t)),
                  "%s: %s roundings differ without the fast path", what, ac_dtype_name((ac_dtype)f));
  for (int64_t x = 0; x < r.nrows; x++) {
    ck_assert(r.rows[x].lse_f32 == r3.rows[x].lse_f32 || isnan(r.rows[x].lse_f32));
    ck_assert(r.rows[x].lse_alt_f32 == r3.rows[x].lse_alt_f32 || isnan(r.rows[x].lse_alt_f32));
  }
  /* the binary64 pass (no binary64 format, no binary64 LSE: the default options), 1 and 2
   * threads alike, rounds as the levels */
  for (int th = 1; th <= 2; th++) {
    ac_oracle_result rf;
    ac_oracle_opts of;
    ac_oracle_opts_init(&of);
    of.threads = th;
    of.formats = (1u << AC_F32) | (1u << AC_F16);
    ck_assert_msg(ac_oracle_run(c, &of, &rf, &e) == 0, "%s: %s", what, e.msg);
    ck_assert_msg(rf.n_unresolved == 0, AC_SEED_FMT "%s: %lld unresolved on the fast path", AC_SEED_ARG, what,
                  (long long)rf.n_unresolved);
    for (int f = 0; f < AC_NDTYPES; f++)
      ck_assert_msg(!rf.o_round[f] || !r.o_round[f] || !memcmp(r.o_round[f], rf.o_round[f], ne * sizeof(uint64_t)),
                    AC_SEED_FMT "%s: %s roundings differ on the fast path (%d threads)", AC_SEED_ARG, what,
                    ac_dtype_name((ac_dtype)f), th);
    for (int64_t x = 0; x < r.nrows; x++) {
      ck_assert_msg(r.rows[x].lse_f32 == rf.rows[x].lse_f32 || (isnan(r.rows[x].lse_f32) && isnan(rf.rows[x].lse_f32)),
                    AC_SEED_FMT "%s row %lld: LSE %a on the fast path, %a", AC_SEED_ARG, what, (long long)x,
                    (double)rf.rows[x].lse_f32, (double)r.rows[x].lse_f32);
      ck_assert_msg(r.rows[x].lse_alt_f32 == rf.rows[x].lse_alt_f32 || (isnan(r.rows[x].lse_alt_f32) && isnan(rf.rows[x].lse_alt_f32)),
                    AC_SEED_FMT "%s row %lld: FlashAttention-2's LSE %a on the fast path, %a", AC_SEED_ARG, what,
                    (long long)x, (double)rf.rows[x].lse_alt_f32, (double)r.rows[x].lse_alt_f32);
    }
    ac_oracle_result_free(&rf);
  }
  mpfr_t *ov = malloc((size_t)p->dv * sizeof *ov), lse;
  for (int64_t t = 0; t < p->dv; t++) mpfr_init2(ov[t], PREC);
  mpfr_init2(lse, PREC);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t row = (int64_t)ac_rowidx(p, b, h, i), nvis;
        const ac_oracle_row *orow = &r.rows[row];
        int rc = vref_row(c, b, h, i, ov, lse, &nvis);
        ck_assert_msg(orow->visible == nvis, "%s row %lld: %lld visible, reference %lld", what, (long long)row,
                      (long long)orow->visible, (long long)nvis);
        const ac_oracle_elem *el = &r.elems[row * p->dv];
        if (rc == VR_EMPTY) {
          vs->empty_rows++;
          ck_assert_int_eq(orow->lse_accept, AC_ACCEPT_EMPTY);
          for (int64_t t = 0; t < p->dv; t++) ck_assert_int_eq(el[t].accept, AC_ACCEPT_EMPTY);
          continue;
        }
        if (rc == VR_NAN) {
          vs->nan_rows++;
          ck_assert_int_eq(orow->lse_accept, AC_ACCEPT_NAN);
          for (int64_t t = 0; t < p->dv; t++) ck_assert_int_eq(el[t].accept, AC_ACCEPT_NAN);
          continue;
        }
        if (rc == VR_ZERO) {   /* every visible score -inf and no sink: 0 or NaN */
          vs->zero_rows++;
          for (int64_t t = 0; t < p->dv; t++) {
            ck_assert(el[t].accept & AC_ACCEPT_NAN);
            ck_assert(el[t].o == 0);
          }
          continue;
        }
        int amb;
        uint64_t l32 = vref_round(AC_F32, lse, &amb);
        ck_assert_msg(amb || l32 == ac_encode_f64(AC_F32, orow->lse_f32), AC_SEED_FMT "%s row %lld: LSE %a, reference %a",
                      AC_SEED_ARG, what, (long long)row, (double)orow->lse_f32, ac_decode(AC_F32, l32));
        /* FlashAttention-2's causal ALiBi convention: LSE + m_h (i + tk - tq), the ABI's formula shifted */
        double sh = (p->f.used & AC_FEAT_ALIBI) && p->mask != AC_MASK_NONE
                        ? ac_features_slope(c, b, h) * (double)(i + p->tk - p->tq) : 0;   /* 24 + 31 bits: exact */
        ck_assert(orow->alibi_shift == sh);
        mpfr_t la;
        mpfr_init2(la, PREC + 128);
        mpfr_add_d(la, lse, sh, MPFR_RNDN);
        uint64_t la32 = vref_round(AC_F32, la, &amb);
        mpfr_clear(la);
        ck_assert_msg(amb || la32 == ac_encode_f64(AC_F32, orow->lse_alt_f32),
                      AC_SEED_FMT "%s row %lld: FlashAttention-2's LSE %a, reference %a", AC_SEED_ARG, what, (long long)row,
                      (double)orow->lse_alt_f32, ac_decode(AC_F32, la32));
        uint64_t l64 = vref_round(AC_F64, lse, &amb);
        ck_assert_msg(amb || l64 == ac_encode_f64(AC_F64, orow->lse_f64), AC_SEED_FMT "%s row %lld: LSE f64 %a, reference %a",
                      AC_SEED_ARG, what, (long long)row, orow->lse_f64, ac_decode(AC_F64, l64));
        for (int64_t t = 0; t < p->dv; t++) {
          vs->elems++;
          ck_assert(el[t].accept & AC_ACCEPT_VALUE);
          for (int f = 0; f < AC_NDTYPES; f++) {
            if (!r.o_round[f]) continue;
            uint64_t want = vref_round((ac_dtype)f, ov[t], &amb), got = r.o_round[f][row * p->dv + t];
            if (amb) { vs->ambiguous++; continue; }
            vs->compared++;
            if (ac_bits_iszero((ac_dtype)f, got) && ac_bits_iszero((ac_dtype)f, want)) continue;
            ck_assert_msg(got == want, AC_SEED_FMT "%s row %lld col %lld %s: oracle %a (how %d), reference %a", AC_SEED_ARG,
                          what, (long long)row, (long long)t, ac_dtype_name((ac_dtype)f), ac_decode((ac_dtype)f, got),
                          el[t].how, ac_decode((ac_dtype)f, want));
          }
        }
      }
  for (int64_t t = 0; t < p->dv; t++) mpfr_clear(ov[t]);
  mpfr_clear(lse);
  free(ov);
  ac_oracle_result_free(&r);
  ac_oracle_result_free(&r3);
}

void vref_report(const char *what, const vstats *vs)
{
  fprintf(stderr, "%s: %lld elements, %lld roundings compared, %lld ambiguous, rows nan %lld empty %lld zero %lld\n", what,
          (long long)vs->elems, (long long)vs->compared, (long long)vs->ambiguous, (long long)vs->nan_rows,
          (long long)vs->empty_rows, (long long)vs->zero_rows);
  ck_assert_msg(vs->compared > 0 && vs->ambiguous * 10 <= vs->compared + vs->ambiguous, "%s: too few roundings compared", what);
}
