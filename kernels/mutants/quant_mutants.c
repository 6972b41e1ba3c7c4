/* quant_mutants.c: quantized-KV-cache defects (docs/bugclasses.md §2.28, docs/quantized.md), each
 * a reference kernel of kernels/cpu_quant.c with one change of its dequantization (AC_QBUG_...,
 * quant_view.h), declaring the reference kernel's formats and class. */
#include "config.h"
#include <stdio.h>
#include "cpu_common.h"
#include "cpu_varlen.h"
#include "quant_view.h"

extern const attncheck_kernel ac_cpu_flash_varlen_f32;   /* cpu_varlen.c */

static int qmut_supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) return ac_cpu_flash_varlen_f32.supports(p, why, n);
  return ac_cpu_naive_f32.supports(p, why, n);
}

static int qmut_plain_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "takes quantized tensors only");
  return 1;
}

#define QMUT_CAPS \
  ((ATTNCHECK_FEAT_ALL & ~(ATTNCHECK_FEAT_MIXED_DTYPES | ATTNCHECK_FEAT_DESCALE)) | ATTNCHECK_FEAT_LAYOUTS | \
   ATTNCHECK_FEAT_QUANT_LAYOUT)
#define F(x) (1u << AC_QF_##x)
#define QMUT(SYM, BUG, NAME, DESC, PREC, KV, Q)                                                                \
  static int SYM##_qrun(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err,  \
                        size_t n)                                                                              \
  {                                                                                                            \
    return ac_cpu_quant_bug_run(BUG, p, t, v, err, n);                                                         \
  }                                                                                                            \
  extern const attncheck_kernel SYM;                                                                           \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, PREC,             \
                                ATTNCHECK_MEM_HOST, QMUT_CAPS, qmut_supports, qmut_plain_run,                  \
                                {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};                       \
  static const ac_quant_kernel SYM##_entry = {&SYM, KV, Q, 1, SYM##_qrun};

#define GGML_KV (F(Q8_0) | F(Q4_0) | F(Q4_1) | F(Q5_0) | F(Q5_1) | F(IQ4_NL))
#define FP8 (F(E4M3FN) | F(E4M3FNUZ) | F(E5M2))

QMUT(ac_mutant_quant_nibble_swap, AC_QBUG_NIBBLE_SWAP, "mutant-quant-nibble-swap",
     "ggml-ref-f32 reading q4_0/q4_1/iq4_nl element j from the other nibble (low and high halves swapped)", "kv-f32",
     F(Q4_0) | F(Q4_1) | F(IQ4_NL), 0)
QMUT(ac_mutant_quant_q4_no_offset, AC_QBUG_NO_Q4_OFFSET, "mutant-quant-q4-no-offset",
     "ggml-ref-f32 dequantizing q4_0 as d*q, its -8 offset dropped", "kv-f32", F(Q4_0), 0)
QMUT(ac_mutant_quant_next_block_scale, AC_QBUG_NEXT_BLOCK_SCALE, "mutant-quant-next-scale",
     "ggml-ref-f32 giving block e the scale of block e+1 (the last block its own)", "kv-f32", GGML_KV, 0)
QMUT(ac_mutant_quant_no_v_scale, AC_QBUG_NO_V_SCALE, "mutant-quant-no-v-scale",
     "fp8kv-ref-f32 reading V's fp8 codes without their scale (v_scale missing)", "qkv-f32", FP8, FP8)
QMUT(ac_mutant_quant_no_q_descale, AC_QBUG_NO_Q_SCALE, "mutant-quant-no-q-descale",
     "fp8kv-ref-f32 reading an fp8 Q's codes without their scale (q_descale missing)", "qkv-f32", FP8, FP8)
QMUT(ac_mutant_quant_scale_twice, AC_QBUG_SCALE_TWICE, "mutant-quant-scale-twice",
     "fp8kv-ref-f32 multiplying every fp8 value by its scale twice", "qkv-f32", FP8, FP8)
QMUT(ac_mutant_quant_fn_as_fnuz, AC_QBUG_FN_AS_FNUZ, "mutant-quant-fn-as-fnuz",
     "fp8kv-ref-f32 decoding e4m3fn codes as e4m3fnuz (bias 8: half the value, 0x80 NaN)", "qkv-f32", FP8, FP8)
QMUT(ac_mutant_quant_zero_sign, AC_QBUG_ZERO_SIGN, "mutant-quant-zero-sign",
     "intkv-ref-f32 dequantizing int8/int4 as (q + z)*s, the zero point's sign flipped", "kv-f32", F(INT8) | F(INT4), 0)
QMUT(ac_mutant_quant_pack_order, AC_QBUG_PACK_ORDER, "mutant-quant-pack-order",
     "intkv-ref-f32 and fp4kv-ref-f32 reading packed int4, int2 and nvfp4 codes in the other order (high nibble first "
     "where low first is declared, and the reverse)", "kv-f32", F(INT4) | F(INT2) | F(NVFP4), 0)
QMUT(ac_mutant_quant_bf16_scale, AC_QBUG_BF16_SCALE, "mutant-quant-bf16-scale",
     "ggml-ref-f32 reading each block's f16 scale as bf16", "kv-f32", GGML_KV, 0)
QMUT(ac_mutant_quant_nan_dropped, AC_QBUG_NAN_DROPPED, "mutant-quant-nan-dropped",
     "fp8kv-ref-f32 reading a NaN fp8 code (or NaN scale) as 0: NaN inside a block not propagated", "qkv-f32", FP8, FP8)

QMUT(ac_mutant_quant_qhead_scale, AC_QBUG_QHEAD_SCALE, "mutant-quant-qhead-scale",
     "fp8kv-ref-f32 indexing per-head K and V scales by the query head under GQA (dense cases)", "qkv-f32", FP8, FP8)

QMUT(ac_mutant_quant_past_seqlen, AC_QBUG_PAST_SEQLEN, "mutant-quant-past-seqlen",
     "fp8kv-ref-f32 on a paged cache reading the last partial page whole, past cache_seqlens", "qkv-f32", FP8, FP8)

static const ac_quant_kernel *const entries[] = {
  &ac_mutant_quant_nibble_swap_entry,      &ac_mutant_quant_q4_no_offset_entry, &ac_mutant_quant_next_block_scale_entry,
  &ac_mutant_quant_no_v_scale_entry,       &ac_mutant_quant_no_q_descale_entry, &ac_mutant_quant_scale_twice_entry,
  &ac_mutant_quant_fn_as_fnuz_entry,       &ac_mutant_quant_zero_sign_entry,    &ac_mutant_quant_bf16_scale_entry,
  &ac_mutant_quant_nan_dropped_entry,      &ac_mutant_quant_qhead_scale_entry,
  &ac_mutant_quant_past_seqlen_entry,      &ac_mutant_quant_pack_order_entry,
};

const ac_quant_kernel *ac_quant_mutant_entry_of(const attncheck_kernel *k)
{
  for (size_t i = 0; k && i < sizeof entries / sizeof entries[0]; i++)
    if (entries[i]->k == k) return entries[i];
  return NULL;
}
