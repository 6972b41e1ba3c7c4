/* campaign_end.c: the end of a campaign's run: the summary (cases, findings, how many cases were
 * judged and skipped, the top SKIP reasons, a JIT kernel's first runs, the draws discarded), the
 * line saying how to go on after a signal, and the exit code. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "campaign.h"

/* The SKIP reasons of this run, most frequent first: up to max lines. */
static void skip_reasons(const shm_t *sh, FILE *f, int max)
{
  int used[SKIP_REASONS] = {0};
  for (int line = 0; line < max; line++) {
    int best = -1;
    for (int i = 0; i < SKIP_REASONS; i++)
      if (sh->skip_n[i] && !used[i] && (best < 0 || sh->skip_n[i] > sh->skip_n[best])) best = i;
    if (best < 0) break;
    used[best] = 1;
    fprintf(f, "  SKIP x %lld: %s\n", (long long)sh->skip_n[best], sh->skip_why[best]);
  }
  int64_t rest = sh->skip_other;
  for (int i = 0; i < SKIP_REASONS; i++)
    if (sh->skip_n[i] && !used[i]) rest += sh->skip_n[i];
  if (rest) fprintf(f, "  SKIP x %lld: other reasons (log.jsonl with --log-cases)\n", (long long)rest);
}

/* Whether no case of the whole campaign (earlier runs included) was judged. Cases recorded by an
 * older attncheck, which did not mark them, count as judged. */
static int nothing_judged(const shm_t *sh)
{
  return sh->judged + sh->prev_judged == 0 && sh->prev_unmarked == 0;
}

double ac_cp_compile_estimate(const shm_t *sh)
{
  if (!sh->first_runs || !sh->later_runs) return 0;
  double c = sh->first_run_s - (double)sh->first_runs * (sh->later_run_s / (double)sh->later_runs);
  return c > 0 ? c : 0;
}

/* The kernel time of first runs of a JIT key against later ones, and the draws discarded. */
static void draws_and_jit(const ctx_t *c)
{
  const shm_t *sh = c->sh;
  if (sh->first_runs && sh->later_runs)
    printf("kernel time: %lld first runs of a shape %.1f s (a JIT kernel's compilation included), %lld later runs "
           "%.1f s (%.3g ms each): compilation ~%.1f s%s\n",
           (long long)sh->first_runs, sh->first_run_s, (long long)sh->later_runs, sh->later_run_s,
           1e3 * sh->later_run_s / (double)sh->later_runs, ac_cp_compile_estimate(sh),
           c->o->lim.nbuckets ? "" : " (fuzz --shape-buckets N bounds the shapes)");
  if (sh->discarded)
    printf("%lld draws discarded: the kernel does not take them (undeclared shapes or features, its supports()); "
           "drawn again\n",
           (long long)sh->discarded);
}

static void summary(const ctx_t *c, double el)
{
  const shm_t *sh = c->sh;
  char *od = ac_str_escape_dup(c->o->out_dir), *ks = ac_str_escape_dup(c->o->kernel_spec);
  printf("campaign %s: kernel %s, %lld cases in %.1f s (%.1f cases/s), %lld findings; ", od ? od : "?", ks ? ks : "?",
         (long long)sh->done, el, el > 0 ? (double)sh->done / el : 0.0, (long long)sh->findings);
  free(od);
  free(ks);
  if (nothing_judged(sh))
    printf("NO CASE JUDGED, %lld skipped", (long long)sh->skipped);
  else
    printf("%lld judged, %lld skipped", (long long)sh->judged, (long long)sh->skipped);
  if (sh->prev_cases)
    printf(" (with the earlier runs: %lld cases, %lld judged, %lld skipped)", (long long)(sh->prev_cases + sh->done),
           (long long)(sh->prev_judged + sh->judged + sh->prev_unmarked), (long long)(sh->prev_skipped + sh->skipped));
  printf("\n");
  skip_reasons(sh, stdout, 3);
  draws_and_jit(c);
  ac_findings_summary(c->o->out_dir, stdout, 20);
  if (sh->errors) {
    /* the tool's own failures, never the kernel's: the cases kept with their reproducers */
    char *q = ac_str_escape_dup(c->o->out_dir);
    printf("attncheck failed on %lld cases (it could not decide them, or a worker judging them died: a bug in "
           "attncheck, not in the kernel; see %s/log.jsonl), kept in %s/errors/:\n",
           (long long)sh->errors, q, q);
    free(q);
    ac_cp_errors_list(c->o->out_dir, stdout, 10);
  }
}

int ac_cp_finish(ctx_t *c, int sig, int fail)
{
  shm_t *sh = c->sh;
  const ac_campaign_opts *o = c->o;
  if (!o->quiet) summary(c, ac_now() - c->t0);
  fflush(stdout);
  if (sh->stop_reason[0]) fprintf(stderr, "attncheck fuzz: %s\n", sh->stop_reason);
  if (sig) {
    char q[4200];
    fprintf(stderr,
            "attncheck fuzz: stopped by %s after %lld cases; what was stored stays, the unfinished cases run "
            "again with: attncheck fuzz --resume --out %s\n",
            sig == SIGINT    ? "SIGINT"
            : sig == SIGTERM ? "SIGTERM"
                             : "a signal",
            (long long)sh->done, ac_shquote(o->out_dir, q, sizeof q) ? q : o->out_dir);
  }
  /* a finding or record that could not be stored outranks everything: exit 3 */
  int code = sh->storage_error                             ? AC_EXIT_INTERNAL
             : sig                                         ? 128 + sig
             : fail                                        ? AC_EXIT_FAIL
             : sh->any_error                               ? AC_EXIT_INTERNAL
             : nothing_judged(sh) && !o->allow_all_skipped ? AC_EXIT_NOTHING_JUDGED
                                                           : AC_EXIT_OK;
  if (code == AC_EXIT_NOTHING_JUDGED) {
    fprintf(stderr, "attncheck fuzz: no case of campaign %s was judged (%lld skipped", o->out_dir,
            (long long)(sh->prev_skipped + sh->skipped));
    if (sh->skip_n[0]) fprintf(stderr, "; %s", sh->skip_why[0]);
    fprintf(stderr, "): exit %d (--allow-all-skipped: 0)\n", AC_EXIT_NOTHING_JUDGED);
  }
  return code;
}
