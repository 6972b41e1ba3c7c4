/* dropout.c: dropout with a kernel's keep-mask in the exact oracle (docs/numerics.md §13).
 *
 * With keep-mask m_j of a row and drop probability p (a binary32 value, 0 <= p < 1),
 *   o = (1/(1-p)) Σ_j A_j m_j V_j = o' / q,   q = 1 - p,   o' = Σ_j A_j V'_j,   V'_j = m_j V_j.
 * o' is plain attention over the row's own values V' (the dropped keys keep their weight in the
 * row sum, with value 0): the row's gathered head holds V' and every step of the oracle (exact
 * scores, groups, the exact-case test, the levels, the sign test, the budget terms) runs on it
 * unchanged. q is dyadic (p = P 2^-e, q = (2^e - P) 2^-e, at most 150 bits), so:
 *   - o' is an exact rational W'/n exactly when o is, and then o = W' / (n q): rounded as a
 *     quotient by the exact dyadic n q (ac_or_round_quotient);
 *   - otherwise o' is transcendental (Lindemann-Weierstrass, docs/numerics.md §3.1) and so is o:
 *     never a breakpoint; its enclosure is [o'_lo / q rounded down, o'_hi / q rounded up];
 *   - when that enclosure straddles a breakpoint b, o - b has the sign of o' - b q (q > 0), b q
 *     exact: the sign test of exactcase.c at b q decides it.
 * The elements keep o' (its binary64 value and bound) while the row is evaluated, so that the
 * budget terms of budget.c and the hull are those of V'; ac_or_drop_finish then turns each into o's:
 * the value and its bound divided by q outward, the terms (linear in V) times 1/q rounded up. */
#include "config.h"
#include <math.h>
#include "oracle_int.h"
#include "dropout.h"

/* q = 1 - p holds in 160 bits for every binary32 p in [0, 1) (its last bit at 2^-149 or above). */
#define DROP_QPREC 160

void ac_or_drop_init(ac_or_ws *w)
{
  const ac_features *f = &w->p->f;
  w->drop = (f->used & AC_FEAT_DROPOUT) != 0;
  if (!w->drop) return;
  mpfr_inits2(DROP_QPREC, w->dq, w->dlo, w->dhi, (mpfr_ptr)0);
  AC_EXACT(mpfr_set_d(w->dq, f->dropout_p, MPFR_RNDN), "p is a binary32 value");
  AC_EXACT(mpfr_ui_sub(w->dq, 1, w->dq, MPFR_RNDN), "1 - p of a binary32 p holds in 160 bits");
  AC_ASSERT(mpfr_sgn(w->dq) > 0, "dropout's p is below 1");
  w->drop_r = ac_dropout_inv_keep_up(f->dropout_p);
}

void ac_or_drop_free(ac_or_ws *w)
{
  if (w->drop) mpfr_clears(w->dq, w->dlo, w->dhi, (mpfr_ptr)0);
  w->drop = 0;
}

void ac_or_drop_vzero(ac_or_head *hd, const ac_problem *p, const uint8_t *keep, const int64_t *idx, int64_t m)
{
  int64_t dv = p->dv, zeroed = 0;
  for (int64_t r = 0; r < m; r++) {
    if (idx[r] < 0 || keep[idx[r]]) continue;
    for (int64_t t = 0; t < dv; t++) {   /* the value of a dropped key is 0, whatever was stored */
      size_t x = (size_t)(r * dv + t);
      if (hd->vm) { hd->vm[x] = 0; hd->ve[x] = hd->v_lsb[t]; }
      if (hd->vf) hd->vown[x] = 0;
      else hd->vd[x] = 0;
      hd->vcls[x] = AC_VCLS_FINITE;
    }
    zeroed++;
  }
  if (zeroed && hd->vabs) ac_or_head_vabs(hd, p, m);
}

const uint8_t *ac_or_drop_mask_row(const ac_case *cs, int64_t b, int64_t h, int64_t i)
{
  const ac_problem *p = &cs->p;
  return cs->dropout_mask + ((b * p->heads + h) * p->tq + i) * p->tk;
}

void ac_or_drop_row(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t m)
{
  ac_or_drop_vzero(&w->rowh, w->p, ac_or_drop_mask_row(w->cs, b, h, i), w->rkey, m);
}

void ac_or_drop_interval(ac_or_ws *w, mpfr_srcptr lo, mpfr_srcptr hi)
{
  mpfr_set_prec(w->dlo, mpfr_get_prec(lo));
  mpfr_set_prec(w->dhi, mpfr_get_prec(hi));
  mpfr_div(w->dlo, lo, w->dq, MPFR_RNDD);   /* q > 0: the ends stay in order */
  mpfr_div(w->dhi, hi, w->dq, MPFR_RNDU);
}

void ac_or_drop_bp(ac_or_ws *w, mpfr_t bp)
{
  mpfr_t x;
  mpfr_init2(x, mpfr_get_prec(bp) + DROP_QPREC);
  AC_EXACT(mpfr_mul(x, bp, w->dq, MPFR_RNDN), "b q in prec(b) + 160 bits");
  mpfr_set_prec(bp, mpfr_get_prec(x));
  mpfr_set(bp, x, MPFR_RNDN);
  mpfr_clear(x);
}

void ac_or_drop_quotient(ac_or_ws *w, int64_t n, mpfr_t D)
{
  mpfr_set_prec(D, DROP_QPREC + 64);
  AC_EXACT(mpfr_mul_si(D, w->dq, (long)n, MPFR_RNDN), "n q in 224 bits");
}

void ac_or_drop_finish(ac_or_ws *w, ac_oracle_elem *el, uint64_t **obits, int64_t slot)
{
  int64_t dv = w->p->dv;
  mpfr_t lo, hi;
  mpfr_inits2(64, lo, hi, (mpfr_ptr)0);
  double r = w->drop_r;
  for (int64_t t = 0; t < dv; t++) {
    ac_oracle_elem *e = &el[t];
    if (e->accept != AC_ACCEPT_VALUE || !isfinite(e->o)) continue;
    /* o' in [o - err, o + err] (binary64 ends, the sums rounded outward), then / q outward */
    mpfr_set_d(lo, e->o, MPFR_RNDN);
    mpfr_set_d(hi, e->o, MPFR_RNDN);
    mpfr_sub_d(lo, lo, e->o_err, MPFR_RNDD);
    mpfr_add_d(hi, hi, e->o_err, MPFR_RNDU);
    ac_or_drop_interval(w, lo, hi);
    ac_or_interval_double(w->dlo, w->dhi, &e->o, &e->o_err);
    if (e->how == AC_HOW_UNRESOLVED)   /* best effort, as ziv.c's: the midpoint of o's last enclosure */
      for (int f = 0; f < AC_NDTYPES; f++)
        if (obits[f]) obits[f][slot * dv + t] = ac_encode_f64((ac_dtype)f, e->o);
    /* the terms are linear in the values: those of the values V'_j / q (approximations, rounded up) */
    e->R *= r, e->D *= r, e->S *= r, e->Sp *= r, e->G *= r, e->Gb *= r;
    for (int k = 0; k < AC_ORACLE_NMU; k++) e->F[k] *= r;
    double M = e->M * r;
    e->M = M < INFINITY ? nextafter(M, INFINITY) : M;
  }
  mpfr_clears(lo, hi, (mpfr_ptr)0);
}
