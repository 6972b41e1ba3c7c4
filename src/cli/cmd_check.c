/* cmd_check.c: attncheck check --kernel K [options] CASE... */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "grad_judge.h"
#include "judge_args.h"
#include "report.h"
#include "report_classes.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck check --kernel K [--kernel K2 ...] [options] CASE...\n\n"
             "Judges kernel K on each case (an NPZ case file, or example:NAME for a worked example):\n"
             "one line per kernel and case:\n"
             "  STATUS KERNEL CASE KINDS err/W=.. err/E=.. ulps=.. nmse=.. bad=N/M rows=J/T[(SPEC)] DTYPE budget=..\n"
             "STATUS is PASS, WARN, FAIL, SKIP or ERROR; KINDS the verdict kinds found. A case that is not\n"
             "PASS gets the worst element and the command that reproduces it. Without --kernel, the outputs\n"
             "a case stores (members o and lse, or dq, dk, dv with --grad: a reproducer written by\n"
             "libattncheck or the Python package) are judged, as compare judges them. With --precision\n"
             "repeated, one table: a column per class (STATUS and err/W of that class's judgement of the same\n"
             "run), then KERNEL CASE; the full line of each class that is not PASS below it.\n\n"
             "  --kernel K           built-in name, PATH.so, PATH.so:NAME, 'exec:CMD {in} {out}', exec-persistent:CMD\n"
             "  --json FILE          also write the reports as a JSON array\n"
             "  -v, --verbose        detail lines for every case\n"
             "  --grad               judge the backward instead (docs/backward.md): kernels that declare one\n"
             "                       (ATTNCHECK_CAP_BACKWARD, an exec worker's \"backward\": true) on cases with dO\n"
             "                       (gen --grad); one line per kernel and case:\n"
             "  STATUS KERNEL CASE grad dq err/W=.. bad=F/N dk .. dv .. DTYPE budget=..  (--rows: dQ rows and dK/dV "
             "columns)\n");
  ac_judge_args_help(f);
  fprintf(f, "\nexit: 0 ok; 1 a verdict with policy fail; 2 nothing could run; 3 internal error or unresolved oracle.\n");
}

int ac_cmd_check_load(const char *spec, ac_case *c, ac_err *e);

int ac_cmd_check_load(const char *spec, ac_case *c, ac_err *e)
{
  if (!strncmp(spec, "example:", 8)) return ac_case_example(c, spec + 8, e);
  return ac_case_read(c, spec, e);
}

typedef struct {
  ac_judge_args a;
  ac_judge_kernels ks;   /* the --kernel specs; resolved by the run */
  int verbose, grad;
  const char *json;
  const char **cases;
  int ncases;
} check_opts;

enum { O_KERNEL = 256, O_JSON, O_GRAD };

/* One option of check itself (those it shares with suite and compare are in judge_args). */
static int check_option(void *ctx, int ch, const char *v, char **argv)
{
  check_opts *o = ctx;
  switch (ch) {
  case 'v': o->verbose = 1; break;
  case O_KERNEL:
    if (ac_judge_kernels_add(&o->ks, v) < 0) return ac_cmd_usage_error("check", "too many --kernel options");
    break;
  case O_JSON: o->json = v; break;
  case O_GRAD: o->grad = 1; break;
  default: return ac_cmd_getopt_error("check", ch, argv);
  }
  return AC_CMD_RUN;
}

static int parse_check_args(int argc, char **argv, check_opts *o)
{
  static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
                                     {"verbose", no_argument, NULL, 'v'},
                                     {"kernel", required_argument, NULL, O_KERNEL},
                                     {"json", required_argument, NULL, O_JSON},
                                     {"grad", no_argument, NULL, O_GRAD},
                                     AC_JUDGE_LONG_OPTIONS,
                                     {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  int rc = ac_cmd_judge_getopt("check", &o->a, argc, argv, ":hv", lo, usage, check_option, o);
  if (rc != AC_CMD_RUN) return rc;
  o->cases = (const char **)argv + optind;
  o->ncases = argc - optind;
  if (o->grad && o->a.j.nprecisions > 1) return ac_cmd_usage_error("check", "--grad judges under one --precision");
  if (!o->ncases) return ac_cmd_usage_error("check", "no case given");
  return AC_CMD_RUN;
}

/* The state of one run: the kernels, the JSON report, the exit accounting. */
typedef struct {
  const check_opts *o;
  ac_judge_kernels *ks;   /* the options' */
  FILE *jf;
  ac_exit ex;
  int njson, ran, bad_input;
  int grad_fail, grad_error;   /* --grad: a FAIL, an ERROR */
  ac_class_table ct;           /* --precision repeated */
} check_run;

/* The line, the detail and the JSON entry of kernel ki on case ci. */
static void check_output(check_run *r, int ki, int ci, const ac_case *c, const ac_report *rep)
{
  const check_opts *o = r->o;
  const ac_kernel *k = r->ks->k[ki];
  const char *cs = o->cases[ci];
  ac_status st = ac_status_of(&o->a.pol, rep->kinds);
  char repro[10600], kabs[4096], qk[4200], qc[4200];
  const char *kspec = ac_kernel_spec_absolute(r->ks->spec[r->ks->spec_of[ki]], kabs, sizeof kabs);
  snprintf(repro, sizeof repro, "attncheck check --kernel %s%s %s", ac_shquote(kspec, qk, sizeof qk) ? qk : kspec,
           o->a.repro_opts, ac_shquote(cs, qc, sizeof qc) ? qc : cs);
  ac_report_line(stdout, k->name, cs, rep, &o->a.pol, c->p.dtype);
  if (o->verbose || (st != AC_STATUS_PASS && st != AC_STATUS_SKIP))
    ac_report_detail(stdout, rep, c->p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
  if (r->jf) {
    fputs(r->njson++ ? ",\n" : "\n", r->jf);
    ac_report_json(r->jf, k->name, cs, rep, &o->a.pol, c->p.dtype, repro);
  }
  fflush(stdout);
}

/* Kernel ki on case ci under every class of the run: the table's row, each class's line and
 * detail where it is not PASS (all with -v), a JSON entry per class. */
static void check_output_classes(check_run *r, int ki, int ci, const ac_case *c, const ac_report *reps)
{
  const check_opts *o = r->o;
  const ac_kernel *k = r->ks->k[ki];
  const char *cs = o->cases[ci];
  ac_class_table_row(stdout, &r->ct, k->name, cs, reps, &o->a.pol);
  char repro[12800], kabs[4096], qk[4200], qc[4200], cl[1024];
  const char *kspec = ac_kernel_spec_absolute(r->ks->spec[r->ks->spec_of[ki]], kabs, sizeof kabs);
  for (int x = 0; x < r->ct.n; x++) {
    const ac_report *rep = &reps[x];
    ac_status st = ac_status_of(&o->a.pol, rep->kinds);
    ac_precision_spec_canonical(o->a.j.precisions[x], cl, sizeof cl); /* checked: a name or class string */
    snprintf(repro, sizeof repro, "attncheck check --kernel %s%s --precision %s %s",
             ac_shquote(kspec, qk, sizeof qk) ? qk : kspec, o->a.repro_other, cl,
             ac_shquote(cs, qc, sizeof qc) ? qc : cs);
    if (o->verbose || (st != AC_STATUS_PASS && st != AC_STATUS_SKIP)) {
      printf("  %s: ", r->ct.label[x]);
      ac_report_line(stdout, k->name, cs, rep, &o->a.pol, c->p.dtype);
      ac_report_detail(stdout, rep, c->p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
    }
    if (r->jf) {
      fputs(r->njson++ ? ",\n" : "\n", r->jf);
      ac_report_json(r->jf, k->name, cs, rep, &o->a.pol, c->p.dtype, repro);
    }
  }
  fflush(stdout);
}

/* --grad: the backward of every kernel on case ci (grad_judge.h); a case without dO or one the
 * exact backward refuses is bad input. */
static void check_grad(check_run *r, int ci, const ac_case *c)
{
  const check_opts *o = r->o;
  ac_grad_opts go;
  ac_grad_opts_for_judge(&go, &o->a.j);
  for (int ki = 0; ki < r->ks->n; ki++) {
    const ac_kernel *k = r->ks->k[ki];
    ac_grad_run_result run;
    ac_grad_judgement j;
    const ac_precision *cls = NULL;
    ac_err e;
    if (ac_grad_check(k, c, o->a.j.precision_override, &go, &o->a.j.run, &run, &j, &cls, &e) < 0) {
      ac_cmd_error("check", "%s: %s", o->cases[ci], e.msg);
      r->bad_input = 1;
      ac_grad_run_result_free(&run);
      return;
    }
    const char *st = ac_grad_status(&run, &j);
    char repro[10600], kabs[4096], qk[4200], qc[4200];
    const char *kspec = ac_kernel_spec_absolute(r->ks->spec[r->ks->spec_of[ki]], kabs, sizeof kabs);
    snprintf(repro, sizeof repro, "attncheck check --grad --kernel %s%s %s", ac_shquote(kspec, qk, sizeof qk) ? qk : kspec,
             o->a.repro_opts, ac_shquote(o->cases[ci], qc, sizeof qc) ? qc : o->cases[ci]);
    ac_grad_line(stdout, k->name, o->cases[ci], &run, &j, cls, c->p.dtype);
    if (o->verbose || !strcmp(st, "FAIL") || !strcmp(st, "ERROR"))
      ac_grad_detail(stdout, &run, &j, strcmp(st, "FAIL") ? NULL : repro);
    if (r->jf) {
      fputs(r->njson++ ? ",\n" : "\n", r->jf);
      ac_grad_json(r->jf, k->name, o->cases[ci], &run, &j, cls, c->p.dtype, repro);
    }
    fflush(stdout);
    r->ran = 1; /* a SKIP is a verdict too: exit 0, as for the forward */
    if (!strcmp(st, "FAIL")) r->grad_fail = 1;
    if (!strcmp(st, "ERROR")) r->grad_error = 1;
    ac_grad_run_result_free(&run);
  }
}

/* Every kernel on case ci; a case that cannot be read or has a bad --rows is bad input. */
static void check_case(check_run *r, int ci)
{
  const check_opts *o = r->o;
  ac_case c;
  ac_err e;
  ac_case_init(&c);
  if (ac_cmd_check_load(o->cases[ci], &c, &e) < 0) {
    ac_cmd_error("check", "%s", e.msg);
    r->bad_input = 1;
    return;
  }
  if (ac_judge_rows_check(&c, &o->a.j, &e) < 0) {
    ac_cmd_error("check", "%s: --rows: %s", o->cases[ci], e.msg);
    ac_case_free(&c);
    r->bad_input = 1;
    return;
  }
  if (ac_judge_mem_check(&c, &o->a.j, &e) < 0) {
    ac_cmd_error("check", "%s: %s", o->cases[ci], e.msg);
    ac_case_free(&c);
    r->bad_input = 1;
    return;
  }
  if (o->grad) {
    check_grad(r, ci, &c);
    ac_case_free(&c);
    return;
  }
  ac_judge_lazy_oracle lo;
  ac_judge_lazy_init(&lo);
  for (int ki = 0; ki < r->ks->n; ki++) {
    ac_report reps[AC_JUDGE_MAX_CLASSES];
    ac_judge_one_classes(r->ks->k[ki], &c, &o->a.j, &lo, reps);
    r->ran = 1;
    for (int x = 0; x < ac_judge_nclasses(&o->a.j); x++) ac_exit_add(&r->ex, &o->a.pol, reps[x].kinds);
    if (ac_judge_nclasses(&o->a.j) > 1)
      check_output_classes(r, ki, ci, &c, reps);
    else
      check_output(r, ki, ci, &c, &reps[0]);
  }
  ac_judge_lazy_free(&lo);
  ac_case_free(&c);
}

/* No --kernel: the outputs each case stores (members o and lse, as a reproducer written by
 * libattncheck holds them, or dq, dk, dv with --grad) judged as compare judges them. */
static int check_stored(check_opts *o)
{
  int code = AC_EXIT_OK;
  for (int ci = 0; ci < o->ncases; ci++) {
    ac_case c;
    ac_err e;
    ac_case_init(&c);
    int rc = ac_case_read(&c, o->cases[ci], &e);
    int has = rc == 0 && (o->grad ? c.dout != NULL : c.has_o);
    ac_case_free(&c);
    if (rc < 0 || !has) {
      if (rc < 0)
        ac_cmd_error("check", "%s", e.msg);
      else
        ac_cmd_error("check", "%s: no --kernel given and the case holds no %s", o->cases[ci],
                     o->grad ? "dO and gradients (dq, dk, dv)" : "outputs (member o)");
      code = code == AC_EXIT_OK ? AC_EXIT_USAGE : code;
      continue;
    }
    rc = ac_cmd_compare_stored(&o->a, o->grad, "stored", o->cases[ci]);
    if (rc == AC_EXIT_FAIL || (rc != AC_EXIT_OK && code == AC_EXIT_OK)) code = rc;
  }
  return code;
}

int ac_cmd_check(int argc, char **argv)
{
  check_opts o;
  int rc = parse_check_args(argc, argv, &o);
  if (rc != AC_CMD_RUN) return rc;
  if (!o.ks.nspec) return check_stored(&o);
  check_run r = {.o = &o, .ks = &o.ks};
  ac_err e;
  if (ac_judge_kernels_resolve(r.ks, &e) < 0) {
    ac_cmd_error("check", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  if (o.json && !(r.jf = fopen(o.json, "w"))) {
    ac_cmd_error("check", "cannot write %s", o.json);
    ac_judge_kernels_free(r.ks);
    return AC_EXIT_USAGE;
  }
  if (r.jf) fputs("[", r.jf);
  if (ac_judge_nclasses(&o.a.j) > 1 && !o.grad) {
    ac_class_table_init(&r.ct, o.a.j.precisions, o.a.j.nprecisions);
    ac_class_table_header(stdout, &r.ct);
  }
  for (int ci = 0; ci < o.ncases; ci++) check_case(&r, ci);
  if (r.jf) {
    fputs("\n]\n", r.jf);
    fclose(r.jf);
  }
  ac_judge_kernels_free(r.ks);
  if (r.bad_input && !r.ran) return AC_EXIT_USAGE;
  int code = ac_exit_code(&r.ex);
  if (o.grad) code = r.grad_error ? AC_EXIT_INTERNAL : r.grad_fail ? AC_EXIT_FAIL : r.ran ? AC_EXIT_OK : AC_EXIT_USAGE;
  if (r.bad_input && code == AC_EXIT_OK) return AC_EXIT_USAGE;
  return code;
}
