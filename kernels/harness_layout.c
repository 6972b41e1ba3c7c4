/* harness_layout.c: serving layouts at the kernel boundary (docs/layouts.md, ABI 3). */
#include "config.h"
#include "harness.h"
#include <string.h>

/* [token][heads][d] packed strides in the ABI's [batch][head][t][d] order (batch unused). */
static void packed(int64_t heads, int64_t d, int64_t st[4])
{
  st[0] = 0;
  st[1] = d;
  st[2] = heads * d;
  st[3] = 1;
}

void ac_layout_problem_to_abi(const ac_problem *p, attncheck_problem *a)
{
  a->batch = p->l.nseq;
  a->tq = p->l.max_tq;
  a->tk = p->l.max_tk;
  a->total_q = p->tq;
  a->total_k = p->tk;
  packed(p->heads, p->dk, a->q_stride);
  packed(p->heads, p->dv, a->o_stride);
  packed(p->kv_heads, p->dk, a->k_stride);
  packed(p->kv_heads, p->dv, a->v_stride);
  if (p->f.used & AC_FEAT_PAGED) {
    a->page_size = p->l.page_size;
    a->num_pages = p->l.num_pages;
    a->max_pages = p->l.max_pages;
    a->k_stride[0] = p->l.page_size * p->kv_heads * p->dk;
    a->v_stride[0] = p->l.page_size * p->kv_heads * p->dv;
  }
}
