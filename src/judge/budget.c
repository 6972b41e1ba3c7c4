/* budget.c: W and E per element and per LSE row (docs/numerics.md §7). */
#include "config.h"
#include "budget.h"
#include <math.h>

double ac_gamma_w(double n, double u, int trunc)
{
  if (trunc) u *= 2;
  double nu = n * u;
  if (nu >= 1) return INFINITY;
  return nu / (1 - nu);
}

/* E is the typical error, W the worst: below n = 16 the √n estimate would exceed the worst
 * case (n = 1: 4u against u), so it is capped by γ_w. Every term of E is then at most the
 * matching term of W (Δ_E <= Δ_W, so φ and e^{2Δ} are too), hence E <= W. */
double ac_gamma_e(double n, double u, int trunc)
{
  double w = ac_gamma_w(n, u, trunc);
  if (trunc) u *= 2;
  double e = 4 * sqrt(n) * u;
  return e < w ? e : w;
}

/* Index of the oracle's F threshold used for the class's mu: the smallest threshold >= mu
 * (F grows with mu); -1 none (then D, since F <= D always). */
static int f_index(double cmu, const double *mu, int nmu)
{
  int best = -1;
  for (int k = 0; k < nmu; k++)
    if (mu[k] >= cmu && (best < 0 || mu[k] < mu[best])) best = k;
  return best;
}

/* Relative error of a score s_j against |c| Z_j from Q·Kᵀ: the dot product's γ(d_k, u_qk), and,
 * for a class whose kernels may scale Q and K in the input format first (scaled_in, proof
 * below), 2u_in + u_in² from the rounding of the two scaled operands; the dot product's own
 * error is then relative to Σ|q~_t k~_t| <= (1 + u_in)² |c| Z_j. typical: γ_e for the sum; the
 * operands' rounding is charged in full in E too (no per-element terms to estimate it by). */
static double qk_coef(const ac_precision *c, double dk, int typical)
{
  double g = typical ? ac_gamma_e(dk, c->u_qk, c->qk_trunc) : ac_gamma_w(dk, c->u_qk, c->qk_trunc);
  double ui = c->scaled_in == AC_F64 ? 0 : ac_dtype_get(c->scaled_in)->u;
  if (c->u_qin > 0 || c->u_kin > 0) { /* Q, K rounded on input: their own part is in_coef's */
    double r = (1 + c->u_qin) * (1 + c->u_kin) * (1 + ui) * (1 + ui);
    return g * r + (1 + ui) * (1 + ui) - 1;
  }
  if (c->scaled_in == AC_F64) return g;
  return g * (1 + ui) * (1 + ui) + ui * (2 + ui);
}

/* The rounding of Q and K on input (§7.17): (1 + u_q)(1 + u_k) - 1 of |c| Z_j, times (1 + u_in)^2
 * of a scaled operand. Under a softcap it multiplies |c| Zb_j >= |c| Z_j, never scaled by the
 * softcap's sech^2 (an input's error need not be small against the cap; tanh is 1-Lipschitz). */
static double in_coef(const ac_precision *c)
{
  if (!(c->u_qin > 0 || c->u_kin > 0)) return 0;
  double ui = c->scaled_in == AC_F64 ? 0 : ac_dtype_get(c->scaled_in)->u;
  return ((1 + c->u_qin) * (1 + c->u_kin) - 1) * (1 + ui) * (1 + ui);
}
static int in_on_zb(const ac_problem *p)
{
  return (p->f.used & AC_FEAT_SOFTCAP) != 0;
}

/* Q in q8_0 blocks (docs/numerics.md §7.18): |q_t - q~_t| <= AC_Q8_BETA max|q| over t's block +
 * AC_Q8_FLOOR. With d = max|q|/127 the codes round(q_t/d) err by 1/2 and the binary32 quotient
 * q_t (1/d) by 127·3u_32 < 2^-15 code units; the stored scale fl16(d) by 2^-11 d (binary32's d by
 * 2^-24 more) or, subnormal, by 2^-25, times |code| <= 127. */
#define AC_Q8_BETA  ((0.5 + 0x1p-15) / 127 + 0x1p-11 + 0x1p-23)
#define AC_Q8_FLOOR (127 * 0x1p-25)
/* Its coefficient on |c| Zb_j = |c| sum_t qb_t |k_jt|: the blocks' error times what a product with
 * it meets on the way (K's input rounding, the dot product's gamma). */
static double q8_coef(const ac_precision *c, double dk, int typical)
{
  double g = typical ? ac_gamma_e(dk, c->u_qk, c->qk_trunc) : ac_gamma_w(dk, c->u_qk, c->qk_trunc);
  return AC_Q8_BETA * (1 + g) * (1 + c->u_kin);
}

/* Q in q8_1 blocks against a q4_1 or q5_1 K (docs/numerics.md §7.18): ggml's block dot product is
 * d_k d_q sum c_k c_q + m_k s with s = fl16(fl32(d_q sum c_q)) beside the q8 values' d~_q sum c_q:
 * |s - d~_q sum c_q| <= (2^-10 + 2^-24 + 2^-35) |d_q| sum |c_q| + 2^-25 (1 + sum |c_q|), where
 * |d_q c_t| <= |q_t| + d_q (1/2 + 2^-16) and d_q <= (1 + 2^-24) qb / 127 <= |q_b|_1 / 127 give
 * |d_q| sum |c_q| <= 1.126 |q_b|_1 over the block, and sum |c_q| <= 32 * 127; its block terms (d d
 * rounded, the integer sums cut in up to 8 SIMD lanes, summed in any order with the m s terms) err by
 * gamma(8 n_b + 4) of sum |d d sum c c| + |m s|, of which the |m| parts reach 2.01 M |q|_1. An absolute error of every score: |c| M times that, M the largest |min|
 * of K (p.quant[1].mins_max), |q|_1 <= qk_l1. */
static double q81_term(const ac_problem *p, const ac_oracle_row *row, double ca)
{
  double M = p->quant[1].mins_max, nb = ceil((double)p->dk / AC_Q8_BLOCK);
  if (!isfinite(M) || !isfinite(row->qk_l1)) return INFINITY;
  double beta = (0x1p-10 + 0x1p-24 + 0x1p-35) * 1.126 * (1 + 0x1p-24) + 2.01 * ac_gamma_w(8 * nb + 4, 0x1p-24, 0);
  return ca * M * (beta * row->qk_l1 + 4065 * 0x1p-25 * nb);
}

/* Half the smallest subnormal spacing of the format scaled operands are rounded to. */
static double eta_scaled(const ac_precision *c)
{
  return c->eta_in > c->eta_qk ? c->eta_in : c->eta_qk;
}

/* Typical count of n independent rescale roundings. */
static double nr_typical(double n)
{
  double s = 4 * sqrt(n);
  return n < s ? n : s;
}

/* Factors beyond first order (proof below). Up to Δ = 2^-10 they are at most 1.0031 and
 * 1.0021: products of two roundings, inside the slack of AC_BUDGET_MARGIN like every other
 * second-order term of the model, so W and E stay first order there. */
#define AC_DELTA_FIRST_ORDER 0x1p-10
/* Amplification of the weight perturbation terms: phi(D) = e^D (e^D - 1)/D. */
static double phi(double d)
{
  if (!(d > AC_DELTA_FIRST_ORDER)) return 1;
  if (d > 700) return INFINITY;
  return exp(d) * (expm1(d) / d);
}
/* The kernel's weights against the exact ones: e^{2D}. */
static double amp2(double d)
{
  if (!(d > AC_DELTA_FIRST_ORDER)) return 1;
  return exp(2 * d);
}

/* Proof sketch of the terms (docs/numerics.md §7, with the two corrections below).
 *
 * Score errors beyond first order. Let the kernel's exponent arguments differ from the exact
 * s_j - m by eps_j (up to one common shift, which cancels between numerator and row sum).
 * Exactly, o' - o = Σ_j A_j (e^{eps_j} - 1)(V_j - o) / Σ_k A_k e^{eps_k}; with
 * Δ >= max_j |eps_j|, |e^eps - 1| <= |eps| (e^Δ - 1)/Δ and Σ A_k e^{eps_k} >= e^{-Δ}, so
 * |o' - o| <= phi(Δ) Σ_j A_j |eps_j| |V_j - o|: the first-order terms (G, S', S, and the exp,
 * rescale and score-underflow terms on D) times phi(Δ). Per key,
 *   |eps_j| <= γ(d_k, u_qk)|c|Z_j + (u_S + u_s)|s_j| + 2u_s|s_j - m| + u_e + n_r u_s + eta_s,
 * where the float scale's own rounding is a common relative factor on s_j - m (inside the
 * 2u_s|s_j - m|), a folded log2 e likewise (u_s = 1.5u covers its third rounding), and
 * |s_j - m| <= 2 max|s|; Δ takes the maximum over the visible keys from max|c|Z_j and max|s_j|.
 * The kernel's weights P'_j/L' are within e^{2Δ} of A_j, so the terms proportional to the
 * weights (u_p R, the P.V accumulation, F) are multiplied by e^{2Δ}.
 * LSE: ln Σ A_k e^{eps_k} lies in [-Δ, Δ], and |ln(1 + y)| <= e^Δ |y| for 1 + y >= e^{-Δ},
 * so its score part is min(phi(Δ)·first order, Δ).
 *
 * Scaled operands. A kernel may scale Q and K in the input format before Q·Kᵀ (PyTorch's math
 * path multiplies q and k by sqrt(c) in fp16/bf16; with c = 1/sqrt(128) neither factor is a
 * power of two): q~_t = sqrt|c| q_t (1 + a_t), k~_jt = sqrt|c| k_jt (1 + b_jt), |a|, |b| <= u_in
 * of the input format (scaled_in). Then Σ_t q~_t k~_jt = c Σ_t q_t k_jt (1 + a_t)(1 + b_jt)
 * differs from s_j by at most (2u_in + u_in²)|c| Z_j, and the dot product's own γ(d_k, u_qk) is
 * relative to Σ|q~_t k~_jt| <= (1 + u_in)²|c| Z_j. So γ(d_k, u_qk) in |eps_j| becomes
 * γ(d_k, u_qk)(1 + u_in)² + 2u_in + u_in² (qk_coef), in G, the LSE's lse_cZ and Δ alike; Q
 * alone scaled by c gives one rounding instead of two, inside the same bound. The scale itself is
 * not applied again, so no scale product is added. Binary32 scaling (classes without
 * scaled_in) is a rounding per element of the same size as the dot product's and stays within
 * u_qk's model; scaling in a 16-bit input format is covered only by the classes that name it
 * (fp16-math, bf16-math, the acc16 classes): FlashAttention's and cuBLAS's scale is applied to
 * binary32 scores, and charging 2^-10 |c|Z_j to them would hide defects 7x larger.
 *
 * Underflow. Every binary operation whose result falls below the normal range of its format
 * errs by at most eta (half the smallest subnormal spacing; a full one when truncating)
 * beyond the relative model; additions and subtractions landing there are exact. Scores:
 * d_k products of the dot product (eta_qk each, scaled by |c|), the scale product and a
 * stored score: eta_s = (|c| d_k + 2) eta_qk, an absolute error of every eps_j; a kernel that
 * scales Q (K; or both by sqrt|c|) first adds eta max(1, sqrt|c|)(|q|_1 + max_j |k_j|_1), eta the
 * larger of eta_qk and that of scaled_in (fp16: 2^-25 where eta_qk is binary32's). Output: the
 * T products P_j V_j, at most n_r rescale products and the final division (or, for split-K,
 * one division and one product per chunk, fewer than the rescales counted): (T + n_r + 2)
 * eta_a on the unnormalized sum, divided by a row sum >= e^{-Δ} (it holds the maximum's
 * exp(0) = 1), so (T + n_r + 2) eta_a e^Δ on o (charged with e^{2Δ}). P below the normal range of the format P is
 * stored in errs by at most P itself (0 is a neighbour): the F term at the class's mu; when
 * only the numerator sees the rounded P (u_p > 0: the row sum keeps the wide P) the loss is
 * A_j|V_j| <= A_j|V_j - o| + A_j|o|, hence F + |o| Σ_{A_j < mu} A_j. */
typedef struct { double delta_w, delta_e, eta_s, delta_arith; } score_err;

/* The terms a kernel's row sum holds: the visible keys and, in a case with sinks, the sink, a key
 * of its own (docs/numerics.md §11.1: the oracle's terms already count it). The accumulation, the
 * flush, the rescales and the merge's ln T count it too. */
int64_t ac_budget_row_keys(const ac_problem *p, const ac_oracle_row *row)
{
  return row->visible + ((p->f.used & AC_FEAT_SINKS) ? 1 : 0);
}

static score_err score_errors(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row)
{
  double dk = (double)p->dk;
  double nr = (double)ac_precision_nr(c, ac_budget_row_keys(p, row));
  double as = isfinite(row->max_abs_s) ? row->max_abs_s : INFINITY;
  double cz = isfinite(row->max_cZ) ? row->max_cZ : INFINITY;
  double ca = isfinite(p->scale) ? fabs(p->scale) * (1 + 0x1p-20) : 1;
  score_err r;
  /* a kernel may scale Q (or K, or both by sqrt|c|) in the input format before Q·Kᵀ: each
   * scaled element that underflows errs by eta (of scaled_in), times the |k| (|q|) it multiplies */
  double l1 = isfinite(row->qk_l1) ? row->qk_l1 * fmax(1, sqrt(ca)) * eta_scaled(c) : INFINITY;
  r.eta_s = ((ca * dk + 2) * c->eta_qk + l1) * (c->qk_trunc ? 2 : 1);
  /* Q and K rounded on input (a flushed or underflowing element errs by its eta, or by the
   * smallest normal under DAZ), q8's subnormal scale: times the |k| (|q|) it multiplies (§7.17) */
  double in_eta = fmax(c->eta_qin, c->eta_kin) + c->daz_qk + (c->q8 ? AC_Q8_FLOOR : 0);
  if (in_eta > 0) r.eta_s += isfinite(row->qk_l1) ? row->qk_l1 * ca * in_eta : INFINITY;
  if (c->q81 && p->quant[1].mins_max > 0) r.eta_s += q81_term(p, row, ca);
  double rest = (c->u_S + c->u_s) * as + 4 * c->u_s * as + c->u_e + r.eta_s;
  /* scales folded into the softmax scale (fold, §7.17): two more roundings of every score's factor */
  if (c->u_fold > 0) rest += 2 * c->u_fold * as;
  r.delta_w = qk_coef(c, dk, 0) * cz + rest + nr * c->u_s;
  r.delta_arith = rest + nr * c->u_s;
  r.delta_e = qk_coef(c, dk, 1) * cz + rest + nr_typical(nr) * c->u_s;
  if (c->q8 || in_coef(c) > 0) {
    double czb = isfinite(row->max_cZb) ? row->max_cZb : INFINITY;
    double ic = in_coef(c) * (in_on_zb(p) ? czb : cz);
    r.delta_w += (c->q8 ? q8_coef(c, dk, 0) * czb : 0) + ic;
    r.delta_e += (c->q8 ? q8_coef(c, dk, 1) * czb : 0) + ic;
  }
  /* 0·inf when a term is 0 and a factor infinite: no error from that source */
  if (isnan(r.delta_w)) r.delta_w = INFINITY;
  if (isnan(r.delta_e)) r.delta_e = INFINITY;
  if (isnan(r.delta_arith)) r.delta_arith = INFINITY;
  return r;
}

/* Weights through a rounded LSE. A split-KV kernel merges its chunks as o = Σ_c e^{lse_c - lse} o_c
 * (FlashAttention's combine), a two-pass kernel may weight V_j by e^{s_j - lse}: neither
 * renormalizes, so the weights need not sum to one and the error is relative to the weighted
 * |V_j| (R), not to |V_j - o|. The common score errors cancel (lse_c and lse are computed from
 * the same scores as the P in o_c), leaving the roundings: lse_c = m_c + ln l_c, the final lse,
 * their difference, the exps and logs, |eps| <= u_s(|lse_c| + |lse| + |lse_c - lse|) + u_e(2 + ln T),
 * with |lse_c|, |lse| <= max|s_j| + ln T. So Σ_c |e^{eps_c} - 1| e^{lse_c - lse}|o_c| <=
 * (e^{eps} - 1) R. */
static double lse_weight_err(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row)
{
  double as = isfinite(row->max_abs_s) ? row->max_abs_s : INFINITY;
  double lt = log((double)ac_budget_row_keys(p, row));
  double eps = 4 * c->u_s * (as + lt) + c->u_e * (2 + lt);
  return eps > 700 ? INFINITY : expm1(eps);
}

/* The row sum accumulates like P.V (every preset): the two share their gamma. */
static int same_acc(const ac_precision *c)
{
  return c->u_l == c->u_a && c->l_trunc == c->acc_trunc;
}

/* The accumulation terms of an element: gamma(T_acc, u_pv) R for the numerator and
 * gamma(T_acc, u_l) |o| for the row sum's relative error, written gamma (R + |o|) when the two
 * formats agree; a class rescaling its accumulators in their own formats (rs=acc) counts the n_r
 * rescale products among each sum's roundings (§7.17). */
static double acc_term(const ac_precision *c, double tacc, double nr, const ac_oracle_elem *el, double ao, int typical)
{
  double (*gam)(double, double, int) = typical ? ac_gamma_e : ac_gamma_w;
  if (!c->rs_acc && same_acc(c)) return gam(tacc, c->u_a, c->acc_trunc) * (el->R + ao);
  double t = tacc + (c->rs_acc ? nr : 0);
  return gam(t, c->u_a, c->acc_trunc) * el->R + gam(t, c->u_l, c->l_trunc) * ao;
}

/* Convex-hull cap. Whatever its score errors, a kernel of any class in the table forms
 * nonnegative weights p_j (exp of something, possibly rounded or flushed for P.V) and divides
 * a P.V sum by a row sum of the same kind; a split-KV kernel merges such chunk outputs with
 * weights through rounded LSEs. Write the kernel's output, exactly, as
 *   o' = (1 + lam) Σ_j a_j (1 + k_j) V_j,   a_j = p_j (1 + th_j) / Σ_k p_k (1 + th_k)  (convex),
 * where th_j is the row sum's accumulation and rescale rounding of term j, k_j collects the
 * numerator's (P stored with u_p, or flushed to 0 below mu; the products and sums of P.V, the
 * rescale products, the division) divided by (1 + th_j), and lam the combine's (weights
 * e^{lse_c - lse} summing to e^{+-eps}, |lam| <= lse_weight_err; 0 for one chunk). The common
 * rounded alpha of an online rescale multiplies both sums and cancels. With
 * g = γ(T_acc + n_r + 2, u_a) (accumulation, rescales, division or reciprocal and product),
 * |k_j| <= k = (1 + u_p)(1 + g)/(1 - g) - 1 unless P_j is flushed (then k_j = -1; a_j <= P_j
 * < mu relative to a running maximum whose own P is 1, so the flushed keys weigh at most
 * (T - 1) mu (1 + k)). Hence, with M = max_j |V_j - o| and max_j |V_j| <= |o| + M,
 *   |o' - o| <= M + ((1 + lam)(1 + k)(1 + (T - 1) mu) - 1)(|o| + M) + u_s|o|   (u_s|o|: as in W,
 *               an output formed in the score format before its own rounding)
 *               + (T + n_r + 2) eta_a (1 + lam)/(1 - g)          (underflow in P.V, l' >= 1 - g)
 * plus the output's own rounding (fixed). No score error enters: a row of one visible key
 * keeps weight exactly 1 (W = u_p|V| + roundings however large its score), and a kernel
 * whose output leaves the hull of the visible V_j (a masked key winning through a finite
 * sentinel) fails. It holds for every class of the table; infinite when g or lam is. */
static double hull_cap(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row, const ac_oracle_elem *el,
                       double ao)
{
  const int64_t n = ac_budget_row_keys(p, row);
  double T = (double)n;
  double tacc = (double)ac_precision_tacc(c, n), nr = (double)ac_precision_nr(c, n);
  double g = ac_gamma_w(tacc + nr + 2, c->u_a, c->acc_trunc);
  double gl = same_acc(c) ? g : ac_gamma_w(tacc + nr + 2, c->u_l, c->l_trunc); /* the row sum's */
  if (!(g < 1) || !(gl < 1)) return INFINITY;
  double lam = lse_weight_err(c, p, row);
  double k = (1 + c->u_p) * (1 + c->u_vin) * (1 + g) / (1 - gl) - 1;
  double rel = (1 + lam) * (1 + k) - 1 + (1 + lam) * (1 + k) * (T - 1) * c->mu;
  double M = el->M + el->o_err;
  double dr = ac_budget_drop_r(p);   /* dropout: absolute floors of V' times 1/(1-p), as the terms */
  double eta_a = c->eta_a * (c->acc_trunc ? 2 : 1) * dr;
  double cap = M + rel * (ao + M) + c->u_s * ao + (T + nr + 2) * eta_a * (1 + lam) / (1 - gl);
  if (c->eta_vin + c->daz_v > 0) cap += (c->eta_vin + c->daz_v) * dr * (1 + lam) / (1 - gl); /* V's underflow */
  return isnan(cap) ? INFINITY : cap;
}

/* A quantized tensor whose values are binary64 roundings of its exact ones (float zero points,
 * p.quant[x].rounded; docs/quantized.md "Exact values"): the kernel's inputs differ from the oracle's
 * by 2^-53 relative more, charged as one more rounding of that tensor on input, (1 + u)(1 + 2^-53) - 1.
 * A class with dq (docs/numerics.md §7.17): each quantized tensor dequantized in that format from code c,
 * scale s and zero point z (or min m = -z s) in up to two operations errs by at most
 * 2u(1 + u)(|c| + |z|)|s| <= 2u(1 + u)(|x| + 2|z s|) (|c||s| <= |x| + |z s|), and by 2^-149 of binary32's
 * underflow in its two operations (2^-125 flushed): a relative 2u(1 + u) on input and an absolute
 * 4u(1 + u) max|z s| + 2^-149 per element, on top of the tensor's own input part. Both in a copy of
 * the class (buf); c itself otherwise. */
static const ac_precision *with_rounded_inputs(const ac_precision *c, const ac_problem *p, ac_precision *buf)
{
  const int dq = c->u_dq > 0 && (p->quant[0].fmt || p->quant[1].fmt || p->quant[2].fmt);
  if (!p->quant[0].rounded && !p->quant[1].rounded && !p->quant[2].rounded && !dq) return c;
  *buf = *c;
  double *u[3] = {&buf->u_qin, &buf->u_kin, &buf->u_vin}, *eta[3] = {&buf->eta_qin, &buf->eta_kin, &buf->eta_vin};
  for (int i = 0; i < 3; i++) {
    if (p->quant[i].rounded) *u[i] = (1 + *u[i]) * (1 + 0x1p-53) - 1;
    if (!dq || !p->quant[i].fmt) continue;
    const double ud = 2 * c->u_dq * (1 + c->u_dq), floor = c->sub == AC_SUB_IEEE ? 0x1p-149 : 0x1p-125;
    *eta[i] += (2 * ud * p->quant[i].zs_max + floor) * (1 + *u[i]);
    *u[i] = (1 + *u[i]) * (1 + ud) - 1;
  }
  return buf;
}

double ac_budget_exp_arg_delta(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row)
{
  ac_precision buf;
  return score_errors(with_rounded_inputs(c, p, &buf), p, row).delta_arith;
}

void ac_budget_elem(const ac_precision *c, const ac_problem *p, ac_dtype out, const ac_oracle_row *row,
                    const ac_oracle_elem *el, const double *mu, int nmu, ac_bound *b)
{
  ac_precision buf;
  c = with_rounded_inputs(c, p, &buf);
  double ao = fabs(el->o);
  /* No budget terms (docs/numerics.md §7.16): a non-finite o is judged by the rule table, an empty
   * row by the --empty-rows convention, and a row that sees only its sink has o = 0 exactly, the
   * kernel's sum of no products (0 / l, 0 times a descale: no rounding), so W = E = o_err = 0. */
  if (row->visible <= 0 || !isfinite(el->o)) {
    b->W_terms = b->E_terms = 0;
    b->fixed = isfinite(el->o_err) ? el->o_err : 0;
    b->W = b->E = b->fixed;
    return;
  }
  const int64_t n = ac_budget_row_keys(p, row);
  double T = (double)n, dk = (double)p->dk;
  double tacc = (double)ac_precision_tacc(c, n);
  double nr = (double)ac_precision_nr(c, n);
  int fi = f_index(c->mu, mu, nmu);
  double F = fi < 0 ? el->D : el->F[fi];
  if (c->u_p > 0) F += fi < 0 ? ao : ao * row->Fmass[fi];
  score_err se = score_errors(c, p, row);
  /* first-order score terms, without their γ(d_k) part */
  double sc = c->u_S * el->Sp + c->u_s * el->Sp + 2 * c->u_s * el->S;
  if (c->u_fold > 0) sc += 2 * c->u_fold * el->Sp;
  double nu = T + nr + 2;
  double dr = ac_budget_drop_r(p);   /* dropout (budget_dropout.c): the terms are V'/(1-p)'s, the floors too */
  double eta_a = c->eta_a * (c->acc_trunc ? 2 : 1) * dr;
  double lw = lse_weight_err(c, p, row);
  /* P and V rounded for P.V: (1 + u_p)(1 + u_v) - 1 on R */
  double up = c->u_vin > 0 ? (1 + c->u_p) * (1 + c->u_vin) - 1 : c->u_p;
  double gw = qk_coef(c, dk, 0) * el->G, ge = qk_coef(c, dk, 1) * el->G;
  if (c->q8) gw += q8_coef(c, dk, 0) * el->Gb, ge += q8_coef(c, dk, 1) * el->Gb;
  if (in_coef(c) > 0) {
    double ig = in_coef(c) * (in_on_zb(p) ? el->Gb : el->G);
    gw += ig, ge += ig;
  }
  double w = phi(se.delta_w) * (gw + sc + (c->u_e + nr * c->u_s + se.eta_s) * el->D) +
             amp2(se.delta_w) * ((up + lw) * el->R + acc_term(c, tacc, nr, el, ao, 0) + F) + c->u_s * ao +
             nu * eta_a * amp2(se.delta_w);
  double e = phi(se.delta_e) * (ge + sc + (c->u_e + nr_typical(nr) * c->u_s + se.eta_s) * el->D) +
             amp2(se.delta_e) * ((up + lw) * el->R + acc_term(c, tacc, nr, el, ao, 1) + F) + c->u_s * ao +
             nr_typical(nu) * eta_a * amp2(se.delta_e);
  if (c->eta_vin + c->daz_v > 0) { /* V's underflow, an absolute error of each V_j, weights summing to ~1 */
    w += (c->eta_vin + c->daz_v) * dr * amp2(se.delta_w);
    e += (c->eta_vin + c->daz_v) * dr * amp2(se.delta_e);
  }
  if (isnan(w)) w = INFINITY;
  if (isnan(e)) e = INFINITY;
  /* neither bound exceeds what the hull argument proves for every kernel of the class */
  double cap = hull_cap(c, p, row, el, ao);
  if (cap < w) w = cap;
  if (cap < e) e = cap;
  /* fold: the kernel's o', within w of o, multiplied by V's scale and rounded once more */
  if (c->u_fold > 0) {
    w += c->u_fold * (ao + w);
    e += c->u_fold * (ao + e);
  }
  /* dropout: the kernel's own 1/(1-p), on its result or on every term (budget_dropout.c) */
  double dd = ac_budget_drop_delta(c, p);
  if (dd > 0) {
    w = (1 + dd) * w + dd * el->R;
    e = (1 + dd) * e + dd * el->R;
  }
  w *= AC_BUDGET_MARGIN;
  e *= AC_BUDGET_MARGIN;
  /* The kernel rounds its working value, which lies within w of o: half an ulp of the
   * largest such value. It is the same in W and E and never multiplied by kappa: one correctly
   * rounded operation has no typical error below its worst, so where it dominates (tiny 16-bit
   * outputs) W ≈ E and the SUSPECT band is empty by construction; nothing lies between a typical
   * correct kernel and the worst one there, and an error past W is a FAIL. */
  double half = 0.5 * ac_ulp(out, isfinite(w) ? ao + w : ao);
  if (c->sub != AC_SUB_IEEE) { /* FTZ: a working value below the normal range may become 0 */
    double nmin = ldexp(1.0, ac_dtype_get(out)->ieee_emin);
    if (!(ao + w >= nmin) && nmin > half) half = nmin;
  }
  b->W_terms = w;
  b->E_terms = e;
  b->fixed = half + el->o_err;
  b->W = w + b->fixed;
  b->E = e + b->fixed;
}

void ac_budget_lse(const ac_precision *c, const ac_problem *p, const ac_oracle_row *row, ac_bound *b)
{
  ac_precision buf;
  c = with_rounded_inputs(c, p, &buf);
  /* A row that sees only its sink is a row of one key, the sink (its LSE σ_h is one logit, but the
   * kernel's formula rounds it: FlashAttention-3 forms (σ log2 e + log2 1) ln 2), so it takes the
   * terms below like any other; only a non-finite LSE (the rule table) and a row of no key at all
   * (the --empty-rows convention) have none (docs/numerics.md §7.16). */
  const int64_t n = ac_budget_row_keys(p, row);
  if (n <= 0 || !isfinite(row->lse)) {
    b->W_terms = b->E_terms = 0;
    b->fixed = isfinite(row->lse_err) ? row->lse_err : 0;
    b->W = b->E = b->fixed;
    return;
  }
  double T = (double)n, dk = (double)p->dk;
  double tacc = (double)ac_precision_tacc(c, n);
  double nr = (double)ac_precision_nr(c, n);
  double al = fabs(row->lse), am = isfinite(row->m) ? fabs(row->m) : 0;
  /* Terms below mu_sum lost from the row sum: relative loss of L at most T·mu_sum. */
  double tm = T * c->mu_sum;
  double flush = tm >= 0.5 ? INFINITY : tm / (1 - tm);
  score_err se = score_errors(c, p, row);
  /* scores, exp and rescales (first order), bounded beyond first order as in the proof above.
   * A class storing raw scores in a narrow format (u_S > 0: cuBLAS-style composites) forms
   * its maximum, its weights and so its LSE from the stored scores: each s_j carries the
   * storage rounding u_S|s_j| on the way to LSE = ln Σ e^{s_j}, whose first-order error is the
   * A-weighted mean of the score errors, hence u_S Σ_j A_j|s_j|. */
  double sarith = (c->u_S + 2 * c->u_s) * row->lse_s;
  if (c->u_fold > 0) sarith += 2 * c->u_fold * row->lse_s;
  double sw = qk_coef(c, dk, 0) * row->lse_cZ + sarith + c->u_e + nr * c->u_s + se.eta_s;
  double se_ = qk_coef(c, dk, 1) * row->lse_cZ + sarith + c->u_e + nr_typical(nr) * c->u_s + se.eta_s;
  if (c->q8) sw += q8_coef(c, dk, 0) * row->lse_cZb, se_ += q8_coef(c, dk, 1) * row->lse_cZb;
  if (in_coef(c) > 0) {
    double il = in_coef(c) * (in_on_zb(p) ? row->lse_cZb : row->lse_cZ);
    sw += il, se_ += il;
  }
  sw = fmin(phi(se.delta_w) * sw, se.delta_w);
  se_ = fmin(phi(se.delta_e) * se_, se.delta_e);
  /* ln L and m + ln L rounded in the score format (u_lse: the formula's unit, §7.17); log
   * charged u_e; the row sum's accumulation and flush are relative errors of L */
  double common = c->u_lse * (2 * al + am) + c->u_e + flush;
  double tl = tacc + (c->rs_acc ? nr : 0);
  double w = sw + common + ac_gamma_w(tl, c->u_l, c->l_trunc);
  double e = se_ + common + ac_gamma_e(tl, c->u_l, c->l_trunc);
  if (isnan(w)) w = INFINITY;
  if (isnan(e)) e = INFINITY;
  w *= AC_BUDGET_MARGIN;
  e *= AC_BUDGET_MARGIN;
  double half = 0.5 * ac_ulp(AC_F32, isfinite(w) ? al + w : al);
  b->W_terms = w;
  b->E_terms = e;
  b->fixed = half + (isfinite(row->lse_err) ? row->lse_err : 0);
  b->W = w + b->fixed;
  b->E = e + b->fixed;
}
