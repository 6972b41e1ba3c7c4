/* cmd_suite.c: attncheck suite --kernel K [--suite ci|full] [--tap FILE] [--junit FILE] ... */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "judge_args.h"
#include "report.h"
#include "report_classes.h"
#include "suite.h"
#include "suite_html.h"
#include "grad_judge.h"
#include "tap.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck suite --kernel K [--suite ci|full] [--tap FILE] [--junit FILE] [--stop-on-fail]\n"
             "                       [--case NAME]... [--dtypes LIST] [--list] [--no-repeat] [options]\n\n"
             "Runs the fixed deterministic suite on kernel K: FlashAttention's and PyTorch's shape grid, every\n"
             "mask, tq != tk both ways, GQA/MQA, dv != dk, strided layouts, adversarial values, metamorphic\n"
             "variants and the worked examples, in every dtype (those K does not support are SKIP). Oracle\n"
             "results are cached by case hash ($ATTNCHECK_CACHE), so several kernels share them. A kernel\n"
             "that declares a backward (ATTNCHECK_CAP_BACKWARD, an exec worker's \"backward\": true) also gets\n"
             "the backward cases (DTYPE-grad-..., after the others, in --list too; judged as check --grad,\n"
             "docs/backward.md). With --precision repeated, each case runs once and is judged under every\n"
             "class: one table, a column per class (the backward cases under the first class only); TAP,\n"
             "JUnit and HTML name each class's result 'CASE [CLASS]'.\n\n"
             "  --kernel K           kernel to run (repeatable; see attncheck check)\n"
             "  --suite ci|full      ci (default) or the full grid\n"
             "  --tap FILE           TAP report ('-' for standard output)\n"
             "  --junit FILE         JUnit XML report\n"
             "  --html FILE          HTML page: a grid of cases x dtypes coloured by verdict, with err/W\n"
             "  --stop-on-fail       stop a kernel's run at its first FAIL\n"
             "  --case NAME          run only this case (repeatable)\n"
             "  --dtypes LIST        run only the cases of these dtypes (comma list: f64,f32,f16,bf16,e4m3,e5m2)\n"
             "  --list               list the cases and exit\n"
             "  --no-repeat          no repeat-mode runs (NONDETERMINISTIC) on the sampled cases\n"
             "  -q, --quiet          print only cases that are not PASS or SKIP, and the summary\n"
             "  -v, --verbose        one line per SKIP case too (else one line per SKIP reason and its count;\n"
             "                       TAP and JUnit list every case either way)\n"
             "  --allow-all-skipped  exit 0 even when a kernel judged no case (every case SKIP)\n");
  ac_judge_args_help(f);
  fprintf(f, "\nexit: 0 ok; 1 a verdict with policy fail; 2 nothing could run; 3 internal error or unresolved oracle;\n"
             "4 a kernel judged no case at all (every case SKIP; --allow-all-skipped: 0).\n");
}

static FILE *open_out(const char *path)
{
  if (!strcmp(path, "-")) return stdout;
  return fopen(path, "w");
}

typedef struct {
  ac_judge_args a;
  ac_judge_kernels ks;   /* the --kernel specs; resolved by the run */
  const char *only[64];
  int nonly, stop, list, norepeat, quiet, verbose, allow_skip;
  const char *tap, *junit, *html;
  uint32_t dtypes;
  ac_suite_kind kind;
} suite_opts;

static const char *kind_name(ac_suite_kind kind)
{
  return kind == AC_SUITE_CI ? "ci" : "full";
}

enum { O_KERNEL = 256, O_SUITE, O_TAP, O_JUNIT, O_HTML, O_CASE, O_DTYPES, O_STOP, O_LIST, O_NOREPEAT, O_ALLOWSKIP };

/* One option of suite itself (those it shares with check and compare are in judge_args). */
static int suite_option(void *ctx, int ch, const char *v, char **argv)
{
  suite_opts *o = ctx;
  char badname[64];
  switch (ch) {
  case 'q': o->quiet = 1; break;
  case 'v': o->verbose = 1; break;
  case O_ALLOWSKIP: o->allow_skip = 1; break;
  case O_KERNEL:
    if (ac_judge_kernels_add(&o->ks, v) < 0) return ac_cmd_usage_error("suite", "--kernel needs a value (at most 128)");
    break;
  case O_SUITE:
    if (ac_suite_parse(v, &o->kind) < 0) return ac_cmd_usage_error("suite", "--suite takes ci or full");
    break;
  case O_TAP: o->tap = v; break;
  case O_JUNIT: o->junit = v; break;
  case O_HTML: o->html = v; break;
  case O_CASE:
    if (o->nonly == 64) return ac_cmd_usage_error("suite", "--case needs a name (at most 64)");
    o->only[o->nonly++] = v;
    break;
  case O_DTYPES:
    if (ac_dtype_parse_list(v, &o->dtypes, badname, sizeof badname))
      return ac_cmd_usage_error("suite", "--dtypes takes a comma list of dtypes%s%s%s",
                                badname[0] ? " (unknown: '" : "", badname, badname[0] ? "')" : "");
    break;
  case O_STOP: o->stop = 1; break;
  case O_LIST: o->list = 1; break;
  case O_NOREPEAT: o->norepeat = 1; break;
  default: return ac_cmd_getopt_error("suite", ch, argv);
  }
  return AC_CMD_RUN;
}

static int parse_suite_args(int argc, char **argv, suite_opts *o)
{
  static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
                                     {"quiet", no_argument, NULL, 'q'},
                                     {"verbose", no_argument, NULL, 'v'},
                                     {"allow-all-skipped", no_argument, NULL, O_ALLOWSKIP},
                                     {"kernel", required_argument, NULL, O_KERNEL},
                                     {"suite", required_argument, NULL, O_SUITE},
                                     {"tap", required_argument, NULL, O_TAP},
                                     {"junit", required_argument, NULL, O_JUNIT},
                                     {"html", required_argument, NULL, O_HTML},
                                     {"case", required_argument, NULL, O_CASE},
                                     {"dtypes", required_argument, NULL, O_DTYPES},
                                     {"stop-on-fail", no_argument, NULL, O_STOP},
                                     {"list", no_argument, NULL, O_LIST},
                                     {"no-repeat", no_argument, NULL, O_NOREPEAT},
                                     AC_JUDGE_LONG_OPTIONS,
                                     {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->dtypes = ~0u;
  o->kind = AC_SUITE_CI;
  int rc = ac_cmd_judge_getopt("suite", &o->a, argc, argv, ":hqv", lo, usage, suite_option, o);
  if (rc != AC_CMD_RUN) return rc;
  if (optind < argc) return ac_cmd_usage_error("suite", "unexpected argument '%s'", argv[optind]);
  return AC_CMD_RUN;
}

/* --list: the case names, of the dtypes asked for. */
static int suite_list(const suite_opts *o)
{
  int64_t ncase = ac_suite_count(o->kind);
  for (int64_t x = 0; x < ncase; x++) {
    char name[128];
    ac_dtype cdt = AC_F32;
    ac_suite_describe(o->kind, x, name, sizeof name, &cdt);
    if (o->dtypes >> cdt & 1u) printf("%s\n", name);
  }
  for (int64_t x = 0; x < ac_suite_grad_count(o->kind); x++) {
    char name[128];
    ac_dtype cdt = AC_F32;
    ac_suite_grad_describe(x, name, sizeof name, &cdt);
    if (o->dtypes >> cdt & 1u) printf("%s\n", name);
  }
  return AC_EXIT_OK;
}

/* Every --case must name a case of the suite. */
static int check_case_names(const suite_opts *o)
{
  int64_t ncase = ac_suite_count(o->kind);
  for (int x = 0; x < o->nonly; x++) {
    int found = 0;
    for (int64_t y = 0; y < ncase && !found; y++) {
      char name[128];
      ac_suite_describe(o->kind, y, name, sizeof name, NULL);
      found = !strcmp(name, o->only[x]);
    }
    for (int64_t y = 0; y < ac_suite_grad_count(o->kind) && !found; y++) {
      char name[128];
      ac_suite_grad_describe(y, name, sizeof name, NULL);
      found = !strcmp(name, o->only[x]);
    }
    if (!found)
      return ac_cmd_usage_error("suite", "no case '%s' in suite %s (see --list)", o->only[x], kind_name(o->kind));
  }
  return AC_CMD_RUN;
}

/* A SKIP reason of one kernel and how many cases it skipped. */
typedef struct {
  int ki;
  int64_t n;
  char why[300];
} skip_reason;

/* The state of one run: the kernels, the reports and the counts per kernel. */
typedef struct {
  suite_opts *o;
  ac_judge_kernels *ks;   /* the options' */
  FILE *tf, *jf, *out;
  ac_test_log log;
  ac_suite_cells cells;
  ac_exit ex;
  int *stopped;
  int64_t (*counts)[5]; /* per kernel and class: [ki * nc + x] */
  double *ksec;
  skip_reason *skips; /* without --verbose: the SKIP reasons, in order of first appearance */
  int nskips;
  int nc; /* classes of the run (repeated --precision) */
  ac_class_table ct;
} suite_run;

/* One more SKIP of kernel ki for reason why. */
static void count_skip(suite_run *r, int ki, const char *why)
{
  for (int i = 0; i < r->nskips; i++)
    if (r->skips[i].ki == ki && !strncmp(r->skips[i].why, why, sizeof r->skips[i].why - 1)) {
      r->skips[i].n++;
      return;
    }
  r->skips = ac_xrealloc(r->skips, sizeof *r->skips * (size_t)(r->nskips + 1));
  skip_reason *x = &r->skips[r->nskips++];
  x->ki = ki;
  x->n = 1;
  snprintf(x->why, sizeof x->why, "%s", why[0] ? why : "no reason given");
}

/* The verdict line of a case to the terminal: a SKIP only with --verbose (else counted under its
 * reason), PASS unless --quiet. */
static void print_case(suite_run *r, int ki, ac_status st, const char *line, const char *detail, const char *why)
{
  const suite_opts *o = r->o;
  if (st == AC_STATUS_SKIP && !o->verbose) {
    count_skip(r, ki, why);
    return;
  }
  if (!o->quiet || (st != AC_STATUS_PASS && st != AC_STATUS_SKIP)) {
    fputs(line, r->out);
    fputs(detail, r->out);
    fflush(r->out);
  }
}

/* The report files, opened before anything runs (the HTML page is written at the end: an
 * unwritable path is refused now). */
static int open_reports(suite_run *r)
{
  const suite_opts *o = r->o;
  if (o->tap && !(r->tf = open_out(o->tap))) {
    ac_cmd_error("suite", "cannot write %s", o->tap);
    return AC_EXIT_USAGE;
  }
  if (o->junit && !(r->jf = open_out(o->junit))) {
    ac_cmd_error("suite", "cannot write %s", o->junit);
    return AC_EXIT_USAGE;
  }
  FILE *hf = o->html ? fopen(o->html, "a") : NULL;
  if (o->html && !hf) {
    ac_cmd_error("suite", "cannot write %s", o->html);
    return AC_EXIT_USAGE;
  }
  if (hf) fclose(hf);
  /* with TAP on standard output, the verdict lines go to standard error */
  r->out = r->tf == stdout || r->jf == stdout ? stderr : stdout;
  return AC_CMD_RUN;
}

/* The verdict line and detail of kernel ki on case name, to the terminal and the reports. */
static void suite_output(suite_run *r, int ki, const char *name, const ac_suite_case *sc, const ac_report *rep,
                         double dt)
{
  const suite_opts *o = r->o;
  const ac_kernel *k = r->ks->k[ki];
  ac_status st = ac_status_of(&o->a.pol, rep->kinds);
  char repro[6600], kabs[4096], qk[4200];
  const char *kspec = ac_kernel_spec_absolute(r->ks->spec[r->ks->spec_of[ki]], kabs, sizeof kabs);
  snprintf(repro, sizeof repro, "attncheck suite --kernel %s%s%s --case %s", ac_shquote(kspec, qk, sizeof qk) ? qk : kspec,
           o->kind == AC_SUITE_FULL ? " --suite full" : "", o->a.repro_opts, name);
  char *line = NULL, *detail = NULL;
  size_t ll = 0, dl = 0;
  FILE *lf = open_memstream(&line, &ll), *df = open_memstream(&detail, &dl);
  ac_report_line(lf, k->name, name, rep, &o->a.pol, sc->c.p.dtype);
  if (st != AC_STATUS_PASS && st != AC_STATUS_SKIP)
    ac_report_detail(df, rep, sc->c.p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
  fclose(lf);
  fclose(df);
  print_case(r, ki, st, line, detail, rep->note);
  if (ll && line[ll - 1] == '\n') line[ll - 1] = 0;
  char tname[300];
  if (r->ks->n > 1) snprintf(tname, sizeof tname, "%s %s", k->name, name);
  else snprintf(tname, sizeof tname, "%s", name);
  ac_test_log_add(&r->log, tname, st, line, st == AC_STATUS_SKIP ? rep->note : detail, dt);
  if (o->html)
    ac_suite_cells_add(&r->cells, ki, name, sc->c.p.dtype, st,
                       rep->has_lse && rep->lse_max_err_w > rep->max_err_w ? rep->lse_max_err_w : rep->max_err_w);
  free(line);
  free(detail);
}

/* Kernel ki on case name under every class of the run: the table's row, each class's line and
 * detail where it is not PASS or SKIP; per class a TAP/JUnit entry "CASE [CLASS]" and an HTML
 * column. */
static void suite_output_classes(suite_run *r, int ki, const char *name, const ac_suite_case *sc, const ac_report *reps,
                                 double dt)
{
  const suite_opts *o = r->o;
  const ac_kernel *k = r->ks->k[ki];
  int show = !o->quiet, skipped = 1;
  for (int x = 0; x < r->nc; x++) {
    ac_status st = ac_status_of(&o->a.pol, reps[x].kinds);
    show |= st != AC_STATUS_PASS && st != AC_STATUS_SKIP;
    skipped &= st == AC_STATUS_SKIP;
  }
  if (skipped && !o->verbose) count_skip(r, ki, reps[0].note);   /* once, under its reason */
  else if (show) ac_class_table_row(r->out, &r->ct, k->name, name, reps, &o->a.pol);
  char repro[8000], kabs[4096], qk[4200], cl[1024];
  const char *kspec = ac_kernel_spec_absolute(r->ks->spec[r->ks->spec_of[ki]], kabs, sizeof kabs);
  for (int x = 0; x < r->nc; x++) {
    const ac_report *rep = &reps[x];
    ac_status st = ac_status_of(&o->a.pol, rep->kinds);
    ac_precision_spec_canonical(o->a.j.precisions[x], cl, sizeof cl);
    snprintf(repro, sizeof repro, "attncheck suite --kernel %s%s%s --precision %s --case %s",
             ac_shquote(kspec, qk, sizeof qk) ? qk : kspec, o->kind == AC_SUITE_FULL ? " --suite full" : "",
             o->a.repro_other, cl, name);
    char *line = NULL, *detail = NULL;
    size_t ll = 0, dl = 0;
    FILE *lf = open_memstream(&line, &ll), *df = open_memstream(&detail, &dl);
    ac_report_line(lf, k->name, name, rep, &o->a.pol, sc->c.p.dtype);
    if (st != AC_STATUS_PASS && st != AC_STATUS_SKIP)
      ac_report_detail(df, rep, sc->c.p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
    fclose(lf);
    fclose(df);
    if (st != AC_STATUS_PASS && st != AC_STATUS_SKIP) {
      fprintf(r->out, "  %s: %s%s", r->ct.label[x], line, detail);
      fflush(r->out);
    }
    if (ll && line[ll - 1] == '\n') line[ll - 1] = 0;
    char tname[600];
    if (r->ks->n > 1)
      snprintf(tname, sizeof tname, "%s %s [%s]", k->name, name, r->ct.label[x]);
    else
      snprintf(tname, sizeof tname, "%s [%s]", name, r->ct.label[x]);
    ac_test_log_add(&r->log, tname, st, line, st == AC_STATUS_SKIP ? rep->note : detail, dt);
    if (o->html) ac_suite_cells_add(&r->cells, ki * r->nc + x, name, sc->c.p.dtype, st, ac_class_cell_err_w(rep));
    free(line);
    free(detail);
  }
  fflush(r->out);
}

/* Whether case name is one to run: of a dtype asked for and, with --case, named. */
static int wanted(const suite_opts *o, const char *name, ac_dtype cdt)
{
  if (!(o->dtypes >> cdt & 1u)) return 0;
  if (!o->nonly) return 1;
  int want = 0;
  for (int y = 0; y < o->nonly; y++) want |= !strcmp(name, o->only[y]);
  return want;
}

/* Case x on every kernel not stopped; 0 once every kernel has stopped. */
static int suite_case(suite_run *r, int64_t x, const char *user_rows, int user_repeat)
{
  suite_opts *o = r->o;
  char name[128];
  ac_dtype cdt = AC_F32;
  ac_suite_describe(o->kind, x, name, sizeof name, &cdt);
  if (!wanted(o, name, cdt)) return 1;
  int any = 0;
  for (int ki = 0; ki < r->ks->n; ki++) any |= !r->stopped[ki];
  if (!any) return 0;
  ac_suite_case sc;
  ac_err e;
  if (ac_suite_make(o->kind, x, &sc, &e) < 0) {
    ac_cmd_error("suite", "case %s: %s", name, e.msg);
    r->ex.any_error = 1;
    return 1;
  }
  o->a.j.rows = sc.rows[0] ? sc.rows : user_rows;
  o->a.j.repeat = user_repeat || (sc.repeat && !o->norepeat);
  ac_judge_lazy_oracle lo;
  ac_judge_lazy_init(&lo);
  for (int ki = 0; ki < r->ks->n; ki++) {
    if (r->stopped[ki]) continue;
    double t0 = ac_now();
    ac_report reps[AC_JUDGE_MAX_CLASSES];
    if (sc.skip[0]) {
      for (int y = 0; y < r->nc; y++) {
        ac_report_init(&reps[y], &o->a.j.cmp);
        ac_report_add(&reps[y], AC_V_SKIP, "%s", sc.skip);
      }
    } else {
      ac_judge_one_classes(r->ks->k[ki], &sc.c, &o->a.j, &lo, reps);
    }
    double dt = ac_now() - t0;
    r->ksec[ki] += dt;
    int failed = 0;
    for (int y = 0; y < r->nc; y++) {
      ac_exit_add(&r->ex, &o->a.pol, reps[y].kinds);
      ac_status st = ac_status_of(&o->a.pol, reps[y].kinds);
      r->counts[ki * r->nc + y][st]++;
      failed |= st == AC_STATUS_FAIL;
    }
    if (r->nc > 1)
      suite_output_classes(r, ki, name, &sc, reps, dt);
    else
      suite_output(r, ki, name, &sc, &reps[0], dt);
    if (o->stop && failed) r->stopped[ki] = 1;
  }
  ac_judge_lazy_free(&lo);
  ac_suite_case_free(&sc);
  return 1;
}

static ac_status grad_status(const char *st)
{
  return !strcmp(st, "PASS") ? AC_STATUS_PASS : !strcmp(st, "FAIL") ? AC_STATUS_FAIL
       : !strcmp(st, "SKIP") ? AC_STATUS_SKIP : AC_STATUS_ERROR;
}

/* Backward case x on every kernel that declares a backward and has not stopped (grad_judge.h). */
static void suite_grad_case(suite_run *r, int64_t x)
{
  suite_opts *o = r->o;
  char name[128];
  ac_dtype cdt = AC_F32;
  ac_suite_grad_describe(x, name, sizeof name, &cdt);
  if (!wanted(o, name, cdt)) return;
  ac_suite_case sc;
  ac_err e;
  int made = 0;
  ac_grad_opts go;
  ac_grad_opts_for_judge(&go, &o->a.j);
  go.rows = go.cols = NULL;   /* every row and column of the suite's backward cases */
  for (int ki = 0; ki < r->ks->n; ki++) {
    const ac_kernel *k = r->ks->k[ki];
    if (r->stopped[ki] || !ac_kernel_has_backward(k, o->a.j.run.timeout_s)) continue;
    if (!made && ac_suite_grad_make(x, &sc, &e) < 0) {
      ac_cmd_error("suite", "case %s: %s", name, e.msg);
      r->ex.any_error = 1;
      return;
    }
    made = 1;
    double t0 = ac_now();
    ac_grad_run_result run;
    ac_grad_judgement j;
    const ac_precision *cls = NULL;
    const char *st = "ERROR";
    if (ac_grad_check(k, &sc.c, o->a.j.precision_override, &go, &o->a.j.run, &run, &j, &cls, &e) == 0)
      st = ac_grad_status(&run, &j);
    else snprintf(run.msg, sizeof run.msg, "%s", e.msg), run.status = AC_RUN_HARNESS_ERROR;
    double dt = ac_now() - t0;
    ac_status s = grad_status(st);
    r->counts[ki * r->nc][s]++; /* the backward: the first class only */
    r->ksec[ki] += dt;
    if (s == AC_STATUS_FAIL) r->ex.any_fail = 1;
    if (s == AC_STATUS_ERROR) r->ex.any_error = 1;
    char repro[6600], kabs[4096], qk[4200];
    const char *kspec = ac_kernel_spec_absolute(r->ks->spec[r->ks->spec_of[ki]], kabs, sizeof kabs);
    snprintf(repro, sizeof repro, "attncheck suite --kernel %s%s --case %s", ac_shquote(kspec, qk, sizeof qk) ? qk : kspec,
             o->a.repro_opts, name);
    char *line = NULL, *detail = NULL;
    size_t ll = 0, dl = 0;
    FILE *lf = open_memstream(&line, &ll), *df = open_memstream(&detail, &dl);
    ac_grad_line(lf, k->name, name, &run, &j, cls, cdt);
    if (s == AC_STATUS_FAIL || (s == AC_STATUS_ERROR && run.status == AC_RUN_OK)) ac_grad_detail(df, &run, &j, s == AC_STATUS_FAIL ? repro : NULL);
    fclose(lf);
    fclose(df);
    print_case(r, ki, s, line, detail, run.msg);
    if (ll && line[ll - 1] == '\n') line[ll - 1] = 0;
    char tname[300];
    if (r->ks->n > 1) snprintf(tname, sizeof tname, "%s %s", k->name, name);
    else snprintf(tname, sizeof tname, "%s", name);
    ac_test_log_add(&r->log, tname, s, line, s == AC_STATUS_SKIP ? run.msg : detail, dt);
    free(line);
    free(detail);
    ac_grad_run_result_free(&run);
    if (o->stop && s == AC_STATUS_FAIL) r->stopped[ki] = 1;
  }
  if (made) ac_suite_case_free(&sc);
}

/* Whether kernel ki judged no case (none PASS, WARN or FAIL). */
static int judged_none(const suite_run *r, int ki)
{
  const int64_t *n = r->counts[ki * r->nc];   /* every class judges the same cases */
  return n[AC_STATUS_PASS] + n[AC_STATUS_WARN] + n[AC_STATUS_FAIL] == 0;
}

/* The summary of each kernel: its SKIP reasons with their counts, then its line; then the TAP,
 * JUnit and HTML reports. */
static void suite_finish(suite_run *r)
{
  const suite_opts *o = r->o;
  const char *kn = kind_name(o->kind);
  int nk = r->ks->n;
  for (int ki = 0; ki < nk; ki++) {
    for (int i = 0; i < r->nskips && !o->quiet; i++)
      if (r->skips[i].ki == ki)
        fprintf(r->out, "SKIP  %s %lld case%s (%s)\n", r->ks->k[ki]->name, (long long)r->skips[i].n,
                r->skips[i].n == 1 ? "" : "s", r->skips[i].why);
    for (int x = 0; x < r->nc; x++) {
      const int64_t *n = r->counts[ki * r->nc + x];
      char cl[AC_CLASS_LABEL_MAX + 12] = "";
      if (r->nc > 1) snprintf(cl, sizeof cl, " [%s]", r->ct.label[x]);
      fprintf(r->out, "suite %s: %s%s: %lld pass, %lld warn, %lld fail, %lld skip, %lld error%s (%.1f s)%s\n", kn,
              r->ks->k[ki]->name, cl, (long long)n[AC_STATUS_PASS], (long long)n[AC_STATUS_WARN],
              (long long)n[AC_STATUS_FAIL], (long long)n[AC_STATUS_SKIP], (long long)n[AC_STATUS_ERROR],
              r->stopped[ki] ? ", stopped at the first FAIL" : "", r->ksec[ki], judged_none(r, ki) ? ": NO CASE JUDGED" : "");
    }
  }
  if (r->tf) {
    ac_tap_write(r->tf, &r->log);
    if (r->tf != stdout) fclose(r->tf);
  }
  if (r->jf) {
    char sname[300];
    snprintf(sname, sizeof sname, "attncheck.suite.%s.%s", kn, nk == 1 ? r->ks->k[0]->name : "kernels");
    ac_junit_write(r->jf, sname, &r->log);
    if (r->jf != stdout) fclose(r->jf);
  }
  if (o->html) { /* a column per kernel, or per kernel and class */
    int ncol = nk * r->nc;
    const char **names = ac_xmalloc(sizeof(char *) * (size_t)(ncol ? ncol : 1));
    char(*cn)[400] = ac_xcalloc((size_t)(ncol ? ncol : 1), sizeof *cn);
    for (int ki = 0; ki < nk; ki++)
      for (int x = 0; x < r->nc; x++) {
        if (r->nc > 1)
          snprintf(cn[ki * r->nc + x], sizeof cn[0], "%s [%s]", r->ks->k[ki]->name, r->ct.label[x]);
        else
          snprintf(cn[ki], sizeof cn[0], "%s", r->ks->k[ki]->name);
        names[ki * r->nc + x] = cn[ki * r->nc + x];
      }
    ac_err e;
    if (ac_suite_html(o->html, kn, names, ncol, &r->cells, &e)) {
      ac_cmd_error("suite", "%s", e.msg);
      r->ex.any_error = 1;
    }
    free(names);
    free(cn);
  }
}

int ac_cmd_suite(int argc, char **argv)
{
  suite_opts o;
  int rc = parse_suite_args(argc, argv, &o);
  if (rc != AC_CMD_RUN) return rc;
  if (o.list) return suite_list(&o);
  if (!o.ks.nspec) return ac_cmd_usage_error("suite", "--kernel is required");
  if ((rc = check_case_names(&o)) != AC_CMD_RUN) return rc;
  suite_run r = {.o = &o, .ks = &o.ks};
  ac_err e;
  if (ac_judge_kernels_resolve(r.ks, &e) < 0) {
    ac_cmd_error("suite", "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  if ((rc = open_reports(&r)) != AC_CMD_RUN) {
    ac_judge_kernels_free(r.ks);
    return rc;
  }
  size_t nk = (size_t)(r.ks->n ? r.ks->n : 1);
  r.nc = ac_judge_nclasses(&o.a.j);
  r.stopped = ac_xcalloc(nk, sizeof(int));
  r.counts = ac_xcalloc(nk * (size_t)r.nc, sizeof *r.counts);
  if (r.nc > 1) {
    ac_class_table_init(&r.ct, o.a.j.precisions, o.a.j.nprecisions);
    ac_class_table_header(r.out, &r.ct);
  }
  r.ksec = ac_xcalloc(nk, sizeof(double));
  const char *user_rows = o.a.j.rows;
  int user_repeat = o.a.j.repeat;
  int64_t ncase = ac_suite_count(o.kind);
  for (int64_t x = 0; x < ncase && suite_case(&r, x, user_rows, user_repeat); x++) {
  }
  for (int64_t x = 0; x < ac_suite_grad_count(o.kind); x++) suite_grad_case(&r, x);
  suite_finish(&r);
  rc = ac_exit_code(&r.ex);
  for (int ki = 0; ki < r.ks->n && rc == AC_EXIT_OK && !o.allow_skip; ki++)
    if (judged_none(&r, ki)) {
      ac_cmd_error("suite", "kernel %s judged no case (%lld skip): exit %d (--allow-all-skipped: 0)", r.ks->k[ki]->name,
                   (long long)r.counts[ki][AC_STATUS_SKIP], AC_EXIT_NOTHING_JUDGED);
      rc = AC_EXIT_NOTHING_JUDGED;
    }
  ac_suite_cells_free(&r.cells);
  ac_test_log_free(&r.log);
  ac_judge_kernels_free(r.ks);
  free(r.stopped);
  free(r.counts);
  free(r.ksec);
  free(r.skips);
  return rc;
}
