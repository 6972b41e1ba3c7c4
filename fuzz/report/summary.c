/* summary.c: the defects of a campaign directory as text, one line each (kind, the case that shows
 * it in words, what it needs, how many findings and families hit it, its reproducer), then those
 * whose finding did not fail again when judged again ("unconfirmed", not counted), then the
 * findings a stopped campaign left pending (not minimized nor judged again yet, not counted), then
 * the number of findings (report.html: report_html.c). */
#include "config.h"
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "groups.h"

typedef struct {
  char sig[256], kind[32], policy[16], family[64];
  double err_w;
  int sev;
  ac_mech mech;
} fsum;

static void gets_(json_object *js, const char *k, char *out, size_t n)
{
  json_object *v;
  out[0] = 0;
  if (json_object_object_get_ex(js, k, &v) && v) ac_str_escape(json_object_get_string(v), out, n);
}

static double getd(json_object *js, const char *k)
{
  json_object *v;
  if (json_object_object_get_ex(js, k, &v) && v) return json_object_get_double(v);
  return 0;
}

static int cmp_f(const void *a, const void *b)
{
  const fsum *x = a, *y = b;
  if (x->sev != y->sev) return x->sev - y->sev;
  if (x->err_w != y->err_w) return x->err_w > y->err_w ? -1 : 1;
  return strcmp(x->sig, y->sig);
}

typedef struct {
  fsum *v;
  int n, cap;
} load_ctx;

/* One finding that passed the checks of a findings directory read as data; its strings as they
 * will be printed (escaped: report.json is someone else's text). */
static int add(void *ctx, ac_finding_dir *fd)
{
  load_ctx *lc = ctx;
  json_object *js = fd->report;
  if (lc->n == lc->cap) lc->v = ac_xrealloc(lc->v, sizeof *lc->v * (size_t)(lc->cap = lc->cap ? 2 * lc->cap : 16));
  fsum *f = &lc->v[lc->n++];
  memset(f, 0, sizeof *f);
  snprintf(f->sig, sizeof f->sig, "%s", fd->sig);
  gets_(js, "kind", f->kind, sizeof f->kind);
  gets_(js, "policy", f->policy, sizeof f->policy);
  gets_(js, "family", f->family, sizeof f->family);
  f->err_w = getd(js, "err_w");
  ac_verdict_kind k;
  f->sev = ac_verdict_parse(f->kind, &k) == 0 ? ac_verdict_severity(k) : 99;
  if (!strcmp(f->policy, "warn")) f->sev += 10; /* fail-policy kinds rank first */
  ac_mech_of(js, &f->mech);
  return 0;
}

static fsum *load(const char *dir, int *n)
{
  load_ctx lc = {NULL, 0, 0};
  ac_err e;
  ac_findings_each(dir, NULL, "summary", add, &lc, &e);
  *n = lc.n;
  if (lc.n) qsort(lc.v, (size_t)lc.n, sizeof *lc.v, cmp_f);
  return lc.v;
}

/* "repro: DIR/findings/SIG/repro.sh", quoted for the shell and escaped for the terminal. */
static void print_repro(FILE *f, const char *dir, const char *sig)
{
  char rp[4600], q[9300];
  snprintf(rp, sizeof rp, "%s/findings/%s/repro.sh", dir, sig);
  char *qe = ac_str_escape_dup(ac_shquote(rp, q, sizeof q) ? q : rp);
  fprintf(f, "repro: %s\n", qe);
  free(qe);
}

/* "N findings from M families (a, b, c, ...)" of a comma list of families. */
static void print_counts(FILE *f, int nfind, int nfam, const char *families)
{
  char fams[200];
  snprintf(fams, sizeof fams, "%s", families);
  size_t cut = 0;
  for (int k = 0; fams[cut] && k < 4; k++) cut += strcspn(fams + cut, ",") + (fams[cut + strcspn(fams + cut, ",")] == ',');
  if (fams[cut]) snprintf(fams + cut, sizeof fams - cut, "...");
  for (char *c = fams; *c; c++)
    if (*c == ',') *c = ' ';
  char *qf = ac_str_escape_dup(fams);
  fprintf(f, "%d finding%s from %d famil%s (%s); ", nfind, nfind == 1 ? "" : "s", nfam, nfam == 1 ? "y" : "ies", qf);
  free(qf);
}

void ac_findings_summary(const char *dir, FILE *f, int max_lines)
{
  int n;
  fsum *v = load(dir, &n);
  int nfail = 0;
  for (int i = 0; i < n; i++) nfail += !strcmp(v[i].policy, "fail");
  char *qd = ac_str_escape_dup(dir);
  ac_defect_list l;
  ac_err e;
  if (ac_defects_read(dir, &l, &e)) memset(&l, 0, sizeof l);
  int *order = ac_xcalloc((size_t)l.n + 1, sizeof *order), nd_fail, nconf = ac_defects_confirmed(&l, &nd_fail);
  ac_defects_order(&l, order);
  /* findings without a defect: grouped by mechanism */
  int *group = ac_xcalloc((size_t)(n + 1), sizeof *group), ng = 0;
  if (n) {
    ac_mech *m = ac_xcalloc((size_t)n, sizeof *m);
    for (int i = 0; i < n; i++) m[i] = v[i].mech;
    ng = ac_mech_group(m, n, group);
    free(m);
  }
  int nlegacy = 0, *legacy_first = ac_xcalloc((size_t)ng + 1, sizeof *legacy_first);
  for (int g = 0; g < ng; g++) legacy_first[g] = -1;
  int npend = 0;   /* findings whose minimization a stopped campaign left pending: apart, not counted */
  for (int i = 0; i < n; i++)
    if (v[i].mech.pending) npend++;
    else if (!v[i].mech.defect && legacy_first[group[i]] < 0) legacy_first[group[i]] = i, nlegacy++, nd_fail += !strcmp(v[i].policy, "fail");
  int nd = nconf + nlegacy;
  fprintf(f, "%d defect%s (%d with policy fail) in %s: findings judged again that fail the same way or go with the same trigger\n", nd,
          nd == 1 ? "" : "s", nd_fail, qd);
  int shown = 0;
  for (int k = 0; k < l.n && shown < max_lines; k++) {
    const ac_defect_info *d = &l.v[order[k]];
    if (!ac_defect_confirmed(d)) continue;
    char line[1400];
    ac_defect_line(d, line, sizeof line);
    fprintf(f, "defect %d: %s; ", d->id, line);
    print_counts(f, d->nfind, d->nfam, d->families);
    print_repro(f, dir, d->rep);
    shown++;
  }
  for (int g = 0; g < ng && shown < max_lines; g++) {
    int first = legacy_first[g], cnt = 0;
    if (first < 0) continue;
    char fams[1024] = "", desc[600];
    for (int i = 0; i < n; i++) {
      if (group[i] != g) continue;
      cnt++;
      if (!strstr(fams, v[i].family) && strlen(fams) + strlen(v[i].family) + 2 < sizeof fams)
        snprintf(fams + strlen(fams), sizeof fams - strlen(fams), "%s%s", fams[0] ? "," : "", v[i].family);
    }
    int nfam = 1;
    for (const char *c = fams; *c; c++) nfam += *c == ',';
    ac_mech_desc(&v[first].mech, desc, sizeof desc);
    fprintf(f, "not judged again: %s %s (grouped by mechanism); ", v[first].kind, desc);
    print_counts(f, cnt, nfam, fams);
    print_repro(f, dir, v[first].sig);
    shown++;
  }
  if (nd > shown) fprintf(f, "... %d more defects in %s/defects.json\n", nd - shown, qd);
  /* findings that did not fail again when judged again: listed apart, not counted as defects */
  int nun = l.n - nconf, unshown = 0;
  for (int k = 0; k < l.n && shown < max_lines; k++) {
    const ac_defect_info *d = &l.v[order[k]];
    if (ac_defect_confirmed(d)) continue;
    char line[1400];
    ac_defect_line(d, line, sizeof line);
    fprintf(f, "unconfirmed %d: %s; ", d->id, line);
    print_counts(f, d->nfind, d->nfam, d->families);
    print_repro(f, dir, d->rep);
    shown++, unshown++;
  }
  if (nun > unshown) fprintf(f, "... %d more unconfirmed in %s/defects.json\n", nun - unshown, qd);
  for (int i = 0, said = 0; i < n && npend; i++) {
    if (!v[i].mech.pending) continue;
    if (said++ == 0)
      fprintf(f, "%d finding%s not judged again before the campaign stopped (pending; attncheck fuzz --resume judges them), not counted:\n",
              npend, npend == 1 ? "" : "s");
    if (shown >= max_lines) continue;
    char desc[600];
    ac_mech_desc(&v[i].mech, desc, sizeof desc);
    fprintf(f, "pending: %s %s (%s); ", v[i].kind, desc, v[i].family);
    print_repro(f, dir, v[i].sig);
    shown++;
  }
  fprintf(f, "%d finding%s (%d with policy fail) in %s/findings\n", n, n == 1 ? "" : "s", nfail, qd);
  free(qd);
  free(group);
  free(legacy_first);
  free(order);
  ac_defects_free(&l);
  free(v);
}
