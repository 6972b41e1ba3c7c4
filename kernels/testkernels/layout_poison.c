/* layout_poison.c: `test-paged-poison` checks, on every run of a paged case, the memory a
 * kernel must not read and how it would show if read (docs/layouts.md "The harness"): every
 * block-table entry past a sequence's pages is -1 (out of range), and page -1 and page
 * num_pages of k and v (what an id of -1 or num_pages addresses) hold NaN; then it computes the
 * case as flash-varlen-f32. A run where either does not hold is an error naming it. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include "cpu_varlen.h"
#include "testkernels.h"

static int supports(const attncheck_problem *p, char *why, size_t n)
{
  if (!(p->features & ATTNCHECK_FEAT_PAGED)) {
    snprintf(why, n, "paged caches only");
    return 0;
  }
  return ac_cpu_layout_supports(p, ATTNCHECK_F32, why, n);
}

/* 1 when every element of page pg of the paged tensor x (stride st, d columns) is NaN. */
static int page_nan(const float *x, const int64_t st[4], const attncheck_problem *p, int64_t pg, int64_t d)
{
  for (int64_t s = 0; s < p->page_size; s++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t e = 0; e < d; e++)
        if (!isnan(x[pg * st[0] + s * st[2] + h * st[1] + e * st[3]])) return 0;
  return 1;
}

static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t x = (t->cache_seqlens[b] + p->page_size - 1) / p->page_size; x < p->max_pages; x++)
      if (t->block_table[b * p->max_pages + x] != -1) {
        snprintf(err, n, "block_table[%lld][%lld] = %d past the sequence's pages, not -1", (long long)b, (long long)x,
                 (int)t->block_table[b * p->max_pages + x]);
        return -1;
      }
  const int64_t pages[2] = {-1, p->num_pages};
  for (int w = 0; w < 2; w++) {
    if (!page_nan(t->k, p->k_stride, p, pages[w], p->dk) || !page_nan(t->v, p->v_stride, p, pages[w], p->dv)) {
      snprintf(err, n, "page %lld of k or v (what a block-table id of %lld addresses) holds a value that is not NaN",
               (long long)pages[w], (long long)pages[w]);
      return -1;
    }
  }
  return ac_cpu_layout_run(ATTNCHECK_F32, AC_LBUG_NONE, "test-paged-poison", p, t, err, n);
}

const attncheck_kernel ac_tk_paged_poison = {
    ATTNCHECK_ABI_VERSION,
    sizeof(attncheck_kernel),
    "test-paged-poison",
    "test kernel: flash-varlen-f32 on paged caches after checking that unused block-table entries are -1 and pages -1 "
    "and num_pages of k and v hold NaN",
    "fp32",
    ATTNCHECK_MEM_HOST,
    AC_CPU_LAYOUT_CAPS,
    supports,
    run,
    {NULL, NULL, NULL, NULL},
    NULL,
    0,
    0,
    0,
    0,
    NULL,
     0,
     0, NULL};
