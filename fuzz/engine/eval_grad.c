/* eval_grad.c: the backward of a case on a kernel that declares one (ATTNCHECK_CAP_BACKWARD):
 * a dO drawn from the case hash, the run through the harness, the grad judge (grad_judge.h),
 * a GRAD-FAIL verdict when it fails (docs/backward.md "Fuzzing"). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "dout.h"
#include "grad_judge.h"
#include "layout.h"

/* The dO patterns a campaign draws from (dout.h): plain, large and small magnitudes, rows of
 * zeros (D_i = 0), and dO aligned with V so that dP_j - D cancels. */
static const char *const grad_patterns[] = {"normal", "huge", "zero-rows", "cancel", "tiny"};
#define N_GRAD_PATTERNS (int)(sizeof grad_patterns / sizeof grad_patterns[0])

/* Cases larger than this (B*H*tq*tk*(dk+dv)) get no backward: its oracle needs every forward row. */
#define GRAD_MAX_WORK (INT64_C(1) << 24)

const char *ac_eval_grad_pattern(const ac_case *c)
{
  return grad_patterns[(ac_case_hash(c) >> 17) % N_GRAD_PATTERNS];
}

int ac_eval_grad_wanted(const ac_eval_ctx *x, const ac_case *c)
{
  const ac_problem *p = &c->p;
  if (!x->grad || (p->f.used & ~x->grad_caps & (AC_FEAT_ALL | AC_FEAT_LAYOUTS))) return 0;   /* not handed */
  /* what the exact backward refuses (docs/backward.md): descales, per-tensor dtypes, paged caches
   * (an inference layout) */
  if (p->f.used & (AC_FEAT_PAGED | AC_FEAT_DESCALE | AC_FEAT_MIXED_DTYPES) || ac_problem_quantized(p)) return 0;
  double work = (double)p->batch * (double)p->heads * (double)p->tq * (double)p->tk * (double)(p->dk + p->dv);
  if (c->lay) {   /* varlen: the sequences' own query-key pairs */
    work = 0;
    for (int64_t b = 0; b < p->l.nseq; b++)
      work += (double)p->heads * (double)ac_layout_tq(c, b) * (double)ac_layout_tk(c, b) * (double)(p->dk + p->dv);
  }
  return work <= (double)GRAD_MAX_WORK;
}

static void upd(double *x, double v)
{
  v = isnan(v) ? INFINITY : fabs(v);
  if (v > *x) *x = v;
}

/* The largest |element| of q, k, v and dO (x[0..3]); inf when one is not finite. */
static void max_abs(const ac_case *c, const void *dout, double x[4])
{
  const ac_problem *p = &c->p;
  const ac_dtype od = ac_tensor_dtype(p, 'o');
  memset(x, 0, 4 * sizeof x[0]);
  for (int64_t b = 0; b < p->batch; b++) {
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        for (int64_t t = 0; t < p->dk; t++) upd(&x[0], ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, t)));
        for (int64_t t = 0; t < p->dv; t++) upd(&x[3], ac_load(od, dout, ac_oidx(p, b, h, i, t)));
      }
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t j = 0; j < p->tk; j++) {
        for (int64_t t = 0; t < p->dk; t++) upd(&x[1], ac_load(p->dtype, c->k, ac_kidx(p, b, h, j, t)));
        for (int64_t t = 0; t < p->dv; t++) upd(&x[2], ac_load(p->dtype, c->v, ac_vidx(p, b, h, j, t)));
      }
  }
}

/* 1 when the backward of c with dO stays inside the grad budget's model: finite inputs, and
 * bounds on dP = dO·V, dS, dQ, dK, dV at most 2^-8 of the class's working range, a finite W
 * for every element. */
int ac_eval_grad_in_range(const ac_case *c, const ac_precision *cls)
{
  const void *dout = c->dout;
  const ac_problem *p = &c->p;
  double m[4];
  max_abs(c, dout, m);
  for (int k = 0; k < 4; k++)
    if (!isfinite(m[k])) return 0;
  const double cs = fabs(ac_problem_scale(p)), grp = (double)(p->heads / p->kv_heads);
  const double dS = 2 * m[3] * m[2] * (double)p->dv;
  double big = dS;
  big = fmax(big, cs * (double)p->tk * dS * m[1]);
  big = fmax(big, cs * (double)p->tq * grp * dS * m[0]);
  big = fmax(big, (double)p->tq * grp * m[3]);
  big = fmax(big, cs * m[0] * m[1] * (double)p->dk);
  if (!(big <= 0x1p-8 * ac_dtype_get(cls->range)->max_finite)) return 0;
  /* the budget itself: an infinite W (exp-argument errors beyond the exp range) is outside it */
  ac_grad_budget bg;
  ac_err e;
  int ok = ac_grad_budget_compute(cls, c, &bg, &e) == 0;
  for (int t = 0; t < 3 && ok; t++)
    for (int64_t x = 0; x < bg.count[t] && ok; x++) ok = isfinite(bg.w[t][x]);
  for (int64_t h = 0; h < bg.nsink && ok; h++) ok = isfinite(bg.sink_w[h]);
  ac_grad_budget_free(&bg);
  return ok;
}

/* "dq err/W=.. bad=F/N dk .. dv .. [dsink ..]", for the verdict message. */
static void grad_summary(const ac_grad_run_result *run, const ac_grad_judgement *j, char *out, size_t n)
{
  if (run->status != AC_RUN_OK) {
    snprintf(out, n, "%.300s", run->msg[0] ? run->msg : "the backward run did not complete");
    return;
  }
  if (!run->guard_ok) {
    snprintf(out, n, "guard: %.250s", run->guard_msg);
    return;
  }
  size_t at = 0;
  out[0] = 0;
  for (int t = 0; t < j->nt && at < n; t++) {
    const ac_grad_tjudge *tj = &j->t[t];
    at += (size_t)snprintf(out + at, n - at, "%s%s err/W=%.3g bad=%lld/%lld", t ? " " : "", ac_grad_tensor_name(t),
                           tj->worst, (long long)tj->failed, (long long)tj->checked);
    if (tj->unwritten && at < n) at += (size_t)snprintf(out + at, n - at, " unwritten=%lld", (long long)tj->unwritten);
    if (tj->unresolved && at < n)
      at += (size_t)snprintf(out + at, n - at, " unresolved=%lld", (long long)tj->unresolved);
  }
}

/* The backward's metamorphic check (metamorphic_grad.c) of a run that completed. */
static void grad_meta(const ac_eval_ctx *x, const ac_case *g, const ac_precision *gcls, const ac_grad_run_result *run,
                      const char *pat, ac_eval *ev)
{
  ac_err e;
  ac_gmeta_result *m = &ev->gmeta;
  if (ac_meta_grad_check(x->kernel, &x->run, g, gcls, run, m, &e) || !m->bad) return;
  char tol[64];
  if (m->exact) snprintf(tol, sizeof tol, "not bit for bit");
  else snprintf(tol, sizeof tol, "|diff| %.3g > allowed %.3g", m->diff, m->tol);
  ac_report_add(&ev->rep, AC_V_GRAD_METAMORPHIC,
                "backward metamorphic (dO %s; %s): %lld of %lld elements disagree; %s[%lld,%lld] = %a (scaled alike) here, "
                "%a transformed, %s",
                pat, m->transform, (long long)m->n_bad, (long long)m->n_compared,
                m->tensor == 3 ? "dsinks" : ac_grad_tensor_name(m->tensor), (long long)m->x, (long long)m->t, m->a, m->b, tol);
}

void ac_eval_grad(const ac_eval_ctx *x, const ac_case *c, const ac_precision *cls, ac_eval *ev)
{
  if (!ac_eval_grad_wanted(x, c) || (ev->rep.kinds & (1u << AC_V_OUT_OF_DOMAIN))) return;
  double t0 = ac_now();
  ac_case g = *c;
  const char *pat = c->dout ? "case" : ac_eval_grad_pattern(c);
  ac_err e;
  if (!c->dout) {
    g.dout = NULL;
    if (ac_dout_generate(&g, pat, ac_case_hash(c), &e)) return;
  }
  if (!ac_eval_grad_in_range(&g, cls)) {
    if (g.dout != c->dout) free(g.dout);
    return;
  }
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  go.rows = ac_fuzz_oracle_rows(c);
  go.cols = c->p.batch * c->p.heads * c->p.tk <= 48 ? NULL : "edges+16";
  go.seed = ac_case_hash(c);
  ac_grad_run_result run;
  ac_grad_judgement j;
  const ac_precision *gcls = NULL;
  if (ac_grad_check(x->kernel, &g, x->precision, &go, &x->run, &run, &j, &gcls, &e) == 0) {
    ev->grad_checked = 1;
    if (!strcmp(ac_grad_status(&run, &j), "FAIL")) {
      char sum[400];
      grad_summary(&run, &j, sum, sizeof sum);
      ac_report_add(&ev->rep, AC_V_GRAD_FAIL, "backward (dO %s): %s", pat, sum);
      for (int t = 0; run.status == AC_RUN_OK && t < j.nt; t++)   /* the failure mode (fmode.c) */
        if (j.t[t].failed) ev->grad_why[t] = (uint8_t)(1 + (isfinite(j.t[t].got) ? AC_WHY_VALUE : AC_WHY_NONFINITE));
    }
    if (j.unresolved) /* as the forward's: an oracle error, never the kernel's, and never judged */
      ac_report_add(&ev->rep, AC_V_ERROR, "backward (dO %s): %lld oracle values unresolved", pat,
                    (long long)j.unresolved);
    if (ac_meta_selected(c, x->metamorphic)) grad_meta(x, &g, gcls, &run, pat, ev);
  }
  ac_grad_run_result_free(&run);
  if (g.dout != c->dout) free(g.dout);
  ev->grad_s = ac_now() - t0;
}
