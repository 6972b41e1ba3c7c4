/* campaign.h: the state a campaign's supervisor and workers share (internal to
 * fuzz/engine/campaign.c, fuzz/engine/campaign_findings.c and fuzz/engine/supervisor.c). */
#ifndef AC_FUZZ_CAMPAIGN_H
#define AC_FUZZ_CAMPAIGN_H
#include <json-c/json.h>
#include <pthread.h>
#include <sys/types.h>
#include "fuzz.h"
#include "journal.h"

#define MAX_FAM 64
#define MAX_JOBS 256
#define RESERVE_BLOCK 32
#define POOL_SIZE 16
#define NEVER_RAN_CASES 8   /* a worker's first cases all failing alike, no result ever: the kernel cannot start */
#define DRAW_TRIES 8        /* draws for one case number, the kernel's refusals discarded */
#define SKIP_REASONS    8   /* distinct SKIP reasons counted in a run (the others: skip_other) */
#define MAX_RESTARTS 5      /* a worker that dies this often in a row stops the campaign */

/* Shared by the supervisor and the worker processes. Its counters are read and written under mu
 * only (no atomics beside it). */
typedef struct {
  pthread_mutex_t mu;
  int64_t next;            /* next local case number */
  int64_t reserved;        /* journaled bound: numbers below it may have been used */
  int64_t done, skipped, errors, prev_cases;
  int64_t judged;                                   /* cases this run judged (neither SKIP nor the tool's failure) */
  int64_t prev_judged, prev_skipped, prev_unmarked; /* the journal's sums of earlier runs */
  int64_t redrawn;                                  /* cases drawn again from their records this run */
  char skip_why[SKIP_REASONS][200];                 /* the SKIP reasons of this run and their counts */
  int64_t skip_n[SKIP_REASONS], skip_other;
  int64_t skipped_by_run;   /* of skipped: refused by the kernel's run() after it saw the case (never findings) */
  int64_t quant_cases, layout_cases, quant_layout_cases;   /* this run's cases with a quantized tensor, the
                                                              varlen and paged ones, and those both */
  int64_t discarded;        /* draws the kernel does not take, drawn again before a case (campaign.c) */
  int64_t first_runs, later_runs;   /* runs of a JIT key (shape, dtype, mask, ...) new to the worker, and repeats */
  double first_run_s, later_run_s;  /* their kernel time: first runs include a JIT kernel's compilation */
  int64_t findings, findings_fail, repeats;
  int64_t defects, defects_fail;   /* the defects the findings make (defects.c), those of kinds with policy fail */
  pthread_mutex_t defect_mu;       /* held while a finding takes a defect's id (ac_cp_assign_defect) */
  int64_t meta_checks;      /* metamorphic comparisons this run, and the largest |diff|/tolerance */
  double meta_worst;
  int64_t grad_checked;                /* cases whose backward was judged (this run) */
  int64_t gmeta_checks, gmeta_exact;   /* the backward's metamorphic comparisons, bit-for-bit ones, and */
  double gmeta_worst;                  /* the largest |diff|/allowed of the budgeted ones */
  int64_t per_fam[MAX_FAM], per_fam_find[MAX_FAM], per_fam_impr[MAX_FAM];
  double best_score;
  char last_finding[256];
  double last_finding_at;
  int stop;
  int any_fail, any_error;
  int journal_error;        /* errno of a reservation that could not be written */
  int storage_error;        /* a finding or journal record could not be written: stop, exit 3 */
  char stop_reason[700];    /* the one line saying why the campaign stopped early (first cause wins) */
  int worker_busy[MAX_JOBS];
  int64_t worker_case[MAX_JOBS];   /* the case number a worker is on (-1: none) and its family */
  char worker_family[MAX_JOBS][64];
  int64_t hole_pos, nholes;        /* numbers a killed run left unevaluated, taken first */
  int worker_died;                 /* a worker died: its counters may lag the journal */
} shm_t;

/* The JIT keys a worker has run (campaign.c): an open-addressed set, full at JIT_KEYS. */
#define JIT_KEYS 65536

typedef struct {
  ac_campaign_opts *o;
  shm_t *sh;
  uint64_t *jit_seen;              /* this worker's JIT keys (0: empty slot) */
  int jit_n;
  uint64_t seed_eff;
  int fam[MAX_FAM], nfam;
  double t0;
  char corpus[4096];
  ac_kernel *kernel;
  ac_eval_ctx x;
  ac_pool pool;
  ac_search search;
  const char *kname;
  int log_fd;
  int journal_fd, lock_fd;
  int64_t *holes;                  /* shared mapping, sh->nholes entries */
  ac_draw_rec *draws;              /* the journal's records of the holes and their ancestors, by k */
  int64_t ndraws;
  ac_defect_env *denv;             /* this worker's assignments to defects (allocated at the first) */
} ctx_t;

/* campaign.c: shared helpers, case numbers, the worker */
void ac_cp_lock(shm_t *sh);
void ac_cp_path_of(char *buf, size_t n, const char *dir, const char *name);
/* log.jsonl, one JSON object a line, built with json-c: ac_cp_event starts an event (t, pid,
 * event), the ac_cp_j* helpers add members (ac_cp_jnum: printed with fmt), ac_cp_emit writes
 * it in one write and frees it. ac_cp_log_error: an "error" event (sig NULL, gk < 0, msg NULL:
 * left out). */
json_object *ac_cp_event(const ctx_t *c, const char *event);
void ac_cp_jnum(json_object *o, const char *key, const char *fmt, double v);
void ac_cp_jint(json_object *o, const char *key, int64_t v);
void ac_cp_jstr(json_object *o, const char *key, const char *v);
void ac_cp_emit(ctx_t *c, json_object *ev);
void ac_cp_log_error(ctx_t *c, const char *what, const char *sig, int64_t gk, const char *msg);
/* Stops the campaign with a reason (the first one is kept and printed at the end). */
void ac_cp_stop(ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A journal record could not be written (err: errno): stop, exit 3. */
void ac_cp_journal_failed(ctx_t *c, int err);
int ac_cp_family_slot(ctx_t *c, const char *name);
/* Resolves the kernel and the evaluation context from the options. */
int ac_cp_setup_kernel(ctx_t *c, ac_err *e);
/* campaign.json (campaign_json.c): written at a campaign's start; --resume reads the identity back
 * (options the command line gave keep their values where the field says so). */
int ac_cp_save_campaign_json(ctx_t *c, ac_err *e);
int ac_cp_load_campaign_json(ac_campaign_opts *o, ac_err *e);
/* The worker process: never returns. */
void ac_cp_worker_main(ctx_t *c, int w) __attribute__((noreturn));
extern pid_t ac_cp_supervisor_pid;

/* relabel.c: labels from the whole case. A finding judged on a row sample (ac_fuzz_oracle_rows)
 * without FAIL that would be stored as SUSPECT, MASKED-LEAK or WEAK-CLASS under a signature not
 * stored yet is judged again on all its rows first, so that its label is what `check` says; a case
 * whose oracle on every row would take more than RELABEL_MAX_WORK multiply-adds (rows x keys x
 * (dk + dv)) is minimized first and its minimized form judged on all rows instead. */
#define RELABEL_MAX_WORK 1073741824.0
typedef struct {
  ac_eval full;          /* the judgement on all rows (of cs, or of mn) */
  ac_case mn;            /* the minimized form, when have_mn */
  int have_mn, evals;    /* its minimization's evaluations and time */
  double min_s;
  char label[200];       /* where the stored label comes from ("all rows", ...): report.json "label_rows" */
} ac_relabel;
/* The evaluation whose kinds label the findings of cs (ev itself, or rl->full). */
const ac_eval *ac_cp_relabel(ctx_t *c, const ac_case *cs, const ac_eval *ev, const char *family, ac_relabel *rl);
void ac_relabel_free(ac_relabel *rl);

/* redraw.c: cases drawn again from their journal records */
/* The fresh draw d records (d->k, d->attempt) of family f. 0 or -1. */
int ac_cp_fresh(ctx_t *c, const ac_family *f, const ac_draw_rec *d, ac_case *cs, ac_err *e);
/* The mutation d records (d->k, d->sigma, d->family, d->attempt) of parent: its random stream is a
 * function of the seed, the case number and the try alone. 0 or -1. */
int ac_cp_mutant(ctx_t *c, const ac_case *parent, const ac_draw_rec *d, ac_case *cs, char *desc, size_t nd, ac_err *e);
/* Case k drawn again from c->draws, checked against the recorded hashes: 1 (cs and *d set), 0 k
 * has no record (draw it anew), -1 it cannot be drawn as it was (message in e). */
int ac_cp_redraw(ctx_t *c, int64_t k, ac_case *cs, ac_draw_rec *d, char *desc, size_t nd, ac_err *e);
/* The corpus cases in the pool get DIR/seeds/HASH.npz, which their children's records name;
 * one that cannot be kept leaves the pool. */
void ac_cp_keep_seeds(ctx_t *c);

/* campaign_end.c: the summary, the line after a signal (sig: SIGINT, SIGTERM or 0) and the exit
 * code (fail: a finding with policy fail is in the directory). */
int ac_cp_finish(ctx_t *c, int sig, int fail);
/* Kernel time of first runs of a JIT key against later ones: the compilation a JIT kernel spends
 * is the first runs' time less what as many later runs take (0: not measured). */
double ac_cp_compile_estimate(const shm_t *sh);

/* errors_dir.c: DIR/errors/, the cases the tool failed on. ac_cp_error_keep: whether the nerr-th
 * such case of this run is kept (the first few). ac_cp_error_store: cs as errors/case-GK.npz with
 * errors/case-GK.sh, its one-line reproducer (what: "eval", "worker-died"; msg: why). 0 or -1.
 * ac_cp_error_redraw (the supervisor): case k, on which a worker died, drawn again from its journal
 * record in a forked child and stored so (nothing when errors/ holds it already).
 * ac_cp_errors_list: up to max of errors/'s cases with their reproducers, a line each. */
int ac_cp_error_keep(ctx_t *c, int64_t nerr);
int ac_cp_error_store(ctx_t *c, const ac_case *cs, int64_t gk, const char *what, const char *msg, ac_err *e);
void ac_cp_error_redraw(ctx_t *c, int64_t k, const char *what, const char *msg);
void ac_cp_errors_list(const char *dir, FILE *f, int max);

/* campaign_findings.c */
/* The signature of kind k of evaluation ev of case lc (family, the worst row's position class);
 * returns the position class. */
const char *ac_cp_signature(ctx_t *c, const ac_case *lc, const ac_eval *ev, int k, const char *family, char *sig,
                            size_t n);
/* Minimizes cs keeping kind and its failure mode (hint: b, h, i, d of its worst element) into mn. 0 or -1. */
int ac_cp_minimize_case(ctx_t *c, const ac_case *cs, ac_verdict_kind kind, const int64_t hint[4], ac_case *mn,
                        int *evals);
/* Stores the findings of one case; -1 when one could not be stored: the campaign then stops
 * and the case number stays unevaluated in the journal, so that --resume finds it again. */
int ac_cp_record_findings(ctx_t *c, const ac_case *cs, const ac_eval *ev, const char *family, int64_t gk);
/* Minimizes finding sig (case.npz + report.json), stores minimized.npz beside it, then assigns it to
 * a defect. */
void ac_cp_minimize_finding(ctx_t *c, const char *sig);
/* Finding sig to its defect (ac_defect_assign on the worker's kernel; known: its fingerprint, not
 * judged again, or NULL): the counters, a "defect" event. */
void ac_cp_assign_defect(ctx_t *c, const char *sig, const ac_defect_fp *known);
/* The findings of DIR a killed run stored without a defect (worker w's share): assigned. */
void ac_cp_pending_defects(ctx_t *c, int w);
/* campaign.json's counts after a run: findings, defects and those with policy fail. */
void ac_cp_campaign_json_counts(ctx_t *c);

static inline const char *json_str(json_object *o) { return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY); }

#endif
