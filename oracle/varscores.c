/* varscores.c: the rows of attention variants (docs/numerics.md §11, docs/variants.md): which
 * keys a query sees, the score class of each, the exact parts of each score, and the groups of
 * equal score.
 *
 * A row's keys are gathered into a head of their own (ac_or_head_pick): the visible keys in
 * storage order (mask AND window AND boolean mask: any subset, not a prefix), then the sink as
 * one more key with K = 0 and V = 0 whose score is sigma_h (no mask, window, softcap, ALiBi or
 * bias touches it). Everything downstream (levels, exact-case test, LSE, budget terms, hull)
 * runs on that head unchanged, so the sink enters the denominator, the LSE and every budget
 * term as the key it is.
 *
 * Each score is s_j = S(c z_j) + a_j with z_j = q·k_j exact (scores.c), S the identity or
 * the softcap x -> cap tanh(x / cap), and a_j = -m_h |i + tk - tq - j| + bias_j exact (a binary32
 * slope times an integer, plus a stored value: dyadic). A fixed key has z_j = 0 and the score a_j
 * alone: the sink (a_j = sigma_h), and a raw score of ±inf under a softcap (a_j = ±cap + ...).
 * Three modes, by what keeps comparisons exact:
 *   FOLD (no softcap, c dyadic or 1/k): g_j = rk s_j exactly (rk = 1 or k): groups and order exact;
 *   LIN  (no softcap, c = 1/sqrt(dk) irrational): s_j = s_k iff (z_j, a_j) = (z_k, a_k), since
 *        c (z_j - z_k) = a_k - a_j with c irrational and the rest rational forces both to 0;
 *   CAP  (softcap): s_j = s_k iff (z_j, a_j) = (z_k, a_k): for z_j != z_k, x = c z / cap are
 *        distinct algebraic multiples of y = c / (cap 2^e), tanh(p y) is a rational function of
 *        E = e^{2y}, transcendental (Hermite-Lindemann), and cap (tanh x_j - tanh x_k) = a_k - a_j
 *        would be a non-trivial polynomial equation in E (it fails at E = 1 or for p = q).
 * So equal raw scores and equal offsets stay equal after capping, and nothing else is equal:
 * the groups are exact in every mode. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"
#include "variants.h"
#include "varint.h"
#include "fast.h"

void ac_or_var_init(ac_or_ws *w)
{
  const ac_problem *p = w->p;
  if (!p->f.used) return;
  w->rowh.b = w->rowh.kvh = -1;
  if (!(p->f.used & AC_OR_VAR_SCORES)) return;
  ac_or_var *v = ac_xcalloc(1, sizeof *v);
  v->rk = 1;
  if (p->f.used & AC_FEAT_SOFTCAP) {
    v->mode = AC_VAR_CAP;
    v->cap = p->f.softcap;
  } else if (w->sc.kind == AC_SCALE_IRRATIONAL) {
    v->mode = AC_VAR_LIN;
  } else {
    v->mode = AC_VAR_FOLD;
    if (w->sc.kind == AC_SCALE_RATIONAL) v->rk = (long)llround(sqrt((double)w->sc.dk));
  }
  mpfr_inits2(64, v->c, v->t1, v->t2, v->t3, v->tk_lo, v->tk_hi, (mpfr_ptr)0);
  v->tk_key = -1;
  mpfr_t hi;
  mpfr_init2(hi, 64);
  if (v->mode == AC_VAR_FOLD) {   /* the exact factor of z in g: c (dyadic), or 1 when c = 1/rk */
    if (v->rk > 1) mpfr_set_ui(v->c, 1, MPFR_RNDN);
    else ac_or_scale_interval(&w->sc, v->c, hi);
  }
  mpfr_clear(hi);
  w->var = v;
}

void ac_or_var_free(ac_or_ws *w)
{
  ac_or_head_free(&w->rowh);
  free(w->rkey);
  w->rkey = NULL;
  ac_or_var *v = w->var;
  if (!v) return;
  for (int64_t j = 0; j < v->cap_n; j++) { mpfr_clear(v->a[j]); mpfr_clear(v->g[j]); }
  free(v->a); free(v->g); free(v->am); free(v->ae); free(v->gk); free(v->fix); free(v->approx); free(v->smag); free(v->zf); free(v->mag);
  mpfr_clears(v->c, v->t1, v->t2, v->t3, v->tk_lo, v->tk_hi, (mpfr_ptr)0);
  free(v);
  w->var = NULL;
}

static void ensure_keys(ac_or_var *v, int64_t n)
{
  if (n <= v->cap_n) return;
  v->a = ac_xrealloc(v->a, (size_t)n * sizeof *v->a);
  v->g = ac_xrealloc(v->g, (size_t)n * sizeof *v->g);
  for (int64_t j = v->cap_n; j < n; j++) { mpfr_init2(v->a[j], 64); mpfr_init2(v->g[j], 64); }
  v->fix = ac_xrealloc(v->fix, (size_t)n);
  v->am = ac_xrealloc(v->am, (size_t)n * sizeof *v->am);
  v->ae = ac_xrealloc(v->ae, (size_t)n * sizeof *v->ae);
  v->gk = ac_xrealloc(v->gk, (size_t)n);
  v->approx = ac_xrealloc(v->approx, (size_t)n * sizeof *v->approx);
  v->smag = ac_xrealloc(v->smag, (size_t)n * sizeof *v->smag);
  v->zf = ac_xrealloc(v->zf, (size_t)n * sizeof *v->zf);
  v->mag = ac_xrealloc(v->mag, (size_t)n * 2 * sizeof *v->mag);
  v->cap_n = n;
}

int64_t ac_or_row_gather(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t *nvis)
{
  const ac_problem *p = w->p;
  if (p->tk + 1 > w->cap_rkey) {
    w->rkey = ac_xrealloc(w->rkey, (size_t)(p->tk + 1) * sizeof *w->rkey);
    w->cap_rkey = p->tk + 1;
  }
  if (w->var) ensure_keys(w->var, p->tk + 1);
  int64_t m = 0;
  if (!(p->f.used & (AC_FEAT_WINDOW | AC_FEAT_BOOL_MASK))) {   /* the mask alone: a prefix */
    m = ac_visible_count(p, i);
    m = m < 0 ? 0 : m > p->tk ? p->tk : m;
    for (int64_t j = 0; j < m; j++) w->rkey[j] = j;
  } else {
    for (int64_t j = 0; j < p->tk; j++)
      if (ac_features_visible(w->cs, b, h, i, j)) w->rkey[m++] = j;
  }
  int64_t sink = w->var && (p->f.used & AC_FEAT_SINKS) && w->cs->sinks ? 1 : 0;
  int prefix = m == 0 || w->rkey[m - 1] == m - 1;
  if (sink || !prefix || w->drop) {   /* else the keys are the head's prefix 0..m-1: read in place */
    const ac_or_head *src = w->head;
    /* a prefix after a shorter prefix of the same head (rows of growing length): its keys are in place
     * (not with dropout: every row has values of its own) */
    int64_t from = prefix && !w->drop && w->pick_src == src && w->pick_b == src->b && w->pick_kvh == src->kvh &&
                           w->pick_m <= m ? w->pick_m : 0;
    ac_or_head_pick(&w->rowh, src, p, w->rkey, m, sink, from);
    if (w->drop) ac_or_drop_row(w, b, h, i, m);   /* V'_j = m_j V_j (dropout.c) */
    w->pick_src = prefix && !w->drop ? src : NULL;
    w->pick_b = src->b;
    w->pick_kvh = src->kvh;
    w->pick_m = m;
    w->head = &w->rowh;
  }
  if (sink) w->rkey[m] = -1;
  w->b = b; w->h = h; w->i = i;
  *nvis = m;
  return m + sink;
}

/* IEEE class of a double, and of a sum of classes. */
static uint8_t dclass(double x)
{
  return isnan(x) ? AC_SCLS_NAN : isinf(x) ? (x > 0 ? AC_SCLS_PINF : AC_SCLS_NINF) : AC_SCLS_FINITE;
}
static uint8_t cls_add(uint8_t a, uint8_t b)
{
  if (a == AC_SCLS_NAN || b == AC_SCLS_NAN) return AC_SCLS_NAN;
  if ((a == AC_SCLS_PINF && b == AC_SCLS_NINF) || (a == AC_SCLS_NINF && b == AC_SCLS_PINF)) return AC_SCLS_NAN;
  return a != AC_SCLS_FINITE ? a : b;
}

/* r = x + y exactly (r distinct from x and y). */
static void exact_add(mpfr_t r, mpfr_srcptr x, mpfr_srcptr y)
{
  mpfr_set_prec(r, ac_or_exact_prec(x, y));
  AC_EXACT(mpfr_add(r, x, y, MPFR_RNDN), "a sum in the precision that holds it");
}

/* Key r (storage index j >= 0) of a finite class: a_j = capv - m dist + bias exactly; mag: |m dist|,
 * |bias| (budget). */
static void offset_exact(ac_or_ws *w, int64_t r, int64_t j, double capv, double slope, double bias)
{
  ac_or_var *v = w->var;
  const ac_problem *p = w->p;
  int64_t dist = ac_alibi_dist(p, w->i, j);
  if (slope == 0 && bias == 0 && capv == 0) {   /* no offset (a softcap alone) */
    mpfr_set_prec(v->a[r], 53);
    mpfr_set_zero(v->a[r], 1);
    v->mag[2 * r] = v->mag[2 * r + 1] = 0;
    return;
  }
  mpfr_set_prec(v->t1, 24 + 64);
  AC_EXACT(mpfr_set_d(v->t1, -slope, MPFR_RNDN), "a binary32 slope");
  AC_EXACT(mpfr_mul_si(v->t1, v->t1, (long)dist, MPFR_RNDN), "a binary32 slope times a 63-bit distance in 88 bits");
  mpfr_set_prec(v->t2, 53);
  AC_EXACT(mpfr_set_d(v->t2, bias, MPFR_RNDN), "a stored bias");
  exact_add(v->t3, v->t1, v->t2);
  mpfr_set_prec(v->t1, 53);
  AC_EXACT(mpfr_set_d(v->t1, capv, MPFR_RNDN), "the softcap");
  exact_add(v->a[r], v->t3, v->t1);
  v->mag[2 * r] = fabsl((long double)slope * (long double)dist);
  v->mag[2 * r + 1] = fabsl((long double)bias);
}

/* Key r's offset in integers; when it does not fit, every finite key before it goes to MPFR and
 * the row leaves the integer form (the caller then takes offset_exact). */
static void dy_or_mpfr(ac_or_ws *w, const uint8_t *cls, int64_t r, double slope, int64_t dist, double stored)
{
  ac_or_var *v = w->var;
  if (!ac_or_var_dy_offset(v, r, slope, dist, stored)) return;
  for (int64_t k = 0; k < r; k++)
    if (cls[k] == AC_SCLS_FINITE) ac_or_var_a_mpfr(v, k);
  v->dy = 0;
}

int ac_or_var_classify(ac_or_ws *w, int64_t n, int q_bad, uint8_t *cls)
{
  ac_or_var *v = w->var;
  const ac_problem *p = w->p;
  const ac_case *cs = w->cs;
  int64_t kvh = ac_kv_head(p, w->h);
  double *q = NULL;
  int need_q = q_bad;   /* q's values classify a non-finite q or a non-finite visible key */
  for (int64_t r = 0; r < n && !need_q; r++) need_q = w->rkey[r] >= 0 && w->head->kbad[r];
  if (need_q) {
    q = ac_xmalloc((size_t)p->dk * sizeof *q);
    ac_or_q_values(w, w->b, w->h, w->i, q);
  }
  double slope = ac_features_slope(cs, w->b, w->h);
  int row = AC_SCLS_FINITE;
  v->dy = v->mode == AC_VAR_FOLD;   /* FOLD offsets in integers while they fit (varfold.c) */
  for (int64_t r = 0; r < n; r++) {
    int64_t j = w->rkey[r];
    uint8_t c;
    v->fix[r] = 0;
    if (j < 0) {   /* the sink: score sigma_h, nothing else */
      double sg = (double)cs->sinks[w->h];
      c = dclass(sg);
      v->fix[r] = 1;
      if (c == AC_SCLS_FINITE) {
        if (v->dy) dy_or_mpfr(w, cls, r, 0, 0, sg);
        if (!v->dy) {
          mpfr_set_prec(v->a[r], 53);
          AC_EXACT(mpfr_set_d(v->a[r], sg, MPFR_RNDN), "a binary32 sink");
        }
        v->mag[2 * r] = v->mag[2 * r + 1] = 0;
      }
    } else {
      c = q_bad || w->head->kbad[r] ? ac_or_inf_key_class(w, q, w->b, kvh, j) : AC_SCLS_FINITE;
      double capv = 0;
      if (v->mode == AC_VAR_CAP && (c == AC_SCLS_PINF || c == AC_SCLS_NINF)) {
        capv = c == AC_SCLS_PINF ? v->cap : -v->cap;   /* cap tanh(±inf) = ±cap exactly */
        v->fix[r] = 1;
        c = AC_SCLS_FINITE;
      }
      double bias = 0;
      if ((p->f.used & AC_FEAT_BIAS) && cs->bias) {
        size_t bx = ac_biasidx(p, w->b, w->h, w->i, j);
        bias = p->f.bias_dtype == AC_F32 ? (double)((const float *)cs->bias)[bx] : ac_load(p->f.bias_dtype, cs->bias, bx);
      }
      double al = -slope * (double)ac_alibi_dist(p, w->i, j);   /* its class only (inf times 0 is NaN) */
      c = cls_add(cls_add(c, dclass(al)), dclass(bias));
      if (c == AC_SCLS_FINITE && v->dy) dy_or_mpfr(w, cls, r, slope, ac_alibi_dist(p, w->i, j), bias);
      if (c == AC_SCLS_FINITE && !v->dy) offset_exact(w, r, j, capv, slope, bias);
    }
    cls[r] = c;
    if (c == AC_SCLS_NAN) row = AC_SCLS_NAN;
    else if (c == AC_SCLS_PINF && row != AC_SCLS_NAN) row = AC_SCLS_PINF;
    else if (c == AC_SCLS_NINF && row == AC_SCLS_FINITE) row = AC_SCLS_NINF;
  }
  free(q);
  return row;
}

void ac_or_var_compact(ac_or_ws *w, const uint8_t *keep, int64_t n, int pinf)
{
  ac_or_var *v = w->var;
  int64_t m = 0;
  for (int64_t r = 0; r < n; r++) {
    if (!keep[r]) continue;
    if (m != r) {
      w->rkey[m] = w->rkey[r];
      v->fix[m] = v->fix[r];
      mpfr_swap(v->a[m], v->a[r]);
      v->am[m] = v->am[r];
      v->ae[m] = v->ae[r];
      v->mag[2 * m] = v->mag[2 * r];
      v->mag[2 * m + 1] = v->mag[2 * r + 1];
    }
    if (pinf) {   /* the limit of equal infinite scores: equal weights */
      v->fix[m] = 1;
      mpfr_set_zero(v->a[m], 1);
      v->am[m] = 0;
      v->ae[m] = 0;
    }
    m++;
  }
}

/* Approximate s_j (long double) from the exact parts, and the budget's per-key magnitudes
 * (docs/numerics.md §11.4): a kernel's score error is at most, per stage and to first order,
 *   sech^2(x_j) (γ |c| Z_j + u |c d_j|)   the dot product and the scaling, through tanh' = sech^2
 * + u |capped_j|                          tanh and the product by cap
 * + u |m dist| + u |bias_j| + u |s_j|     ALiBi's product, the bias (converted), the additions,
 * so zf_j = sech^2(x_j) (1 without a softcap, 0 for a fixed key) multiplies |c| Z_j and
 * smag_j = sech^2(x_j)|c d_j| + |capped_j| + |m dist| + |bias_j| + |s_j| takes the place of |s_j|.
 * Without softcap, ALiBi and bias (windows, masks, sinks only) smag_j = |s_j| as for plain
 * attention; the sink's score is read, not computed: smag = |sigma|, zf = 0. */
static void key_approx(ac_or_ws *w, int64_t r)
{
  ac_or_var *v = w->var;
  const ac_problem *p = w->p;
  long double a = ac_or_var_a_ld(v, r), s, sd = 0, capped = 0, zf = v->fix[r] ? 0 : 1;
  if (v->mode == AC_VAR_FOLD) {   /* s = g / rk, g = cnum z' (folded in integers: g on demand) */
    if (v->g_ok) {
      s = mpfr_get_ld(v->g[r], MPFR_RNDN) / (long double)v->rk;
    } else {   /* two limbs; the same roundings as from g: cnum is 1 (rk > 1) or c = ±2^e */
      s = ac_or_var_z_ld(w, r);
      s = v->rk > 1 ? s / (long double)v->rk : s * (long double)w->sc.approx;
    }
    sd = s - a;
  } else {
    sd = (w->nl == 2 ? ac_or_var_z_ld(w, r) : ac_or_fx_to_ld(ac_or_z(w, r), w->nl, w->zlsb)) * (long double)w->sc.approx;
    if (v->mode == AC_VAR_CAP) {   /* binary64 tanh: approximations for the order and the budget */
      double th = tanh((double)(sd / (long double)v->cap));
      capped = (long double)v->cap * (long double)th;
      s = capped + a;
      zf *= (1 - (long double)th) * (1 + (long double)th);   /* sech^2; 0 where tanh rounds to ±1 (|x| > 19) */
    } else {
      s = sd + a;
    }
  }
  v->approx[r] = s;
  v->zf[r] = zf;
  if (w->rkey[r] < 0 || !(p->f.used & (AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS))) {
    v->smag[r] = fabsl(s);
    return;
  }
  if (v->fix[r]) capped = (long double)v->cap;   /* tanh(±inf) */
  v->smag[r] = fabsl(sd) * zf + fabsl(capped) + v->mag[2 * r] + v->mag[2 * r + 1] + fabsl(s);
}

/* FOLD with c = ±2^e (a stored power of two, or the default 2^-k) or c = 1/k (the default):
 * z'_j = g_j / cnum is dyadic and s_j = c z'_j, so the scores become plain fixed-point scores of
 * the case's own scale: the fast path and the plain groups read them as they are (§11.2). */
int ac_or_var_foldable(const ac_problem *p, const ac_or_scale *sc)
{
  if (!(p->f.used & AC_OR_VAR_SCORES) || (p->f.used & AC_FEAT_SOFTCAP)) return 0;
  if (sc->kind == AC_SCALE_IRRATIONAL || sc->sign == 0) return 0;
  int e;
  return sc->is_default || fabs(frexp(sc->stored, &e)) == 0.5;
}

/* z_j = g_j / cnum in nl two's complement limbs at a common lsb. */
static void fold_scores(ac_or_ws *w)
{
  ac_or_var *v = w->var;
  int64_t n = w->n;
  mpz_t *M = ac_xmalloc((size_t)n * sizeof *M);
  mpfr_exp_t *E = ac_xmalloc((size_t)n * sizeof *E), lsb = 0, msb = 0;
  int any = 0;
  for (int64_t r = 0; r < n; r++) {
    mpz_init(M[r]);
    mpfr_set_prec(v->t1, mpfr_get_prec(v->g[r]));
    AC_EXACT(mpfr_div(v->t1, v->g[r], v->c, MPFR_RNDN), "g / cnum: cnum is ±2^e or 1");
    E[r] = 0;
    if (mpfr_zero_p(v->t1)) continue;
    E[r] = mpfr_get_z_2exp(M[r], v->t1);
    mp_bitcnt_t tz = mpz_scan1(M[r], 0);   /* the significand's trailing zeros: the lsb of the value itself */
    mpz_fdiv_q_2exp(M[r], M[r], tz);
    E[r] += (mpfr_exp_t)tz;
    mpfr_exp_t top = E[r] + (mpfr_exp_t)mpz_sizeinbase(M[r], 2);
    if (!any || E[r] < lsb) lsb = E[r];
    if (!any || top > msb) msb = top;
    any = 1;
  }
  int64_t bits = any ? (int64_t)(msb - lsb) + 2 : 1;
  int nl = bits <= 126 ? 2 : (int)((bits + 63) / 64) + 1;
  ac_or_ensure_rows(w, n, nl);
  w->nl = nl;
  w->zlsb = (int32_t)lsb;
  AC_ASSERT(!any || (lsb > INT32_MIN / 2 && lsb < INT32_MAX / 2), "the folded scores' lsb fits the fixed point");
  uint64_t *mag = ac_xcalloc((size_t)nl + 1, sizeof *mag);
  for (int64_t r = 0; r < n; r++) {
    uint64_t *z = w->z + (size_t)r * (size_t)nl;
    memset(z, 0, (size_t)nl * sizeof *z);
    if (!mpz_sgn(M[r])) { mpz_clear(M[r]); continue; }
    int neg = mpz_sgn(M[r]) < 0;
    mpz_abs(M[r], M[r]);
    mpz_mul_2exp(M[r], M[r], (mp_bitcnt_t)(E[r] - lsb));
    size_t cnt = 0;
    memset(mag, 0, ((size_t)nl + 1) * sizeof *mag);
    mpz_export(mag, &cnt, -1, sizeof(uint64_t), 0, 0, M[r]);
    AC_ASSERT(cnt <= (size_t)nl, "a folded score fits its limbs");
    unsigned carry = 1;
    for (int k = 0; k < nl; k++) {
      uint64_t x = neg ? ~mag[k] + carry : mag[k];
      if (neg) carry = carry && x == 0;
      z[k] = x;
    }
    mpz_clear(M[r]);
  }
  free(mag);
  free(M);
  free(E);
}

static void var_finish(ac_or_ws *w)
{
  ac_or_var *v = w->var;
  int64_t n = w->n;
  long double zmax = 0, top = -INFINITY;
  ac_u128 zbig = 0;   /* two limbs: the largest |z| in integers, converted once (conversion is monotone) */
  for (int64_t r = 0; r < n; r++) {
    if (!v->fix[r] && w->nl == 2) {
      const uint64_t *zr = ac_or_z(w, r);
      ac_i128 z = (ac_i128)(((ac_u128)zr[1] << 64) | zr[0]);
      ac_u128 a = z < 0 ? -(ac_u128)z : (ac_u128)z;
      if (a > zbig) zbig = a;
    } else if (!v->fix[r]) {
      long double z = fabsl(ac_or_fx_to_ld(ac_or_z(w, r), w->nl, w->zlsb));
      if (z > zmax) zmax = z;
    }
    if (v->fix[r] || w->sc.sign == 0) {   /* no c z part: the sink, tanh(±inf), or c = 0 */
      memset((void *)ac_or_z(w, r), 0, (size_t)w->nl * sizeof(uint64_t));
      if (v->fix[r]) w->Zabs[r] = w->Zb[r] = 0;
    }
  }
  if (zbig) {
    uint64_t l[2] = {(uint64_t)zbig, (uint64_t)(zbig >> 64)};
    zmax = ac_or_fx_to_ld(l, 2, w->zlsb);
  }
  int foldable = ac_or_var_foldable(w->p, &w->sc);   /* as path_choose decided */
  int zbits = zbig >> 64 ? 64 + ac_or_bitlen((uint64_t)(zbig >> 64)) : ac_or_bitlen((uint64_t)zbig);
  int folded = foldable && w->nl == 2 && ac_or_var_fold_fast(w, zbits);   /* z' = z + F a in integers */
  v->g_ok = v->mode == AC_VAR_FOLD && !folded;
  v->plain = foldable;   /* fold_fast, or fold_scores below */
  if (v->dy && !folded)
    for (int64_t r = 0; r < n; r++) ac_or_var_a_mpfr(v, r);
  if (!folded) v->dy = 0;
  for (int64_t r = 0; r < n; r++) {
    if (v->mode == AC_VAR_FOLD && !folded) {   /* g = c z + rk a exactly */
      mpfr_prec_t pz = (mpfr_prec_t)w->nl * 64 + 2;
      mpfr_set_prec(v->t1, pz);
      ac_or_fx_to_mpfr(w, v->t1, ac_or_z(w, r), NULL, w->nl, w->zlsb);
      mpfr_set_prec(v->t2, mpfr_get_prec(v->t1) + mpfr_get_prec(v->c));
      AC_EXACT(mpfr_mul(v->t2, v->t1, v->c, MPFR_RNDN), "c z in the sum of the precisions");
      mpfr_set_prec(v->t3, mpfr_get_prec(v->a[r]) + 64);
      AC_EXACT(mpfr_mul_si(v->t3, v->a[r], v->rk, MPFR_RNDN), "rk a");
      exact_add(v->g[r], v->t2, v->t3);
    }
    key_approx(w, r);
    if (v->approx[r] > top) top = v->approx[r];
    w->Zabs[r] *= v->zf[r];   /* the dot product's error through tanh: G, lse_cZ and max_cZ (§11.4) */
    /* Zb stays unscaled: an input's rounding may move a capped score by more than sech^2 at the
     * exact point says; tanh is 1-Lipschitz (docs/numerics.md §7.18) */
  }
  v->zmax = zmax;
  v->top = top;
  v->tk_key = -1;   /* a new row: no cached top score */
  if (foldable && !folded) fold_scores(w);
}

void ac_or_var_scores(ac_or_ws *w)
{
  ac_or_row_scores(w);
  var_finish(w);
}

void ac_or_var_scores_fast(ac_or_ws *w)
{
  ac_or_fast_scores(w);
  var_finish(w);
}

static int same_score(const ac_or_ws *w, int64_t a, int64_t b)
{
  const ac_or_var *v = w->var;
  if (v->mode == AC_VAR_FOLD) return mpfr_equal_p(v->g[a], v->g[b]);
  return ac_or_fx_cmp(ac_or_z(w, a), ac_or_z(w, b), w->nl) == 0 && mpfr_equal_p(v->a[a], v->a[b]);
}

/* Decreasing score (FOLD: exact), else decreasing approximation, then (z, a): keys of equal
 * score are adjacent; storage order last. */
static int cmp_var(const void *pa, const void *pb, void *ctx)
{
  const ac_or_ws *w = ctx;
  const ac_or_var *v = w->var;
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c;
  if (v->mode == AC_VAR_FOLD) {
    c = mpfr_cmp(v->g[b], v->g[a]);
  } else {
    c = v->approx[a] > v->approx[b] ? -1 : v->approx[a] < v->approx[b];
    if (!c) c = ac_or_fx_cmp(ac_or_z(w, a), ac_or_z(w, b), w->nl);
    if (!c) c = mpfr_cmp(v->a[a], v->a[b]);
  }
  if (c) return c;
  return a < b ? -1 : a > b;
}

/* Sign of s_j - s_k by intervals of growing precision; 0 when still undecided at the cap (the
 * scores then differ by far less than any weight can resolve). */
static int decided_sign(ac_or_ws *w, int64_t j, int64_t k)
{
  mpfr_t lo, hi;
  mpfr_inits2(64, lo, hi, (mpfr_ptr)0);
  int s = 0;
  for (mpfr_prec_t p = 64; p <= w->prec_cap; p = ac_or_next_prec(p, w->tprec)) {
    s = ac_or_var_diff(w, j, k, p, lo, hi);
    if (s != 2) break;
    s = 0;
  }
  mpfr_clears(lo, hi, (mpfr_ptr)0);
  return s;
}

/* Groups of equal score along w->ord (gst, gof, ng); returns ng. */
static int64_t set_groups(ac_or_ws *w)
{
  int64_t n = w->n, g = 0;
  w->gst[0] = 0;
  w->gof[w->ord[0]] = 0;
  for (int64_t r = 1; r < n; r++) {
    if (!same_score(w, w->ord[r], w->ord[r - 1])) w->gst[++g] = r;
    w->gof[w->ord[r]] = g;
  }
  w->ng = g + 1;
  w->gst[w->ng] = n;
  return w->ng;
}

/* The group of the largest score first (LIN, CAP: the approximate order may misplace it among
 * near-equal scores). */
static void top_first(ac_or_ws *w)
{
  ac_or_var *v = w->var;
  int64_t top = 0;
  for (int64_t g = 1; g < w->ng; g++) {
    int64_t j = w->ord[w->gst[g]], k = w->ord[w->gst[top]];
    long double margin = 0x1p-40L * (v->smag[j] + v->smag[k] + fabsl(v->approx[j]) + fabsl(v->approx[k]));
    if (v->approx[k] - v->approx[j] > margin) continue;
    if (decided_sign(w, j, k) > 0) top = g;
  }
  if (top == 0) return;
  int64_t nt = w->gst[top + 1] - w->gst[top];
  int64_t *tmp = ac_xmalloc((size_t)nt * sizeof *tmp);
  memcpy(tmp, w->ord + w->gst[top], (size_t)nt * sizeof *tmp);
  memmove(w->ord + nt, w->ord, (size_t)w->gst[top] * sizeof *w->ord);
  memcpy(w->ord, tmp, (size_t)nt * sizeof *tmp);
  free(tmp);
  int64_t ng = w->ng;   /* the condition is not evaluated without --enable-assert */
  int64_t regrouped = set_groups(w);
  AC_ASSERT(regrouped == ng, "moving the top group keeps the groups");
  (void)ng, (void)regrouped;
}

/* LIN, CAP: cmp_var's order by a bottom-up merge sort on (approx, key) pairs, the exact parts
 * read only for equal approximations (the order is total: the same result as qsort_r). */
typedef struct { long double s; int64_t j; } vkey;

static inline int vkey_before(const ac_or_ws *w, const vkey *x, const vkey *y)
{
  if (x->s != y->s) return x->s > y->s;
  return cmp_var(&x->j, &y->j, (void *)w) < 0;
}

static void sort_approx(ac_or_ws *w)
{
  int64_t n = w->n;
  vkey *a = ac_xmalloc((size_t)n * 2 * sizeof *a), *tmp = a + n;
  for (int64_t j = 0; j < n; j++) { a[j].s = w->var->approx[j]; a[j].j = j; }
  for (int64_t h = 1; h < n; h *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * h) {
      int64_t mid = lo + h < n ? lo + h : n, hi = lo + 2 * h < n ? lo + 2 * h : n, i = lo, k = mid, o = lo;
      while (i < mid && k < hi) tmp[o++] = vkey_before(w, &a[k], &a[i]) ? a[k++] : a[i++];
      while (i < mid) tmp[o++] = a[i++];
      while (k < hi) tmp[o++] = a[k++];
    }
    vkey *t = a; a = tmp; tmp = t;
  }
  for (int64_t j = 0; j < n; j++) w->ord[j] = a[j].j;
  free(a < tmp ? a : tmp);
}

void ac_or_var_groups(ac_or_ws *w)
{
  int64_t n = w->n;
  ac_or_var_need_g(w, -1);
  if (w->var->mode != AC_VAR_FOLD) {
    sort_approx(w);
  } else {
    for (int64_t j = 0; j < n; j++) w->ord[j] = j;
    qsort_r(w->ord, (size_t)n, sizeof *w->ord, cmp_var, w);
  }
  set_groups(w);
  if (w->var->mode != AC_VAR_FOLD) top_first(w);
}

const long double *ac_or_var_smag(const ac_or_ws *w) { return w->var->smag; }
const long double *ac_or_var_zf(const ac_or_ws *w) { return w->var->zf; }

void ac_or_var_row_terms(const ac_or_ws *w, ac_oracle_row *row)
{
  const ac_or_var *v = w->var;
  long double zmax = v->zmax, smax = 0, czmax = 0, czbmax = 0, top = v->top; /* zmax: q·k before any fold */
  long double c = fabsl((long double)w->sc.approx);
  for (int64_t j = 0; j < w->n; j++) {
    /* a key whose weight e^{s_j - m} is below long double's range (< e^-11400) carries none: a
     * -1e9 sentinel's key (the same on every path: from the scores, not the weights) */
    if (!(v->approx[j] - top > -11400)) continue;
    if (v->smag[j] > smax) smax = v->smag[j];
    long double cz = w->sc.sign ? c * w->Zabs[j] : 0;   /* Zabs holds zf_j Z_j */
    if (cz > czmax) czmax = cz;
    long double czb = w->sc.sign ? c * w->Zb[j] : 0;
    if (czb > czbmax) czbmax = czb;
  }
  row->max_abs_z = (double)zmax;
  row->max_abs_s = (double)(smax * (1 + 0x1p-40L));
  row->max_cZ = (double)(czmax * (1 + 0x1p-40L));
  row->max_cZb = (double)(czbmax * (1 + 0x1p-40L));
}
