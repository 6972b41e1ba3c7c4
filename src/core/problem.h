/* problem.h: the shape of one attention problem, masks, strides, and guarded tensors. */
#ifndef AC_PROBLEM_H
#define AC_PROBLEM_H
#include <stddef.h>
#include <stdint.h>
#include "dtype.h"
#include "util.h"

/* Same numbering as the ABI's ATTNCHECK_MASK_... */
typedef enum { AC_MASK_NONE = 0, AC_MASK_CAUSAL = 1, AC_MASK_CAUSAL_BR = 2 } ac_mask;

/* Attention variants (docs/variants.md; same bits as the ABI's ATTNCHECK_FEAT_...). A plain case
 * uses none: f.used == 0 and every other field of ac_features is ignored. */
enum {
  AC_FEAT_WINDOW = 1u << 0,       /* sliding window f.win_left, f.win_right (-1 = unbounded) */
  AC_FEAT_SOFTCAP = 1u << 1,      /* s = c tanh(s / c), c = f.softcap > 0 */
  AC_FEAT_ALIBI = 1u << 2,        /* s -= m_h |i + tk - tq - j|, binary32 slopes in the case */
  AC_FEAT_BIAS = 1u << 3,         /* s += bias[b][h][i][j], dtype f.bias_dtype, broadcast over B/H */
  AC_FEAT_BOOL_MASK = 1u << 4,    /* visible only where bool_mask[b][h][i][j] is 1 */
  AC_FEAT_SINKS = 1u << 5,        /* e^{sink_h} joins the denominator and the LSE */
  AC_FEAT_MIXED_DTYPES = 1u << 6, /* f.qd, f.kd, f.vd, f.od differ from dtype */
  AC_FEAT_DESCALE = 1u << 7,      /* q, k, v values times binary32 descales per (batch, kv head) */
  AC_FEAT_ALL = 0xffu,
  /* Serving layouts (docs/layouts.md, src/layout.h): not variants of the formula but of the
   * memory a kernel reads; outside AC_FEAT_ALL. */
  AC_FEAT_VARLEN = 1u << 8,       /* packed sequences, cu_seqlens for queries and keys */
  AC_FEAT_PAGED = 1u << 9,        /* packed queries, keys and values in a paged cache */
  AC_FEAT_LAYOUTS = AC_FEAT_VARLEN | AC_FEAT_PAGED,
  /* Dropout with the kernel's own keep-mask (docs/dropout.md): normalized weights times the mask
   * and 1 / (1 - p); a kernel returns its mask with its output. Outside AC_FEAT_ALL. */
  AC_FEAT_DROPOUT = 1u << 10,     /* f.dropout_p, f.dropout_seed; the case's dropout_mask [B][H][tq][tk] */
  AC_FEAT_KNOWN = AC_FEAT_ALL | AC_FEAT_LAYOUTS | AC_FEAT_DROPOUT,
  /* Quantized tensors beyond the first ABI 5 description (src/core/quant.h, docs/quantized.md):
   * derived from p.quant by ac_quant_features for the ABI's problem.features and a kernel's caps,
   * never set in f.used. */
  AC_FEAT_QUANT_STORE = 1u << 11,  /* a tensor the kernel quantizes itself (quantize-on-store) */
  AC_FEAT_QUANT_LAYOUT = 1u << 12  /* group or tile scales on int and fp8, token groups, scale and
                                      zero dtypes, packed codes, int2 and uint8 */
};

typedef struct {
  uint32_t used;                  /* AC_FEAT_... */
  ac_dtype qd, kd, vd, od;        /* per-tensor dtypes; each = dtype unless AC_FEAT_MIXED_DTYPES */
  int win_top_left;               /* window alignment: 0 bottom-right (FlashAttention), 1 top-left */
  int64_t win_left, win_right;    /* -1 = unbounded */
  double softcap;                 /* > 0 and finite with AC_FEAT_SOFTCAP */
  int alibi_per_batch;            /* slopes [batch][heads] (1) or [heads] (0) */
  ac_dtype bias_dtype;
  int64_t bias_b, bias_h;         /* stored extents of bias over batch and heads: 1 (broadcast) or B / H */
  int64_t mask_b, mask_h;         /* the same for bool_mask */
  double dropout_p;               /* AC_FEAT_DROPOUT: a binary32 value in [0, 1) (as FlashAttention takes it) */
  uint64_t dropout_seed;          /* AC_FEAT_DROPOUT: the seed a kernel draws its mask from */
} ac_features;

/* A quantized tensor (src/core/quant.h, docs/quantized.md): fmt an AC_QF_ format (0: the tensor is
 * not quantized), gran an AC_QG_ granularity, block the elements per scale along d (block
 * granularity; 0 otherwise); the fields after block are 0 for what the first formats had. */
typedef struct {
  int32_t fmt, gran;
  int64_t block;
  int64_t tgroup;   /* tokens per scale: 0 the granularity's own; G > 1 groups of G tokens (block:
                       G x block tiles; channel: per channel over G tokens) */
  int32_t sdtype;   /* the scales' dtype + 1 (AC_QSD_...); 0: the format's */
  int32_t zdtype;   /* the zero points' dtype + 1 (int formats); 0: the format's integer */
  int32_t pack;     /* AC_QPACK_...: how a case file and a kernel hold the codes */
  int32_t store;    /* a quantize-on-store tensor's quantizer (AC_QST_..., quant.h); 0: none */
  int32_t rounded;  /* derived when its values are decoded: some value is the binary64 rounding of
                       its exact one (a float zero point) */
  double mins_max;  /* derived when decoded: the largest |min| of a q4_1 or q5_1 tensor (inf for a
                       non-finite one; 0 for other formats) */
  double zs_max;    /* derived when decoded: the largest |z s| of a group (zero point times scale; a q4_1 or
                       q5_1 min), inf for a non-finite one; 0 for formats without either (dq=f32) */
} ac_qspec;

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
  ac_features f;                    /* variants; f.used == 0 for plain attention */
  /* Serving layouts (f.used & AC_FEAT_LAYOUTS; src/layout.h): the dimensions a kernel is told.
   * All zero for a dense problem. The case's tensors are then one carrier batch (batch 1,
   * tq = total query tokens, tk = total keys or num_pages * page_size). */
  struct { int64_t nseq, max_tq, max_tk, page_size, num_pages, max_pages; } l;
  /* Quantized tensors q, k, v (all fmt 0: none): the case holds their codes and scales
   * (ac_case.quant) and their exact values in binary64 (ac_tensor_dtype answers AC_F64). */
  ac_qspec quant[3];
} ac_problem;

/* Columns of a row of the bias and boolean mask: tk for a dense problem; for a layout case the
 * longest sequence's keys (max_tk): key j of sequence b's row i is column j of carrier row
 * cu_q[b] + i (docs/layouts.md). */
static inline int64_t ac_bias_cols(const ac_problem *p)
{ return (p->f.used & AC_FEAT_LAYOUTS) ? p->l.max_tk : p->tk; }

const char *ac_mask_name(ac_mask m);            /* "none", "causal", "causal-bottom-right" */
int ac_mask_parse(const char *s, ac_mask *out); /* also accepts "causal-br", "bottom-right"; -1 if unknown */

/* Key j inside the sliding window of query i (1 without AC_FEAT_WINDOW). */
static inline int ac_in_window(const ac_problem *p, int64_t i, int64_t j) {
  if (!(p->f.used & AC_FEAT_WINDOW)) return 1;
  int64_t c = i + (p->f.win_top_left ? 0 : p->tk - p->tq);
  return (p->f.win_left < 0 || j >= c - p->f.win_left) && (p->f.win_right < 0 || j <= c + p->f.win_right);
}
/* LSE conventions under ALiBi with a causal mask (docs/variants.md "ALiBi and the LSE"): the ABI's, and
 * FlashAttention-2's (+m_h j, an LSE larger by m_h (i + tk - tq)); DECLARED: what the kernel declares. */
enum { AC_ALIBI_LSE_DECLARED = -1, AC_ALIBI_LSE_ABI = 0, AC_ALIBI_LSE_FA2 = 1 };
/* "abi" or "fa2" into *out; -1 for anything else. */
int ac_alibi_lse_parse(const char *s, int *out);
/* ALiBi distance |i + tk - tq - j| (always bottom-right, as FlashAttention). */
static inline int64_t ac_alibi_dist(const ac_problem *p, int64_t i, int64_t j) {
  int64_t d = i + p->tk - p->tq - j;
  return d < 0 ? -d : d;
}

/* Key j visible to query i (DESIGN.md semantics). */
static inline int ac_visible(const ac_problem *p, int64_t i, int64_t j) {
  switch (p->mask) {
  case AC_MASK_CAUSAL: return j <= i;
  case AC_MASK_CAUSAL_BR: return j <= i + p->tk - p->tq;
  default: return 1;
  }
}
/* Number of visible keys of row i by the mask alone; those keys are a prefix [0, n). Windows
 * and boolean masks (p->f) narrow it further: see ac_in_window and the case's bool_mask. */
int64_t ac_visible_count(const ac_problem *p, int64_t i);
/* Keys [*lo, *hi) that row i sees by the mask and the window (the boolean mask aside); empty
 * when *lo >= *hi. Both bounds are non-decreasing in i. */
void ac_visible_range(const ac_problem *p, int64_t i, int64_t *lo, int64_t *hi);
/* Dtype of tensor x ('q', 'k', 'v' or 'o'): its own with AC_FEAT_MIXED_DTYPES, else dtype; binary64
 * for a quantized tensor (its dense array holds the exact values of its codes). */
/* 1 when tensor x ('q', 'k', 'v') is quantized; ac_problem_quantized: some tensor is. */
static inline int ac_tensor_quantized(const ac_problem *p, char x)
{
  int i = x == 'q' ? 0 : x == 'k' ? 1 : x == 'v' ? 2 : -1;
  return i >= 0 && p->quant[i].fmt != 0;
}
static inline int ac_problem_quantized(const ac_problem *p)
{
  return p->quant[0].fmt != 0 || p->quant[1].fmt != 0 || p->quant[2].fmt != 0;
}
static inline ac_dtype ac_tensor_dtype(const ac_problem *p, char x)
{
  if (ac_tensor_quantized(p, x)) return AC_F64;   /* the exact values of its codes */
  if (!(p->f.used & AC_FEAT_MIXED_DTYPES)) return p->dtype;
  return x == 'q' ? p->f.qd : x == 'k' ? p->f.kd : x == 'v' ? p->f.vd : p->f.od;
}
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
