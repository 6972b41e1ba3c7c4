/* dropout_mask.c: the DROPOUT-MASK verdict: a kernel's keep-mask judged by itself (docs/dropout.md).
 *
 * Null hypothesis, what a correct kernel's random number generator gives: the entries of the mask
 * at the positions the rows see (mask, window, boolean mask; the only ones judged) are independent,
 * each kept with one probability P within 2^-8 of 1 - p (FlashAttention-2 compares an 8-bit random
 * number with floor((1 - p) 255), a keep probability (floor((1 - p) 255) + 1) / 256, within 1/256 of
 * 1 - p; a 32-bit or 53-bit threshold is closer still). Every test below is a sum of independent
 * [0, 1] indicators under it, and Hoeffding's inequality, P(S - E S >= t) <= exp(-2 t^2 / n), bounds
 * the chance that it fires; the K tests a case runs (K from its shape alone) share alpha = 1e-9:
 *
 *   kept fraction    K = Σ kept over the n judged entries, E K in [n P_lo, n P_hi]: fires when
 *                    K < n P_lo - t or K > n P_hi + t, t = sqrt(n ln(2K/alpha) / 2); at p = 0 when
 *                    any entry is dropped (every generator's keep probability is then 1);
 *   agreements       A = Σ [m_x = m_y] over n disjoint pairs (x, y) of judged positions: for
 *                    independent entries P(agree) = a(P) = P^2 + (1 - P)^2, a(P) in [a_lo, a_hi] over
 *                    [P_lo, P_hi]; fires when A > n a_hi + t or A < n a_lo - t (t as above), pairing
 *                      - the heads of a batch (h, h + 1), h even, at each (i, j) both see;
 *                      - the batches of a head (b, b + 1), b even;
 *                      - rows (i, i + s), i mod 2s < s, of one (b, h), for s = 1, 2, 4, ... < tq;
 *                      - keys (j, j + s), j mod 2s < s, of one row, for s = 1, 2, 4, ... < tk.
 * The pairs of one test are disjoint, so its indicators are independent. A generator that repeats
 * its draws across heads, batches, rows, or tiles of a power-of-two width agrees far more often than
 * a(P) allows (every time, when it repeats exactly); one that alternates agrees less. So the verdict
 * fires on a correct generator with probability at most 1e-9 per case, and on such structure as soon
 * as n is large enough for t to be smaller than its excess (n a little above ln(2K/alpha) / (2 excess^2)
 * pairs: 160 for a mask repeated across heads at p = 0.17). */
#include "config.h"
#include "dropout_mask.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "variants.h"

#define DROP_ALPHA 1e-9
#define DROP_QTOL 0x1p-8

static double agree(double P) { return P * P + (1 - P) * (1 - P); }

typedef struct {
  const ac_case *c;
  const uint8_t *mask;
  uint8_t *vis;      /* [B][H][tq][tk]: the position is judged */
  double a_lo, a_hi, logk;
  ac_dropout_verdict *v;
} drop_ctx;

static size_t at(const ac_problem *p, int64_t b, int64_t h, int64_t i, int64_t j)
{
  return (size_t)(((b * p->heads + h) * p->tq + i) * p->tk + j);
}

static void fired(ac_dropout_verdict *v, const char *what)
{
  size_t n = strlen(v->fired);
  snprintf(v->fired + n, sizeof v->fired - n, "%s%s", n ? ", " : "", what);
}

/* One agreement test over the pairs the caller accumulated: fires (the first one fired is named). */
static void agreement(drop_ctx *x, int64_t n, int64_t a, const char *what)
{
  if (n <= 0) return;
  double t = sqrt((double)n * x->logk / 2);
  double hi = (double)n * x->a_hi + t, lo = (double)n * x->a_lo - t;
  x->v->tests++;
  if ((double)a <= hi && (double)a >= lo) return;
  fired(x->v, what);
  if (x->v->failed++) return;
  snprintf(x->v->msg, sizeof x->v->msg,
           "%s agree on %lld of %lld paired entries; independent entries agree on %.0f to %.0f (p = %.9g, "
           "false alarm <= 1e-9)", what, (long long)a, (long long)n, lo < 0 ? 0 : ceil(lo), floor(hi),
           x->c->p.f.dropout_p);
}

/* Pairs of positions x = (b, h, i, j) and y = x + (db, dh, di, dj) over every x whose pair is
 * disjoint from the others (the coordinate that moves, c, has c mod 2s < s for a shift s). */
static void pairs(drop_ctx *x, int64_t db, int64_t dh, int64_t di, int64_t dj, const char *what)
{
  const ac_problem *p = &x->c->p;
  int64_t n = 0, a = 0;
  int64_t s = db + dh + di + dj;   /* one of them is non-zero */
  for (int64_t b = 0; b + db < p->batch; b++)
    for (int64_t h = 0; h + dh < p->heads; h++)
      for (int64_t i = 0; i + di < p->tq; i++)
        for (int64_t j = 0; j + dj < p->tk; j++) {
          int64_t c = db ? b : dh ? h : di ? i : j;
          if (c % (2 * s) >= s) continue;
          size_t u = at(p, b, h, i, j), w = at(p, b + db, h + dh, i + di, j + dj);
          if (!x->vis[u] || !x->vis[w]) continue;
          n++;
          a += x->mask[u] == x->mask[w];
        }
  agreement(x, n, a, what);
}

void ac_dropout_mask_judge(const ac_case *c, const uint8_t *mask, ac_dropout_verdict *v)
{
  const ac_problem *p = &c->p;
  memset(v, 0, sizeof *v);
  drop_ctx x = {.c = c, .mask = mask, .v = v};
  int64_t n = p->batch * p->heads * p->tq * p->tk;
  x.vis = ac_xmalloc((size_t)(n ? n : 1));
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t j = 0; j < p->tk; j++) {
          size_t u = at(p, b, h, i, j);
          x.vis[u] = (uint8_t)ac_features_visible(c, b, h, i, j);
          v->visible += x.vis[u];
          v->kept += x.vis[u] && mask[u];
        }
  /* the tests this shape runs: the fraction, heads, batches, and a power-of-two shift of rows and keys each */
  int k = 3;
  for (int64_t s = 1; s < p->tq; s *= 2) k++;
  for (int64_t s = 1; s < p->tk; s *= 2) k++;
  x.logk = log(2.0 * k / DROP_ALPHA);
  double q = 1 - p->f.dropout_p, plo = q - DROP_QTOL < 0 ? 0 : q - DROP_QTOL, phi = q + DROP_QTOL > 1 ? 1 : q + DROP_QTOL;
  if (p->f.dropout_p == 0) plo = 1;   /* p = 0 drops nothing: FlashAttention runs no dropout at all */
  /* a(P) is a parabola with its minimum at P = 1/2 */
  x.a_hi = fmax(agree(plo), agree(phi));
  x.a_lo = plo <= 0.5 && phi >= 0.5 ? 0.5 : fmin(agree(plo), agree(phi));
  double nv = (double)v->visible, t = p->f.dropout_p == 0 ? 0 : sqrt(nv * x.logk / 2);
  v->lo = nv * plo - t, v->hi = nv * phi + t;
  if (v->visible > 0) {
    v->tests++;
    if ((double)v->kept < v->lo || (double)v->kept > v->hi) {
      v->failed++;
      fired(v, "kept fraction");
      snprintf(v->msg, sizeof v->msg,
               "kept %lld of %lld visible entries (%.4f); a keep probability within 2^-8 of 1 - p = %.9g keeps %.0f "
               "to %.0f (false alarm <= 1e-9)", (long long)v->kept, (long long)v->visible, (double)v->kept / nv, q,
               v->lo < 0 ? 0 : ceil(v->lo), floor(v->hi));
    }
  }
  pairs(&x, 0, 1, 0, 0, "heads (h, h+1)");
  pairs(&x, 1, 0, 0, 0, "batches (b, b+1)");
  char what[48];
  for (int64_t s = 1; s < p->tq; s *= 2) {
    snprintf(what, sizeof what, "rows (i, i+%lld)", (long long)s);
    pairs(&x, 0, 0, s, 0, what);
  }
  for (int64_t s = 1; s < p->tk; s *= 2) {
    snprintf(what, sizeof what, "keys (j, j+%lld)", (long long)s);
    pairs(&x, 0, 0, 0, s, what);
  }
  free(x.vis);
}

void ac_dropout_mask_report(const ac_case *c, ac_report *rep)
{
  if (!(c->p.f.used & AC_FEAT_DROPOUT) || !c->dropout_mask) return;
  ac_dropout_verdict v;
  ac_dropout_mask_judge(c, c->dropout_mask, &v);
  rep->has_dropout = 1;
  rep->drop_p = c->p.f.dropout_p;
  rep->drop_visible = v.visible, rep->drop_kept = v.kept;
  rep->drop_tests = v.tests, rep->drop_failed = v.failed;
  if (v.failed == 1) ac_report_add(rep, AC_V_DROPOUT_MASK, "dropout mask: %s", v.msg);
  if (v.failed > 1) ac_report_add(rep, AC_V_DROPOUT_MASK, "dropout mask: %s; %d tests fired: %s", v.msg, v.failed, v.fired);
}
