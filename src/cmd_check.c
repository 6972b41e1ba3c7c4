/* cmd_check.c: attncheck check --kernel K [options] CASE... */
#include "config.h"
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
  int nks = 0, verbose = 0, rc = 0;
  const char *json = NULL;
  const char **cases = ac_xcalloc((size_t)argc, sizeof *cases);
  int ncases = 0;
  for (int i = 1; i < argc;) {
    int missing;
    const char *v;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      free(cases);
      return AC_EXIT_OK;
    }
    int r = ac_judge_args_parse(&a, "check", argc, argv, &i, &rc);
    if (r < 0) {
      free(cases);
      return rc;
    }
    if (r > 0) continue;
    if ((v = ac_opt_value("--kernel", argc, argv, &i, &missing)) || missing) {
      if (missing || nks == 32) {
        free(cases);
        return ac_cmd_usage_error("check", missing ? "--kernel needs a value" : "too many --kernel options");
      }
      kspecs[nks++] = v;
      i++;
    } else if ((v = ac_opt_value("--json", argc, argv, &i, &missing)) || missing) {
      if (missing) {
        free(cases);
        return ac_cmd_usage_error("check", "--json needs a file name");
      }
      json = v;
      i++;
    } else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
      verbose = 1;
      i++;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      free(cases);
      return ac_cmd_usage_error("check", "unknown option '%s'", argv[i]);
    } else
      cases[ncases++] = argv[i++];
  }
  ac_judge_args_finish(&a, "check");
  if (!nks) {
    free(cases);
    return ac_cmd_usage_error("check", "--kernel is required");
  }
  if (!ncases) {
    free(cases);
    return ac_cmd_usage_error("check", "no case given");
  }
  ac_kernel **ks = NULL;
  int nk = 0;
  int *kspec_of = NULL;
  for (int x = 0; x < nks; x++) {
    ac_err e;
    int before = nk;
    if (ac_kernel_resolve(kspecs[x], &ks, &nk, &e) < 0) {
      ac_cmd_error("check", "%s", e.msg);
      free(cases);
      return AC_EXIT_USAGE;
    }
    kspec_of = ac_xrealloc(kspec_of, sizeof(int) * (size_t)(nk ? nk : 1));
    for (int y = before; y < nk; y++) kspec_of[y] = x;
  }
  FILE *jf = NULL;
  if (json && !(jf = fopen(json, "w"))) {
    ac_cmd_error("check", "cannot write %s", json);
    free(cases);
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
  free(cases);
  if (bad_input && !ran) return AC_EXIT_USAGE;
  int code = ac_exit_code(&ex);
  if (bad_input && code == AC_EXIT_OK) return AC_EXIT_USAGE;
  return code;
}
