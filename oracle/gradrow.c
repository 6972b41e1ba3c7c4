/* gradrow.c: one row of the backward oracle (docs/backward.md §3-§4).
 *
 * Exact parts: X_j = dP_ij = dO_i·V_j is a sum of products of stored values, added exactly in
 * fixed point like the scores. With groups g of equal exact
 * score (n_g keys, SX_g = Σ_{j∈g} X_j, per-key weights P_g) and the top group 0 as reference,
 *   n_0 (dP_ij - D_i) = a_j - B,  a_j = n_0 X_j - SX_0,  B = Σ_{g>=1} P_g c_g,  c_g = n_0 SX_g - n_g SX_0,
 * with a_j and c_g exact: the weight near 1 never meets a rounded D, so a row whose other keys
 * weigh e^-1000 keeps dP - D to the relative precision of the pass (no cancellation of 1 - P).
 * Zeros: dP_ij - D_i = Σ_g w_g (n_g X_j - SX_g) / L, and
 * the t_g = c (z_g - z_top) are distinct algebraic numbers (c != 0), so by Lindemann–Weierstrass
 * it vanishes exactly when every coefficient does: every c_g = 0 and a_j = 0 (every group mean of X
 * equals X_j). With c = 0 there is one group. dS_ij = 0 is then set as the point [0, 0].
 * dQ_i[t] = c Σ_j dS_ij K_jt with Σ_j dS_ij = 0: it is exactly 0 when K_t is constant over the
 * keys with dS_ij != 0 (under a softcap, where dS_ij carries f_j: when that constant is 0, or the
 * keys share one |z|, so one f_j), and in a row of one group (all scores equal, or c = 0) it is the rational
 * c Σ_j a_j K_jt / n², whose numerator is tested exactly.
 * The pass: P_g in [w_g^lo / L_hi, w_g^hi / L_lo] from ziv.c's weights at precision p; B, dS, dQ
 * and the column terms by outward-rounded interval products and directed mpfr_sum/mpfr_add. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradint.h"

static void ensure_keys(ac_gr_ws *g, int64_t n)
{
  if (n <= g->cap) return;
  mpfr_t **arr[] = {&g->X, &g->SX, &g->Plo, &g->Phi, &g->Slo, &g->Shi};
  for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++) {
    *arr[a] = ac_xrealloc(*arr[a], (size_t)n * sizeof **arr[a]);
    for (int64_t j = g->cap; j < n; j++) mpfr_init2((*arr[a])[j], 64);
  }
  g->zs = ac_xrealloc(g->zs, (size_t)n);
  g->cap = n;
}

void ac_gr_ensure_prod(ac_gr_ws *g, int64_t n)
{
  if (n <= g->cap_prod) return;
  g->prod = ac_xrealloc(g->prod, (size_t)n * sizeof *g->prod);
  g->pp = ac_xrealloc(g->pp, (size_t)n * sizeof *g->pp);
  for (int64_t k = g->cap_prod; k < n; k++) mpfr_init2(g->prod[k], 64);
  for (int64_t k = 0; k < n; k++) g->pp[k] = g->prod[k];
  g->cap_prod = n;
}

void ac_gr_ws_init(ac_gr_ws *g, const ac_case *cs, const void *dout, const ac_oracle_opts *fo, const ac_or_scale *sc,
                   long cap)
{
  memset(g, 0, sizeof *g);
  ac_or_ws_init(&g->w, cs, fo, sc, (1u << AC_F64) | (1u << cs->p.dtype), 53, cap);
  g->dout = dout;
  g->off = ac_gr_has_off(&cs->p);
  g->capped = ac_gr_has_cap(&cs->p);
  g->capv = cs->p.f.softcap;
  mpfr_init2(g->cz, 64);
  g->od = ac_xmalloc((size_t)cs->p.dv * sizeof *g->od);
  g->odbad = ac_xmalloc((size_t)cs->p.dv);
  g->om = ac_xmalloc((size_t)cs->p.dv * sizeof *g->om);
  g->oe = ac_xmalloc((size_t)cs->p.dv * sizeof *g->oe);
  g->dqz = ac_xmalloc((size_t)cs->p.dk);
  g->kbuf = ac_xmalloc((size_t)cs->p.dk * sizeof *g->kbuf);
  g->vbuf = ac_xmalloc((size_t)cs->p.dv * sizeof *g->vbuf);
  mpfr_inits2(64, g->Dlo, g->Dhi, g->clo, g->chi, g->t0, g->t1, (mpfr_ptr)0);
}

void ac_gr_ws_free(ac_gr_ws *g)
{
  ac_or_ws_free(&g->w);
  mpfr_t *arr[] = {g->X, g->SX, g->Plo, g->Phi, g->Slo, g->Shi};
  for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++) {
    for (int64_t j = 0; j < g->cap; j++) mpfr_clear(arr[a][j]);
    free(arr[a]);
  }
  for (int64_t k = 0; k < g->cap_prod; k++) mpfr_clear(g->prod[k]);
  free(g->prod); free(g->pp); free(g->zs);
  free(g->od); free(g->odbad); free(g->om); free(g->oe); free(g->kidx);
  for (int64_t j = 0; j < g->cap_off; j++) mpfr_clear(g->A[j]);
  for (int64_t j = 0; j < g->cap_e; j++) mpfr_clear(g->E[j]);
  free(g->A); free(g->E); free(g->aL); free(g->sapx); free(g->dqz); free(g->kbuf); free(g->vbuf);
  mpfr_clears(g->Dlo, g->Dhi, g->clo, g->chi, g->t0, g->t1, g->cz, (mpfr_ptr)0);
}

/* out = Σ prod[0..n) exactly: the precision doubles until mpfr_sum reports no rounding. */
static void exact_sum(ac_gr_ws *g, mpfr_t out, int64_t n)
{
  mpfr_prec_t p = 128;
  for (;;) {
    mpfr_set_prec(out, p);
    if (mpfr_sum(out, g->pp, (unsigned long)n, MPFR_RNDN) == 0) return;
    p *= 2;
  }
}

/* x * k exactly (the precision of x plus 53 bits) into dst. */
static void exact_mul_d(mpfr_t dst, mpfr_srcptr x, double k)
{
  mpfr_set_prec(dst, mpfr_get_prec(x) + 53);
  AC_EXACT(mpfr_mul_d(dst, x, k, MPFR_RNDN), "a product in the sum of both precisions");
}

static void exact_mul_si(mpfr_t dst, mpfr_srcptr x, long k)
{
  mpfr_set_prec(dst, mpfr_get_prec(x) + 64);
  AC_EXACT(mpfr_mul_si(dst, x, k, MPFR_RNDN), "a product by an integer in 64 more bits");
}

/* dst = x n - y m exactly (integers n, m). */
static void exact_comb(ac_gr_ws *g, mpfr_t dst, mpfr_srcptr x, long n, mpfr_srcptr y, long m)
{
  exact_mul_si(g->t0, x, n);
  exact_mul_si(g->t1, y, m);
  mpfr_set_prec(dst, ac_or_exact_prec(g->t0, g->t1));
  AC_EXACT(mpfr_sub(dst, g->t0, g->t1, MPFR_RNDN), "a difference at the precision that holds it");
}

/* X_j = dO·V_j exactly for the n visible keys: each product M 2^e of two stored values added in
 * fixed point at the row's least significant bit, in 64-bit chunks (as the scores, scores.c). */
static void exact_dp(ac_gr_ws *g)
{
  ac_or_ws *w = &g->w;
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dv = w->p->dv;
  int32_t lo = INT32_MAX, top = INT32_MIN, vlo = INT32_MAX, vtop = INT32_MIN;
  for (int64_t t = 0; t < dv; t++) {
    ac_or_split(g->od[t], &g->om[t], &g->oe[t]);
    if (g->om[t]) {
      lo = g->oe[t] < lo ? g->oe[t] : lo;
      int32_t b = g->oe[t] + ac_or_bitlen((uint64_t)llabs(g->om[t]));
      top = b > top ? b : top;
    }
    if (hd->v_any[t]) {
      vlo = hd->v_lsb[t] < vlo ? hd->v_lsb[t] : vlo;
      vtop = hd->v_msb[t] > vtop ? hd->v_msb[t] : vtop;
    }
  }
  if (lo == INT32_MAX || vlo == INT32_MAX) {
    for (int64_t j = 0; j < n; j++) mpfr_set_zero(g->X[j], 1);
    return;
  }
  int32_t lsb = lo + vlo;
  int nc = ac_or_fx_chunks((int64_t)top + vtop - lsb + ac_or_bitlen((uint64_t)dv) + 1);
  if (nc > w->cap_acc) {
    w->acc = ac_xrealloc(w->acc, (size_t)nc * sizeof *w->acc);
    w->cap_acc = nc;
  }
  uint64_t limbs[nc];
  for (int64_t j = 0; j < n; j++) {
    memset(w->acc, 0, (size_t)nc * sizeof *w->acc);
    for (int64_t t = 0; t < dv; t++) {
      int32_t e;
      int64_t M = g->om[t] ? ac_or_v(hd, (size_t)(j * dv + t), t, &e) : 0;
      if (!M) continue;
      ac_i128 P = (ac_i128)g->om[t] * M;
      ac_or_fx_add(w->acc, nc, (ac_u128)(P < 0 ? -P : P), P < 0, (int64_t)g->oe[t] + e - lsb);
    }
    ac_or_fx_norm(w->acc, nc, limbs);
    ac_or_fx_to_mpfr(w, g->X[j], limbs, NULL, nc, lsb);
  }
}

/* Row of one group: Σ_j a_j K_jt exactly (a_j = n X_j - SX); 1 when it is 0. */
static int single_group_zero(ac_gr_ws *g, int64_t t)
{
  const ac_or_head *hd = g->w.head;
  int64_t n = g->w.n, dk = g->w.p->dk;
  ac_gr_ensure_prod(g, n);
  for (int64_t j = 0; j < n; j++) exact_mul_d(g->prod[j], g->X[j], ac_or_kval(hd, (size_t)(j * dk + t)));
  exact_sum(g, g->t0, n);
  return mpfr_zero_p(g->t0) != 0;
}

/* The exact coefficients relative to the top group (n_0 keys, SX_0): X_j becomes
 * a_j = n_0 X_j - SX_0 and SX_g (g >= 1) becomes c_g = n_0 SX_g - n_g SX_0, so that
 *   n_0 (dP_ij - D_i) = a_j - Σ_{g>=1} P_g c_g   (Σ_g n_g P_g = 1, and c_0 = 0),
 * where the top group's weight, the one near 1, meets only exact numbers. Then zs and dqz by the
 * tests of the header: dS_ij = 0 iff every c_g = 0 and a_j = 0. */
static void zero_tests(ac_gr_ws *g)
{
  ac_or_ws *w = &g->w;
  int64_t n = w->n, ng = w->ng, dk = w->p->dk;
  ac_gr_ensure_prod(g, n);
  for (int64_t q = 0; q < ng; q++) {
    int64_t r0 = w->gst[q], r1 = w->gst[q + 1];
    for (int64_t r = r0; r < r1; r++) {
      mpfr_set_prec(g->prod[r - r0], mpfr_get_prec(g->X[w->ord[r]]));
      mpfr_set(g->prod[r - r0], g->X[w->ord[r]], MPFR_RNDN);
    }
    exact_sum(g, g->SX[q], r1 - r0);
  }
  long n0 = (long)(w->gst[1] - w->gst[0]);
  int same = 1;   /* every group mean of X equal */
  for (int64_t q = 1; q < ng; q++) {
    exact_comb(g, g->SX[q], g->SX[q], n0, g->SX[0], (long)(w->gst[q + 1] - w->gst[q]));
    same &= mpfr_zero_p(g->SX[q]) != 0;
  }
  for (int64_t j = 0; j < n; j++) {
    exact_comb(g, g->X[j], g->X[j], n0, g->SX[0], 1);
    g->zs[j] = same && mpfr_zero_p(g->X[j]);
  }
  const ac_or_head *hd = w->head;
  for (int64_t t = 0; t < dk; t++) {
    int cst = 1, seen = 0;
    double k0 = 0;
    int64_t j0 = 0;
    for (int64_t j = 0; j < n && cst; j++) {
      if (g->zs[j]) continue;
      double k = ac_or_kval(hd, (size_t)(j * dk + t));
      if (!seen) { k0 = k; j0 = j; seen = 1; }
      else cst = k == k0;
      /* under a softcap Σ_j f_j dS_ij = 0 needs one f: keys of one |z| (sech² is even) */
      if (seen && cst && g->capped && k != 0) cst = ac_gr_cap_same_f(g, j, j0);
    }
    g->dqz[t] = cst || (ng == 1 && single_group_zero(g, t));
  }
}

/* The visible keys of row (b, h, i) into kidx; a window or a boolean mask gathers them into the
 * row's own head (w->sub, infscores.c's ac_or_head_pick), which w->head then points at. */
static int64_t row_keys(ac_gr_ws *g, int64_t b, int64_t h, int64_t i)
{
  ac_or_ws *w = &g->w;
  const ac_problem *p = w->p;
  if (g->cap_kidx < p->tk + 1) {
    g->kidx = ac_xrealloc(g->kidx, (size_t)(p->tk + 1) * sizeof *g->kidx);
    g->cap_kidx = p->tk + 1;
  }
  g->sink = -1;
  int64_t n = 0;
  if (!p->f.used) {
    n = ac_visible_count(p, i);
    for (int64_t j = 0; j < n; j++) g->kidx[j] = j;
    if (n > 0) ac_or_head_load(w, b, ac_kv_head(p, h));
    return n > 0 ? n : 0;
  }
  const ac_case *cs = w->cs;
  for (int64_t j = 0; j < p->tk; j++)
    if (ac_visible(p, i, j) && ac_in_window(p, i, j) &&
        (!(p->f.used & AC_FEAT_BOOL_MASK) || cs->bool_mask[ac_bmaskidx(p, b, h, i, j)]))
      g->kidx[n++] = j;
  g->offbad = 0;
  if (n && g->off) {
    int64_t kept = ac_gr_off_keys(g, b, h, i, n);
    if (kept < 0) g->offbad = 1;
    else n = kept;
  }
  if (!n) return 0;
  int sink = !g->offbad && ac_gr_sink_key(g, h, n);
  ac_or_head_load(w, b, ac_kv_head(p, h));
  ac_or_head_pick(&w->sub, w->head, p, g->kidx, n, sink, 0);
  g->dmask = w->drop ? ac_or_drop_mask_row(cs, b, h, i) : NULL;
  if (g->dmask) ac_or_drop_vzero(&w->sub, p, g->dmask, g->kidx, n);   /* dP of row i: its values V'_j = m_ij V_j */
  w->head = &w->sub;
  return n + sink;
}

int64_t ac_gr_row_load(ac_gr_ws *g, int64_t b, int64_t h, int64_t i, int exact)
{
  ac_or_ws *w = &g->w;
  const ac_problem *p = w->p;
  int64_t n = row_keys(g, b, h, i);
  if (n <= 0) return 0;
  const ac_or_head *hd = w->head;
  int bad = (ac_or_row_q(w, b, h, i) != 0) | g->offbad;
  for (int64_t j = 0; j < n && !bad; j++) bad = hd->kbad[j] != 0;
  g->cls = bad ? AC_GR_ROW_PBAD : AC_GR_ROW_OK;
  if (bad) return n;
  int dbad = 0;
  for (int64_t t = 0; t < p->dv; t++) {
    g->od[t] = ac_load(p->dtype, g->dout, ac_oidx(p, b, h, i, t));
    g->odbad[t] = (uint8_t)!isfinite(g->od[t]);
    dbad |= g->odbad[t];
  }
  for (int64_t x = 0; x < n * p->dv && !dbad; x++) dbad = hd->vcls[x] != AC_VCLS_FINITE;
  if (dbad) g->cls = AC_GR_ROW_DBAD;
  w->n = n;
  ac_or_row_scores(w);
  if (g->off) ac_gr_off_groups(g);
  else ac_or_groups(w);
  ensure_keys(g, n);
  if (dbad || !exact) return n;
  exact_dp(g);
  zero_tests(g);
  return n;
}

/* [lo, hi] = [xlo, xhi] k, outward (lo, hi distinct from xlo, xhi). */
static void iv_mul_d(mpfr_t lo, mpfr_t hi, mpfr_srcptr xlo, mpfr_srcptr xhi, double k)
{
  if (k >= 0) {
    mpfr_mul_d(lo, xlo, k, MPFR_RNDD);
    mpfr_mul_d(hi, xhi, k, MPFR_RNDU);
  } else {
    mpfr_mul_d(lo, xhi, k, MPFR_RNDD);
    mpfr_mul_d(hi, xlo, k, MPFR_RNDU);
  }
}

void ac_gr_mul_scale(ac_gr_ws *g, mpfr_t lo, mpfr_t hi)
{
  mpfr_prec_t p = mpfr_get_prec(lo) > mpfr_get_prec(hi) ? mpfr_get_prec(lo) : mpfr_get_prec(hi);
  mpfr_set_prec(g->clo, p + 16);
  mpfr_set_prec(g->chi, p + 16);
  ac_or_scale_interval(&g->w.sc, g->clo, g->chi);
  mpfr_set_prec(g->t0, p);
  mpfr_set_prec(g->t1, p);
  if (g->w.sc.sign >= 0) {
    mpfr_mul(g->t0, lo, mpfr_sgn(lo) >= 0 ? g->clo : g->chi, MPFR_RNDD);
    mpfr_mul(g->t1, hi, mpfr_sgn(hi) >= 0 ? g->chi : g->clo, MPFR_RNDU);
  } else {
    mpfr_mul(g->t0, hi, mpfr_sgn(hi) >= 0 ? g->clo : g->chi, MPFR_RNDD);
    mpfr_mul(g->t1, lo, mpfr_sgn(lo) >= 0 ? g->chi : g->clo, MPFR_RNDU);
  }
  mpfr_swap(lo, g->t0);
  mpfr_swap(hi, g->t1);
}

/* B = Σ_{g>=1} P_g c_g in [Dlo, Dhi]: directed sums with the end of P_g chosen by the sign of c_g. */
static void b_interval(ac_gr_ws *g, mpfr_prec_t p)
{
  ac_or_ws *w = &g->w;
  int64_t ng = w->ng;
  ac_gr_ensure_prod(g, ng);
  mpfr_set_prec(g->Dlo, p);
  mpfr_set_prec(g->Dhi, p);
  for (int up = 0; up < 2; up++) {
    mpfr_set_prec(g->prod[0], p);
    mpfr_set_zero(g->prod[0], 1);
    for (int64_t q = 1; q < ng; q++) {
      int pos = mpfr_sgn(g->SX[q]) >= 0;
      mpfr_set_prec(g->prod[q], p);
      mpfr_mul(g->prod[q], g->SX[q], pos == !up ? g->Plo[q] : g->Phi[q], up ? MPFR_RNDU : MPFR_RNDD);
    }
    mpfr_sum(up ? g->Dhi : g->Dlo, g->pp, (unsigned long)ng, up ? MPFR_RNDU : MPFR_RNDD);
  }
}

/* dS_j in [Slo_j, Shi_j] = P_j (a_j - B) / n_0, the point 0 where the exact test says so. */
static void ds_interval(ac_gr_ws *g, mpfr_prec_t p)
{
  ac_or_ws *w = &g->w;
  long n0 = (long)(w->gst[1] - w->gst[0]);
  mpfr_set_prec(g->t0, p);
  mpfr_set_prec(g->t1, p);
  for (int64_t j = 0; j < w->n; j++) {
    int64_t q = w->gof[j];
    mpfr_set_prec(g->Slo[j], p);
    mpfr_set_prec(g->Shi[j], p);
    if (g->zs[j]) {
      mpfr_set_zero(g->Slo[j], 1);
      mpfr_set_zero(g->Shi[j], 1);
      continue;
    }
    mpfr_sub(g->t0, g->X[j], g->Dhi, MPFR_RNDD);
    mpfr_sub(g->t1, g->X[j], g->Dlo, MPFR_RNDU);
    mpfr_div_si(g->t0, g->t0, n0, MPFR_RNDD);
    mpfr_div_si(g->t1, g->t1, n0, MPFR_RNDU);
    mpfr_mul(g->Slo[j], g->t0, mpfr_sgn(g->t0) >= 0 ? g->Plo[q] : g->Phi[q], MPFR_RNDD);
    mpfr_mul(g->Shi[j], g->t1, mpfr_sgn(g->t1) >= 0 ? g->Phi[q] : g->Plo[q], MPFR_RNDU);
  }
}

/* dQ_i[t] in [lo, hi]: directed sums of dS_j K_jt, then the scale. */
static void dq_interval(ac_gr_ws *g, mpfr_prec_t p, int64_t t, mpfr_t lo, mpfr_t hi)
{
  ac_or_ws *w = &g->w;
  int64_t n = w->n, dk = w->p->dk;
  mpfr_set_prec(lo, p);
  mpfr_set_prec(hi, p);
  if (g->dqz[t]) {
    mpfr_set_zero(lo, 1);
    mpfr_set_zero(hi, 1);
    return;
  }
  for (int up = 0; up < 2; up++) {
    for (int64_t j = 0; j < n; j++) {
      double k = ac_or_kval(w->head, (size_t)(j * dk + t));
      mpfr_set_prec(g->prod[j], p);
      mpfr_mul_d(g->prod[j], (k >= 0) == !up ? g->Slo[j] : g->Shi[j], k, up ? MPFR_RNDU : MPFR_RNDD);
    }
    mpfr_sum(up ? hi : lo, g->pp, (unsigned long)n, up ? MPFR_RNDU : MPFR_RNDD);
  }
  ac_gr_mul_scale(g, lo, hi);
}

void ac_gr_row_pass(ac_gr_ws *g, mpfr_prec_t p, mpfr_t *dqlo, mpfr_t *dqhi, ac_gr_cols *cols)
{
  ac_or_ws *w = &g->w;
  int64_t n = w->n, dk = w->p->dk, dv = w->p->dv;
  AC_ASSERT(n >= 1 && g->cls != AC_GR_ROW_PBAD, "a pass needs a row whose P is defined");
  if (g->off) {
    ac_gr_off_weights(g, p);
  } else {
    ac_or_weights(w, p);
    for (int64_t q = 0; q < w->ng; q++) {
      mpfr_set_prec(g->Plo[q], p);
      mpfr_set_prec(g->Phi[q], p);
      mpfr_div(g->Plo[q], w->wlo[q], w->Lhi, MPFR_RNDD);
      mpfr_div(g->Phi[q], w->whi[q], w->Llo, MPFR_RNDU);
    }
  }
  mpfr_set_prec(g->t0, p);
  mpfr_set_prec(g->t1, p);
  for (int64_t j = 0; j < n; j++) {   /* dV_j += P_ij dO_i (dropout: the kept pairs) */
    int64_t k = AC_GR_COL(g, cols, j), q = w->gof[j];
    if (k < 0 || !cols->pend[k] || (g->dmask && !g->dmask[g->kidx[j]])) continue;
    for (int64_t t = 0; t < dv; t++) {
      if (g->odbad[t]) continue;
      iv_mul_d(g->t0, g->t1, g->Plo[q], g->Phi[q], g->od[t]);
      mpfr_add(cols->vlo[k * dv + t], cols->vlo[k * dv + t], g->t0, MPFR_RNDD);
      mpfr_add(cols->vhi[k * dv + t], cols->vhi[k * dv + t], g->t1, MPFR_RNDU);
    }
  }
  if (g->cls != AC_GR_ROW_OK) return;
  b_interval(g, p);
  ds_interval(g, p);
  if (g->capped) ac_gr_cap_deriv(g, p);
  if (dqlo)
    for (int64_t t = 0; t < dk; t++) dq_interval(g, p, t, dqlo[t], dqhi[t]);
  mpfr_set_prec(g->t0, p);
  mpfr_set_prec(g->t1, p);
  if (g->sink >= 0 && cols->sglo) {   /* dσ_h += dS_i,sink */
    mpfr_add(*cols->sglo, *cols->sglo, g->Slo[g->sink], MPFR_RNDD);
    mpfr_add(*cols->sghi, *cols->sghi, g->Shi[g->sink], MPFR_RNDU);
  }
  for (int64_t j = 0; j < n; j++) {   /* dK_j += dS_ij q_i (the scale at the end) */
    int64_t k = AC_GR_COL(g, cols, j);
    if (k < 0 || !cols->pend[k] || g->zs[j]) continue;
    for (int64_t t = 0; t < dk; t++) {
      iv_mul_d(g->t0, g->t1, g->Slo[j], g->Shi[j], w->qd[t]);
      mpfr_add(cols->klo[k * dk + t], cols->klo[k * dk + t], g->t0, MPFR_RNDD);
      mpfr_add(cols->khi[k * dk + t], cols->khi[k * dk + t], g->t1, MPFR_RNDU);
    }
  }
}
