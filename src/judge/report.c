/* report.c: printing verdicts. */
#include "config.h"
#include "report.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *ac_report_kinds(uint32_t kinds, char *buf, size_t n)
{
  size_t len = 0;
  buf[0] = 0;
  for (int k = 0; k < AC_V_NKINDS; k++)
    if (kinds & (1u << k)) len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? "," : "", ac_verdict_name((ac_verdict_kind)k));
  if (!buf[0]) snprintf(buf, n, "-");
  return buf;
}

static void num(FILE *f, const char *key, double v)
{
  fprintf(f, " %s=%.3g", key, v);
}

const char *ac_report_rows(const ac_report *r, char *buf, size_t n)
{
  if (r->n_rows_judged < r->n_rows_total)
    snprintf(buf, n, "%lld/%lld(%s)", (long long)r->n_rows_judged, (long long)r->n_rows_total,
             r->rows_spec[0] ? r->rows_spec : "sample");
  else snprintf(buf, n, "%lld/%lld", (long long)r->n_rows_judged, (long long)r->n_rows_total);
  return buf;
}

static const char *value_kind(double x)
{
  return isnan(x) ? "nan" : isinf(x) ? (x > 0 ? "+inf" : "-inf") : "finite";
}

static const char *why_text(ac_why w)
{
  switch (w) {
  case AC_WHY_NONFINITE: return "non-finite where the exact value is finite";
  case AC_WHY_FINITE: return "finite where the oracle accepts only a non-finite outcome";
  case AC_WHY_WRONG_NONFINITE: return "a non-finite outcome the oracle does not accept";
  case AC_WHY_EMPTY: return "empty row (no visible key) not following the --empty-rows convention";
  default: return "";
  }
}

const char *ac_report_mismatch_elem(const ac_worst_elem *w, char *buf, size_t n)
{
  static const struct { int bit; const char *name; } an[] = {
    {AC_ACCEPT_NAN, "nan"}, {AC_ACCEPT_PINF, "+inf"}, {AC_ACCEPT_NINF, "-inf"}, {AC_ACCEPT_VALUE, "a finite value"}};
  const char *k = value_kind(w->kernel);
  char acc[64] = "";
  size_t l = 0;
  for (size_t x = 0; x < sizeof an / sizeof an[0]; x++)
    if ((w->accept & an[x].bit) && l < sizeof acc)
      l += (size_t)snprintf(acc + l, sizeof acc - l, "%s%s", l ? " or " : "", an[x].name);
  switch (w->why) {
  case AC_WHY_NONFINITE: snprintf(buf, n, "%s where exact is finite", k); break;
  case AC_WHY_FINITE:
  case AC_WHY_WRONG_NONFINITE: snprintf(buf, n, "%s where the oracle accepts only %s", k, acc[0] ? acc : "nothing"); break;
  case AC_WHY_EMPTY: snprintf(buf, n, "%s in an empty row, against the --empty-rows convention", k); break;
  default: snprintf(buf, n, "%s", why_text(w->why)); break;
  }
  return buf;
}

const char *ac_report_mismatch(const ac_report *r, char *buf, size_t n)
{
  const ac_worst_elem *w = r->worst.valid && r->worst.why != AC_WHY_VALUE ? &r->worst
                           : r->lse_worst.valid && r->lse_worst.why != AC_WHY_VALUE ? &r->lse_worst : NULL;
  buf[0] = 0;
  if (!w) return NULL;
  char t[160];
  snprintf(buf, n, "%s%s", w->is_lse ? "lse " : "", ac_report_mismatch_elem(w, t, sizeof t));
  return buf;
}

void ac_report_line(FILE *f, const char *kernel, const char *casename, const ac_report *r, const ac_policies *pol,
                    ac_dtype t)
{
  char kinds[160], buf[200], kn[600], cn[4400];
  ac_status st = ac_status_of(pol, r->kinds);
  /* one line per case whatever the names hold (an exec command, a path read from a findings directory) */
  fprintf(f, "%-5s %s %s %s", ac_status_name(st), ac_str_escape(kernel, kn, sizeof kn),
          ac_str_escape(casename, cn, sizeof cn), ac_report_kinds(r->kinds, kinds, sizeof kinds));
  if (st == AC_STATUS_SKIP || (r->n_judged == 0 && !r->lse_judged)) {
    if (r->note[0]) fprintf(f, " (%s)", r->note);
    fputc('\n', f);
    return;
  }
  num(f, "err/W", r->max_err_w);
  num(f, "err/E", r->max_err_e);
  num(f, "ulps", r->max_ulps);
  num(f, "nmse", r->nmse);
  fprintf(f, " bad=%lld/%lld rows=%s", (long long)(r->n_fail + r->n_leak), (long long)r->n_judged,
          ac_report_rows(r, buf, sizeof buf));
  if (ac_report_mismatch(r, buf, sizeof buf)) fprintf(f, " mismatch=\"%s\"", buf);
  if (r->n_within_overflow) fprintf(f, " overflow=%lld(inf within budget)", (long long)r->n_within_overflow);
  if (r->n_weak)   /* err/W above is the declared class's; these values fail the dtype's standard class */
    fprintf(f, " weak=%lld(%s err/W=%.3g)", (long long)r->n_weak, r->std_name ? r->std_name : "standard",
            r->weak_err_w_std);
  if (r->has_lse) num(f, "lse_err/W", r->lse_max_err_w);
  if (r->has_dropout) fprintf(f, " kept=%lld/%lld", (long long)r->drop_kept, (long long)r->drop_visible);
  fprintf(f, " %s budget=%s\n", ac_dtype_name(t), r->budget_desc);
}

static void worst_line(FILE *f, const ac_worst_elem *w, ac_dtype t, const char *budget)
{
  char kh[40], rh[40];
  ac_dtype ft = w->is_lse ? AC_F32 : w->fmt1 ? (ac_dtype)(w->fmt1 - 1) : t;
  ac_bits_hex(ft, w->kernel_bits, kh, sizeof kh);
  ac_bits_hex(ft, w->round_bits, rh, sizeof rh);
  if (w->is_lse)
    fprintf(f, "  worst lse[%lld,%lld,%lld]:", (long long)w->b, (long long)w->h, (long long)w->i);
  else
    fprintf(f, "  worst o[%lld,%lld,%lld,%lld]:", (long long)w->b, (long long)w->h, (long long)w->i, (long long)w->d);
  fprintf(f, " exact %.17g (%a) correctly rounded %s; kernel %s = %.9g (%a)", w->exact, w->exact, rh, kh, w->kernel,
          w->kernel);
  char mm[200];
  if (w->why != AC_WHY_VALUE) fprintf(f, "; %s\n", ac_report_mismatch_elem(w, mm, sizeof mm));
  else
    fprintf(f, "; err %.3g = %.3g ulps, err/W %.3g (W %.3g), err/E %.3g (E %.3g), budget %s\n", w->err, w->ulps,
            w->err_w, w->W, w->err_e, w->E, budget);
}

void ac_report_detail(FILE *f, const ac_report *r, ac_dtype t, const char *repro)
{
  if (r->note[0] && (r->n_judged || r->lse_judged)) fprintf(f, "  %s\n", r->note);
  if (r->worst.valid && (r->n_fail || r->n_suspect || r->n_leak || r->worst.why != AC_WHY_VALUE)) worst_line(f, &r->worst, t, r->budget_desc);
  if (r->lse_worst.valid && (r->lse_fail || r->lse_suspect)) worst_line(f, &r->lse_worst, t, r->budget_desc);
  if (r->n_empty_rows) {
    fprintf(f, "  empty rows: %lld; output written as", (long long)r->n_empty_rows);
    fprintf(f, " zero %lld, NaN %lld", (long long)r->empty_o_zero, (long long)r->empty_o_nan);
    if (r->empty_o_other) fprintf(f, ", other values %lld", (long long)r->empty_o_other);
    if (r->has_lse)
      fprintf(f, "; LSE +inf %lld, -inf %lld, NaN %lld", (long long)r->empty_lse_pinf, (long long)r->empty_lse_ninf,
              (long long)r->empty_lse_nan);
    fputc('\n', f);
  }
  if (repro) {
    char *q = ac_str_escape_dup(repro); /* quoted for the shell already; one line whatever it quotes */
    fprintf(f, "  reproduce: %s\n", q);
    free(q);
  }
}

void ac_json_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void jnum(FILE *f, const char *k, double v)
{
  fprintf(f, ",\"%s\":", k);
  if (isfinite(v)) fprintf(f, "%.17g", v);
  else if (isnan(v)) fprintf(f, "\"nan\"");
  else fprintf(f, "\"%sinf\"", v < 0 ? "-" : "");
}

static void jworst(FILE *f, const char *key, const ac_worst_elem *w, ac_dtype t)
{
  char kh[40], rh[40], ex[64], kv[64];
  ac_dtype ft = w->is_lse ? AC_F32 : w->fmt1 ? (ac_dtype)(w->fmt1 - 1) : t;
  fprintf(f, ",\"%s\":{\"index\":[%lld,%lld,%lld,%lld]", key, (long long)w->b, (long long)w->h, (long long)w->i,
          (long long)w->d);
  snprintf(ex, sizeof ex, "%a", w->exact);
  snprintf(kv, sizeof kv, "%a", w->kernel);
  fprintf(f, ",\"exact_hex\":");
  ac_json_string(f, ex);
  fprintf(f, ",\"rounded_bits\":");
  ac_json_string(f, ac_bits_hex(ft, w->round_bits, rh, sizeof rh));
  fprintf(f, ",\"kernel_bits\":");
  ac_json_string(f, ac_bits_hex(ft, w->kernel_bits, kh, sizeof kh));
  fprintf(f, ",\"kernel_hex\":");
  ac_json_string(f, kv);
  jnum(f, "exact", w->exact);
  jnum(f, "kernel", w->kernel);
  jnum(f, "err", w->err);
  jnum(f, "ulps", w->ulps);
  jnum(f, "err_w", w->err_w);
  jnum(f, "err_e", w->err_e);
  jnum(f, "W", w->W);
  jnum(f, "E", w->E);
  fprintf(f, ",\"why\":");
  ac_json_string(f, w->why == AC_WHY_VALUE ? "value" : why_text(w->why));
  char mm[200];
  fprintf(f, ",\"mismatch\":");
  ac_json_string(f, w->why == AC_WHY_VALUE ? "" : ac_report_mismatch_elem(w, mm, sizeof mm));
  fputc('}', f);
}

void ac_report_json(FILE *f, const char *kernel, const char *casename, const ac_report *r, const ac_policies *pol,
                    ac_dtype t, const char *repro)
{
  char kinds[160];
  fprintf(f, "{\"kernel\":");
  ac_json_string(f, kernel);
  fprintf(f, ",\"case\":");
  ac_json_string(f, casename);
  fprintf(f, ",\"status\":\"%s\",\"verdicts\":[", ac_status_name(ac_status_of(pol, r->kinds)));
  int first = 1;
  for (int k = 0; k < AC_V_NKINDS; k++)
    if (r->kinds & (1u << k)) {
      fprintf(f, "%s{\"kind\":\"%s\",\"policy\":\"%s\"}", first ? "" : ",", ac_verdict_name((ac_verdict_kind)k),
              ac_policy_name(pol->p[k]));
      first = 0;
    }
  fprintf(f, "],\"kinds\":");
  ac_json_string(f, ac_report_kinds(r->kinds, kinds, sizeof kinds));
  fprintf(f, ",\"dtype\":\"%s\",\"budget\":", ac_dtype_name(t));
  ac_json_string(f, r->budget_desc);
  fprintf(f, ",\"precision\":");
  ac_json_string(f, r->prec_name ? r->prec_name : "");
  fprintf(f, ",\"precision_source\":");
  ac_json_string(f, r->prec_source ? r->prec_source : "");
  jnum(f, "kappa", r->kappa);
  jnum(f, "max_err", r->max_err);
  jnum(f, "max_ulps", r->max_ulps);
  jnum(f, "max_err_w", r->max_err_w);
  jnum(f, "max_err_e", r->max_err_e);
  jnum(f, "max_err_kappa_e", r->max_suspect);
  jnum(f, "kappa_crit", r->max_kcrit);
  jnum(f, "nmse", r->nmse);
  fprintf(f, ",\"elements\":%lld,\"judged\":%lld,\"fail\":%lld,\"suspect\":%lld,\"leak\":%lld,\"unresolved\":%lld,"
             "\"unwritten\":%lld,\"ood\":%lld,\"overflow_within_budget\":%lld,\"empty_rows\":%lld,\"nan_weight0\":%lld",
          (long long)r->n_elems, (long long)r->n_judged, (long long)r->n_fail, (long long)r->n_suspect,
          (long long)r->n_leak, (long long)r->n_unresolved, (long long)r->n_unwritten, (long long)r->n_ood,
          (long long)r->n_within_overflow, (long long)r->n_empty_rows, (long long)r->n_nan_weight0);
  char rb[200];
  fprintf(f, ",\"rows_judged\":%lld,\"rows_total\":%lld,\"rows\":", (long long)r->n_rows_judged,
          (long long)r->n_rows_total);
  ac_json_string(f, r->rows_spec[0] ? r->rows_spec : "all");
  fprintf(f, ",\"mismatch\":");
  ac_json_string(f, ac_report_mismatch(r, rb, sizeof rb) ? rb : "");
  if (r->std_name) {
    fprintf(f, ",\"weak_class\":{\"standard\":");
    ac_json_string(f, r->std_name);
    fprintf(f, ",\"count\":%lld,\"out_of_class_domain\":%lld", (long long)r->n_weak, (long long)r->n_weak_ood);
    jnum(f, "max_err", r->weak_max_err);
    jnum(f, "err_w_declared", r->weak_err_w_decl);
    jnum(f, "err_w_standard", r->weak_err_w_std);
    fputc('}', f);
  }
  if (r->has_lse) {
    jnum(f, "lse_max_err", r->lse_max_err);
    jnum(f, "lse_max_err_w", r->lse_max_err_w);
    jnum(f, "lse_max_err_e", r->lse_max_err_e);
    fprintf(f, ",\"lse_fail\":%lld,\"empty_lse\":{\"+inf\":%lld,\"-inf\":%lld,\"nan\":%lld}", (long long)r->lse_fail,
            (long long)r->empty_lse_pinf, (long long)r->empty_lse_ninf, (long long)r->empty_lse_nan);
    if (r->lse_worst.valid) jworst(f, "lse_worst", &r->lse_worst, t);
  }
  if (r->worst.valid) jworst(f, "worst", &r->worst, t);
  if (r->has_dropout) {
    fprintf(f, ",\"dropout\":{\"p\":%.9g", r->drop_p);
    fprintf(f, ",\"visible\":%lld,\"kept\":%lld,\"mask_tests\":%d,\"mask_tests_failed\":%d}",
            (long long)r->drop_visible, (long long)r->drop_kept, r->drop_tests, r->drop_failed);
  }
  jnum(f, "kernel_ms", r->kernel_ms);
  fprintf(f, ",\"note\":");
  ac_json_string(f, r->note);
  if (repro) {
    fprintf(f, ",\"reproduce\":");
    ac_json_string(f, repro);
  }
  fputc('}', f);
}
