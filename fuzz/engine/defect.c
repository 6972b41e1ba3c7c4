/* defect.c: a finding's defect fingerprint, from judging its minimized case again (docs/fuzzing.md
 * "Defects"): how the case fails (its failure mode, fmode.c; a METAMORPHIC or backward finding whose
 * forward FAILs on the case takes the forward's, a failure of NaN or inf inputs that of the case
 * with zeros in their place when that fails), what it needs (each feature it has taken away in
 * turn: a feature whose absence leaves the same failure is not needed, and the case goes on
 * without it), and whether the failure needs its dtype (the same values in a wider dtype pass).
 * Two findings with equal fingerprints fail the same way; defects.c joins them after judging the
 * defect's own case once more. Two whose needs contain one another share a trigger
 * (ac_defect_trigger); defects.c joins them when both cases pass without it
 * (ac_defect_gone_without). */
#include "config.h"
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "variants.h"

static const char *const qty_names[AC_NQTY] = {"o", "lse", "dq", "dk", "dv", "dsinks"};

/* The names of AC_DF_ bits below the variants. */
static const char *const df_names[] = {"causal", "causal-bottom-right", "gqa", "heads", "batches", "dv-ne-dk",
                                       "scale", "nonfinite", "strided", "quantized", "varlen", "paged"};
#define NDF (int)(sizeof df_names / sizeof df_names[0])

static int derived(int k) { return k == AC_V_METAMORPHIC || k == AC_V_GRAD_FAIL || k == AC_V_GRAD_METAMORPHIC; }

/* Where the kernel does not take dense case c but takes it as one varlen sequence (a kernel of
 * layout cases only), that form into *out: 1; else 0. */
static int kernel_form(const ac_eval_ctx *x, const ac_case *c, ac_case *out)
{
  char why[256];
  ac_err e;
  if (c->lay || ac_kernel_supports(x->kernel, &c->p, why, sizeof why) || ac_dcase_as_varlen(c, out, &e)) return 0;
  if (ac_kernel_supports(x->kernel, &out->p, why, sizeof why)) return 1;
  ac_case_free(out);
  return 0;
}

/* A case of one varlen sequence as its dense case (the cases below are built from dense ones; judge
 * gives a kernel of layout cases only the varlen form again). */
static void unwrap(ac_case *c)
{
  ac_case d;
  ac_err e;
  if (!c->lay || ac_dcase_layout_kept(c) || ac_dcase_seq(c, 0, &d, &e)) return;
  ac_case_free(c);
  *c = d;
}

/* c judged as a finding of kind k is (every row when all_rows; the metamorphic check and the
 * backward only for their kinds; a race run again up to 32 times), in the form the kernel takes. */
static void judge(const ac_eval_ctx *x, const ac_case *c, int k, int all_rows, ac_eval *ev)
{
  ac_eval_ctx y = *x;
  ac_err e;
  ac_case v;
  const int wrapped = kernel_form(x, c, &v);
  y.rows_all = all_rows;
  y.metamorphic = k == AC_V_METAMORPHIC || k == AC_V_GRAD_METAMORPHIC ? AC_META_ALWAYS : AC_META_OFF;
  if (k != AC_V_GRAD_FAIL && k != AC_V_GRAD_METAMORPHIC) y.grad = 0;
  ac_eval_case(&y, wrapped ? &v : c, k == AC_V_NONDETERMINISTIC ? 32 : 0, ev, &e);
  if (wrapped) ac_case_free(&v);
}

/* A case judged on every row and taken apart: at most AC_DEFECT_MAX_WORK of the oracle's work
 * (rows x keys x (dk + dv)) in at most AC_DEFECT_MAX_ROWS rows (a row's own costs, beside its keys). */
static int small_case(const ac_case *c)
{
  const ac_problem *p = &c->p;
  return ac_case_oracle_work(c) <= AC_DEFECT_MAX_WORK && (double)p->batch * (double)p->heads * (double)p->tq <= AC_DEFECT_MAX_ROWS;
}

/* What case c has of what a defect may need (AC_DF_ bits; the variants shifted). */
static uint32_t present(const ac_case *c)
{
  const ac_problem *p = &c->p;
  uint32_t f = (p->f.used & AC_FEAT_ALL) << AC_DF_VARIANT_SHIFT;
  if (p->mask == AC_MASK_CAUSAL || (p->mask == AC_MASK_CAUSAL_BR && p->tq == p->tk)) f |= AC_DF_CAUSAL;
  if (p->mask == AC_MASK_CAUSAL_BR && p->tq != p->tk) f |= AC_DF_CAUSAL_BR;
  if (p->heads != p->kv_heads) f |= AC_DF_GQA;
  else if (p->heads > 1) f |= AC_DF_HEADS;
  if (p->batch > 1) f |= AC_DF_BATCHES;
  if (p->dv != p->dk) f |= AC_DF_DV_NE_DK;
  if (!p->scale_is_default) f |= AC_DF_SCALE;
  if (ac_dcase_nonfinite(c)) f |= AC_DF_NONFINITE;
  if (ac_dcase_strided(c)) f |= AC_DF_STRIDED;
  if (ac_problem_quantized(p)) f |= AC_DF_QUANT;
  if ((p->f.used & AC_FEAT_VARLEN) && ac_dcase_layout_kept(c)) f |= AC_DF_VARLEN;
  if (p->f.used & AC_FEAT_PAGED) f |= AC_DF_PAGED;
  return f;
}

typedef struct {
  const ac_eval_ctx *x;
  ac_defect_fp *fp;
  ac_case cur;                    /* the case without what it was found not to need */
  int64_t worst_i;                /* the row of its worst element as first judged (-1: none) */
  int64_t worst_b, worst_h;       /* its batch and query head (-1: none) */
  int64_t worst_d;                /* its column of o (-1: none, or the LSE's) */
  int stopped;                    /* a judgement timed out: no other begins */
  int cut;                        /* 1: a test was left out for the budget */
  uint32_t trying;                /* the AC_DF_ bits of the feature being taken away */
  uint32_t unsure;                /* AC_DF_ bits the case keeps though not shown to be needed */
} fpstate;

/* Whether another judgement may begin: the budget is counted in judgements of cases of a bounded
 * size (small), never by the clock, so that a finding gets the same fingerprint however busy the
 * machine is; a kernel that timed out once is not run again. */
static int budget_left(const fpstate *s) { return s->fp->evals < AC_DEFECT_MAX_EVALS && !s->stopped; }

/* One judgement of c for the fingerprint, counted. */
static void fp_judge(fpstate *s, const ac_case *c, int k, int all_rows, ac_eval *ev)
{
  judge(s->x, c, k, all_rows, ev);
  s->fp->evals++;
  if (ev->status == AC_RUN_TIMEOUT) s->stopped = 1;
}

/* Takes cand (built: rc 0): it becomes the current case when it fails as the finding does. */
static int try_case(fpstate *s, int rc, ac_case *cand)
{
  if (rc) return 0;
  if (!budget_left(s)) {
    s->cut = 1;   /* a feature left untested: kept */
    ac_case_free(cand);
    return 0;
  }
  ac_eval ev;
  fp_judge(s, cand, s->fp->mode.kind, small_case(cand), &ev);
  if (!ac_fmode_holds(&ev, &s->fp->mode)) {
    /* a FAIL just above its bound (err/W at most 2), or a SUSPECT just above its expected error (err/E),
     * brought just below it (at least half of what it was: a few roundings moved) has not shown that it
     * needs what was taken away */
    const ac_fmode *m = &s->fp->mode;
    const double now = m->kind == AC_V_FAIL ? ev.max_err_w : ev.score;   /* as ac_fmode_of sizes them */
    if ((m->kind == AC_V_FAIL || m->kind == AC_V_SUSPECT) && m->size <= 2 && ev.status == AC_RUN_OK && now >= 0.5 * m->size)
      s->unsure |= s->trying;
    ac_case_free(cand);
    return 0;
  }
  ac_case_free(&s->cur);
  s->cur = *cand;
  return 1;
}

/* try_case of a cut of s->cur; a cut of a layout case that keeps its tokens keeps its layout
 * (ac_dcase_keep_layout), any other is not built. */
static int try_without(fpstate *s, int rc, ac_case *cand) { return try_case(s, ac_dcase_keep_layout(&s->cur, rc, cand), cand); }

/* The worst element's row, batch and head as ev judged it. */
static void note_worst(fpstate *s, const ac_eval *ev)
{
  const ac_worst_elem *w = ac_report_worst(&ev->rep);   /* the worse of o's and the LSE's */
  s->worst_i = ev->worst_i;
  s->worst_b = w && w->valid ? w->b : ev->row.n > 0 ? ev->row.b : -1;
  s->worst_h = w && w->valid ? w->h : ev->row.n > 0 ? ev->row.h : -1;
  s->worst_d = w && w->valid && !w->is_lse ? w->d : -1;
}

/* The first slice (what: ac_dcase_slice's) that fails alike, of the worst element's batch or head, then
 * up to six others from the first. */
static void try_slices(fpstate *s, int what, int64_t n)
{
  ac_case cand;
  ac_err e;
  const int64_t w = what == 0 ? s->worst_b : s->worst_h;
  if (w >= 0 && w < n && try_without(s, ac_dcase_slice(&s->cur, what, w, &cand, &e), &cand)) return;
  for (int64_t i = 0, tried = 0; i < n && tried < 6; i++)
    if (i != w && (tried++, try_without(s, ac_dcase_slice(&s->cur, what, i, &cand, &e), &cand))) return;
}

/* A layout case (varlen beyond one sequence, or paged) without it: the worst element's sequence
 * alone (its dense case: the same rows, keys and values), then up to six others. */
static void try_seqs(fpstate *s)
{
  ac_case cand;
  ac_err e;
  const ac_case *c = &s->cur;
  const int64_t n = ac_layout_nseq(c);
  const int64_t w = s->worst_i >= 0 && s->worst_i < c->p.tq ? ac_layout_seq_of_row(c, s->worst_i) : -1;
  s->trying = c->p.f.used & AC_FEAT_PAGED ? AC_DF_PAGED : AC_DF_VARLEN;
  if (w >= 0 && w < n && try_case(s, ac_dcase_seq(c, w, &cand, &e), &cand)) return;
  for (int64_t b = 0, tried = 0; b < n && tried < 6; b++)
    if (b != w && ac_layout_tq(c, b) > 0 && (tried++, try_case(s, ac_dcase_seq(c, b, &cand, &e), &cand))) return;
}

/* Does the failure need the case's dtype? Its values in the next wider dtype the kernel takes
 * (exactly: every binary16, bfloat16 and fp8 value is a binary32 one, every binary32 a binary64
 * one): -1 when they fail alike there or nothing wider can be judged, else the dtype. */
static int dtype_needed(fpstate *s)
{
  const ac_eval_ctx *x = s->x;
  if (x->precision && !strchr(x->precision, '=')) return -1;   /* one class for every dtype: not comparable */
  ac_dtype d = s->cur.p.dtype;
  if (d != AC_F64 && !budget_left(s)) {
    s->cut = 1;
    return -1;
  }
  const ac_dtype wider[2] = {d == AC_F32 ? AC_F64 : AC_F32, AC_F64};
  for (int i = 0; i < 2 && d != AC_F64 && budget_left(s); i++) {
    ac_case w;
    ac_err e;
    char why[256];
    if (ac_dcase_widen(&s->cur, wider[i], &w, &e)) return -1;
    if (!ac_kernel_supports(x->kernel, &w.p, why, sizeof why)) {
      ac_case_free(&w);
      continue;
    }
    ac_eval ev;
    fp_judge(s, &w, s->fp->mode.kind, 1, &ev);
    ac_case_free(&w);
    return ac_fmode_holds(&ev, &s->fp->mode) ? -1 : (int)d;
  }
  return -1;
}

/* The explicit scale taken away: first a scale ±2^k times the default one where the case fails so
 * with it (then Q times 2^k keeps the scores exactly), then the default scale with the scores kept,
 * else plainly. Only a case with the same scores can show that the failure needs the scale: where Q
 * could only be rescaled and rounded (a failure of rounding can vanish with the values it had), the
 * case keeps its scale and the scale is no part of the needs. */
static void try_scale(fpstate *s)
{
  ac_case cand;
  ac_err e;
  s->trying = 0;
  try_without(s, ac_dcase_snap_scale(&s->cur, &cand, &e), &cand);
  s->trying = AC_DF_SCALE;
  int exact;
  const int rc = ac_dcase_default_scale(&s->cur, 1, &cand, &exact, &e);
  if (try_without(s, rc, &cand) || try_without(s, ac_dcase_default_scale(&s->cur, 0, &cand, NULL, &e), &cand)) return;
  if (!exact && !s->cut) s->unsure |= AC_DF_SCALE;
}

/* The layout, the strides, the batches and the heads of s->cur taken away in turn. */
static void reduce_slices(fpstate *s)
{
  ac_case cand;
  ac_err e;
  const ac_problem *p = &s->cur.p;
  if (ac_dcase_layout_kept(&s->cur)) try_seqs(s);
  s->trying = AC_DF_STRIDED;
  if (ac_dcase_strided(&s->cur)) try_without(s, ac_dcase_contiguous(&s->cur, &cand, &e), &cand);
  s->trying = AC_DF_BATCHES;
  if (p->batch > 1) try_slices(s, 0, p->batch);
  s->trying = AC_DF_GQA | AC_DF_HEADS;
  /* GQA: the kv heads repeated for their query heads (codes and scales too), else a query head alone */
  if (p->heads != p->kv_heads && !try_without(s, ac_dcase_expand_kv(&s->cur, &cand, &e), &cand)) try_slices(s, 1, p->heads);
  if (p->heads > 1 && p->heads == p->kv_heads) try_slices(s, 1, p->heads);
}

/* A case too large to take apart (a METAMORPHIC finding whose forward FAILs, one that needs many keys)
 * made small first: its layout, strides, batches and heads taken away as reduce does, then, where it
 * is still too large, the worst element's query row alone with the keys it sees (a prefix: no
 * variant). 1 when the case is then small. */
static int shrink_large(fpstate *s)
{
  reduce_slices(s);
  const ac_problem *p = &s->cur.p;
  if (!small_case(&s->cur) && !s->cur.lay && !p->f.used && p->tq > 1 && s->worst_i >= 0 && s->worst_i < p->tq) {
    ac_case cand;
    ac_err e;
    s->trying = p->mask == AC_MASK_NONE ? 0 : AC_DF_CAUSAL | AC_DF_CAUSAL_BR;
    try_without(s, ac_dcase_row_unmasked(&s->cur, s->worst_i, &cand, &e), &cand);
  }
  return small_case(&s->cur);
}

/* Every feature of s->cur taken away in turn (the layout, strides, batches and heads already, when
 * sliced). */
static void reduce(fpstate *s, int sliced)
{
  ac_case cand;
  ac_err e;
  const ac_problem *p = &s->cur.p;
  if (!sliced) reduce_slices(s);
  /* the scale two ways, the scores kept (exactly where that can be) or plainly left out; before dv !=
   * dk, as the default scale of a larger head dim pads Q and K */
  if (!p->scale_is_default) try_scale(s);
  s->trying = AC_DF_DV_NE_DK;
  /* a V wider than K: its first dk columns, or where the worst element's column is not one of them,
   * the dk columns from it first */
  const int past = p->dv > p->dk && s->worst_d >= p->dk;
  if ((!past || !try_without(s, ac_dcase_dv_eq_dk(&s->cur, s->worst_d, &cand, &e), &cand)) && p->dv != p->dk)
    try_without(s, ac_dcase_dv_eq_dk(&s->cur, -1, &cand, &e), &cand);
  s->trying = AC_DF_CAUSAL | AC_DF_CAUSAL_BR;
  /* the mask: the same attention without it (a query row alone with the keys it sees: the worst, the
   * first or the last row), else plainly left out */
  if (p->mask == AC_MASK_CAUSAL_BR && p->tq != p->tk) try_without(s, ac_dcase_mask(&s->cur, AC_MASK_CAUSAL, &cand, &e), &cand);
  const int64_t rows[3] = {s->worst_i, 0, p->tq - 1};
  for (int r = 0; r < 3 && p->mask != AC_MASK_NONE; r++)
    if (rows[r] >= 0 && rows[r] < p->tq && (r < 1 || rows[r] != rows[0]) && (r < 2 || rows[r] != rows[1]))
      try_without(s, ac_dcase_row_unmasked(&s->cur, rows[r], &cand, &e), &cand);
  if (p->mask != AC_MASK_NONE) try_without(s, ac_dcase_mask(&s->cur, AC_MASK_NONE, &cand, &e), &cand);
  s->trying = AC_DF_NONFINITE;
  for (int largest = 0; largest < 2 && ac_dcase_nonfinite(&s->cur); largest++)
    try_without(s, ac_dcase_finite(&s->cur, largest, &cand, &e), &cand);
  for (uint32_t bit = 1; bit & AC_FEAT_ALL; bit <<= 1)
    if ((p->f.used & bit) && bit != AC_FEAT_MIXED_DTYPES) {
      s->trying = bit << AC_DF_VARIANT_SHIFT;
      try_without(s, ac_case_without_feature(&s->cur, bit, &cand, &e), &cand);
    }
}

/* A METAMORPHIC disagreement whose transformed case (the keys permuted, ...) FAILs on the oracle is
 * that FAIL seen through the check: the transformed case becomes the case, its FAIL the mode. */
static int forward_fails_transformed(fpstate *s, int small)
{
  ac_case t;
  ac_err e;
  if (ac_meta_transformed(&s->cur, &t, &e) != 1) return 0;
  ac_eval ev;
  fp_judge(s, &t, AC_V_FAIL, small, &ev);
  if (!(ev.kinds & (1u << AC_V_FAIL))) {
    ac_case_free(&t);
    return 0;
  }
  ac_fmode_of(&ev, AC_V_FAIL, &s->fp->mode);
  note_worst(s, &ev);   /* the heads and batches to slice first are the transformed case's */
  ac_case_free(&s->cur);
  s->cur = t;
  return 1;
}

/* A FAIL or MASKED-LEAK of a case with NaN or inf inputs whose case with finite values in their
 * place FAILs too (zeros, else the dtype's largest finite values: a masked term computed overflows)
 * is that FAIL, the non-finite inputs only making it show as NaN (a wrong head or a masked key read:
 * the same defect with finite inputs): the finite case becomes the case, its FAIL the mode. */
static int fails_finite(fpstate *s, ac_verdict_kind k, int small)
{
  if ((k != AC_V_FAIL && k != AC_V_MASKED_LEAK) || !ac_dcase_nonfinite(&s->cur)) return 0;
  for (int largest = 0; largest < 2; largest++) {
    ac_case f;
    ac_err e;
    if (ac_dcase_finite(&s->cur, largest, &f, &e)) return 0;
    ac_eval ev;
    fp_judge(s, &f, AC_V_FAIL, small, &ev);
    if (!(ev.kinds & (1u << AC_V_FAIL))) {
      ac_case_free(&f);
      continue;
    }
    ac_fmode_of(&ev, AC_V_FAIL, &s->fp->mode);
    note_worst(s, &ev);
    ac_case_free(&s->cur);
    s->cur = f;
    return 1;
  }
  return 0;
}

/* A FAIL whose o is non-finite where the exact one is finite, and whose case with V scaled below 1
 * (ac_dcase_small_v) FAILs with a wrong value of o, is that FAIL: a wrong value that overflowed (an
 * accumulator too narrow for the sum rounds and overflows); the smaller case becomes the case. */
static int fails_smaller(fpstate *s, int small)
{
  ac_case f;
  ac_err e;
  if (s->fp->mode.kind != AC_V_FAIL || s->fp->mode.why[AC_QTY_O] != 1 + AC_WHY_NONFINITE ||
      ac_dcase_small_v(&s->cur, &f, &e))
    return 0;
  ac_eval ev;
  fp_judge(s, &f, AC_V_FAIL, small, &ev);
  ac_fmode m;
  ac_fmode_of(&ev, AC_V_FAIL, &m);
  if (!(ev.kinds & (1u << AC_V_FAIL)) || m.why[AC_QTY_O] != 1 + AC_WHY_VALUE) {
    ac_case_free(&f);
    return 0;
  }
  s->fp->mode = m;
  s->fp->smaller_v = 1;
  note_worst(s, &ev);
  ac_case_free(&s->cur);
  s->cur = f;
  return 1;
}

/* The failure mode of s->cur as a finding of kind k (every row when small): the kind's own, or for a
 * METAMORPHIC or backward finding the FAIL of its forward on the case (or, METAMORPHIC, on its
 * transformed case), or for a FAIL or MASKED-LEAK of non-finite inputs the FAIL of the case without
 * them (the case that fails then becomes s->cur). 1 when the case fails so. */
static int base_mode(fpstate *s, ac_verdict_kind k, int small)
{
  ac_defect_fp *fp = s->fp;
  ac_eval ev;
  fp_judge(s, &s->cur, (int)k, small, &ev);
  note_worst(s, &ev);
  if (derived((int)k) && (ev.kinds & (1u << AC_V_FAIL))) {   /* the forward's failure explains it */
    ac_fmode_of(&ev, AC_V_FAIL, &fp->mode);
    fp->attached = (int)k;
  } else if (k == AC_V_METAMORPHIC && forward_fails_transformed(s, small)) {
    fp->attached = (int)k;
  } else if ((ev.kinds & (1u << k)) && fails_finite(s, k, small)) {
    fp->attached = (int)k;
    fp->finite = 1;
  } else {
    ac_fmode_of(&ev, k, &fp->mode);
    if (ev.kinds & (1u << k)) fails_smaller(s, small);
  }
  return fp->attached >= 0 || (ev.kinds & (1u << k)) != 0;
}

int ac_defect_fingerprint(const ac_eval_ctx *x, const ac_case *cs, ac_verdict_kind k, ac_defect_fp *fp,
                          ac_case *reduced, ac_err *e)
{
  memset(fp, 0, sizeof *fp);
  fp->attached = fp->dtype_only = -1;
  fpstate s = {.x = x, .fp = fp, .worst_b = -1, .worst_h = -1, .worst_d = -1};
  if (ac_case_copy(&s.cur, cs, e)) return -1;
  unwrap(&s.cur);
  const int small = small_case(cs);
  fp->reproduced = base_mode(&s, k, small);
  if (fp->reproduced && (small || shrink_large(&s))) {
    reduce(&s, !small);
    fp->dtype_only = dtype_needed(&s);
    fp->checked = !s.cut;
  }
  fp->feats = present(&s.cur) & ~s.unsure;
  ac_case v;   /* the reduced case in the form the kernel takes */
  if (kernel_form(x, &s.cur, &v)) {
    ac_case_free(&s.cur);
    s.cur = v;
  }
  *reduced = s.cur;
  return 0;
}

void ac_defect_fp_of_eval(const ac_case *cs, const ac_eval *ev, ac_verdict_kind k, ac_defect_fp *fp)
{
  memset(fp, 0, sizeof *fp);
  fp->attached = fp->dtype_only = -1;
  if (derived((int)k) && (ev->kinds & (1u << AC_V_FAIL))) {
    ac_fmode_of(ev, AC_V_FAIL, &fp->mode);
    fp->attached = (int)k;
  } else {
    ac_fmode_of(ev, k, &fp->mode);
  }
  fp->reproduced = 1;
  fp->feats = present(cs);
}

/* a and b one way to fail (ac_fmode_overlaps), a SUSPECT taken as the FAIL of the same quantities
 * for the same reasons: the same wrong values, on one case above the bound and on the other below it. */
static int modes_meet(const ac_fmode *a, const ac_fmode *b)
{
  const int ka = a->kind, kb = b->kind;
  if ((ka == AC_V_SUSPECT && kb == AC_V_FAIL) || (ka == AC_V_FAIL && kb == AC_V_SUSPECT)) {
    ac_fmode t = *b;
    t.kind = ka;
    return ac_fmode_overlaps(a, &t);
  }
  return ac_fmode_overlaps(a, b);
}

int ac_defect_shows(const ac_eval_ctx *x, const ac_case *cs, ac_verdict_kind k, const ac_defect_fp *fp)
{
  ac_defect_fp got = {.attached = -1, .dtype_only = -1};
  fpstate s = {.x = x, .fp = &got, .worst_b = -1, .worst_h = -1, .worst_d = -1};
  ac_err e;
  if (ac_case_copy(&s.cur, cs, &e)) return 0;
  int ok = base_mode(&s, k, small_case(cs)) && modes_meet(&got.mode, &fp->mode);
  ac_case_free(&s.cur);
  return ok;
}

int ac_defect_same(const ac_defect_fp *a, const ac_defect_fp *b)
{
  return a->reproduced && b->reproduced && a->feats == b->feats && a->dtype_only == b->dtype_only &&
         modes_meet(&a->mode, &b->mode);
}

/* Needs a trigger can be made of (quantized tensors are kept as found, not checked; a serving
 * layout goes as every sequence's dense case), a bottom-right mask counting as a causal one. */
static uint32_t trigger_bits(uint32_t f)
{
  f &= ~(uint32_t)AC_DF_QUANT;
  return f & AC_DF_CAUSAL_BR ? f | AC_DF_CAUSAL : f;
}

uint32_t ac_defect_trigger(const ac_defect_fp *a, const ac_defect_fp *b)
{
  if (!a->reproduced || !b->reproduced || (!a->checked && !b->checked)) return 0;
  if (a->dtype_only >= 0 && b->dtype_only >= 0 && a->dtype_only != b->dtype_only) return 0;
  const uint32_t fa = trigger_bits(a->feats), fb = trigger_bits(b->feats), t = fa & fb;
  /* an unchecked one's features are those its case has: the trigger is the other's needs */
  if (!a->checked) return t == fb ? t : 0;
  if (!b->checked) return t == fa ? t : 0;
  return t == fa || t == fb ? t : 0;
}

int ac_defect_gone_without(const ac_eval_ctx *x, const ac_case *cs, ac_verdict_kind k, const ac_fmode *mode, uint32_t t,
                           int *evals)
{
  ac_defect_fp got = {.attached = -1, .dtype_only = -1};
  fpstate s = {.x = x, .fp = &got, .worst_b = -1, .worst_h = -1, .worst_d = -1};
  ac_err e;
  ac_case w;
  if (!t || ac_case_copy(&s.cur, cs, &e)) return 0;
  unwrap(&s.cur);
  int ok = 0;
  if (mode) got.mode = *mode;
  /* a case that does not fail has nothing to go */
  if (mode || base_mode(&s, k, small_case(cs))) {
    /* without a layout: every sequence as a dense case of its own (at most AC_DEFECT_MAX_SEQS) */
    const int lay = (t & (AC_DF_VARLEN | AC_DF_PAGED)) && ac_dcase_layout_kept(&s.cur);
    const int64_t n = lay ? ac_layout_nseq(&s.cur) : 1;
    ok = n >= 1 && n <= AC_DEFECT_MAX_SEQS;
    for (int64_t b = 0; b < n && ok; b++) {
      ac_case d;
      if (lay && ac_layout_tq(&s.cur, b) < 1) continue;
      if (lay && ac_dcase_seq(&s.cur, b, &d, &e)) {
        ok = 0;
        break;
      }
      const int rc = ac_dcase_without(lay ? &d : &s.cur, t & ~(uint32_t)(AC_DF_VARLEN | AC_DF_PAGED), &w, &e);
      if (lay) ac_case_free(&d);
      if (rc) {
        ok = 0;
        break;
      }
      ac_eval ev;
      judge(x, &w, got.mode.kind, small_case(&w), &ev);
      got.evals++;
      ok = ev.status == AC_RUN_OK && !ac_fmode_covers(&ev, &got.mode);
      ac_case_free(&w);
    }
  }
  *evals += got.evals;
  ac_case_free(&s.cur);
  return ok;
}

int ac_fmode_o_overflows(const ac_fmode *m)
{
  if (m->kind != AC_V_FAIL || m->why[AC_QTY_O] != 1 + AC_WHY_NONFINITE) return 0;
  for (int q = 0; q < AC_NQTY; q++)
    if (q != AC_QTY_O && m->why[q]) return 0;
  return 1;
}
int ac_fmode_o_wrong(const ac_fmode *m)
{
  return (m->kind == AC_V_FAIL || m->kind == AC_V_SUSPECT) && m->why[AC_QTY_O] == 1 + AC_WHY_VALUE;
}

int ac_defect_overflow_pair(const ac_defect_fp *a, const ac_defect_fp *b)
{
  if (!a->reproduced || !b->reproduced || a->feats != b->feats || a->dtype_only != b->dtype_only) return 0;
  return ac_fmode_o_wrong(&a->mode) && ac_fmode_o_overflows(&b->mode)   ? 1
         : ac_fmode_o_wrong(&b->mode) && ac_fmode_o_overflows(&a->mode) ? 2
                                                                      : 0;
}

int ac_defect_overflows(const ac_eval_ctx *x, const ac_case *cs, const ac_fmode *over, int *evals)
{
  ac_case c, big;
  ac_err e;
  if (ac_case_copy(&c, cs, &e)) return 0;
  unwrap(&c);
  int ok = 0;
  for (int r = 4; r <= 16 && !ok && ac_dcase_large_v(&c, r, &big, &e) == 0; r *= 4) {
    ac_eval ev;
    judge(x, &big, AC_V_FAIL, small_case(&big), &ev);
    ++*evals;
    ac_fmode m;
    ac_fmode_of(&ev, AC_V_FAIL, &m);
    ok = (ev.kinds & (1u << AC_V_FAIL)) && modes_meet(&m, over);
    ac_case_free(&big);
  }
  ac_case_free(&c);
  return ok;
}

int ac_defect_over_parse(json_object *o)
{
  json_object *v;
  return o && json_object_object_get_ex(o, "overflow_of_value", &v) && json_object_get_boolean(v);
}

const char *ac_defect_feature_name(uint32_t bit)
{
  if (bit >= 1u << AC_DF_VARIANT_SHIFT) return ac_feat_name(bit >> AC_DF_VARIANT_SHIFT);
  for (int i = 0; i < NDF; i++)
    if (bit == 1u << i) return df_names[i];
  return "?";
}

/* "o=value,lse=value" (the failing quantities), or "-". */
static void mode_str(const ac_fmode *m, char *buf, size_t n)
{
  size_t at = 0;
  buf[0] = 0;
  for (int q = 0; q < AC_NQTY && at < n; q++)
    if (m->why[q]) at += (size_t)snprintf(buf + at, n - at, "%s%s=%s", at ? "," : "", qty_names[q], ac_why_name(m->why[q] - 1));
  if (!at) snprintf(buf, n, "-");
}

void ac_defect_key(const ac_defect_fp *fp, char *buf, size_t n)
{
  char m[160], f[400] = "";
  size_t at = 0;
  mode_str(&fp->mode, m, sizeof m);
  for (uint32_t bit = 1; bit && at < sizeof f; bit <<= 1)
    if (fp->feats & bit) at += (size_t)snprintf(f + at, sizeof f - at, "%s%s", at ? "," : "", ac_defect_feature_name(bit));
  snprintf(buf, n, "%s %s needs=%s%s%s", ac_verdict_name((ac_verdict_kind)fp->mode.kind), m, at ? f : "-",
           fp->dtype_only >= 0 ? " only=" : "", fp->dtype_only >= 0 ? ac_dtype_name((ac_dtype)fp->dtype_only) : "");
}

json_object *ac_defect_fp_json(const ac_defect_fp *fp)
{
  json_object *o = json_object_new_object(), *mo = json_object_new_object(), *fa = json_object_new_array();
  char key[700];
  ac_defect_key(fp, key, sizeof key);
  json_object_object_add(o, "key", json_object_new_string(key));
  json_object_object_add(o, "kind", json_object_new_string(ac_verdict_name((ac_verdict_kind)fp->mode.kind)));
  for (int q = 0; q < AC_NQTY; q++)
    if (fp->mode.why[q]) json_object_object_add(mo, qty_names[q], json_object_new_string(ac_why_name(fp->mode.why[q] - 1)));
  json_object_object_add(o, "fails", mo);
  for (uint32_t bit = 1; bit; bit <<= 1)
    if (fp->feats & bit) json_object_array_add(fa, json_object_new_string(ac_defect_feature_name(bit)));
  json_object_object_add(o, "needs", fa);
  if (fp->dtype_only >= 0)
    json_object_object_add(o, "only_dtype", json_object_new_string(ac_dtype_name((ac_dtype)fp->dtype_only)));
  if (fp->attached >= 0)
    json_object_object_add(o, "through", json_object_new_string(ac_verdict_name((ac_verdict_kind)fp->attached)));
  if (fp->finite) json_object_object_add(o, "through_nonfinite_inputs", json_object_new_boolean(1));
  if (fp->smaller_v) json_object_object_add(o, "through_smaller_v", json_object_new_boolean(1));
  json_object_object_add(o, "checked", json_object_new_boolean(fp->checked));
  json_object_object_add(o, "reproduced", json_object_new_boolean(fp->reproduced));
  json_object_object_add(o, "rejudged", json_object_new_int(fp->evals));
  return o;
}

static const char *jstr(json_object *o, const char *k)
{
  json_object *v;
  return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                          : NULL;
}

/* A JSON array of feature names ("needs", "trigger") as AC_DF_ bits into *f (or-ed in); -1: not one. */
static int feats_parse(json_object *a, uint32_t *f)
{
  if (!json_object_is_type(a, json_type_array)) return 0;
  for (size_t i = 0; i < json_object_array_length(a); i++) {
    const char *nm = json_object_get_string(json_object_array_get_idx(a, i));
    uint32_t bit = 1;
    while (bit && (!nm || strcmp(ac_defect_feature_name(bit), nm))) bit <<= 1;
    if (!bit) return -1;
    *f |= bit;
  }
  return 0;
}

uint32_t ac_defect_trigger_parse(json_object *o)
{
  json_object *ta;
  uint32_t t = 0;
  return o && json_object_object_get_ex(o, "trigger", &ta) && feats_parse(ta, &t) == 0 ? t : 0;
}

static int why_parse(const char *s)
{
  for (int w = AC_WHY_VALUE; w <= AC_WHY_EMPTY; w++)
    if (!strcmp(s, ac_why_name(w))) return w;
  return -1;
}

int ac_defect_fp_parse(json_object *o, ac_defect_fp *fp)
{
  memset(fp, 0, sizeof *fp);
  fp->attached = fp->dtype_only = -1;
  ac_verdict_kind k;
  json_object *mo, *fa, *v;
  if (!o || !json_object_is_type(o, json_type_object) || !jstr(o, "kind") || ac_verdict_parse(jstr(o, "kind"), &k))
    return -1;
  fp->mode.kind = (int)k;
  if (json_object_object_get_ex(o, "fails", &mo) && json_object_is_type(mo, json_type_object))
    for (int q = 0; q < AC_NQTY; q++) {
      const char *w = jstr(mo, qty_names[q]);
      if (!w) continue;
      if (why_parse(w) < 0) return -1;
      fp->mode.why[q] = (uint8_t)(1 + why_parse(w));
    }
  if (json_object_object_get_ex(o, "needs", &fa) && feats_parse(fa, &fp->feats)) return -1;
  const char *d = jstr(o, "only_dtype");
  ac_dtype dt;
  if (d && ac_dtype_parse(d, &dt)) return -1;
  if (d) fp->dtype_only = (int)dt;
  if (jstr(o, "through") && ac_verdict_parse(jstr(o, "through"), &k) == 0) fp->attached = (int)k;
  fp->finite = json_object_object_get_ex(o, "through_nonfinite_inputs", &v) && json_object_get_boolean(v);
  fp->smaller_v = json_object_object_get_ex(o, "through_smaller_v", &v) && json_object_get_boolean(v);
  fp->checked = json_object_object_get_ex(o, "checked", &v) && json_object_get_boolean(v);
  fp->reproduced = json_object_object_get_ex(o, "reproduced", &v) && json_object_get_boolean(v);
  return 0;
}
