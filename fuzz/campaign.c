/* campaign.c: a fuzzing campaign. A supervisor process forks J workers that share a case
 * counter in shared memory; case numbers are reserved in blocks recorded durably in the
 * journal before use, so a campaign killed at any point resumes without repeating a number.
 * Each worker: stratified sweep over the families, then evolutionary refinement of its elite
 * pool (maximizing err/E); findings stored atomically as found, then minimized. The
 * supervisor restarts dead workers, enforces --time, writes stats and the live status line. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fuzz.h"

#define MAX_FAM 64
#define MAX_JOBS 256
#define RESERVE_BLOCK 32
#define POOL_SIZE 16

typedef struct {
  pthread_mutex_t mu;
  int64_t next;            /* next local case number */
  int64_t reserved;        /* journaled bound: numbers below it may have been used */
  int64_t done, skipped, errors, prev_cases;
  int64_t findings, findings_fail, repeats;
  int64_t meta_checks;      /* metamorphic comparisons this run, and the largest |diff|/tolerance */
  double meta_worst;
  int64_t per_fam[MAX_FAM], per_fam_find[MAX_FAM];
  double best_score;
  char last_finding[256];
  double last_finding_at;
  int stop;
  int any_fail, any_error;
  int journal_error;
  int worker_busy[MAX_JOBS];
} shm_t;

typedef struct {
  ac_campaign_opts *o;
  shm_t *sh;
  uint64_t seed_eff;
  int fam[MAX_FAM], nfam;
  double t0;
  char corpus[4096];
  ac_kernel *kernel;
  ac_eval_ctx x;
  ac_pool pool;
  const char *kname;
  int log_fd;
} ctx_t;

void ac_campaign_opts_init(ac_campaign_opts *o)
{
  memset(o, 0, sizeof *o);
  o->jobs = 1;
  o->seed = 1;
  o->shard_n = 1;
  ac_gen_limits_init(&o->lim);
  o->timeout_s = 60;
  o->minimize = 1;
  o->min_seconds = 30;
  o->live = -1;
  o->repeat_every = 16;
  o->stats_every = 2.0;
}

static void lock(shm_t *sh)
{
  if (pthread_mutex_lock(&sh->mu) == EOWNERDEAD) pthread_mutex_consistent(&sh->mu);
}

/* ---- small file helpers ------------------------------------------------------------ */

static void path_of(char *buf, size_t n, const char *dir, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void log_event(ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_event(ctx_t *c, const char *fmt, ...)
{
  if (c->log_fd < 0) return;
  char line[2048];
  int n = snprintf(line, sizeof line, "{\"t\":%.3f,\"pid\":%ld,", ac_now() - c->t0, (long)getpid());
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n - 2, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof line - 3) n = (int)sizeof line - 3;
  line[n++] = '}';
  line[n++] = '\n';
  ssize_t w = write(c->log_fd, line, (size_t)n);   /* O_APPEND: one write per line */
  (void)w;
}

/* s as the inside of a JSON string. */
static const char *jesc(const char *s, char *buf, size_t n)
{
  size_t o = 0;
  for (; *s && o + 7 < n; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      buf[o++] = '\\';
      buf[o++] = (char)ch;
    } else if (ch < 0x20) {
      o += (size_t)snprintf(buf + o, n - o, "\\u%04x", ch);
    } else {
      buf[o++] = (char)ch;
    }
  }
  buf[o] = 0;
  return buf;
}

static int write_journal(ctx_t *c, int64_t reserved)
{
  char p[4096], buf[256];
  path_of(p, sizeof p, c->o->out_dir, "journal");
  int n = snprintf(buf, sizeof buf, "next=%lld\n", (long long)reserved);
  ac_err e;
  return ac_write_file_atomic(p, buf, (size_t)n, &e);
}

static int64_t read_kv_int(const char *path, const char *key, int64_t dflt)
{
  FILE *f = fopen(path, "r");
  if (!f) return dflt;
  char line[512];
  size_t kl = strlen(key);
  int64_t v = dflt;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == '=') v = strtoll(line + kl + 1, NULL, 10);
  fclose(f);
  return v;
}

/* Take the next case number; -1 when the campaign is over. */
static int64_t take_case(ctx_t *c)
{
  shm_t *sh = c->sh;
  lock(sh);
  int64_t k = -1;
  if (!sh->stop && !sh->journal_error) {
    if (c->o->max_cases > 0 && sh->next >= c->o->max_cases) {
      sh->stop = 1;
    } else {
      if (sh->next >= sh->reserved) {
        int64_t r = sh->next + RESERVE_BLOCK;
        if (write_journal(c, r) == 0) sh->reserved = r;
        else sh->journal_error = 1;
      }
      if (sh->next < sh->reserved) k = sh->next++;
    }
  }
  pthread_mutex_unlock(&sh->mu);
  return k;
}

/* ---- findings ------------------------------------------------------------------------ */

static const char *json_str(json_object *o) { return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY); }

static json_object *jd(double v)
{
  if (isfinite(v)) return json_object_new_double(v);
  return json_object_new_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static json_object *build_report(ctx_t *c, const ac_case *cs, const ac_eval *ev, ac_verdict_kind k, const char *family,
                                 const char *pos, const char *sig, int64_t gk)
{
  json_object *r = json_object_new_object();
  char size[200], buf[64];
  ac_case_size_str(cs, size, sizeof size);
  json_object_object_add(r, "signature", json_object_new_string(sig));
  json_object_object_add(r, "kernel", json_object_new_string(c->kname));
  json_object_object_add(r, "kernel_spec", json_object_new_string(c->o->kernel_spec));
  json_object_object_add(r, "kind", json_object_new_string(ac_verdict_name(k)));
  json_object_object_add(r, "policy", json_object_new_string(ac_policy_name(c->x.pol.p[k])));
  json_object_object_add(r, "family", json_object_new_string(family));
  json_object_object_add(r, "position", json_object_new_string(pos));
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->seed_eff);
  json_object_object_add(r, "seed", json_object_new_string(buf));
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->o->seed);
  json_object_object_add(r, "campaign_seed", json_object_new_string(buf));
  snprintf(buf, sizeof buf, "%d/%d", c->o->shard_i, c->o->shard_n);
  json_object_object_add(r, "shard", json_object_new_string(buf));
  json_object_object_add(r, "case_index", json_object_new_int64(gk));
  json_object_object_add(r, "generator", json_object_new_string(cs->generator));
  if (cs->params_json) {
    json_object *pj = json_tokener_parse(cs->params_json);
    if (pj) json_object_object_add(r, "params", pj);
  }
  json_object_object_add(r, "found_after_s", json_object_new_double(ac_now() - c->t0));
  json_object_object_add(r, "err_w", jd(ev->max_err_w));
  json_object_object_add(r, "err_e", jd(ev->max_err_e));
  json_object_object_add(r, "rows", json_object_new_string(ac_report_rows(&ev->rep, buf, sizeof buf)));
  json_object_object_add(r, "mismatch", json_object_new_string(ac_report_mismatch(&ev->rep, buf, sizeof buf) ? buf : ""));
  json_object_object_add(r, "max_ulps", jd(ev->rep.max_ulps));
  json_object_object_add(r, "nmse", jd(ev->rep.nmse));
  json_object_object_add(r, "n_fail", json_object_new_int64(ev->rep.n_fail));
  json_object_object_add(r, "n_suspect", json_object_new_int64(ev->rep.n_suspect));
  json_object_object_add(r, "budget", json_object_new_string(ev->rep.budget_desc));
  json_object_object_add(r, "note", json_object_new_string(ev->rep.note));
  const ac_worst_elem *w = &ev->rep.worst;
  if (ev->rep.lse_worst.valid && (!w->valid || ev->rep.lse_worst.err_w > w->err_w)) w = &ev->rep.lse_worst;
  if (w->valid) {
    json_object *wo = json_object_new_object();
    json_object_object_add(wo, "tensor", json_object_new_string(w->is_lse ? "lse" : "o"));
    json_object_object_add(wo, "b", json_object_new_int64(w->b));
    json_object_object_add(wo, "h", json_object_new_int64(w->h));
    json_object_object_add(wo, "i", json_object_new_int64(w->i));
    json_object_object_add(wo, "d", json_object_new_int64(w->d));
    snprintf(buf, sizeof buf, "%a", w->exact);
    json_object_object_add(wo, "exact", json_object_new_string(buf));
    snprintf(buf, sizeof buf, "%a", w->kernel);
    json_object_object_add(wo, "kernel", json_object_new_string(buf));
    json_object_object_add(wo, "kernel_decimal", jd(w->kernel));
    json_object_object_add(wo, "exact_decimal", jd(w->exact));
    json_object_object_add(wo, "ulps", jd(w->ulps));
    json_object_object_add(wo, "err_w", jd(w->err_w));
    json_object_object_add(wo, "err_e", jd(w->err_e));
    json_object_object_add(r, "worst", wo);
  }
  if (k == AC_V_METAMORPHIC && ev->meta.checked) {
    const ac_meta_result *m = &ev->meta;
    json_object *mo = json_object_new_object();
    json_object_object_add(mo, "transformation", json_object_new_string(m->transform));
    json_object_object_add(mo, "b", json_object_new_int64(m->b));
    json_object_object_add(mo, "h", json_object_new_int64(m->h));
    json_object_object_add(mo, "i", json_object_new_int64(m->i));
    json_object_object_add(mo, "d", json_object_new_int64(m->d));
    snprintf(buf, sizeof buf, "%a", m->a);
    json_object_object_add(mo, "kernel", json_object_new_string(buf));
    snprintf(buf, sizeof buf, "%a", m->t);
    json_object_object_add(mo, "kernel_transformed", json_object_new_string(buf));
    json_object_object_add(mo, "kernel_decimal", jd(m->a));
    json_object_object_add(mo, "kernel_transformed_decimal", jd(m->t));
    json_object_object_add(mo, "diff", jd(m->diff));
    json_object_object_add(mo, "tolerance", jd(m->tol));
    json_object_object_add(mo, "n_compared", json_object_new_int64(m->n_compared));
    json_object_object_add(mo, "n_disagree", json_object_new_int64(m->n_bad));
    json_object_object_add(r, "metamorphic", mo);
  }
  json_object_object_add(r, "size", json_object_new_string(size));
  json_object_object_add(r, "elements", json_object_new_int64(ac_case_elems(cs)));
  json_object_object_add(r, "minimized", json_object_new_boolean(0));
  json_object_object_add(r, "minimize_state", json_object_new_string(c->o->minimize ? "pending" : "off"));
  if (c->o->precision) json_object_object_add(r, "precision_override", json_object_new_string(c->o->precision));
  json_object_object_add(r, "policies", json_object_new_string(c->o->policies));
  json_object_object_add(r, "empty_rows", json_object_new_string(ac_empty_name(c->x.cmp.empty)));
  json_object_object_add(r, "timeout_s", json_object_new_double(c->x.run.timeout_s));
  json_object_object_add(r, "tool_version", json_object_new_string(PACKAGE_VERSION));
  char rbuf[4600];
  if (snprintf(rbuf, sizeof rbuf, "attncheck replay %s/findings/%s", c->o->out_dir, sig) < (int)sizeof rbuf)
    json_object_object_add(r, "repro", json_object_new_string(rbuf));
  return r;
}

typedef struct {
  ctx_t *c;
  ac_verdict_kind kind;
} holds_ctx;

static int holds(const ac_case *cs, void *arg)
{
  holds_ctx *h = arg;
  ac_eval ev;
  ac_err e;
  ac_eval_ctx x = h->c->x;
  if (h->kind == AC_V_METAMORPHIC) x.metamorphic = AC_META_ALWAYS;   /* a shrunk case may fall outside the 1 in 8 */
  if (ac_eval_case(&x, cs, h->kind == AC_V_NONDETERMINISTIC, &ev, &e) && !(ev.kinds & (1u << h->kind))) return 0;
  return (ev.kinds & (1u << h->kind)) != 0;
}

/* Minimize the finding in fdir (case.npz + report.json) and store minimized.npz beside it. */
static void minimize_finding(ctx_t *c, const char *sig)
{
  char fdir[4096], p[4200];
  snprintf(fdir, sizeof fdir, "%s/findings/%s", c->o->out_dir, sig);
  snprintf(p, sizeof p, "%s/report.json", fdir);
  json_object *r = json_object_from_file(p);
  if (!r) return;
  json_object *v;
  ac_verdict_kind kind = AC_V_FAIL;
  if (json_object_object_get_ex(r, "kind", &v)) ac_verdict_parse(json_object_get_string(v), &kind);
  int64_t hb = 0, hh = 0, hi = -1, hd = 0;
  json_object *w;
  if (json_object_object_get_ex(r, "worst", &w)) {
    if (json_object_object_get_ex(w, "b", &v)) hb = json_object_get_int64(v);
    if (json_object_object_get_ex(w, "h", &v)) hh = json_object_get_int64(v);
    if (json_object_object_get_ex(w, "i", &v)) hi = json_object_get_int64(v);
    if (json_object_object_get_ex(w, "d", &v)) hd = json_object_get_int64(v);
  }
  ac_case cs, mn;
  ac_err e;
  snprintf(p, sizeof p, "%s/case.npz", fdir);
  if (ac_case_read(&cs, p, &e)) {
    json_object_put(r);
    return;
  }
  holds_ctx hc = {c, kind};
  ac_min_opts mo = {.max_evals = 200, .max_seconds = c->o->min_seconds};
  double t = ac_now();
  if (ac_minimize(&cs, hb, hh, hi, hd, holds, &hc, &mo, &mn, &e) == 0) {
    snprintf(p, sizeof p, "%s/minimized.npz", fdir);
    if (ac_case_write(&mn, p, &e) == 0) {
      char size[200];
      ac_case_size_str(&mn, size, sizeof size);
      json_object_object_add(r, "minimized", json_object_new_boolean(1));
      json_object_object_add(r, "minimize_state", json_object_new_string("done"));
      json_object_object_add(r, "minimized_size", json_object_new_string(size));
      json_object_object_add(r, "minimized_elements", json_object_new_int64(ac_case_elems(&mn)));
      json_object_object_add(r, "minimize_evals", json_object_new_int(mo.evals));
      json_object_object_add(r, "minimize_s", json_object_new_double(ac_now() - t));
      const char *txt = json_str(r);
      snprintf(p, sizeof p, "%s/report.json", fdir);
      ac_write_file_atomic(p, txt, strlen(txt), &e);
      log_event(c, "\"event\":\"minimized\",\"sig\":\"%s\",\"elements\":%lld,\"minimized_elements\":%lld,\"evals\":%d",
                sig, (long long)ac_case_elems(&cs), (long long)ac_case_elems(&mn), mo.evals);
    }
    ac_case_free(&mn);
  }
  ac_case_free(&cs);
  json_object_put(r);
}

static void record_findings(ctx_t *c, const ac_case *cs, const ac_eval *ev, const char *family, int64_t gk)
{
  for (int k = 0; k < AC_V_NKINDS; k++) {
    if (!(ev->kept & (1u << k))) continue;
    /* a case that FAILs is not also a SUSPECT finding: the same elements, a weaker claim */
    if (k == AC_V_SUSPECT && (ev->kept & (1u << AC_V_FAIL))) continue;
    const char *pos = ac_row_position(k == AC_V_FAIL || k == AC_V_SUSPECT || k == AC_V_MASKED_LEAK || k == AC_V_WEAK_CLASS ? ev->worst_i
                                      : k == AC_V_METAMORPHIC ? ev->meta.i
                                                              : -1,
                                      cs->p.tq);
    char sig[256], p[4400];
    ac_signature(c->kname, (ac_verdict_kind)k, family, pos, sig, sizeof sig);
    snprintf(p, sizeof p, "%s/findings/%s", c->o->out_dir, sig);
    struct stat st;
    if (stat(p, &st) == 0) {
      __atomic_add_fetch(&c->sh->repeats, 1, __ATOMIC_RELAXED);
      continue;
    }
    json_object *r = build_report(c, cs, ev, (ac_verdict_kind)k, family, pos, sig, gk);
    ac_err e;
    int st_rc = ac_finding_store(c->o->out_dir, sig, cs, json_str(r), &e);
    json_object_put(r);
    if (st_rc < 0) {
      char jb[1200];
      log_event(c, "\"event\":\"error\",\"what\":\"store finding\",\"msg\":\"%s\"", jesc(e.msg, jb, sizeof jb));
      continue;
    }
    if (st_rc == 0) continue;
    int fail = c->x.pol.p[k] == AC_POLICY_FAIL;
    lock(c->sh);
    c->sh->findings++;
    if (fail) {
      c->sh->findings_fail++;
      c->sh->any_fail = 1;
      if (c->o->stop_on_fail) c->sh->stop = 1;
    }
    snprintf(c->sh->last_finding, sizeof c->sh->last_finding, "%s", sig);
    c->sh->last_finding_at = ac_now() - c->t0;
    for (int i = 0; i < c->nfam; i++) {
      int nf;
      const ac_family *fams = ac_families(&nf);
      if (!strcmp(fams[c->fam[i]].name, family)) c->sh->per_fam_find[i]++;
    }
    pthread_mutex_unlock(&c->sh->mu);
    log_event(c, "\"event\":\"finding\",\"sig\":\"%s\",\"kind\":\"%s\",\"case\":%lld,\"err_w\":%.6g,\"err_e\":%.6g", sig,
              ac_verdict_name((ac_verdict_kind)k), (long long)gk, ev->err_w, ev->score);
    if (c->o->minimize) minimize_finding(c, sig);
  }
}

/* ---- the worker -------------------------------------------------------------------------- */

static int family_slot(ctx_t *c, const char *name)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  for (int i = 0; i < c->nfam; i++)
    if (!strcmp(f[c->fam[i]].name, name)) return i;
  return -1;
}

static int setup_kernel(ctx_t *c, ac_err *e)
{
  ac_kernel **list = NULL;
  int n = 0;
  if (ac_kernel_resolve(c->o->kernel_spec, &list, &n, e)) return -1;
  if (n != 1) {
    ac_kernel_list_free(list, n);
    return ac_err_set(e, "kernel '%s' names %d kernels; give PATH.so:NAME", c->o->kernel_spec, n);
  }
  c->kernel = list[0];
  free(list);
  c->kname = c->kernel->name;
  ac_eval_ctx_init(&c->x, c->kernel, c->o->kernel_spec);
  c->x.precision = c->o->precision;
  c->x.run.timeout_s = c->o->timeout_s;
  if (c->o->empty_rows) ac_empty_parse(c->o->empty_rows, &c->x.cmp.empty);
  if (c->o->policies[0]) {
    char *dup = ac_xstrdup(c->o->policies), *save = NULL;
    for (char *t = strtok_r(dup, ";", &save); t; t = strtok_r(NULL, ";", &save))
      if (ac_policies_set(&c->x.pol, t, e)) {
        free(dup);
        return -1;
      }
    free(dup);
  }
  return 0;
}

static void pending_minimizations(ctx_t *c, int w)
{
  char fd[4096];
  snprintf(fd, sizeof fd, "%s/findings", c->o->out_dir);
  DIR *d = opendir(fd);
  if (!d) return;
  struct dirent *de;
  int idx = 0;
  char (*names)[256] = NULL;
  int n = 0, cap = 0;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    if (idx++ % c->o->jobs != w) continue;
    char p[4400];
    snprintf(p, sizeof p, "%s/%s/minimized.npz", fd, de->d_name);
    if (access(p, F_OK) == 0) continue;
    snprintf(p, sizeof p, "%s/%s/report.json", fd, de->d_name);
    json_object *r = json_object_from_file(p), *v;
    int pending = r && json_object_object_get_ex(r, "minimize_state", &v) && !strcmp(json_object_get_string(v), "pending");
    if (r) json_object_put(r);
    if (!pending || strlen(de->d_name) >= 256) continue;
    if (n == cap) names = ac_xrealloc(names, sizeof *names * (size_t)(cap = cap ? cap * 2 : 8));
    snprintf(names[n++], 256, "%s", de->d_name);
  }
  closedir(d);
  for (int i = 0; i < n && !c->sh->stop; i++) minimize_finding(c, names[i]);
  free(names);
}

static pid_t supervisor_pid;

static void worker_main(ctx_t *c, int w)
{
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
  /* a supervisor killed with SIGKILL takes its workers with it: nothing may go on taking case
   * numbers behind a later --resume */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != supervisor_pid) _exit(0);
  ac_err e;
  if (setup_kernel(c, &e)) {
    char jb[1200];
    log_event(c, "\"event\":\"error\",\"what\":\"kernel\",\"msg\":\"%s\"", jesc(e.msg, jb, sizeof jb));
    _exit(3);
  }
  ac_pool_init(&c->pool, POOL_SIZE);
  int from_corpus = ac_corpus_load(c->corpus, &c->pool, &c->o->lim, POOL_SIZE);
  if (from_corpus) log_event(c, "\"event\":\"corpus\",\"worker\":%d,\"loaded\":%d", w, from_corpus);
  if (c->o->minimize) pending_minimizations(c, w);
  int nf;
  const ac_family *fams = ac_families(&nf);
  /* a pool seeded from the corpus starts refining at once; a fresh one sweeps first */
  int64_t sweep_n = from_corpus ? 0 : 4 * c->nfam > 100 ? 4 * c->nfam : 100;
  double local_best = 0;
  for (;;) {
    int64_t k = take_case(c);
    if (k < 0) break;
    c->sh->worker_busy[w] = 1;
    int64_t gk = k * c->o->shard_n + c->o->shard_i;
    ac_rng r;
    ac_rng_init(&r, ac_hash2(c->seed_eff, 0x73656172636831ULL), (uint64_t)gk);
    ac_case cs;
    char family[64], desc[256] = "";
    ac_elite *parent = NULL;
    int sweep = k < sweep_n || c->pool.n == 0 || ac_rng_uniform(&r) < 0.4;
    int rc;
    if (sweep) {
      int slot = (int)(k % c->nfam);
      const ac_family *f = &fams[c->fam[slot]];
      if ((f->flags & AC_FAM_COSTLY) && ((k / c->nfam) % 4 != 0) && c->nfam > 1) {
        slot = (slot + 1 + (int)ac_rng_below(&r, (uint64_t)(c->nfam - 1))) % c->nfam;
        f = &fams[c->fam[slot]];
        if (f->flags & AC_FAM_COSTLY) f = &fams[c->fam[(slot + 1) % c->nfam]];
      }
      snprintf(family, sizeof family, "%s", f->name);
      rc = ac_generate(f, c->seed_eff, gk, &c->o->lim, &cs, &e);
    } else {
      parent = ac_pool_pick(&c->pool, &r);
      snprintf(family, sizeof family, "%s", parent->family);
      rc = ac_mutate(&parent->c, parent->sigma, &r, &c->o->lim, &cs, desc, sizeof desc, &e);
      if (rc == 0) {
        cs.case_index = gk;
        char *pj = cs.params_json;
        ac_params pb;
        ac_params_init(&pb);
        ac_params_str(&pb, "family", family);
        ac_params_str(&pb, "mutation", desc);
        ac_params_int(&pb, "index", gk);
        cs.params_json = ac_params_finish(&pb);
        free(pj);
        if (snprintf(cs.generator, sizeof cs.generator, "%s+mut", family) >= (int)sizeof cs.generator)
          snprintf(cs.generator, sizeof cs.generator, "mutant");
      }
    }
    if (rc) {
      __atomic_add_fetch(&c->sh->errors, 1, __ATOMIC_RELAXED);
      char jb[1200];
      log_event(c, "\"event\":\"error\",\"what\":\"generate\",\"case\":%lld,\"msg\":\"%s\"", (long long)gk,
                jesc(e.msg, jb, sizeof jb));
      c->sh->worker_busy[w] = 0;
      continue;
    }
    ac_eval ev;
    int repeat = c->o->repeat_every > 0 && (gk % c->o->repeat_every) == c->o->repeat_every - 1;
    int erc = ac_eval_case(&c->x, &cs, repeat, &ev, &e);
    if (erc || (ev.kinds & (1u << AC_V_ERROR))) {
      /* the tool could not decide this case (e.g. an unresolved oracle element): exit 3 */
      __atomic_add_fetch(&c->sh->errors, 1, __ATOMIC_RELAXED);
      lock(c->sh);
      c->sh->any_error = 1;
      pthread_mutex_unlock(&c->sh->mu);
      char msg[1200];
      jesc(erc ? e.msg : ev.rep.note, msg, sizeof msg);
      /* keep the first few such cases for whoever investigates the tool */
      if (__atomic_load_n(&c->sh->errors, __ATOMIC_RELAXED) <= 20) {
        char ed[4096], ep[4400];
        ac_err ee;
        snprintf(ed, sizeof ed, "%s/errors", c->o->out_dir);
        snprintf(ep, sizeof ep, "%s/case-%lld.npz", ed, (long long)gk);
        if (ac_mkdir_p(ed, &ee) == 0) ac_case_write(&cs, ep, &ee);
      }
      log_event(c, "\"event\":\"error\",\"what\":\"eval\",\"case\":%lld,\"msg\":\"%s\"", (long long)gk, msg);
    }
    int slot = family_slot(c, family);
    lock(c->sh);
    c->sh->done++;
    if (ev.kinds & (1u << AC_V_SKIP)) c->sh->skipped++;
    if (ev.meta.checked) {
      c->sh->meta_checks++;
      if (ev.meta.worst_ratio > c->sh->meta_worst) c->sh->meta_worst = ev.meta.worst_ratio;
    }
    if (slot >= 0) c->sh->per_fam[slot]++;
    if (ev.score > c->sh->best_score && ev.score < 1e299) c->sh->best_score = ev.score;
    pthread_mutex_unlock(&c->sh->mu);
    if (c->o->log_cases)
      log_event(c, "\"event\":\"case\",\"case\":%lld,\"family\":\"%s\",\"kinds\":%u,\"err_e\":%.4g%s%s%s", (long long)gk,
                family, ev.kinds, ev.score, desc[0] ? ",\"mutation\":\"" : "", desc, desc[0] ? "\"" : "");
    if (ev.kept) record_findings(c, &cs, &ev, family, gk);
    /* the search: children that beat their parent join the pool; parents that stop improving
     * take smaller steps */
    int clean = !ev.any_fail && !(ev.kinds & ((1u << AC_V_SKIP) | (1u << AC_V_ERROR) | (1u << AC_V_OUT_OF_DOMAIN)));
    if (parent) {
      if (ev.score > parent->score) {
        if (clean) ac_pool_offer(&c->pool, &cs, family, ev.score);
      } else {
        parent->tries++;
        parent->sigma *= 0.7;
        if (parent->sigma < 1e-6) parent->sigma = 1e-6;
      }
    } else if (clean) {
      ac_pool_offer(&c->pool, &cs, family, ev.score);
    }
    if (clean && ev.score > local_best && ev.score < 1e299 && ev.score > 0.05) {
      local_best = ev.score;
      ac_corpus_save(c->corpus, &cs, family, ev.score);
    }
    ac_case_free(&cs);
    c->sh->worker_busy[w] = 0;
  }
  ac_pool_free(&c->pool);
  ac_kernel_free(c->kernel);
  _exit(0);
}

/* ---- the supervisor ------------------------------------------------------------------------ */

static volatile sig_atomic_t interrupted = 0;
static void on_int(int s)
{
  (void)s;
  interrupted = 1;
}

static void write_stats(ctx_t *c, const char *state)
{
  shm_t *sh = c->sh;
  int nf;
  const ac_family *fams = ac_families(&nf);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return;
  lock(sh);
  double el = ac_now() - c->t0;
  fprintf(f, "state=%s\nkernel=%s\nseed=%llu\nshard=%d/%d\n", state, c->o->kernel_spec, (unsigned long long)c->o->seed,
          c->o->shard_i, c->o->shard_n);
  fprintf(f, "cases=%lld\ncases_this_run=%lld\ncases_per_s=%.1f\n", (long long)(sh->prev_cases + sh->done),
          (long long)sh->done, el > 0 ? (double)sh->done / el : 0.0);
  fprintf(f, "findings=%lld\nfindings_fail=%lld\nrepeat_hits=%lld\n", (long long)sh->findings,
          (long long)sh->findings_fail, (long long)sh->repeats);
  fprintf(f, "last_finding=%s\nlast_finding_at_s=%.1f\n", sh->last_finding[0] ? sh->last_finding : "none",
          sh->last_finding[0] ? sh->last_finding_at : 0.0);
  fprintf(f, "skipped=%lld\nerrors=%lld\nbest_err_over_E=%.4g\nnext_case=%lld\nelapsed_s=%.1f\njobs=%d\n",
          (long long)sh->skipped, (long long)sh->errors, sh->best_score, (long long)sh->next, el, c->o->jobs);
  fprintf(f, "metamorphic_checks_this_run=%lld\nmetamorphic_worst_diff_over_tol=%.4g\n", (long long)sh->meta_checks,
          sh->meta_worst);
  for (int i = 0; i < c->nfam; i++)
    fprintf(f, "family.%s=%lld\n", fams[c->fam[i]].name, (long long)sh->per_fam[i]);
  for (int i = 0; i < c->nfam; i++)
    if (sh->per_fam_find[i]) fprintf(f, "findings.%s=%lld\n", fams[c->fam[i]].name, (long long)sh->per_fam_find[i]);
  pthread_mutex_unlock(&sh->mu);
  fclose(f);
  char p[4096];
  path_of(p, sizeof p, c->o->out_dir, "stats");
  ac_err e;
  ac_write_file_atomic(p, buf, len, &e);
  free(buf);
}

static void live_line(ctx_t *c)
{
  shm_t *sh = c->sh;
  double el = ac_now() - c->t0;
  char prog[64] = "";
  if (c->o->max_cases > 0) {
    int w = 20, filled = (int)((double)w * (double)sh->next / (double)c->o->max_cases);
    if (filled > w) filled = w;
    char bar[32];
    for (int i = 0; i < w; i++) bar[i] = i < filled ? '#' : '.';
    bar[w] = 0;
    snprintf(prog, sizeof prog, "[%s] %lld/%lld", bar, (long long)sh->next, (long long)c->o->max_cases);
  } else if (c->o->time_s > 0) {
    double rem = c->o->time_s - el;
    snprintf(prog, sizeof prog, "%.0fs elapsed, %.0fs left", el, rem > 0 ? rem : 0);
  }
  fprintf(stderr, "\r\033[K%s  %lld cases  %.0f/s  findings %lld (%lld fail)  last: %.40s", prog,
          (long long)(sh->prev_cases + sh->done), el > 0 ? (double)sh->done / el : 0.0, (long long)sh->findings,
          (long long)sh->findings_fail, sh->last_finding[0] ? sh->last_finding : "-");
  fflush(stderr);
}

static int save_campaign_json(ctx_t *c, ac_err *e)
{
  json_object *r = json_object_new_object();
  char buf[64];
  json_object_object_add(r, "kernel_spec", json_object_new_string(c->o->kernel_spec));
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->o->seed);
  json_object_object_add(r, "seed", json_object_new_string(buf));
  json_object_object_add(r, "shard_i", json_object_new_int(c->o->shard_i));
  json_object_object_add(r, "shard_n", json_object_new_int(c->o->shard_n));
  json_object_object_add(r, "families", json_object_new_string(c->o->families));
  json_object_object_add(r, "dtypes", json_object_new_int64(c->o->lim.dtypes));
  json_object_object_add(r, "masks", json_object_new_int64(c->o->lim.masks));
  json_object_object_add(r, "max_t", json_object_new_int64(c->o->lim.max_t));
  json_object_object_add(r, "max_elems", json_object_new_int64(c->o->lim.max_elems));
  json_object_object_add(r, "max_d", json_object_new_int64(c->o->lim.max_d));
  json_object_object_add(r, "no_strided", json_object_new_int(c->o->lim.no_strided));
  json_object_object_add(r, "no_nonfinite", json_object_new_int(c->o->lim.no_nonfinite));
  json_object_object_add(r, "policies", json_object_new_string(c->o->policies));
  if (c->o->precision) json_object_object_add(r, "precision", json_object_new_string(c->o->precision));
  if (c->o->empty_rows) json_object_object_add(r, "empty_rows", json_object_new_string(c->o->empty_rows));
  json_object_object_add(r, "tool_version", json_object_new_string(PACKAGE_VERSION));
  const char *t = json_str(r);
  char p[4096];
  path_of(p, sizeof p, c->o->out_dir, "campaign.json");
  int rc = ac_write_file_atomic(p, t, strlen(t), e);
  json_object_put(r);
  return rc;
}

/* --resume: the campaign's identity (kernel, seed, shard, families, limits) comes from campaign.json. */
static int load_campaign_json(ac_campaign_opts *o, ac_err *e)
{
  char p[4096];
  path_of(p, sizeof p, o->out_dir, "campaign.json");
  json_object *r = json_object_from_file(p), *v;
  if (!r) return ac_err_set(e, "%s: no campaign to resume (missing or unreadable campaign.json)", p);
  static char spec[2048], prec[128];
  if (json_object_object_get_ex(r, "kernel_spec", &v)) {
    snprintf(spec, sizeof spec, "%s", json_object_get_string(v));
    if (!o->kernel_spec) o->kernel_spec = spec;
  }
  if (json_object_object_get_ex(r, "seed", &v)) o->seed = strtoull(json_object_get_string(v), NULL, 10);
  if (json_object_object_get_ex(r, "shard_i", &v)) o->shard_i = json_object_get_int(v);
  if (json_object_object_get_ex(r, "shard_n", &v)) o->shard_n = json_object_get_int(v);
  if (json_object_object_get_ex(r, "families", &v)) snprintf(o->families, sizeof o->families, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(r, "dtypes", &v)) o->lim.dtypes = (uint32_t)json_object_get_int64(v);
  if (json_object_object_get_ex(r, "masks", &v)) o->lim.masks = (uint32_t)json_object_get_int64(v);
  if (json_object_object_get_ex(r, "max_t", &v)) o->lim.max_t = json_object_get_int64(v);
  if (json_object_object_get_ex(r, "max_elems", &v)) o->lim.max_elems = json_object_get_int64(v);
  if (json_object_object_get_ex(r, "max_d", &v)) o->lim.max_d = json_object_get_int64(v);
  if (json_object_object_get_ex(r, "no_strided", &v)) o->lim.no_strided = json_object_get_int(v);
  if (json_object_object_get_ex(r, "no_nonfinite", &v)) o->lim.no_nonfinite = json_object_get_int(v);
  if (!o->policies[0] && json_object_object_get_ex(r, "policies", &v))
    snprintf(o->policies, sizeof o->policies, "%s", json_object_get_string(v));
  static char empty[32];
  if (!o->empty_rows && json_object_object_get_ex(r, "empty_rows", &v)) {
    snprintf(empty, sizeof empty, "%s", json_object_get_string(v));
    o->empty_rows = empty;
  }
  if (!o->precision && json_object_object_get_ex(r, "precision", &v)) {
    snprintf(prec, sizeof prec, "%s", json_object_get_string(v));
    o->precision = prec;
  }
  o->dtypes_given = 1;
  json_object_put(r);
  return 0;
}

/* Exit code from every finding stored in the directory (earlier runs included). */
static int findings_exit(ctx_t *c)
{
  char fd[4096];
  snprintf(fd, sizeof fd, "%s/findings", c->o->out_dir);
  DIR *d = opendir(fd);
  if (!d) return 0;
  int any = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char p[4400];
    snprintf(p, sizeof p, "%s/%s/report.json", fd, de->d_name);
    json_object *r = json_object_from_file(p), *v;
    if (!r) continue;
    ac_verdict_kind k;
    if (json_object_object_get_ex(r, "kind", &v) && ac_verdict_parse(json_object_get_string(v), &k) == 0 &&
        c->x.pol.p[k] == AC_POLICY_FAIL)
      any = 1;
    json_object_put(r);
  }
  closedir(d);
  return any;
}

static pid_t spawn_worker(ctx_t *c, int w)
{
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) worker_main(c, w);
  return pid;
}

int ac_campaign_run(ac_campaign_opts *o)
{
  ac_err e;
  ctx_t c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.log_fd = -1;
  if (!o->out_dir) {
    fprintf(stderr, "attncheck fuzz: --out DIR is required\n");
    return AC_EXIT_USAGE;
  }
  char p[4096];
  path_of(p, sizeof p, o->out_dir, "journal");
  int exists = access(p, F_OK) == 0;
  if (o->resume) {
    if (load_campaign_json(o, &e)) {
      fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
      return AC_EXIT_USAGE;
    }
  } else if (exists) {
    fprintf(stderr, "attncheck fuzz: %s already holds a campaign: add --resume to continue it, or choose another --out\n",
            o->out_dir);
    return AC_EXIT_USAGE;
  }
  if (!o->kernel_spec) {
    fprintf(stderr, "attncheck fuzz: --kernel K is required\n");
    return AC_EXIT_USAGE;
  }
  if (o->jobs < 1 || o->jobs > MAX_JOBS) {
    fprintf(stderr, "attncheck fuzz: --jobs must be 1..%d\n", MAX_JOBS);
    return AC_EXIT_USAGE;
  }
  /* families */
  int nf;
  ac_families(&nf);
  if (o->families[0]) {
    if (ac_family_parse_list(o->families, c.fam, &c.nfam, MAX_FAM, &e)) {
      fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
      return AC_EXIT_USAGE;
    }
  } else {
    c.nfam = nf < MAX_FAM ? nf : MAX_FAM;
    for (int i = 0; i < c.nfam; i++) c.fam[i] = i;
  }
  /* kernel: resolve once here to validate and to probe what it accepts */
  if (setup_kernel(&c, &e)) {
    fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
    return AC_EXIT_USAGE;
  }
  if (!o->dtypes_given) {
    ac_gen_limits probe = o->lim;
    if (c.kernel->kind == AC_KIND_EXEC || c.kernel->kind == AC_KIND_EXEC_PERSISTENT) {
      probe.dtypes = 1u << AC_F32;
      probe.masks = 7;
    } else {
      ac_eval_probe_limits(c.kernel, &probe);
    }
    o->lim.dtypes = probe.dtypes;
    o->lim.masks = probe.masks;
  }
  if (o->lim.max_t <= 0) {
    /* long T: 16384 on the CPU (the oracle on a row sample), 131072 for device kernels */
    int dev = c.kernel->abi && c.kernel->abi->memory == ATTNCHECK_MEM_CUDA;
    o->lim.max_t = dev ? 131072 : 16384;
  }
  c.seed_eff = o->shard_n > 1 ? ac_hash2(o->seed, (uint64_t)o->shard_i) : o->seed;
  if (ac_mkdir_p(o->out_dir, &e)) {
    fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
    ac_kernel_free(c.kernel);
    return AC_EXIT_USAGE;
  }
  char fdir[4096];
  path_of(fdir, sizeof fdir, o->out_dir, "findings");
  ac_mkdir_p(fdir, &e);
  if (o->corpus_dir) snprintf(c.corpus, sizeof c.corpus, "%s", o->corpus_dir);
  else path_of(c.corpus, sizeof c.corpus, o->out_dir, "corpus");
  ac_mkdir_p(c.corpus, &e);
  if (!o->resume && save_campaign_json(&c, &e)) {
    fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
    ac_kernel_free(c.kernel);
    return AC_EXIT_USAGE;
  }
  path_of(p, sizeof p, o->out_dir, "log.jsonl");
  c.log_fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  /* shared state */
  shm_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    fprintf(stderr, "attncheck fuzz: mmap: %s\n", strerror(errno));
    ac_kernel_free(c.kernel);
    return AC_EXIT_INTERNAL;
  }
  memset(sh, 0, sizeof *sh);
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&sh->mu, &ma);
  c.sh = sh;
  if (o->resume) {
    path_of(p, sizeof p, o->out_dir, "journal");
    sh->next = sh->reserved = read_kv_int(p, "next", 0);
    path_of(p, sizeof p, o->out_dir, "stats");
    sh->prev_cases = read_kv_int(p, "cases", 0);
    /* findings already there count for the stats */
    DIR *d = opendir(fdir);
    if (d) {
      struct dirent *de;
      while ((de = readdir(d)))
        if (de->d_name[0] != '.') sh->findings++;
      closedir(d);
    }
  }
  c.t0 = ac_now();
  char kjb[600];
  log_event(&c, "\"event\":\"%s\",\"kernel\":\"%s\",\"seed\":%llu,\"shard\":\"%d/%d\",\"jobs\":%d,\"next_case\":%lld",
            o->resume ? "resume" : "start", jesc(c.kname, kjb, sizeof kjb), (unsigned long long)o->seed, o->shard_i, o->shard_n, o->jobs,
            (long long)sh->next);
  ac_kernel_free(c.kernel);
  c.kernel = NULL;
  int live = o->live < 0 ? (isatty(2) && !o->quiet) : o->live;
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_int;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  interrupted = 0;
  pid_t pids[MAX_JOBS];
  supervisor_pid = getpid();
  for (int w = 0; w < o->jobs; w++) pids[w] = spawn_worker(&c, w);
  double last_stats = 0, stop_at = 0;
  int alive = o->jobs, restarts = 0;
  while (alive > 0) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double el = ac_now() - c.t0;
    if ((o->time_s > 0 && el >= o->time_s) || interrupted) {
      if (!sh->stop) {
        lock(sh);
        sh->stop = 1;
        pthread_mutex_unlock(&sh->mu);
      }
    }
    if (sh->stop && stop_at == 0) stop_at = ac_now();
    /* workers still minimizing or in a long case after the deadline: findings are on disk
     * already and minimization resumes with --resume, so they may be stopped */
    if (stop_at > 0 && ac_now() - stop_at > (interrupted ? 2.0 : 10.0 + (o->time_s > 0 ? 0 : o->timeout_s)))
      for (int w = 0; w < o->jobs; w++)
        if (pids[w] > 0) kill(pids[w], SIGTERM);
    for (int w = 0; w < o->jobs; w++) {
      if (pids[w] <= 0) continue;
      int st;
      pid_t r = waitpid(pids[w], &st, WNOHANG);
      if (r != pids[w]) continue;
      pids[w] = 0;
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        alive--;
        continue;
      }
      if (sh->stop || (WIFEXITED(st) && WEXITSTATUS(st) == 3)) {
        if (WIFEXITED(st) && WEXITSTATUS(st) == 3) sh->any_error = 1;
        alive--;
        continue;
      }
      /* a worker died (a bug in the tool, or out of memory): its case number is spent; restart */
      log_event(&c, "\"event\":\"worker-died\",\"worker\":%d,\"status\":%d", w, st);
      sh->errors++;
      sh->any_error = 1;
      if (++restarts > 20 * o->jobs) {
        alive--;
        continue;
      }
      pids[w] = spawn_worker(&c, w);
    }
    if (ac_now() - last_stats >= o->stats_every) {
      write_stats(&c, "running");
      last_stats = ac_now();
    }
    if (live) live_line(&c);
  }
  if (live) fputc('\n', stderr);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  int complete = !interrupted && !(o->max_cases > 0 && sh->next < o->max_cases && o->time_s <= 0);
  write_stats(&c, interrupted ? "interrupted" : complete ? "done" : "stopped");
  ac_corpus_prune(c.corpus, 64);
  if (ac_report_html(o->out_dir, &e)) fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
  log_event(&c, "\"event\":\"end\",\"cases\":%lld,\"findings\":%lld,\"errors\":%lld", (long long)sh->done,
            (long long)sh->findings, (long long)sh->errors);
  if (sh->journal_error) fprintf(stderr, "attncheck fuzz: cannot write %s/journal: campaign stopped\n", o->out_dir);
  if (!o->quiet) {
    double el = ac_now() - c.t0;
    printf("campaign %s: kernel %s, %lld cases in %.1f s (%.1f cases/s), %lld findings\n", o->out_dir, o->kernel_spec,
           (long long)sh->done, el, el > 0 ? (double)sh->done / el : 0.0, (long long)sh->findings);
    ac_findings_summary(o->out_dir, stdout, 20);
    if (sh->errors)
      printf("%lld cases the tool could not decide (unresolved oracle elements or internal errors): see %s/log.jsonl "
             "and %s/errors/\n", (long long)sh->errors, o->out_dir, o->out_dir);
  }
  int fail = findings_exit(&c);
  int err = sh->any_error || sh->journal_error;
  if (c.log_fd >= 0) close(c.log_fd);
  pthread_mutex_destroy(&sh->mu);
  munmap(sh, sizeof *sh);
  if (fail) return AC_EXIT_FAIL;
  return err ? AC_EXIT_INTERNAL : AC_EXIT_OK;
}
