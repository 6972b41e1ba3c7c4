/* exec_dropout.c: the keep-mask an exec kernel returns with its output for a dropout case
 * (docs/dropout.md): member dropout_mask, booleans or bytes [B,H,tq,tk], 1 kept, 0 dropped. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "exec_priv.h"
#include "npz.h"
#include "variants.h"

int ac_exec_read_mask(ac_npz *z, const char *path, const ac_case *c, ac_run_result *r)
{
  const ac_problem *p = &c->p;
  if (!(p->f.used & AC_FEAT_DROPOUT)) return 0;
  ac_npz_member m;
  ac_err e;
  int64_t n = ac_feat_tensor_count(p, AC_FT_DROPOUT_MASK);
  int ok = ac_npz_has(z, "dropout_mask") && ac_npz_read(z, "dropout_mask", &m, &e) == 0 && m.ndim == 4 &&
           m.shape[0] == p->batch && m.shape[1] == p->heads && m.shape[2] == p->tq && m.shape[3] == p->tk &&
           (!strcmp(m.descr, "|b1") || !strcmp(m.descr, "|u1")) && m.nbytes == (size_t)n;
  if (!ok) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg, "%.200s: a dropout case needs member 'dropout_mask', |b1 or |u1 of shape [%lld,%lld,%lld,%lld]",
             path, (long long)p->batch, (long long)p->heads, (long long)p->tq, (long long)p->tk);
    return -1;
  }
  r->dropout_mask = ac_xmalloc((size_t)(n ? n : 1));
  memcpy(r->dropout_mask, m.data, (size_t)n);
  r->mask_count = n;
  for (int64_t x = 0; x < n; x++) r->n_mask_unwritten += r->dropout_mask[x] > 1;
  return 0;
}
