/* summary.c: the findings of a campaign directory, ranked by severity then err/W, printed as
 * text after the distinct defects they make (findings grouped by mechanism, groups.h; report.html:
 * report_html.c). */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "groups.h"

typedef struct {
  char sig[256], kind[32], policy[16], family[64], pos[32], size0[160], size1[160], note[512];
  double err_w, err_e;
  int64_t e0, e1, case_index;
  int minimized, sev;
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
  json_object *js = fd->report, *mv;
  if (lc->n == lc->cap) lc->v = ac_xrealloc(lc->v, sizeof *lc->v * (size_t)(lc->cap = lc->cap ? 2 * lc->cap : 16));
  fsum *f = &lc->v[lc->n++];
  memset(f, 0, sizeof *f);
  snprintf(f->sig, sizeof f->sig, "%s", fd->sig);
  gets_(js, "kind", f->kind, sizeof f->kind);
  gets_(js, "policy", f->policy, sizeof f->policy);
  gets_(js, "family", f->family, sizeof f->family);
  gets_(js, "position", f->pos, sizeof f->pos);
  gets_(js, "size", f->size0, sizeof f->size0);
  gets_(js, "minimized_size", f->size1, sizeof f->size1);
  gets_(js, "note", f->note, sizeof f->note);
  f->err_w = getd(js, "err_w");
  f->err_e = getd(js, "err_e");
  f->e0 = (int64_t)getd(js, "elements");
  f->e1 = (int64_t)getd(js, "minimized_elements");
  f->case_index = (int64_t)getd(js, "case_index");
  f->minimized = json_object_object_get_ex(js, "minimized", &mv) && json_object_get_boolean(mv);
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

/* The distinct defects: one line each (kind, how many findings, the mechanism, the families that
 * found it) and the signature of its first-ranked finding. */
static void print_defects(FILE *f, const fsum *v, int n, const int *group, int ng, int max_lines)
{
  for (int d = 0; d < ng && d < max_lines; d++) {
    int cnt = 0, first = -1;
    char fams[512] = "";
    for (int i = 0; i < n; i++) {
      if (group[i] != d) continue;
      if (first < 0) first = i;
      cnt++;
      int seen = 0;   /* an earlier finding of the defect from the same family */
      for (int j = first; j < i && !seen; j++) seen = group[j] == d && !strcmp(v[j].family, v[i].family);
      if (!seen && strlen(fams) + strlen(v[i].family) + 3 < sizeof fams)
        snprintf(fams + strlen(fams), sizeof fams - strlen(fams), "%s%s", fams[0] ? ", " : "", v[i].family);
    }
    char desc[600];
    ac_mech_desc(&v[first].mech, desc, sizeof desc);
    fprintf(f, "defect %d: %-16s x%-3d %s (families: %s)\n", d + 1, v[first].kind, cnt, desc, fams);
    fprintf(f, "     first: %s\n", v[first].sig);
  }
  if (ng > max_lines) fprintf(f, "     ... %d more defects\n", ng - max_lines);
}

void ac_findings_summary(const char *dir, FILE *f, int max_lines)
{
  int n;
  fsum *v = load(dir, &n);
  int nfail = 0;
  for (int i = 0; i < n; i++) nfail += !strcmp(v[i].policy, "fail");
  char *qd = ac_str_escape_dup(dir);
  int *group = ac_xcalloc((size_t)(n + 1), sizeof *group), ng = 0;
  if (n) {
    ac_mech *m = ac_xcalloc((size_t)n, sizeof *m);
    for (int i = 0; i < n; i++) m[i] = v[i].mech;
    ng = ac_mech_group(m, n, group);
    free(m);
  }
  fprintf(f, "findings in %s: %d (%d with policy fail), %d distinct defect%s (grouped by mechanism)\n", qd, n, nfail,
          ng, ng == 1 ? "" : "s");
  print_defects(f, v, n, group, ng, max_lines);
  for (int i = 0; i < n && i < max_lines; i++) {
    fsum *x = &v[i];
    fprintf(f, "%3d. %-16s %-4s err/W=%-9.3g err/E=%-9.3g family=%s row=%s case=%lld defect=%d\n", i + 1, x->kind,
            x->policy, x->err_w, x->err_e, x->family, x->pos, (long long)x->case_index, group[i] + 1);
    if (x->minimized)
      fprintf(f, "     case: %s (%lld elements) -> minimized: %s (%lld elements)\n", x->size0, (long long)x->e0, x->size1,
              (long long)x->e1);
    else
      fprintf(f, "     case: %s (%lld elements)\n", x->size0, (long long)x->e0);
    if (x->note[0]) fprintf(f, "     %s\n", x->note);
    char rp[4600], q[9300];
    snprintf(rp, sizeof rp, "%s/findings/%s/repro.sh", dir, x->sig);
    char *qe = ac_str_escape_dup(ac_shquote(rp, q, sizeof q) ? q : rp);
    fprintf(f, "     repro: %s\n", qe);
    free(qe);
  }
  if (n > max_lines) fprintf(f, "     ... %d more in %s/findings\n", n - max_lines, qd);
  free(qd);
  free(group);
  free(v);
}
