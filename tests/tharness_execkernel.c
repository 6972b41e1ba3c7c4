/* tharness_execkernel: a kernel as a command, for the exec: tests.
 * usage: tharness_execkernel MODE IN OUT
 * MODE: ok (o and lse), nolse, fail (message, exit 4), crash (SIGSEGV), hang, badshape (o of shape
 * [B,H,1,tq*dv]), badlse (lse of shape [B,H*tq]), noout. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "casefile.h"
#include "harness.h"
#include "npz.h"
#include "testkernels/testkernels.h"

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
  char err[256];
  if (ac_tk_reference(&a, &t, 0, err, sizeof err)) {
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
