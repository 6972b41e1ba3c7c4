/* problem.h: the shape of one attention problem, masks, strides, and guarded tensors. */
#ifndef AC_PROBLEM_H
#define AC_PROBLEM_H
#include <stddef.h>
#include <stdint.h>
#include "dtype.h"
#include "util.h"

/* Same numbering as the ABI's ATTNCHECK_MASK_... */
typedef enum { AC_MASK_NONE = 0, AC_MASK_CAUSAL = 1, AC_MASK_CAUSAL_BR = 2 } ac_mask;

typedef struct {
  ac_dtype dtype;
  ac_mask mask;
  int64_t batch, heads, kv_heads;   /* heads % kv_heads == 0 */
  int64_t tq, tk, dk, dv;
  int scale_is_default;             /* 1: the exact real 1/sqrt(dk) */
  double scale;                     /* the stored finite scale; when default, the binary64 rounding of 1/sqrt(dk) */
  /* Layout presented to kernels, in elements, for [batch][head][t][d].
   * All zero = contiguous. The case itself always stores dense tensors. */
  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];
} ac_problem;

const char *ac_mask_name(ac_mask m);            /* "none", "causal", "causal-bottom-right" */
int ac_mask_parse(const char *s, ac_mask *out); /* also accepts "causal-br", "bottom-right"; -1 if unknown */

/* Key j visible to query i (DESIGN.md semantics). */
static inline int ac_visible(const ac_problem *p, int64_t i, int64_t j) {
  switch (p->mask) {
  case AC_MASK_CAUSAL: return j <= i;
  case AC_MASK_CAUSAL_BR: return j <= i + p->tk - p->tq;
  default: return 1;
  }
}
/* Number of visible keys of row i; the visible keys are always a prefix [0, n). */
int64_t ac_visible_count(const ac_problem *p, int64_t i);
/* kv head read by query head h. */
static inline int64_t ac_kv_head(const ac_problem *p, int64_t h) { return h / (p->heads / p->kv_heads); }

/* Dense element counts: q = B*H*tq*dk, k = B*KVH*tk*dk, v = B*KVH*tk*dv, o = B*H*tq*dv, rows = B*H*tq. */
typedef struct { int64_t q, k, v, o, rows; } ac_counts;
/* Validates sizes (all >= 1, heads % kv_heads == 0, finite scale, products without overflow,
 * total bytes <= cap_bytes) and the strides (non-overlapping, covering). -1 with message otherwise. */
int ac_problem_validate(const ac_problem *p, uint64_t cap_bytes, ac_err *e);
int ac_problem_counts(const ac_problem *p, ac_counts *c, ac_err *e);
/* Fill strides for the contiguous layout when they are all zero (per tensor; the strided
 * helpers below also read all-zero strides as contiguous). */
void ac_problem_default_strides(ac_problem *p);
/* Scale as binary64 (the rounding of 1/sqrt(dk) when default). */
double ac_problem_scale(const ac_problem *p);
/* Parses a stored scale: a finite hex float ("0x1.8p-3", signed, zero allowed) whose value
 * binary64 holds exactly. -1 with a one-line message ("scale '...' ...") for anything else,
 * for a value with more significant bits than binary64 has, or a non-zero value that
 * underflows to 0: a stored scale is never rounded. */
int ac_scale_parse_hex(const char *s, double *out, ac_err *e);
/* Memory cap in bytes for cases (default 8 GiB; ATTNCHECK_MEM_CAP or --mem-cap override). */
uint64_t ac_mem_cap(void);
void ac_set_mem_cap(uint64_t bytes);   /* 0: back to ATTNCHECK_MEM_CAP or the default */

/* A tensor with NaN-filled guard margins of `guard` elements on each side. */
typedef struct {
  ac_dtype dtype;
  void *alloc;       /* start of the allocation (guard included) */
  void *data;        /* first element */
  size_t n;          /* elements in the strided span */
  size_t guard;      /* elements before and after */
} ac_guarded;

/* Allocate span n with guards, everything (span included) filled with NaN of dtype. */
int ac_guarded_alloc(ac_guarded *g, ac_dtype t, size_t n, size_t guard, ac_err *e);
/* 1 when both margins still hold the NaN pattern. */
int ac_guarded_intact(const ac_guarded *g);
void ac_guarded_free(ac_guarded *g);
/* The canonical NaN bit pattern of a dtype (what guards and pre-filled outputs hold). */
uint64_t ac_nan_bits(ac_dtype t);

/* Copy a dense [b][h][t][d] tensor into a strided span (gaps keep their NaN). */
void ac_scatter_strided(ac_dtype t, const void *dense, int64_t B, int64_t H, int64_t T, int64_t D,
                        const int64_t stride[4], void *dst);
void ac_gather_strided(ac_dtype t, const void *src, int64_t B, int64_t H, int64_t T, int64_t D,
                       const int64_t stride[4], void *dense);
/* Elements spanned by a strided [B][H][T][D] tensor: 1 + Σ (dim-1)*stride. */
int64_t ac_strided_span(int64_t B, int64_t H, int64_t T, int64_t D, const int64_t stride[4]);

#endif
