/* relabel.c: labels from the whole case (campaign.h). A case with many rows is judged on a row
 * sample; a SUSPECT or a warning there may be a FAIL on a row the sample left out, so before such
 * a finding is stored the case is judged again on every row (or, past RELABEL_MAX_WORK, its
 * minimized form is). */
#include "config.h"
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "campaign.h"

/* The kinds a row sample cannot settle; the others (METAMORPHIC, NONDETERMINISTIC, GRAD-*, GUARD,
 * ...) come from checks that see every row or no row at all. */
#define ROW_KINDS                                                                                  \
  ((1u << AC_V_FAIL) | (1u << AC_V_SUSPECT) | (1u << AC_V_MASKED_LEAK) | (1u << AC_V_WEAK_CLASS) | \
   (1u << AC_V_OUT_OF_DOMAIN))
#define WARN_KINDS ((1u << AC_V_SUSPECT) | (1u << AC_V_MASKED_LEAK) | (1u << AC_V_WEAK_CLASS))

/* RELABEL_MAX_WORK, or ATTNCHECK_RELABEL_MAX_WORK (tests take the minimized path on small cases). */
static double max_work(void)
{
  const char *s = getenv("ATTNCHECK_RELABEL_MAX_WORK");
  double v = s ? strtod(s, NULL) : 0;
  return v > 0 ? v : RELABEL_MAX_WORK;
}

/* 1 when some kind of ev that labels a finding from the sample would be stored under a new signature. */
static int new_signature(ctx_t *c, const ac_case *cs, const ac_eval *ev, const char *family)
{
  for (int k = 0; k < AC_V_NKINDS; k++) {
    if (!(ev->kept & WARN_KINDS & (1u << k))) continue;
    char sig[256], p[4400];
    struct stat st;
    ac_cp_signature(c, cs, ev, k, family, sig, sizeof sig);
    snprintf(p, sizeof p, "%s/findings/%s", c->o->out_dir, sig);
    if (stat(p, &st) != 0) return 1;
  }
  return 0;
}

/* c judged on all its rows into full (forward only: the checks of ev that see every row are
 * ev's, merged in). 0, or -1 when it could not be judged. */
static int judge_all_rows(ctx_t *c, const ac_case *cs, const ac_eval *ev, ac_eval *full)
{
  ac_eval_ctx y = c->x;
  ac_err e;
  y.rows_all = 1;
  y.metamorphic = AC_META_OFF;
  y.grad = 0;
  if (ac_eval_case(&y, cs, 0, full, &e) || full->status != AC_RUN_OK) return -1;
  full->kinds = (full->kinds & ROW_KINDS) | (ev->kinds & ~ROW_KINDS);
  full->meta = ev->meta;
  full->gmeta = ev->gmeta;
  full->grad_checked = ev->grad_checked;
  ac_eval_policies(&c->x, full);
  return 0;
}

const ac_eval *ac_cp_relabel(ctx_t *c, const ac_case *cs, const ac_eval *ev, const char *family, ac_relabel *rl)
{
  memset(rl, 0, sizeof *rl);
  int sampled = ev->rep.n_rows_judged < ev->rep.n_rows_total;
  snprintf(rl->label, sizeof rl->label, "%s", sampled ? "row sample" : "all rows");
  if (sampled && (ev->kinds & (1u << AC_V_FAIL)))
    snprintf(rl->label, sizeof rl->label, "row sample (a FAIL on the sample: every row has it too)");
  if (!sampled || (ev->kinds & (1u << AC_V_FAIL)) || !(ev->kept & WARN_KINDS) || !new_signature(c, cs, ev, family))
    return ev;
  if (ac_case_oracle_work(cs) <= max_work()) {
    if (judge_all_rows(c, cs, ev, &rl->full)) {
      snprintf(rl->label, sizeof rl->label, "row sample (the judgement on all rows did not complete)");
      return ev;
    }
    snprintf(rl->label, sizeof rl->label, "all rows (judged again: the case was judged on a row sample)");
    return &rl->full;
  }
  /* too large for the oracle on every row: the minimized form, on all its rows */
  int k = __builtin_ctz(ev->kept & WARN_KINDS);
  const ac_worst_elem *w = ac_report_worst(&ev->rep);
  const int64_t hint[4] = {w->valid ? w->b : 0, w->valid ? w->h : 0, w->valid ? w->i : -1, w->valid ? w->d : 0};
  double t = ac_now();
  if (!c->o->minimize || ac_cp_minimize_case(c, cs, (ac_verdict_kind)k, hint, &rl->mn, &rl->evals)) {
    snprintf(rl->label, sizeof rl->label, "row sample (the case is too large to judge on all rows%s)",
             c->o->minimize ? " and could not be minimized" : "; --no-minimize");
    return ev;
  }
  rl->min_s = ac_now() - t;
  rl->have_mn = 1;
  if (ac_case_oracle_work(&rl->mn) > max_work() || judge_all_rows(c, &rl->mn, ev, &rl->full)) {
    ac_case_free(&rl->mn);
    rl->have_mn = 0;
    snprintf(rl->label, sizeof rl->label,
             "row sample (the case and its minimized form are too large to judge on all rows)");
    return ev;
  }
  snprintf(rl->label, sizeof rl->label, "all rows of the minimized case (the case is too large to judge on all rows)");
  return &rl->full;
}

void ac_relabel_free(ac_relabel *rl)
{
  if (rl->have_mn) ac_case_free(&rl->mn);
  rl->have_mn = 0;
}
