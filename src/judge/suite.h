/* suite.h: the fixed deterministic suite (`attncheck suite`): shapes from FlashAttention's and
 * PyTorch's own tests, every mask, tq != tk both ways, GQA/MQA, dv != dk, strided layouts,
 * adversarial value patterns, metamorphic variants (V = ones, equal logits, key permutation,
 * Q x 2 with scale / 2, one (batch, head) slice alone) judged against the oracle within the
 * budget, and the worked examples. Every case is generated in memory from a fixed seed. */
#ifndef AC_SUITE_H
#define AC_SUITE_H
#include <stdint.h>
#include "casefile.h"

typedef enum { AC_SUITE_CI = 0, AC_SUITE_FULL = 1 } ac_suite_kind;

typedef struct {
  char name[128];       /* unique within the suite, e.g. "f32-113x203-d64-causal-bottom-right-b2h4kv2" */
  ac_case c;
  char rows[32];        /* oracle row selection ("" = all rows) */
  char skip[160];       /* non-empty: the case is not defined in this dtype (SKIP for every kernel, why) */
  int repeat;           /* run twice (NONDETERMINISTIC) */
} ac_suite_case;

int ac_suite_parse(const char *s, ac_suite_kind *out);
/* Number of cases (every dtype included; a kernel SKIPs the dtypes it does not support). */
int64_t ac_suite_count(ac_suite_kind k);
/* Name and dtype of case i without generating it. */
int ac_suite_describe(ac_suite_kind k, int64_t i, char *name, size_t n, ac_dtype *dtype);
/* Generate case i. */
int ac_suite_make(ac_suite_kind k, int64_t i, ac_suite_case *sc, ac_err *e);
void ac_suite_case_free(ac_suite_case *sc);
/* The serving-layout cases (suite_layouts.c), numbered after every other case of either suite. */
int64_t ac_suite_layout_count(void);
int ac_suite_layout_describe(int64_t i, char *name, size_t n, ac_dtype *dtype);
int ac_suite_layout_make(int64_t i, ac_suite_case *sc, ac_err *e);

/* The quantized cases (suite_quant.c, docs/quantized.md), numbered after the layout cases (the
 * layout functions above count and dispatch them too). */
int64_t ac_suite_quant_count(void);
int ac_suite_quant_describe(int64_t i, char *name, size_t n, ac_dtype *dtype);
int ac_suite_quant_make(int64_t i, ac_suite_case *sc, ac_err *e);

/* The backward cases (suite_grad.c): each with a dO (c.dout), run after every other case and only
 * on kernels that declare a backward (judged with ac_grad_check, grad_judge.h). */
int64_t ac_suite_grad_count(ac_suite_kind k);
int ac_suite_grad_describe(int64_t i, char *name, size_t n, ac_dtype *dtype);
int ac_suite_grad_make(int64_t i, ac_suite_case *sc, ac_err *e);
/* Its varlen cases (suite_grad_layout.c), numbered after the dense ones. */
int64_t ac_suite_grad_layout_count(void);
int ac_suite_grad_layout_describe(int64_t i, char *name, size_t n, ac_dtype *dtype);
int ac_suite_grad_layout_make(int64_t i, ac_suite_case *sc, ac_err *e);

#endif
