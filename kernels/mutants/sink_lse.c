/* mutant-sink-lse: docs/bugclasses.md §2.24 "attention variants" (sinks).
 * flash-f32 whose output includes the sink in its denominator while the LSE is taken from
 * the keys' sum alone: the LSE no longer belongs to o (a split-KV combine or the backward
 * pass then uses the wrong normalizer). */
#include "config.h"
#include "cpu_common.h"
#define MUT_SINK_LSE(m, l, mf, den) ((void)(mf), (void)(den), (m) + logf(l))
#include "mutant_flash.h"

MUTANT_KERNEL_VX(ac_mutant_sink_lse, "mutant-sink-lse", "flash-f32 leaving the sink out of the LSE")
