/* report_data.c: reads a campaign directory (or a merged set of shards) for the HTML report:
 * stats, log.jsonl, the findings' report.json and the defects they record. */
#include "config.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"
#include "groups.h"
#include "report_data.h"

double ac_rd_num(json_object *v)
{
  if (!v) return NAN;
  if (json_object_is_type(v, json_type_string)) return strtod(json_object_get_string(v), NULL);
  return json_object_get_double(v);
}

double ac_rd_get(json_object *o, const char *key, double dflt)
{
  json_object *v;
  if (o && json_object_object_get_ex(o, key, &v) && v) return ac_rd_num(v);
  return dflt;
}

const char *ac_rd_str(json_object *o, const char *key)
{
  json_object *v;
  if (o && json_object_object_get_ex(o, key, &v) && v) return json_object_get_string(v);
  return "";
}

int ac_rdata_family(ac_rdata *d, const char *name)
{
  char n[64];
  snprintf(n, sizeof n, "%s", name);
  n[strcspn(n, "+")] = 0;
  for (int i = 0; i < d->nfam; i++)
    if (!strcmp(d->fam[i], n)) return i;
  if (d->nfam == AC_RD_MAXFAM) return -1;
  snprintf(d->fam[d->nfam], sizeof d->fam[0], "%s", n);
  d->fam_cases[d->nfam] = 0;
  return d->nfam++;
}

/* dir/name as data (no link followed, no FIFO, at most max bytes): an open file, or NULL when
 * there is none or, with one line on stderr, when it is refused. */
static FILE *open_data(const char *dir, const char *name, uint64_t max)
{
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct stat st;
  if (lstat(p, &st) != 0) return NULL;
  ac_err e;
  int fd = ac_data_open(dir, name, max, &e);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
  if (fd < 0)
    fprintf(stderr, "attncheck report: skipped %s\n", e.msg);
  else if (!f)
    close(fd);
  return f;
}

static void read_stats(const char *dir, ac_rdata *d)
{
  FILE *sf = open_data(dir, "stats", AC_RD_STATS_MAX);
  if (!sf) return;
  ac_err e;
  d->stats = ac_data_read_fd(fileno(sf), AC_RD_STATS_MAX, NULL, "stats", &e);
  fclose(sf);
  if (!d->stats) return;
  for (char *s = d->stats; *s;) {
    char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), s);
    char *eq = strchr(line, '=');
    if (eq) {
      *eq = 0;
      if (!strcmp(line, "kernel")) snprintf(d->kernel, sizeof d->kernel, "%s", eq + 1);
      else if (!strcmp(line, "cases")) d->cases = strtoll(eq + 1, NULL, 10);
      else if (!strncmp(line, "family.", 7)) {
        int fi = ac_rdata_family(d, line + 7);
        if (fi >= 0) d->fam_cases[fi] += strtoll(eq + 1, NULL, 10);
      }
    }
    s += len + (nl ? 1 : 0);
  }
}

static void add_point(ac_rdata *d, int *cap, double t, int64_t cs, const char *fam, double ee, double ew, uint32_t kinds)
{
  int fi = ac_rdata_family(d, fam);
  if (fi < 0) return;
  if (d->np == *cap) d->p = ac_xrealloc(d->p, sizeof *d->p * (size_t)(*cap = *cap ? 2 * *cap : 1024));
  ac_rd_point *x = &d->p[d->np++];
  x->t = t, x->cs = cs, x->fam = fi, x->err_e = ee, x->err_w = ew, x->kinds = kinds;
}

/* Case and finding events of log.jsonl. */
static void read_log(const char *dir, ac_rdata *d, int *pcap)
{
  FILE *f = open_data(dir, "log.jsonl", UINT64_MAX);
  if (!f) return;
  char line[8192];
  int ecap = 0;
  /* times restart at each resume (continued after the run before) and at each merged shard
   * (shards run side by side: from 0 again) */
  double base = 0, last = 0;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "\"event\":\"resume\"")) base = last;
    if (strstr(line, "\"event\":\"merge\"")) base = last = 0;
    int is_case = strstr(line, "\"event\":\"case\"") != NULL, is_find = strstr(line, "\"event\":\"finding\"") != NULL;
    if (!is_case && !is_find) continue;
    json_object *js = json_tokener_parse(line);
    if (!js) continue;
    double t = base + ac_rd_get(js, "t", 0);
    if (t > last) last = t;
    if (is_case) {
      add_point(d, pcap, t, (int64_t)ac_rd_get(js, "case", -1), ac_rd_str(js, "family"), ac_rd_get(js, "err_e", 0),
                ac_rd_get(js, "err_w", NAN), (uint32_t)ac_rd_get(js, "kinds", 0));
    } else {
      ac_verdict_kind k;
      if (ac_verdict_parse(ac_rd_str(js, "kind"), &k) == 0) {
        if (d->nev == ecap) d->ev = ac_xrealloc(d->ev, sizeof *d->ev * (size_t)(ecap = ecap ? 2 * ecap : 64));
        d->ev[d->nev].t = t;
        snprintf(d->ev[d->nev].sig, sizeof d->ev[0].sig, "%s", ac_rd_str(js, "sig"));
        d->ev[d->nev++].kind = (int)k;
      }
    }
    json_object_put(js);
  }
  fclose(f);
}

static int cmp_finding(const void *a, const void *b)
{
  const ac_rd_finding *x = a, *y = b;
  if (x->sev != y->sev) return x->sev - y->sev;
  if (x->err_w != y->err_w) return x->err_w > y->err_w ? -1 : 1;
  return strcmp(x->sig, y->sig);
}

static int cmp_event(const void *a, const void *b)
{
  const ac_rd_event *x = a, *y = b;
  return (x->t > y->t) - (x->t < y->t);
}

typedef struct {
  ac_rdata *d;
  int cap;
} read_ctx;

/* One finding that passed the checks of a findings directory read as data. */
static int add_finding(void *ctx, ac_finding_dir *fd)
{
  read_ctx *rc = ctx;
  ac_rdata *d = rc->d;
  if (d->nf == rc->cap) d->f = ac_xrealloc(d->f, sizeof *d->f * (size_t)(rc->cap = rc->cap ? 2 * rc->cap : 16));
  ac_rd_finding *x = &d->f[d->nf++];
  snprintf(x->sig, sizeof x->sig, "%s", fd->sig);
  x->js = json_object_get(fd->report);
  x->err_w = ac_rd_get(x->js, "err_w", 0);
  ac_verdict_kind k;
  x->sev = ac_verdict_parse(ac_rd_str(x->js, "kind"), &k) == 0 ? ac_verdict_severity(k) : 99;
  if (!strcmp(ac_rd_str(x->js, "policy"), "warn")) x->sev += 10; /* fail-policy kinds rank first */
  return 0;
}

static void read_findings(const char *dir, ac_rdata *d)
{
  read_ctx rc = {d, 0};
  ac_err e;
  ac_findings_each(dir, stderr, "report", add_finding, &rc, &e);
  if (d->nf > 0) qsort(d->f, (size_t)d->nf, sizeof *d->f, cmp_finding);   /* d->f is NULL when there are none */
  ac_mech *m = ac_xcalloc((size_t)d->nf + 1, sizeof *m);
  int *g = ac_xcalloc((size_t)d->nf + 1, sizeof *g);
  for (int i = 0; i < d->nf; i++) ac_mech_of(d->f[i].js, &m[i]);
  d->ndefects = ac_mech_group(m, d->nf, g);
  for (int i = 0; i < d->nf; i++) d->f[i].defect = g[i], d->f[i].defect_id = m[i].defect, d->f[i].pending = m[i].pending;
  /* a group is of pending findings only, or of none; groups are numbered in the order of their first
   * finding, so finding i is its group's first when its number is the next one */
  d->npending = d->npend_groups = 0;
  for (int i = 0, next = 0; i < d->nf; i++) {
    const int first = g[i] == next;
    next += first;
    d->npending += m[i].pending;
    d->npend_groups += m[i].pending && first;
  }
  free(m);
  free(g);
  if (ac_defects_read(dir, &d->dl, &e)) memset(&d->dl, 0, sizeof d->dl);
  d->nunconf = 0;
  for (int k = 0; k < d->dl.n; k++) d->nunconf += !ac_defect_confirmed(&d->dl.v[k]);
}

/* Finding i belongs to a defect that is not confirmed, or to none yet (pending). */
static int unconfirmed(const ac_rdata *d, int i)
{
  if (d->f[i].pending) return 1;
  for (int k = 0; k < d->dl.n && d->f[i].defect_id; k++)
    if (d->dl.v[k].id == d->f[i].defect_id) return !ac_defect_confirmed(&d->dl.v[k]);
  return 0;
}

/* When each group of findings (a defect) was first found: its findings' finding events, else
 * their found_after_s (never, for a defect not confirmed). */
static void defect_times(ac_rdata *d)
{
  d->defect_t = ac_xmalloc(sizeof(double) * (size_t)(d->ndefects + 1));
  for (int g = 0; g < d->ndefects; g++) d->defect_t[g] = INFINITY;
  for (int i = 0; i < d->nf; i++) {
    if (unconfirmed(d, i)) continue;   /* not on the defects' curve */
    double t = ac_rd_get(d->f[i].js, "found_after_s", 0);
    for (int k = 0; k < d->nev; k++)
      if (!strcmp(d->ev[k].sig, d->f[i].sig)) {
        t = d->ev[k].t;
        break;
      }
    if (t < d->defect_t[d->f[i].defect]) d->defect_t[d->f[i].defect] = t;
  }
}

int ac_rdata_load(const char *dir, ac_rdata *d, char *msg, size_t n)
{
  memset(d, 0, sizeof *d);
  d->kappa = AC_KAPPA_DEFAULT;
  ac_err e;
  int ffd = ac_findings_open(dir, &e); /* findings/ a directory, not a link */
  if (ffd < 0) {
    char *q = ac_str_escape_dup(e.msg);
    snprintf(msg, n, "%s", q);
    free(q);
    return -1;
  }
  close(ffd);
  int nfam;
  const ac_family *fams = ac_families(&nfam);
  for (int i = 0; i < nfam; i++) ac_rdata_family(d, fams[i].name);   /* the canonical order */
  read_stats(dir, d);
  int pcap = 0;
  read_log(dir, d, &pcap);
  read_findings(dir, d);
  d->from_cases = d->np > 0;
  for (int i = 0; i < d->nf; i++) {
    json_object *js = d->f[i].js;
    if (!d->kernel[0]) snprintf(d->kernel, sizeof d->kernel, "%s", ac_rd_str(js, "kernel"));
    const char *b = strstr(ac_rd_str(js, "budget"), "kappa=");
    if (b) d->kappa = strtod(b + 6, NULL);
    if (!d->from_cases) {
      ac_verdict_kind k = AC_V_FAIL;
      ac_verdict_parse(ac_rd_str(js, "kind"), &k);
      add_point(d, &pcap, ac_rd_get(js, "found_after_s", 0), (int64_t)ac_rd_get(js, "case_index", -1),
                ac_rd_str(js, "family"), ac_rd_get(js, "err_e", 0), ac_rd_get(js, "err_w", 0), 1u << k);
    }
  }
  if (!d->nev)   /* no log: the findings' own times */
    for (int i = 0; i < d->nf; i++) {
      ac_verdict_kind k;
      if (ac_verdict_parse(ac_rd_str(d->f[i].js, "kind"), &k)) continue;
      d->ev = ac_xrealloc(d->ev, sizeof *d->ev * (size_t)(d->nev + 1));
      d->ev[d->nev].t = ac_rd_get(d->f[i].js, "found_after_s", 0);
      snprintf(d->ev[d->nev].sig, sizeof d->ev[0].sig, "%s", d->f[i].sig);
      d->ev[d->nev++].kind = (int)k;
    }
  if (d->nev > 0) qsort(d->ev, (size_t)d->nev, sizeof *d->ev, cmp_event);
  defect_times(d);
  int have_counts = 0;
  for (int i = 0; i < d->nfam; i++) have_counts |= d->fam_cases[i] > 0;
  if (!have_counts && d->from_cases)
    for (int i = 0; i < d->np; i++) d->fam_cases[d->p[i].fam]++;
  if (!d->cases && d->from_cases) d->cases = d->np;
  return 0;
}

void ac_rdata_free(ac_rdata *d)
{
  for (int i = 0; i < d->nf; i++) json_object_put(d->f[i].js);
  free(d->f);
  free(d->p);
  free(d->ev);
  free(d->stats);
  free(d->defect_t);
  ac_defects_free(&d->dl);
  memset(d, 0, sizeof *d);
}
