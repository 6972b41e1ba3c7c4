/* nondeterministic.c: `test-nondeterministic`, the correct reference plus a perturbation
 * of the low bits of the first output elements that differs on every run (NONDETERMINISTIC):
 * the key mixes the process id (each forked run has its own) and a per-process counter
 * (each run in one process has its own), so two runs never agree on all 32 key bits. */
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
  /* Element e of the dense order gets nibble e of the key in its lowest 4 bits. */
  for (int e = 0; e < 8; e++) {
    int64_t idx = e % count, d = idx % p->dv, r = idx / p->dv;
    int64_t i = r % p->tq, h = (r / p->tq) % p->heads, b = r / (p->tq * p->heads);
    size_t off = (size_t)ac_tk_off(p->o_stride, b, h, i, d);
    uint64_t bits = ac_load_bits((ac_dtype)p->dtype, t->o, off);
    ac_store_bits((ac_dtype)p->dtype, t->o, off, bits ^ ((key >> (4 * e)) & 0xf));
  }
  return rc;
}

const attncheck_kernel ac_tk_nondeterministic = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-nondeterministic",
  "test kernel: correct up to a few low-order bits that change on every run (NONDETERMINISTIC)",
  NULL, ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, run_nondet, {NULL, NULL, NULL, NULL}};
