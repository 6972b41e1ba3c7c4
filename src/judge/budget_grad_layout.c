/* budget_grad_layout.c: the budgets of a varlen case's backward (docs/backward.md §7): every
 * term of budget_grad.c is a sum over one sequence's rows and keys (a packed batch has no
 * attention across sequences), so each sequence's dense case (layout.h, ac_layout_seq_case, with
 * its rows of dO) gets the dense budgets, mapped into the carrier's packed elements. The keys of
 * a sequence without queries keep W = E = 0 (their gradient is exactly 0). dσ_h sums every sequence's
 * rows: their terms add up, and the γ of the sum and the underflow count all the rows together. */
#include "config.h"
#include "budget_grad.h"
#include "budget_grad_int.h"
#include <stdlib.h>
#include "layout.h"

/* Sequence b's budgets sb into the carrier's bg. */
static void seq_put(const ac_case *c, int64_t b, const ac_problem *s, const ac_grad_budget *sb, ac_grad_budget *bg)
{
  const ac_problem *p = &c->p;
  const int64_t q0 = c->lay->cu_q[b], k0 = c->lay->cu_k[b], tk = ac_layout_tk(c, b);
  for (int typ = 0; typ < 2; typ++) {
    double *const *D = typ ? bg->e : bg->w, *const *S = typ ? sb->e : sb->w;
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < s->tq; i++)
        for (int64_t t = 0; t < p->dk; t++) D[0][ac_qidx(p, 0, h, q0 + i, t)] = S[0][ac_qidx(s, 0, h, i, t)];
    for (int64_t kvh = 0; kvh < p->kv_heads; kvh++)
      for (int64_t j = 0; j < tk; j++) {
        for (int64_t t = 0; t < p->dk; t++) D[1][ac_kidx(p, 0, kvh, k0 + j, t)] = S[1][ac_kidx(s, 0, kvh, j, t)];
        for (int64_t t = 0; t < p->dv; t++) D[2][ac_vidx(p, 0, kvh, k0 + j, t)] = S[2][ac_vidx(s, 0, kvh, j, t)];
      }
  }
}

int ac_grad_budget_layout(const ac_precision *cls, const ac_case *c, int alibi_lse, ac_grad_budget *bg, ac_err *e)
{
  const ac_problem *p = &c->p;
  if (p->f.used & AC_FEAT_PAGED) return ac_err_set(e, "no backward budgets for a paged case (an inference layout)");
  if (ac_gbud_alloc(c, bg, e)) return -1;
  for (int64_t b = 0; b < p->l.nseq; b++) {
    if (ac_layout_tq(c, b) == 0) continue;
    ac_case sub;
    ac_grad_budget sb;
    if (ac_layout_seq_case(c, b, &sub, e)) goto fail;
    int rc = ac_grad_budget_compute_as(cls, &sub, alibi_lse, &sb, e);
    if (rc == 0) seq_put(c, b, &sub.p, &sb, bg);
    for (int typ = 0; rc == 0 && typ < 2 && sb.nsink; typ++) {
      if (!bg->sink_t[typ]) {
        bg->sink_t[typ] = ac_xcalloc((size_t)p->heads, sizeof(double));
        bg->sink_m[typ] = ac_xcalloc((size_t)p->heads, sizeof(double));
      }
      for (int64_t h = 0; h < p->heads; h++)
        bg->sink_t[typ][h] += sb.sink_t[typ][h], bg->sink_m[typ][h] += sb.sink_m[typ][h];
    }
    if (rc == 0 && sb.nsink) bg->nsink = p->heads, bg->sink_rows += sb.sink_rows;
    ac_grad_budget_free(&sb);
    ac_case_free(&sub);
    if (rc) goto fail;
  }
  ac_grad_budget_sink(cls, bg);
  return 0;
fail:
  ac_grad_budget_free(bg);
  return -1;
}
