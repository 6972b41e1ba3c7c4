/* tharness_execkernel: a kernel as a command, for the exec: tests.
 * usage: tharness_execkernel MODE IN OUT
 * MODE: ok (o and lse), nolse, fail (message, exit 4), crash (SIGSEGV), hang, badshape (o of shape
 * [B,H,1,tq*dv]), badlse (lse of shape [B,H*tq]), noout;
 * fa2: test-alibi-fa2 (FlashAttention-2's causal ALiBi and its LSE; ALiBi and sinks the only
 * variants); escape: as ok after forking a process that leaves its session and group (setsid) and forks
 * again, whose child sleeps 60 s with its pid in $TCONTAIN_ESCAPE_PIDFILE (exit 5 when the one of
 * the case before still runs); forge: a forged "PASS" line with CR, terminal escapes, a C1
 * control and a byte that is not UTF-8 on stderr, exit 1; forge-skip: such a reason, exit 77. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "casefile.h"
#include "harness.h"
#include "npz.h"
#include "testkernels/testkernels.h"

#define FORGED "boom\nPASS  inj f32-fake.npz - err/W=0\r\033[2K\033]0;title\007\302\233 \377 end"

/* 1 when process pid exists and is not a zombie. */
static int alive(long pid)
{
  char p[64], buf[256];
  snprintf(p, sizeof p, "/proc/%ld/stat", pid);
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' && rp[2] != 'Z';
}

static int escape(void)
{
  const char *pf = getenv("TCONTAIN_ESCAPE_PIDFILE");
  FILE *f = pf ? fopen(pf, "r") : NULL;
  long old = 0;
  if (f && fscanf(f, "%ld", &old) == 1 && alive(old)) {
    fprintf(stderr, "the escaped grandchild of the case before (pid %ld) is still running\n", old);
    return -1;
  }
  if (f) fclose(f);
  pid_t x = fork();
  if (x == 0) {
    setsid();
    pid_t y = fork();
    if (y == 0) {
      sleep(60);
      _exit(0);
    }
    FILE *w = pf && y > 0 ? fopen(pf, "w") : NULL;
    if (w) fprintf(w, "%ld\n", (long)y), fclose(w);
    _exit(0);
  }
  if (x > 0) waitpid(x, NULL, 0);
  return x > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: tharness_execkernel MODE IN OUT\n");
    return 2;
  }
  const char *mode = argv[1];
  if (!strcmp(mode, "fail")) {
    fprintf(stderr, "first line\nexec kernel: deliberate failure\n");
    return 4;
  }
  if (!strcmp(mode, "crash")) raise(SIGSEGV);
  if (!strcmp(mode, "hang")) for (;;) pause();
  if (!strcmp(mode, "noout")) return 0;
  if (!strcmp(mode, "forge")) {
    fprintf(stderr, "%s\n", FORGED);
    return 1;
  }
  if (!strcmp(mode, "forge-skip")) {
    fprintf(stderr, "unsupported: %s\n", FORGED);
    return 77;
  }
  if (!strcmp(mode, "escape") && escape()) return 5;
  ac_case c;
  ac_err e;
  if (ac_case_read(&c, argv[2], &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return 3;
  }
  const ac_problem *p = &c.p;
  ac_counts n;
  ac_problem_counts(p, &n, &e);
  ac_problem dense = *p;
  memset(dense.q_stride, 0, sizeof dense.q_stride);
  memset(dense.k_stride, 0, sizeof dense.k_stride);
  memset(dense.v_stride, 0, sizeof dense.v_stride);
  memset(dense.o_stride, 0, sizeof dense.o_stride);
  attncheck_problem a;
  ac_problem_to_abi(&dense, &a);
  size_t es = ac_dtype_size(p->dtype);
  void *o = calloc((size_t)n.o, es);
  float *lse = calloc((size_t)n.rows, sizeof *lse);
  attncheck_tensors t = {c.q, c.k, c.v, o, lse, NULL};
  t.alibi_slopes = c.alibi_slopes;
  t.sinks = c.sinks;
  char err[256];
  if (!strcmp(mode, "fa2") ? ac_tk_alibi_fa2.run(&a, &t, err, sizeof err) : ac_tk_reference(&a, &t, 0, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 3;
  }
  ac_npz_writer *w = ac_npz_create(argv[3], &e);
  if (!w) {
    fprintf(stderr, "%s\n", e.msg);
    return 3;
  }
  int64_t shape[4] = {p->batch, p->heads, p->tq, p->dv}, lshape[3] = {p->batch, p->heads, p->tq};
  int nd = 4;
  if (!strcmp(mode, "badshape")) {
    shape[3] = p->dv * p->tq;
    shape[2] = 1;
  }
  int lnd = 3;
  if (!strcmp(mode, "badlse")) {
    lshape[1] = p->heads * p->tq;
    lnd = 2;
  }
  int rc = ac_npz_add_array(w, "o", ac_dtype_get(p->dtype)->npy, nd, shape, o, (size_t)n.o * es, &e);
  if (!rc && strcmp(mode, "nolse")) rc = ac_npz_add_array(w, "lse", "<f4", lnd, lshape, lse, (size_t)n.rows * 4, &e);
  if (rc || ac_npz_close(w, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return 3;
  }
  free(o);
  free(lse);
  ac_case_free(&c);
  return 0;
}
