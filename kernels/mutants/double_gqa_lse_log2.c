/* mutant2-gqa-modulo-lse-log2: two planted defects: mutant-gqa-modulo's kv head h % kv_heads, and
 * an LSE returned in log2 units (m log2 e + log2 l, as a kernel built on exp2 that forgets to
 * convert back), in flash-f32. */
#include "config.h"
#include "cpu_common.h"
#define MUT_KV_HEAD(p, h) ((h) % (p)->kv_heads)
#define MUT_LSE(m, l) ((m) * 1.44269504f + log2f(l))
#include "mutant_flash.h"

MUTANT_KERNEL(ac_mutant2_gqa_lse_log2, ATTNCHECK_F32, "mutant2-gqa-modulo-lse-log2", "fp32",
              "two defects: kv head h % kv_heads, and the LSE in log2 units (flash-f32)")
