/* api_judge.c: libattncheck's judgements: the oracle of a case, a kernel's o and LSE (the
 * comparison of `attncheck check` and `compare`), its dQ, dK, dV and dσ (`compare --grad`). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "api_int.h"
#include "report.h"

static int all_zero(const int64_t *s, int n)
{
  for (int i = 0; i < n; i++)
    if (s[i]) return 0;
  return 1;
}

int ac_api_oracle(attncheck_ctx *ctx, attncheck_case *cs, ac_err *e)
{
  const char *rows = ctx->a.j.rows ? ctx->a.j.rows : "";
  if (cs->has_oracle && !strcmp(cs->oracle_rows, rows) && cs->oracle_seed == ctx->a.j.rows_seed) return 0;
  if (strlen(rows) >= sizeof cs->oracle_rows) return ac_err_set(e, "rows: the selection is too long");
  if (ac_judge_rows_check(&cs->c, &ctx->a.j, e) < 0) return -1;
  if (cs->has_oracle) ac_oracle_result_free(&cs->orr);
  cs->has_oracle = 0;
  memset(&cs->orr, 0, sizeof cs->orr);
  if (ac_judge_oracle(&cs->c, &ctx->a.j, &cs->orr, e) < 0) return -1;
  cs->has_oracle = 1;
  snprintf(cs->oracle_rows, sizeof cs->oracle_rows, "%s", rows);
  cs->oracle_seed = ctx->a.j.rows_seed;
  return 0;
}

int attncheck_oracle(attncheck_ctx *ctx, attncheck_case *c)
{
  if (!ctx) return -1;
  if (!c) return ac_api_fail(ctx, "no case");
  ac_err e;
  return ac_api_oracle(ctx, c, &e) < 0 ? ac_api_fail(ctx, "%s", e.msg) : 0;
}

attncheck_result *ac_api_result_new(attncheck_case *cs)
{
  attncheck_result *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->cs = cs;
  cs->refs++;
  r->s.struct_size = sizeof r->s;
  r->s.nmse = NAN;
  r->s.worst_index[0] = r->s.worst_index[1] = r->s.worst_index[2] = r->s.worst_index[3] = -1;
  return r;
}

void attncheck_result_free(attncheck_result *r)
{
  if (!r) return;
  free(r->line);
  free(r->detail);
  free(r->json);
  free(r->o);
  free(r->lse);
  if (r->grad) ac_grad_run_result_free(&r->run);
  ac_api_case_unref(r->cs);
  free(r);
}

/* The labels of the verdict line. */
static const char *label(const char *s, const char *dflt)
{
  return s && *s ? s : dflt;
}

/* A stream that collects text into *buf (NULL when none can be made: out of memory). */
static FILE *text_open(char **buf, size_t *n)
{
  return open_memstream(buf, n);
}

/* The text of f (opened on *buf); fclose sets *buf. */
static char *text_close(FILE *f, char **buf)
{
  if (!f) return strdup("");
  fclose(f);
  return *buf ? *buf : strdup("");
}

/* The forward's summary and texts from rep. */
static void forward_texts(attncheck_ctx *ctx, attncheck_result *r, const ac_report *rep)
{
  const ac_problem *p = &r->cs->c.p;
  const ac_policies *pol = &ctx->a.pol;
  attncheck_summary *s = &r->s;
  s->kinds = rep->kinds;
  s->status = (int32_t)ac_status_of(pol, rep->kinds);
  ac_exit ex = {0, 0};
  ac_exit_add(&ex, pol, rep->kinds);
  s->exit_code = ac_exit_code(&ex);
  s->err_w = rep->has_lse && rep->lse_max_err_w > rep->max_err_w ? rep->lse_max_err_w : rep->max_err_w;
  s->err_e = rep->has_lse && rep->lse_max_err_e > rep->max_err_e ? rep->lse_max_err_e : rep->max_err_e;
  s->ulps = rep->max_ulps;
  s->nmse = rep->nmse;
  s->bad = rep->n_fail + rep->lse_fail;
  s->judged = rep->n_judged;
  s->rows_judged = rep->n_rows_judged;
  s->rows_total = rep->n_rows_total;
  const ac_worst_elem *w = ac_report_worst(rep);
  if (w && w->valid) {
    s->worst_tensor = w->is_lse ? ATTNCHECK_T_LSE : ATTNCHECK_T_O;
    s->worst_index[0] = w->b, s->worst_index[1] = w->h, s->worst_index[2] = w->i,
    s->worst_index[3] = w->is_lse ? -1 : w->d;
    s->worst_exact = w->exact, s->worst_got = w->kernel, s->worst_err = w->err, s->worst_W = w->W, s->worst_E = w->E;
  }
  const char *name = label(ctx->name, "outputs"), *cn = label(ctx->casename, "case");
  const char *repro = s->status == ATTNCHECK_FAIL || s->status == ATTNCHECK_WARN ? ctx->repro : NULL;
  char *buf = NULL;
  size_t n = 0;
  FILE *f = text_open(&buf, &n);
  if (f) ac_report_line(f, name, cn, rep, pol, p->dtype);
  r->line = text_close(f, &buf);
  buf = NULL;
  f = text_open(&buf, &n);
  if (f) ac_report_detail(f, rep, p->dtype, repro);
  r->detail = text_close(f, &buf);
  buf = NULL;
  f = text_open(&buf, &n);
  if (f) ac_report_json(f, name, cn, rep, pol, p->dtype, ctx->repro);
  r->json = text_close(f, &buf);
}

/* lse [B][H][tq] through strides (all zero: contiguous) into dense. */
static float *gather_lse(const ac_problem *p, const float *lse, const int64_t st[3])
{
  int64_t s[3] = {p->heads * p->tq, p->tq, 1};
  if (!all_zero(st, 3)) memcpy(s, st, sizeof s);
  float *d = ac_xmalloc((size_t)(p->batch * p->heads * p->tq) * sizeof *d + 1);
  size_t n = 0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) d[n++] = lse[b * s[0] + h * s[1] + i * s[2]];
  return d;
}

/* The comparison options of ctx for cs: the class resolved for the case's dtype. */
static int compare_opts(attncheck_ctx *ctx, const ac_case *c, ac_compare_opts *co, ac_err *e)
{
  *co = ctx->a.j.cmp;
  co->rows = ctx->a.j.rows;
  co->alibi_lse = ac_kernel_alibi_lse(NULL, ctx->a.j.run.alibi_lse); /* no kernel: the alibi-lse option, else the ABI's */
  return ac_precision_resolve(ctx->a.j.precision_override, NULL, c->p.dtype, &co->prec, e);
}

int attncheck_judge(attncheck_ctx *ctx, attncheck_case *cs, const attncheck_outputs *out, attncheck_result **res)
{
  if (!ctx || !res) return -1;
  *res = NULL;
  ctx->err[0] = 0;
  if (!cs) return ac_api_fail(ctx, "no case");
  if (!out || out->struct_size < offsetof(attncheck_outputs, lse)) return ac_api_fail(ctx, "no outputs (struct_size)");
  if (!out->o) return ac_api_fail(ctx, "outputs.o is NULL");
  const ac_case *c = &cs->c;
  ac_err e;
  ac_compare_opts co;
  if (ac_judge_rows_check(c, &ctx->a.j, &e) < 0) return ac_api_fail(ctx, "rows: %s", e.msg);
  if (compare_opts(ctx, c, &co, &e) < 0) return ac_api_fail(ctx, "%s", e.msg);
  attncheck_result *r = ac_api_result_new(cs);
  if (!r) return ac_api_fail(ctx, "out of memory");
  ac_dtype od = ac_tensor_dtype(&c->p, 'o');
  r->o = ac_xmalloc(ac_case_bytes(c, 'o') + 1);
  ac_api_gather_qkv(c, 'o', od, out->o, out->o_stride, r->o);
  const float *lse = out->struct_size > offsetof(attncheck_outputs, lse) ? out->lse : NULL;
  if (lse) r->lse = gather_lse(&c->p, lse, out->lse_stride);
  ac_report rep;
  ac_report_init(&rep, &co);
  if (co.budget == AC_BUDGET_BASELINE)
    ac_report_add(&rep, AC_V_ERROR, "the baseline budget needs a kernel run: use attncheck check");
  else if (ac_api_oracle(ctx, cs, &e) < 0)
    ac_report_add(&rep, AC_V_ERROR, "oracle: %s", e.msg);
  else if (ac_compare_outputs(c, &cs->orr, r->o, r->lse, NULL, &co, &rep, &e) < 0)
    ac_report_add(&rep, AC_V_ERROR, "%s", e.msg);
  forward_texts(ctx, r, &rep);
  *res = r;
  return 0;
}

/* The backward's summary and texts. */
static void grad_texts(attncheck_ctx *ctx, attncheck_result *r, const ac_grad_judgement *j, const ac_precision *cls)
{
  const ac_problem *p = &r->cs->c.p;
  attncheck_summary *s = &r->s;
  const char *st = ac_grad_status(&r->run, j);
  s->status = !strcmp(st, "PASS")   ? ATTNCHECK_PASS
              : !strcmp(st, "FAIL") ? ATTNCHECK_FAIL
              : !strcmp(st, "SKIP") ? ATTNCHECK_SKIP
                                    : ATTNCHECK_ERROR;
  s->kinds = s->status == ATTNCHECK_FAIL ? 1u << AC_V_GRAD_FAIL : s->status == ATTNCHECK_ERROR ? 1u << AC_V_ERROR : 0;
  s->exit_code = s->status == ATTNCHECK_FAIL    ? AC_EXIT_FAIL
                 : s->status == ATTNCHECK_ERROR ? AC_EXIT_INTERNAL
                                                : AC_EXIT_OK;
  s->err_w = s->err_e = 0;
  s->bad = j->failed;
  int wt = -1;
  for (int t = 0; t < j->nt; t++) {
    const ac_grad_tjudge *tj = &j->t[t];
    s->judged += tj->checked;
    if (tj->max_e > s->err_e) s->err_e = tj->max_e;
    if (tj->worst_x >= 0 && (wt < 0 || !(tj->worst <= j->t[wt].worst))) wt = t;
  }
  s->rows_judged = s->rows_total = p->batch * p->heads * p->tq;
  if (wt >= 0) {
    const ac_grad_tjudge *tj = &j->t[wt];
    s->err_w = tj->worst;
    s->worst_tensor = ATTNCHECK_T_DQ + wt;
    s->worst_index[0] = tj->worst_x, s->worst_index[1] = tj->worst_t;
    s->worst_exact = tj->want, s->worst_got = tj->got, s->worst_err = fabs(tj->got - tj->want), s->worst_W = tj->W,
    s->worst_E = tj->E;
  }
  const char *name = label(ctx->name, "outputs"), *cn = label(ctx->casename, "case");
  char *buf = NULL;
  size_t n = 0;
  FILE *f = text_open(&buf, &n);
  if (f) ac_grad_line(f, name, cn, &r->run, j, cls, p->dtype);
  r->line = text_close(f, &buf);
  buf = NULL;
  f = text_open(&buf, &n);
  if (f) ac_grad_detail(f, &r->run, j, s->status == ATTNCHECK_FAIL ? ctx->repro : NULL);
  r->detail = text_close(f, &buf);
  buf = NULL;
  f = text_open(&buf, &n);
  if (f) ac_grad_json(f, name, cn, &r->run, j, cls, p->dtype, ctx->repro);
  r->json = text_close(f, &buf);
}

int attncheck_judge_grad(attncheck_ctx *ctx, attncheck_case *cs, const attncheck_grads *g, attncheck_result **res)
{
  if (!ctx || !res) return -1;
  *res = NULL;
  ctx->err[0] = 0;
  if (!cs) return ac_api_fail(ctx, "no case");
  if (!g || g->struct_size < offsetof(attncheck_grads, dsinks)) return ac_api_fail(ctx, "no gradients (struct_size)");
  if (!g->dq || !g->dk || !g->dv) return ac_api_fail(ctx, "gradients dq, dk and dv must be set");
  const ac_case *c = &cs->c;
  if (ac_problem_quantized(&c->p))
    return ac_api_fail(ctx, "quantized tensors get no backward judgement (an inference cache; docs/quantized.md)");
  if (!c->dout) return ac_api_fail(ctx, "the case has no dO");
  ac_err e;
  const ac_precision *cls = NULL;
  if (ac_judge_rows_check(c, &ctx->a.j, &e) < 0) return ac_api_fail(ctx, "rows: %s", e.msg);
  if (ac_precision_resolve(ctx->a.j.precision_override, NULL, c->p.dtype, &cls, &e) < 0)
    return ac_api_fail(ctx, "%s", e.msg);
  attncheck_result *r = ac_api_result_new(cs);
  if (!r) return ac_api_fail(ctx, "out of memory");
  r->grad = 1;
  ac_grad_run_result *run = &r->run;
  run->status = AC_RUN_OK;
  run->guard_ok = 1;
  run->dtype = c->p.dtype;
  const void *src[3] = {g->dq, g->dk, g->dv};
  const int64_t *st[3] = {g->dq_stride, g->dk_stride, g->dv_stride};
  const char x[3] = {'q', 'k', 'v'};
  for (int t = 0; t < 3; t++) {
    size_t bytes = ac_case_bytes(c, x[t]);
    run->g[t] = ac_xmalloc(bytes + 1);
    run->count[t] = (int64_t)(bytes / ac_dtype_size(c->p.dtype));
    ac_api_gather_qkv(c, x[t], c->p.dtype, src[t], st[t], run->g[t]);
  }
  const float *ds = g->struct_size > offsetof(attncheck_grads, dsinks) ? g->dsinks : NULL;
  if (ds && c->sinks) {
    run->dsinks = ac_xmalloc((size_t)c->p.heads * sizeof(float));
    memcpy(run->dsinks, ds, (size_t)c->p.heads * sizeof(float));
    run->count[3] = c->p.heads;
  }
  ac_grad_opts go;
  ac_grad_opts_for_judge(&go, &ctx->a.j);
  ac_grad_judgement j;
  if (ac_grad_judge_given_as(c, cls, ac_kernel_alibi_lse(NULL, ctx->a.j.run.alibi_lse), &go, run, &j, &e) < 0) {
    attncheck_result_free(r);
    return ac_api_fail(ctx, "%s", e.msg);
  }
  grad_texts(ctx, r, &j, cls);
  *res = r;
  return 0;
}

int attncheck_result_summary(const attncheck_result *r, attncheck_summary *s)
{
  if (!r || !s || s->struct_size < sizeof(uint32_t)) return -1;
  uint32_t n = s->struct_size < sizeof r->s ? s->struct_size : (uint32_t)sizeof r->s;
  memcpy(s, &r->s, n);
  s->struct_size = n;
  return 0;
}

const char *attncheck_result_line(const attncheck_result *r)
{
  return r && r->line ? r->line : "";
}
const char *attncheck_result_detail(const attncheck_result *r)
{
  return r && r->detail ? r->detail : "";
}
const char *attncheck_result_json(const attncheck_result *r)
{
  return r && r->json ? r->json : "";
}
