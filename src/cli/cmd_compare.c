/* cmd_compare.c: attncheck compare CASE.npz [OUT.npz]: judge outputs produced anywhere; with
 * --grad, gradients dq, dk, dv (attncheck compare --grad CASE.npz [GRADS.npz]). */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "grad_judge.h"
#include "grad_npz.h"
#include "judge_args.h"
#include "npz.h"
#include "report.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck compare [options] CASE.npz [OUT.npz]\n\n"
             "Judges outputs produced anywhere (PyTorch, a GPU, another tool) against the exact answer of CASE.\n"
             "OUT.npz holds o [batch, heads, tq, dv] in the case's dtype (o's own with mixed dtypes; bf16 and fp8\n"
             "as their bit patterns, like the case) and optionally lse [batch, heads, tq] as float32. Without\n"
             "OUT.npz, the o and lse members of CASE.npz are judged. The class is the dtype's default unless\n"
             "--precision names one.\n\n"
             "  --grad               judge the backward instead (docs/backward.md): GRADS.npz (else CASE.npz,\n"
             "                       which must hold dO, member do) holds dq [batch, heads, tq, dk], dk and dv\n"
             "                       [batch, kv_heads, tk, dk|dv] in the case's dtype and, with sinks, optionally\n"
             "                       dsinks [heads] float32 (judged with its budget); judged as check --grad, one line:\n"
             "                       STATUS NAME CASE grad dq err/W=.. bad=F/N dk .. dv .. DTYPE budget=..\n"
             "  --json FILE          also write the report as JSON\n"
             "  --name NAME          name printed for the producer (default: the OUT file)\n");
  ac_judge_args_help(f);
  fprintf(f, "\nexit: 0 ok; 1 a verdict with policy fail; 2 nothing could run; 3 internal error or unresolved oracle.\n");
}

/* Reads o (and lse) from path into dense buffers matching c. */
static int read_outputs(const char *path, const ac_case *c, void **o, float **lse, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_counts n;
  if (ac_problem_counts(p, &n, e) < 0) return -1;
  ac_npz *z = ac_npz_open(path, ac_mem_cap(), e);
  if (!z) return -1;
  ac_npz_member m;
  int rc = -1;
  const ac_dtype_info *di = ac_dtype_get(ac_tensor_dtype(p, 'o'));   /* o's own dtype with mixed_dtypes */
  if (!ac_npz_has(z, "o")) {
    ac_err_set(e, "%s: no member 'o'", path);
    goto out;
  }
  if (ac_npz_read(z, "o", &m, e) < 0) goto out;
  if (strcmp(m.descr, di->npy)) {
    if (p->f.used & AC_FEAT_MIXED_DTYPES)
      ac_err_set(e, "%s: o has dtype '%s' but the case's o is %s ('%s', variants.dtypes.o): store o in that dtype", path,
                 m.descr, di->name, di->npy);
    else
      ac_err_set(e, "%s: o has dtype '%s' but the case is %s ('%s'): store o in the case's dtype", path, m.descr,
                 di->name, di->npy);
    goto out;
  }
  if (m.ndim != 4 || m.shape[0] != p->batch || m.shape[1] != p->heads || m.shape[2] != p->tq || m.shape[3] != p->dv) {
    ac_err_set(e, "%s: o must have shape [%lld, %lld, %lld, %lld]", path, (long long)p->batch, (long long)p->heads,
               (long long)p->tq, (long long)p->dv);
    goto out;
  }
  *o = ac_xmalloc(m.nbytes ? m.nbytes : 1);
  memcpy(*o, m.data, m.nbytes);
  *lse = NULL;
  if (ac_npz_has(z, "lse")) {
    if (ac_npz_read(z, "lse", &m, e) < 0) goto out;
    if (strcmp(m.descr, "<f4") || m.ndim != 3 || m.shape[0] != p->batch || m.shape[1] != p->heads || m.shape[2] != p->tq) {
      ac_err_set(e, "%s: lse must be float32 ('<f4') of shape [%lld, %lld, %lld]", path, (long long)p->batch,
                 (long long)p->heads, (long long)p->tq);
      free(*o);
      *o = NULL;
      goto out;
    }
    *lse = ac_xmalloc(m.nbytes ? m.nbytes : 1);
    memcpy(*lse, m.data, m.nbytes);
  }
  rc = 0;
out:
  ac_npz_close_reader(z);
  return rc;
}

enum { O_JSON = 256, O_NAME, O_GRAD };

typedef struct {
  const char *json, *pname;
  int grad;
} compare_opts;

/* One option of compare itself (those it shares with check and suite are in judge_args). */
static int compare_option(void *ctx, int ch, const char *v, char **argv)
{
  compare_opts *o = ctx;
  switch (ch) {
  case O_JSON: o->json = v; break;
  case O_NAME: o->pname = v; break;
  case O_GRAD: o->grad = 1; break;
  default: return ac_cmd_getopt_error("compare", ch, argv);
  }
  return AC_CMD_RUN;
}

/* --grad: the gradients of files[nf - 1] against the exact backward of the case c (files[0]). */
static int compare_grad(const ac_judge_args *a, const compare_opts *own, const ac_case *c, const char *const *files, int nf)
{
  ac_err e;
  const ac_precision *cls = NULL;
  const char *gpath = files[nf - 1];
  if (!c->dout) {
    ac_cmd_error("compare", "%s: the case has no dO (member do; attncheck gen --grad)", files[0]);
    return AC_EXIT_USAGE;
  }
  if (ac_judge_rows_check(c, &a->j, &e) < 0 || ac_precision_resolve(a->j.precision_override, NULL, c->p.dtype, &cls, &e) < 0) {
    ac_cmd_error("compare", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  ac_grad_run_result run;
  memset(&run, 0, sizeof run);
  run.guard_ok = 1;
  if (ac_grad_npz_read(gpath, c, 0, &run, &e) < 0) {
    ac_cmd_error("compare", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  go.rows = go.cols = a->j.rows;
  go.seed = a->j.rows_seed;
  ac_grad_judgement j;
  if (ac_grad_judge_given(c, cls, &go, &run, &j, &e) < 0) {
    ac_cmd_error("compare", "%s: %s", files[0], e.msg);
    ac_grad_run_result_free(&run);
    return AC_EXIT_USAGE;
  }
  FILE *jf = NULL;
  if (own->json && !(jf = fopen(own->json, "w"))) {
    ac_cmd_error("compare", "cannot write %s", own->json);
    ac_grad_run_result_free(&run);
    return AC_EXIT_USAGE;
  }
  const char *name = own->pname ? own->pname : gpath, *st = ac_grad_status(&run, &j);
  char repro[8400];
  snprintf(repro, sizeof repro, "attncheck compare --grad%s %s%s%s", a->repro_opts, files[0], nf == 2 ? " " : "",
           nf == 2 ? files[1] : "");
  ac_grad_line(stdout, name, files[0], &run, &j, cls, c->p.dtype);
  if (strcmp(st, "PASS")) ac_grad_detail(stdout, &run, &j, strcmp(st, "FAIL") ? NULL : repro);
  if (jf) {
    ac_grad_json(jf, name, files[0], &run, &j, cls, c->p.dtype, repro);
    fputc('\n', jf);
    fclose(jf);
  }
  ac_grad_run_result_free(&run);
  return !strcmp(st, "PASS") ? AC_EXIT_OK : !strcmp(st, "FAIL") ? AC_EXIT_FAIL : AC_EXIT_INTERNAL;
}

int ac_cmd_compare(int argc, char **argv)
{
  ac_judge_args a;
  compare_opts own = {NULL, NULL, 0};
  static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
                                     {"json", required_argument, NULL, O_JSON},
                                     {"name", required_argument, NULL, O_NAME},
                                     {"grad", no_argument, NULL, O_GRAD},
                                     AC_JUDGE_LONG_OPTIONS,
                                     {NULL, 0, NULL, 0}};
  int rc = ac_cmd_judge_getopt("compare", &a, argc, argv, ":h", lo, usage, compare_option, &own);
  if (rc != AC_CMD_RUN) return rc;
  const char *json = own.json, *pname = own.pname;
  const char *const *files = (const char *const *)argv + optind;
  int nf = argc - optind;
  if (nf > 2) return ac_cmd_usage_error("compare", "too many files: CASE.npz [OUT.npz]");
  if (!nf) return ac_cmd_usage_error("compare", "no case file given");
  ac_case c;
  ac_err e;
  ac_case_init(&c);
  if (ac_case_read(&c, files[0], &e) < 0) {
    ac_cmd_error("compare", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  if (own.grad) {
    rc = compare_grad(&a, &own, &c, files, nf);
    ac_case_free(&c);
    return rc;
  }
  void *o = NULL;
  float *lse = NULL;
  if (nf == 2) {
    if (read_outputs(files[1], &c, &o, &lse, &e) < 0) {
      ac_cmd_error("compare", "%s", e.msg);
      ac_case_free(&c);
      return AC_EXIT_USAGE;
    }
  } else if (!c.has_o) {
    ac_cmd_error("compare", "%s: no outputs (member o): give OUT.npz", files[0]);
    ac_case_free(&c);
    return AC_EXIT_USAGE;
  }
  FILE *jf = NULL;
  if (json && !(jf = fopen(json, "w"))) {
    ac_cmd_error("compare", "cannot write %s", json);
    free(o);
    free(lse);
    ac_case_free(&c);
    return AC_EXIT_USAGE;
  }
  ac_compare_opts co = a.j.cmp;
  co.alibi_lse = ac_kernel_alibi_lse(NULL, a.j.run.alibi_lse);   /* no kernel: --alibi-lse, else the ABI's */
  ac_report rep;
  if (ac_precision_resolve(a.j.precision_override, NULL, c.p.dtype, &co.prec, &e) < 0) {
    ac_cmd_error("compare", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  ac_report_init(&rep, &co);
  ac_oracle_result orr;
  memset(&orr, 0, sizeof orr);
  if (co.budget == AC_BUDGET_BASELINE) {
    ac_report_add(&rep, AC_V_ERROR, "the baseline budget needs a kernel run: use attncheck check");
  } else if (ac_judge_oracle(&c, &a.j, &orr, &e) < 0) {
    ac_report_add(&rep, AC_V_ERROR, "oracle: %s", e.msg);
  } else {
    if (ac_compare_outputs(&c, &orr, o ? o : c.o, o ? lse : (c.has_lse ? c.lse : NULL), NULL, &co, &rep, &e) < 0)
      ac_report_add(&rep, AC_V_ERROR, "%s", e.msg);
    ac_oracle_result_free(&orr);
  }
  const char *name = pname ? pname : nf == 2 ? files[1] : files[0];
  ac_exit ex = {0, 0};
  ac_exit_add(&ex, &a.pol, rep.kinds);
  ac_status st = ac_status_of(&a.pol, rep.kinds);
  char repro[8400];
  snprintf(repro, sizeof repro, "attncheck compare%s %s%s%s", a.repro_opts, files[0], nf == 2 ? " " : "", nf == 2 ? files[1] : "");
  ac_report_line(stdout, name, files[0], &rep, &a.pol, c.p.dtype);
  if (st != AC_STATUS_PASS) ac_report_detail(stdout, &rep, c.p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
  if (jf) {
    ac_report_json(jf, name, files[0], &rep, &a.pol, c.p.dtype, repro);
    fputc('\n', jf);
    fclose(jf);
  }
  free(o);
  free(lse);
  ac_case_free(&c);
  return ac_exit_code(&ex);
}
