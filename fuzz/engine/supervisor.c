/* supervisor.c: a campaign's supervisor: takes the directory's lock, sums up the journal, forks
 * the workers and restarts dead ones, enforces --time, writes stats, the live status line and
 * the end summary, and decides the exit code. */
#include "config.h"
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "campaign.h"
#include "child.h"
#include "exec.h"

/* ---- the supervisor ------------------------------------------------------------------------ */

static volatile sig_atomic_t interrupted = 0; /* the signal that stops the campaign */
static void on_int(int s)
{
  interrupted = s;
}

static void jit_stats(FILE *f, const ctx_t *c)
{
  const shm_t *sh = c->sh;
  fprintf(
      f, "shape_buckets=%d\nfirst_runs=%lld\nfirst_run_s=%.3f\nlater_runs=%lld\nlater_run_s=%.3f\ncompile_s_est=%.3f\n",
      c->o->lim.nbuckets, (long long)sh->first_runs, sh->first_run_s, (long long)sh->later_runs, sh->later_run_s,
      ac_cp_compile_estimate(sh));
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
  ac_cp_lock(sh);
  double el = ac_now() - c->t0;
  char *ks = ac_str_escape_dup(c->o->kernel_spec); /* one key=value line whatever the command holds */
  fprintf(f, "state=%s\nkernel=%s\nseed=%llu\nshard=%d/%d\n", state, ks, (unsigned long long)c->o->seed, c->o->shard_i,
          c->o->shard_n);
  free(ks);
  fprintf(f, "cases=%lld\ncases_this_run=%lld\ncases_per_s=%.1f\n", (long long)(sh->prev_cases + sh->done),
          (long long)sh->done, el > 0 ? (double)sh->done / el : 0.0);
  fprintf(f, "findings=%lld\nfindings_fail=%lld\nrepeat_hits=%lld\n", (long long)sh->findings,
          (long long)sh->findings_fail, (long long)sh->repeats);
  fprintf(f, "defects=%lld\ndefects_fail=%lld\n", (long long)sh->defects, (long long)sh->defects_fail);
  fprintf(f, "last_finding=%s\nlast_finding_at_s=%.1f\n", sh->last_finding[0] ? sh->last_finding : "none",
          sh->last_finding[0] ? sh->last_finding_at : 0.0);
  fprintf(f, "judged=%lld\nskipped=%lld\njudged_this_run=%lld\nskipped_this_run=%lld\nredrawn_this_run=%lld\n",
          (long long)(sh->prev_judged + sh->judged + sh->prev_unmarked), (long long)(sh->prev_skipped + sh->skipped),
          (long long)sh->judged, (long long)sh->skipped, (long long)sh->redrawn);
  fprintf(f, "errors=%lld\nbest_err_over_E=%.4g\nnext_case=%lld\nelapsed_s=%.1f\njobs=%d\n", (long long)sh->errors,
          sh->best_score, (long long)sh->next, el, c->o->jobs);
  fprintf(f, "skipped_by_run=%lld\ndraws_discarded=%lld\n", (long long)sh->skipped_by_run, (long long)sh->discarded);
  if (c->o->lim.kv_formats)   /* a kernel of quantized caches: how many of the serving layouts' cases were quantized */
    fprintf(f,
            "quantized_this_run=%lld\nlayout_this_run=%lld\nquantized_layout_this_run=%lld\n"
            "quantized_layout_share=%.4f\n",
            (long long)sh->quant_cases, (long long)sh->layout_cases, (long long)sh->quant_layout_cases,
            sh->layout_cases ? (double)sh->quant_layout_cases / (double)sh->layout_cases : 0.0);
  jit_stats(f, c);
  fprintf(f, "metamorphic_checks_this_run=%lld\nmetamorphic_worst_diff_over_tol=%.4g\n", (long long)sh->meta_checks,
          sh->meta_worst);
  if (c->x.grad)
    fprintf(f, "grad_checked_this_run=%lld\ngrad_metamorphic_checks_this_run=%lld\ngrad_metamorphic_bit_exact=%lld\n"
               "grad_metamorphic_worst_diff_over_tol=%.4g\n",
            (long long)sh->grad_checked, (long long)sh->gmeta_checks, (long long)sh->gmeta_exact, sh->gmeta_worst);
  for (int i = 0; i < c->nfam; i++)
    fprintf(f, "family.%s=%lld\n", fams[c->fam[i]].name, (long long)sh->per_fam[i]);
  for (int i = 0; i < c->nfam; i++)
    if (sh->per_fam_find[i]) fprintf(f, "findings.%s=%lld\n", fams[c->fam[i]].name, (long long)sh->per_fam_find[i]);
  ac_search_stats(f, c->fam, c->nfam, sh->per_fam, sh->per_fam_impr, c->o->jobs);
  pthread_mutex_unlock(&sh->mu);
  fclose(f);
  char p[4096];
  ac_cp_path_of(p, sizeof p, c->o->out_dir, "stats");
  ac_err e;
  if (ac_write_file_atomic(p, buf, len, &e)) {
    /* a full disk has no room for the new file: overwrite the old one in place (its pages are
     * allocated already), so that the stats stay true */
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && pwrite(fd, buf, len, 0) == (ssize_t)len && ftruncate(fd, (off_t)len) != 0)
      ac_cp_log_error(c, "stats", NULL, -1, NULL);
    if (fd >= 0) close(fd);
  }
  free(buf);
}

/* An event with one or two integer members (k2 NULL: one). */
static void log_event1(ctx_t *c, const char *event, const char *k1, int64_t v1, const char *k2, int64_t v2)
{
  json_object *ev = ac_cp_event(c, event);
  ac_cp_jint(ev, k1, v1);
  if (k2) ac_cp_jint(ev, k2, v2);
  ac_cp_emit(c, ev);
}

/* The "start" (or "resume") event: the campaign's identity and its next case number. */
static void log_start(ctx_t *c, const ac_campaign_opts *o, int64_t next)
{
  json_object *ev = ac_cp_event(c, o->resume ? "resume" : "start");
  ac_cp_jstr(ev, "kernel", c->kname);
  char seed[32], shard[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
  json_object_object_add(ev, "seed", json_object_new_double_s((double)o->seed, seed));
  snprintf(shard, sizeof shard, "%d/%d", o->shard_i, o->shard_n);
  ac_cp_jstr(ev, "shard", shard);
  ac_cp_jint(ev, "jobs", o->jobs);
  ac_cp_jint(ev, "next_case", next);
  ac_cp_emit(c, ev);
}

static void log_end(ctx_t *c, const shm_t *sh)
{
  json_object *ev = ac_cp_event(c, "end");
  ac_cp_jint(ev, "cases", sh->done);
  ac_cp_jint(ev, "findings", sh->findings);
  ac_cp_jint(ev, "errors", sh->errors);
  ac_cp_emit(c, ev);
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
  fprintf(stderr, "\r\033[K%s  %lld cases  %.0f/s  defects %lld  findings %lld (%lld fail)  last: %.40s", prog,
          (long long)(sh->prev_cases + sh->done), el > 0 ? (double)sh->done / el : 0.0, (long long)sh->defects,
          (long long)sh->findings, (long long)sh->findings_fail, sh->last_finding[0] ? sh->last_finding : "-");
  fflush(stderr);
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

/* The defects the directory's findings make (earlier runs'), into the counters and the index. */
static void count_defects(ctx_t *c)
{
  ac_defect_list l;
  ac_err e;
  if (ac_defects_rebuild(c->o->out_dir, &l, &e)) return;
  c->sh->defects = c->sh->defects_fail = 0;
  for (int i = 0; i < l.n; i++) {   /* the confirmed ones */
    c->sh->defects += ac_defect_confirmed(&l.v[i]);
    c->sh->defects_fail += ac_defect_confirmed(&l.v[i]) && c->x.pol.p[l.v[i].fp.mode.kind] == AC_POLICY_FAIL;
  }
  ac_defects_free(&l);
}

/* Sets up DIR for this run under its lock: refuses a second campaign, clears what a killed
 * run left, records the campaign, and sums up the journal into the shared counters. Prints
 * its one line and returns an exit code on failure, 0 on success. */
static int open_campaign_dir(ctx_t *c)
{
  ac_campaign_opts *o = c->o;
  ac_err e;
  char p[4096];
  long prev = 0;
  if (ac_mkdir_p(o->out_dir, &e)) return fprintf(stderr, "attncheck fuzz: %s\n", e.msg), AC_EXIT_USAGE;
  int lr = ac_campaign_lock(o->out_dir, &c->lock_fd, &prev, &e);
  if (lr < 0) return fprintf(stderr, "attncheck fuzz: %s\n", e.msg), AC_EXIT_USAGE;
  if (lr > 0) {
    if (prev > 0) fprintf(stderr, "attncheck fuzz: %s is in use by another campaign (pid %ld)\n", o->out_dir, prev);
    else fprintf(stderr, "attncheck fuzz: %s is in use by another campaign\n", o->out_dir);
    return AC_EXIT_USAGE;
  }
  ac_cp_path_of(p, sizeof p, o->out_dir, "journal");
  if (!o->resume && access(p, F_OK) == 0) {
    fprintf(stderr, "attncheck fuzz: %s already holds a campaign: add --resume to continue it, or choose another --out\n",
            o->out_dir);
    return AC_EXIT_USAGE;
  }
  int cleaned = ac_campaign_clean_tmp(o->out_dir);
  char fdir[4096];
  ac_cp_path_of(fdir, sizeof fdir, o->out_dir, "findings");
  if (ac_mkdir_p(fdir, &e)) return fprintf(stderr, "attncheck fuzz: %s\n", e.msg), AC_EXIT_USAGE;
  if (o->corpus_dir) snprintf(c->corpus, sizeof c->corpus, "%s", o->corpus_dir);
  else ac_cp_path_of(c->corpus, sizeof c->corpus, o->out_dir, "corpus");
  ac_mkdir_p(c->corpus, &e);
  if (!o->resume && ac_cp_save_campaign_json(c, &e)) return fprintf(stderr, "attncheck fuzz: %s\n", e.msg), AC_EXIT_USAGE;
  ac_cp_path_of(p, sizeof p, o->out_dir, "log.jsonl");
  c->log_fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int nf;
  const ac_family *fams = ac_families(&nf);
  const char *names[MAX_FAM];
  for (int i = 0; i < c->nfam; i++) names[i] = fams[c->fam[i]].name;
  ac_journal_state js;
  if (ac_journal_open(o->out_dir, names, c->nfam, &c->x.pol, &js, &c->journal_fd, &e))
    return fprintf(stderr, "attncheck fuzz: %s\n", e.msg), AC_EXIT_INTERNAL;
  shm_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  size_t hb = sizeof(int64_t) * (size_t)(js.nholes ? js.nholes : 1);
  c->holes = mmap(NULL, hb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED || c->holes == MAP_FAILED) {
    ac_journal_state_free(&js);
    return fprintf(stderr, "attncheck fuzz: mmap: %s\n", strerror(errno)), AC_EXIT_INTERNAL;
  }
  memset(sh, 0, sizeof *sh);
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&sh->mu, &ma);
  pthread_mutex_init(&sh->defect_mu, &ma);
  c->sh = sh;
  if (js.nholes) memcpy(c->holes, js.holes, sizeof(int64_t) * (size_t)js.nholes);
  sh->nholes = js.nholes;
  sh->next = sh->reserved = js.next;
  sh->prev_cases = js.cases;
  sh->prev_judged = js.judged;
  sh->prev_skipped = js.skipped;
  sh->prev_unmarked = js.unmarked;
  sh->findings = js.findings;
  sh->findings_fail = js.findings_fail;
  for (int i = 0; i < c->nfam; i++) {
    sh->per_fam[i] = js.per_fam[i];
    sh->per_fam_find[i] = js.per_fam_find[i];
  }
  count_defects(c);
  for (int w = 0; w < MAX_JOBS; w++) sh->worker_case[w] = -1;
  c->t0 = ac_now();
  if (prev > 0) log_event1(c, "lock-taken-over", "from_pid", prev, NULL, 0);
  if (cleaned) log_event1(c, "cleaned", "temporaries", cleaned, NULL, 0);
  if (js.nholes || js.added) log_event1(c, "journal", "cases_to_redo", js.nholes, "findings_recorded", js.added);
  /* how the unfinished numbers were drawn: the workers draw them again exactly */
  if (js.nholes && ac_journal_draws(o->out_dir, js.holes, js.nholes, &c->draws, &c->ndraws, &e))
    ac_cp_log_error(c, "journal", NULL, -1, e.msg);
  ac_journal_state_free(&js);
  return 0;
}

static pid_t spawn_worker(ctx_t *c, int w)
{
  fflush(NULL);
  pid_t pid = ac_child_fork(); /* registered: the supervisor reaps what a dead worker leaves, never a worker */
  if (pid == 0) ac_cp_worker_main(c, w);
  return pid;
}

/* A worker died or could not be forked (st: its wait status, -1: fork failed). The case it was
 * on is spent (it may kill every worker that runs it). 1: restart it; 0: the campaign stops. */
static int worker_lost(ctx_t *c, int w, int st, int *in_a_row, int64_t *done_before)
{
  shm_t *sh = c->sh;
  ac_cp_lock(sh);
  int64_t k = sh->worker_case[w];
  char fam[64];
  snprintf(fam, sizeof fam, "%s", sh->worker_family[w][0] ? sh->worker_family[w] : "?");
  sh->worker_case[w] = -1;
  int64_t nerr = ++sh->errors;
  sh->any_error = 1;
  pthread_mutex_unlock(&sh->mu);
  sh->worker_died = 1;
  json_object *ev = ac_cp_event(c, "worker-died");
  ac_cp_jint(ev, "worker", w);
  ac_cp_jint(ev, "status", st);
  ac_cp_jint(ev, "case", k);
  ac_cp_emit(c, ev);
  if (k >= 0) {
    if (ac_journal_append(c->journal_fd, 0, "c %lld %s x\n", (long long)k, fam)) {
      ac_cp_journal_failed(c, errno);
      return 0;
    }
    int slot = ac_cp_family_slot(c, fam);
    ac_cp_lock(sh);
    sh->done++;
    if (slot >= 0) sh->per_fam[slot]++;
    pthread_mutex_unlock(&sh->mu);
    /* the case that killed it, for whoever investigates the tool */
    char why[80];
    if (WIFSIGNALED(st))
      snprintf(why, sizeof why, "the worker judging it was killed by %s", ac_signal_name(WTERMSIG(st)));
    else
      snprintf(why, sizeof why, "the worker judging it exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (st >= 0 && ac_cp_error_keep(c, nerr)) ac_cp_error_redraw(c, k, "worker-died", why);
  }
  /* deaths with no case finished in between: the workers cannot run at all */
  *in_a_row = sh->done == *done_before ? *in_a_row + 1 : 1;
  *done_before = sh->done;
  if (*in_a_row <= MAX_RESTARTS * c->o->jobs) return 1;
  if (st < 0) ac_cp_stop(c, "cannot start a campaign worker: fork: %s: campaign stopped", strerror(errno));
  else if (WIFSIGNALED(st))
    ac_cp_stop(c, "campaign workers keep dying (%d in a row without a finished case, the last by %s): campaign stopped",
              *in_a_row, ac_signal_name(WTERMSIG(st)));
  else
    ac_cp_stop(c, "campaign workers keep dying (%d in a row without a finished case, the last with status %d): campaign stopped",
              *in_a_row, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

/* A worker that died between its journal record and its counters left them behind the journal:
 * the final stats take the journal's sums. */
static void resum_journal(ctx_t *c)
{
  int nf;
  const ac_family *fams = ac_families(&nf);
  const char *names[MAX_FAM];
  for (int i = 0; i < c->nfam; i++) names[i] = fams[c->fam[i]].name;
  ac_journal_state js;
  int fd;
  ac_err e;
  if (ac_journal_open(c->o->out_dir, names, c->nfam, &c->x.pol, &js, &fd, &e)) return;
  close(fd);
  shm_t *sh = c->sh;
  sh->prev_cases = js.cases - sh->done;
  sh->prev_judged = js.judged - sh->judged;
  sh->prev_skipped = js.skipped - sh->skipped;
  sh->prev_unmarked = js.unmarked;
  sh->findings = js.findings;
  sh->findings_fail = js.findings_fail;
  for (int i = 0; i < c->nfam; i++) {
    sh->per_fam[i] = js.per_fam[i];
    sh->per_fam_find[i] = js.per_fam_find[i];
  }
  ac_journal_state_free(&js);
}

/* Runs the workers until the campaign ends: restarts dead ones, enforces --time, writes stats. */
static void supervise(ctx_t *c, int live)
{
  ac_campaign_opts *o = c->o;
  shm_t *sh = c->sh;
  pid_t pids[MAX_JOBS];
  ac_cp_supervisor_pid = getpid();
  int alive = 0, in_a_row = 0;
  int64_t done_before = 0;
  /* stats say what the journal says from the start (and exist, to be rewritten in place on a full disk) */
  write_stats(c, "running");
  for (int w = 0; w < o->jobs; w++) {
    pids[w] = spawn_worker(c, w);
    if (pids[w] > 0) alive++;
    else if (worker_lost(c, w, -1, &in_a_row, &done_before) && (pids[w] = spawn_worker(c, w)) > 0) alive++;
  }
  double last_stats = 0, stop_at = 0;
  while (alive > 0) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double el = ac_now() - c->t0;
    if (((o->time_s > 0 && el >= o->time_s) || interrupted) && !sh->stop) {
      ac_cp_lock(sh);
      sh->stop = 1;
      pthread_mutex_unlock(&sh->mu);
    }
    if (sh->stop && stop_at == 0) stop_at = ac_now();
    /* workers still minimizing or in a long case after the deadline: findings are on disk
     * already, their case numbers run again and minimization resumes with --resume */
    if (stop_at > 0 && ac_now() - stop_at > (interrupted ? 2.0 : 10.0 + (o->time_s > 0 ? 0 : o->timeout_s)))
      for (int w = 0; w < o->jobs; w++)
        if (pids[w] > 0) kill(pids[w], SIGTERM);
    for (int w = 0; w < o->jobs; w++) {
      if (pids[w] <= 0) continue;
      int st;
      pid_t r = waitpid(pids[w], &st, WNOHANG);
      if (r != pids[w]) continue;
      ac_child_forget(pids[w]);
      ac_child_reap_strays(); /* what its cases left when it died */
      pids[w] = 0;
      alive--;
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
      /* killed (also by the SIGTERM after a stop): it may have stored a finding it did not journal
       * or count; the end takes the journal's sums, reconciled with the finding directories */
      if (WIFSIGNALED(st)) sh->worker_died = 1;
      if (WIFEXITED(st) && WEXITSTATUS(st) == 3) sh->any_error = 1;
      if (sh->stop || (WIFEXITED(st) && WEXITSTATUS(st) == 3)) continue;
      /* a worker died (a bug in the tool, or out of memory): restart it */
      while (pids[w] <= 0 && worker_lost(c, w, pids[w] < 0 ? -1 : st, &in_a_row, &done_before))
        if ((pids[w] = spawn_worker(c, w)) > 0) alive++;
    }
    if (ac_now() - last_stats >= o->stats_every) {
      write_stats(c, "running");
      last_stats = ac_now();
    }
    if (live) live_line(c);
  }
}

/* Drops the families that cannot draw a case the kernel takes (variant features it does not
 * declare; dense cases for a kernel that takes layout cases only): each would only produce
 * SKIP. Named on stderr when the list was given; an error when none is left. */
static int select_families(ctx_t *c, ac_err *e)
{
  int nf, n = 0;
  const ac_family *fams = ac_families(&nf);
  char dropped[512] = "";
  size_t dl = 0;
  for (int i = 0; i < c->nfam; i++) {
    if (ac_family_usable(&fams[c->fam[i]], &c->o->lim)) c->fam[n++] = c->fam[i];
    else if (dl < sizeof dropped) dl += (size_t)snprintf(dropped + dl, sizeof dropped - dl, "%s%s", dl ? "," : "", fams[c->fam[i]].name);
  }
  const char *why = c->o->lim.no_dense ? " (or takes no dense case)" : "";
  if (!n)
    return ac_err_set(e, "kernel %s declares none of the attention variants of families %s%s", c->o->kernel_spec, dropped, why);
  if (dl && c->o->families[0] && !c->o->quiet)
    fprintf(stderr,
            "attncheck fuzz: families %s not drawn: kernel %s does not declare their attention variants or shapes%s\n",
            dropped, c->o->kernel_spec, why);
  c->nfam = n;
  return 0;
}

/* Checks the options, resolves and probes the kernel (dtypes, masks, features) and chooses the
 * families; 0, or the exit code after a line on stderr. */
static int setup_campaign(ctx_t *c, ac_campaign_opts *o)
{
  ac_err e;
  if (!o->out_dir) {
    fprintf(stderr, "attncheck fuzz: --out DIR is required\n");
    return AC_EXIT_USAGE;
  }
  if (o->resume && ac_cp_load_campaign_json(o, &e)) {
    fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
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
    if (ac_family_parse_list(o->families, c->fam, &c->nfam, MAX_FAM, &e)) {
      fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
      return AC_EXIT_USAGE;
    }
  } else {
    c->nfam = nf < MAX_FAM ? nf : MAX_FAM;
    for (int i = 0; i < c->nfam; i++) c->fam[i] = i;
  }
  /* kernel: resolve once here to validate and to probe what it accepts */
  if (ac_cp_setup_kernel(c, &e)) {
    fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
    return AC_EXIT_USAGE;
  }
  if (!o->dtypes_given) {
    ac_gen_limits probe = o->lim;
    if (c->kernel->kind == AC_KIND_EXEC || c->kernel->kind == AC_KIND_EXEC_PERSISTENT) {
      /* what the worker declares, else f32 and every mask */
      if (!ac_exec_declared_limits(c->kernel, o->timeout_s, &probe.dtypes, &probe.masks)) {
        probe.dtypes = 1u << AC_F32;
        probe.masks = 7;
      }
      probe.dtypes &= (1u << AC_NDTYPES) - 1;
      probe.masks &= 7;
    } else {
      ac_eval_probe_limits(c->kernel, &probe);
    }
    o->lim.dtypes = probe.dtypes;
    o->lim.masks = probe.masks;
  }
  if (!o->resume) {
    uint32_t dt, mk;
    if (o->dtypes_given && c->kernel->kind == AC_KIND_EXEC_PERSISTENT)   /* read the worker's declaration */
      ac_exec_declared_limits(c->kernel, o->timeout_s, &dt, &mk);
    ac_eval_probe_features(c->kernel, &o->lim);
    if (o->no_backward) o->lim.backward = 0;
  }
  c->x.grad = c->x.grad && o->lim.backward;
  /* --shape-buckets: the campaign's shapes, drawn from the seed within the final limits (every
   * shard and a --resume draw the same ones) */
  if (o->lim.nbuckets > 0) ac_gen_buckets(&o->lim, o->seed, o->lim.nbuckets);
  if (select_families(c, &e)) {
    fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
    ac_kernel_free(c->kernel);
    return AC_EXIT_USAGE;
  }
  if (o->lim.max_t <= 0) {
    /* long T: 16384 on the CPU (the oracle on a row sample), 131072 for device kernels */
    int dev = c->kernel->abi && c->kernel->abi->memory == ATTNCHECK_MEM_CUDA;
    o->lim.max_t = dev ? 131072 : 16384;
  }
  return 0;
}

int ac_campaign_run(ac_campaign_opts *o)
{
  ac_err e;
  ctx_t c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.log_fd = c.journal_fd = c.lock_fd = -1;
  int src = setup_campaign(&c, o);
  if (src) return src;
  c.seed_eff = o->shard_n > 1 ? ac_hash2(o->seed, (uint64_t)o->shard_i) : o->seed;
  int rc = open_campaign_dir(&c);
  if (rc) {
    ac_campaign_unlock(c.lock_fd);
    if (c.log_fd >= 0) close(c.log_fd);
    if (c.journal_fd >= 0) close(c.journal_fd);
    ac_kernel_free(c.kernel);
    return rc;
  }
  shm_t *sh = c.sh;
  log_start(&c, o, sh->next);
  ac_kernel_free(c.kernel);
  c.kernel = NULL;
  int live = o->live < 0 ? (isatty(2) && !o->quiet) : o->live;
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_int;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  interrupted = 0;
  supervise(&c, live);
  if (live) fputc('\n', stderr);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  int in_flight = 0;
  for (int w = 0; w < o->jobs; w++) in_flight |= sh->worker_case[w] >= 0;
  if (sh->worker_died) resum_journal(&c);
  count_defects(&c);
  int complete = !interrupted && !sh->stop_reason[0] && !in_flight && sh->hole_pos >= sh->nholes &&
                 !(o->max_cases > 0 && sh->next < o->max_cases && o->time_s <= 0);
  write_stats(&c, interrupted ? "interrupted" : complete ? "done" : "stopped");
  ac_cp_campaign_json_counts(&c);
  ac_corpus_prune(c.corpus, 64);
  if (ac_report_html(o->out_dir, &e) && !sh->stop_reason[0]) fprintf(stderr, "attncheck fuzz: %s\n", e.msg);
  log_end(&c, sh);
  rc = ac_cp_finish(&c, interrupted, findings_exit(&c));
  if (c.log_fd >= 0) close(c.log_fd);
  if (c.journal_fd >= 0) close(c.journal_fd);
  ac_campaign_unlock(c.lock_fd);
  pthread_mutex_destroy(&sh->mu);
  pthread_mutex_destroy(&sh->defect_mu);
  munmap(c.holes, sizeof(int64_t) * (size_t)(sh->nholes ? sh->nholes : 1));
  munmap(sh, sizeof *sh);
  free(c.draws);
  return rc;
}

