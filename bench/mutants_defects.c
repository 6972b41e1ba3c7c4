/* mutants_defects.c: bench/mutants --defects: how many defects a campaign reports per mutant
 * (docs/fuzzing.md "Defects"). For every mutant and seed a campaign that runs its whole time
 * (jobs 1, minimizing its findings; MASKED-LEAK and WEAK-CLASS with policy fail, as the find-rate
 * table has them), then the defects with policy fail it lists, those with policy warn, its
 * findings, the first FAIL's case number and time (the find rate and time to the first finding),
 * its cases per second and the seconds its workers spent judging findings again for their
 * defects. A single mutant should show one defect (in the median, at most two in any seed), a
 * mutant2- kernel two (in at least 4 of 5 seeds, never one). */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fuzz.h"
#include "mutants.h"

typedef struct {
  int64_t ndef[MAXM][MAXS], nwarn[MAXM][MAXS], nfind[MAXM][MAXS], first[MAXM][MAXS];
  double ftime[MAXM][MAXS], cases[MAXM][MAXS], elapsed[MAXM][MAXS], judge_s[MAXM][MAXS];
} dres;

/* Seconds the "defect" events of dir/log.jsonl spent. */
static double judge_seconds(const char *dir)
{
  char p[4200], line[4096];
  snprintf(p, sizeof p, "%s/log.jsonl", dir);
  FILE *f = fopen(p, "r");
  double s = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (!strstr(line, "\"event\":\"defect\"")) continue;
    const char *x = strstr(line, "\"seconds\":");
    if (x) s += strtod(x + 10, NULL);
  }
  if (f) fclose(f);
  return s;
}

static double stats_num(const char *dir, const char *key)
{
  char p[4200], line[512];
  size_t kl = strlen(key);
  snprintf(p, sizeof p, "%s/stats", dir);
  FILE *f = fopen(p, "r");
  double v = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == '=') v = strtod(line + kl + 1, NULL);
  if (f) fclose(f);
  return v;
}

static void run_one(const char *mutant, int m, int s, double time_s, int64_t cap, const char *tmpdir, dres *r)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/df-%d-%d", tmpdir, m, s);
  ac_campaign_opts o;
  bm_campaign_opts(&o, mutant, dir, s);
  o.time_s = time_s;
  o.max_cases = cap;
  bm_campaign_run(&o);
  ac_defect_list l;
  ac_err e;
  r->ndef[m][s] = r->nwarn[m][s] = 0;
  if (ac_defects_read(dir, &l, &e) == 0) {
    int nfail, n = ac_defects_confirmed(&l, &nfail);   /* one that did not fail again is listed apart */
    r->ndef[m][s] = nfail;
    r->nwarn[m][s] = n - nfail;
    ac_defects_free(&l);
  }
  r->nfind[m][s] = (int64_t)stats_num(dir, "findings");
  r->first[m][s] = bm_first_case(dir, 1, &r->ftime[m][s]);
  r->cases[m][s] = stats_num(dir, "cases_this_run");
  r->elapsed[m][s] = stats_num(dir, "elapsed_s");
  r->judge_s[m][s] = judge_seconds(dir);
  bm_rm_rf(dir);
}

/* "median [a b c d e]" of v over n seeds. */
static void dist(const int64_t *v, int n, char *buf, size_t len)
{
  char med[32], per[160] = "";
  bm_fmt_med(med, sizeof med, bm_median(v, n));
  for (int s = 0; s < n; s++) {
    char x[32];
    bm_fmt_med(x, sizeof x, v[s]);
    snprintf(per + strlen(per), sizeof per - strlen(per), "%s%s", s ? " " : "", x);
  }
  snprintf(buf, len, "%s [%s]", med, per);
}

/* Task t of --defects: the campaign of one (mutant, seed). */
typedef struct {
  const attncheck_kernel *const *sel;
  int nseeds;
  double time_s;
  int64_t cap;
  const char *tmpdir;
  dres *r;
} defect_task;
static void defect_one(int t, void *arg)
{
  const defect_task *d = arg;
  run_one(d->sel[t / d->nseeds]->name, t / d->nseeds, t % d->nseeds, d->time_s, d->cap, d->tmpdir, d->r);
}

int bm_defects(const attncheck_kernel *const *sel, int ns, int nseeds, double time_s, int64_t cap, int jobs,
               const char *tmpdir)
{
  dres *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED) return 99;
  memset(r, 0xff, sizeof *r);
  double t0 = ac_now();
  defect_task dt = {sel, nseeds, time_s, cap, tmpdir, r};
  bm_pool(ns * nseeds, jobs, defect_one, &dt);
  char capped[64] = "";
  if (cap > 0) snprintf(capped, sizeof capped, " or %lld cases", (long long)cap);
  printf("bench/mutants --defects: %d mutants, %d seeds, campaigns of %.0f s%s run their whole time, %d jobs, "
         "findings minimized; MASKED-LEAK and WEAK-CLASS counted with policy fail\n",
         ns, nseeds, time_s, capped, jobs);
  printf("%-40s | %-22s | %-16s | %-22s | %-26s | %-32s | %s\n", "mutant", "defects (fail): median", "defects (warn)",
         "findings: median", "first FAIL: case median", "seconds to first FAIL: median", "cases/s, judging again");
  int single = 0, single_ok = 0, dbl = 0, dbl_ok = 0, found = 0;
  double cases = 0, el = 0, js = 0;
  char bad[4096] = "";
  for (int m = 0; m < ns; m++) {
    char d1[200], d2[200], d3[200], d4[200], tper[200], tmed[260];
    dist(r->ndef[m], nseeds, d1, sizeof d1);
    dist(r->nwarn[m], nseeds, d2, sizeof d2);
    dist(r->nfind[m], nseeds, d3, sizeof d3);
    dist(r->first[m], nseeds, d4, sizeof d4);
    double tm = bm_median_time(r->ftime[m], nseeds, tper, sizeof tper);
    if (tm < 0) snprintf(tmed, sizeof tmed, "- [%s]", tper);
    else snprintf(tmed, sizeof tmed, "%.1f [%s]", tm, tper);
    double mc = 0, me = 0, mj = 0;
    int two = 0, one = 0, max = 0;
    for (int s = 0; s < nseeds; s++) {
      mc += r->cases[m][s] > 0 ? r->cases[m][s] : 0;
      me += r->elapsed[m][s] > 0 ? r->elapsed[m][s] : 0;
      mj += r->judge_s[m][s] > 0 ? r->judge_s[m][s] : 0;
      two += r->ndef[m][s] == 2;
      one += r->ndef[m][s] == 1;
      if (r->ndef[m][s] > max) max = (int)r->ndef[m][s];
    }
    cases += mc, el += me, js += mj;
    found += bm_median(r->first[m], nseeds) >= 0;
    int is_double = !strncmp(sel[m]->name, "mutant2-", 8), ok;
    if (is_double) ok = two >= (nseeds * 4 + 4) / 5 && one == 0, dbl++, dbl_ok += ok;
    else ok = bm_median(r->ndef[m], nseeds) == 1 && max <= 2, single++, single_ok += ok;
    if (!ok) snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "%s%s", bad[0] ? ", " : "", sel[m]->name);
    printf("%-40s | %-22s | %-16s | %-22s | %-26s | %-32s | %.1f, %.1f%%\n", sel[m]->name, d1, d2, d3, d4, tmed,
           me > 0 ? mc / me : 0.0, me > 0 ? 100 * mj / me : 0.0);
  }
  printf("single mutants with one defect in the median and at most two in any seed: %d/%d; mutant2- kernels with two "
         "defects in at least 4 of 5 seeds and never one: %d/%d%s%s\n",
         single_ok, single, dbl_ok, dbl, bad[0] ? "; not: " : "", bad);
  printf("found (a FAIL in the median seed): %d/%d; %.0f cases in %.0f s of campaigns (%.1f cases/s); judging findings "
         "again for their defects: %.1f s (%.2f%% of the campaigns' time)\n",
         found, ns, cases, el, el > 0 ? cases / el : 0.0, js, el > 0 ? 100 * js / el : 0.0);
  printf("wall time: %.0f s\n", ac_now() - t0);
  munmap(r, sizeof *r);
  return 0;
}
