/* explain_grad.c: explain --grad, the backward of one query row (explain_grad.h). */
#include "config.h"
#include "explain_grad.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "commands.h"
#include "grad.h"
#include "variants.h"

/* The binary64 stages of the row: P, dP, dS per key and D (for reading, not judging); under a
 * softcap also the derivative factor f_j = 1 - tanh²(c q·k_j / cap) and dS_j f_j (what dQ and dK take). */
static void print_stages(const ac_case *c, int64_t b, int64_t h, int64_t i)
{
  const ac_problem *p = &c->p;
  const int64_t kvh = h / (p->heads / p->kv_heads);
  const ac_dtype od = ac_tensor_dtype(p, 'o');
  double *s = ac_xcalloc((size_t)p->tk + 1, sizeof *s), *dp = ac_xcalloc((size_t)p->tk + 1, sizeof *dp);
  double *f = ac_xcalloc((size_t)p->tk + 1, sizeof *f);
  const int cap = (p->f.used & AC_FEAT_SOFTCAP) != 0;
  double m = (p->f.used & AC_FEAT_SINKS) ? c->sinks[h] : -INFINITY, sum = 0, D = 0;
  for (int64_t j = 0; j < p->tk; j++) {
    double d = 0;
    for (int64_t t = 0; t < p->dk; t++)
      d += ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, t)) * ac_load(p->dtype, c->k, ac_kidx(p, b, kvh, j, t));
    s[j] = ac_features_score_f64(c, b, h, i, j, ac_problem_scale(p) * d);
    if (cap) f[j] = 1 / (cosh(ac_problem_scale(p) * d / p->f.softcap) * cosh(ac_problem_scale(p) * d / p->f.softcap));
    if (s[j] > m) m = s[j];
    for (int64_t e = 0; e < p->dv; e++)
      dp[j] += ac_load(od, c->dout, ac_oidx(p, b, h, i, e)) * ac_load(p->dtype, c->v, ac_vidx(p, b, kvh, j, e));
  }
  if ((p->f.used & AC_FEAT_SINKS) && m > -INFINITY) sum = exp(c->sinks[h] - m);
  for (int64_t j = 0; j < p->tk; j++) sum += s[j] > -INFINITY ? exp(s[j] - m) : 0;
  for (int64_t j = 0; j < p->tk; j++) D += s[j] > -INFINITY ? exp(s[j] - m) / sum * dp[j] : 0;
  printf("stages (binary64, for reading): D = sum_j P_j dP_j = %.17g\n", D);
  printf("  %6s %24s %24s %24s", "key", "P_j", "dP_j = dO.V_j", "dS_j = P_j (dP_j - D)");
  if (cap) printf(" %24s %24s", "f_j = 1 - tanh^2", "dS_j f_j (to dQ, dK)");
  printf("\n");
  for (int64_t j = 0; j < p->tk; j++) {
    if (!(s[j] > -INFINITY)) continue;
    double pj = exp(s[j] - m) / sum;
    printf("  %6lld %24.17g %24.17g %24.17g", (long long)j, pj, dp[j], pj * (dp[j] - D));
    if (cap) printf(" %24.17g %24.17g", f[j], pj * (dp[j] - D) * f[j]);
    printf("\n");
  }
  free(f);
  free(s);
  free(dp);
}

/* Elements of row or column x of g: value, error bound, the dtype's bits; 3 if one is unresolved. */
static int print_elems(const char *what, const ac_grad_tensor *g, int64_t x, ac_dtype dt)
{
  int rc = 0;
  printf("  %s:", what);
  for (int64_t t = 0; t < g->d; t++) {
    const ac_grad_elem *el = ac_grad_at(g, x, t);
    char hex[32];
    printf(" %.10g", el->g);
    if (el->g_err > 0) printf("(+-%.1g)", el->g_err);
    printf("[%s]", ac_bits_hex(dt, ac_grad_bits(g, dt, x, t), hex, sizeof hex));
    if (el->how == AC_HOW_UNRESOLVED) rc = 3;
  }
  printf("\n");
  return rc;
}

int ac_explain_grad(const ac_case *c, const char *path, int64_t b, int64_t h, int64_t i)
{
  const ac_problem *p = &c->p;
  if (!c->dout) {
    ac_cmd_error("explain", "%s: the case has no dO (member do; attncheck gen --grad)", path);
    return AC_EXIT_USAGE;
  }
  const int64_t kvh = h / (p->heads / p->kv_heads), x0 = (b * p->kv_heads + kvh) * p->tk;
  char rows[32], cols[64];
  snprintf(rows, sizeof rows, "%lld", (long long)ac_rowidx(p, b, h, i));
  snprintf(cols, sizeof cols, "%lld-%lld", (long long)x0, (long long)(x0 + p->tk - 1));
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  go.rows = rows;
  go.cols = cols;
  ac_grad_result r;
  ac_err e;
  if (ac_grad_run(c, c->dout, &go, &r, &e)) {
    ac_cmd_error("explain", "%s: %s", path, e.msg);
    return AC_EXIT_USAGE;
  }
  printf("backward of row %lld, head %lld (kv head %lld), batch %lld of %s (%s)\n", (long long)i, (long long)h,
         (long long)kvh, (long long)b, path, ac_dtype_name(p->dtype));
  print_stages(c, b, h, i);
  printf("exact (binary64 value(+-bound)[%s bits, correctly rounded]):\n", ac_dtype_name(p->dtype));
  int rc = print_elems("dQ_i", &r.dq, (int64_t)ac_rowidx(p, b, h, i), p->dtype);
  for (int64_t j = 0; j < p->tk; j++) {
    if (!ac_features_visible(c, b, h, i, j)) continue;
    char what[64];
    snprintf(what, sizeof what, "dK_%lld", (long long)j);
    rc |= print_elems(what, &r.dk, x0 + j, p->dtype);
    snprintf(what, sizeof what, "dV_%lld", (long long)j);
    rc |= print_elems(what, &r.dv, x0 + j, p->dtype);
  }
  printf("(dK_j and dV_j sum every query row of the kv head's group, not row %lld alone)\n", (long long)i);
  ac_grad_result_free(&r);
  return rc ? AC_EXIT_INTERNAL : AC_EXIT_OK;
}
