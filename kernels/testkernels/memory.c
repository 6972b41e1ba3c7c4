/* memory.c: test kernels that write where they must not, or not where they must
 * (GUARD, UNWRITTEN). Each is otherwise the correct reference. */
#include "config.h"
#include "testkernels.h"
#include <string.h>

/* Elements spanned by a strided tensor. */
static int64_t span(int64_t B, int64_t H, int64_t T, int64_t D, const int64_t s[4])
{
  return 1 + (B - 1) * s[0] + (H - 1) * s[1] + (T - 1) * s[2] + (D - 1) * s[3];
}

static size_t esize(int32_t dtype)
{
  switch (dtype) {
  case ATTNCHECK_F64: return 8;
  case ATTNCHECK_F32: return 4;
  case ATTNCHECK_F16: case ATTNCHECK_BF16: return 2;
  default: return 1;
  }
}

/* One element past the last one of o: the first element of the harness's guard. */
static int run_guard(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int rc = ac_tk_reference(p, t, 0, err, n);
  size_t es = esize(p->dtype);
  int64_t past = span(p->batch, p->heads, p->tq, p->dv, p->o_stride);
  memset((char *)t->o + (size_t)past * es, 0, es);
  return rc;
}

/* Writes into q (an input) after computing the right answer. */
static int run_input_write(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int rc = ac_tk_reference(p, t, 0, err, n);
  memset((void *)t->q, 0, esize(p->dtype));
  return rc;
}

/* Leaves the last output element (and the last lse element) as it found them. */
static int run_unwritten(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  size_t es = esize(p->dtype);
  int64_t last = ac_tk_off(p->o_stride, p->batch - 1, p->heads - 1, p->tq - 1, p->dv - 1);
  unsigned char keep[8];
  memcpy(keep, (char *)t->o + (size_t)last * es, es);
  float keep_lse = 0;
  int64_t rows = p->batch * p->heads * p->tq;
  if (t->lse) keep_lse = t->lse[rows - 1];
  int rc = ac_tk_reference(p, t, 0, err, n);
  memcpy((char *)t->o + (size_t)last * es, keep, es);
  if (t->lse) t->lse[rows - 1] = keep_lse;
  return rc;
}

/* Ignores the strides it is handed and treats every tensor as contiguous. */
static int run_dense_only(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  attncheck_problem d = *p;
  d.q_stride[3] = d.k_stride[3] = d.v_stride[3] = d.o_stride[3] = 1;
  d.q_stride[2] = d.k_stride[2] = p->dk;
  d.v_stride[2] = d.o_stride[2] = p->dv;
  d.q_stride[1] = p->tq * p->dk;
  d.k_stride[1] = p->tk * p->dk;
  d.v_stride[1] = p->tk * p->dv;
  d.o_stride[1] = p->tq * p->dv;
  d.q_stride[0] = p->heads * d.q_stride[1];
  d.k_stride[0] = p->kv_heads * d.k_stride[1];
  d.v_stride[0] = p->kv_heads * d.v_stride[1];
  d.o_stride[0] = p->heads * d.o_stride[1];
  return ac_tk_reference(&d, t, 0, err, n);
}

#define TK(var, nm, desc, fn) \
  const attncheck_kernel var = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), nm, desc, NULL, \
                                ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, fn, {NULL, NULL, NULL, NULL}, \
                                NULL, 0, 0, 0, 0, NULL, 0, 0, NULL}

TK(ac_tk_guard, "test-guard", "test kernel: correct, then writes one element past o (GUARD)", run_guard);
TK(ac_tk_input_write, "test-input-write", "test kernel: correct, then overwrites q[0] (GUARD)", run_input_write);
TK(ac_tk_unwritten, "test-unwritten", "test kernel: correct except the last o and lse elements are never written (UNWRITTEN)",
   run_unwritten);
TK(ac_tk_dense_only, "test-dense-only",
   "test kernel: ignores the strides and treats every tensor as contiguous (GUARD / UNWRITTEN on strided cases)",
   run_dense_only);
