/* judge.c: oracle (cached), harness run(s) and comparison for one case. */
#include "config.h"
#include "judge.h"
#include "store_judge.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ac_judge_opts_init(ac_judge_opts *o)
{
  memset(o, 0, sizeof *o);
  ac_compare_opts_init(&o->cmp);
  ac_run_opts_init(&o->run);
  o->run.want_lse = 1;
  o->cache_dir = ac_oracle_cache_dir();
}

void ac_judge_oracle_opts(const ac_judge_opts *o, ac_oracle_opts *oo)
{
  ac_oracle_opts_init(oo);
  oo->threads = o->oracle_threads;
  oo->rows = o->rows;
  oo->rows_seed = o->rows_seed;
  oo->nmu = ac_precision_mu_list(oo->mu, AC_ORACLE_NMU);
}

int ac_judge_oracle(const ac_case *c, const ac_judge_opts *o, ac_oracle_result *r, ac_err *e)
{
  ac_oracle_opts oo;
  ac_judge_oracle_opts(o, &oo);
  if (o->cache_dir && ac_oracle_cache_load(o->cache_dir, c, &oo, r) == 0) return 0;
  if (ac_oracle_run(c, &oo, r, e) < 0) return -1;
  if (o->cache_dir) ac_oracle_cache_store(o->cache_dir, c, &oo, r);
  return 0;
}

int ac_judge_rows_check(const ac_case *c, const ac_judge_opts *o, ac_err *e)
{
  if (!o->rows) return 0;
  uint8_t *sel = ac_xmalloc((size_t)(c->p.batch * c->p.heads * c->p.tq));
  int rc = ac_oracle_select_rows(&c->p, o->rows, o->rows_seed, sel, e);
  free(sel);
  return rc < 0 ? -1 : 0;
}

int ac_judge_mem_check(const ac_case *c, const ac_judge_opts *o, ac_err *e)
{
  ac_oracle_opts oo;
  ac_judge_oracle_opts(o, &oo);
  return ac_oracle_mem_check(c, &oo, e);
}

int ac_judge_precision_of(const ac_kernel *k, const char *override, double timeout_s, ac_dtype t,
                          const ac_precision **out, ac_err *e)
{
  ac_kernel_prepare(k, timeout_s);   /* an exec worker's declared classes */
  return ac_precision_resolve(override, k ? k->precision : NULL, t, out, e);
}

int ac_judge_resolve_opts(const ac_kernel *k, const char *override, double timeout_s, ac_dtype t, ac_compare_opts *co,
                          ac_err *e)
{
  if (ac_judge_precision_of(k, override, timeout_s, t, &co->prec, e) < 0) return -1;
  co->prec_override = override;
  co->prec_source = ac_precision_spec_names(override, t)            ? "option"
                    : k && ac_precision_spec_names(k->precision, t) ? "kernel"
                                                                    : "default";
  if (k && !co->empty_set) {
    int eo, el;
    ac_kernel_empty_rows(k, &eo, &el);
    if (eo)
      co->empty = eo == ATTNCHECK_EMPTY_NAN      ? AC_EMPTY_NAN
                  : eo == ATTNCHECK_EMPTY_MEAN_V ? AC_EMPTY_MEAN_V
                                                 : AC_EMPTY_ZERO;
    co->empty_lse = el;
  }
  return 0;
}

int ac_judge_precision(const ac_kernel *k, const ac_judge_opts *o, ac_dtype t, const ac_precision **out, ac_err *e)
{
  return ac_judge_precision_of(k, o->precision_override, o->run.timeout_s, t, out, e);
}

int ac_judge_kernels_add(ac_judge_kernels *ks, const char *spec)
{
  if (ks->nspec == AC_JUDGE_MAX_SPECS) return -1;
  ks->spec[ks->nspec++] = spec;
  return 0;
}

int ac_judge_kernels_resolve(ac_judge_kernels *ks, ac_err *e)
{
  for (int x = 0; x < ks->nspec; x++) {
    int before = ks->n;
    if (ac_kernel_resolve(ks->spec[x], &ks->k, &ks->n, e) < 0) {
      ac_judge_kernels_free(ks);
      return -1;
    }
    ks->spec_of = ac_xrealloc(ks->spec_of, sizeof(int) * (size_t)(ks->n ? ks->n : 1));
    for (int y = before; y < ks->n; y++) ks->spec_of[y] = x;
  }
  return 0;
}

void ac_judge_kernels_free(ac_judge_kernels *ks)
{
  for (int x = 0; x < ks->n; x++) ac_kernel_free(ks->k[x]);
  free(ks->k);
  free(ks->spec_of);
  ks->k = NULL;
  ks->spec_of = NULL;
  ks->n = 0;
}

void ac_judge_lazy_init(ac_judge_lazy_oracle *lo)
{
  memset(lo, 0, sizeof *lo);
  lo->state = -1;
}

void ac_judge_lazy_free(ac_judge_lazy_oracle *lo)
{
  if (lo->state > 0) ac_oracle_result_free(&lo->r);
  lo->state = -1;
}

static int judge_kernel_n(const ac_kernel *k, const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o,
                          ac_report *reps, int skip, ac_err *e);

/* ac_judge_oracle_src.get of a run's options */
static int oracle_of_opts(void *ctx, const ac_case *c, ac_oracle_result *out, ac_err *e)
{
  return ac_judge_oracle(c, ctx, out, e);
}

int ac_judge_nclasses(const ac_judge_opts *o)
{
  return o->nprecisions > 1 ? o->nprecisions : 1;
}

/* Class x of the run (NULL: the kernel's own, or the single --precision) */
static const char *class_spec(const ac_judge_opts *o, int x)
{
  return o->nprecisions > 1 ? o->precisions[x] : o->precision_override;
}

void ac_judge_one_classes(const ac_kernel *k, const ac_case *c, const ac_judge_opts *o, ac_judge_lazy_oracle *lo,
                          ac_report *reps)
{
  int n = ac_judge_nclasses(o);
  ac_err e;
  char why[256] = "";
  ac_compare_opts co = o->cmp;
  int bad = 0;
  for (int x = 0; x < n; x++) /* a class that does not resolve is that class's ERROR */
    if ((co = o->cmp, ac_judge_resolve_opts(k, class_spec(o, x), o->run.timeout_s, c->p.dtype, &co, &e)) < 0) {
      ac_report_init(&reps[x], &co);
      ac_report_add(&reps[x], AC_V_ERROR, "%s", e.msg);
      bad |= 1 << x;
    }
  if (bad == (1 << n) - 1) return;
  const char *skip = NULL, *oerr = NULL;
  int drop = (c->p.f.used & AC_FEAT_DROPOUT) != 0;   /* the oracle of the kernel's own mask, after its run */
  if (!ac_kernel_supports(k, &c->p, why, sizeof why))
    skip = why;
  else if (!drop) {
    if (lo->state < 0) lo->state = ac_judge_oracle(c, o, &lo->r, &lo->e) == 0;
    if (!lo->state) oerr = lo->e.msg;
  }
  if (skip || oerr) {
    for (int x = 0; x < n; x++) {
      if (bad >> x & 1) continue;
      co = o->cmp;
      ac_judge_resolve_opts(k, class_spec(o, x), o->run.timeout_s, c->p.dtype, &co, &e);
      ac_report_init(&reps[x], &co);
      if (skip)
        ac_report_add(&reps[x], AC_V_SKIP, "unsupported: %s", skip);
      else
        ac_report_add(&reps[x], AC_V_ERROR, "oracle: %s", oerr);
    }
    return;
  }
  judge_kernel_n(k, c, drop ? NULL : &lo->r, o, reps, bad, &e);
}

void ac_judge_one(const ac_kernel *k, const ac_case *c, const ac_judge_opts *o, ac_judge_lazy_oracle *lo,
                  ac_report *rep)
{
  ac_judge_opts one = *o;
  one.nprecisions = 0;
  ac_judge_one_classes(k, c, &one, lo, rep);
}

int ac_judge_baseline(const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o, double *maxerr, ac_err *e)
{
  char name[32];
  snprintf(name, sizeof name, "naive-%s", ac_dtype_name(c->p.dtype));
  ac_kernel **ks = NULL;
  int nk = 0;
  if (ac_kernel_resolve(name, &ks, &nk, e) < 0 || nk < 1)
    return ac_err_set(e, "baseline budget: no naive kernel for dtype %s", ac_dtype_name(c->p.dtype));
  ac_run_result rr;
  memset(&rr, 0, sizeof rr);
  ac_run_opts ro = o->run;
  ro.want_lse = 0;
  int rc = ac_harness_run(ks[0], c, &ro, &rr, e);
  if (rc == 0 && rr.status != AC_RUN_OK) rc = ac_err_set(e, "baseline budget: %s did not run: %s", name, rr.msg);
  if (rc == 0) *maxerr = ac_compare_max_err(c, r, rr.o);
  ac_run_result_free(&rr);
  for (int i = 0; i < nk; i++) ac_kernel_free(ks[i]);
  free(ks);
  return rc;
}

/* Kernel k on c against r under each class of the run not in skip (a bit per class, already
 * reported), into reps: one run, each class's comparison. -1 only for tool errors. */
static int judge_kernel_n(const ac_kernel *k, const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o,
                          ac_report *reps, int skip, ac_err *e)
{
  int n = ac_judge_nclasses(o), m = 0;
  ac_compare_opts cos[AC_JUDGE_MAX_CLASSES];
  int at[AC_JUDGE_MAX_CLASSES];
  double baseline = 0;
  int have_baseline = 0;
  for (int x = 0; x < n; x++) {
    if (skip >> x & 1) continue;
    ac_compare_opts co = o->cmp;
    co.rows = o->rows;
    if (ac_judge_resolve_opts(k, class_spec(o, x), o->run.timeout_s, c->p.dtype, &co, e) < 0) {
      ac_report_init(&reps[x], &co);
      ac_report_add(&reps[x], AC_V_ERROR, "%s", e->msg);
      if (n == 1) return -1;
      continue;
    }
    co.alibi_lse = ac_kernel_alibi_lse(k, o->run.alibi_lse);
    if (co.budget == AC_BUDGET_BASELINE) {
      ac_err be;
      if (!r) ac_err_set(&be, "baseline budget: not with dropout (use the class budget)");
      if (!have_baseline && (!r || ac_judge_baseline(c, r, o, &baseline, &be) < 0)) {
        ac_report_init(&reps[x], &co);
        ac_report_add(&reps[x], AC_V_ERROR, "%s", be.msg);
        continue;
      }
      have_baseline = 1;
      co.baseline_err = baseline;
    }
    ac_report_init(&reps[x], &co);
    cos[m] = co;
    at[m++] = x;
  }
  if (!m) return 0;
  ac_report tmp[AC_JUDGE_MAX_CLASSES];
  for (int y = 0; y < m; y++) tmp[y] = reps[at[y]];
  ac_judge_oracle_src src = {r, oracle_of_opts, (void *)o, o};   /* get(): a quantize-on-store kernel's own cache */
  ac_judged j;
  int rc = ac_judge_case_n(k, c, cos, m, &o->run, o->repeat ? 1 : 0, &src, tmp, &j, e);
  for (int y = 0; y < m; y++) reps[at[y]] = tmp[y];
  ac_judged_free(&j);
  return rc;
}

int ac_judge_kernel(const ac_kernel *k, const ac_case *c, const ac_oracle_result *r, const ac_judge_opts *o,
                    ac_report *rep, ac_err *e)
{
  ac_judge_opts one = *o;
  one.nprecisions = 0;
  return judge_kernel_n(k, c, r, &one, rep, 0, e);
}

void ac_judged_free(ac_judged *j)
{
  ac_run_result_free(&j->run);
  if (j->has_own) ac_oracle_result_free(&j->own);
  if (j->has_dcase) ac_case_free(&j->dcase);
  j->has_own = j->has_dcase = 0;
  j->oracle = NULL;
}

/* The class the run names for itself (ABI 5 precision_of, an exec worker's answer; checked by the
 * harness) in place of the resolved one, unless --precision names the dtype: into pc and rep. */
static void class_of_run(const ac_compare_opts *co, const ac_run_result *run, ac_dtype t, ac_compare_opts *pc,
                         ac_report *rep)
{
  *pc = *co;
  const ac_precision *p;
  ac_err e;
  if (!run->precision[0] || ac_precision_spec_names(co->prec_override, t) ||
      !ac_precision_spec_names(run->precision, t) || ac_precision_resolve(NULL, run->precision, t, &p, &e) < 0)
    return;
  pc->prec = p;
  pc->prec_source = "problem";
  rep->prec_name = p->name;
  rep->prec_source = pc->prec_source;
  ac_budget_describe(pc, rep->budget_desc, sizeof rep->budget_desc);
}

int ac_judge_case(const ac_kernel *k, const ac_case *c, const ac_compare_opts *co, const ac_run_opts *ro, int repeat,
                  const ac_judge_oracle_src *src, ac_report *rep, ac_judged *out, ac_err *e)
{
  return ac_judge_case_n(k, c, co, 1, ro, repeat, src, rep, out, e);
}

int ac_judge_case_n(const ac_kernel *k, const ac_case *c, const ac_compare_opts *cos, int n, const ac_run_opts *ro,
                    int repeat, const ac_judge_oracle_src *src, ac_report *reps, ac_judged *out, ac_err *e)
{
  memset(out, 0, sizeof *out);
  out->prec = cos[0].prec;
  double t0 = ac_now();
  /* a case the harness cannot run at all comes back with status HARNESS_ERROR: ERROR below */
  if (ac_harness_run(k, c, ro, &out->run, e) < 0 && out->run.status != AC_RUN_HARNESS_ERROR) {
    for (int x = 0; x < n; x++) ac_report_add(&reps[x], AC_V_ERROR, "harness: %s", e->msg);
    return -1;
  }
  out->kernel_s = ac_now() - t0;
  ac_compare_opts pcs[AC_JUDGE_MAX_CLASSES];
  if (n > AC_JUDGE_MAX_CLASSES) n = AC_JUDGE_MAX_CLASSES;
  for (int x = 0; x < n; x++) class_of_run(&cos[x], &out->run, c->p.dtype, &pcs[x], &reps[x]);
  cos = pcs;
  out->prec = pcs[0].prec;
  out->oracle = src->r;
  /* dropout: judged against the kernel's own mask (judge_dropout.c) */
  int dc = ac_judge_dropout_case(c, &out->run, &out->dcase, e);
  if (dc < 0 && out->run.status == AC_RUN_OK && out->run.n_mask_unwritten == 0) {
    for (int x = 0; x < n; x++) ac_report_add(&reps[x], AC_V_ERROR, "dropout: %s", e->msg);
    return -1;
  }
  if (dc < 0) {   /* no mask to judge o against: the run's guards and what it left unwritten */
    for (int x = 0; x < n; x++) {
      if (!out->run.guard_ok) ac_report_add(&reps[x], AC_V_GUARD, "%s", out->run.guard_msg);
      ac_report_add(&reps[x], AC_V_UNWRITTEN, "%lld dropout mask elements neither 0 nor 1 (0xff: never written): "
                    "nothing to judge o against", (long long)out->run.n_mask_unwritten);
    }
    return 0;
  }
  out->has_dcase = dc == 1;
  const ac_case *jc = ac_judged_case(out, c);
  if (out->has_dcase && out->oracle && !ac_judge_dropout_same(c, jc)) out->oracle = NULL;   /* another mask's */
  if (!out->oracle && (src->get || src->opts) && out->run.status == AC_RUN_OK) {
    double t1 = ac_now();
    if ((src->get ? src->get(src->ctx, jc, &out->own, e) : ac_judge_oracle(jc, src->opts, &out->own, e)) < 0) {
      for (int x = 0; x < n; x++) ac_report_add(&reps[x], AC_V_ERROR, "oracle: %s", e->msg);
      return -1;
    }
    out->has_own = 1;
    out->oracle = &out->own;
    out->oracle_s = ac_now() - t1;
  }
  /* quantize-on-store: the store against its quantizer, and the attention over what was stored */
  ac_case over;
  int differs = 0, dx;
  for (int x = 0; x < n; x++)
    if (ac_store_judge(c, &out->run, &reps[x], x ? NULL : &over, x ? &dx : &differs, e) < 0) {
      ac_report_add(&reps[x], AC_V_ERROR, "store: %s", e->msg);
      if (differs) ac_case_free(&over);
      return -1;
    }
  if (differs) {
    if (out->has_own) ac_oracle_result_free(&out->own);
    out->has_own = 0;
    if (!src->get || src->get(src->ctx, &over, &out->own, e) < 0) {
      if (!src->get) ac_err_set(e, "no oracle for the cache the kernel stored");
      for (int x = 0; x < n; x++) ac_report_add(&reps[x], AC_V_ERROR, "oracle of the stored cache: %s", e->msg);
      ac_case_free(&over);
      return -1;
    }
    out->has_own = 1;
    out->oracle = &out->own;
  }
  for (int x = 0; x < n; x++)
    if (ac_compare_run(differs ? &over : jc, out->oracle, &out->run, &cos[x], &reps[x], e) < 0) {
      ac_report_add(&reps[x], AC_V_ERROR, "compare: %s", e->msg);
      if (differs) ac_case_free(&over);
      return -1;
    }
  if (differs) ac_case_free(&over);
  /* NONDETERMINISTIC does not depend on the class: the first class's report decides when to stop */
  for (int r = 0; r < repeat && out->run.status == AC_RUN_OK && !(reps[0].kinds & (1u << AC_V_NONDETERMINISTIC)); r++) {
    ac_run_result b;
    ac_err be;
    memset(&b, 0, sizeof b);
    if (ac_harness_run(k, c, ro, &b, &be) == 0) {
      for (int x = 0; x < n; x++) {
        if (b.status == AC_RUN_OK)
          ac_compare_repeat(c, &out->run, &b, &reps[x]);
        else
          ac_compare_run(c, out->oracle, &b, &cos[x], &reps[x], &be);
      }
      if (b.status != AC_RUN_OK) r = repeat;
    }
    ac_run_result_free(&b);
  }
  return 0;
}
