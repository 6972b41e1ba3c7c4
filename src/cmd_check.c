/* cmd_check.c: attncheck check --kernel K [options] CASE... */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "judge_args.h"
#include "report.h"

static void usage(FILE *f)
{
  fprintf(f, "usage: attncheck check --kernel K [--kernel K2 ...] [options] CASE...\n\n"
             "Judges kernel K on each case (an NPZ case file, or example:NAME for a worked example):\n"
             "one line per kernel and case:\n"
             "  STATUS KERNEL CASE KINDS err/W=.. err/E=.. ulps=.. nmse=.. bad=N/M rows=J/T[(SPEC)] DTYPE budget=..\n"
             "STATUS is PASS, WARN, FAIL, SKIP or ERROR; KINDS the verdict kinds found. A case that is not\n"
             "PASS gets the worst element and the command that reproduces it.\n\n"
             "  --kernel K           built-in name, PATH.so, PATH.so:NAME, 'exec:CMD {in} {out}', exec-persistent:CMD\n"
             "  --json FILE          also write the reports as a JSON array\n"
             "  -v, --verbose        detail lines for every case\n");
  ac_judge_args_help(f);
  fprintf(f, "\nexit: 0 ok; 1 a verdict with policy fail; 2 nothing could run; 3 internal error or unresolved oracle.\n");
}

int ac_cmd_check_load(const char *spec, ac_case *c, ac_err *e);

int ac_cmd_check_load(const char *spec, ac_case *c, ac_err *e)
{
  if (!strncmp(spec, "example:", 8)) return ac_case_example(c, spec + 8, e);
  return ac_case_read(c, spec, e);
}

int ac_cmd_check(int argc, char **argv)
{
  ac_judge_args a;
  ac_judge_args_init(&a);
  const char *kspecs[32];
  int nks = 0, verbose = 0;
  const char *json = NULL;
  enum { O_KERNEL = 256, O_JSON };
  static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
                                     {"verbose", no_argument, NULL, 'v'},
                                     {"kernel", required_argument, NULL, O_KERNEL},
                                     {"json", required_argument, NULL, O_JSON},
                                     AC_JUDGE_LONG_OPTIONS,
                                     {NULL, 0, NULL, 0}};
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, ":hv", lo, NULL)) != -1) {
    int r = ac_judge_args_option(&a, "check", ch, optarg);
    if (r < 0) return AC_EXIT_USAGE;
    if (r > 0) continue;
    switch (ch) {
    case 'h': usage(stdout); return AC_EXIT_OK;
    case 'v': verbose = 1; break;
    case O_KERNEL:
      if (nks == 32) return ac_cmd_usage_error("check", "too many --kernel options");
      kspecs[nks++] = optarg;
      break;
    case O_JSON: json = optarg; break;
    default: return ac_cmd_getopt_error("check", ch, argv);
    }
  }
  const char **cases = (const char **)argv + optind;
  int ncases = argc - optind;
  ac_judge_args_finish(&a, "check");
  if (!nks) return ac_cmd_usage_error("check", "--kernel is required");
  if (!ncases) return ac_cmd_usage_error("check", "no case given");
  ac_kernel **ks = NULL;
  int nk = 0;
  int *kspec_of = NULL;
  for (int x = 0; x < nks; x++) {
    ac_err e;
    int before = nk;
    if (ac_kernel_resolve(kspecs[x], &ks, &nk, &e) < 0) {
      ac_cmd_error("check", "%s", e.msg);
      return AC_EXIT_USAGE;
    }
    kspec_of = ac_xrealloc(kspec_of, sizeof(int) * (size_t)(nk ? nk : 1));
    for (int y = before; y < nk; y++) kspec_of[y] = x;
  }
  FILE *jf = NULL;
  if (json && !(jf = fopen(json, "w"))) {
    ac_cmd_error("check", "cannot write %s", json);
    return AC_EXIT_USAGE;
  }
  if (jf) fputs("[", jf);
  ac_exit ex = {0, 0};
  int njson = 0, ran = 0, bad_input = 0;
  for (int ci = 0; ci < ncases; ci++) {
    ac_case c;
    ac_err e;
    ac_case_init(&c);
    if (ac_cmd_check_load(cases[ci], &c, &e) < 0) {
      ac_cmd_error("check", "%s", e.msg);
      bad_input = 1;
      continue;
    }
    if (ac_judge_rows_check(&c, &a.j, &e) < 0) {
      ac_cmd_error("check", "%s: --rows: %s", cases[ci], e.msg);
      ac_case_free(&c);
      bad_input = 1;
      continue;
    }
    ac_oracle_result orr;
    memset(&orr, 0, sizeof orr);
    int have_oracle = -1;
    for (int ki = 0; ki < nk; ki++) {
      ac_kernel *k = ks[ki];
      ac_report rep;
      char why[256] = "";
      ac_compare_opts co = a.j.cmp;
      if (ac_judge_precision(k, &a.j, c.p.dtype, &co.prec, &e) < 0) {
        ac_report_init(&rep, &co);
        ac_report_add(&rep, AC_V_ERROR, "%s", e.msg);
      } else if (!ac_kernel_supports(k, &c.p, why, sizeof why)) {
        ac_report_init(&rep, &co);
        ac_report_add(&rep, AC_V_SKIP, "unsupported: %s", why);
      } else {
        if (have_oracle < 0) have_oracle = ac_judge_oracle(&c, &a.j, &orr, &e) == 0;
        if (!have_oracle) {
          ac_report_init(&rep, &co);
          ac_report_add(&rep, AC_V_ERROR, "oracle: %s", e.msg);
        } else {
          ac_judge_kernel(k, &c, &orr, &a.j, &rep, &e);
        }
      }
      ran = 1;
      ac_exit_add(&ex, &a.pol, rep.kinds);
      ac_status st = ac_status_of(&a.pol, rep.kinds);
      char repro[9400], kabs[4096], qk[4200], qc[4200];
      const char *kspec = ac_kernel_spec_absolute(kspecs[kspec_of[ki]], kabs, sizeof kabs);
      snprintf(repro, sizeof repro, "attncheck check --kernel %s%s %s", ac_shquote(kspec, qk, sizeof qk) ? qk : kspec,
               a.repro_opts, ac_shquote(cases[ci], qc, sizeof qc) ? qc : cases[ci]);
      ac_report_line(stdout, k->name, cases[ci], &rep, &a.pol, c.p.dtype);
      if (verbose || (st != AC_STATUS_PASS && st != AC_STATUS_SKIP))
        ac_report_detail(stdout, &rep, c.p.dtype, st == AC_STATUS_FAIL || st == AC_STATUS_WARN ? repro : NULL);
      if (jf) {
        fputs(njson++ ? ",\n" : "\n", jf);
        ac_report_json(jf, k->name, cases[ci], &rep, &a.pol, c.p.dtype, repro);
      }
      fflush(stdout);
    }
    if (have_oracle > 0) ac_oracle_result_free(&orr);
    ac_case_free(&c);
  }
  if (jf) {
    fputs("\n]\n", jf);
    fclose(jf);
  }
  for (int x = 0; x < nk; x++) ac_kernel_free(ks[x]);
  free(ks);
  free(kspec_of);
  if (bad_input && !ran) return AC_EXIT_USAGE;
  int code = ac_exit_code(&ex);
  if (bad_input && code == AC_EXIT_OK) return AC_EXIT_USAGE;
  return code;
}
