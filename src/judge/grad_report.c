/* grad_report.c: the line, the detail and the JSON entry of a backward judgement (grad_judge.h). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "grad_judge.h"
#include "report.h"

const char *ac_grad_status(const ac_grad_run_result *run, const ac_grad_judgement *j)
{
  switch (run->status) {
  case AC_RUN_OK: return j->failed || !run->guard_ok ? "FAIL" : j->unresolved ? "ERROR" : "PASS";
  case AC_RUN_UNSUPPORTED: return "SKIP";
  case AC_RUN_HARNESS_ERROR: return "ERROR";
  default: return "FAIL";
  }
}

static void ratio(FILE *f, double r)
{
  if (r < 0) fputs("-", f);
  else if (isinf(r)) fputs("inf", f);
  else fprintf(f, "%.3g", r);
}

void ac_grad_line(FILE *f, const char *kernel, const char *cs, const ac_grad_run_result *run, const ac_grad_judgement *j,
                  const ac_precision *cls, ac_dtype dt)
{
  fprintf(f, "%s %s %s grad", ac_grad_status(run, j), kernel, cs);
  if (run->status != AC_RUN_OK) {
    fprintf(f, " %s: %s\n", ac_run_status_name(run->status), run->msg);
    return;
  }
  for (int t = 0; t < (j->nt > 3 ? j->nt : 3); t++) {
    fprintf(f, " %s err/W=", ac_grad_tensor_name(t));
    ratio(f, j->t[t].worst);
    fprintf(f, " bad=%lld/%lld", (long long)j->t[t].failed, (long long)j->t[t].checked);
    if (j->t[t].unresolved) fprintf(f, " unresolved=%lld", (long long)j->t[t].unresolved);
  }
  fprintf(f, " %s budget=%s%s\n", ac_dtype_name(dt), cls ? cls->name : "?", run->guard_ok ? "" : " GUARD");
}

void ac_grad_detail(FILE *f, const ac_grad_run_result *run, const ac_grad_judgement *j, const char *repro)
{
  if (run->status == AC_RUN_OK) {
    if (!run->guard_ok) fprintf(f, "  guard: %s\n", run->guard_msg);
    for (int t = 0; t < (j->nt > 3 ? j->nt : 3); t++) {
      const ac_grad_tjudge *tj = &j->t[t];
      if (tj->unwritten) fprintf(f, "  %s: %lld element(s) never written\n", ac_grad_tensor_name(t), (long long)tj->unwritten);
      if (tj->unresolved)
        fprintf(f, "  %s: %lld element(s) the exact backward could not decide under the precision cap: not judged\n",
                ac_grad_tensor_name(t), (long long)tj->unresolved);
      if (tj->worst_x < 0) continue;
      char seq[96] = "";
      if (tj->seq >= 0)   /* a packed row or column of a varlen case */
        snprintf(seq, sizeof seq, " (sequence %lld, %s %lld, %s %lld)", (long long)tj->seq, t ? "kv head" : "head",
                 (long long)tj->head, t ? "key" : "query", (long long)tj->idx);
      fprintf(f, "  %s worst: %s %lld%s element %lld: got %.9g want %.17g err/W=%.3g err/E=%.3g W=%.3g E=%.3g\n",
              ac_grad_tensor_name(t), t == 3 ? "head" : t ? "column" : "row", (long long)tj->worst_x, seq, (long long)tj->worst_t, tj->got,
              tj->want, tj->worst, tj->worst_e, tj->W, tj->E);
    }
  }
  if (repro) fprintf(f, "  reproduce: %s\n", repro);
}

static void json_num(FILE *f, double v)
{
  if (isfinite(v)) fprintf(f, "%.17g", v);
  else fputs("null", f);
}

void ac_grad_json(FILE *f, const char *kernel, const char *cs, const ac_grad_run_result *run, const ac_grad_judgement *j,
                  const ac_precision *cls, ac_dtype dt, const char *repro)
{
  fputs("{\"mode\": \"grad\", \"kernel\": ", f);
  ac_json_string(f, kernel);
  fputs(", \"case\": ", f);
  ac_json_string(f, cs);
  fprintf(f, ", \"status\": \"%s\", \"run\": \"%s\", \"message\": ", ac_grad_status(run, j), ac_run_status_name(run->status));
  ac_json_string(f, run->msg);
  fprintf(f, ", \"dtype\": \"%s\", \"precision\": \"%s\", \"guard_ok\": %s", ac_dtype_name(dt), cls ? cls->name : "",
          run->guard_ok ? "true" : "false");
  if (run->status == AC_RUN_OK) {
    fputs(", \"tensors\": {", f);
    for (int t = 0; t < (j->nt > 3 ? j->nt : 3); t++) {
      const ac_grad_tjudge *tj = &j->t[t];
      fprintf(f,
              "%s\"%s\": {\"checked\": %lld, \"failed\": %lld, \"undefined\": %lld, \"unwritten\": %lld, "
              "\"unresolved\": %lld, \"err_over_W\": ",
              t ? ", " : "", ac_grad_tensor_name(t), (long long)tj->checked, (long long)tj->failed,
              (long long)tj->undefined, (long long)tj->unwritten, (long long)tj->unresolved);
      json_num(f, tj->worst_x < 0 ? NAN : tj->worst);
      fputs(", \"err_over_E\": ", f);
      json_num(f, tj->worst_x < 0 ? NAN : tj->worst_e);
      if (tj->worst_x >= 0) {
        fprintf(f, ", \"worst\": {\"%s\": %lld, \"element\": %lld, \"got\": ", t == 3 ? "head" : t ? "column" : "row", (long long)tj->worst_x,
                (long long)tj->worst_t);
        json_num(f, tj->got);
        fputs(", \"want\": ", f);
        json_num(f, tj->want);
        fputs(", \"W\": ", f);
        json_num(f, tj->W);
        fputs(", \"E\": ", f);
        json_num(f, tj->E);
        if (tj->seq >= 0)
          fprintf(f, ", \"sequence\": %lld, \"head\": %lld, \"%s\": %lld", (long long)tj->seq, (long long)tj->head,
                  t ? "key" : "query", (long long)tj->idx);
        fputs("}", f);
      }
      fputs("}", f);
    }
    fputs("}", f);
  }
  if (repro) {
    fputs(", \"reproduce\": ", f);
    ac_json_string(f, repro);
  }
  fputs("}", f);
}
