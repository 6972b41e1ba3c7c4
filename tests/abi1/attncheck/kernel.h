/* tests/abi1/attncheck/kernel.h: the kernel ABI header of version 1, frozen as released
 * (attncheck 0.1.0 before ABI 2), so that make check builds a version 1 plugin from it
 * (tests/abi1/myplugin_v1.c, the example plugin of that release) and proves that attncheck
 * still loads and runs it. Not to be edited. The original text follows. */
/* attncheck_kernel.h — the attncheck kernel ABI, version 1 (installed as <attncheck/kernel.h>).
 *
 * A kernel under test is one attncheck_kernel value. A plugin is a shared object that
 * exports attncheck_plugin_kernels(); nothing else from attncheck is needed to write one.
 *
 * Tensors are [batch][head][t][d] with element strides given in the problem; q, k, v and
 * o share one dtype. The harness owns every buffer: inputs and outputs carry NaN-filled
 * guard margins, the output is pre-filled with NaN, and each run happens in a forked
 * child with a time limit. A kernel must write every o element of the problem (and every
 * lse element when lse is non-NULL) and nothing outside them.
 *
 * Semantics: o[b][h][i] = softmax over visible keys j of scale * q[b][h][i]·k[b][kvh][j],
 * weighted sum of v[b][kvh][j], with kvh = h / (heads / kv_heads).
 *   ATTNCHECK_MASK_NONE: every key visible;
 *   ATTNCHECK_MASK_CAUSAL: key j visible to query i iff j <= i (top-left aligned);
 *   ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT: iff j <= i + tk - tq (FlashAttention >= 2.1).
 * lse, when requested, is ln Σ_j exp(s_ij) over visible keys. A row with no visible key
 * has o = 0 and lse = -inf or +inf by default (see attncheck's --empty-rows). */
#ifndef ATTNCHECK_KERNEL_H
#define ATTNCHECK_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNCHECK_ABI_VERSION 1

enum { ATTNCHECK_F64 = 0, ATTNCHECK_F32 = 1, ATTNCHECK_F16 = 2, ATTNCHECK_BF16 = 3, ATTNCHECK_E4M3 = 4, ATTNCHECK_E5M2 = 5 };
enum { ATTNCHECK_MASK_NONE = 0, ATTNCHECK_MASK_CAUSAL = 1, ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT = 2 };
enum { ATTNCHECK_MEM_HOST = 0, ATTNCHECK_MEM_CUDA = 1 };

typedef struct {
  uint32_t struct_size;                     /* sizeof(attncheck_problem) as the harness was built */
  int32_t dtype;                            /* ATTNCHECK_F64 ...; q, k, v and o share it */
  int32_t mask;                             /* ATTNCHECK_MASK_... */
  int32_t reserved0;
  int64_t batch, heads, kv_heads;           /* heads % kv_heads == 0; query head h reads kv head h / (heads / kv_heads) */
  int64_t tq, tk, dk, dv;
  double scale;                             /* multiply Q·Kᵀ by this (1/sqrt(dk) unless the case sets another) */
  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];   /* in elements, for [batch][head][t][d] */
} attncheck_problem;

typedef struct {
  const void *q, *k, *v;
  void *o;
  float *lse;        /* NULL, or [batch][heads][tq] contiguous: natural-log LSE */
  void *stream;      /* cudaStream_t for ATTNCHECK_MEM_CUDA kernels, NULL otherwise */
} attncheck_tensors;

typedef struct {
  uint32_t abi_version;                     /* ATTNCHECK_ABI_VERSION */
  uint32_t struct_size;                     /* sizeof(attncheck_kernel) as the plugin was built */
  const char *name;
  const char *description;
  const char *precision;                    /* a precision class name from attncheck's table, or NULL for the dtype's default */
  int32_t memory;                           /* ATTNCHECK_MEM_... */
  int32_t reserved0;
  int (*supports)(const attncheck_problem *p, char *why, size_t why_len);      /* 1 = yes; 0 = no, reason in why */
  int (*run)(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len);  /* 0 = ok */
  void *reserved[4];                        /* NULL */
} attncheck_kernel;

/* A plugin shared object exports this one function. */
const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* ATTNCHECK_KERNEL_H */
