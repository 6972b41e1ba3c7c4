/* cmd_suite.c: attncheck suite --kernel K [--suite ci|full] [--tap FILE] [--junit FILE] ... */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "judge_args.h"
#include "report.h"
#include "suite.h"
#include "suite_html.h"
#include "tap.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck suite --kernel K [--suite ci|full] [--tap FILE] [--junit FILE] [--stop-on-fail]\n"
             "                       [--case NAME]... [--dtypes LIST] [--list] [--no-repeat] [options]\n\n"
             "Runs the fixed deterministic suite on kernel K: FlashAttention's and PyTorch's shape grid, every\n"
             "mask, tq != tk both ways, GQA/MQA, dv != dk, strided layouts, adversarial values, metamorphic\n"
             "variants and the worked examples, in every dtype (those K does not support are SKIP). Oracle\n"
             "results are cached by case hash ($ATTNCHECK_CACHE), so several kernels share them.\n\n"
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
             "  -q, --quiet          print only cases that are not PASS or SKIP, and the summary\n");
  ac_judge_args_help(f);
  fprintf(f, "\nexit: 0 ok; 1 a verdict with policy fail; 2 nothing could run; 3 internal error or unresolved oracle.\n");
}

static FILE *open_out(const char *path)
{
  if (!strcmp(path, "-")) return stdout;
  return fopen(path, "w");
}

int ac_cmd_suite(int argc, char **argv)
{
  ac_judge_args a;
  ac_judge_args_init(&a);
  const char *kspecs[32], *only[64];
  int nks = 0, nonly = 0, stop = 0, list = 0, norepeat = 0, quiet = 0;
  const char *tap = NULL, *junit = NULL, *html = NULL;
  uint32_t dtypes = ~0u;
  ac_suite_kind kind = AC_SUITE_CI;
  enum { O_KERNEL = 256, O_SUITE, O_TAP, O_JUNIT, O_HTML, O_CASE, O_DTYPES, O_STOP, O_LIST, O_NOREPEAT };
  static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
                                     {"quiet", no_argument, NULL, 'q'},
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
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, ":hq", lo, NULL)) != -1) {
    int r = ac_judge_args_option(&a, "suite", ch, optarg);
    if (r < 0) return AC_EXIT_USAGE;
    if (r > 0) continue;
    const char *v = optarg;
    char badname[64];
    switch (ch) {
    case 'h': usage(stdout); return AC_EXIT_OK;
    case 'q': quiet = 1; break;
    case O_KERNEL:
      if (nks == 32) return ac_cmd_usage_error("suite", "--kernel needs a value (at most 32)");
      kspecs[nks++] = v;
      break;
    case O_SUITE:
      if (ac_suite_parse(v, &kind) < 0) return ac_cmd_usage_error("suite", "--suite takes ci or full");
      break;
    case O_TAP: tap = v; break;
    case O_JUNIT: junit = v; break;
    case O_HTML: html = v; break;
    case O_CASE:
      if (nonly == 64) return ac_cmd_usage_error("suite", "--case needs a name (at most 64)");
      only[nonly++] = v;
      break;
    case O_DTYPES:
      if (ac_dtype_parse_list(v, &dtypes, badname, sizeof badname))
        return ac_cmd_usage_error("suite", "--dtypes takes a comma list of dtypes%s%s%s",
                                  badname[0] ? " (unknown: '" : "", badname, badname[0] ? "')" : "");
      break;
    case O_STOP: stop = 1; break;
    case O_LIST: list = 1; break;
    case O_NOREPEAT: norepeat = 1; break;
    default: return ac_cmd_getopt_error("suite", ch, argv);
    }
  }
  if (optind < argc) return ac_cmd_usage_error("suite", "unexpected argument '%s'", argv[optind]);
  ac_judge_args_finish(&a, "suite");
  int64_t ncase = ac_suite_count(kind);
  if (list) {
    for (int64_t x = 0; x < ncase; x++) {
      char name[128];
      ac_dtype cdt = AC_F32;
      ac_suite_describe(kind, x, name, sizeof name, &cdt);
      if (dtypes >> cdt & 1u) printf("%s\n", name);
    }
    return AC_EXIT_OK;
  }
  if (!nks) return ac_cmd_usage_error("suite", "--kernel is required");
  for (int x = 0; x < nonly; x++) {
    int found = 0;
    for (int64_t y = 0; y < ncase && !found; y++) {
      char name[128];
      ac_suite_describe(kind, y, name, sizeof name, NULL);
      found = !strcmp(name, only[x]);
    }
    if (!found) return ac_cmd_usage_error("suite", "no case '%s' in suite %s (see --list)", only[x], kind == AC_SUITE_CI ? "ci" : "full");
  }
  ac_kernel **ks = NULL;
  int nk = 0, *kspec_of = NULL;
  for (int x = 0; x < nks; x++) {
    ac_err e;
    int before = nk;
    if (ac_kernel_resolve(kspecs[x], &ks, &nk, &e) < 0) {
      ac_cmd_error("suite", "%s", e.msg);
      return AC_EXIT_USAGE;
    }
    kspec_of = ac_xrealloc(kspec_of, sizeof(int) * (size_t)(nk ? nk : 1));
    for (int y = before; y < nk; y++) kspec_of[y] = x;
  }
  FILE *tf = NULL, *jf = NULL;
  if (tap && !(tf = open_out(tap))) {
    ac_cmd_error("suite", "cannot write %s", tap);
    return AC_EXIT_USAGE;
  }
  if (junit && !(jf = open_out(junit))) {
    ac_cmd_error("suite", "cannot write %s", junit);
    return AC_EXIT_USAGE;
  }
  FILE *hf = html ? fopen(html, "a") : NULL;   /* written at the end: refuse an unwritable path now */
  if (html && !hf) {
    ac_cmd_error("suite", "cannot write %s", html);
    return AC_EXIT_USAGE;
  }
  if (hf) fclose(hf);
  /* with TAP on standard output, the verdict lines go to standard error */
  FILE *out = tf == stdout || jf == stdout ? stderr : stdout;
  ac_test_log log = {0};
  ac_suite_cells cells = {0};
  ac_exit ex = {0, 0};
  int *stopped = ac_xcalloc((size_t)(nk ? nk : 1), sizeof(int));
  int64_t (*counts)[5] = ac_xcalloc((size_t)(nk ? nk : 1), sizeof *counts);
  double *ksec = ac_xcalloc((size_t)(nk ? nk : 1), sizeof(double));
  const char *user_rows = a.j.rows;
  int user_repeat = a.j.repeat;
  for (int64_t x = 0; x < ncase; x++) {
    char name[128];
    ac_dtype cdt = AC_F32;
    ac_suite_describe(kind, x, name, sizeof name, &cdt);
    if (!(dtypes >> cdt & 1u)) continue;
    if (nonly) {
      int want = 0;
      for (int y = 0; y < nonly; y++) want |= !strcmp(name, only[y]);
      if (!want) continue;
    }
    int any = 0;
    for (int ki = 0; ki < nk; ki++) any |= !stopped[ki];
    if (!any) break;
    ac_suite_case sc;
    ac_err e;
    if (ac_suite_make(kind, x, &sc, &e) < 0) {
      ac_cmd_error("suite", "case %s: %s", name, e.msg);
      ex.any_error = 1;
      continue;
    }
    a.j.rows = sc.rows[0] ? sc.rows : user_rows;
    a.j.repeat = user_repeat || (sc.repeat && !norepeat);
    ac_oracle_result orr;
    memset(&orr, 0, sizeof orr);
    int have_oracle = -1;
    for (int ki = 0; ki < nk; ki++) {
      if (stopped[ki]) continue;
      ac_kernel *k = ks[ki];
      double t0 = ac_now();
      ac_report rep;
      char why[256] = "";
      ac_compare_opts co = a.j.cmp;
      if (ac_judge_precision(k, &a.j, sc.c.p.dtype, &co.prec, &e) < 0) {
        ac_report_init(&rep, &co);
        ac_report_add(&rep, AC_V_ERROR, "%s", e.msg);
      } else if (!ac_kernel_supports(k, &sc.c.p, why, sizeof why)) {
        ac_report_init(&rep, &co);
        ac_report_add(&rep, AC_V_SKIP, "unsupported: %s", why);
      } else {
        if (have_oracle < 0) have_oracle = ac_judge_oracle(&sc.c, &a.j, &orr, &e) == 0;
        if (!have_oracle) {
          ac_report_init(&rep, &co);
          ac_report_add(&rep, AC_V_ERROR, "oracle: %s", e.msg);
        } else
          ac_judge_kernel(k, &sc.c, &orr, &a.j, &rep, &e);
      }
      double dt = ac_now() - t0;
      ksec[ki] += dt;
      ac_exit_add(&ex, &a.pol, rep.kinds);
      ac_status st = ac_status_of(&a.pol, rep.kinds);
      counts[ki][st]++;
      char repro[5400], kabs[4096], qk[4200];
      const char *kspec = ac_kernel_spec_absolute(kspecs[kspec_of[ki]], kabs, sizeof kabs);
      snprintf(repro, sizeof repro, "attncheck suite --kernel %s%s%s --case %s", ac_shquote(kspec, qk, sizeof qk) ? qk : kspec,
               kind == AC_SUITE_FULL ? " --suite full" : "", a.repro_opts, name);
      char *line = NULL, *detail = NULL;
      size_t ll = 0, dl = 0;
      FILE *lf = open_memstream(&line, &ll), *df = open_memstream(&detail, &dl);
      ac_report_line(lf, k->name, name, &rep, &a.pol, sc.c.p.dtype);
      if (st != AC_STATUS_PASS && st != AC_STATUS_SKIP)
        ac_report_detail(df, &rep, sc.c.p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
      fclose(lf);
      fclose(df);
      if (!quiet || (st != AC_STATUS_PASS && st != AC_STATUS_SKIP)) {
        fputs(line, out);
        fputs(detail, out);
        fflush(out);
      }
      if (ll && line[ll - 1] == '\n') line[ll - 1] = 0;
      char tname[300];
      if (nk > 1) snprintf(tname, sizeof tname, "%s %s", k->name, name);
      else snprintf(tname, sizeof tname, "%s", name);
      ac_test_log_add(&log, tname, st, line, st == AC_STATUS_SKIP ? rep.note : detail, dt);
      if (html)
        ac_suite_cells_add(&cells, ki, name, sc.c.p.dtype, st,
                           rep.has_lse && rep.lse_max_err_w > rep.max_err_w ? rep.lse_max_err_w : rep.max_err_w);
      free(line);
      free(detail);
      if (stop && st == AC_STATUS_FAIL) stopped[ki] = 1;
    }
    if (have_oracle > 0) ac_oracle_result_free(&orr);
    ac_suite_case_free(&sc);
  }
  for (int ki = 0; ki < nk; ki++)
    fprintf(out, "suite %s: %s: %lld pass, %lld warn, %lld fail, %lld skip, %lld error%s (%.1f s)\n",
            kind == AC_SUITE_CI ? "ci" : "full", ks[ki]->name, (long long)counts[ki][AC_STATUS_PASS],
            (long long)counts[ki][AC_STATUS_WARN], (long long)counts[ki][AC_STATUS_FAIL],
            (long long)counts[ki][AC_STATUS_SKIP], (long long)counts[ki][AC_STATUS_ERROR],
            stopped[ki] ? ", stopped at the first FAIL" : "", ksec[ki]);
  if (tf) {
    ac_tap_write(tf, &log);
    if (tf != stdout) fclose(tf);
  }
  if (jf) {
    char sname[300];
    snprintf(sname, sizeof sname, "attncheck.suite.%s.%s", kind == AC_SUITE_CI ? "ci" : "full", nk == 1 ? ks[0]->name : "kernels");
    ac_junit_write(jf, sname, &log);
    if (jf != stdout) fclose(jf);
  }
  if (html) {
    const char **kn = ac_xmalloc(sizeof(char *) * (size_t)(nk ? nk : 1));
    for (int ki = 0; ki < nk; ki++) kn[ki] = ks[ki]->name;
    ac_err e;
    if (ac_suite_html(html, kind == AC_SUITE_CI ? "ci" : "full", kn, nk, &cells, &e)) {
      ac_cmd_error("suite", "%s", e.msg);
      ex.any_error = 1;
    }
    free(kn);
  }
  ac_suite_cells_free(&cells);
  ac_test_log_free(&log);
  for (int x = 0; x < nk; x++) ac_kernel_free(ks[x]);
  free(ks);
  free(kspec_of);
  free(stopped);
  free(counts);
  free(ksec);
  return ac_exit_code(&ex);
}
