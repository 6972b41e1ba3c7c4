/* budget_grad.c: W and E per element of dQ, dK, dV (docs/backward.md "Budgets").
 *
 * Model. A backward kernel of a precision class computes, per query row i (exact values
 * unprimed, the kernel's primed, c the scale):
 *   s'_j  = the forward's score (errors as the forward: δ_j <= γ(d_k, u_qk)|c|Z_j + u_s|s_j| + η_s,
 *           Z_j = Σ_t|q_t k_jt|, η_s = (|c| d_k + 2) η_qk);
 *   P'_j  either e^{s'_j - L'} with L' the exact LSE rounded to binary32 (FlashAttention-2:
 *           |L' - L| <= u_32 |L|, the subtraction u_s|s_j - L|, the exp u_e), or materialized as
 *           e^{s'_j - m'} / Σ_k e^{s'_k - m'} (the sum's relative error <= Δ + γ(T + 1, u_a), the
 *           division u_s; Δ = max(ln(1 + Σ_k P_k expm1 δ_k), -ln(1 - Σ_k P_k (1 - e^{-δ_k}))), at most
 *           max_k δ_k: the sum moves by Σ_k e^{s_k}(e^{±δ_k} - 1) at most). With ε_j the larger of the two relative exponent errors
 *           plus δ_j + u_e, |P'_j - P_j| <= P_j expm1(ε_j) =: π_j (exact: |e^x - 1| <= expm1|x|),
 *           evaluated as e^{s_j - L + ε_j} - P_j for large ε_j (a weight below the binary64 range).
 *   dP'_j = dO_i·V_j: |dP'_j - dP_j| <= γ(d_v, u_a) A_j =: α_j, A_j = Σ_t|dO_t V_jt|.
 *   D'    either dO_i·O' with O' the exact O rounded to o's dtype (|O'_t - O_t| <= u_o|O_t|):
 *           |D' - D| <= (u_o + γ(d_v, u_a)(1 + u_o)) B, B = Σ_t|dO_t O_t|; or Σ_j P'_j dP'_j:
 *           <= Σ_j (π_j |dP_j| + (P_j + π_j) α_j) + γ(T, u_a) Σ_j (P_j + π_j)(|dP_j| + α_j).
 *           β is the larger of the two (the class does not say which a kernel uses).
 *   dS'_j = P'_j (dP'_j - D') with a rounding for the subtraction and the product (u_a each)
 *           and, for the classes that store P before P·V (u_p > 0: fp16/bf16), one more for dS
 *           and P rounded to the input dtype before the products with dO, Q and K:
 *           |dS'_j - dS_j| <= (1 + ρ)(π_j (|dP_j - D| + α_j + β) + P_j (α_j + β)) + ρ|dS_j| =: σ_j,
 *           ρ = (1 + u_a)²(1 + u_p) - 1; the P entering dV: |P~_j - P_j| <= π_j(1 + u_p) + u_p P_j =: τ_j.
 *   dQ_i  = c Σ_j dS'_j K_j over the visible keys (T terms, the scale in binary32: T + 2 roundings
 *           of u_a in any order): |dQ'_it - dQ_it| <= |c| Σ_j σ_j|K_jt| + γ(T + 2, u_a)|c| Σ_j (|dS_j| + σ_j)|K_jt|;
 *   dK_j  = c Σ_i dS'_ij Q_i over every row i of every query head of the group that sees key j
 *           (N_j terms): the same with Q_it and γ(N_j + 2, u_a), for ANY order of the sum (query
 *           tiles, heads of the group, split accumulators: every order of n terms is within
 *           γ(n - 1) Σ|terms|);
 *   dV_j  = Σ_i P~_ij dO_i: Σ_i τ_ij |dO_it| + γ(N_j, u_a) Σ_i (P_ij + τ_ij)|dO_it|.
 * Underflow (the forward's floors, precision.h): P below mu may be lost (π_j gains mu), and every
 * product or sum in the accumulation format may lose up to η = eta_a (2 eta_a truncating) on top
 * of its relative rounding: α_j gains (d_v + 1)η, β (d_v + T + 2)η, σ_j 2η + η_p (η_p: half the smallest
 * subnormal spacing of the input dtype when dS is stored in it, u_p > 0; else η), and each element of
 * dQ, dK, dV (n + 2)η max(1, |c|) for its n terms (dV: nη).
 * Softcap (s_j = cap t_j + a_j, t_j = tanh x_j, x_j = c d_j / cap, f_j = 1 - t_j² = sech² x_j):
 *   δ_j   the forward's variant score error (docs/numerics.md §11.4, the forward budget's
 *           magnitudes): f_j (γ(d_k, u_qk)|c|Z_j + η_s) + (u_S + u_s) m_j,
 *           m_j = f_j|c d_j| + |cap t_j| + |m_h dist| + |bias_j| + |s_j|;
 *   t'_j  a kernel takes 1 - t² from its tanh of its own raw score (FlashAttention-2 and -3's dtanh
 *           from the stored tanh, or from s'/cap; PyTorch autograd from tanh): the raw score errs by
 *           ξ_j = γ(d_k, u_qk)|c|Z_j + (u_S + u_s)|c d_j| + η_s, x by Δx_j = ξ_j / cap + u_s|x_j|, and
 *           |t'_j - t_j| <= min(max(tanh(|x_j| + Δx_j) - |t_j|, |t_j| - tanh(|x_j| - Δx_j)) + 2^-51,
 *           f_j Δx_j + 0.385 Δx_j²) + 3(u_S + u_s)|t_j| =: Δt_j (tanh odd and increasing; or the Taylor
 *           remainder ½ max|tanh''| Δx², tanh'' <= 4/(3√3); then tanh, the product by cap and the
 *           division back each round once);
 *   f'_j  = fl(1 - fl(t'²)): |t'² - t²| <= 2|t|Δt + Δt², so with u = u_a
 *           |f'_j - f_j| <= (1 + u)((1 + u)(2|t_j|Δt_j + Δt_j²) + u t_j²) + u f_j =: φ_j
 *           (the cancellation of 1 - t² as |t| -> 1 is the 2|t|Δt term);
 *   dS'_j = fl(dS~_j f'_j), dS~ the uncapped dS of error σ_j: |dS'_j - f_j dS_j| <=
 *           (σ_j (f_j + φ_j) + |dS_j| φ_j)(1 + u_a) + u_a f_j |dS_j| =: σ'_j, which with f_j |dS_j| takes
 *           the place of σ_j and |dS_j| in dQ and dK (dV keeps τ: P is the capped scores' P).
 * Dropout (docs/backward.md §8): the row's values as the gradient sees them are v'_j = m_ij V_j r,
 * r = 1/(1 - p): dP_j = dO·v'_j, A_j = Σ|dO_t v'_jt|, O = Σ P v', the P of dV is m_ij P_j r; a kernel's
 * own r' (FlashAttention-2: D scaled by fl(1 - p), dQ and dK by fl(scale rp), dV by rp; or dP and P
 * times r') errs by δ r (budget_dropout.c), so α_j gains δ|dP_j|, β gains δ|D| and τ_j δ(P_j + π_j) r.
 * Truncating accumulation (acc_trunc) doubles u_a in the γ's. E uses the typical γ_e
 * (4√n u, capped by γ_w) in place of γ_w everywhere; every E term is at most its W term.
 * The terms are recomputed in binary64 from the stored inputs (P, dP, D, A, B, Z relative
 * errors ~1e-15, far inside AC_BUDGET_MARGIN, which the judge applies with the output's ½ ulp
 * and the oracle's own error bound), over tiles of query rows with their sums over keys and
 * rows as binary64 matrix products (budget_grad_tile.c); this file holds the per-row formulas. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "budget.h"
#include "budget_grad_int.h"

#define U32 0x1p-24

double ac_gbud_gam(double n, int typ, double u, int trunc)
{
  return typ ? ac_gamma_e(n, u, trunc) : ac_gamma_w(n, u, trunc);
}

/* The largest |P' - P| for P = e^x and |ln P' - x| <= eps: P expm1(eps), computed as e^{x + eps} - P
 * when eps is large, so that a weight far below the binary64 range (a -FLT_MAX bias) gives its
 * true, tiny bound instead of 0 * inf. */
/* expm1(x) for |x| <= 1/16 by its series to x^10 in Horner form (the rest below 2^-61 |x|, the
 * evaluation within a few units of the last place: as accurate as libm's at a fraction of its cost,
 * and every key asks for it three times), libm's beyond. */
static double em1(double x)
{
  static const double inv[11] = {0, 1, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9, 1.0 / 10};
  if (!(fabs(x) <= 0.0625)) return expm1(x);
  double y = 1;
  for (int k = 10; k >= 2; k--) y = 1 + x * inv[k] * y;
  return x * y;
}

static double p_err(double P, double x, double eps)
{
  if (eps <= 1) return P * em1(eps);
  double up = exp(x + eps) - P;
  return up > 0 ? up : 0;
}

/* The forward's score error bound δ_j of key j (gqk = γ(d_k, u_qk)). */
static double key_delta(const gb_ws *w, int64_t j, double gqk, double eta_s)
{
  const ac_precision *cl = w->cl;
  const ac_problem *p = &w->c->p;
  if (!(p->f.used & AC_FEAT_SOFTCAP)) return gqk * w->cs * w->Z[j] + cl->u_s * fabs(w->s[j]) + eta_s;
  const double cap = p->f.softcap;
  const double m = (w->f[j] > 0 ? w->f[j] * w->rw[j] : 0) + cap * fabs(w->th[j]) + w->mg[j] + fabs(w->s[j]);
  return w->f[j] * (gqk * w->cs * w->Z[j] + eta_s) + (cl->u_S + cl->u_s) * m;
}

/* Softcap: σ_j becomes σ'_j of the header (the error of dS through the cap's derivative). */
static double cap_sigma(const gb_ws *w, int64_t j, double sg, double dS, double gqk, double eta_s)
{
  const ac_precision *cl = w->cl;
  const double cap = w->c->p.f.softcap, t = fabs(w->th[j]), f = w->f[j], us = cl->u_S + cl->u_s, ua = cl->u_a;
  const double x = w->rw[j] / cap, xi = gqk * w->cs * w->Z[j] + us * w->rw[j] + eta_s;
  const double dx = xi / cap + cl->u_s * x;
  /* tanh increases: |t' - t| <= the larger move of tanh over [x - dx, x + dx] (the Taylor bound
   * f dx + 0.385 dx² where that is smaller), binary64's 2^-51 on the differences */
  const double mv = fmax(tanh(x + dx) - t, t - tanh(x - dx)) + 0x1p-51;
  const double dt = fmin(mv, f * dx + 0.385 * dx * dx) + 3 * us * t;
  const double phi = (1 + ua) * ((1 + ua) * (2 * t * dt + dt * dt) + ua * t * t) + ua * f;
  return (sg * (f + phi) + fabs(dS) * phi) * (1 + ua) + ua * f * fabs(dS);
}

/* |dS_j| w.r.t. the raw score: f_j |P_j (dP_j - D)| under a softcap. */
double ac_gbud_ds_abs(const gb_ws *w, int64_t j, double D)
{
  double dS = fabs(w->P[j] * (w->dP[j] - D));
  return (w->c->p.f.used & AC_FEAT_SOFTCAP) ? dS * w->f[j] : dS;
}

/* The sink's share of dσ_h = -Σ_i P_i,sink D_i for this row (docs/backward.md §6 "dσ"): P_sink =
 * e^{σ_h - L} recomputed with the keys' ε but no score error (σ_h is stored), so
 * |P'D' - PD| <= π|D| + (P + π)β, the product and the sum over the head's rows in γ. */
static void sink_term(gb_ws *w, int typ, double L, double D, double beta, double lam_f, double lam_n)
{
  const ac_case *c = w->c;
  w->sk_t[typ] = w->sk_m[typ] = 0;
  if (!(c->p.f.used & AC_FEAT_SINKS) || !(L > -INFINITY)) return;
  const double sg = c->sinks[w->h] + w->shift, x = sg - L, cl_us = w->cl->u_s;
  if (!(sg > -INFINITY) || !isfinite(x)) return;
  const double ps = exp(x), lf = lam_f + cl_us * fabs(x);
  double ps_err = p_err(ps, x, w->cl->u_e + (lf > lam_n ? lf : lam_n));
  if (ps + ps_err < w->cl->mu) ps_err += w->cl->mu;   /* below mu, as a key's weight, P_sink may be lost */
  w->sk_t[typ] = ps_err * fabs(D) + (ps + ps_err) * beta;
  w->sk_m[typ] = (ps + ps_err) * (fabs(D) + beta);
}

/* π, σ, τ of every visible key of the row for W (typ 0) or E (typ 1). */
void ac_gbud_row_errors(gb_ws *w, int typ, int64_t T, double L, double D, double B)
{
  const ac_precision *cl = w->cl;
  const ac_problem *p = &w->c->p;
  const int tr = cl->acc_trunc;
  const double ua = cl->u_a, up = cl->u_p;
  const double gqk = ac_gbud_gam((double)p->dk, typ, cl->u_qk, cl->qk_trunc);
  const double eta_s = (w->cs * (double)p->dk + 2) * cl->eta_qk, gdv = ac_gbud_gam((double)p->dv, typ, ua, tr);
  /* Δ: the relative change of Σ_k e^{s_k} when each score moves by at most δ_k, from above
   * Σ_k P_k expm1(δ_k), from below Σ_k P_k (1 - e^{-δ_k}) (at most max_k δ_k, and a key whose
   * weight is far below the others' adds nothing however large its δ_k) */
  double up_sum = 0, dn_sum = 0;
  for (int64_t j = 0; j < w->n; j++)
    if (w->s[j] > -INFINITY) {
      double dj = key_delta(w, j, gqk, eta_s);
      up_sum += p_err(w->P[j], w->s[j] - L, dj);
      dn_sum += w->P[j] * -em1(-dj);
    }
  const double Dmax = fmax(log1p(up_sum), dn_sum < 1 ? -log1p(-dn_sum) : INFINITY);
  const double eta = cl->eta_a * (tr ? 2 : 1);
  const double lam_f = U32 * fabs(L), lam_n = Dmax + ac_gbud_gam((double)T + 1, typ, ua, tr) + cl->u_s;
  double dn = 0, pa = 0;
  for (int64_t j = 0; j < w->n; j++) {
    if (!(w->s[j] > -INFINITY)) {
      w->pi[typ][j] = w->sg[typ][j] = w->ta[typ][j] = 0;
      continue;
    }
    double dj = key_delta(w, j, gqk, eta_s);
    double ej = dj + cl->u_e + (lam_f + cl->u_s * fabs(w->s[j] - L) > lam_n ? lam_f + cl->u_s * fabs(w->s[j] - L) : lam_n);
    double pij = p_err(w->P[j], w->s[j] - L, ej);
    if (w->P[j] + pij < cl->mu) pij += cl->mu;
    double aj = gdv * w->A[j] + ((double)p->dv + 1) * eta + (w->dd > 0 ? w->dd * fabs(w->dP[j]) : 0);
    w->pi[typ][j] = pij;
    dn += pij * fabs(w->dP[j]) + (w->P[j] + pij) * aj;
    pa += (w->P[j] + pij) * (fabs(w->dP[j]) + aj);
  }
  const double beta_f = (w->u_o + gdv * (1 + w->u_o)) * B;
  const double beta_n = dn + ac_gbud_gam((double)T, typ, ua, tr) * pa;
  const double beta = (beta_f > beta_n ? beta_f : beta_n) + ((double)p->dv + (double)T + 2) * eta +
                      (w->dd > 0 ? w->dd * fabs(D) : 0);
  sink_term(w, typ, L, D, beta, lam_f, lam_n);
  const double rho = (1 + ua) * (1 + ua) * (1 + up) - 1;
  /* dS stored in the input dtype (u_p > 0) may lose half that dtype's smallest subnormal spacing */
  const ac_dtype_info *di = ac_dtype_get(p->dtype);
  const double eta_p = up > 0 ? fmax(eta, ldexp(0.5, di->ieee_emin - di->prec + 1)) : eta;
  for (int64_t j = 0; j < w->n; j++) {
    if (!(w->s[j] > -INFINITY)) continue;
    double aj = gdv * w->A[j] + ((double)p->dv + 1) * eta + (w->dd > 0 ? w->dd * fabs(w->dP[j]) : 0), pij = w->pi[typ][j];
    double dS = w->P[j] * (w->dP[j] - D);
    w->sg[typ][j] = (1 + rho) * (pij * (fabs(w->dP[j] - D) + aj + beta) + w->P[j] * (aj + beta)) + rho * fabs(dS) + 2 * eta + eta_p;
    if (p->f.used & AC_FEAT_SOFTCAP) w->sg[typ][j] = cap_sigma(w, j, w->sg[typ][j], dS, gqk, eta_s);
    w->ta[typ][j] = pij * (1 + up) + up * w->P[j];
    /* dropout: the P of dV times the mask and the kernel's 1/(1-p) */
    if (w->dd > 0) w->ta[typ][j] = w->vf[j] * (w->ta[typ][j] + w->dd * (w->P[j] + pij));
  }
}

/* dσ_h (binary32 in the ABI): the rows' terms, γ(N + 1, u_a) for the N = batch·tq products and
 * their sum in any order, and (N + 2)η of underflow. */
void ac_grad_budget_sink(const ac_precision *cls, ac_grad_budget *bg)
{
  if (!bg->nsink) return;
  const double n = (double)bg->sink_rows, eta = cls->eta_a * (cls->acc_trunc ? 2 : 1);
  for (int typ = 0; typ < 2; typ++) {
    double *out = ac_xcalloc((size_t)bg->nsink, sizeof(double));
    for (int64_t h = 0; h < bg->nsink; h++)
      out[h] = bg->sink_t[typ][h] + ac_gbud_gam(n + 1, typ, cls->u_a, cls->acc_trunc) * bg->sink_m[typ][h] + (n + 2) * eta;
    free(typ ? bg->sink_e : bg->sink_w);
    if (typ) bg->sink_e = out;
    else bg->sink_w = out;
  }
}

int ac_grad_budget_compute(const ac_precision *cls, const ac_case *c, ac_grad_budget *bg, ac_err *e)
{
  return ac_grad_budget_compute_as(cls, c, AC_ALIBI_LSE_ABI, bg, e);
}

int ac_grad_budget_compute_as(const ac_precision *cls, const ac_case *c, int alibi_lse, ac_grad_budget *bg, ac_err *e)
{
  return ac_grad_budget_compute_threads(cls, c, alibi_lse, 1, bg, e);
}

int ac_grad_budget_compute_threads(const ac_precision *cls, const ac_case *c, int alibi_lse, int threads,
                                   ac_grad_budget *bg, ac_err *e)
{
  memset(bg, 0, sizeof *bg);
  if (!c->dout) return ac_err_set(e, "the case has no dO (member do; attncheck gen --grad)");
  char part[96];
  if (ac_precision_grad_unmodelled(cls, part, sizeof part))
    return ac_err_set(e, "class %s: the backward budget has no term for its part %s (docs/backward.md)", cls->name,
                      part);
  if (c->lay) return ac_grad_budget_layout(cls, c, alibi_lse, bg, e);   /* per sequence */
  return ac_gbud_tiles(cls, c, alibi_lse, threads, bg, e);
}

int ac_gbud_alloc(const ac_case *c, ac_grad_budget *bg, ac_err *e)
{
  ac_counts cn;
  if (ac_problem_counts(&c->p, &cn, e)) return -1;
  const int64_t cnt[3] = {cn.q, cn.k, cn.v};
  for (int t = 0; t < 3; t++) {
    bg->count[t] = cnt[t];
    bg->w[t] = ac_xcalloc((size_t)cnt[t] + 1, sizeof(double));
    bg->e[t] = ac_xcalloc((size_t)cnt[t] + 1, sizeof(double));
  }
  return 0;
}

void ac_grad_budget_free(ac_grad_budget *b)
{
  for (int t = 0; t < 3; t++) {
    free(b->w[t]);
    free(b->e[t]);
    b->w[t] = b->e[t] = NULL;
  }
  free(b->sink_w);
  free(b->sink_e);
  b->sink_w = b->sink_e = NULL;
  for (int typ = 0; typ < 2; typ++) {
    free(b->sink_t[typ]);
    free(b->sink_m[typ]);
    b->sink_t[typ] = b->sink_m[typ] = NULL;
  }
  b->nsink = b->sink_rows = 0;
}
