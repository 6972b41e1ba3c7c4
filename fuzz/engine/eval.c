/* eval.c: one case on the kernel under test: forked run, oracle, comparison, verdict kinds.
 * The judgement is the comparison layer's (src/judge/compare.h); this file only wires it. */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include "fuzz.h"
#include "quant.h"
#include "variants.h"
#include "judge.h"

void ac_eval_ctx_init(ac_eval_ctx *x, ac_kernel *k, const char *spec)
{
  memset(x, 0, sizeof *x);
  x->kernel = k;
  x->kernel_spec = spec;
  ac_run_opts_init(&x->run);
  x->run.want_lse = 1;
  ac_compare_opts_init(&x->cmp);
  ac_policies_init(&x->pol);
  x->oracle_threads = 1;
  x->metamorphic = AC_META_SOME;
  x->grad = ac_kernel_has_backward(k, x->run.timeout_s);   /* an exec worker's declaration read first */
  x->grad_caps = ac_kernel_backward_caps(k);
}

static double finite_or_big(double x)
{
  if (isnan(x)) return 1e300;
  if (isinf(x)) return 1e300;
  return x;
}

/* The larger of two maxima, NaN first (an undefined distance), then inf. */
static double worse(double a, double b)
{
  if (isnan(a) || isnan(b)) return NAN;
  return a > b ? a : b;
}

int ac_eval_oracle(const ac_case *c, int threads, ac_oracle_result *r, ac_err *e)
{
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = threads;
  oo.rows = ac_fuzz_oracle_rows(c);
  oo.rows_seed = oo.rows ? ac_case_hash(c) : 0;
  oo.formats = 1u << c->p.dtype;
  oo.nmu = ac_precision_mu_list(oo.mu, AC_ORACLE_NMU);
  return ac_oracle_run(c, &oo, r, e);
}

int ac_eval_case(const ac_eval_ctx *x, const ac_case *c, int repeat, ac_eval *ev, ac_err *e)
{
  return ac_eval_case_pre(x, c, NULL, repeat, ev, e);
}

/* Keeps the row of the worst output element: exact value, kernel value and W per column, a
 * window of AC_ROW_MAX columns around the worst one. */
static void keep_row(const ac_case *c, const ac_oracle_result *r, const void *o, const ac_compare_opts *cmp,
                     const ac_worst_elem *w, ac_eval_row *row)
{
  const ac_problem *p = &c->p;
  int64_t ri = (w->b * p->heads + w->h) * p->tq + w->i;
  if (!r || !o || !w->valid || w->is_lse || ri < 0 || ri >= r->nrows || !r->rows[ri].selected) return;
  int64_t d0 = w->d - AC_ROW_MAX / 2, n = p->dv < AC_ROW_MAX ? p->dv : AC_ROW_MAX;
  if (d0 + n > p->dv) d0 = p->dv - n;
  if (d0 < 0) d0 = 0;
  row->b = w->b, row->h = w->h, row->i = w->i, row->d0 = d0;
  for (int64_t x = 0; x < n; x++) {
    const ac_oracle_elem *el = ac_oracle_elem_at(r, ri, d0 + x);
    row->exact[x] = el->o;
    row->kernel[x] = ac_load(p->dtype, o, (size_t)(ri * p->dv + d0 + x));
    row->W[x] = NAN;
    if (cmp->budget == AC_BUDGET_CLASS && isfinite(el->o)) {
      ac_bound bd;
      ac_oracle_row rc;
      ac_oracle_elem ec;
      ac_budget_elem(cmp->prec ? cmp->prec : ac_precision_default(p->dtype), p, p->dtype,
                     ac_compare_conv_row(cmp, &r->rows[ri], &rc), ac_compare_conv_elem(cmp, &r->rows[ri], el, &ec), r->mu,
                     r->nmu, &bd);
      row->W[x] = bd.W;
    }
  }
  row->n = (int)n;
}

static json_object *num(double v)
{
  if (isfinite(v)) return json_object_new_double(v);
  return json_object_new_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

void ac_eval_row_json(const ac_eval *ev, struct json_object *r)
{
  const ac_eval_row *row = &ev->row;
  if (row->n <= 0) return;
  json_object *o = json_object_new_object(), *a[3];
  const double *src[3] = {row->exact, row->kernel, row->W};
  const char *names[3] = {"exact", "kernel", "W"};
  json_object_object_add(o, "b", json_object_new_int64(row->b));
  json_object_object_add(o, "h", json_object_new_int64(row->h));
  json_object_object_add(o, "i", json_object_new_int64(row->i));
  json_object_object_add(o, "d0", json_object_new_int64(row->d0));
  for (int k = 0; k < 3; k++) {
    a[k] = json_object_new_array();
    for (int x = 0; x < row->n; x++) json_object_array_add(a[k], num(src[k][x]));
    json_object_object_add(o, names[k], a[k]);
  }
  json_object_object_add(r, "worst_row", o);
}

static int eval_oracle_get(void *ctx, const ac_case *c, ac_oracle_result *out, ac_err *e)
{
  const ac_eval_ctx *x = ctx;
  if (!x->rows_all) return ac_eval_oracle(c, x->oracle_threads, out, e);
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  oo.threads = x->oracle_threads;
  oo.formats = 1u << c->p.dtype;
  oo.nmu = ac_precision_mu_list(oo.mu, AC_ORACLE_NMU);
  return ac_oracle_run(c, &oo, out, e);
}

void ac_eval_policies(const ac_eval_ctx *x, ac_eval *ev)
{
  ev->kept = 0;
  ev->any_fail = 0;
  for (int k = 0; k < AC_V_NKINDS; k++)
    if (ev->kinds & (1u << k)) {
      if (k == AC_V_SKIP || k == AC_V_ERROR) continue;
      if (x->pol.p[k] == AC_POLICY_FAIL || x->pol.p[k] == AC_POLICY_WARN) ev->kept |= 1u << k;
      if (x->pol.p[k] == AC_POLICY_FAIL) ev->any_fail = 1;
    }
}

/* Metamorphic check of a run the comparison left worth checking. */
static void eval_meta(const ac_eval_ctx *x, const ac_case *c, const ac_compare_opts *cmp, const ac_run_result *rr,
                      ac_eval *ev)
{
  const uint32_t no_meta = (1u << AC_V_OUT_OF_DOMAIN) | (1u << AC_V_ERROR) | (1u << AC_V_SKIP) | (1u << AC_V_CRASH) |
                           (1u << AC_V_TIMEOUT) | (1u << AC_V_GUARD);
  if (rr->status != AC_RUN_OK || !rr->guard_ok || (ev->rep.kinds & no_meta) || !ac_meta_selected(c, x->metamorphic))
    return;
  double t2 = ac_now();
  ac_err me;
  if (ac_meta_check(x->kernel, &x->run, c, cmp->prec, rr, &ev->meta, &me) == 0 && ev->meta.bad) {
    const ac_meta_result *m = &ev->meta;
    ac_report_add(&ev->rep, AC_V_METAMORPHIC,
                  "metamorphic (%s): %lld of %lld elements disagree; o[%lld,%lld,%lld,%lld] = %a here, %a transformed, "
                  "|diff| %.3g > tolerance %.3g",
                  m->transform, (long long)m->n_bad, (long long)m->n_compared, (long long)m->b, (long long)m->h,
                  (long long)m->i, (long long)m->d, m->a, m->t, m->diff, m->tol);
  }
  ev->meta_s = ac_now() - t2;
}

int ac_eval_case_pre(const ac_eval_ctx *x, const ac_case *c, const ac_oracle_result *pre, int repeat, ac_eval *ev,
                     ac_err *e)
{
  memset(ev, 0, sizeof *ev);
  ev->worst_i = -1;
  ev->worst_tq = c->p.tq;
  ac_compare_opts cmp = x->cmp;
  cmp.rows = x->rows_all ? NULL : ac_fuzz_oracle_rows(c);
  if (ac_judge_resolve_opts(x->kernel, x->precision, x->run.timeout_s, c->p.dtype, &cmp, e)) return -1;
  cmp.alibi_lse = ac_kernel_alibi_lse(x->kernel, x->run.alibi_lse);
  ac_report_init(&ev->rep, &cmp);
  char why[256];
  if (!ac_kernel_supports(x->kernel, &c->p, why, sizeof why)) {
    ac_report_add(&ev->rep, AC_V_SKIP, "unsupported: %s", why);
    ev->kinds = ev->rep.kinds;
    ev->status = AC_RUN_UNSUPPORTED;
    return 0;
  }
  ac_judge_oracle_src src = {pre, eval_oracle_get, (void *)x};
  ac_judged j;
  int rc = ac_judge_case(x->kernel, c, &cmp, &x->run, repeat, &src, &ev->rep, &j, e);
  ev->kernel_s = j.kernel_s;
  ev->oracle_s = j.oracle_s;
  ev->status = j.run.status;
  ev->refused_by_run = j.run.status == AC_RUN_UNSUPPORTED;
  if (j.run.not_started) snprintf(ev->not_started, sizeof ev->not_started, "%s", j.run.msg);
  cmp.prec = j.prec; /* the class of the run (a kernel may name it per problem) */
  if (rc == 0 && j.run.status == AC_RUN_OK) {
    keep_row(c, j.oracle, j.run.o, &cmp, &ev->rep.worst, &ev->row);
    eval_meta(x, c, &cmp, &j.run, ev);
    ac_eval_grad(x, c, cmp.prec, ev);
  }
  ac_judged_free(&j);
  ev->kinds = ev->rep.kinds;
  if (rc) return -1;
  ac_eval_policies(x, ev);
  double s = 0, w = 0;
  if (ev->rep.n_judged > 0 || ev->rep.lse_judged > 0) {
    s = finite_or_big(ev->rep.max_err_e);
    if (ev->rep.has_lse && finite_or_big(ev->rep.lse_max_err_e) > s) s = finite_or_big(ev->rep.lse_max_err_e);
    w = finite_or_big(ev->rep.max_err_w);
    if (ev->rep.has_lse && finite_or_big(ev->rep.lse_max_err_w) > w) w = finite_or_big(ev->rep.lse_max_err_w);
  }
  ev->score = s;
  ev->err_w = w;
  ev->max_err_w = ev->max_err_e = 0;
  if (ev->rep.n_judged > 0 || ev->rep.lse_judged > 0) {
    ev->max_err_w = worse(ev->rep.max_err_w, ev->rep.has_lse ? ev->rep.lse_max_err_w : 0);
    ev->max_err_e = worse(ev->rep.max_err_e, ev->rep.has_lse ? ev->rep.lse_max_err_e : 0);
  }
  const ac_worst_elem *we = ac_report_worst(&ev->rep);
  if (we->valid) ev->worst_i = we->i;
  return 0;
}

/* A kernel that takes quantized cases only is probed with K and V in the first format it declares
 * (head dims 32, which every block divides); p is left as it is for every other kernel. */
static void quant_probe(const ac_kernel *k, ac_problem *p)
{
  uint32_t kv = ac_kernel_kv_formats(k, NULL);
  const ac_qfmt_info *f = kv && ac_kernel_quant_only(k) ? ac_qfmt_get(__builtin_ctz(kv)) : NULL;
  if (!f) return;
  p->quant[1].fmt = p->quant[2].fmt = __builtin_ctz(kv);
  p->quant[1].gran = p->quant[2].gran = (int)f->gran;
  p->quant[1].block = p->quant[2].block = f->gran == AC_QG_BLOCK ? f->block : 0;
  p->dk = p->dv = 32;
  p->scale = 1.0 / sqrt(32.0);
}

void ac_eval_probe_limits(const ac_kernel *k, ac_gen_limits *l)
{
  uint32_t dt = 0, mk = 0;
  for (int t = 0; t < AC_NDTYPES; t++)
    for (int m = 0; m < 3; m++) {
      ac_problem p;
      memset(&p, 0, sizeof p);
      p.dtype = (ac_dtype)t;
      p.mask = (ac_mask)m;
      p.batch = p.heads = p.kv_heads = 1;
      p.tq = p.tk = 4;
      p.dk = p.dv = 8;
      p.scale_is_default = 1;
      p.scale = 1.0 / sqrt(8.0);
      quant_probe(k, &p);
      char why[256];
      int ok = ac_kernel_supports(k, &p, why, sizeof why);
      if (!ok && (ac_kernel_declared_caps(k) & ATTNCHECK_FEAT_LAYOUTS)) {   /* a layout-only kernel: one sequence */
        ac_features_plain(&p);
        p.f.used = ac_kernel_declared_caps(k) & ATTNCHECK_FEAT_VARLEN ? AC_FEAT_VARLEN : AC_FEAT_PAGED;
        p.l.nseq = 1, p.l.max_tq = p.l.max_tk = 4;
        if (p.f.used == AC_FEAT_PAGED) p.l.page_size = 4, p.l.num_pages = p.l.max_pages = 1;
        ok = ac_kernel_supports(k, &p, why, sizeof why);
      }
      if (ok) {
        dt |= 1u << t;
        mk |= 1u << m;
      }
    }
  l->dtypes = dt ? dt : (1u << AC_F32);
  l->masks = mk ? mk : 7;
}

void ac_eval_print(FILE *f, const char *label, const ac_case *c, const ac_eval *ev)
{
  char kinds[256] = "";
  for (int k = 0; k < AC_V_NKINDS; k++)
    if (ev->kinds & (1u << k)) {
      if (kinds[0]) strncat(kinds, ",", sizeof kinds - strlen(kinds) - 1);
      strncat(kinds, ac_verdict_name((ac_verdict_kind)k), sizeof kinds - strlen(kinds) - 1);
    }
  if (!kinds[0]) snprintf(kinds, sizeof kinds, "PASS");
  char size[160];
  ac_case_size_str(c, size, sizeof size);
  char rows[200], mm[200], lb[4400];
  fprintf(f, "%s: %s  [%s]  err/W=%.3g err/E=%.3g rows=%s", ac_str_escape(label, lb, sizeof lb), kinds, size,
          ev->max_err_w, ev->max_err_e, ac_report_rows(&ev->rep, rows, sizeof rows));
  if (ac_report_mismatch(&ev->rep, mm, sizeof mm)) fprintf(f, " mismatch=\"%s\"", mm);
  const ac_worst_elem *w = ac_report_worst(&ev->rep);
  if (w->valid) {
    if (w->is_lse)
      fprintf(f, "  worst lse[%lld,%lld,%lld] exact=%.9g (%a) kernel=%.9g (%a)", (long long)w->b, (long long)w->h,
              (long long)w->i, w->exact, w->exact, w->kernel, w->kernel);
    else
      fprintf(f, "  worst o[%lld,%lld,%lld,%lld] exact=%.9g (%a) kernel=%.9g (%a) ulps=%.3g", (long long)w->b,
              (long long)w->h, (long long)w->i, (long long)w->d, w->exact, w->exact, w->kernel, w->kernel, w->ulps);
  }
  fprintf(f, "  [%s]", ev->rep.budget_desc);
  if (ev->rep.note[0]) fprintf(f, "  %s", ev->rep.note);
  fputc('\n', f);
}

/* p as one sequence of the layout kind (AC_FEAT_VARLEN or AC_FEAT_PAGED): its tq queries and
 * tk keys, packed or in one page. */
static void layout_probe(ac_problem *p, uint32_t kind)
{
  ac_features_plain(p);
  p->f.used = kind;
  p->l.nseq = 1, p->l.max_tq = p->tq, p->l.max_tk = p->tk;
  if (kind == AC_FEAT_PAGED) p->l.page_size = p->tk, p->l.num_pages = p->l.max_pages = 1;
}

void ac_eval_probe_features(const ac_kernel *k, ac_gen_limits *l)
{
  ac_problem p;
  memset(&p, 0, sizeof p);
  uint32_t dt = l->dtypes ? l->dtypes : 1u << AC_F32;
  p.dtype = dt & (1u << AC_F32) ? AC_F32 : (ac_dtype)__builtin_ctz(dt);
  p.mask = AC_MASK_NONE;
  if (l->masks && !(l->masks & 1u)) p.mask = l->masks & 2u ? AC_MASK_CAUSAL : AC_MASK_CAUSAL_BR;
  p.batch = p.heads = p.kv_heads = 1;
  p.tq = p.tk = 4;
  p.dk = p.dv = 8;
  p.scale_is_default = 1;
  p.scale = 1.0 / sqrt(8.0);
  quant_probe(k, &p);
  l->kv_formats = ac_kernel_kv_formats(k, &l->q_formats);   /* quantized tensors (docs/quantized.md) */
  l->quant_only = ac_kernel_quant_only(k);
  l->params_q_dtype = ac_kernel_params_q_dtype(k);
  uint32_t got = 0;
  /* mixed dtypes: one of the mixed_dtypes family's combinations in the kernel's dtypes */
  int nc;
  const ac_dtype (*cb)[5] = ac_mixed_dtype_combos(&nc);
  for (int i = 0; i < nc && !(got & AC_FEAT_MIXED_DTYPES); i++) {
    ac_problem m = p;
    m.dtype = cb[i][0];
    ac_features_plain(&m);
    ac_err e;
    char why[256];
    if ((dt >> m.dtype & 1u) && !ac_features_set_dtypes(&m, cb[i] + 1, &e) && ac_kernel_supports(k, &m, why, sizeof why))
      got |= AC_FEAT_MIXED_DTYPES;
  }
  /* the serving layouts: one sequence of 4 queries and 4 keys, packed or in one page */
  char why[256];
  uint32_t lay = 0;
  for (uint32_t kind = AC_FEAT_VARLEN; kind; kind = kind == AC_FEAT_VARLEN ? AC_FEAT_PAGED : 0) {
    ac_problem m = p;
    layout_probe(&m, kind);
    if (ac_kernel_supports(k, &m, why, sizeof why)) lay = lay ? lay : kind, got |= kind;
  }
  /* a kernel that takes no dense case: its variants are probed on the one-sequence layout */
  ac_problem d = p;
  ac_features_plain(&d);
  l->no_dense = lay && !ac_kernel_supports(k, &d, why, sizeof why);
  for (uint32_t bit = 1; bit & AC_FEAT_ALL; bit <<= 1) {
    if (bit == AC_FEAT_MIXED_DTYPES) continue;   /* probed above */
    ac_problem m = p;
    if (l->no_dense) layout_probe(&m, lay);
    else ac_features_plain(&m);
    m.f.used |= bit;
    if (bit == AC_FEAT_WINDOW) m.f.win_left = 2, m.f.win_right = 0;
    if (bit == AC_FEAT_SOFTCAP) m.f.softcap = 30;
    if (ac_kernel_supports(k, &m, why, sizeof why)) got |= bit;
  }
  l->features = got;
  /* the shapes: GQA, dv != dk, tq != tk, an explicit scale, each alone on the dense problem (a
   * layout-only kernel draws layout families, which shape their cases themselves; a kernel that
   * refuses the problem itself tells nothing) */
  l->shapes = AC_SHAPE_ALL;
  int base = !l->no_dense && ac_kernel_supports(k, &d, why, sizeof why);
  for (uint32_t s = AC_SHAPE_GQA; base && (s & AC_SHAPE_ALL); s <<= 1) {
    ac_problem m = d;
    if (s == AC_SHAPE_GQA) m.heads = 2, m.kv_heads = 1;
    if (s == AC_SHAPE_DV_NE_DK) m.dv = 4;
    if (s == AC_SHAPE_TQ_NE_TK) m.tk = 6;
    if (s == AC_SHAPE_SCALE) m.scale_is_default = 0, m.scale = 0.5;
    if (!ac_kernel_supports(k, &m, why, sizeof why)) l->shapes &= ~s;
  }
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  l->backward = ac_kernel_has_backward(k, ro.timeout_s);   /* run_backward, or a worker's declaration */
}

