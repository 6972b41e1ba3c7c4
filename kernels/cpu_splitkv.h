/* cpu_splitkv.h: the split-KV (flash-decoding) CPU kernels (cpu_splitkv.c), and the defects
 * the split-KV mutants (kernels/mutants/splitkv_mutants.c) build into the same code. */
#ifndef AC_CPU_SPLITKV_H
#define AC_CPU_SPLITKV_H
#include "cpu_common.h"

enum {
  AC_SKBUG_NONE = 0,
  AC_SKBUG_FIRST_MAX,      /* the merge taken relative to the first split's LSE, not the largest */
  AC_SKBUG_SINK_PER_SPLIT  /* the sink joins every split's own softmax (counted once per split) */
};

/* Split-KV attention in binary32 with sinks: splits of ATTNCHECK_SPLITKV_CHUNK keys (chunk_def
 * when unset), merged through their LSEs (fa_merge: FlashAttention's combine), with the defect
 * bug. */
int ac_cpu_splitkv_run(int fa_merge, int bug, int64_t chunk_def, const char *name, const attncheck_problem *p,
                       const attncheck_tensors *t, char *err, size_t err_len);
/* What the split-KV kernels take: plain cases and sinks. */
#define AC_CPU_SPLITKV_CAPS ATTNCHECK_FEAT_SINKS
int ac_cpu_splitkv_supports(const attncheck_problem *p, char *why, size_t why_len);

#endif
