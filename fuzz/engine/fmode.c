/* fmode.c: a case's failure mode in one verdict kind: which quantities fail (o, lse; dq, dk, dv,
 * dsinks of the backward), why their worst element is wrong, and how far (err/W). The minimizer
 * keeps it; defects are told apart by it (defect.c). */
#include "config.h"
#include <string.h>
#include "fuzz.h"

void ac_fmode_of(const ac_eval *ev, ac_verdict_kind k, ac_fmode *m)
{
  memset(m, 0, sizeof *m);
  m->kind = (int)k;
  if (!(ev->kinds & (1u << k))) return;
  const ac_report *r = &ev->rep;
  m->size = k == AC_V_FAIL ? ev->err_w : k == AC_V_SUSPECT ? ev->score : 0;
  const uint8_t value = 1 + AC_WHY_VALUE, nonfinite = 1 + AC_WHY_NONFINITE;
  switch (k) {
  case AC_V_FAIL:   /* the worst element of a quantity that fails is one of its failures (compare.c's ranks) */
    if (r->n_fail) m->why[AC_QTY_O] = (uint8_t)(1 + (r->worst.valid ? r->worst.why : AC_WHY_VALUE));
    if (r->lse_fail) m->why[AC_QTY_LSE] = (uint8_t)(1 + (r->lse_worst.valid ? r->lse_worst.why : AC_WHY_VALUE));
    /* a wrong value of o or the LSE just above its bound (err/W at most AC_FMODE_MARGINAL) beside a
     * failure of the other at least AC_FMODE_SIZE_RATIO times further (a non-finite one included) is
     * not part of the mode: the two can lie in different heads or rows (a slice keeps one), or the
     * far one drags the other just past its bound, and the far one is the defect */
    if (m->why[AC_QTY_O] && m->why[AC_QTY_LSE] && r->worst.valid && r->lse_worst.valid) {
      const double eo = r->worst.err_w, el = r->lse_worst.err_w;
      if (m->why[AC_QTY_O] == value && eo <= AC_FMODE_MARGINAL && !(el < AC_FMODE_SIZE_RATIO * eo)) m->why[AC_QTY_O] = 0;
      else if (m->why[AC_QTY_LSE] == value && el <= AC_FMODE_MARGINAL && !(eo < AC_FMODE_SIZE_RATIO * el))
        m->why[AC_QTY_LSE] = 0;
    }
    break;
  case AC_V_SUSPECT:
    if (r->n_suspect) m->why[AC_QTY_O] = value;
    if (r->lse_suspect) m->why[AC_QTY_LSE] = value;
    break;
  case AC_V_MASKED_LEAK: m->why[AC_QTY_O] = nonfinite; break;
  case AC_V_WEAK_CLASS: m->why[AC_QTY_O] = value; break;
  case AC_V_GRAD_FAIL:
    for (int t = 0; t < 4; t++) m->why[AC_QTY_DQ + t] = ev->grad_why[t];
    break;
  default: break;
  }
}

int ac_fmode_eq(const ac_fmode *a, const ac_fmode *b)
{
  return a->kind == b->kind && !memcmp(a->why, b->why, sizeof a->why);
}

/* x's size comparable to m's. */
static int comparable(const ac_fmode *x, const ac_fmode *m)
{
  return x->size >= m->size / AC_FMODE_SIZE_RATIO;
}

int ac_fmode_holds(const ac_eval *ev, const ac_fmode *m)
{
  if (!(ev->kinds & (1u << m->kind))) return 0;
  ac_fmode x;
  ac_fmode_of(ev, (ac_verdict_kind)m->kind, &x);
  return ac_fmode_eq(&x, m) && comparable(&x, m);
}

int ac_fmode_covers(const ac_eval *ev, const ac_fmode *m)
{
  if (!(ev->kinds & (1u << m->kind))) return 0;
  ac_fmode x;
  ac_fmode_of(ev, (ac_verdict_kind)m->kind, &x);
  for (int q = 0; q < AC_NQTY; q++)
    if (m->why[q] && x.why[q] != m->why[q]) return 0;
  return comparable(&x, m);
}

int ac_fmode_overlaps(const ac_fmode *a, const ac_fmode *b)
{
  if (a->kind != b->kind) return 0;
  int common = 0, any = 0;
  for (int q = 0; q < AC_NQTY; q++) {
    any |= a->why[q] || b->why[q];
    if (a->why[q] && b->why[q]) {
      if (a->why[q] != b->why[q]) return 0;
      common = 1;
    }
  }
  return common || !any;
}
