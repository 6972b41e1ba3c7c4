/* splitkv_mutants.c: split-KV (flash-decoding) defects (docs/bugclasses.md §2.26), each
 * splitkv-f32 (kernels/cpu_splitkv.c) with splits of 1024 keys, as decode kernels cut long
 * caches (ATTNCHECK_SPLITKV_CHUNK overrides it), and one defect built in. With a single split
 * (1024 keys or fewer) each is exactly splitkv-f32. */
#include "config.h"
#include "cpu_splitkv.h"

#define SPLITKV_MUTANT_CHUNK 1024

#define SPLITKV_MUTANT(SYM, BUG, NAME, DESC)                                                                 \
  static int SYM##_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)        \
  {                                                                                                        \
    return ac_cpu_splitkv_run(0, BUG, SPLITKV_MUTANT_CHUNK, NAME, p, t, err, n);                           \
  }                                                                                                        \
  extern const attncheck_kernel SYM;                                                                       \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, "fp32",       \
                                ATTNCHECK_MEM_HOST, AC_CPU_SPLITKV_CAPS, ac_cpu_splitkv_supports, SYM##_run, \
                                {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

SPLITKV_MUTANT(ac_mutant_splitkv_first_max, AC_SKBUG_FIRST_MAX, "mutant-splitkv-first-max",
               "split-KV (1024-key splits) merged relative to the first split's LSE: a later split far above it overflows")
SPLITKV_MUTANT(ac_mutant_splitkv_sink_per_split, AC_SKBUG_SINK_PER_SPLIT, "mutant-splitkv-sink-per-split",
               "split-KV (1024-key splits) adding the sink to every split's softmax: counted once per split")
