/* nondeterministic.c: `test-nondeterministic`, the correct reference with the last bit of
 * each of the first 32 output elements flipped by one bit of a key that differs on every
 * run (NONDETERMINISTIC, while every element stays within 1.5 ulps: no FAIL). The key mixes
 * the process id (each forked run has its own) and a per-process counter (each run in one
 * process, such as a persistent worker, has its own), so two runs never agree on all 32
 * bits when the output has at least 32 elements. */
#include "config.h"
#include "testkernels.h"
#include <unistd.h>
#include "dtype.h"

static unsigned runs;

static int run_nondet(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  int rc = ac_tk_reference(p, t, 0, err, n);
  uint32_t key = (uint32_t)getpid() ^ (++runs * 0x9E3779B9u);
  int64_t count = p->batch * p->heads * p->tq * p->dv;
  /* Element e of the dense order gets bit e of the key in its lowest bit. */
  for (int e = 0; e < 32; e++) {
    int64_t idx = e % count, d = idx % p->dv, r = idx / p->dv;
    int64_t i = r % p->tq, h = (r / p->tq) % p->heads, b = r / (p->tq * p->heads);
    size_t off = (size_t)ac_tk_off(p->o_stride, b, h, i, d);
    uint64_t bits = ac_load_bits((ac_dtype)p->dtype, t->o, off);
    ac_store_bits((ac_dtype)p->dtype, t->o, off, bits ^ ((key >> e) & 1));
  }
  return rc;
}

const attncheck_kernel ac_tk_nondeterministic = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-nondeterministic",
  "test kernel: correct up to last bits that change on every run (NONDETERMINISTIC)",
  NULL, ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, run_nondet, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
