/* gradexact.c: the exact tests of the backward oracle that look past one key (docs/backward.md
 * §3.2-§3.3), run for the elements the first pass leaves undecided: exact zeros and exact
 * rationals (which may sit on a rounding breakpoint, where no precision decides).
 *
 * dQ of a row: with per-group sums AK_g = Σ_{j∈g} a_j K_jt and SK_g = Σ_{j∈g} K_jt (exact) and
 * d_g = z_g - z_top,
 *   n_0 dQ_i[t] / c = Σ_u A_u e^{c u} / Σ_u B_u e^{c u},
 *   A_u = Σ_{d_g + d_h = u} (n_h AK_g - [h >= 1] c_h SK_g),   B_u = Σ_{d_g + d_h = u} n_g n_h
 * (the denominator is L² e^{-2 c z_top}). The c u are distinct algebraic numbers for distinct u
 * (c != 0), so by Lindemann–Weierstrass the ratio is a rational R exactly when A_u = R B_u for
 * every u, and then dQ_i[t] = c R / n_0. The pairs are sorted by u (ng² of them).
 * dK and dV of a column j: the rows i that see j fall into classes of the same score shape (group
 * counts n_g and offsets d_g); within a class the key's weight w_g / L, and w_g w_h / L², are
 * the same numbers for every row with j in group g, so the class adds exact coefficients:
 *   dV_j[t]:  V_g = Σ_i dO_i[t]                               ratio Σ_g V_g e^{c d_g} / Σ_g n_g e^{c d_g}
 *   dK_j[t]:  K_gh = Σ_i q_i[t] (n_h a_ij - c_ih)  (g ∋ j)     ratio as dQ's, over the pairs (g, h), / n_0
 *   dσ_h:     as dK of the sink key with q = 1 and no scale, over the rows of head h (all batches)
 * Each class is rational exactly when its coefficients are proportional (as above); when every
 * class is, the element is the rational sum (times c for dK). Classes that are not rational one by
 * one but cancel together are left to the passes. Under a softcap (gradcap.c) classes are rows of
 * equal (z_g, a_g) and counts (equal capped scores): dV and dσ keep the rational test (V_g = R n_g
 * gives R whatever the weights), dK its exact zeros only (a class of one z per group has one f_g),
 * and the dQ pair test is not used. Exact values are enclosed by their two directed
 * roundings, so a value on a breakpoint is a point; with an irrational c only an exact 0 is used.
 * Everything here is GMP rationals: the values are few and the sizes small. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"

#define AC_GR_PAIR_MAX 64     /* groups of a row for the pair test of dQ */
#define AC_GR_CLASS_PAIRS 16  /* groups of a row shape whose dK pairs a class keeps */
#define AC_GR_CLASS_BUDGET (1 << 21)   /* pair coefficients kept over all classes of a head */

static int scale_rational(const ac_or_scale *sc, mpq_t c)
{
  if (!sc->is_default) {
    mpq_set_d(c, sc->stored);
    return 1;
  }
  if (sc->kind == AC_SCALE_IRRATIONAL) return 0;
  mpq_set_ui(c, 1, (unsigned long)llround(sqrt((double)sc->dk)));
  return 1;
}

/* value (times c for a scaled quantity) enclosed at precision p: 0 when c is irrational and the
 * value is not 0. */
static int enclose(mpq_t v, const ac_or_scale *sc, int scaled, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  if (scaled && mpq_sgn(v)) {
    mpq_t c;
    mpq_init(c);
    int ok = scale_rational(sc, c);
    mpq_mul(v, v, c);
    mpq_clear(c);
    if (!ok) return 0;
  }
  mpfr_set_prec(lo, p);
  mpfr_set_prec(hi, p);
  mpfr_set_q(lo, v, MPFR_RNDD);
  mpfr_set_q(hi, v, MPFR_RNDU);
  return 1;
}

static mpq_t *q_array(int64_t n)
{
  mpq_t *a = ac_xmalloc((size_t)(n ? n : 1) * sizeof *a);
  for (int64_t x = 0; x < n; x++) mpq_init(a[x]);
  return a;
}

static void q_free(mpq_t *a, int64_t n)
{
  if (!a) return;
  for (int64_t x = 0; x < n; x++) mpq_clear(a[x]);
  free(a);
}

static int cmp_u(const void *pa, const void *pb, void *ctx)
{
  mpq_t *u = ctx;   /* pairs (u, u2) at 2e, 2e + 1 */
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c = mpq_cmp(u[2 * a], u[2 * b]);
  return c ? c : mpq_cmp(u[2 * a + 1], u[2 * b + 1]);
}

/* 1 and R when, for every u, the coefficients cf[(g ng + h) stride] of the pairs with
 * (d_g + d_h, d2_g + d2_h) = u add to R Σ n_g n_h; else 0. */
static int pair_ratio(int64_t ng, mpq_t *d, mpq_t *d2, const int64_t *cnt, mpq_t *cf, int64_t stride, mpq_t R)
{
  int64_t np = ng * ng;
  mpq_t *u = q_array(2 * np), A, q;
  int64_t *ord = ac_xmalloc((size_t)np * sizeof *ord);
  mpq_inits(A, q, (mpq_ptr)0);
  for (int64_t e = 0; e < np; e++) {
    mpq_add(u[2 * e], d[e / ng], d[e % ng]);
    mpq_add(u[2 * e + 1], d2[e / ng], d2[e % ng]);
    ord[e] = e;
  }
  qsort_r(ord, (size_t)np, sizeof *ord, cmp_u, u);
  int ok = 1, first = 1;
  for (int64_t a = 0; a < np && ok;) {
    int64_t b = a, B = 0;
    mpq_set_ui(A, 0, 1);
    for (; b < np && !cmp_u(&ord[b], &ord[a], u); b++) {
      mpq_add(A, A, cf[ord[b] * stride]);
      B += cnt[ord[b] / ng] * cnt[ord[b] % ng];
    }
    mpq_set_si(q, B, 1);
    mpq_div(q, A, q);
    if (first) mpq_set(R, q);
    else ok = mpq_equal(R, q) != 0;
    first = 0;
    a = b;
  }
  mpq_clears(A, q, (mpq_ptr)0);
  q_free(u, 2 * np);
  free(ord);
  return ok;
}

/* The loaded row's exponent offsets and counts: d_g = z_g - z_0 (0 for c = 0) and d2_g = 0; with
 * ALiBi or bias E_g - E_0 (rational c) or the pair (z_g - z_0, a_g - a_0) (gradoff.c). Under a
 * softcap the pair (z_g, a_g) itself: equal pairs give equal capped scores, while equal differences
 * do not (tanh is not a shift); such offsets key classes only, never the pair test. Rows whose
 * weights depend on score differences alone take differences of a: one group (d = 0), scale 0
 * (d = 0), two groups, whose weights depend on T(x_0) - T(x_1) alone (T = cap tanh), keyed by the
 * smaller of (z_0, z_1) and (-z_1, -z_0), equal by tanh's oddness. */
static void row_offsets(ac_gr_ws *g, mpq_t *d, mpq_t *d2, int64_t *cnt)
{
  ac_or_ws *w = &g->w;
  mpfr_t x;
  mpfr_init2(x, 64);
  mpq_t y;
  mpq_init(y);
  int64_t j0 = w->ord[0];
  const uint64_t *ztop = ac_or_z(w, j0);
  for (int64_t q = 0; q < w->ng; q++) {
    int64_t j = w->ord[w->gst[q]];
    cnt[q] = w->gst[q + 1] - w->gst[q];
    mpq_set_ui(d[q], 0, 1);
    mpq_set_ui(d2[q], 0, 1);
    if (g->off && g->crat) {
      mpfr_get_q(d[q], g->E[j]);
      mpfr_get_q(y, g->E[j0]);
      mpq_sub(d[q], d[q], y);
      continue;
    }
    if (g->off) {
      mpfr_get_q(d2[q], g->A[j]);
      mpfr_get_q(y, g->A[j0]);
      if (!g->capped) mpq_sub(d2[q], d2[q], y);
    }
    if (w->sc.sign == 0) continue;
    ac_or_fx_to_mpfr(w, x, ac_or_z(w, j), g->capped ? NULL : ztop, w->nl, w->zlsb);
    mpfr_get_q(d[q], x);
  }
  if (g->capped && (g->zfree || w->ng <= 2)) {   /* weights that depend on differences alone */
    for (int64_t q = w->ng - 1; q >= 0; q--) mpq_sub(d2[q], d2[q], d2[0]);
    if (w->ng == 1) mpq_set_ui(d[0], 0, 1);
    mpq_neg(y, d[w->ng - 1]);
    if (w->ng == 2 && mpq_cmp(y, d[0]) < 0) {   /* tanh odd: T(x_0) - T(x_1) = T(-x_1) - T(-x_0) */
      mpq_neg(d[1], d[0]);
      mpq_set(d[0], y);
    }
  }
  mpq_clear(y);
  mpfr_clear(x);
}

/* coef[h] = n_h a_j - c_h of key j of the loaded row (c_0 = 0). */
static void key_coefs(ac_gr_ws *g, int64_t j, mpq_t *coef)
{
  ac_or_ws *w = &g->w;
  mpq_t x;
  mpq_init(x);
  mpfr_get_q(x, g->X[j]);
  for (int64_t h = 0; h < w->ng; h++) {
    mpq_set_si(coef[h], (long)(w->gst[h + 1] - w->gst[h]), 1);
    mpq_mul(coef[h], coef[h], x);
    if (h == 0) continue;
    mpq_t ch;
    mpq_init(ch);
    mpfr_get_q(ch, g->SX[h]);
    mpq_sub(coef[h], coef[h], ch);
    mpq_clear(ch);
  }
  mpq_clear(x);
}

int ac_gr_dq_exact(ac_gr_ws *g, int64_t t, mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  ac_or_ws *w = &g->w;
  int64_t ng = w->ng, dk = w->p->dk;
  if (ng > AC_GR_PAIR_MAX) return 0;
  mpq_t *d = q_array(ng), *d2 = q_array(ng), *AK = q_array(ng), *SK = q_array(ng), *cf = q_array(ng * ng);
  mpq_t *c = q_array(ng), R, x;
  int64_t *cnt = ac_xmalloc((size_t)ng * sizeof *cnt);
  mpq_inits(R, x, (mpq_ptr)0);
  row_offsets(g, d, d2, cnt);
  for (int64_t q = 0; q < ng; q++) {
    if (q) mpfr_get_q(c[q], g->SX[q]);
    for (int64_t r = w->gst[q]; r < w->gst[q + 1]; r++) {
      int64_t j = w->ord[r];
      mpq_set_d(x, ac_or_kval(w->head, (size_t)(j * dk + t)));
      mpq_add(SK[q], SK[q], x);
      mpq_t a;
      mpq_init(a);
      mpfr_get_q(a, g->X[j]);
      mpq_mul(a, a, x);
      mpq_add(AK[q], AK[q], a);
      mpq_clear(a);
    }
  }
  for (int64_t q = 0; q < ng; q++)
    for (int64_t h = 0; h < ng; h++) {   /* n_h AK_g - [h >= 1] c_h SK_g */
      mpq_set_si(x, (long)cnt[h], 1);
      mpq_mul(cf[q * ng + h], AK[q], x);
      if (!h) continue;
      mpq_mul(x, c[h], SK[q]);
      mpq_sub(cf[q * ng + h], cf[q * ng + h], x);
    }
  int ok = pair_ratio(ng, d, d2, cnt, cf, 1, R);
  if (ok) {
    mpq_set_si(x, (long)cnt[0], 1);
    mpq_div(R, R, x);
    ok = enclose(R, &w->sc, 1, p, lo, hi);
  }
  q_free(d, ng); q_free(d2, ng); q_free(AK, ng); q_free(SK, ng); q_free(cf, ng * ng); q_free(c, ng);
  mpq_clears(R, x, (mpq_ptr)0);
  free(cnt);
  return ok;
}
/* The loaded row's score shape: per group its count and exact exponent offsets (row_offsets). */
static char *row_shape(ac_gr_ws *g)
{
  int64_t ng = g->w.ng;
  mpq_t *d = q_array(ng), *d2 = q_array(ng);
  int64_t *cnt = ac_xmalloc((size_t)ng * sizeof *cnt);
  row_offsets(g, d, d2, cnt);
  size_t cap = 64, len = 0;
  char *s = ac_xmalloc(cap);
  s[0] = 0;
  for (int64_t q = 0; q < ng; q++) {
    char *a = mpq_get_str(NULL, 16, d[q]), *b = mpq_get_str(NULL, 16, d2[q]);
    size_t need = len + strlen(a) + strlen(b) + 32;
    if (need > cap) s = ac_xrealloc(s, cap = 2 * need);
    len += (size_t)snprintf(s + len, cap - len, "%lld:%s,%s;", (long long)cnt[q], a, b);
    free(a);
    free(b);
  }
  q_free(d, ng);
  q_free(d2, ng);
  free(cnt);
  return s;
}

typedef struct {
  char *key;       /* the row shape */
  int64_t ng;
  int64_t *cnt;    /* ng */
  mpq_t *d, *d2;   /* ng exponent offsets (row_offsets) */
  mpq_t *v;        /* ng * dv: V_g */
  mpq_t *k;        /* ng * ng * dk: K_gh (ng <= AC_GR_CLASS_PAIRS), else NULL */
  uint8_t *knz;    /* dk: some K_gh of column t is not 0 */
  int cap;         /* softcap: K_gh kept for its exact zeros only: 1, one f per group in the class (rows
                      of equal (z_g, a_g), or scale 0); 2, keyed by differences (one or two groups),
                      where f differs between rows: no dK test */
} gr_class;

struct ac_gr_classes {
  int64_t ncols, dk, dv;
  int64_t kept;    /* pair coefficients allocated (at most AC_GR_CLASS_BUDGET) */
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
      q_free(cl->d, cl->ng);
      q_free(cl->d2, cl->ng);
      q_free(cl->v, cl->ng * C->dv);
      q_free(cl->k, cl->k ? cl->ng * cl->ng * C->dk : 0);
      free(cl->cnt); free(cl->knz); free(cl->key);
    }
    free(C->c[k]);
  }
  free(C->c); free(C->n); free(C);
}

static gr_class *class_of(ac_gr_ws *g, ac_gr_classes *C, int64_t k, const char *shape)
{
  for (int64_t a = 0; a < C->n[k]; a++)
    if (!strcmp(C->c[k][a].key, shape)) return &C->c[k][a];
  C->c[k] = ac_xrealloc(C->c[k], (size_t)(C->n[k] + 1) * sizeof *C->c[k]);
  gr_class *cl = &C->c[k][C->n[k]++];
  int64_t ng = g->w.ng;
  cl->key = strcpy(ac_xmalloc(strlen(shape) + 1), shape);
  cl->ng = ng;
  cl->cnt = ac_xmalloc((size_t)ng * sizeof *cl->cnt);
  cl->d = q_array(ng);
  cl->d2 = q_array(ng);
  row_offsets(g, cl->d, cl->d2, cl->cnt);
  cl->v = q_array(ng * C->dv);
  int64_t want = ng * ng * C->dk;   /* beyond the limits a class keeps its exact zeros only */
  /* under a softcap dK's pair ratio is not used (it assumes exponents c (z_g - z_0) and no factor
   * f_g); every K_gh = 0 makes the class's uncapped sum 0, and f_g times 0 (one z per group) */
  cl->k = ng <= AC_GR_CLASS_PAIRS && C->kept + want <= AC_GR_CLASS_BUDGET ? q_array(want) : NULL;
  cl->cap = !g->capped ? 0 : !g->zfree && ng <= 2 ? 2 : 1;
  if (cl->k) C->kept += want;
  cl->knz = ac_xcalloc((size_t)C->dk, 1);
  return cl;
}

void ac_gr_classes_add(ac_gr_ws *g, ac_gr_classes *C, const ac_gr_cols *cols)
{
  ac_or_ws *w = &g->w;
  int64_t dk = C->dk, dv = C->dv, ng = w->ng;
  char *shape = row_shape(g);
  mpq_t *coef = q_array(ng), x;
  mpq_init(x);
  for (int64_t j = 0; j < w->n; j++) {
    int64_t k = AC_GR_COL(g, cols, j), q = w->gof[j];
    if (k < 0 || !cols->pend[k]) continue;
    gr_class *cl = class_of(g, C, k, shape);
    for (int64_t t = 0; t < dv; t++) {
      if (g->odbad[t]) continue;
      mpq_set_d(x, g->od[t]);
      mpq_add(cl->v[q * dv + t], cl->v[q * dv + t], x);
    }
    if (g->cls != AC_GR_ROW_OK) continue;
    key_coefs(g, j, coef);
    for (int64_t h = 0; h < ng; h++)
      for (int64_t t = 0; t < dk; t++) {
        mpq_set_d(x, w->qd[t]);
        mpq_mul(x, x, coef[h]);
        cl->knz[t] |= mpq_sgn(x) != 0;
        if (cl->k) mpq_add(cl->k[(q * ng + h) * dk + t], cl->k[(q * ng + h) * dk + t], x);
      }
  }
  mpq_clear(x);
  q_free(coef, ng);
  free(shape);
}

void ac_gr_classes_add_sink(ac_gr_ws *g, ac_gr_classes *C, int64_t h)
{
  ac_or_ws *w = &g->w;
  int64_t ng = w->ng, q = w->gof[g->sink];
  char *shape = row_shape(g);
  gr_class *cl = class_of(g, C, h, shape);
  mpq_t *coef = q_array(ng);
  key_coefs(g, g->sink, coef);
  for (int64_t hh = 0; hh < ng; hh++) {
    cl->knz[0] |= mpq_sgn(coef[hh]) != 0;
    if (cl->k) mpq_add(cl->k[q * ng + hh], cl->k[q * ng + hh], coef[hh]);
  }
  q_free(coef, ng);
  free(shape);
}

int ac_gr_classes_exact(const ac_gr_classes *C, const ac_or_scale *sc, int64_t k, char which, int64_t t,
                        mpfr_prec_t p, mpfr_t lo, mpfr_t hi)
{
  mpq_t sum, R, q;
  mpq_inits(sum, R, q, (mpq_ptr)0);
  int ok = 1;
  for (int64_t a = 0; a < C->n[k] && ok; a++) {
    gr_class *cl = &C->c[k][a];
    if (which == 'v') {   /* V_g = R n_g for every g */
      for (int64_t g = 0; g < cl->ng && ok; g++) {
        mpq_set_si(q, (long)cl->cnt[g], 1);
        mpq_div(q, cl->v[g * C->dv + t], q);
        if (!g) mpq_set(R, q);
        else ok = mpq_equal(R, q) != 0;
      }
    } else if (!cl->knz[t]) {
      mpq_set_ui(R, 0, 1);
    } else if (cl->cap) {   /* softcap: only a class whose every K_gh is 0 (dσ: the sink has no f) */
      mpq_set_ui(R, 0, 1);
      ok = which == 's' || cl->cap == 1;
      for (int64_t e = 0; cl->k && e < cl->ng * cl->ng && ok; e++) ok = mpq_sgn(cl->k[e * C->dk + t]) == 0;
      ok &= cl->k != NULL;
    } else if (cl->k && pair_ratio(cl->ng, cl->d, cl->d2, cl->cnt, cl->k + t, C->dk, R)) {
      mpq_set_si(q, (long)cl->cnt[0], 1);
      mpq_div(R, R, q);
    } else {
      ok = 0;
    }
    if (ok) mpq_add(sum, sum, R);
  }
  if (ok) ok = enclose(sum, sc, which == 'k', p, lo, hi);   /* 's' (dσ): no scale */
  mpq_clears(sum, R, q, (mpq_ptr)0);
  return ok;
}

/* The exponent t_g = s_g - s_0 of group q of class cl into [lo, hi] (their precision): d_q / cd for a
 * rational c with offsets (d = E_g - E_0, E = cn z + cd a), else c d_q + d2_q from c's interval. */
static void class_exponent(const ac_gr_ws *g, const gr_class *cl, int64_t q, mpfr_t lo, mpfr_t hi)
{
  const ac_or_scale *sc = &g->w.sc;
  if (g->off && g->crat) {
    mpq_t x;
    mpq_init(x);
    mpq_set(x, cl->d[q]);
    if (sc->is_default) {
      mpq_t cd;
      mpq_init(cd);
      mpq_set_ui(cd, (unsigned long)llround(sqrt((double)sc->dk)), 1);
      mpq_div(x, x, cd);
      mpq_clear(cd);
    }
    mpfr_set_q(lo, x, MPFR_RNDD);
    mpfr_set_q(hi, x, MPFR_RNDU);
    mpq_clear(x);
    return;
  }
  mpfr_t clo, chi, d;
  mpfr_inits2(mpfr_get_prec(lo), clo, chi, d, (mpfr_ptr)0);
  ac_or_scale_interval(sc, clo, chi);
  int neg = mpq_sgn(cl->d[q]) < 0;
  mpfr_set_q(d, cl->d[q], MPFR_RNDD);
  mpfr_mul(lo, neg ? chi : clo, d, MPFR_RNDD);
  mpfr_set_q(d, cl->d[q], MPFR_RNDU);
  mpfr_mul(hi, neg ? clo : chi, d, MPFR_RNDU);
  mpfr_set_q(d, cl->d2[q], MPFR_RNDD);
  mpfr_add(lo, lo, d, MPFR_RNDD);
  mpfr_set_q(d, cl->d2[q], MPFR_RNDU);
  mpfr_add(hi, hi, d, MPFR_RNDU);
  mpfr_clears(clo, chi, d, (mpfr_ptr)0);
}

/* Σ_{g>=1} (n_0 V_g - n_g V_0) e^{t_g} / (n_0 D), D = Σ_g n_g e^{t_g}, of class cl (column t of dV)
 * added into [slo, shi] at precision p: every term with its own relative accuracy, however small
 * its weight (MPFR's extended exponent range). */
static void class_tail(const ac_gr_ws *g, const gr_class *cl, int64_t dv, int64_t t, mpfr_prec_t p, mpfr_t slo,
                       mpfr_t shi)
{
  int64_t ng = cl->ng;
  mpfr_t *elo = ac_xmalloc((size_t)(2 * ng) * sizeof *elo), *ehi = elo + ng;
  mpfr_t Dlo, Dhi, x, y, c;
  mpfr_inits2(p, Dlo, Dhi, x, y, c, (mpfr_ptr)0);
  mpfr_set_si(Dlo, (long)cl->cnt[0], MPFR_RNDD);
  mpfr_set_si(Dhi, (long)cl->cnt[0], MPFR_RNDU);
  for (int64_t q = 1; q < ng; q++) {
    mpfr_inits2(p + 16, elo[q], ehi[q], (mpfr_ptr)0);
    class_exponent(g, cl, q, elo[q], ehi[q]);
    mpfr_exp(elo[q], elo[q], MPFR_RNDD);
    mpfr_exp(ehi[q], ehi[q], MPFR_RNDU);
    mpfr_mul_si(x, elo[q], (long)cl->cnt[q], MPFR_RNDD);
    mpfr_add(Dlo, Dlo, x, MPFR_RNDD);
    mpfr_mul_si(x, ehi[q], (long)cl->cnt[q], MPFR_RNDU);
    mpfr_add(Dhi, Dhi, x, MPFR_RNDU);
  }
  mpq_t cf, a;
  mpq_inits(cf, a, (mpq_ptr)0);
  for (int64_t q = 1; q < ng; q++) {
    mpq_set_si(cf, (long)cl->cnt[0], 1);
    mpq_mul(cf, cf, cl->v[q * dv + t]);
    mpq_set_si(a, (long)cl->cnt[q], 1);
    mpq_mul(a, a, cl->v[t]);
    mpq_sub(cf, cf, a);
    int s = mpq_sgn(cf);
    if (!s) continue;
    mpq_set_si(a, (long)cl->cnt[0], 1);
    mpq_div(cf, cf, a);              /* (n_0 V_g - n_g V_0) / n_0 */
    for (int up = 0; up < 2; up++) { /* the lower end takes the smaller weight over the larger D when cf > 0 */
      int big = (s > 0) == up;
      mpfr_set_q(c, cf, up ? MPFR_RNDU : MPFR_RNDD);
      mpfr_mul(y, c, big ? ehi[q] : elo[q], up ? MPFR_RNDU : MPFR_RNDD);
      mpfr_div(y, y, big ? Dlo : Dhi, up ? MPFR_RNDU : MPFR_RNDD);
      mpfr_add(up ? shi : slo, up ? shi : slo, y, up ? MPFR_RNDU : MPFR_RNDD);
    }
  }
  mpq_clears(cf, a, (mpq_ptr)0);
  for (int64_t q = 1; q < ng; q++) mpfr_clears(elo[q], ehi[q], (mpfr_ptr)0);
  free(elo);
  mpfr_clears(Dlo, Dhi, x, y, c, (mpfr_ptr)0);
}

int ac_gr_classes_sign(const ac_gr_ws *g, const ac_gr_classes *C, int64_t k, int64_t t, mpfr_srcptr bp, mpfr_prec_t p,
                       long cap)
{
  if (g->capped || !C->n[k]) return 0;
  mpq_t Q, x;
  mpq_inits(Q, x, (mpq_ptr)0);
  mpfr_get_q(Q, bp);
  mpq_neg(Q, Q);
  for (int64_t a = 0; a < C->n[k]; a++) { /* Σ_classes V_0 / n_0 - b, exactly */
    const gr_class *cl = &C->c[k][a];
    mpq_set_si(x, (long)cl->cnt[0], 1);
    mpq_div(x, cl->v[t], x);
    mpq_add(Q, Q, x);
  }
  int sign = 0;
  for (mpfr_prec_t q = p; !sign && q <= cap; q *= 2) {
    mpfr_t lo, hi;
    mpfr_inits2(q, lo, hi, (mpfr_ptr)0);
    mpfr_set_q(lo, Q, MPFR_RNDD);
    mpfr_set_q(hi, Q, MPFR_RNDU);
    for (int64_t a = 0; a < C->n[k]; a++) class_tail(g, &C->c[k][a], C->dv, t, q, lo, hi);
    sign = mpfr_sgn(lo) > 0 ? 1 : mpfr_sgn(hi) < 0 ? -1 : 0;
    mpfr_clears(lo, hi, (mpfr_ptr)0);
  }
  mpq_clears(Q, x, (mpq_ptr)0);
  return sign;
}
