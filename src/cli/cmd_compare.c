/* cmd_compare.c: attncheck compare CASE.npz [OUT.npz]: judge outputs produced anywhere; with
 * --grad, gradients dq, dk, dv (attncheck compare --grad CASE.npz [GRADS.npz]). */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "api_int.h"
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
    char got[200];
    ac_err_set(e, "%s: o must have shape [%lld,%lld,%lld,%lld], got shape %s", path, (long long)p->batch,
               (long long)p->heads, (long long)p->tq, (long long)p->dv, ac_npz_shape_str(&m, got, sizeof got));
    goto out;
  }
  *o = ac_xmalloc(m.nbytes ? m.nbytes : 1);
  memcpy(*o, m.data, m.nbytes);
  *lse = NULL;
  if (ac_npz_has(z, "lse")) {
    if (ac_npz_read(z, "lse", &m, e) < 0) goto out;
    if (strcmp(m.descr, "<f4") || m.ndim != 3 || m.shape[0] != p->batch || m.shape[1] != p->heads || m.shape[2] != p->tq) {
      char got[200];
      ac_err_set(e, "%s: lse must be float32 ('<f4') of shape [%lld,%lld,%lld], got '%s' of shape %s", path,
                 (long long)p->batch, (long long)p->heads, (long long)p->tq, m.descr,
                 ac_npz_shape_str(&m, got, sizeof got));
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

/* The verdict line, its detail (when not PASS) and the JSON of a libattncheck result. */
static int compare_print(const attncheck_result *res, const char *json, int show_detail)
{
  attncheck_summary s = {.struct_size = sizeof s};
  attncheck_result_summary(res, &s);
  fputs(attncheck_result_line(res), stdout);
  if (show_detail && s.status != ATTNCHECK_PASS) fputs(attncheck_result_detail(res), stdout);
  if (json) {
    FILE *jf = fopen(json, "w");
    if (!jf) {
      ac_cmd_error("compare", "cannot write %s", json);
      return AC_EXIT_USAGE;
    }
    fputs(attncheck_result_json(res), jf);
    fputc('\n', jf);
    fclose(jf);
  }
  return s.exit_code;
}

/* --grad: the gradients of files[nf - 1] against the exact backward of the case (files[0]),
 * judged by libattncheck (attncheck_judge_grad). */
static int compare_grad(attncheck_ctx *ctx, const compare_opts *own, attncheck_case *cs, const char *const *files,
                        int nf)
{
  ac_err e;
  const ac_case *c = &cs->c;
  const char *gpath = files[nf - 1];
  if (!c->dout) {
    ac_cmd_error("compare", "%s: the case has no dO (member do; attncheck gen --grad)", files[0]);
    return AC_EXIT_USAGE;
  }
  ac_grad_run_result run;
  memset(&run, 0, sizeof run);
  if (ac_grad_npz_read(gpath, c, 0, &run, &e) < 0) {
    ac_cmd_error("compare", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  attncheck_grads g = {.struct_size = sizeof g, .dq = run.g[0], .dk = run.g[1], .dv = run.g[2], .dsinks = run.dsinks};
  ac_api_dense_strides(c, 'q', g.dq_stride);
  ac_api_dense_strides(c, 'k', g.dk_stride);
  ac_api_dense_strides(c, 'v', g.dv_stride);
  attncheck_ctx_set(ctx, "name", own->pname ? own->pname : gpath);
  attncheck_result *res = NULL;
  int rc = attncheck_judge_grad(ctx, cs, &g, &res);
  ac_grad_run_result_free(&run);
  if (rc < 0) {
    ac_cmd_error("compare", "%s: %s", files[0], attncheck_ctx_error(ctx));
    return AC_EXIT_USAGE;
  }
  rc = compare_print(res, own->json, 1);
  attncheck_result_free(res);
  return rc;
}

/* The outputs of files[1] (or those the case holds) judged by libattncheck (attncheck_judge). */
static int compare_forward(attncheck_ctx *ctx, const compare_opts *own, attncheck_case *cs, const char *const *files,
                           int nf)
{
  ac_err e;
  const ac_case *c = &cs->c;
  void *o = NULL;
  float *lse = NULL;
  if (nf == 2) {
    if (read_outputs(files[1], c, &o, &lse, &e) < 0) {
      ac_cmd_error("compare", "%s", e.msg);
      return AC_EXIT_USAGE;
    }
  } else if (!c->has_o) {
    ac_cmd_error("compare", "%s: no outputs (member o): give OUT.npz", files[0]);
    return AC_EXIT_USAGE;
  }
  attncheck_outputs out = {.struct_size = sizeof out, .o = o ? o : c->o, .lse = o ? lse : (c->has_lse ? c->lse : NULL)};
  ac_api_dense_strides(c, 'o', out.o_stride);
  attncheck_ctx_set(ctx, "name", own->pname ? own->pname : nf == 2 ? files[1] : files[0]);
  attncheck_result *res = NULL;
  int rc = attncheck_judge(ctx, cs, &out, &res);
  free(o);
  free(lse);
  if (rc < 0) {
    ac_cmd_error("compare", "%s: %s", files[0], attncheck_ctx_error(ctx));
    return AC_EXIT_USAGE;
  }
  rc = compare_print(res, own->json, 1);
  attncheck_result_free(res);
  return rc;
}

/* compare's judgement of files[0] (and files[1]) under the parsed options, through libattncheck. */
static int compare_files(const ac_judge_args *a, const compare_opts *own, const char *const *files, int nf)
{
  int rc;
  attncheck_ctx *ctx = ac_api_ctx_from_args(a);
  attncheck_case *cs = NULL;
  if (!ctx) ac_out_of_memory(sizeof(attncheck_ctx));
  char repro[8400];
  snprintf(repro, sizeof repro, "attncheck compare%s%s %s%s%s", own->grad ? " --grad" : "", a->repro_opts, files[0],
           nf == 2 ? " " : "", nf == 2 ? files[1] : "");
  attncheck_ctx_set(ctx, "case", files[0]);
  attncheck_ctx_set(ctx, "repro", repro);
  if (attncheck_case_read(ctx, files[0], &cs) < 0) {
    ac_cmd_error("compare", "%s", attncheck_ctx_error(ctx));
    attncheck_ctx_free(ctx);
    return AC_EXIT_USAGE;
  }
  rc = own->grad ? compare_grad(ctx, own, cs, files, nf) : compare_forward(ctx, own, cs, files, nf);
  attncheck_case_free(cs);
  attncheck_ctx_free(ctx);
  return rc;
}

int ac_cmd_compare_stored(const ac_judge_args *a, int grad, const char *name, const char *file)
{
  compare_opts own = {NULL, name, grad};
  const char *files[1] = {file};
  return compare_files(a, &own, files, 1);
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
  const char *const *files = (const char *const *)argv + optind;
  int nf = argc - optind;
  if (nf > 2) return ac_cmd_usage_error("compare", "too many files: CASE.npz [OUT.npz]");
  if (!nf) return ac_cmd_usage_error("compare", "no case file given");
  return compare_files(&a, &own, files, nf);
}
