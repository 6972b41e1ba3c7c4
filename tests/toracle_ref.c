/* toracle_ref.c: brute-force reference and case builders for the oracle tests. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "toracle_ref.h"
#include "dtype_mpfr.h"

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
      mpfr_set_d(x, ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, t)), MPFR_RNDN);
      mpfr_mul_d(x, x, ac_load(p->dtype, c->k, ac_kidx(p, b, kvh, j, t)), MPFR_RNDN);
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
      mpfr_mul_d(y, s[j], ac_load(p->dtype, c->v, ac_vidx(p, b, kvh, j, t)), MPFR_RNDN);
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

void ref_oracle(const ac_case *c, uint32_t formats, int threads, ac_oracle_result *r)
{
  ac_oracle_opts o;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.formats = formats;
  o.threads = threads;
  o.lse_f64 = 1;
  ck_assert_msg(ac_oracle_run(c, &o, r, &e) == 0, "ac_oracle_run: %s", e.msg);
}
