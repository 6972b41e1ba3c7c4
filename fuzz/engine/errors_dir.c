/* errors_dir.c: DIR/errors/, the cases attncheck itself failed on (docs/fuzzing.md): a case the tool
 * could not decide (an unresolved oracle element, an internal error), stored by the worker that
 * evaluated it, and the case a worker was on when it died, drawn again from its journal record by a
 * forked child of the supervisor (what killed the worker may kill the drawing too). Each is
 * errors/case-N.npz (N the global case number) beside errors/case-N.sh, whose one command line
 * judges it again with `attncheck check` under the campaign's kernel and options. The campaign's
 * summary lists them. */
#include "config.h"
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "campaign.h"
#include "exec.h"

#define ERRORS_KEPT 20        /* cases kept per run: the first ones */
#define REDRAW_LIMIT_S 120.0  /* the child drawing a dead worker's case again is killed after this */

/* Appends " --OPT 'value'" to buf when value is set. */
static void opt_word(char *buf, size_t n, const char *opt, const char *value)
{
  char q[2200];
  size_t len = strlen(buf);
  if (value && value[0] && ac_shquote(value, q, sizeof q)) snprintf(buf + len, n - len, " %s %s", opt, q);
}

/* The reproducer of errors/case-N.npz: `check` under the campaign's kernel and judging options. */
static int write_repro(const ctx_t *c, const char *dir, int64_t gk, const char *what, const char *msg, ac_err *e)
{
  const ac_campaign_opts *o = c->o;
  char exe[2048], qexe[4200], qspec[8300], opts[8000] = "", tmo[32], why[300];
  ac_self_exe(exe, sizeof exe);
  char rs[4096];   /* a command kernel's program as this campaign resolved it, as repro.sh has it */
  const char *spec = ac_exec_spec_resolved(o->kernel_spec, rs, sizeof rs) ? rs : o->kernel_spec;
  if (!ac_shquote(exe, qexe, sizeof qexe) || !ac_shquote(spec, qspec, sizeof qspec))
    return ac_err_set(e, "program path or kernel spec too long for a reproducer");
  opt_word(opts, sizeof opts, "--precision", o->precision);
  opt_word(opts, sizeof opts, "--empty-rows", o->empty_rows);
  opt_word(opts, sizeof opts, "--alibi-lse", o->alibi_lse);
  char *pol = ac_xstrdup(o->policies), *save = NULL;
  for (char *t = strtok_r(pol, ";", &save); t; t = strtok_r(NULL, ";", &save))
    opt_word(opts, sizeof opts, "--policy", t);
  free(pol);
  snprintf(tmo, sizeof tmo, "%gs", o->timeout_s);
  opt_word(opts, sizeof opts, "--timeout", tmo);
  ac_str_escape(msg ? msg : "", why, sizeof why);
  size_t cap = strlen(qexe) + strlen(qspec) + strlen(opts) + strlen(why) + 512;
  char *sh = ac_xmalloc(cap), p[4400];
  snprintf(sh, cap,
           "#!/bin/sh\n"
           "# attncheck failed on case %lld of this campaign (%s%s%.300s); the case is case-%lld.npz beside this\n"
           "# file. The line below judges it again as the campaign did (ATTNCHECK overrides the binary).\n"
           "exec \"${ATTNCHECK:-%s}\" check --kernel %s%s \"$(dirname \"$0\")/case-%lld.npz\" \"$@\"\n",
           (long long)gk, what, why[0] ? ": " : "", why, (long long)gk, qexe, qspec, opts, (long long)gk);
  snprintf(p, sizeof p, "%s/case-%lld.sh", dir, (long long)gk);
  int rc = ac_write_file_atomic(p, sh, strlen(sh), e);
  free(sh);
  if (rc == 0) chmod(p, 0755);
  return rc;
}

int ac_cp_error_store(ctx_t *c, const ac_case *cs, int64_t gk, const char *what, const char *msg, ac_err *e)
{
  char dir[4200], p[4400];
  snprintf(dir, sizeof dir, "%s/errors", c->o->out_dir);
  if (ac_mkdir_p(dir, e)) return -1;
  snprintf(p, sizeof p, "%s/case-%lld.npz", dir, (long long)gk);
  if (ac_case_write(cs, p, e)) return -1;
  return write_repro(c, dir, gk, what, msg, e);
}

/* The child: case k drawn again from its record, stored; its exit status 0, else 1 (message on
 * stderr). */
static void __attribute__((noreturn)) redraw_child(ctx_t *c, int64_t k, const char *what, const char *msg)
{
  ac_err e;
  ac_draw_rec *draws = NULL, d;
  int64_t nd = 0;
  ac_case cs;
  char desc[256];
  int64_t gk = k * c->o->shard_n + c->o->shard_i;
  if (ac_journal_draws(c->o->out_dir, &k, 1, &draws, &nd, &e) == 0) {
    c->draws = draws;
    c->ndraws = nd;
    int r = ac_cp_redraw(c, k, &cs, &d, desc, sizeof desc, &e);
    if (r == 0) ac_err_set(&e, "the journal holds no draw of case %lld (it died while drawing it)", (long long)gk);
    if (r == 1 && ac_cp_error_store(c, &cs, gk, what, msg, &e) == 0) _exit(0);
  }
  fprintf(stderr, "attncheck fuzz: case %lld, on which a worker died, cannot be kept: %s\n", (long long)gk, e.msg);
  _exit(1);
}

void ac_cp_error_redraw(ctx_t *c, int64_t k, const char *what, const char *msg)
{
  int64_t gk = k * c->o->shard_n + c->o->shard_i;
  char p[4400];
  struct stat st;
  snprintf(p, sizeof p, "%s/errors/case-%lld.npz", c->o->out_dir, (long long)gk);
  if (lstat(p, &st) == 0) return;   /* kept already (a worker's eval error on the same case) */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) redraw_child(c, k, what, msg);
  if (pid < 0) return;
  int status = 0;
  double t0 = ac_now();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (ac_now() - t0 > REDRAW_LIMIT_S) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  ac_cp_log_error(c, "keep-error", NULL, gk,
                  WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "kept in errors/" : "could not be drawn again");
}

int ac_cp_error_keep(ctx_t *c, int64_t nerr)
{
  return nerr <= ERRORS_KEPT && c->o->out_dir != NULL;
}

void ac_cp_errors_list(const char *dir, FILE *f, int max)
{
  char ed[4200];
  snprintf(ed, sizeof ed, "%s/errors", dir);
  int n = 0;
  int fd = open(ed, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);   /* a link someone put there is not followed */
  char **names = fd >= 0 ? ac_dir_names(fd, &n) : NULL;
  if (fd >= 0) close(fd);
  int shown = 0, total = 0;
  for (int i = 0; names && i < n; i++) {
    size_t l = strlen(names[i]);
    if (strncmp(names[i], "case-", 5) || l < 9 || strcmp(names[i] + l - 4, ".npz")) continue;
    total++;
    if (shown >= max) continue;
    char q[4400], sh[4400], qs[8900];
    snprintf(sh, sizeof sh, "%s/%.*s.sh", ed, (int)(l - 4), names[i]);
    snprintf(q, sizeof q, "%s/%s", ed, names[i]);
    char *eq = ac_str_escape_dup(q);
    fprintf(f, "  %s   reproduce: %s\n", eq,
            access(sh, F_OK) == 0 && ac_shquote(sh, qs, sizeof qs) ? qs : "attncheck check");
    free(eq);
    shown++;
  }
  if (total > shown) fprintf(f, "  ... and %d more in %s\n", total - shown, ed);
  if (!total) fprintf(f, "  (no case could be kept: see log.jsonl)\n");
  if (names) ac_dir_names_free(names, n);
}
