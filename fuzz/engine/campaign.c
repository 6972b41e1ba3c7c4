/* campaign.c: a fuzzing campaign's workers. The supervisor (supervisor.c) forks J workers that
 * share a case counter in shared memory; case numbers are reserved in blocks recorded durably in
 * the journal before use, and each evaluated case is recorded there once its findings are
 * stored, so a campaign killed at any point resumes without losing or repeating a case. Each
 * worker: stratified sweep over the families, then evolutionary refinement of its elite pool
 * (maximizing err/E); findings stored atomically as found (campaign_findings.c), then minimized. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "exec.h"
#include "campaign.h"

void ac_campaign_opts_init(ac_campaign_opts *o)
{
  memset(o, 0, sizeof *o);
  o->jobs = 1;
  o->seed = 1;
  o->shard_n = 1;
  ac_gen_limits_init(&o->lim);
  o->timeout_s = 60;
  o->minimize = 1;
  o->min_seconds = 0;   /* bounded by judgements, not by the clock */
  o->min_evals = 200;
  o->live = -1;
  o->repeat_every = 16;
  o->stats_every = 2.0;
}

void ac_cp_lock(shm_t *sh)
{
  if (pthread_mutex_lock(&sh->mu) == EOWNERDEAD) pthread_mutex_consistent(&sh->mu);
}

/* ---- small file helpers ------------------------------------------------------------ */

void ac_cp_path_of(char *buf, size_t n, const char *dir, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

json_object *ac_cp_event(const ctx_t *c, const char *event)
{
  json_object *o = json_object_new_object();
  char t[32];
  snprintf(t, sizeof t, "%.3f", ac_now() - c->t0);
  json_object_object_add(o, "t", json_object_new_double_s(atof(t), t));
  json_object_object_add(o, "pid", json_object_new_int64((int64_t)getpid()));
  json_object_object_add(o, "event", json_object_new_string(event));
  return o;
}

void ac_cp_jnum(json_object *o, const char *key, const char *fmt, double v)
{
  char t[40];
  snprintf(t, sizeof t, fmt, v);
  json_object_object_add(o, key, isfinite(v) ? json_object_new_double_s(v, t) : json_object_new_string(t));
}

void ac_cp_jint(json_object *o, const char *key, int64_t v) { json_object_object_add(o, key, json_object_new_int64(v)); }

void ac_cp_jstr(json_object *o, const char *key, const char *v) { json_object_object_add(o, key, json_object_new_string(v)); }

void ac_cp_emit(ctx_t *c, json_object *ev)
{
  if (c->log_fd >= 0) {
    size_t n;
    const char *t = json_object_to_json_string_length(ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    char *line = ac_xmalloc(n + 1);
    memcpy(line, t, n);
    line[n] = '\n';
    ssize_t w = write(c->log_fd, line, n + 1);   /* O_APPEND: one write per line */
    (void)w;
    free(line);
  }
  json_object_put(ev);
}

void ac_cp_log_error(ctx_t *c, const char *what, const char *sig, int64_t gk, const char *msg)
{
  json_object *ev = ac_cp_event(c, "error");
  ac_cp_jstr(ev, "what", what);
  if (sig) ac_cp_jstr(ev, "sig", sig);
  if (gk >= 0) ac_cp_jint(ev, "case", gk);
  if (msg) ac_cp_jstr(ev, "msg", msg);
  ac_cp_emit(c, ev);
}

/* Stops the campaign with reason (the first one is kept and printed at the end). */
void ac_cp_stop(ctx_t *c, const char *fmt, ...)
{
  ac_cp_lock(c->sh);
  if (!c->sh->stop_reason[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->sh->stop_reason, sizeof c->sh->stop_reason, fmt, ap);
    va_end(ap);
  }
  c->sh->stop = 1;
  pthread_mutex_unlock(&c->sh->mu);
}

void ac_cp_journal_failed(ctx_t *c, int err)
{
  c->sh->storage_error = 1;
  ac_cp_stop(c, "cannot write %s/journal: %s: campaign stopped; the cases it could not record run again with --resume",
            c->o->out_dir, strerror(err));
}

/* Take the next case number for worker w: first those a killed run left, then new ones,
 * reserved in the journal in blocks before use; -1 when the campaign is over. */
static int64_t take_case(ctx_t *c, int w)
{
  shm_t *sh = c->sh;
  ac_cp_lock(sh);
  int64_t k = -1;
  while (!sh->stop && sh->hole_pos < sh->nholes && k < 0) {
    int64_t h = c->holes[sh->hole_pos++];
    if (c->o->max_cases <= 0 || h < c->o->max_cases) k = h;
  }
  if (k < 0 && !sh->stop && !sh->journal_error) {
    if (c->o->max_cases > 0 && sh->next >= c->o->max_cases) {
      sh->stop = 1;
    } else {
      if (sh->next >= sh->reserved) {
        int64_t r = sh->next + RESERVE_BLOCK;
        if (c->o->max_cases > 0 && r > c->o->max_cases) r = c->o->max_cases;
        if (ac_journal_append(c->journal_fd, 1, "next=%lld\n", (long long)r) == 0) sh->reserved = r;
        else sh->journal_error = errno ? errno : EIO;
      }
      if (sh->next < sh->reserved) k = sh->next++;
    }
  }
  sh->worker_case[w] = k;
  sh->worker_family[w][0] = 0;
  int jerr = sh->journal_error;
  pthread_mutex_unlock(&sh->mu);
  if (k < 0 && jerr) ac_cp_journal_failed(c, jerr);
  return k;
}

/* ---- the worker -------------------------------------------------------------------------- */

int ac_cp_family_slot(ctx_t *c, const char *name)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  for (int i = 0; i < c->nfam; i++)
    if (!strcmp(f[c->fam[i]].name, name)) return i;
  return -1;
}

int ac_cp_setup_kernel(ctx_t *c, ac_err *e)
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
  c->x.grad = c->x.grad && c->o->lim.backward;
  c->x.run.timeout_s = c->o->timeout_s;
  if (c->o->empty_rows) {   /* given: it overrides what the kernel declares, as for check and suite */
    if (ac_empty_parse(c->o->empty_rows, &c->x.cmp.empty))
      return ac_err_set(e, "bad empty_rows '%s' (zero|nan|skip|mean-v)", c->o->empty_rows);
    c->x.cmp.empty_set = 1;
  }
  if (c->o->alibi_lse && ac_alibi_lse_parse(c->o->alibi_lse, &c->x.run.alibi_lse))
    return ac_err_set(e, "bad alibi_lse '%s' (abi|fa2)", c->o->alibi_lse);
  return ac_policies_set_list(&c->x.pol, c->o->policies, e);
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
  for (int i = 0; i < n && !c->sh->stop; i++) ac_cp_minimize_finding(c, names[i]);
  free(names);
}

pid_t ac_cp_supervisor_pid;

/* One more case the tool could not decide (any: the campaign exits 3); the count so far. The
 * counters of shm_t are read and written under its mutex only. */
static int64_t count_error(shm_t *sh, int any)
{
  ac_cp_lock(sh);
  int64_t n = ++sh->errors;
  if (any) sh->any_error = 1;
  pthread_mutex_unlock(&sh->mu);
  return n;
}

/* Counts a case with a quantized tensor, a varlen or paged one, and one both (stats). */
static void count_quant(shm_t *sh, const ac_case *cs)
{
  int q = ac_problem_quantized(&cs->p), lay = (cs->p.f.used & AC_FEAT_LAYOUTS) != 0;
  ac_cp_lock(sh);
  sh->quant_cases += q;
  sh->layout_cases += lay;
  sh->quant_layout_cases += q && lay;
  pthread_mutex_unlock(&sh->mu);
}

/* Counts one SKIP of this run under its reason (under sh->mu). */
static void count_skip(shm_t *sh, const char *why)
{
  for (int i = 0; i < SKIP_REASONS; i++) {
    if (!sh->skip_why[i][0]) snprintf(sh->skip_why[i], sizeof sh->skip_why[i], "%.199s", why);
    if (!strncmp(sh->skip_why[i], why, sizeof sh->skip_why[i] - 1)) {
      sh->skip_n[i]++;
      return;
    }
  }
  sh->skip_other++;
}

/* Case number k of worker w is evaluated (ev NULL: it could not be generated): its journal
 * record (j judged, s SKIP, x neither), then the counters of the stats. -1 when the record
 * cannot be written. */
static int case_done(ctx_t *c, int w, int64_t k, const char *family, const ac_eval *ev)
{
  shm_t *sh = c->sh;
  /* no longer the supervisor's to record if this worker dies (a record twice would count twice) */
  ac_cp_lock(sh);
  sh->worker_case[w] = -1;
  pthread_mutex_unlock(&sh->mu);
  int skip = ev && (ev->kinds & (1u << AC_V_SKIP)), judged = ev && !skip && !(ev->kinds & (1u << AC_V_ERROR));
  if (ac_journal_append(c->journal_fd, 0, "c %lld %s %c\n", (long long)k, family, judged ? 'j' : skip ? 's' : 'x')) {
    ac_cp_journal_failed(c, errno);
    return -1;
  }
  int slot = ac_cp_family_slot(c, family);
  int improved = ev && slot >= 0 ? ac_search_note(&c->search, slot, ev->score) : 0;
  ac_cp_lock(sh);
  sh->done++;
  if (slot >= 0) sh->per_fam[slot]++;
  if (slot >= 0) sh->per_fam_impr[slot] += improved;
  if (skip) {
    sh->skipped++;
    if (ev->refused_by_run) sh->skipped_by_run++;
    count_skip(sh, ev->rep.note[0] ? ev->rep.note : "no reason given");
  }
  sh->judged += judged;
  if (ev && ev->meta.checked) {
    sh->meta_checks++;
    if (ev->meta.worst_ratio > sh->meta_worst) sh->meta_worst = ev->meta.worst_ratio;
  }
  if (ev && ev->grad_checked) sh->grad_checked++;
  if (ev && ev->gmeta.checked) {
    sh->gmeta_checks++;
    sh->gmeta_exact += ev->gmeta.exact;
    if (!ev->gmeta.exact && ev->gmeta.worst_ratio > sh->gmeta_worst) sh->gmeta_worst = ev->gmeta.worst_ratio;
  }
  if (ev && ev->score > sh->best_score && ev->score < 1e299) sh->best_score = ev->score;
  pthread_mutex_unlock(&sh->mu);
  return 0;
}

/* Whether the kernel has ever returned a result in this worker; *streak counts the cases in a
 * row that ended alike (same run status and message) without one. A worker whose first
 * NEVER_RAN_CASES cases all failed alike has a kernel that cannot start (a missing command, a
 * worker that exits at once): 1 then, and the campaign stops; a kernel that ran once and then
 * crashes is only producing CRASH findings. */
typedef struct {
  int ran, streak;
  ac_run_status status;
  char msg[512];
} start_watch;

static int never_started(start_watch *sw, int erc, const ac_eval *ev, const char *emsg)
{
  if (erc == 0 && ev->status == AC_RUN_OK) sw->ran = 1;
  if (sw->ran || ev->status == AC_RUN_UNSUPPORTED || ev->status == AC_RUN_TIMEOUT) return 0;
  const char *msg = erc ? emsg : ev->rep.note;
  if (sw->streak > 0 && ev->status == sw->status && !strcmp(msg, sw->msg)) {
    sw->streak++;
  } else {
    sw->streak = 1;
    sw->status = ev->status;
    snprintf(sw->msg, sizeof sw->msg, "%s", msg);
  }
  return sw->streak >= NEVER_RAN_CASES;
}

/* What a JIT-compiled kernel compiles one program for: the shape, dtypes, mask, scale, variants
 * and layout of the case (never 0). */
static uint64_t jit_key(const ac_case *cs)
{
  const ac_problem *p = &cs->p;
  const int64_t f[] = {p->batch, p->heads, p->kv_heads, p->tq, p->tk, p->dk, p->dv, p->mask, (int64_t)p->f.used};
  uint64_t h = ac_hash2(0x6a6974ull, (uint64_t)p->dtype);
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) h = ac_hash2(h, (uint64_t)f[i]);
  for (const char *t = "qkvo"; *t; t++) h = ac_hash2(h, (uint64_t)ac_tensor_dtype(p, *t));
  uint64_t sb;
  double s = ac_problem_scale(p);
  memcpy(&sb, &s, sizeof sb);
  h = ac_hash2(h, sb);
  for (int i = 0; i < 4; i++)
    h = ac_hash2(h, (uint64_t)p->q_stride[i] ^ (uint64_t)p->k_stride[i] << 16 ^ (uint64_t)p->o_stride[i] << 32);
  return h ? h : 1;
}

/* The kernel time of a case that ran: a first run of its JIT key in this worker (compilation
 * included for a JIT kernel) or a later one. When the set is full every run counts as later. */
static void jit_note(ctx_t *c, const ac_case *cs, const ac_eval *ev)
{
  if (ev->status != AC_RUN_OK) return;
  if (!c->jit_seen) c->jit_seen = ac_xcalloc(JIT_KEYS, sizeof *c->jit_seen);
  uint64_t k = jit_key(cs);
  size_t i = (size_t)(k % JIT_KEYS);
  while (c->jit_seen[i] && c->jit_seen[i] != k) i = (i + 1) % JIT_KEYS;
  int first = !c->jit_seen[i] && c->jit_n < JIT_KEYS / 2;
  if (first) c->jit_seen[i] = k, c->jit_n++;
  ac_cp_lock(c->sh);
  if (first)
    c->sh->first_runs++, c->sh->first_run_s += ev->kernel_s;
  else
    c->sh->later_runs++, c->sh->later_run_s += ev->kernel_s;
  pthread_mutex_unlock(&c->sh->mu);
}

/* --log-cases: one "case" event (desc: the mutation, "" for a family's own case). */
static void log_case(ctx_t *c, int64_t gk, const char *family, const ac_eval *ev, const char *desc)
{
  json_object *je = ac_cp_event(c, "case");
  ac_cp_jint(je, "case", gk);
  ac_cp_jstr(je, "family", family);
  ac_cp_jint(je, "kinds", ev->kinds);
  ac_cp_jnum(je, "err_e", "%.4g", ev->score);
  ac_cp_jnum(je, "err_w", "%.4g", ev->err_w);
  if (desc[0]) ac_cp_jstr(je, "mutation", desc);
  ac_cp_emit(c, je);
}

/* Case number k (global gk) of a worker: a family's case during the sweep (a function of the
 * seed and gk), else a mutation of a pool member (*parent); *d: its journal record. A draw the
 * kernel does not take (its supports() refuses it: an undeclared shape or feature) is discarded
 * and drawn again from the stream of the next try (d->attempt), up to DRAW_TRIES draws (the
 * last one is kept); *discarded counts them. 0 or -1. */
static int draw_case(ctx_t *c, int64_t k, ac_rng *r, ac_case *cs, ac_draw_rec *d, char *desc, size_t nd,
                     ac_elite **parent, int *discarded, ac_err *e)
{
  int nf, fslot = 0;
  const ac_family *fams = ac_families(&nf);
  memset(d, 0, sizeof *d);
  d->k = k;
  d->parent = -1;
  *parent = ac_search_next(&c->search, &c->pool, k, r, &fslot);
  const ac_family *f = *parent ? NULL : &fams[c->fam[fslot]];
  if (f) {
    snprintf(d->family, sizeof d->family, "%s", f->name);
    d->how = 'f';
  } else {
    snprintf(d->family, sizeof d->family, "%s", (*parent)->family);
    d->how = (*parent)->from >= 0 ? 'm' : 's';
    d->parent = (*parent)->from;
    d->seed = (*parent)->hash;
    d->sigma = (*parent)->sigma;
  }
  *discarded = 0;
  for (d->attempt = 0;; d->attempt++) {
    char why[256];
    if (f ? ac_cp_fresh(c, f, d, cs, e) : ac_cp_mutant(c, &(*parent)->c, d, cs, desc, nd, e)) return -1;
    if (d->attempt == DRAW_TRIES - 1 || ac_kernel_supports(c->kernel, &cs->p, why, sizeof why)) break;
    ac_case_free(cs);
    ++*discarded;
  }
  d->hash = ac_case_hash(cs);
  return 0;
}

/* Case k drawn again from its record when it has one (a number an earlier run drew but did not
 * finish); 1 when cs is that case. A record that does not give the same case again is said on
 * stderr and in the log, and the number takes a new draw. */
static int redraw_case(ctx_t *c, int64_t k, ac_case *cs, ac_draw_rec *d, char *desc, size_t nd)
{
  if (!c->ndraws) return 0;
  ac_err e;
  int rc = ac_cp_redraw(c, k, cs, d, desc, nd, &e);
  int64_t gk = k * c->o->shard_n + c->o->shard_i;
  json_object *ev = ac_cp_event(c, "redrawn");
  ac_cp_jint(ev, "case", gk);
  json_object_object_add(ev, "exact", json_object_new_boolean(rc > 0));
  if (rc < 0) ac_cp_jstr(ev, "msg", e.msg);
  if (rc)
    ac_cp_emit(c, ev);
  else
    json_object_put(ev);
  if (rc < 0)
    fprintf(stderr, "attncheck fuzz: case %lld cannot be drawn again as it was: %s; a new draw takes its number\n",
            (long long)gk, e.msg);
  if (rc > 0) {
    ac_cp_lock(c->sh);
    c->sh->redrawn++;
    pthread_mutex_unlock(&c->sh->mu);
  }
  return rc > 0;
}

void ac_cp_worker_main(ctx_t *c, int w)
{
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
  /* a supervisor killed with SIGKILL takes its workers with it: nothing may go on taking case
   * numbers behind a later --resume */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != ac_cp_supervisor_pid) _exit(0);
  /* the directory lock belongs to the supervisor alone: it goes when the supervisor goes */
  if (c->lock_fd >= 0) close(c->lock_fd);
  ac_err e;
  if (ac_cp_setup_kernel(c, &e)) {
    ac_cp_log_error(c, "kernel", NULL, -1, e.msg);
    ac_cp_stop(c, "a worker cannot set up the kernel: %s: campaign stopped", e.msg);
    _exit(3);
  }
  ac_pool_init(&c->pool, POOL_SIZE);
  int from_corpus = ac_corpus_load(c->corpus, &c->pool, &c->o->lim, POOL_SIZE);
  if (from_corpus) {
    json_object *ev = ac_cp_event(c, "corpus");
    ac_cp_jint(ev, "worker", w);
    ac_cp_jint(ev, "loaded", from_corpus);
    ac_cp_emit(c, ev);
  }
  ac_cp_keep_seeds(c); /* before any child of a corpus case is drawn */
  if (c->o->minimize) pending_minimizations(c, w);
  ac_cp_pending_defects(c, w);
  /* a pool seeded from the corpus starts refining at once; a fresh one sweeps first */
  int64_t sweep_n = from_corpus ? 0 : 4 * c->nfam > 100 ? 4 * c->nfam : 100;
  ac_search_init(&c->search, c->fam, c->nfam, sweep_n);
  double local_best = 0;
  start_watch sw = {0};
  int status = 0;
  for (;;) {
    const char *dead = ac_kernel_unusable(c->kernel);
    if (dead) {
      /* an exec-persistent worker that cannot be started or keeps ending: no case can run */
      ac_cp_log_error(c, "kernel", NULL, -1, dead);
      fprintf(stderr, "attncheck fuzz: kernel %s: %s; campaign stopped\n", c->kernel->name, dead);
      ac_kernel_free(c->kernel);
      _exit(3);
    }
    int64_t k = take_case(c, w);
    if (k < 0) break;
    c->sh->worker_busy[w] = 1;
    int64_t gk = k * c->o->shard_n + c->o->shard_i;
    ac_rng r;
    ac_rng_init(&r, ac_hash2(c->seed_eff, 0x73656172636831ULL), (uint64_t)gk);
    ac_case cs;
    ac_draw_rec d;
    char desc[256] = "";
    ac_elite *parent = NULL;
    int rc = 0;
    if (!redraw_case(c, k, &cs, &d, desc, sizeof desc)) {
      int discarded = 0;
      rc = draw_case(c, k, &r, &cs, &d, desc, sizeof desc, &parent, &discarded, &e);
      if (discarded) {
        ac_cp_lock(c->sh);
        c->sh->discarded += discarded;
        pthread_mutex_unlock(&c->sh->mu);
      }
      char line[400];
      /* the draw is recorded before the case runs: --resume draws an unfinished number again */
      if (rc == 0 && (ac_draw_format(&d, line, sizeof line) < 0 || ac_journal_append(c->journal_fd, 0, "%s", line))) {
        ac_cp_journal_failed(c, errno ? errno : ENAMETOOLONG);
        ac_case_free(&cs);
        status = 3;
        break;
      }
    }
    const char *family = d.family;
    snprintf(c->sh->worker_family[w], sizeof c->sh->worker_family[w], "%s", family);
    if (rc) {
      count_error(c->sh, 0);
      ac_cp_log_error(c, "generate", NULL, gk, e.msg);
      c->sh->worker_busy[w] = 0;
      if (case_done(c, w, k, family, NULL)) {
        status = 3;
        break;
      }
      continue;
    }
    ac_eval ev;
    int repeat = c->o->repeat_every > 0 && (gk % c->o->repeat_every) == c->o->repeat_every - 1;
    int erc = ac_eval_case(&c->x, &cs, repeat, &ev, &e);
    if (erc || (ev.kinds & (1u << AC_V_ERROR))) {
      /* the tool could not decide this case (e.g. an unresolved oracle element): exit 3 */
      int64_t nerr = count_error(c->sh, 1);
      /* keep the first few such cases, with their reproducers, for whoever investigates the tool */
      ac_err ee;
      if (ac_cp_error_keep(c, nerr) && ac_cp_error_store(c, &cs, gk, "eval", erc ? e.msg : ev.rep.note, &ee))
        ac_cp_log_error(c, "keep-error", NULL, gk, ee.msg);
      ac_cp_log_error(c, "eval", NULL, gk, erc ? e.msg : ev.rep.note);
    }
    count_quant(c->sh, &cs);
    int never = never_started(&sw, erc, &ev, e.msg);
    if (!erc) jit_note(c, &cs, &ev);
    /* the case number is spent only once its findings are stored and its record is written */
    if ((ev.kept && ac_cp_record_findings(c, &cs, &ev, family, gk)) || case_done(c, w, k, family, &ev)) {
      ac_case_free(&cs);
      status = 3;
      break;
    }
    if (c->o->log_cases) log_case(c, gk, family, &ev, desc);
    if (never) {
      char msg[600];
      snprintf(msg, sizeof msg, "%s", sw.msg);
      ac_cp_stop(c, "the kernel never returned a result: its first %d cases all ended %s: %s; campaign stopped (check --kernel)",
                NEVER_RAN_CASES, ac_run_status_name(sw.status), msg);
    }
    /* the search: children that beat their parent join the pool; parents that stop improving
     * take smaller steps */
    int clean = !ev.any_fail && !(ev.kinds & ((1u << AC_V_SKIP) | (1u << AC_V_ERROR) | (1u << AC_V_OUT_OF_DOMAIN)));
    if (parent) {
      if (ev.score > parent->score) {
        if (clean) ac_pool_offer_from(&c->pool, &cs, family, ev.score, k);
      } else {
        parent->tries++;
        parent->sigma *= 0.7;
        if (parent->sigma < 1e-6) parent->sigma = 1e-6;
      }
    } else if (clean) {
      ac_pool_offer_from(&c->pool, &cs, family, ev.score, k);
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
  free(c->denv);
  _exit(status);
}

