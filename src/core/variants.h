/* variants.h: the variant inputs of a case (docs/variants.md): sizes, lifecycle, validation.
 * A plain case (p.f.used == 0) has none of them, and everything here is a no-op for it. */
#ifndef AC_VARIANTS_H
#define AC_VARIANTS_H
#include "casefile.h"

/* The variant tensors of a case, in a fixed order (meta.json / NPZ member names in ac_feat_tensor_name). */
typedef enum { AC_FT_BIAS = 0, AC_FT_BOOL_MASK, AC_FT_SLOPES, AC_FT_SINKS, AC_FT_DESCALE_Q, AC_FT_DESCALE_K,
               AC_FT_DESCALE_V, AC_FT_DROPOUT_MASK, AC_FT_N } ac_feat_tensor;

/* "bias", "mask", "alibi_slopes", "sinks", "descale_q", "descale_k", "descale_v", "dropout_mask". */
const char *ac_feat_tensor_name(ac_feat_tensor t);
/* The feature bit a tensor belongs to. */
uint32_t ac_feat_tensor_bit(ac_feat_tensor t);
/* Shape (up to 4 dimensions) and element size of tensor t for problem p; ndim 0 when p does not use it. */
int ac_feat_tensor_shape(const ac_problem *p, ac_feat_tensor t, int64_t shape[4], size_t *elem_size);
/* Elements of tensor t (0 when unused). */
int64_t ac_feat_tensor_count(const ac_problem *p, ac_feat_tensor t);
/* Bytes of tensor t (0 when unused, UINT64_MAX when the size overflows). */
uint64_t ac_feat_tensor_bytes(const ac_problem *p, ac_feat_tensor t);
/* Pointer slot of tensor t inside the case. */
void **ac_feat_tensor_slot(ac_case *c, ac_feat_tensor t);

/* Canonical names of the feature bits ("window", "softcap", ...); NULL for an unknown bit. */
const char *ac_feat_name(uint32_t bit);
/* Comma list of the bits in `used` ("" for none) into buf. */
const char *ac_feat_list(uint32_t used, char *buf, size_t n);

/* Fields of p.f that make no sense (softcap not > 0 or not finite, window values below -1,
 * broadcast extents other than 1 or the full size, dtypes a tensor cannot have, a dropout p that
 * is not a binary32 value in [0, 1) or dropout with a serving layout, unknown bits): -1 with one
 * line naming the field. Plain problems pass. */
int ac_features_validate(const ac_problem *p, ac_err *e);
/* The per-tensor dtypes of a case with AC_FEAT_MIXED_DTYPES: each known, q, k and v within
 * the compute dtype p.dtype (ac_dtype_within: the class of p.dtype judges them, with no term
 * for rounding an input). -1 with one line naming the field (variants.dtypes.k ...). 0
 * without the bit. */
int ac_features_dtypes_check(const ac_problem *p, ac_err *e);
/* 0 when p is a dropout probability a case can hold: a binary32 value in [0, 1) (FlashAttention's
 * float p; 1 would drop every weight); -1 with one line otherwise. */
int ac_dropout_p_check(double p, ac_err *e);
/* Sets the per-tensor dtypes d = {q, k, v, o} of p (p.f plain first when no variant is used):
 * AC_FEAT_MIXED_DTYPES when one differs from p.dtype, none otherwise; then
 * ac_features_dtypes_check. Before the tensors are allocated (each is stored in its dtype). */
int ac_features_set_dtypes(ac_problem *p, const ac_dtype d[4], ac_err *e);
/* Fills p.f for a plain problem: used 0, per-tensor dtypes = dtype, window unbounded, bias
 * and mask extents 1. */
void ac_features_plain(ac_problem *p);
/* Bytes of every variant tensor of p together (0 for a plain problem). */
uint64_t ac_features_bytes(const ac_problem *p);
/* Allocate (zero-filled) the variant tensors p.f.used names that are still NULL. */
int ac_features_alloc(ac_case *c, ac_err *e);
void ac_features_free(ac_case *c);
/* Deep-copies src's variant tensors into dst (dst's pointers are overwritten, not freed). */
void ac_features_copy(ac_case *dst, const ac_case *src);

/* Score transformation after s = scale * d (softcap, ALiBi, bias) for key j of row (b, h, i),
 * in binary64 (NOT exact: for kernels' reference paths and tests, never for the oracle's
 * decisions). Returns -inf when the key is not visible (mask, window, boolean mask). */
double ac_features_score_f64(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j, double s);
/* ALiBi slope of (batch b, head h) as a binary64 (0 without ALiBi). */
double ac_features_slope(const ac_case *c, int64_t b, int64_t h);
/* Visibility of key j to row (b, h, i): the mask, the window and the boolean mask. */
int ac_features_visible(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t j);

#endif
