/* gradexact.c: the exact-zero tests of the backward oracle that look past one key
 * (docs/backward.md §3.2-§3.3), run for the elements the first pass leaves undecided.
 *
 * dQ of a row: with per-group sums AK_g = Σ_{j∈g} a_j K_jt and SK_g = Σ_{j∈g} K_jt (exact),
 *   n_0 L² dQ_i[t] / c = Σ_{g,h} w_g w_h (n_h AK_g - [h >= 1] c_h SK_g),
 * a sum of e^{c (d_g + d_h)} (d_g = z_g - z_top) with exact coefficients: by Lindemann–Weierstrass
 * it is 0 exactly when, for every value u of d_g + d_h, the coefficients of the pairs with that u
 * add to 0. The pairs are sorted by u (ng² of them; rows of more than AC_GR_PAIR_MAX groups are
 * left to the passes).
 * dK and dV of a column j: the rows i that see j fall into classes of the same score shape (group
 * counts and offsets from the top) and the same group of j; within a class w_ij / L_i and
 * w_ij w_ih / L_i² are the same numbers, so the class adds exact coefficients:
 *   dV_j[t]: Σ_i dO_i[t];   dK_j[t]: per group h, Σ_i q_i[t] (n_h a_ij - c_ih)   (n_0 too is shared).
 * When every class's coefficients are 0 the element is exactly 0 (a sufficient test: classes that
 * cancel one another are left to the passes).
 * Rational elements: when every row an element depends on has one group (all its scores equal, or
 * c = 0) and c is rational (a stored scale, or 1/k for dk = k²), the element is the rational
 *   dQ_i[t] = c Σ_j a_j K_jt / n²,  dV_j[t] = Σ_cls V_cls / n_cls,  dK_j[t] = c Σ_cls K_cls / n_cls³
 * (n_0 = n), evaluated exactly in GMP rationals and enclosed by its two directed roundings: a
 * rational on a rounding breakpoint is dyadic and comes out as a point. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"

#define AC_GR_PAIR_MAX 256

/* dst += x exactly. */
static void exact_add(mpfr_t dst, mpfr_srcptr x, mpfr_t tmp)
{
  mpfr_set_prec(tmp, ac_or_exact_prec(dst, x));
  AC_EXACT(mpfr_add(tmp, dst, x, MPFR_RNDN), "a sum at the precision that holds it");
  mpfr_swap(dst, tmp);
}

/* dst = x * y exactly. */
static void exact_mul(mpfr_t dst, mpfr_srcptr x, mpfr_srcptr y)
{
  mpfr_set_prec(dst, mpfr_get_prec(x) + mpfr_get_prec(y));
  AC_EXACT(mpfr_mul(dst, x, y, MPFR_RNDN), "a product in the sum of both precisions");
}

static void exact_mul_si(mpfr_t dst, mpfr_srcptr x, long k)
{
  mpfr_set_prec(dst, mpfr_get_prec(x) + 64);
  AC_EXACT(mpfr_mul_si(dst, x, k, MPFR_RNDN), "a product by an integer in 64 more bits");
}

static int cmp_pair(const void *pa, const void *pb, void *ctx)
{
  mpfr_t *u = ctx;
  return mpfr_cmp(u[*(const int64_t *)pa], u[*(const int64_t *)pb]);
}

int ac_gr_dq_zero_pairs(ac_gr_ws *g, int64_t t)
{
  ac_or_ws *w = &g->w;
  int64_t ng = w->ng, dk = w->p->dk, np = ng * ng;
  if (ng < 2 || ng > AC_GR_PAIR_MAX) return 0;
  mpfr_t *d = malloc((size_t)ng * 3 * sizeof *d), *AK = d + ng, *SK = d + 2 * ng, tmp, x, y;
  mpfr_t *u = malloc((size_t)np * 2 * sizeof *u), *cf = u + np;
  int64_t *ord = malloc((size_t)np * sizeof *ord);
  mpfr_inits2(64, tmp, x, y, (mpfr_ptr)0);
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  for (int64_t q = 0; q < ng; q++) {
    mpfr_inits2(64, d[q], AK[q], SK[q], (mpfr_ptr)0);
    ac_or_fx_to_mpfr(w, d[q], ac_or_z(w, w->ord[w->gst[q]]), ztop, w->nl, w->zlsb);
    mpfr_set_zero(AK[q], 1);
    mpfr_set_zero(SK[q], 1);
    for (int64_t r = w->gst[q]; r < w->gst[q + 1]; r++) {
      int64_t j = w->ord[r];
      double k = ac_or_kval(w->head, (size_t)(j * dk + t));
      mpfr_set_prec(x, 53);
      mpfr_set_d(x, k, MPFR_RNDN);
      exact_add(SK[q], x, tmp);
      mpfr_set_prec(y, mpfr_get_prec(g->X[j]) + 53);
      AC_EXACT(mpfr_mul_d(y, g->X[j], k, MPFR_RNDN), "a_j K_jt");
      exact_add(AK[q], y, tmp);
    }
  }
  for (int64_t q = 0; q < ng; q++)
    for (int64_t h = 0; h < ng; h++) {
      int64_t e = q * ng + h;
      mpfr_inits2(64, u[e], cf[e], (mpfr_ptr)0);
      mpfr_set_prec(u[e], ac_or_exact_prec(d[q], d[h]));
      AC_EXACT(mpfr_add(u[e], d[q], d[h], MPFR_RNDN), "d_g + d_h");
      exact_mul_si(cf[e], AK[q], (long)(w->gst[h + 1] - w->gst[h]));
      if (h >= 1) {
        exact_mul(x, g->SX[h], SK[q]);
        mpfr_neg(x, x, MPFR_RNDN);
        exact_add(cf[e], x, tmp);
      }
      ord[e] = e;
    }
  qsort_r(ord, (size_t)np, sizeof *ord, cmp_pair, u);
  int zero = 1;
  for (int64_t a = 0; a < np && zero;) {
    int64_t b = a;
    mpfr_set_prec(x, 64);
    mpfr_set_zero(x, 1);
    while (b < np && mpfr_equal_p(u[ord[b]], u[ord[a]])) exact_add(x, cf[ord[b++]], tmp);
    zero = mpfr_zero_p(x) != 0;
    a = b;
  }
  for (int64_t e = 0; e < np; e++) mpfr_clears(u[e], cf[e], (mpfr_ptr)0);
  for (int64_t q = 0; q < ng; q++) mpfr_clears(d[q], AK[q], SK[q], (mpfr_ptr)0);
  mpfr_clears(tmp, x, y, (mpfr_ptr)0);
  free(d); free(u); free(ord);
  return zero;
}

/* The loaded row's score shape: per group its count and exact offset from the top. */
static char *row_shape(ac_gr_ws *g)
{
  ac_or_ws *w = &g->w;
  size_t cap = 64, len = 0;
  char *s = ac_xmalloc(cap);
  s[0] = 0;
  mpfr_t d;
  mpfr_init2(d, 64);
  const uint64_t *ztop = ac_or_z(w, w->ord[0]);
  for (int64_t q = 0; q < w->ng; q++) {
    mpfr_exp_t ex = 0;
    char *m = NULL;
    if (w->sc.sign != 0) {
      ac_or_fx_to_mpfr(w, d, ac_or_z(w, w->ord[w->gst[q]]), ztop, w->nl, w->zlsb);
      if (!mpfr_zero_p(d)) m = mpfr_get_str(NULL, &ex, 16, 0, d, MPFR_RNDN);
    }
    size_t need = len + (m ? strlen(m) : 1) + 64;
    if (need > cap) s = ac_xrealloc(s, cap = 2 * need);
    len += (size_t)snprintf(s + len, cap - len, "%lld:%s@%ld;", (long long)(w->gst[q + 1] - w->gst[q]), m ? m : "0",
                            (long)ex);
    if (m) mpfr_free_str(m);
  }
  mpfr_clear(d);
  return s;
}

typedef struct {
  char *key;       /* row shape and the column's group */
  int64_t ng, n0;  /* groups, keys of the top group */
  mpfr_t *k;       /* dk * ng, or NULL until a row with dS adds to it */
  mpfr_t *v;       /* dv */
} gr_class;

struct ac_gr_classes {
  int64_t ncols, dk, dv;
  gr_class **c;    /* per local column: its classes */
  int64_t *n;
};

ac_gr_classes *ac_gr_classes_new(int64_t ncols, int64_t dk, int64_t dv)
{
  ac_gr_classes *C = ac_xcalloc(1, sizeof *C);
  C->ncols = ncols; C->dk = dk; C->dv = dv;
  C->c = ac_xcalloc((size_t)(ncols ? ncols : 1), sizeof *C->c);
  C->n = ac_xcalloc((size_t)(ncols ? ncols : 1), sizeof *C->n);
  return C;
}

void ac_gr_classes_free(ac_gr_classes *C)
{
  if (!C) return;
  for (int64_t k = 0; k < C->ncols; k++) {
    for (int64_t a = 0; a < C->n[k]; a++) {
      gr_class *cl = &C->c[k][a];
      if (cl->k) {
        for (int64_t x = 0; x < C->dk * cl->ng; x++) mpfr_clear(cl->k[x]);
        free(cl->k);
      }
      for (int64_t x = 0; x < C->dv; x++) mpfr_clear(cl->v[x]);
      free(cl->v);
      free(cl->key);
    }
    free(C->c[k]);
  }
  free(C->c); free(C->n); free(C);
}

static gr_class *class_of(ac_gr_classes *C, int64_t k, const char *shape, int64_t grp, int64_t ng, int64_t n0)
{
  char *key = ac_xmalloc(strlen(shape) + 32);
  sprintf(key, "%s#%lld", shape, (long long)grp);
  for (int64_t a = 0; a < C->n[k]; a++)
    if (!strcmp(C->c[k][a].key, key)) { free(key); return &C->c[k][a]; }
  C->c[k] = ac_xrealloc(C->c[k], (size_t)(C->n[k] + 1) * sizeof *C->c[k]);
  gr_class *cl = &C->c[k][C->n[k]++];
  cl->key = key;
  cl->ng = ng;
  cl->n0 = n0;
  cl->k = NULL;
  cl->v = ac_xmalloc((size_t)C->dv * sizeof *cl->v);
  for (int64_t x = 0; x < C->dv; x++) { mpfr_init2(cl->v[x], 64); mpfr_set_zero(cl->v[x], 1); }
  return cl;
}

void ac_gr_classes_add(ac_gr_ws *g, ac_gr_classes *C, const ac_gr_cols *cols)
{
  ac_or_ws *w = &g->w;
  int64_t dk = C->dk, dv = C->dv;
  char *shape = row_shape(g);
  mpfr_t x, y, tmp;
  mpfr_inits2(64, x, y, tmp, (mpfr_ptr)0);
  for (int64_t j = 0; j < w->n; j++) {
    int64_t k = cols->map[j];
    if (k < 0 || !cols->pend[k]) continue;
    gr_class *cl = class_of(C, k, shape, w->gof[j], w->ng, w->gst[1] - w->gst[0]);
    for (int64_t t = 0; t < dv; t++) {
      if (g->odbad[t]) continue;
      mpfr_set_prec(x, 53);
      mpfr_set_d(x, g->od[t], MPFR_RNDN);
      exact_add(cl->v[t], x, tmp);
    }
    if (g->cls != AC_GR_ROW_OK) continue;
    if (!cl->k) {
      cl->k = ac_xmalloc((size_t)(dk * cl->ng) * sizeof *cl->k);
      for (int64_t e = 0; e < dk * cl->ng; e++) { mpfr_init2(cl->k[e], 64); mpfr_set_zero(cl->k[e], 1); }
    }
    for (int64_t h = 0; h < w->ng; h++) {   /* q_t (n_h a_j - c_h), c_0 = 0 */
      exact_mul_si(x, g->X[j], (long)(w->gst[h + 1] - w->gst[h]));
      if (h >= 1) {
        mpfr_set_prec(y, mpfr_get_prec(g->SX[h]));
        AC_EXACT(mpfr_neg(y, g->SX[h], MPFR_RNDN), "a negation");
        exact_add(x, y, tmp);
      }
      for (int64_t t = 0; t < dk; t++) {
        mpfr_set_prec(y, mpfr_get_prec(x) + 53);
        AC_EXACT(mpfr_mul_d(y, x, w->qd[t], MPFR_RNDN), "q_t (n_h a_j - c_h)");
        exact_add(cl->k[t * cl->ng + h], y, tmp);
      }
    }
  }
  mpfr_clears(x, y, tmp, (mpfr_ptr)0);
  free(shape);
}

int ac_gr_classes_zero(const ac_gr_classes *C, int64_t k, char which, int64_t t)
{
  for (int64_t a = 0; a < C->n[k]; a++) {
    const gr_class *cl = &C->c[k][a];
    if (which == 'v') {
      if (!mpfr_zero_p(cl->v[t])) return 0;
      continue;
    }
    if (!cl->k) continue;
    for (int64_t h = 0; h < cl->ng; h++)
      if (!mpfr_zero_p(cl->k[t * cl->ng + h])) return 0;
  }
  return 1;
}

int ac_gr_scale_rational(const ac_or_scale *sc, mpq_t c)
{
  if (!sc->is_default) {
    mpq_set_d(c, sc->stored);
    return 1;
  }
  if (sc->kind == AC_SCALE_IRRATIONAL) return 0;
  unsigned long k = (unsigned long)llround(sqrt((double)sc->dk));
  mpq_set_ui(c, 1, k);
  return 1;
}

static void enclose_q(mpq_srcptr v, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  mpfr_set_prec(lo, p);
  mpfr_set_prec(hi, p);
  mpfr_set_q(lo, v, MPFR_RNDD);
  mpfr_set_q(hi, v, MPFR_RNDU);
}

int ac_gr_classes_rational(const ac_gr_classes *C, const ac_or_scale *sc, int64_t k, char which, int64_t t,
                           mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  for (int64_t a = 0; a < C->n[k]; a++)
    if (C->c[k][a].ng != 1) return 0;
  mpq_t sum, x, c;
  mpq_inits(sum, x, c, (mpq_ptr)0);
  int ok = which == 'v' || ac_gr_scale_rational(sc, c);
  for (int64_t a = 0; a < C->n[k] && ok; a++) {
    const gr_class *cl = &C->c[k][a];
    if (which == 'k' && !cl->k) continue;
    mpfr_get_q(x, which == 'v' ? cl->v[t] : cl->k[t]);
    mpz_ui_pow_ui(mpq_denref(c), (unsigned long)cl->n0, which == 'v' ? 1 : 3);   /* c's slot as scratch */
    mpz_mul(mpq_denref(x), mpq_denref(x), mpq_denref(c));
    mpq_canonicalize(x);
    mpq_add(sum, sum, x);
    if (which == 'k') ac_gr_scale_rational(sc, c);
  }
  if (ok) {
    if (which == 'k') mpq_mul(sum, sum, c);
    enclose_q(sum, p, lo, hi);
  }
  mpq_clears(sum, x, c, (mpq_ptr)0);
  return ok;
}

int ac_gr_dq_rational(ac_gr_ws *g, int64_t t, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  ac_or_ws *w = &g->w;
  if (w->ng != 1) return 0;
  mpq_t c, x;
  mpq_inits(c, x, (mpq_ptr)0);
  int ok = ac_gr_scale_rational(&w->sc, c);
  if (ok) {   /* c Σ_j a_j K_jt / n² */
    mpfr_t s, y, tmp;
    mpfr_inits2(64, s, y, tmp, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    for (int64_t j = 0; j < w->n; j++) {
      mpfr_set_prec(y, mpfr_get_prec(g->X[j]) + 53);
      AC_EXACT(mpfr_mul_d(y, g->X[j], ac_or_kval(w->head, (size_t)(j * w->p->dk + t)), MPFR_RNDN), "a_j K_jt");
      exact_add(s, y, tmp);
    }
    mpfr_get_q(x, s);
    mpq_mul(x, x, c);
    mpz_ui_pow_ui(mpq_numref(c), (unsigned long)w->n, 2);
    mpz_mul(mpq_denref(x), mpq_denref(x), mpq_numref(c));
    mpq_canonicalize(x);
    enclose_q(x, p, lo, hi);
    mpfr_clears(s, y, tmp, (mpfr_ptr)0);
  }
  mpq_clears(c, x, (mpq_ptr)0);
  return ok;
}
