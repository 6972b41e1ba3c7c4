/* mutants.c: how fast the fuzzer finds every built-in mutant, against a baseline of random
 * normal inputs on the suite's shape grid (what FlashAttention-style tests do).
 *
 * For every mutant and seed: (a) a campaign (jobs 1, no minimization, stop at the first
 * fail-policy finding, capped) and (b) the baseline, capped likewise; cases until the first
 * FAIL (median of the seeds; SUSPECT-only detections in their own column). MASKED-LEAK and
 * WEAK-CLASS are given policy fail here: they are the defects of the masked-NaN-leak and the
 * bf16-acc16-pv mutants. Then the throughput
 * of a campaign on small shapes (T <= 64, d <= 64) with a correct CPU kernel, oracle included.
 *
 *   bench/mutants [--seeds N] [--cap N] [--baseline-cap N] [--time S] [--jobs J] [--throughput-s S] [--only NAME[,NAME...]] [--in-process]
 * --baseline-cap N caps the baseline at N cases (default: --cap). --time S also stops each campaign after S seconds (a mutant not found by then counts as not
 * found); the time column gives the campaign's time to its first FAIL (found_after_s of that
 * finding), median and per seed. --only takes a comma-separated list of mutants.
 * --in-process runs the baseline's kernels without forking (faster; a crashing mutant then ends
 * that seed's baseline). A mutant that declares attention variants (ABI 2 caps) gets baseline
 * cases with variants among those it declares; the last column names them and counts the cases
 * of variant families its campaign drew (they are drawn only for kernels that declare them).
 * A mutant that declares a serving layout gets random layout cases as its baseline. A mutant that
 * declares a backward (the mutant-bwd-* kernels, and mutant-varlen-bwd-cu-k on its varlen cases) has it judged on every case of both, with a dO
 * drawn from the case (fuzz/engine/eval_grad.c): their GRAD-FAIL is a fail-policy detection.
 *
 *   bench/mutants --defects [--seeds N] [--time S] [--cap N] [--jobs J] [--only ...]
 * counts the defects each mutant's campaigns report instead (mutants_defects.c): campaigns that
 * run their whole --time (default 60 s), no baseline. */
#include "config.h"
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fuzz.h"
#include "variants.h"
#include "vgen.h"
#include "layout.h"
#include "mutants.h"

typedef struct {
  int64_t fz_fail[MAXM][MAXS], fz_susp[MAXM][MAXS];   /* cases until first; -1 not found */
  int64_t bl_fail[MAXM][MAXS], bl_susp[MAXM][MAXS];
  double fz_seconds[MAXM][MAXS];
  double fz_time[MAXM][MAXS];                         /* seconds to the first FAIL; -1 not found */
  int64_t fz_vcases[MAXM][MAXS];                      /* cases of variant families */
  double tput_cases, tput_s;
} results;

static int nseeds = 5, jobs = 2, in_process = 0;
static int64_t cap = 2000, bcap = -1;
static double time_cap = 0;
static const char *tmpdir;

int64_t bm_first_case(const char *dir, int want_fail, double *t)
{
  if (t) *t = -1;
  char fd[4096];
  snprintf(fd, sizeof fd, "%s/findings", dir);
  DIR *d = opendir(fd);
  if (!d) return -1;
  int64_t best = -1;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char p[4400];
    snprintf(p, sizeof p, "%s/%s/report.json", fd, de->d_name);
    json_object *r = json_object_from_file(p), *v, *ci;
    if (!r) continue;
    if (json_object_object_get_ex(r, "policy", &v) && json_object_object_get_ex(r, "case_index", &ci)) {
      int isfail = !strcmp(json_object_get_string(v), "fail");
      int64_t k = json_object_get_int64(ci) + 1;
      if (isfail == want_fail && (best < 0 || k < best)) {
        best = k;
        json_object *fa;
        if (t && json_object_object_get_ex(r, "found_after_s", &fa)) *t = json_object_get_double(fa);
      }
    }
    json_object_put(r);
  }
  closedir(d);
  return best;
}

/* Cases of the variant families in a campaign's stats (family.NAME=N). */
static int64_t variant_cases(const char *dir)
{
  char p[4200], line[512];
  snprintf(p, sizeof p, "%s/stats", dir);
  FILE *f = fopen(p, "r");
  int64_t n = 0;
  while (f && fgets(line, sizeof line, f)) {
    char *eq = strchr(line, '=');
    if (strncmp(line, "family.", 7) || !eq) continue;
    *eq = 0;
    const ac_family *fa = ac_family_find(line + 7);
    if (fa && (fa->feats || fa->usable)) n += strtoll(eq + 1, NULL, 10);
  }
  if (f) fclose(f);
  return n;
}

void bm_campaign_opts(ac_campaign_opts *o, const char *mutant, const char *dir, int s)
{
  ac_campaign_opts_init(o);
  o->kernel_spec = mutant;
  o->out_dir = dir;
  o->seed = 1000 + (uint64_t)s;
  o->quiet = 1;
  o->live = 0;
  o->timeout_s = 20;
  snprintf(o->policies, sizeof o->policies, "masked-leak=fail;weak-class=fail");
}

void bm_campaign_run(ac_campaign_opts *o)
{
  int fd = open("/dev/null", O_WRONLY), so = dup(1);
  dup2(fd, 1);
  ac_campaign_run(o);
  fflush(stdout);
  dup2(so, 1);
  close(fd);
  close(so);
}

void bm_pool(int ntask, int njobs, void (*task)(int t, void *arg), void *arg)
{
  int running = 0;
  for (int t = 0; t < ntask || running > 0;) {
    if (t < ntask && running < njobs) {
      fflush(NULL);
      pid_t pid = fork();
      if (pid == 0) {
        task(t, arg);
        _exit(0);
      }
      if (pid > 0) running++;
      t++;
      continue;
    }
    int st;
    if (wait(&st) > 0) running--;
  }
}

void bm_rm_rf(const char *dir)
{
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) {}
}

static void run_fuzzer(const char *mutant, int m, int s, results *res)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/fz-%d-%d", tmpdir, m, s);
  ac_campaign_opts o;
  bm_campaign_opts(&o, mutant, dir, s);
  o.max_cases = cap;
  o.time_s = time_cap;
  o.minimize = 0;
  o.stop_on_fail = 1;
  double t = ac_now();
  bm_campaign_run(&o);
  res->fz_seconds[m][s] = ac_now() - t;
  res->fz_vcases[m][s] = variant_cases(dir);
  res->fz_fail[m][s] = bm_first_case(dir, 1, &res->fz_time[m][s]);
  res->fz_susp[m][s] = bm_first_case(dir, 0, NULL);
  bm_rm_rf(dir);
}

/* The baseline: N(0,1) inputs on the shape grid of FlashAttention's and PyTorch's tests. */
static void baseline_case(uint64_t seed, int64_t k, ac_dtype t, ac_case *c)
{
  static const int64_t lens[] = {1, 7, 17, 64, 113, 128, 203, 239, 256};
  static const int64_t dims[] = {32, 59, 64, 111, 128};
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, 0xba5e), (uint64_t)k);
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = t;
  p->mask = (ac_mask)ac_rng_below(&r, 3);
  p->batch = ac_rng_range(&r, 1, 2);
  p->heads = ac_rng_range(&r, 1, 2);
  p->kv_heads = ac_rng_below(&r, 4) == 0 ? 1 : p->heads;
  p->tq = lens[ac_rng_below(&r, 9)];
  p->tk = ac_rng_below(&r, 2) ? p->tq : lens[ac_rng_below(&r, 9)];
  p->dk = p->dv = dims[ac_rng_below(&r, 5)];
  p->scale_is_default = 1;
  p->scale = 1.0 / sqrt((double)p->dk);
  ac_err e;
  if (ac_case_alloc(c, &e)) abort();
  ac_valdist d;
  ac_valdist_normal(&d, 1.0);
  ac_fill_qkv(c, &r, &d, &d, &d);
  snprintf(c->generator, sizeof c->generator, "baseline");
}

/* The baseline of a kernel that declares attention variants: the case with variants as tests
 * draw them (features among caps; a window of random width, softcap 30, ALiBi slopes up to 1, an
 * N(0,1) bias, a random boolean mask, normal sinks and descales). */
static int baseline_variant(uint64_t seed, int64_t k, uint32_t caps, ac_case *c)
{
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, 0x7661), (uint64_t)k);
  ac_vspec v;
  memset(&v, 0, sizeof v);
  caps &= AC_FEAT_ALL & ~(uint32_t)AC_FEAT_MIXED_DTYPES;
  if (c->p.dtype == AC_F64) caps &= ~(uint32_t)AC_FEAT_DESCALE;   /* fp64 tensors have no descales */
  for (int guard = 0; !v.used && guard < 16; guard++) v.used = (uint32_t)ac_rng_below(&r, 256) & caps;
  v.win_left = ac_rng_range(&r, 0, c->p.tk);
  v.win_right = ac_rng_below(&r, 2) ? 0 : -1;
  v.softcap = 30;
  v.alibi_max = 1;
  v.bias = AC_VB_NORMAL;
  v.bias_scale = 1;
  ac_err e;
  if (!v.used || ac_vspec_apply(c, &v, ac_rng_next(&r), &e) == 0) return 0;
  ac_features_free(c);   /* a variant the case cannot take: the plain case */
  ac_features_plain(&c->p);
  return -1;
}

/* The baseline of a kernel that declares a serving layout: 1 to 8 sequences of random lengths
 * (0 to 64 queries and keys; paged: page 16, pages in order; varlen and paged in turn when both
 * are declared) with normal inputs, as tests of varlen and paged kernels draw them. */
static void baseline_layout(uint64_t seed, int64_t k, ac_dtype t, uint32_t caps, ac_case *c)
{
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, 0x6c6179), (uint64_t)k);
  int64_t n = ac_rng_range(&r, 1, 8), tq[8], tk[8], any = 0;
  for (int64_t b = 0; b < n; b++) any += tq[b] = ac_rng_range(&r, 0, 64), tk[b] = ac_rng_range(&r, 0, 64);
  if (!any) tq[0] = 1;
  tk[0] += tk[0] == 0;
  ac_layout_case_spec s = {.dtype = t, .mask = (ac_mask)ac_rng_below(&r, 3), .heads = 2, .kv_heads = 1, .dk = 64,
                           .dv = 64, .sigma = 1,
                           .lay = {.kind = caps == AC_FEAT_LAYOUTS ? (k & 1 ? AC_FEAT_PAGED : AC_FEAT_VARLEN) : caps,
                                   .nseq = n, .tq = tq,
                                   .tk = tk, .page_size = 16}};
  ac_err e;
  if (ac_layout_case_make(c, &s, ac_rng_next(&r), &e)) abort();
}

static void run_baseline(const attncheck_kernel *const *mk, int nm, int s, results *res)
{
  ac_kernel **ks = ac_xcalloc((size_t)nm, sizeof *ks);
  ac_eval_ctx *x = ac_xcalloc((size_t)nm, sizeof *x);
  int left = 0;
  for (int m = 0; m < nm; m++) {
    ac_kernel **list = NULL;
    int n = 0;
    ac_err e;
    res->bl_fail[m][s] = res->bl_susp[m][s] = -1;
    if (ac_kernel_resolve(mk[m]->name, &list, &n, &e) || n != 1) continue;
    ks[m] = list[0];
    free(list);
    ac_eval_ctx_init(&x[m], ks[m], mk[m]->name);
    x[m].run.timeout_s = 20;
    x[m].run.in_process = in_process;
    ac_policies_set(&x[m].pol, "masked-leak=fail", NULL);
    ac_policies_set(&x[m].pol, "weak-class=fail", NULL);
    left++;
  }
  for (int64_t k = 0; k < bcap && left > 0; k++) {
    ac_case cs[AC_NDTYPES];
    ac_oracle_result orr[AC_NDTYPES];
    int have[AC_NDTYPES] = {0}, have_or[AC_NDTYPES] = {0};
    for (int m = 0; m < nm; m++) {
      if (!ks[m] || res->bl_fail[m][s] >= 0) continue;
      ac_gen_limits l;
      ac_gen_limits_init(&l);
      ac_eval_probe_limits(ks[m], &l);
      ac_dtype t = AC_F32;
      for (int d = 0; d < AC_NDTYPES; d++)
        if (l.dtypes & (1u << d)) {
          t = (ac_dtype)d;
          break;
        }
      ac_err e;
      ac_eval ev;
      uint32_t caps = ac_kernel_caps(ks[m]) & AC_FEAT_ALL, lay = ac_kernel_caps(ks[m]) & AC_FEAT_LAYOUTS;
      if (lay) {   /* a layout case of its own */
        ac_case vc;
        baseline_layout(2000 + (uint64_t)s, k, t, lay, &vc);
        ac_eval_case(&x[m], &vc, 0, &ev, &e);
        ac_case_free(&vc);
      } else if (caps) {   /* a case of its own, with variants */
        ac_case vc;
        baseline_case(2000 + (uint64_t)s, k, t, &vc);
        baseline_variant(2000 + (uint64_t)s, k, caps, &vc);
        ac_eval_case(&x[m], &vc, 0, &ev, &e);
        ac_case_free(&vc);
      } else {
        if (!have[t]) {
          baseline_case(2000 + (uint64_t)s, k, t, &cs[t]);
          have[t] = 1;
          have_or[t] = ac_eval_oracle(&cs[t], 1, &orr[t], &e) == 0;
        }
        ac_eval_case_pre(&x[m], &cs[t], have_or[t] ? &orr[t] : NULL, 0, &ev, &e);
      }
      if (ev.any_fail) {
        res->bl_fail[m][s] = k + 1;
        left--;
      } else if (ev.kept && res->bl_susp[m][s] < 0) {
        res->bl_susp[m][s] = k + 1;
      }
    }
    for (int d = 0; d < AC_NDTYPES; d++) {
      if (have_or[d]) ac_oracle_result_free(&orr[d]);
      if (have[d]) ac_case_free(&cs[d]);
    }
  }
  for (int m = 0; m < nm; m++)
    if (ks[m]) ac_kernel_free(ks[m]);
  free(ks);
  free(x);
}

static void run_throughput(double secs, results *res)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/throughput", tmpdir);
  ac_campaign_opts o;
  ac_campaign_opts_init(&o);
  o.kernel_spec = "flash-f32";
  o.out_dir = dir;
  o.time_s = secs;
  o.jobs = 2;
  o.seed = 7;
  o.quiet = 1;
  o.live = 0;
  o.minimize = 0;
  o.lim.max_t = 64;
  o.lim.max_d = 64;
  double t = ac_now();
  bm_campaign_run(&o);
  char p[4200];
  snprintf(p, sizeof p, "%s/stats", dir);
  FILE *f = fopen(p, "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    if (!strncmp(line, "cases_this_run=", 15)) res->tput_cases = strtod(line + 15, NULL);
    if (!strncmp(line, "elapsed_s=", 10)) res->tput_s = strtod(line + 10, NULL);
  }
  if (f) fclose(f);
  if (res->tput_s <= 0) res->tput_s = ac_now() - t;
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  if (x < 0) x = INT64_MAX;
  if (y < 0) y = INT64_MAX;
  return x < y ? -1 : x > y;
}

int64_t bm_median(const int64_t *v, int n)
{
  int64_t t[MAXS];
  memcpy(t, v, sizeof *t * (size_t)n);
  qsort(t, (size_t)n, sizeof *t, cmp_i64);
  return t[n / 2];
}

static int count_found(const int64_t *v, int n)
{
  int c = 0;
  for (int i = 0; i < n; i++) c += v[i] >= 0;
  return c;
}

int bm_in_list(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *s = list; *s;) {
    size_t len = strcspn(s, ",");
    if (len == n && !strncmp(s, name, n)) return 1;
    s += len + (s[len] == ',');
  }
  return 0;
}

double bm_median_time(const double *v, int n, char *per, size_t len)
{
  double t[MAXS];
  per[0] = 0;
  for (int i = 0; i < n; i++) {
    t[i] = v[i] < 0 ? INFINITY : v[i];
    size_t k = strlen(per);
    if (v[i] < 0)
      snprintf(per + k, len - k, "%s-", i ? " " : "");
    else
      snprintf(per + k, len - k, "%s%.1f", i ? " " : "", v[i]);
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1], t[j - 1] = x;
    }
  return isinf(t[n / 2]) ? -1 : t[n / 2];
}

void bm_fmt_med(char *buf, size_t n, int64_t m)
{
  if (m < 0) snprintf(buf, n, "-");
  else snprintf(buf, n, "%lld", (long long)m);
}


/* Task t of the find-rate table: the baseline of seed t for t < nseeds, else the fuzzer on one
 * (mutant, seed). */
typedef struct {
  const attncheck_kernel *const *sel;
  int ns, nseeds;
  results *res;
} find_task;
static void find_one(int t, void *arg)
{
  const find_task *f = arg;
  const int n = f->nseeds;
  if (t < n) run_baseline(f->sel, f->ns, t, f->res);
  else run_fuzzer(f->sel[(t - n) / n]->name, (t - n) / n, (t - n) % n, f->res);
}

int main(int argc, char **argv)
{
  double tput_secs = 20;
  const char *only = NULL;
  int defects = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seeds") && i + 1 < argc) nseeds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cap") && i + 1 < argc) cap = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) jobs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--throughput-s") && i + 1 < argc) tput_secs = atof(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--baseline-cap") && i + 1 < argc)
      bcap = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--time") && i + 1 < argc)
      time_cap = atof(argv[++i]);
    else if (!strcmp(argv[i], "--in-process")) in_process = 1;
    else if (!strcmp(argv[i], "--defects")) defects = 1;
    else {
      fprintf(stderr,
              "usage: bench/mutants [--seeds N] [--cap N] [--baseline-cap N] [--time S] [--jobs J] [--throughput-s S] "
              "[--only NAME[,NAME...]] [--in-process]\n"
              "       bench/mutants --defects [--seeds N] [--time S] [--cap N] [--jobs J] [--only NAME[,NAME...]]\n");
      return 2;
    }
  }
  if (bcap < 0) bcap = cap;
  if (nseeds < 1 || nseeds > MAXS || jobs < 1 || cap < 1 || time_cap < 0) return 2;
  char tbuf[] = "/tmp/attncheck-bench-mutants-XXXXXX";
  tmpdir = mkdtemp(tbuf);
  if (!tmpdir) return 99;
  size_t nmk;
  const attncheck_kernel *const *mk = ac_mutant_kernels(&nmk);
  int nm = (int)nmk < MAXM ? (int)nmk : MAXM;
  const attncheck_kernel *sel[MAXM];
  int ns = 0;
  for (int m = 0; m < nm; m++)
    if (!only || bm_in_list(only, mk[m]->name)) sel[ns++] = mk[m];
  if (ns == 0) {
    fprintf(stderr, "bench/mutants: no mutant named %s (attncheck list --mutants)\n", only ? only : "");
    rmdir(tmpdir);
    return 2;
  }
  if (defects) {   /* whole campaigns of --time S (default 60), capped by --cap only when given */
    int explicit_cap = 0;
    for (int i = 1; i < argc; i++) explicit_cap |= !strcmp(argv[i], "--cap");
    int rc = bm_defects(sel, ns, nseeds, time_cap > 0 ? time_cap : 60, explicit_cap ? cap : 0, jobs, tmpdir);
    rmdir(tmpdir);
    return rc;
  }
  results *res = mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (res == MAP_FAILED) return 99;
  memset(res, 0xff, sizeof *res);
  res->tput_cases = res->tput_s = 0;
  double t0 = ac_now();
  /* tasks: baseline per seed, fuzzer per (mutant, seed); a pool of `jobs` children */
  find_task ft = {sel, ns, nseeds, res};
  bm_pool(nseeds + ns * nseeds, jobs, find_one, &ft);
  double t_mut = ac_now() - t0;
  if (tput_secs > 0) run_throughput(tput_secs, res);
  printf("bench/mutants: %d mutants, %d seeds, cap %lld cases%s%.0f%s (baseline %lld), %d jobs; MASKED-LEAK and "
         "WEAK-CLASS counted with policy fail\n",
         ns, nseeds, (long long)cap, time_cap > 0 ? " or " : "", time_cap, time_cap > 0 ? " s" : "", (long long)bcap,
         jobs);
  printf("%-30s | %-36s | %-32s | %-10s | %-36s | %s\n", "mutant", "fuzzer: FAIL median (per seed)",
         "seconds to FAIL: median (per seed)", "SUSPECT", "baseline: FAIL median (per seed)",
         "variants: declared, fuzzer cases of variant families (seed 0)");
  int fz_kill = 0, bl_kill = 0, fz_2000 = 0;
  for (int m = 0; m < ns; m++) {
    char med[32], per[200] = "", bmed[32], bper[200] = "", sus[32];
    int64_t fm = bm_median(res->fz_fail[m], nseeds), bm = bm_median(res->bl_fail[m], nseeds);
    bm_fmt_med(med, sizeof med, fm);
    bm_fmt_med(bmed, sizeof bmed, bm);
    for (int s = 0; s < nseeds; s++) {
      char x[32];
      bm_fmt_med(x, sizeof x, res->fz_fail[m][s]);
      strncat(per, s ? " " : "", sizeof per - strlen(per) - 1);
      strncat(per, x, sizeof per - strlen(per) - 1);
      bm_fmt_med(x, sizeof x, res->bl_fail[m][s]);
      strncat(bper, s ? " " : "", sizeof bper - strlen(bper) - 1);
      strncat(bper, x, sizeof bper - strlen(bper) - 1);
    }
    int64_t sm = bm_median(res->fz_susp[m], nseeds);
    if (fm < 0 && sm >= 0) bm_fmt_med(sus, sizeof sus, sm);
    else snprintf(sus, sizeof sus, "%s", count_found(res->fz_susp[m], nseeds) ? "(also)" : "-");
    if (fm >= 0) fz_kill++;
    if (fm >= 0 && fm <= 2000) fz_2000++;
    if (bm >= 0) bl_kill++;
    char a[64], b[64];
    snprintf(a, sizeof a, "%s [%s]", med, per);
    snprintf(b, sizeof b, "%s [%s]", bmed, bper);
    char vf[160], tper[160], tmed[200];
    double tm = bm_median_time(res->fz_time[m], nseeds, tper, sizeof tper);
    if (tm < 0)
      snprintf(tmed, sizeof tmed, "- [%s]", tper);
    else
      snprintf(tmed, sizeof tmed, "%.1f [%s]", tm, tper);
    uint32_t caps = sel[m]->abi_version >= 2 ? sel[m]->caps & AC_FEAT_ALL : 0;
    printf("%-30s | %-36s | %-32s | %-10s | %-36s | %s %lld\n", sel[m]->name, a, tmed, sus, b,
           caps ? ac_feat_list(caps, vf, sizeof vf) : "-", (long long)res->fz_vcases[m][0]);
  }
  printf("kill rate (FAIL, median over seeds): fuzzer %d/%d (%.0f%%)  baseline %d/%d (%.0f%%); fuzzer within a median of 2000 cases: %d/%d\n",
         fz_kill, ns, ns ? 100.0 * fz_kill / ns : 0.0, bl_kill, ns, ns ? 100.0 * bl_kill / ns : 0.0, fz_2000, ns);
  if (tput_secs > 0)
    printf("throughput: flash-f32 campaign, T <= 64, d <= 64, 2 jobs, oracle included: %.0f cases in %.1f s = %.1f cases/s\n",
           res->tput_cases, res->tput_s, res->tput_s > 0 ? res->tput_cases / res->tput_s : 0.0);
  printf("wall time: %.0f s for the mutants, %.0f s in all\n", t_mut, ac_now() - t0);
  bm_rm_rf(tmpdir);
  return 0;
}
