/* grad.c: the driver of the backward oracle (docs/backward.md): options, row and column
 * selection, the rule table of grad.h, and the Ziv loop over passes of growing precision.
 *
 * A pass at precision p visits every (batch, kv head) with a pending element: each row of its
 * query heads that has a pending dQ or sees a pending column (gradrow.c) encloses dQ_i and adds
 * its terms into the column accumulators; then every pending element whose enclosure rounds
 * alike at both ends is decided. Precisions follow the forward's schedule (53 + 64, 53 + 128,
 * then x1.5) up to the cap; what is left then is reported unresolved. Exact zeros come out of
 * the exact tests as the point [0, 0] and need no precision. Single-threaded, so the result
 * depends only on the case and the options. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gradblas.h"
#include "gradint.h"

void ac_grad_opts_init(ac_grad_opts *o)
{
  memset(o, 0, sizeof *o);
  o->prec_cap = 1L << 16;
  o->formats = 1u << AC_F64;
}

static void tensor_init(ac_grad_tensor *T, int64_t n, int64_t d, const uint8_t *sel, uint32_t formats)
{
  memset(T, 0, sizeof *T);
  T->n = n;
  T->d = d;
  T->slot = ac_xmalloc((size_t)(n ? n : 1) * sizeof *T->slot);
  for (int64_t x = 0; x < n; x++) T->slot[x] = sel[x] ? T->nsel++ : -1;
  size_t m = (size_t)(T->nsel * d > 0 ? T->nsel * d : 1);
  T->el = ac_xcalloc(m, sizeof *T->el);
  for (int f = 0; f < AC_NDTYPES; f++)
    if (formats & (1u << f)) T->bits[f] = ac_xcalloc(m, sizeof *T->bits[f]);
}

static void tensor_free(ac_grad_tensor *T)
{
  free(T->slot);
  free(T->el);
  for (int f = 0; f < AC_NDTYPES; f++) free(T->bits[f]);
  memset(T, 0, sizeof *T);
}

void ac_grad_result_free(ac_grad_result *r)
{
  tensor_free(&r->dq);
  tensor_free(&r->dk);
  tensor_free(&r->dv);
  tensor_free(&r->dsink);
}

typedef struct {
  const ac_problem *p;
  ac_grad_result *r;
  ac_gr_ws g;
  uint32_t *pend[4];        /* dq, dk, dv, dsink: formats still to decide per stored element */
  mpfr_t *sglo, *sghi;      /* heads: dσ_h of the current MPFR pass */
  long double *fs;          /* heads * 3: dσ_h of the extended pass (Σ dS, Σ |dS|, Σ eS) */
  int64_t *fm;              /* heads: its rows, -1 when a row could not be bounded */
  long cap;                 /* the precision cap */
  ac_gr_classes *scls;      /* the classes of dσ (second MPFR pass), or NULL */
  mpfr_t *dqlo, *dqhi;      /* dk */
  int pass;
} gjob;

static void set_undefined(gjob *J, ac_grad_tensor *T, uint32_t *pend, int64_t e)
{
  if (!pend[e]) return;
  ac_grad_elem *el = &T->el[e];
  el->g = NAN;
  el->g_err = 0;
  el->accept = AC_ACCEPT_NAN | AC_ACCEPT_PINF | AC_ACCEPT_NINF;
  el->how = AC_HOW_EXACT;
  for (int f = 0; f < AC_NDTYPES; f++)
    if (T->bits[f]) T->bits[f][e] = ac_nan_bits((ac_dtype)f);
  pend[e] = 0;
  J->r->n_exact++;
}

/* Element e of T from its enclosure [lo, hi]: the formats both ends round alike into. */
static void decide(gjob *J, ac_grad_tensor *T, uint32_t *pend, int64_t e, mpfr_t lo, mpfr_t hi)
{
  if (!pend[e]) return;
  ac_or_ws *w = &J->g.w;
  if (w->drop) {   /* dropout: [lo, hi] encloses the gradient without its factor 1/(1-p) (docs/backward.md §8) */
    ac_or_drop_interval(w, lo, hi);
    mpfr_swap(lo, w->dlo);
    mpfr_swap(hi, w->dhi);
  }
  ac_grad_elem *el = &T->el[e];
  if (mpfr_zero_p(lo)) mpfr_set_zero(lo, 1);   /* exact zeros are +0 */
  if (mpfr_zero_p(hi)) mpfr_set_zero(hi, 1);
  AC_ASSERT(mpfr_lessequal_p(lo, hi), "the enclosure of a gradient element is an interval");
  el->accept = AC_ACCEPT_VALUE;
  ac_or_interval_double(lo, hi, &el->g, &el->g_err);
  mpfr_t bp;
  mpfr_init2(bp, 72);
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!(pend[e] & (1u << f))) continue;
    uint64_t a, b;
    int rc = ac_or_round_decide((ac_dtype)f, lo, hi, &a, &b, bp);
    /* an enclosure around 0 whose ends both round to a zero: the element rounds to a zero of
     * either sign (a kernel's -0 and +0 match alike); +0, as the exact zeros */
    if (rc && ac_bits_iszero((ac_dtype)f, a) && ac_bits_iszero((ac_dtype)f, b)) a = 0, rc = 0;
    if (rc == 0) {
      T->bits[f][e] = a;
      pend[e] &= ~(1u << f);
    }
  }
  mpfr_clear(bp);
  if (pend[e]) return;
  ac_grad_result *r = J->r;
  if (mpfr_equal_p(lo, hi)) {
    el->how = AC_HOW_EXACT;
    r->n_exact++;
    r->n_zero += mpfr_zero_p(lo) != 0;
  } else {
    el->how = AC_HOW_ROUNDED;
    r->n_rounded++;
  }
  r->n_highprec += J->pass > 1;
}

/* Element e of dV still pending after decide: each format whose breakpoint the enclosure [lo, hi]
 * holds alone is decided by the sign of the element minus that breakpoint (ac_gr_classes_sign, on
 * the classes C of local column k, element t), the exact weights' work where no precision below the
 * weights' own exponent would do (a key at e^{-65504}: 94,500 bits). */
static void sign_decide(gjob *J, uint32_t *pend, int64_t e, mpfr_t lo, mpfr_t hi, const ac_gr_classes *C, int64_t k,
                        int64_t t, mpfr_prec_t prec, long cap)
{
  ac_grad_tensor *T = &J->r->dv;
  mpfr_t bp;
  mpfr_init2(bp, 72);
  for (int f = 0; f < AC_NDTYPES && pend[e]; f++) {
    uint64_t a, b;
    if (!(pend[e] & (1u << f)) || ac_or_round_decide((ac_dtype)f, lo, hi, &a, &b, bp) != 1) continue;
    int s = ac_gr_classes_sign(&J->g, C, k, t, bp, prec, cap);
    if (!s) continue;
    T->bits[f][e] = s < 0 ? a : b; /* below the breakpoint: the rounding of the lower end */
    pend[e] &= ~(1u << f);
  }
  mpfr_clear(bp);
  if (pend[e]) return;
  T->el[e].how = AC_HOW_ROUNDED;
  J->r->n_rounded++;
  J->r->n_highprec++;
}

static int any_pending(const uint32_t *pend, int64_t e0, int64_t d)
{
  for (int64_t t = 0; t < d; t++)
    if (pend[e0 + t]) return 1;
  return 0;
}

/* The local columns of (b, kvh): map[j], their slots, pending flags; returns their number and
 * the smallest key with a pending column (tk when none) in *jmin. */
static int64_t head_columns(gjob *J, int64_t b, int64_t kvh, int64_t *map, int64_t *slot, uint8_t *pend,
                            int64_t *jmin)
{
  const ac_problem *p = J->p;
  int64_t nc = 0;
  *jmin = p->tk;
  for (int64_t j = 0; j < p->tk; j++) {
    int64_t s = J->r->dk.slot[(b * p->kv_heads + kvh) * p->tk + j];
    map[j] = -1;
    if (s < 0) continue;
    map[j] = nc;
    slot[nc] = s;
    pend[nc] = any_pending(J->pend[1], s * p->dk, p->dk) || any_pending(J->pend[2], s * p->dv, p->dv);
    if (pend[nc] && j < *jmin) *jmin = j;
    nc++;
  }
  return nc;
}

/* The rule table of grad.h for a row whose P or D is undefined. */
static void row_undefined(gjob *J, int64_t sq, int want_dq, const int64_t *map, const int64_t *slot, int64_t n)
{
  const ac_problem *p = J->p;
  ac_grad_result *r = J->r;
  ac_gr_ws *g = &J->g;
  if (want_dq)
    for (int64_t t = 0; t < p->dk; t++) set_undefined(J, &r->dq, J->pend[0], sq * p->dk + t);
  if (r->dsink.nsel) set_undefined(J, &r->dsink, J->pend[3], r->dsink.slot[g->w.h]);
  for (int64_t j = 0; j < n; j++) {
    int64_t k = g->kidx[j] < 0 ? -1 : map[g->kidx[j]];
    if (k < 0) continue;
    int64_t s = slot[k];
    for (int64_t t = 0; t < p->dk; t++) set_undefined(J, &r->dk, J->pend[1], s * p->dk + t);
    for (int64_t t = 0; t < p->dv; t++)
      if (g->cls == AC_GR_ROW_PBAD || g->odbad[t]) set_undefined(J, &r->dv, J->pend[2], s * p->dv + t);
  }
}

/* One row of the pass: returns after deciding what it can of dQ_i. */
static void row_step(gjob *J, int64_t b, int64_t h, int64_t i, int64_t jmin, ac_gr_cols *cols, const int64_t *slot,
                     mpfr_prec_t prec)
{
  const ac_problem *p = J->p;
  ac_grad_result *r = J->r;
  int64_t sq = r->dq.slot[ac_rowidx(p, b, h, i)];
  int want_dq = sq >= 0 && any_pending(J->pend[0], sq * p->dk, p->dk);
  /* visible keys are a prefix [0, n) unless a window or a boolean mask picks them */
  int64_t n = p->f.used ? p->tk : ac_visible_count(p, i);
  if (!want_dq && n <= jmin && !(r->dsink.nsel && J->pend[3][r->dsink.slot[h]])) return;
  ac_gr_ws *g = &J->g;
  if (n > 0) n = ac_gr_row_load(g, b, h, i, 1);
  if (n <= 0) {   /* empty row: dQ_i = 0 exactly */
    for (int64_t t = 0; t < p->dk && want_dq; t++) {
      mpfr_set_zero(J->dqlo[t], 1);
      mpfr_set_zero(J->dqhi[t], 1);
      decide(J, &r->dq, J->pend[0], sq * p->dk + t, J->dqlo[t], J->dqhi[t]);
    }
    return;
  }
  if (g->cls != AC_GR_ROW_OK) row_undefined(J, sq, want_dq, cols->map, slot, n);
  if (g->cls == AC_GR_ROW_PBAD) return;
  int dq = want_dq && g->cls == AC_GR_ROW_OK;
  int sp = r->dsink.nsel && J->pend[3][r->dsink.slot[h]];
  cols->sglo = sp ? &J->sglo[h] : NULL;
  cols->sghi = sp ? &J->sghi[h] : NULL;
  if (cols->classes) ac_gr_classes_add(g, cols->classes, cols);
  if (J->scls && sp && g->sink >= 0 && g->cls == AC_GR_ROW_OK) ac_gr_classes_add_sink(g, J->scls, h);
  ac_gr_row_pass(g, prec, dq ? J->dqlo : NULL, J->dqhi, cols);
  if (!dq) return;
  for (int64_t t = 0; t < p->dk; t++) {
    /* what the first pass left: the exact tests past one key */
    if (J->pass == 2 && !g->capped && J->pend[0][sq * p->dk + t] && !g->dqz[t]) ac_gr_dq_exact(g, t, prec, J->dqlo[t], J->dqhi[t]);
    decide(J, &r->dq, J->pend[0], sq * p->dk + t, J->dqlo[t], J->dqhi[t]);
  }
}

static void acc_init(mpfr_t **lo, mpfr_t **hi, int64_t n, mpfr_prec_t prec)
{
  *lo = ac_xmalloc((size_t)(n ? n : 1) * sizeof **lo);
  *hi = ac_xmalloc((size_t)(n ? n : 1) * sizeof **hi);
  for (int64_t x = 0; x < n; x++) {
    mpfr_init2((*lo)[x], prec);
    mpfr_init2((*hi)[x], prec);
    mpfr_set_zero((*lo)[x], 1);
    mpfr_set_zero((*hi)[x], 1);
  }
}

static void acc_free(mpfr_t *lo, mpfr_t *hi, int64_t n)
{
  for (int64_t x = 0; x < n; x++) {
    mpfr_clear(lo[x]);
    mpfr_clear(hi[x]);
  }
  free(lo);
  free(hi);
}

/* One pass over (b, kvh) at precision prec. */
static void head_pass(gjob *J, int64_t b, int64_t kvh, mpfr_prec_t prec)
{
  const ac_problem *p = J->p;
  ac_grad_result *r = J->r;
  int64_t *map = ac_xmalloc((size_t)p->tk * sizeof *map), *slot = ac_xmalloc((size_t)p->tk * sizeof *slot), jmin;
  uint8_t *cp = ac_xmalloc((size_t)p->tk);
  int64_t nc = head_columns(J, b, kvh, map, slot, cp, &jmin);
  ac_gr_cols cols = {.map = map, .pend = cp};
  acc_init(&cols.klo, &cols.khi, nc * p->dk, prec);
  acc_init(&cols.vlo, &cols.vhi, nc * p->dv, prec);
  int any = 0;
  for (int64_t k = 0; k < nc; k++) any |= cp[k];
  /* the classes of rows of equal score shape (gradexact.c) know no keep-mask: not with dropout */
  cols.classes = J->pass == 2 && any && !J->g.w.drop ? ac_gr_classes_new(nc, p->dk, p->dv) : NULL;
  int64_t hpg = p->heads / p->kv_heads;
  for (int64_t hh = 0; hh < hpg; hh++)
    for (int64_t i = 0; i < p->tq; i++) row_step(J, b, kvh * hpg + hh, i, jmin, &cols, slot, prec);
  for (int64_t k = 0; k < nc; k++) {
    if (!cp[k]) continue;
    for (int64_t t = 0; t < p->dk; t++) {
      int64_t e = slot[k] * p->dk + t;
      if (!J->pend[1][e]) continue;
      ac_gr_mul_scale(&J->g, cols.klo[k * p->dk + t], cols.khi[k * p->dk + t]);
      if (cols.classes)
        ac_gr_classes_exact(cols.classes, &J->g.w.sc, k, 'k', t, prec, cols.klo[k * p->dk + t], cols.khi[k * p->dk + t]);
      decide(J, &r->dk, J->pend[1], e, cols.klo[k * p->dk + t], cols.khi[k * p->dk + t]);
    }
    for (int64_t t = 0; t < p->dv; t++) {
      if (cols.classes && J->pend[2][slot[k] * p->dv + t])
        ac_gr_classes_exact(cols.classes, &J->g.w.sc, k, 'v', t, prec, cols.vlo[k * p->dv + t], cols.vhi[k * p->dv + t]);
      decide(J, &r->dv, J->pend[2], slot[k] * p->dv + t, cols.vlo[k * p->dv + t], cols.vhi[k * p->dv + t]);
      if (cols.classes && J->pend[2][slot[k] * p->dv + t])
        sign_decide(J, J->pend[2], slot[k] * p->dv + t, cols.vlo[k * p->dv + t], cols.vhi[k * p->dv + t], cols.classes,
                    k, t, prec, J->cap);
    }
  }
  ac_gr_classes_free(cols.classes);
  acc_free(cols.klo, cols.khi, nc * p->dk);
  acc_free(cols.vlo, cols.vhi, nc * p->dv);
  free(map); free(slot); free(cp);
}

/* Element e of T from the extended-precision pass: value v within err. Decides the formats both ends of the
 * enclosure (pushed out by one step) round alike into; never around 0. */
static void fast_decide(gjob *J, ac_grad_tensor *T, uint32_t *pend, int64_t e, double v, double err)
{
  if (!pend[e]) return;
  ac_grad_elem *el = &T->el[e];
  el->g = v;
  el->g_err = err;
  el->accept = AC_ACCEPT_VALUE;
  double lo = nextafter(v - err * (1 + 0x1p-50), -INFINITY), hi = nextafter(v + err * (1 + 0x1p-50), INFINITY);
  if (!(lo > 0 || hi < 0)) return;
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!(pend[e] & (1u << f))) continue;
    uint64_t a = ac_encode_f64((ac_dtype)f, lo);
    if (a != ac_encode_f64((ac_dtype)f, hi)) continue;
    T->bits[f][e] = a;
    pend[e] &= ~(1u << f);
  }
  if (pend[e]) return;
  el->how = AC_HOW_ROUNDED;
  J->r->n_rounded++;
  J->r->n_fast++;
}

/* The extended-precision pass over (b, kvh): every row of finite inputs; the columns only when every row
 * that sees them is such a row. */
static void fast_head_pass(gjob *J, int64_t b, int64_t kvh)
{
  const ac_problem *p = J->p;
  ac_grad_result *r = J->r;
  ac_gr_ws *g = &J->g;
  int64_t *map = ac_xmalloc((size_t)p->tk * sizeof *map), *slot = ac_xmalloc((size_t)p->tk * sizeof *slot), jmin;
  uint8_t *cp = ac_xmalloc((size_t)p->tk);
  int64_t nc = head_columns(J, b, kvh, map, slot, cp, &jmin), hpg = p->heads / p->kv_heads;
  ac_gr_cols cols = {.map = map, .pend = cp};
  ac_gr_fcols fc;
  ac_gr_fcols_init(&fc, nc, p->dk, p->dv);
  double *dq = ac_xmalloc((size_t)p->dk * 2 * sizeof *dq), *edq = dq + p->dk;
  int ok = 1;
  for (int64_t hh = 0; hh < hpg; hh++)
    for (int64_t i = 0; i < p->tq; i++) {
      int64_t h = kvh * hpg + hh, sq = r->dq.slot[ac_rowidx(p, b, h, i)];
      int64_t n = p->f.used ? p->tk : ac_visible_count(p, i);
      int want_dq = sq >= 0 && any_pending(J->pend[0], sq * p->dk, p->dk);
      if ((!want_dq && n <= jmin) || n <= 0 || ac_gr_row_load(g, b, h, i, 0) == 0) continue;
      int sp = r->dsink.nsel && J->pend[3][r->dsink.slot[h]] && J->fm[h] >= 0;
      fc.sg = sp ? J->fs + 3 * h : NULL;
      fc.sm = sp ? J->fm + h : NULL;
      if (g->cls != AC_GR_ROW_OK || ac_gr_fast_row(g, want_dq ? dq : NULL, edq, &cols, &fc)) {
        if (r->dsink.nsel) J->fm[h] = -1;
        ok &= n <= jmin;   /* n = tk with a window or boolean mask: every such row counts */
        continue;
      }
      if (want_dq)
        for (int64_t t = 0; t < p->dk; t++) fast_decide(J, &r->dq, J->pend[0], sq * p->dk + t, dq[t], edq[t]);
    }
  for (int64_t k = 0; k < nc && ok; k++) {
    if (!cp[k]) continue;
    double v, e;
    for (int64_t t = 0; t < p->dk; t++) {
      ac_gr_fast_col(&fc, &g->w.sc, k, 'k', t, p->dk, &v, &e);
      fast_decide(J, &r->dk, J->pend[1], slot[k] * p->dk + t, v, e);
    }
    for (int64_t t = 0; t < p->dv; t++) {
      ac_gr_fast_col(&fc, &g->w.sc, k, 'v', t, p->dv, &v, &e);
      fast_decide(J, &r->dv, J->pend[2], slot[k] * p->dv + t, v, e);
    }
  }
  ac_gr_fcols_free(&fc);
  free(dq); free(map); free(slot); free(cp);
}

/* Past the cap: every element left keeps its last binary64 value, reported unresolved. */
static void mark_unresolved(gjob *J)
{
  ac_grad_tensor *T[4] = {&J->r->dq, &J->r->dk, &J->r->dv, &J->r->dsink};
  for (int k = 0; k < 4; k++)
    for (int64_t e = 0; e < T[k]->nsel * T[k]->d; e++) {
      if (!J->pend[k][e]) continue;
      for (int f = 0; f < AC_NDTYPES; f++)
        if (J->pend[k][e] & (1u << f)) T[k]->bits[f][e] = ac_encode_f64((ac_dtype)f, T[k]->el[e].g);
      T[k]->el[e].how = AC_HOW_UNRESOLVED;
      T[k]->el[e].accept = AC_ACCEPT_VALUE;
      J->pend[k][e] = 0;
      J->r->n_unresolved++;
    }
}

static int select_all(const ac_problem *p, const ac_grad_opts *o, uint8_t *rs, uint8_t *cs, ac_err *e)
{
  if (ac_oracle_select_rows(p, o->rows, o->seed, rs, e)) return -1;
  ac_problem pc = *p;   /* columns as the rows of a problem with kv_heads heads of tk queries */
  pc.heads = p->kv_heads;
  pc.tq = p->tk;
  if (ac_oracle_select_rows(&pc, o->cols, o->seed ^ 0x636f6c73, cs, e)) {
    ac_err e2 = *e;
    return ac_err_set(e, "columns: %s", e2.msg);
  }
  return 0;
}

/* The carrier's tensors and selection for a varlen case (gradlayout.c). */
void ac_gr_tensor_init(ac_grad_tensor *T, int64_t n, int64_t d, const uint8_t *sel, uint32_t formats)
{
  tensor_init(T, n, d, sel, formats);
}
int ac_gr_select(const ac_problem *p, const ac_grad_opts *o, uint8_t *rs, uint8_t *cs, ac_err *e)
{
  return select_all(p, o, rs, cs, e);
}

/* The extended pass over every (batch, kv head) whose rows or columns hold an element left. */
static void fast_pass(gjob *J)
{
  for (int64_t b = 0; b < J->p->batch; b++)
    for (int64_t kvh = 0; kvh < J->p->kv_heads; kvh++) fast_head_pass(J, b, kvh);
}

/* fast: the extended pass first, with its finer exponential where the matrix-product level ran (fine:
 * what that level left, to about 2^-50, the coarse pass would leave too) or for what the coarse pass
 * left (not with sinks, whose dσ sums every row of a head in one pass); then the MPFR passes. */
static void run_passes(gjob *J, long cap, int fast, int fine)
{
  const ac_problem *p = J->p;
  ac_grad_tensor *ds = &J->r->dsink;
  ac_grad_tensor *T[4] = {&J->r->dq, &J->r->dk, &J->r->dv, ds};
  if (fast) {
    J->g.exp_fine = fine;
    fast_pass(J);
    int left = 0;
    for (int k = 0; k < 3 && !left; k++) left = any_pending(J->pend[k], 0, T[k]->nsel * T[k]->d);
    if (!fine && left && !ds->nsel) {
      J->g.exp_fine = 1;
      fast_pass(J);
    }
    for (int64_t h = 0; h < ds->nsel; h++) {
      if (J->fm[h] < 0) continue;   /* a row of the head was not for the extended pass */
      long double m = (long double)J->fm[h] + 1, gm = m * 0x1p-64L / (1 - m * 0x1p-64L), *f = J->fs + 3 * h;
      double v = (double)f[0];
      double e = (double)(1.01L * (1.01L * f[2] + gm * f[1]) + 0x1p-53L * fabsl((long double)v)) + 0x1p-1074;
      fast_decide(J, ds, J->pend[3], ds->slot[h], v, e);
    }
  }
  mpfr_prec_t prec = ac_or_next_prec(64, 53);
  for (J->pass = 1;; J->pass++) {
    int left = 0;
    for (int k = 0; k < 4 && !left; k++) left = any_pending(J->pend[k], 0, T[k]->nsel * T[k]->d);
    if (!left) return;
    J->r->passes = J->pass;
    if (J->r->max_prec < prec) J->r->max_prec = prec;
    for (int64_t h = 0; h < ds->nsel; h++) {
      mpfr_set_prec(J->sglo[h], prec);
      mpfr_set_prec(J->sghi[h], prec);
      mpfr_set_zero(J->sglo[h], 1);
      mpfr_set_zero(J->sghi[h], 1);
    }
    J->scls = J->pass == 2 && !J->g.w.drop && any_pending(J->pend[3], 0, ds->nsel) ? ac_gr_classes_new(ds->nsel, 1, 0) : NULL;
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kvh = 0; kvh < p->kv_heads; kvh++) head_pass(J, b, kvh, prec);
    for (int64_t h = 0; h < ds->nsel; h++) {
      if (J->scls && J->pend[3][h]) ac_gr_classes_exact(J->scls, &J->g.w.sc, h, 's', 0, prec, J->sglo[h], J->sghi[h]);
      decide(J, ds, J->pend[3], ds->slot[h], J->sglo[h], J->sghi[h]);
    }
    ac_gr_classes_free(J->scls);
    J->scls = NULL;
    mpfr_prec_t np = ac_or_next_prec(prec, 53);
    if (np > cap) {
      mark_unresolved(J);
      return;
    }
    prec = np;
  }
}

int ac_grad_run(const ac_case *c, const void *dout, const ac_grad_opts *o, ac_grad_result *r, ac_err *e)
{
  if (c->lay) return ac_grad_run_layout(c, dout, o, r, e);   /* per sequence (gradlayout.c) */
  const ac_problem *p = &c->p;
  memset(r, 0, sizeof *r);
  if (p->f.used & ~(uint32_t)(AC_FEAT_WINDOW | AC_FEAT_BOOL_MASK | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS |
                              AC_FEAT_SOFTCAP | AC_FEAT_DROPOUT))
    return ac_err_set(e, "the backward oracle covers plain attention, windows, boolean masks, softcap, ALiBi, bias, "
                         "sinks and dropout only (not descales or per-tensor dtypes)");
  if ((p->f.used & AC_FEAT_DROPOUT) && !c->dropout_mask) return ac_err_set(e, "dropout: the case has no dropout_mask");
  if (ac_problem_quantized(p)) return ac_err_set(e, "the backward oracle takes no quantized tensors (docs/quantized.md)");
  ac_or_scale sc;
  if (ac_or_scale_init(&sc, p, e)) return -1;
  int64_t nrows = p->batch * p->heads * p->tq, ncols = p->batch * p->kv_heads * p->tk;
  uint8_t *rs = ac_xmalloc((size_t)(nrows ? nrows : 1)), *cs = ac_xmalloc((size_t)(ncols ? ncols : 1));
  if (select_all(p, o, rs, cs, e)) {
    free(rs); free(cs);
    return -1;
  }
  double t0 = ac_now();
  r->p = *p;
  r->formats = (o->formats | (1u << p->dtype)) & ((1u << AC_NDTYPES) - 1);
  tensor_init(&r->dq, nrows, p->dk, rs, r->formats);
  tensor_init(&r->dk, ncols, p->dk, cs, r->formats);
  tensor_init(&r->dv, ncols, p->dv, cs, r->formats);
  memset(rs, (p->f.used & AC_FEAT_SINKS) != 0, (size_t)p->heads);   /* dσ_h of every head */
  tensor_init(&r->dsink, p->heads, 1, rs, r->formats);
  free(rs); free(cs);
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  gjob J = {.p = p, .r = r};
  ac_oracle_opts fo;
  ac_oracle_opts_init(&fo);
  long cap = o->prec_cap > 0 ? o->prec_cap : fo.prec_cap;
  J.cap = cap;
  ac_gr_ws_init(&J.g, c, dout, &fo, &sc, cap);
  ac_grad_tensor *T[4] = {&r->dq, &r->dk, &r->dv, &r->dsink};
  for (int k = 0; k < 4; k++) {
    int64_t m = T[k]->nsel * T[k]->d;
    J.pend[k] = ac_xmalloc((size_t)(m ? m : 1) * sizeof *J.pend[k]);
    for (int64_t x = 0; x < m; x++) J.pend[k][x] = r->formats;
  }
  acc_init(&J.dqlo, &J.dqhi, p->dk, 64);
  acc_init(&J.sglo, &J.sghi, p->heads, 64);
  J.fs = ac_xcalloc((size_t)p->heads * 3, sizeof *J.fs);
  J.fm = ac_xcalloc((size_t)p->heads, sizeof *J.fm);
  /* the matrix-product level first (gradblas.h) where it applies (not with dropout: ac_gr_blas_applies
   * leaves those cases to the passes below); under a softcap the MPFR passes alone (gradcap.c; the
   * extended pass has no certified tanh), and with dropout (the factor 1/(1-p) is taken by decide) */
  const int blas = !o->no_fast && !o->no_blas && ac_gr_blas_applies(p, r->formats);
  if (blas) ac_gr_blas_level(c, dout, r, J.pend, o->threads);
  run_passes(&J, cap, !o->no_fast && p->dtype != AC_F64 && !J.g.capped && !J.g.w.drop, blas || o->fine);
  acc_free(J.dqlo, J.dqhi, p->dk);
  for (int k = 0; k < 4; k++) free(J.pend[k]);
  acc_free(J.sglo, J.sghi, p->heads);
  free(J.fs); free(J.fm);
  ac_gr_ws_free(&J.g);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  r->seconds = ac_now() - t0;
  return 0;
}
