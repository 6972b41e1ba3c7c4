/* owner: exec backend */
/* exec_worker.c: exec-persistent:COMMAND starts the command once and speaks a line protocol
 * over its stdin/stdout: attncheck writes "IN OUT\n", the worker answers "ok" or "error MESSAGE"
 * (other lines are passed to stderr). A worker that dies or closes its end is killed with
 * its process group and that case is a CRASH; one that exceeds the time limit is killed
 * (TIMEOUT); the next case starts a fresh one. A worker that ends AC_EXEC_MAX_DEAD times in a
 * row before answering, or cannot be started, makes the kernel unusable (ac_exec_unusable).
 * A fresh worker is first asked to declare itself (exec_decl.h), once per kernel. */
#include "config.h"
#include "exec.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "child.h"
#include "exec_decl.h"
#include "exec_priv.h"

void ac_exec_worker_stop(exec_priv *pv, int hard)
{
  if (pv->fd >= 0) close(pv->fd);   /* EOF on its stdin: a well-behaved worker exits */
  pv->fd = -1;
  pv->nbuf = 0;
  pv->discard = 0;
  if (pv->pid > 0) ac_child_end(pv->pid, 1, hard ? 0 : 1.0, NULL);
  pv->pid = 0;
}

static int worker_start(exec_priv *pv, ac_err *e)
{
  if (!pv->dir[0]) {
    if (ac_exec_make_dir("worker", pv->dir, sizeof pv->dir, e)) return -1;
    if (strchr(pv->dir, ' ') || strchr(pv->dir, '\n')) {
      ac_err_set(e, "the temporary directory %s has a space in its path (the protocol line is 'IN OUT'): set TMPDIR",
                 pv->dir);
      ac_exec_remove_dir(pv->dir);
      pv->dir[0] = 0;
      return -1;
    }
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return ac_err_set(e, "socketpair: %s", strerror(errno));
  char errp[700];
  snprintf(errp, sizeof errp, "%s/stderr", pv->dir);
  fflush(NULL);
  pid_t pid = ac_child_fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return ac_err_set(e, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    ac_child_setup(1);
    dup2(sv[1], 0);
    dup2(sv[1], 1);
    ac_exec_shell(pv->command, errp);
  }
  setpgid(pid, pid);
  close(sv[1]);
  pv->fd = sv[0];
  pv->pid = pid;
  pv->nbuf = 0;
  pv->discard = 0;
  pv->answered = 0;
  return 0;
}

/* Milliseconds to wait in one poll: at most 100, so that a worker that ended while something
 * it started holds its socket open is noticed; -1 when the deadline has passed. */
static int slice_ms(double deadline)
{
  if (deadline <= 0) return 100;
  double left = deadline - ac_now();
  if (left <= 0) return -1;
  return left * 1000.0 < 100 ? (int)(left * 1000.0) + 1 : 100;
}

/* Sends the request within the deadline: 1 sent, 0 the worker's end is gone, -1 timeout. */
static int worker_send(exec_priv *pv, const char *req, size_t n, double deadline)
{
  size_t off = 0;
  while (off < n) {
    ssize_t k = send(pv->fd, req + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      off += (size_t)k;
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return 0;
    int ms = slice_ms(deadline);
    if (ms < 0) return -1;
    struct pollfd pf = {pv->fd, POLLOUT, 0};
    if (poll(&pf, 1, ms) == 0 && ac_child_ended(pv->pid)) return 0;
  }
  return 1;
}

/* One line from the worker within the deadline, trailing white space removed: 1 line, 0 EOF,
 * error or the worker ended, -1 timeout. A line longer than the buffer comes back cut to it
 * and the rest of it is dropped as it arrives. */
static int worker_line(exec_priv *pv, double deadline, char *line, size_t n)
{
  for (;;) {
    char *nl = memchr(pv->buf, '\n', pv->nbuf);
    if (pv->discard && pv->nbuf) {
      size_t drop = nl ? (size_t)(nl - pv->buf) + 1 : pv->nbuf;
      memmove(pv->buf, pv->buf + drop, pv->nbuf - drop);
      pv->nbuf -= drop;
      pv->discard = !nl;
      continue;
    }
    if (nl || pv->nbuf == sizeof pv->buf) {
      size_t l = nl ? (size_t)(nl - pv->buf) : pv->nbuf;
      size_t c = l < n - 1 ? l : n - 1;
      memcpy(line, pv->buf, c);
      while (c && (line[c - 1] == '\r' || line[c - 1] == ' ' || line[c - 1] == '\t')) c--;
      line[c] = 0;
      size_t drop = nl ? l + 1 : l;
      memmove(pv->buf, pv->buf + drop, pv->nbuf - drop);
      pv->nbuf -= drop;
      pv->discard = !nl;
      return 1;
    }
    int ms = slice_ms(deadline);
    if (ms < 0) return -1;
    struct pollfd pf = {pv->fd, POLLIN, 0};
    int pr = poll(&pf, 1, ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) {
      if (ac_child_ended(pv->pid)) return 0;
      continue;
    }
    ssize_t got = read(pv->fd, pv->buf + pv->nbuf, sizeof pv->buf - pv->nbuf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    pv->nbuf += (size_t)got;
  }
}

/* "error" alone or followed by white space and the message; NULL for other lines. */
static const char *error_reply(const char *line)
{
  if (strncmp(line, "error", 5) || (line[5] && line[5] != ' ' && line[5] != '\t')) return NULL;
  line += 5;
  while (*line == ' ' || *line == '\t') line++;
  return line;
}

/* The worker's end of the socket is gone, or it ended: a CRASH of this case. The worker and
 * its group are killed at once (after a moment to collect the status of one that is exiting). */
static void worker_died(exec_priv *pv, const char *errp, ac_run_result *r)
{
  int st = 0;
  if (pv->fd >= 0) close(pv->fd);
  pv->fd = -1;
  int gone = ac_child_end(pv->pid, 1, 0.1, &st);
  pv->pid = 0;
  char tail[400], how[200];
  ac_exec_last_line(errp, tail, sizeof tail);
  r->status = AC_RUN_CRASH;
  if (!gone) {
    snprintf(how, sizeof how, "worker closed its stdin/stdout but kept running (killed)");
  } else if (WIFSIGNALED(st)) {
    r->sig = WTERMSIG(st);
    snprintf(how, sizeof how, "worker killed by %s", ac_signal_name(r->sig));
  } else {
    snprintf(how, sizeof how, "worker exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  /* the shell's 126 and 127 before any answer: the command is not executable or not found */
  if (gone && !pv->answered && WIFEXITED(st) && (WEXITSTATUS(st) == 126 || WEXITSTATUS(st) == 127)) {
    r->not_started = pv->not_started = 1;
    snprintf(r->msg, sizeof r->msg, "%s%s%s%.250s", AC_RUN_NOT_STARTED, how, tail[0] ? ": " : "", tail);
    snprintf(pv->unusable, sizeof pv->unusable, "%.470s", r->msg);
    return;
  }
  snprintf(r->msg, sizeof r->msg, "%s%s%.250s (restarted for the next case)", how, tail[0] ? ": " : "", tail);
  if (pv->answered) {
    pv->dead = 0;
  } else if (++pv->dead >= AC_EXEC_MAX_DEAD) {
    snprintf(pv->unusable, sizeof pv->unusable, "the worker ended %d times in a row before answering a request (last: %.380s)",
             pv->dead, r->msg);
  }
}

/* A declaration's "note" on stderr, once per process and text (forked processes inherit what
 * was shown already); the note is escaped where it is parsed, the name here. */
static void show_note(const ac_exec_decl *d)
{
  static char shown[256];
  if (d->state != AC_DECL_OK || !d->note[0] || !strcmp(shown, d->note)) return;
  snprintf(shown, sizeof shown, "%s", d->note);
  char name[300];
  fprintf(stderr, "attncheck: worker %s: %s\n", ac_str_escape(d->name[0] ? d->name : "(unnamed)", name, sizeof name),
          d->note);
}

/* A line of the worker's chatter on its stdout, to stderr, escaped like every text it sends. */
static void chatter(const char *line)
{
  char *t = ac_str_escape_dup(line);
  fprintf(stderr, "%s\n", t);
  free(t);
}

/* The handshake on a fresh worker: AC_EXEC_HELLO, then one answer line within the time
 * limit. No answer (silence or exit): a worker without the handshake, stopped here. */
static void worker_greet(exec_priv *pv, double timeout_s)
{
  size_t hl = strlen(AC_EXEC_HELLO);
  double deadline = timeout_s > 0 ? ac_now() + timeout_s : 0;
  char line[sizeof pv->buf];
  if (worker_send(pv, AC_EXEC_HELLO, hl, deadline) == 1)
    while (worker_line(pv, deadline, line, sizeof line) == 1) {
      if (ac_exec_decl_answer(&pv->decl, line)) {
        show_note(&pv->decl);
        ac_child_reap_strays(); /* what it left outside its group while answering is no case's */
        return;
      }
      chatter(line);
    }
  pv->decl.state = AC_DECL_NONE;
  ac_exec_worker_stop(pv, 1);
}

/* A running worker: started (and asked to declare itself the first time) when there is none. */
static int worker_ready(exec_priv *pv, double timeout_s, ac_err *e)
{
  if (pv->pid > 0) return 0;
  if (worker_start(pv, e)) return -1;
  if (pv->decl.state != AC_DECL_UNKNOWN) return 0;
  worker_greet(pv, timeout_s);
  return pv->pid > 0 ? 0 : worker_start(pv, e);
}

void ac_exec_prepare(const ac_kernel *k, double timeout_s)
{
  exec_priv *pv = k->priv;
  ac_err e;
  if (pv && k->kind == AC_KIND_EXEC_PERSISTENT && pv->decl.state == AC_DECL_UNKNOWN) worker_ready(pv, timeout_s, &e);
}

int ac_exec_declared_limits(const ac_kernel *k, double timeout_s, uint32_t *dtypes, uint32_t *masks)
{
  exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT) return 0;
  ac_exec_prepare(k, timeout_s);
  ac_exec_worker_stop(pv, 0);   /* the declaration stays; whoever runs cases starts its own worker */
  if (pv->decl.state != AC_DECL_OK) return 0;
  *dtypes = pv->decl.dtypes;
  *masks = pv->decl.masks;
  return 1;
}

int ac_exec_worker_begin(exec_priv *pv, double timeout_s, ac_run_result *r, ac_err *e)
{
  ac_err pe;
  if (!pv->unusable[0] && worker_ready(pv, timeout_s, &pe)) {
    snprintf(pv->unusable, sizeof pv->unusable, "%scannot start the worker: %.400s", AC_RUN_NOT_STARTED, pe.msg);
    pv->not_started = 1;
  }
  if (!pv->unusable[0]) return 0;
  r->status = AC_RUN_HARNESS_ERROR;
  r->not_started = pv->not_started;
  snprintf(r->msg, sizeof r->msg, "%s", pv->unusable);
  return ac_err_set(e, "%s", r->msg);
}

/* "ok", or "ok" and space-separated KEY=VALUE words: class=NAME names the precision class of the
 * path the worker took for this case (r->precision); other keys are left for later versions.
 * 1 when line is such an answer. */
static int ok_reply(const char *line, ac_run_result *r)
{
  if (strncmp(line, "ok", 2) || (line[2] && line[2] != ' ')) return 0;
  for (const char *s = line + 2; *s;) {
    while (*s == ' ') s++;
    size_t l = strcspn(s, " ");
    if (l > 6 && !strncmp(s, "class=", 6) && l - 6 < sizeof r->precision)
      snprintf(r->precision, sizeof r->precision, "%.*s", (int)(l - 6), s + 6);
    s += l;
  }
  return 1;
}

int ac_exec_worker_request(exec_priv *pv, const char *req, double timeout_s, ac_run_result *r)
{
  char errp[700];
  snprintf(errp, sizeof errp, "%s/stderr", pv->dir);
  double t0 = ac_now();
  double deadline = timeout_s > 0 ? t0 + timeout_s : 0;
  int got = worker_send(pv, req, strlen(req), deadline);
  char line[1024];
  const char *err = NULL;
  while (got == 1) {
    got = worker_line(pv, deadline, line, sizeof line);
    if (got != 1 || ok_reply(line, r) || (err = error_reply(line))) break;
    chatter(line); /* the worker's chatter on its stdout */
  }
  r->kernel_ms = (ac_now() - t0) * 1e3;
  if (got == 1) {
    pv->answered = 1;
    pv->dead = 0;
  }
  if (got == 0) {
    worker_died(pv, errp, r);
  } else if (got < 0) {
    ac_exec_worker_stop(pv, 1);
    r->status = AC_RUN_TIMEOUT;
    snprintf(r->msg, sizeof r->msg, "worker gave no answer within the time limit of %g s (killed, restarted for the next case)",
             timeout_s);
  } else if (err) {
    ac_exec_decl_error(line, r);
  }
  return got == 1 && !err;
}

int ac_exec_persistent_run(const ac_kernel *k, const ac_case *c, const ac_counts *cn, const ac_run_opts *o,
                           ac_run_result *r, ac_err *e)
{
  exec_priv *pv = k->priv;
  ac_err pe;
  if (ac_exec_worker_begin(pv, o->timeout_s, r, e)) return -1;
  if (ac_exec_decl_admit(&pv->decl, &c->p, r)) return r->status == AC_RUN_HARNESS_ERROR ? ac_err_set(e, "%s", r->msg) : 0;
  char in[700], out[700], req[1500];
  pv->seq++;
  snprintf(in, sizeof in, "%s/in-%lld.npz", pv->dir, (long long)pv->seq);
  snprintf(out, sizeof out, "%s/out-%lld.npz", pv->dir, (long long)pv->seq);
  if (ac_case_write(c, in, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "cannot write the case for the worker: %.400s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  unlink(out);
  snprintf(req, sizeof req, "%s %s\n", in, out);
  if (ac_exec_worker_request(pv, req, o->timeout_s, r)) {
    ac_exec_read_outputs(out, c, cn, o, r);
    ac_exec_decl_outputs(&pv->decl, o, cn->rows, r);
  }
  unlink(in);
  unlink(out);
  return 0;
}
