/* tgrad_util.c: what the tests of the backward oracle share (tests/tgrad.c, tests/tgrad_variants.c):
 * case builders, the oracle run, the comparison with the brute force of tests/tgrad_ref.c. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "tgrad_ref.h"
#include "tgrad_util.h"
#include "dtype_mpfr.h"
#include "variants.h"

void *gt_dout_alloc(const ac_problem *p)
{
  return calloc((size_t)(p->batch * p->heads * p->tq * p->dv), ac_dtype_size(p->dtype));
}

void gt_dout_set(const ac_problem *p, void *d, size_t x, double v)
{
  ac_store_bits(p->dtype, d, x, ac_encode_f64_ov(p->dtype, v, AC_E4M3_SATURATE));
}

int gt_fine = 0;

void gt_run(const ac_case *c, const void *d, const char *rows, const char *cols, ac_grad_result *r)
{
  ac_grad_opts o;
  ac_err e;
  ac_grad_opts_init(&o);
  o.fine = gt_fine;
  o.rows = rows;
  o.cols = cols;
  ck_assert_msg(ac_grad_run(c, d, &o, r, &e) == 0, "ac_grad_run: %s", e.msg);
  ck_assert_msg(r->n_unresolved == 0, AC_SEED_FMT "%lld unresolved", AC_SEED_ARG, (long long)r->n_unresolved);
}

/* The counts of an adversarial case, for the test log. */
void gt_note(const char *name, const ac_grad_result *r)
{
  fprintf(stderr, "tgrad %s: exact %lld (zero %lld), rounded %lld (extended pass %lld), after the first MPFR pass %lld, "
                  "unresolved %lld, max precision %ld\n",
          name, (long long)r->n_exact, (long long)r->n_zero, (long long)r->n_rounded, (long long)r->n_fast,
          (long long)r->n_highprec, (long long)r->n_unresolved, r->max_prec);
}


/* Every selected element of T against ref; returns the number of ambiguous references. */
static int64_t compare(const char *what, const ac_grad_tensor *T, mpfr_t *ref)
{
  int64_t amb_n = 0;
  for (int64_t x = 0; x < T->n; x++) {
    if (T->slot[x] < 0) continue;
    for (int64_t t = 0; t < T->d; t++) {
      const ac_grad_elem *el = ac_grad_at(T, x, t);
      mpfr_ptr v = ref[x * T->d + t];
      ck_assert_int_eq(el->accept, AC_ACCEPT_VALUE);
      double vd = mpfr_get_d(v, MPFR_RNDN);
      ck_assert_msg(fabs(el->g - vd) <= el->g_err + fabs(vd) * 0x1p-52 + 0x1p-1074,
                    AC_SEED_FMT "%s %lld,%lld: %a +- %a, reference %a", AC_SEED_ARG, what, (long long)x, (long long)t,
                    el->g, el->g_err, vd);
      for (int f = 0; f < AC_NDTYPES; f++) {
        if (!T->bits[f]) continue;
        int amb;
        uint64_t want = ref_round_bits((ac_dtype)f, v, &amb), got = ac_grad_bits(T, (ac_dtype)f, x, t);
        if (amb) { amb_n++; continue; }
        if (ac_bits_iszero((ac_dtype)f, got) && ac_bits_iszero((ac_dtype)f, want) && el->how == AC_HOW_EXACT) continue;
        ck_assert_msg(got == want, AC_SEED_FMT "%s %lld,%lld %s: oracle %a (how %d), reference %a", AC_SEED_ARG, what,
                      (long long)x, (long long)t, ac_dtype_name((ac_dtype)f), ac_decode((ac_dtype)f, got), el->how,
                      ac_decode((ac_dtype)f, want));
      }
    }
  }
  return amb_n;
}

static mpfr_t *mp_array(int64_t n)
{
  mpfr_t *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  for (int64_t x = 0; x < n; x++) mpfr_init2(a[x], 64);
  return a;
}

static void mp_free(mpfr_t *a, int64_t n)
{
  for (int64_t x = 0; x < n; x++) mpfr_clear(a[x]);
  free(a);
}

/* The oracle's r against the brute force at prec; returns the ambiguous references. */
int64_t gt_against_brute(const ac_case *c, const void *d, const ac_grad_result *r, mpfr_prec_t prec)
{
  const ac_problem *p = &c->p;
  int64_t nr = p->batch * p->heads * p->tq, nc = p->batch * p->kv_heads * p->tk;
  mpfr_t *dq = mp_array(nr * p->dk), *dk = mp_array(nc * p->dk), *dv = mp_array(nc * p->dv);
  mpfr_t *ds = mp_array(p->heads);
  gref_backward(c, d, prec, dq, dk, dv, ds);
  int64_t amb = compare("dQ", &r->dq, dq) + compare("dK", &r->dk, dk) + compare("dV", &r->dv, dv);
  if (p->f.used & AC_FEAT_SINKS) amb += compare("dsink", &r->dsink, ds);
  mp_free(ds, p->heads);
  mp_free(dq, nr * p->dk);
  mp_free(dk, nc * p->dk);
  mp_free(dv, nc * p->dv);
  return amb;
}

void gt_random_dout(const ac_problem *p, void *d, ac_rng *rng)
{
  int mode = (int)ac_rng_below(rng, 3);
  for (int64_t x = 0; x < p->batch * p->heads * p->tq * p->dv; x++) {
    double v = mode == 0 ? ac_rng_normal(rng) : mode == 1 ? (double)ac_rng_range(rng, -2, 2)
                                                          : ac_rng_normal(rng) * ldexp(1.0, (int)ac_rng_range(rng, -8, 4));
    gt_dout_set(p, d, (size_t)x, v);
  }
}

/* A causal f32 case 2 heads over 1 kv head, tq = tk = 5, dk = 3, dv = 2 with seeded values. */
void *gt_adv_case(ac_case *c, ac_mask m, int64_t tq, int64_t tk, ac_rng *rng)
{
  ref_case(c, AC_F32, m, 1, 2, 1, tq, tk, 3, 2);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(rng));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(rng));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(rng));
  void *d = gt_dout_alloc(&c->p);
  gt_random_dout(&c->p, d, rng);
  return d;
}

void gt_assert_exact_zero(const ac_grad_tensor *T, int64_t x, int64_t t)
{
  const ac_grad_elem *el = ac_grad_at(T, x, t);
  ck_assert_msg(el->how == AC_HOW_EXACT && el->g == 0 && el->g_err == 0, "element %lld,%lld: how %d, %a +- %a",
                (long long)x, (long long)t, el->how, el->g, el->g_err);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (T->bits[f]) ck_assert_uint_eq(ac_grad_bits(T, (ac_dtype)f, x, t), 0);
}

/* A case of small integers in the given shape, and dO, from explicit values. */
void *gt_int_case(ac_case *c, ac_dtype dt, ac_mask m, int64_t H, int64_t KVH, int64_t tq, int64_t tk, int64_t dk,
                      int64_t dv, const double *q, const double *k, const double *v, const double *dO)
{
  ref_case(c, dt, m, 1, H, KVH, tq, tk, dk, dv);
  for (int64_t x = 0; x < H * tq * dk; x++) ref_set(c, 'q', (size_t)x, q[x]);
  for (int64_t x = 0; x < KVH * tk * dk; x++) ref_set(c, 'k', (size_t)x, k[x]);
  for (int64_t x = 0; x < KVH * tk * dv; x++) ref_set(c, 'v', (size_t)x, v[x]);
  void *d = gt_dout_alloc(&c->p);
  for (int64_t x = 0; x < H * tq * dv; x++) gt_dout_set(&c->p, d, (size_t)x, dO[x]);
  return d;
}

int gt_undefined(const ac_grad_tensor *T, int64_t x, int64_t t)
{
  const ac_grad_elem *el = ac_grad_at(T, x, t);
  return isnan(el->g) && el->accept == (AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF);
}


void gt_assert_zero_block(const ac_grad_tensor *T, int64_t x0, int64_t x1, int64_t nt)
{
  for (int64_t x = x0; x < x1; x++)
    for (int64_t t = 0; t < nt; t++) gt_assert_exact_zero(T, x, t);
}

void gt_run_noted(const char *name, const ac_case *c, const void *d, ac_grad_result *r)
{
  gt_run(c, d, NULL, NULL, r);
  gt_note(name, r);
}

void gt_brute_free(ac_case *c, void *d, ac_grad_result *r, mpfr_prec_t prec)
{
  if (prec > 0) gt_against_brute(c, d, r, prec);
  ac_grad_result_free(r);
  free(d);
  ac_case_free(c);
}

void gt_random_checked(ac_case *c, ac_rng *rng, gt_tally *t)
{
  void *d = gt_dout_alloc(&c->p);
  gt_random_dout(&c->p, d, rng);
  ac_grad_result r;
  gt_run(c, d, NULL, NULL, &r);
  if (c->p.f.used & AC_FEAT_SINKS) ck_assert_int_eq(r.dsink.nsel, c->p.heads);
  t->ambiguous += gt_against_brute(c, d, &r, GT_PREC);
  t->elems += r.n_exact + r.n_rounded;
  t->rounded += r.n_rounded;
  t->sinks += r.dsink.nsel;
  gt_brute_free(c, d, &r, 0);
}

void gt_features(ac_case *c, uint32_t used, int64_t mask_h, int64_t bias_h, int bias_dtype)
{
  ac_err e;
  ac_features_plain(&c->p);
  c->p.f.used = used;
  c->p.f.mask_b = c->p.f.bias_b = 1;
  c->p.f.mask_h = mask_h;
  c->p.f.bias_h = bias_h;
  if (bias_dtype >= 0) c->p.f.bias_dtype = (ac_dtype)bias_dtype;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
}

void gt_random_bool_mask(ac_case *c, ac_rng *rng)
{
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_BOOL_MASK); x++) c->bool_mask[x] = ac_rng_below(rng, 4) != 0;
}

void gt_set_scale(ac_case *c, double scale)
{
  c->p.scale_is_default = 0;
  c->p.scale = scale;
}
