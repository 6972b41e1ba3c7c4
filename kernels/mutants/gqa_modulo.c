/* mutant-gqa-modulo: docs/bugclasses.md §2.14 "GQA indexing".
 * flash-f32 reading kv head h % kv_heads instead of h / (heads / kv_heads). */
#include "config.h"
#include "cpu_common.h"
#define MUT_KV_HEAD(p, h) ((h) % (p)->kv_heads)
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant_gqa_modulo, ATTNCHECK_F32, "mutant-gqa-modulo", "fp32", "flash-f32 with kv head h % kv_heads")
