/* owner: exec backend */
/* exec.c: a kernel that is a command. attncheck writes the case to IN (an NPZ file), runs
 * the command through /bin/sh with {in} and {out} replaced by the quoted paths, under the
 * time limit, and reads members o (and lse when present) from OUT.
 * exec-persistent:COMMAND starts the command once and speaks a line protocol over its
 * stdin/stdout: attncheck writes "IN OUT\n", the worker answers "ok" or "error MESSAGE"
 * (other lines are passed to stderr). A worker that dies or closes its end is killed with
 * its process group and that case is a CRASH; one that exceeds the time limit is killed
 * (TIMEOUT); the next case starts a fresh one. A worker that ends AC_EXEC_MAX_DEAD times in a
 * row before answering, or cannot be started, makes the kernel unusable (ac_exec_unusable).
 * Case files live in TMPDIR/attncheck-{exec,worker}-PID-XXXXXX; the first use in a process
 * removes such directories of processes that no longer exist. A fresh worker is first asked
 * to declare itself (exec_decl.h), once per kernel. */
#include "config.h"
#include "exec.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "child.h"
#include "exec_decl.h"
#include "npz.h"

typedef struct {
  char *command;   /* the template with {in} / {out}; for exec-persistent the worker command */
  /* exec-persistent worker state */
  pid_t pid;       /* 0: not running */
  int fd;          /* our end of the socketpair joined to the worker's stdin and stdout */
  char dir[512];   /* temporary directory for the case files and the worker's stderr */
  char buf[4096];  /* bytes read from the worker, not yet a full line */
  size_t nbuf;
  int discard;     /* dropping the rest of an over-long line */
  int answered;    /* the running worker has answered a request */
  int dead;        /* workers in a row that ended before answering */
  char unusable[480];   /* why no worker can serve (then every run is a HARNESS_ERROR) */
  int64_t seq;
  ac_exec_decl decl;   /* the worker's declaration (exec-persistent) */
} exec_priv;

#define AC_EXEC_MAX_DEAD 3

int ac_exec_resolve(const char *spec, ac_kernel *k, ac_err *e)
{
  memset(k, 0, sizeof *k);
  const char *cmd;
  if (!strncmp(spec, "exec-persistent:", 16)) {
    cmd = spec + 16;
    while (*cmd == ' ') cmd++;
    if (!*cmd) return ac_err_set(e, "kernel '%s': empty command", spec);
    k->kind = AC_KIND_EXEC_PERSISTENT;
    exec_priv *pv = ac_xcalloc(1, sizeof *pv);
    pv->command = ac_xstrdup(cmd);
    pv->fd = -1;
    ac_exec_decl_init(&pv->decl);
    k->precision = pv->decl.precision;   /* "" until the worker declares classes */
    k->priv = pv;
    snprintf(k->name, sizeof k->name, "exec-persistent:%s", cmd);
    if (strlen(cmd) + 16 >= sizeof k->name) memcpy(k->name + sizeof k->name - 4, "...", 4);
    snprintf(k->origin, sizeof k->origin, "%s", cmd);
    return 0;
  } else if (!strncmp(spec, "exec:", 5)) {
    cmd = spec + 5;
    k->kind = AC_KIND_EXEC;
  } else {
    return ac_err_set(e, "kernel '%s': not an exec: spec", spec);
  }
  while (*cmd == ' ') cmd++;
  if (!*cmd) return ac_err_set(e, "kernel '%s': empty command", spec);
  if (!strstr(cmd, "{in}") || !strstr(cmd, "{out}"))
    return ac_err_set(e, "kernel '%s': the command must contain {in} and {out} (the case and output NPZ paths)", spec);
  exec_priv *pv = ac_xcalloc(1, sizeof *pv);
  pv->command = ac_xstrdup(cmd);
  k->priv = pv;
  snprintf(k->name, sizeof k->name, "exec:%s", cmd);
  if (strlen(cmd) + 5 >= sizeof k->name) memcpy(k->name + sizeof k->name - 4, "...", 4);
  snprintf(k->origin, sizeof k->origin, "%s", cmd);
  return 0;
}

static void worker_stop(exec_priv *pv, int hard);

void ac_exec_free(ac_kernel *k)
{
  exec_priv *pv = k->priv;
  if (!pv) return;
  if (k->kind == AC_KIND_EXEC_PERSISTENT) {
    worker_stop(pv, 0);
    if (pv->dir[0]) ac_exec_remove_dir(pv->dir);
  }
  free(pv->command);
  free(pv);
  k->priv = NULL;
}

const char *ac_exec_unusable(const ac_kernel *k)
{
  const exec_priv *pv = k->priv;
  return pv && k->kind == AC_KIND_EXEC_PERSISTENT && pv->unusable[0] ? pv->unusable : NULL;
}

/* Single-quote s for /bin/sh. */
static void append_quoted(char **buf, size_t *len, size_t *cap, const char *s)
{
  size_t need = *len + 4 * strlen(s) + 3;
  if (need + 1 > *cap) {
    *cap = 2 * need + 64;
    *buf = ac_xrealloc(*buf, *cap);
  }
  char *o = *buf + *len;
  *o++ = '\'';
  for (; *s; s++) {
    if (*s == '\'') {
      memcpy(o, "'\\''", 4);
      o += 4;
    } else {
      *o++ = *s;
    }
  }
  *o++ = '\'';
  *o = 0;
  *len = (size_t)(o - *buf);
}

static char *substitute(const char *tmpl, const char *in, const char *out)
{
  size_t cap = strlen(tmpl) + 64, len = 0;
  char *buf = ac_xmalloc(cap);
  buf[0] = 0;
  for (const char *s = tmpl; *s;) {
    if (!strncmp(s, "{in}", 4)) {
      append_quoted(&buf, &len, &cap, in);
      s += 4;
    } else if (!strncmp(s, "{out}", 5)) {
      append_quoted(&buf, &len, &cap, out);
      s += 5;
    } else {
      if (len + 2 > cap) {
        cap *= 2;
        buf = ac_xrealloc(buf, cap);
      }
      buf[len++] = *s++;
      buf[len] = 0;
    }
  }
  return buf;
}

typedef struct {
  const char *command;
  const char *errpath;
} sh_arg;

static int run_sh(void *arg)
{
  sh_arg *a = arg;
  /* The command's stdout joins our stderr (our stdout may be a TAP stream); its stderr
   * goes to a file whose last line explains a failure. */
  dup2(2, 1);
  int fd = open(a->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    dup2(fd, 2);
    close(fd);
  }
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) {
    dup2(devnull, 0);
    close(devnull);
  }
  ac_child_guard();
  execl("/bin/sh", "sh", "-c", a->command, (char *)NULL);
  _exit(127);
}

/* Last non-empty line of a small text file, for error messages. */
static void last_line(const char *path, char *out, size_t n)
{
  out[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    size_t l = strlen(line);
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = 0;
    if (l) snprintf(out, n, "%s", line);
  }
  fclose(f);
}

/* Reads o (and lse) from the output file into r; KERNEL_ERROR with a message otherwise. */
static void read_outputs(const char *path, const ac_case *c, const ac_counts *cn, const ac_run_opts *o, ac_run_result *r)
{
  ac_err e;
  const ac_problem *p = &c->p;
  const ac_dtype_info *di = ac_dtype_get(p->dtype);
  ac_npz *z = ac_npz_open(path, ac_mem_cap(), &e);
  if (!z) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg, "command output unreadable: %.400s", e.msg);
    return;
  }
  ac_npz_member m;
  if (!ac_npz_has(z, "o") || ac_npz_read(z, "o", &m, &e)) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg, "%.200s: no readable member 'o'%s%.250s", path, ac_npz_has(z, "o") ? ": " : "",
             ac_npz_has(z, "o") ? e.msg : "");
    ac_npz_close_reader(z);
    return;
  }
  int64_t want[4] = {p->batch, p->heads, p->tq, p->dv};
  int shape_ok = m.ndim == 4;
  for (int i = 0; shape_ok && i < 4; i++) shape_ok = m.shape[i] == want[i];
  size_t ob = (size_t)cn->o * (size_t)di->bytes;
  if (strcmp(m.descr, di->npy) || !shape_ok || m.nbytes != ob) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg,
             "output 'o' must be %s with shape [%lld,%lld,%lld,%lld] (dtype %s), got %s with %d dimension(s)",
             di->npy, (long long)want[0], (long long)want[1], (long long)want[2], (long long)want[3], di->name,
             m.descr[0] ? m.descr : "a non-array member", m.ndim);
    ac_npz_close_reader(z);
    return;
  }
  r->o = ac_xmalloc(ob ? ob : 1);
  memcpy(r->o, m.data, ob);
  r->o_count = cn->o;
  if (o->want_lse && ac_npz_has(z, "lse")) {
    if (ac_npz_read(z, "lse", &m, &e)) {
      r->status = AC_RUN_KERNEL_ERROR;
      snprintf(r->msg, sizeof r->msg, "%.200s: member 'lse' unreadable: %.250s", path, e.msg);
      ac_npz_close_reader(z);
      return;
    }
    int lok = m.ndim == 3 && m.shape[0] == p->batch && m.shape[1] == p->heads && m.shape[2] == p->tq;
    int f4 = !strcmp(m.descr, "<f4"), f8 = !strcmp(m.descr, "<f8");
    if (!lok || !(f4 || f8) || m.nbytes != (size_t)cn->rows * (f4 ? 4 : 8)) {
      r->status = AC_RUN_KERNEL_ERROR;
      snprintf(r->msg, sizeof r->msg, "output 'lse' must be <f4 (or <f8) with shape [%lld,%lld,%lld]",
               (long long)p->batch, (long long)p->heads, (long long)p->tq);
      ac_npz_close_reader(z);
      return;
    }
    r->lse = ac_xmalloc((size_t)cn->rows * sizeof(float));
    if (f4) {
      memcpy(r->lse, m.data, (size_t)cn->rows * 4);
    } else {
      for (int64_t i = 0; i < cn->rows; i++) {
        double d;
        memcpy(&d, (const char *)m.data + 8 * i, 8);
        r->lse[i] = (float)d;
      }
    }
    r->lse_count = cn->rows;
  }
  ac_npz_close_reader(z);
  r->status = AC_RUN_OK;
}

/* ---- exec-persistent ------------------------------------------------------------------ */

/* Ends the worker and its process group: hard kills it at once, otherwise EOF on its stdin
 * first and up to a second to exit. */
static void worker_stop(exec_priv *pv, int hard)
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
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return ac_err_set(e, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    ac_child_setup(1);
    dup2(sv[1], 0);
    dup2(sv[1], 1);
    int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 2);
      close(fd);
    }
    ac_child_guard();
    execl("/bin/sh", "sh", "-c", pv->command, (char *)NULL);
    _exit(127);
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
  last_line(errp, tail, sizeof tail);
  r->status = AC_RUN_CRASH;
  if (!gone) {
    snprintf(how, sizeof how, "worker closed its stdin/stdout but kept running (killed)");
  } else if (WIFSIGNALED(st)) {
    r->sig = WTERMSIG(st);
    snprintf(how, sizeof how, "worker killed by %s", ac_signal_name(r->sig));
  } else {
    snprintf(how, sizeof how, "worker exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  snprintf(r->msg, sizeof r->msg, "%s%s%.250s (restarted for the next case)", how, tail[0] ? ": " : "", tail);
  if (pv->answered) {
    pv->dead = 0;
  } else if (++pv->dead >= AC_EXEC_MAX_DEAD) {
    snprintf(pv->unusable, sizeof pv->unusable, "the worker ended %d times in a row before answering a request (last: %.380s)",
             pv->dead, r->msg);
  }
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
      if (ac_exec_decl_answer(&pv->decl, line)) return;
      fprintf(stderr, "%s\n", line);   /* the worker's chatter on its stdout */
    }
  pv->decl.state = AC_DECL_NONE;
  worker_stop(pv, 1);
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

int ac_exec_supports(const ac_kernel *k, const ac_problem *p, char *why, size_t n)
{
  exec_priv *pv = k->priv;
  if (n) why[0] = 0;
  if (k->kind != AC_KIND_EXEC_PERSISTENT && p->f.used) {
    /* only a declared worker can say it reads the variant members */
    snprintf(why, n, "one-shot exec kernels get no attention variants (an exec-persistent: worker declares them)");
    return 0;
  }
  return !pv || k->kind != AC_KIND_EXEC_PERSISTENT || ac_exec_decl_supports(&pv->decl, p, why, n);
}

int ac_exec_declared_limits(const ac_kernel *k, double timeout_s, uint32_t *dtypes, uint32_t *masks)
{
  exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT) return 0;
  ac_exec_prepare(k, timeout_s);
  worker_stop(pv, 0);   /* the declaration stays; whoever runs cases starts its own worker */
  if (pv->decl.state != AC_DECL_OK) return 0;
  *dtypes = pv->decl.dtypes;
  *masks = pv->decl.masks;
  return 1;
}

static int persistent_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e)
{
  exec_priv *pv = k->priv;
  ac_counts cn;
  ac_err pe;
  if (ac_problem_counts(&c->p, &cn, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", pe.msg);
    return ac_err_set(e, "%s", pe.msg);
  }
  if (!pv->unusable[0] && worker_ready(pv, o->timeout_s, &pe))
    snprintf(pv->unusable, sizeof pv->unusable, "cannot start the worker: %.400s", pe.msg);
  if (pv->unusable[0]) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", pv->unusable);
    return ac_err_set(e, "%s", r->msg);
  }
  if (ac_exec_decl_admit(&pv->decl, &c->p, r)) return r->status == AC_RUN_HARNESS_ERROR ? ac_err_set(e, "%s", r->msg) : 0;
  char in[700], out[700], errp[700], req[1500];
  pv->seq++;
  snprintf(in, sizeof in, "%s/in-%lld.npz", pv->dir, (long long)pv->seq);
  snprintf(out, sizeof out, "%s/out-%lld.npz", pv->dir, (long long)pv->seq);
  snprintf(errp, sizeof errp, "%s/stderr", pv->dir);
  if (ac_case_write(c, in, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "cannot write the case for the worker: %.400s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  unlink(out);
  int n = snprintf(req, sizeof req, "%s %s\n", in, out);
  double t0 = ac_now();
  double deadline = o->timeout_s > 0 ? t0 + o->timeout_s : 0;
  int got = worker_send(pv, req, (size_t)n, deadline);
  char line[1024];
  const char *err = NULL;
  while (got == 1) {
    got = worker_line(pv, deadline, line, sizeof line);
    if (got != 1 || !strcmp(line, "ok") || (err = error_reply(line))) break;
    fprintf(stderr, "%s\n", line);   /* the worker's chatter on its stdout */
  }
  r->kernel_ms = (ac_now() - t0) * 1e3;
  if (got == 1) {
    pv->answered = 1;
    pv->dead = 0;
  }
  if (got == 0) {
    worker_died(pv, errp, r);
  } else if (got < 0) {
    worker_stop(pv, 1);
    r->status = AC_RUN_TIMEOUT;
    snprintf(r->msg, sizeof r->msg, "worker gave no answer within the time limit of %g s (killed, restarted for the next case)",
             o->timeout_s);
  } else if (err) {
    ac_exec_decl_error(line, r);
  } else {
    read_outputs(out, c, &cn, o, r);
    ac_exec_decl_outputs(&pv->decl, o, cn.rows, r);
  }
  unlink(in);
  unlink(out);
  return 0;
}

int ac_exec_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e)
{
  exec_priv *pv = k->priv;
  ac_run_opts defaults;
  if (!o) {
    ac_run_opts_init(&defaults);
    o = &defaults;
  }
  memset(r, 0, sizeof *r);
  r->guard_ok = 1;
  r->dtype = c->p.dtype;
  if (pv && k->kind == AC_KIND_EXEC_PERSISTENT) return persistent_run(k, c, o, r, e);
  if (!pv || k->kind != AC_KIND_EXEC) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "kernel '%s' is not a usable exec: kernel", k->name);
    return ac_err_set(e, "%s", r->msg);
  }
  ac_counts cn;
  ac_err pe;
  if (ac_problem_counts(&c->p, &cn, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", pe.msg);
    return ac_err_set(e, "%s", pe.msg);
  }
  char dir[512], in[600], out[600], errp[600];
  if (ac_exec_make_dir("exec", dir, sizeof dir, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%.500s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  snprintf(in, sizeof in, "%s/in.npz", dir);
  snprintf(out, sizeof out, "%s/out.npz", dir);
  snprintf(errp, sizeof errp, "%s/stderr", dir);
  if (ac_case_write(c, in, &pe)) {
    ac_exec_remove_dir(dir);
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "cannot write the case for the command: %.400s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  char *cmd = substitute(pv->command, in, out);
  sh_arg a = {cmd, errp};
  ac_child_outcome oc;
  int rc = ac_child_run(run_sh, &a, o->timeout_s, 1, &oc, &pe);
  free(cmd);
  if (rc) {
    ac_exec_remove_dir(dir);
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  r->kernel_ms = oc.wall_s * 1e3;
  char tail[400];
  last_line(errp, tail, sizeof tail);
  if (oc.timed_out) {
    r->status = AC_RUN_TIMEOUT;
    snprintf(r->msg, sizeof r->msg, "command gave no result within the time limit of %g s (killed)", o->timeout_s);
  } else if (oc.sig) {
    r->status = AC_RUN_CRASH;
    r->sig = oc.sig;
    snprintf(r->msg, sizeof r->msg, "command killed by %s%s%s", ac_signal_name(oc.sig), tail[0] ? ": " : "", tail);
  } else if (oc.code != 0) {
    /* The shell reports a signal of its command as 128+N. */
    if (oc.code > 128 && oc.code < 128 + 65) {
      r->status = AC_RUN_CRASH;
      r->sig = oc.code - 128;
      snprintf(r->msg, sizeof r->msg, "command killed by %s%s%s", ac_signal_name(r->sig), tail[0] ? ": " : "", tail);
    } else if (oc.code == 77) {
      /* the automake SKIP status: the command refuses the case */
      r->status = AC_RUN_UNSUPPORTED;
      const char *why = !strncmp(tail, "unsupported:", 12) ? tail + 12 + (tail[12] == ' ') : tail;
      snprintf(r->msg, sizeof r->msg, "command: %s", why[0] ? why : "refused the case (exit status 77)");
    } else {
      r->status = AC_RUN_KERNEL_ERROR;
      snprintf(r->msg, sizeof r->msg, "command exited with status %d%s%s", oc.code, tail[0] ? ": " : "", tail);
    }
  } else {
    read_outputs(out, c, &cn, o, r);
  }
  ac_exec_remove_dir(dir);
  return 0;
}
