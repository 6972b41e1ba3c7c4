/* cpu_varlen.h: the CPU kernels of the serving layouts (cpu_varlen.c; docs/layouts.md), and the
 * defects the layout mutants (kernels/mutants/layout_mutants.c) build into the same code. */
#ifndef AC_CPU_VARLEN_H
#define AC_CPU_VARLEN_H
#include "cpu_backward.h"
#include "cpu_common.h"

enum {
  AC_LBUG_NONE = 0,
  AC_LBUG_CU_OFF_BY_ONE,     /* varlen: tk_b = cu_k[b+1] - cu_k[b] + 1 (one key of the next sequence) */
  AC_LBUG_PREV_BOUNDARY,     /* the key count of the previous sequence (b - 1) used for b */
  AC_LBUG_LAST_PAGE_WHOLE,   /* paged: the last partial page read whole, its extra slots masked
                                after P·V (a NaN there still leaks) */
  AC_LBUG_WRONG_TABLE_ROW,   /* paged: block-table row b read at b * (max_pages - 1) */
  AC_LBUG_ZERO_LENGTH,       /* a sequence without keys reads one key (its first slot) */
  AC_LBUG_PAGE_COUNT,        /* paged: cache_seqlens ignored, tk_b = its pages * page_size */
  AC_LBUG_BIAS_LOCAL_ROW,    /* bias and boolean mask row i of sequence b read at carrier row i
                                (sequence 0's rows), not cu_q[b] + i (test kernel) */
  AC_LBUG_LAST_PAGE_GQA64,   /* paged: AC_LBUG_LAST_PAGE_WHOLE only with page_size 64 and GQA
                                (heads > kv_heads), the path such a kernel specializes */
  AC_LBUG_BLOCK_ID_U16,      /* paged: block-table entries read as 16-bit page ids */
  AC_LBUG_PAGE_PAST_END      /* paged: cache_seqlens / page_size + 1 pages walked: a length that fills
                                its last page reads the block-table entry after it (-1, or the next
                                row's first) and that page's slots, masked only after P·V */
};

/* Flash-style varlen / paged attention (a tiled online softmax per row) on dtype dt (f32, or
 * bf16 with P rounded to bf16 before P·V), with the defect bug. */
int ac_cpu_layout_run(int dt, int bug, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                      char *err, size_t err_len);
/* The window, softcap, ALiBi, bias, boolean mask and sinks with the layouts; a dense case is not
 * theirs. */
#define AC_CPU_LAYOUT_CAPS                                                                                   \
  (ATTNCHECK_FEAT_VARLEN | ATTNCHECK_FEAT_PAGED | ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP |             \
   ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_BIAS | ATTNCHECK_FEAT_BOOL_MASK | ATTNCHECK_FEAT_SINKS)
int ac_cpu_layout_supports(const attncheck_problem *p, int dt, char *why, size_t why_len);

/* The backward of the varlen kernels (cpu_varlen_bwd.c): each sequence through the dense
 * FlashAttention-2 backward (cpu_backward.c) on dtype dt, with the defect bug (0 or below). */
enum { AC_VBWD_CU_K_OFF_BY_ONE = 1 };   /* tk_b + 1 keys in the backward (the next sequence's first) */
int ac_cpu_varlen_backward(int dt, int bug, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                           const attncheck_grad_tensors *g, char *err, size_t err_len);
/* What that backward takes: the dense backward's features, and varlen batches (not paged ones). */
#define AC_CPU_VARLEN_BWD_CAPS (AC_BWD_CAPS | ATTNCHECK_FEAT_VARLEN)

#endif
