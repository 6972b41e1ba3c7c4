/* quant_view.h: how a kernel that reads quantized tensors receives them (docs/quantized.md "Kernels").
 * Built-in kernels get this view beside the ABI's problem and tensors (run_quant below), plugins that
 * declare formats get the same struct as tensors.quant (ABI 5, attncheck_kernel.h), exec workers the
 * case file's members (X_codes, X_scales, ...).
 *
 * For tensor x (0 q, 1 k, 2 v) of format fmt (AC_QF_..., 0: not quantized, read t->q/k/v as usual;
 * a quantized tensor's t->q/k/v is NULL), element (b, h, t, d) has
 *   code   codes[b s0 + h s1 + t s2 + d s3], s = code_stride (the tensor's own strides: the ABI
 *          problem's q/k/v_stride, packed or paged for a serving layout); packed codes (quant_spec
 *          packing): byte codes[b s0 + h s1 + t s2 + (d / per) s3], s in bytes (ac_qpacked_code);
 *   scale  scales[b c0 + h c1 + (t / G) c2 + e c3], c = scale_stride, e = d / block (block
 *          granularity) or d (the others), G the token group (1 without); a stride is 0 along what
 *          the granularity shares (tensor: all four; head: t and e; token: e; channel: t); the
 *          scale's dtype is the spec's (ac_qspec_sdtype);
 *   aux    mins (q4_1, q5_1: f16) or zero points (the int formats: the spec's zero dtype) at the
 *          scale's offset, or for NVFP4 the binary32 tensor scale at aux[0];
 *   ggml   for the ggml formats and mxfp4, the same tensor as ggml's blocks (quant_ggml.c): block
 *          e of (b, h, t) at ggml[b g0 + h g1 + t g2 + e g3], g = ggml_stride in bytes (g3 the bytes
 *          of one block).
 * Every array carries NaN-filled guards and must not be written; a serving layout's memory that a
 * sequence does not own holds NaN scales (block and token granularity) and NaN codes (fp8). */
#ifndef AC_QUANT_VIEW_H
#define AC_QUANT_VIEW_H
#include <stddef.h>
#include <stdint.h>
#include "attncheck_kernel.h"
#include "quant.h"

/* The ABI's own structs (attncheck_kernel.h: tensors.quant of ABI 5), which plugins get too. */
typedef attncheck_quant_tensor ac_qview_tensor;
typedef attncheck_quant ac_qview;

/* A built-in kernel that takes quantized tensors: its ABI entry, the formats it reads for k and v
 * and for q (1u << AC_QF_...), and the run that gets the view. quant_only: it refuses cases without
 * a quantized tensor. */
typedef struct {
  const attncheck_kernel *k;
  uint32_t kv_formats, q_formats;
  int quant_only;
  int (*run_quant)(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n);
} ac_quant_kernel;

/* The reference kernels' run (kernels/cpu_quant.c): every quantized element dequantized to binary32,
 * then naive-f32 or flash-varlen-f32. */
int ac_cpu_quant_ref_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n);

/* The defects of the quantized mutants (kernels/mutants/quant_mutants.c), each one change of the
 * reference kernels' dequantization; ac_cpu_quant_bug_run is ac_cpu_quant_ref_run with one of them. */
enum {
  AC_QBUG_NONE = 0,
  AC_QBUG_NIBBLE_SWAP,       /* q4_0, q4_1, iq4_nl: element j read from the other nibble (j + 16 mod 32) */
  AC_QBUG_NO_Q4_OFFSET,      /* q4_0: d*q where d*(q - 8) was meant */
  AC_QBUG_NEXT_BLOCK_SCALE,  /* ggml blocks: block e with the scale d of block e + 1 (the last its own) */
  AC_QBUG_NO_V_SCALE,        /* V's codes without their scale */
  AC_QBUG_NO_Q_SCALE,        /* Q's codes without their scale (q_descale missing) */
  AC_QBUG_SCALE_TWICE,       /* every value times its scale once more */
  AC_QBUG_FN_AS_FNUZ,        /* e4m3fn codes decoded as e4m3fnuz */
  AC_QBUG_ZERO_SIGN,         /* int8, int4: (q + z)*s where (q - z)*s was meant */
  AC_QBUG_BF16_SCALE,        /* ggml blocks: the f16 scale's bits read as bf16 */
  AC_QBUG_NAN_DROPPED,       /* a NaN value (NaN code or scale) read as 0 */
  AC_QBUG_QHEAD_SCALE,       /* fp8 per-head K and V scales indexed by the query head under GQA (dense cases) */
  AC_QBUG_PAST_SEQLEN,       /* paged: every slot of a sequence's pages read as a key, past cache_seqlens */
  AC_QBUG_PACK_ORDER,        /* packed codes read in the other order (high nibble first where low first is declared) */
  AC_QDQ_F32 = 64            /* not a defect: int formats dequantized in binary32 as ((float)c - z) * s (dq=f32) */
};
int ac_cpu_quant_bug_run(int bug, const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n);
/* The table entry of quantized mutant k (kernels/mutants/quant_mutants.c, store_mutants.c); NULL for any
 * other kernel. */
const ac_quant_kernel *ac_quant_mutant_entry_of(const attncheck_kernel *k);
const ac_quant_kernel *ac_store_mutant_entry_of(const attncheck_kernel *k);

/* ---- quantize-on-store (cpu_quant_store.c) ---- */
/* The defects of the store mutants (kernels/mutants/store_mutants.c), each one change of the store
 * reference kernels' quantizer. */
enum {
  AC_SBUG_NONE = 0,
  AC_SBUG_PREV_SCALE,       /* a token's group stored with the scale (and zero point) of the token before */
  AC_SBUG_ROUND_AWAY,       /* ties rounded away from zero where nearest-even is declared */
  AC_SBUG_ZERO_UNCLAMPED,   /* min-max's integer zero point not clamped to the codes */
  AC_SBUG_FP8_NAN           /* fp8 values past the largest code stored as NaN (inf) where saturation is declared */
};
/* Quantizes every store tensor of p (plain values in t->q/k/v) into t->store as its quant_spec says,
 * with one defect (bug), then naive-f32 over the binary32 dequantization of what it stored. */
int ac_cpu_store_run(int bug, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n);
#define AC_CPU_STORE_CAPS                                                                                           \
  ((ATTNCHECK_FEAT_ALL & ~(ATTNCHECK_FEAT_MIXED_DTYPES | ATTNCHECK_FEAT_DESCALE)) | ATTNCHECK_FEAT_QUANT_STORE | \
   ATTNCHECK_FEAT_QUANT_LAYOUT)
#define AC_CPU_STORE_FP8_QUANTIZERS "absmax-even-f32-sat,given-even-f32-sat"
#define AC_CPU_STORE_MINMAX_QUANTIZERS "minmax-even-f32-sat,minmax-away-f32-sat"
#define AC_CPU_STORE_FP8_FORMATS ((1u << AC_QF_E4M3FN) | (1u << AC_QF_E4M3FNUZ) | (1u << AC_QF_E5M2))
#define AC_CPU_STORE_MINMAX_FORMATS ((1u << AC_QF_UINT8) | (1u << AC_QF_INT8) | (1u << AC_QF_INT4) | (1u << AC_QF_INT2))
extern const ac_quant_kernel ac_cpu_store_fp8_entry, ac_cpu_store_minmax_entry, ac_cpu_store_q8_0_entry;

/* Tensor x (q, k, v) of view v as binary32 values (each exact value rounded to nearest) in a span
 * with the tensor's own strides, NaN between elements; NULL when out of memory (cpu_quant.c). */
float *ac_cpu_quant_dequantize(const attncheck_problem *p, const ac_qview_tensor *v, char x);
/* The same with an int format's values formed in binary32, ((float)c - z) * s (OpenVINO's u8/u4 cache;
 * class dq-f32); other formats as ac_cpu_quant_dequantize. */
float *ac_cpu_quant_dequantize_dq32(const attncheck_problem *p, const ac_qview_tensor *v, char x);
/* The same rounded once more, to f16 (dt ATTNCHECK_F16) or bf16 (ATTNCHECK_BF16) bits: fl16(fl32(x)),
 * as an engine that forms code x scale in binary32 and stores the product in its compute dtype. */
uint16_t *ac_cpu_quant_dequantize16(const attncheck_problem *p, const ac_qview_tensor *v, char x, int dt);
/* The quantized paths' reference kernels (cpu_quant_paths.c): ggml-q8-ref-f32, fp8kv-fold-ref-f32,
 * kv16-ref-f16, kv16-ref-bf16. */
extern const ac_quant_kernel ac_cpu_ggml_q8_entry, ac_cpu_fp8fold_entry, ac_cpu_kv16_f16_entry, ac_cpu_kv16_bf16_entry;

/* The extents {B, H, T', X} of the scale array of spec q for tensor dims d: T' = T for block and
 * token granularity (else 1), X = the blocks (block), D (channel) or 1 (harness_quant.c). */
void ac_qview_scale_dims(const ac_qspec *q, const int64_t d[4], int64_t s[4]);
/* The strides kernels are handed for an array of extents s: as the case stores it ([B][H][T][X],
 * contiguous), or token-major ([T][H][X], a serving layout's order; B is 1 there). */
void ac_qview_present(const int64_t s[4], int token_major, int64_t st[4]);

/* The entry of built-in kernel k; NULL when it takes no quantized tensor. */
const ac_quant_kernel *ac_quant_kernel_of(const attncheck_kernel *k);
/* The spec of tensor i (0 q, 1 k, 2 v) of ABI problem a as quant.h holds it, from its view tensor t
 * (format, granularity, block) and, when a->struct_size reaches them, a->quant_spec[i]'s token group,
 * dtypes, packing and quantizer (harness_quant.c). */
void ac_qspec_from_abi(const attncheck_problem *a, const ac_qview_tensor *t, int i, ac_qspec *q);

#endif
