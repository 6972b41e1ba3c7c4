/* worker.c: a persistent child serving many cases of one kernel. Each case travels in a
 * memory file (memfd) that both processes map: a request head, the dense q, k and v, and
 * the result area of the one-shot harness; one byte over a socket starts a run, one byte
 * answers. A worker that dies or overruns the time limit is reaped and the case becomes
 * CRASH or TIMEOUT; one whose kernel broke a guard is retired after the case; the next
 * case starts a fresh worker. */
#include "config.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "accuda.h"
#include "harness_priv.h"
#include "variants.h"

#define REQ_BYTES 4096

typedef struct {
  uint64_t total;
  ac_problem p;
  int32_t want_lse, device, prefill_alt, pad;
  int64_t guard;
  uint64_t q_off, k_off, v_off, area_off;
  uint64_t var_off[AC_FT_N];   /* the case's variant tensors (0: unused) */
} wk_req;
_Static_assert(sizeof(wk_req) <= REQ_BYTES, "the request head must fit before q");

/* A supports() question ('s'), at the start of the memory file. */
typedef struct {
  attncheck_problem p;
  int32_t done, yes;
  char why[256];
} wk_sup;

struct ac_worker {
  const ac_kernel *k;
  pid_t pid;        /* 0: not running */
  int sock;         /* parent end */
  int fd;           /* the memory file */
  size_t cap;       /* its size */
  int starts;
  pid_t owner;      /* the process that started it (a forked copy of the struct is not ours) */
  pthread_mutex_t mu;
};

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

ac_worker *ac_worker_new(const ac_kernel *k)
{
  ac_worker *w = ac_xcalloc(1, sizeof *w);
  w->k = k;
  w->sock = -1;
  w->fd = -1;
  pthread_mutex_init(&w->mu, NULL);
  return w;
}

int ac_worker_starts(const ac_worker *w) { return w->starts; }

static void serve(const ac_kernel *k, int sock, int fd)
{
  ac_hx_child_stdout();
  /* every child of the worker is the kernel's: each goes, with all it started, after its request */
  ac_child_subreaper();
  for (;;) {
    char cmd;
    ssize_t n = read(sock, &cmd, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && cmd == 'q') _exit(0);   /* the parent ends the group after the reap */
    if (n <= 0 || (cmd != 'r' && cmd != 's')) kill(0, SIGKILL);   /* the parent is gone: so is everything here */
    if (cmd == 's') {
      wk_sup q;
      if (pread(fd, &q, sizeof q, 0) != (ssize_t)sizeof q) _exit(3);
      char why[sizeof q.why] = "";
      q.yes = k->abi->supports(&q.p, why, sizeof why) != 0;
      why[sizeof why - 1] = 0;
      memcpy(q.why, why, sizeof why);
      q.done = 1;
      fflush(stdout);
      ac_child_reap_strays();
      if (pwrite(fd, &q, sizeof q, 0) != (ssize_t)sizeof q) _exit(3);
      while (write(sock, "d", 1) < 0 && errno == EINTR) {}
      continue;
    }
    wk_req req;
    if (pread(fd, &req, sizeof req, 0) != (ssize_t)sizeof req) _exit(3);
    unsigned char *m = mmap(NULL, req.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) _exit(3);
    ac_case c;
    memset(&c, 0, sizeof c);
    c.p = req.p;
    c.q = m + req.q_off;
    c.k = m + req.k_off;
    c.v = m + req.v_off;
    for (int t = 0; t < AC_FT_N; t++)
      if (req.var_off[t]) *ac_feat_tensor_slot(&c, (ac_feat_tensor)t) = m + req.var_off[t];
    ac_run_opts o;
    ac_run_opts_init(&o);
    o.want_lse = req.want_lse;
    o.device = req.device;
    o.guard = req.guard;
    o.prefill_alt = req.prefill_alt;
    ac_hx_ctx x;
    ac_err e;
    ac_hx_head *h = (ac_hx_head *)(m + req.area_off);
    if (ac_hx_prepare(&x, k, &c, &o, &e)) {
      h->status = AC_RUN_HARNESS_ERROR;
      snprintf(h->msg, sizeof h->msg, "%.400s", e.msg);
      h->guard_ok = 1;
      h->done = 1;
    } else {
      x.area = m + req.area_off;
      ac_hx_body(&x);
      fflush(stdout);
    }
    munmap(m, req.total);
    ac_child_reap_strays();
    while (write(sock, "d", 1) < 0 && errno == EINTR) {}
  }
}

static int start(ac_worker *w, ac_err *e)
{
  if (w->fd < 0) {
    w->fd = memfd_create("attncheck-worker", MFD_CLOEXEC);
    if (w->fd < 0) return ac_err_set(e, "cannot create the worker's memory file: %s", strerror(errno));
    w->cap = 0;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return ac_err_set(e, "cannot create the worker's socket: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = ac_child_fork();
  if (pid < 0) {
    int err = errno;
    close(sv[0]);
    close(sv[1]);
    return ac_err_set(e, "cannot fork the worker: %s", strerror(err));
  }
  if (pid == 0) {
    close(sv[0]);
    ac_child_setup(1);   /* its own group, killed with it; it dies with this thread */
    serve(w->k, sv[1], w->fd);
    _exit(0);
  }
  setpgid(pid, pid);   /* also from here: no race with a fast kill */
  close(sv[1]);
  w->sock = sv[0];
  w->pid = pid;
  w->owner = getpid();
  w->starts++;
  return 0;
}

/* Reap the worker: wait up to grace_s for it to exit, then kill it; its whole process group
 * (whatever the kernel started) goes with it. */
static void reap(ac_worker *w, double grace_s, int kill_now, int *status)
{
  ac_child_end(w->pid, 1, kill_now ? 0 : grace_s, status);
  close(w->sock);
  w->sock = -1;
  w->pid = 0;
}

static int worker_error(ac_run_result *r, ac_err *e, const char *msg)
{
  r->status = AC_RUN_HARNESS_ERROR;
  snprintf(r->msg, sizeof r->msg, "%s", msg);
  return ac_err_set(e, "%s", msg);
}

/* A worker inherited through fork from the process that runs it: left alone. */
static void disown_inherited(ac_worker *w)
{
  if (w->owner && w->owner != getpid()) {
    if (w->sock >= 0) close(w->sock);
    if (w->fd >= 0) close(w->fd);
    w->sock = w->fd = -1;
    w->pid = 0;
    w->cap = 0;
    w->owner = 0;
  }
}

/* Sends a one-byte request; a worker that went away between cases is replaced once. */
static int request(ac_worker *w, const char *cmd, ac_err *e)
{
  if (send(w->sock, cmd, 1, MSG_NOSIGNAL) == 1) return 0;
  reap(w, 0.5, 1, NULL);
  if (start(w, e)) return -1;
  if (send(w->sock, cmd, 1, MSG_NOSIGNAL) != 1) return ac_err_set(e, "cannot reach the worker process");
  return 0;
}

/* Waits for the worker's answer within timeout_s (<= 0: no limit); a worker that dies or
 * overruns is reaped, with its group, and oc says how it ended. */
static void await_reply(ac_worker *w, double timeout_s, ac_child_outcome *oc)
{
  double t0 = ac_now();
  for (;;) {
    int ms = 100;
    if (timeout_s > 0) {
      double left = timeout_s - (ac_now() - t0);
      if (left <= 0) {
        oc->timed_out = 1;
        reap(w, 0, 1, NULL);
        return;
      }
      if (left * 1000.0 < ms) ms = (int)(left * 1000.0) + 1;
    }
    struct pollfd p = {w->sock, POLLIN, 0};
    int pr = poll(&p, 1, ms);
    int st = 0;
    if (pr == 0 && ac_child_ended(w->pid)) {
      reap(w, 0, 0, &st);   /* died while something it started holds the socket open */
    } else if (pr < 0 && errno != EINTR) {
      reap(w, 0, 1, NULL);
      oc->sig = SIGKILL;
      return;
    } else if (pr <= 0) {
      continue;
    } else {
      char b;
      ssize_t n = recv(w->sock, &b, 1, 0);
      if (n == 1) return;   /* done: the worker stays for the next case */
      if (n < 0 && errno == EINTR) continue;
      reap(w, 1.0, 0, &st);   /* EOF: the worker died */
    }
    if (WIFSIGNALED(st)) oc->sig = WTERMSIG(st);
    else if (WIFEXITED(st)) oc->code = WEXITSTATUS(st);
    return;
  }
}

static int run_locked(ac_worker *w, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e)
{
  disown_inherited(w);
  ac_hx_result_reset(r, ac_tensor_dtype(&c->p, 'o'));
  ac_err pe;
  ac_hx_ctx x;
  if (ac_hx_prepare(&x, w->k, c, opts, &pe)) return worker_error(r, e, pe.msg);
  if (w->pid == 0 && start(w, &pe)) return worker_error(r, e, pe.msg);

  const size_t qb = (size_t)x.cn.q * ac_dtype_size(ac_tensor_dtype(&c->p, 'q')),
               kb = (size_t)x.cn.k * ac_dtype_size(ac_tensor_dtype(&c->p, 'k')),
               vb = (size_t)x.cn.v * ac_dtype_size(ac_tensor_dtype(&c->p, 'v'));
  wk_req req;
  memset(&req, 0, sizeof req);
  req.p = c->p;
  req.want_lse = opts->want_lse;
  req.device = opts->device;
  req.guard = opts->guard;
  req.prefill_alt = opts->prefill_alt;
  req.q_off = REQ_BYTES;
  req.k_off = req.q_off + round64(qb);
  req.v_off = req.k_off + round64(kb);
  uint64_t end = req.v_off + round64(vb);
  size_t vbytes[AC_FT_N] = {0};
  for (int t = 0; t < AC_FT_N; t++) {   /* the variant tensors follow v (sizes checked when the case was made) */
    uint64_t b = ac_feat_tensor_bytes(&c->p, (ac_feat_tensor)t);
    if (!b || b == UINT64_MAX || !*ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t)) continue;
    vbytes[t] = (size_t)b;
    req.var_off[t] = end;
    end += round64(vbytes[t]);
  }
  req.area_off = end;
  req.total = req.area_off + x.l.total;
  if (req.total > w->cap) {
    size_t cap = req.total > 2 * w->cap ? req.total : 2 * w->cap;
    if (ftruncate(w->fd, (off_t)cap) != 0) return worker_error(r, e, "cannot grow the worker's memory file");
    w->cap = cap;
  }
  unsigned char *m = mmap(NULL, req.total, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
  if (m == MAP_FAILED) return worker_error(r, e, "cannot map the worker's memory file");
  memcpy(m, &req, sizeof req);
  memcpy(m + req.q_off, c->q, qb);
  memcpy(m + req.k_off, c->k, kb);
  memcpy(m + req.v_off, c->v, vb);
  for (int t = 0; t < AC_FT_N; t++)
    if (vbytes[t]) memcpy(m + req.var_off[t], *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t), vbytes[t]);
  memset(m + req.area_off, 0, x.l.total);
  x.area = m + req.area_off;

  ac_child_outcome oc;
  memset(&oc, 0, sizeof oc);
  if (request(w, "r", &pe)) {
    munmap(m, req.total);
    return worker_error(r, e, pe.msg);
  }
  await_reply(w, opts->timeout_s, &oc);
  ac_hx_collect(&x, &oc, r);
  munmap(m, req.total);
  if (!r->guard_ok && w->pid) {
    /* A kernel that wrote out of bounds may have hurt the worker's own memory: retire it. */
    send(w->sock, "q", 1, MSG_NOSIGNAL);
    reap(w, 2.0, 0, NULL);
  }
  if (r->status == AC_RUN_HARNESS_ERROR) return ac_err_set(e, "%s", r->msg);
  return 0;
}

int ac_worker_run(ac_worker *w, const ac_case *c, const ac_run_opts *opts, ac_run_result *r, ac_err *e)
{
  ac_run_opts defaults;
  if (!opts) {
    ac_run_opts_init(&defaults);
    opts = &defaults;
  }
  const ac_kernel *k = w->k;
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT || !k->abi ||
      (opts->in_process && k->abi->memory != ATTNCHECK_MEM_CUDA) ||
      (k->abi->memory == ATTNCHECK_MEM_CUDA && !ac_cuda_built()))
    return ac_hx_run_oneshot(k, c, opts, r, e);
  if (pthread_mutex_trylock(&w->mu) != 0) return ac_hx_run_oneshot(k, c, opts, r, e);
  int rc = run_locked(w, c, opts, r, e);
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int ac_worker_supports(ac_worker *w, const attncheck_problem *p, double timeout_s, int *yes, char *why, size_t n,
                       ac_child_outcome *oc)
{
  const ac_kernel *k = w->k;
  memset(oc, 0, sizeof *oc);
  if (!k->abi || !k->abi->supports || (k->abi->memory == ATTNCHECK_MEM_CUDA && !ac_cuda_built())) return -1;
  if (pthread_mutex_trylock(&w->mu) != 0) return -1;
  disown_inherited(w);
  ac_err e;
  wk_sup q;
  memset(&q, 0, sizeof q);
  q.p = *p;
  int rc = -1;
  if ((w->pid || start(w, &e) == 0) && (w->cap >= sizeof q || ftruncate(w->fd, (off_t)sizeof q) == 0)) {
    if (w->cap < sizeof q) w->cap = sizeof q;
    if (pwrite(w->fd, &q, sizeof q, 0) == (ssize_t)sizeof q && request(w, "s", &e) == 0) {
      await_reply(w, timeout_s, oc);
      rc = 0;
      if (!oc->timed_out && !oc->sig && w->pid && pread(w->fd, &q, sizeof q, 0) == (ssize_t)sizeof q && q.done) {
        oc->exited = 1;
        *yes = q.yes;
        q.why[sizeof q.why - 1] = 0;
        snprintf(why, n, "%s", q.why);
      } else if (!oc->timed_out && !oc->sig) {
        oc->exited = 0;   /* ended without an answer */
        if (!oc->code) oc->code = -1;
      }
    }
  }
  pthread_mutex_unlock(&w->mu);
  return rc;
}

void ac_worker_free(ac_worker *w)
{
  if (!w) return;
  if (w->owner && w->owner != getpid()) {
    /* A forked copy: the worker belongs to another process. */
    if (w->sock >= 0) close(w->sock);
    if (w->fd >= 0) close(w->fd);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return;
  }
  if (w->pid) {
    send(w->sock, "q", 1, MSG_NOSIGNAL);
    reap(w, 2.0, 0, NULL);
  }
  if (w->fd >= 0) close(w->fd);
  pthread_mutex_destroy(&w->mu);
  free(w);
}
