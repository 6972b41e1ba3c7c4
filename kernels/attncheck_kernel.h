/* attncheck_kernel.h — the attncheck kernel ABI, version 5 (installed as <attncheck/kernel.h>).
 *
 * A kernel under test is one attncheck_kernel value. A plugin is a shared object that
 * exports attncheck_plugin_kernels(); nothing else from attncheck is needed to write one.
 * The header is C99 and C++-includable.
 *
 * Tensors are [batch][head][t][d] with element strides given in the problem. The harness
 * owns every buffer: inputs and outputs carry NaN-filled guard margins, the output is
 * pre-filled with NaN, and each run happens in a forked child with a time limit. A kernel
 * must write every o element of the problem (and every lse element when lse is non-NULL)
 * and nothing outside them.
 *
 * Semantics, for query i of head h (batch b) and key j of kv head kvh = h / (heads / kv_heads),
 * with d_ij = q_i·k_j the dot product of the stored values (times the descales, see below):
 *   1. s_ij = scale * d_ij;
 *   2. softcap c > 0:  s_ij = c * tanh(s_ij / c)            (scale first, then the cap);
 *   3. ALiBi slope m:  s_ij = s_ij - m * |i + tk - tq - j|   (bottom-right distance);
 *   4. bias tensor:    s_ij = s_ij + bias[b][h][i][j]         (may hold -inf);
 *   5. visibility: the mask below AND the sliding window AND the boolean mask;
 *   6. o_i = Σ_visible e^{s_ij} v_j / (Σ_visible e^{s_ij} + e^{σ_h}), σ_h the sink logit of
 *      head h (no sink: the e^σ term is absent); lse_i = ln(Σ_visible e^{s_ij} + e^{σ_h}).
 * Masks (problem.mask):
 *   ATTNCHECK_MASK_NONE: every key visible;
 *   ATTNCHECK_MASK_CAUSAL: key j visible to query i iff j <= i (top-left aligned);
 *   ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT: iff j <= i + tk - tq (FlashAttention >= 2.1).
 * A row with no visible key and no sink has o = 0 and lse = -inf or +inf by default (see
 * attncheck's --empty-rows); with a sink it has o = 0 and lse = σ_h.
 *
 * ABI 2 (this header) adds, after every field of version 1 (so a version 1 plugin still
 * reads a version 2 problem and tensors correctly; attncheck gives it only cases that use
 * none of the features below, and SKIPs the others for it):
 *   - problem.features: the ATTNCHECK_FEAT_ bits the case uses; a kernel declares the bits it
 *     supports in attncheck_kernel.caps; attncheck never hands a kernel a case with a
 *     feature bit outside its caps (SKIP), and supports() still decides per case;
 *   - ATTNCHECK_CAP_NO_LSE in caps: the kernel writes no LSE; attncheck passes lse = NULL,
 *     judges o only and reports nothing about the LSE;
 *   - the sliding window (window_left, window_right; -1 = unbounded): key j is visible to
 *     query i iff i + off - window_left <= j <= i + off + window_right, off = tk - tq
 *     (window_align ATTNCHECK_ALIGN_BOTTOM_RIGHT, FlashAttention's alignment) or off = 0
 *     (ATTNCHECK_ALIGN_TOP_LEFT);
 *   - softcap (> 0, finite; 0 = none);
 *   - alibi_slopes: binary32 [heads], or [batch][heads] when alibi_per_batch is 1;
 *   - bias: [batch][heads][tq][tk] of dtype bias_dtype, strides bias_stride (elements; a zero
 *     stride broadcasts that dimension);
 *   - bool_mask: uint8 [batch][heads][tq][tk], 1 = visible, 0 = masked, strides
 *     bool_mask_stride (zero strides broadcast);
 *   - sinks: binary32 [heads], natural-log logits;
 *   - per-tensor dtypes q_dtype, k_dtype, v_dtype, o_dtype (ATTNCHECK_FEAT_MIXED_DTYPES when
 *     they differ; all equal to dtype otherwise);
 *   - descale_q, descale_k, descale_v: binary32 [batch][kv_heads]; the values the formula uses
 *     are x * descale exactly (FlashAttention 3's fp8 descales), for q of query head h the
 *     factor of its kv head.
 * tensors: the fields after `stream` exist when problem.struct_size >= the size of the
 * version 2 problem (ATTNCHECK_PROBLEM_V2_SIZE); pointers of unused features are NULL.
 * attncheck_kernel keeps its version 1 size: `caps` takes the place of version 1's
 * reserved0, so a version 1 plugin (abi_version 1, reserved0 0) reads as caps 0: LSE
 * written, no features.
 *
 * ABI 3 (this header) adds the serving layouts (docs/layouts.md), again after every field of
 * version 2: a version 1 or 2 plugin never declares their bits, so it is never handed a layout
 * case, and reads every other problem as before (its struct_size checks see a larger problem).
 *   - ATTNCHECK_FEAT_VARLEN: `batch` sequences packed along the token axis. Sequence b has
 *     tq_b = cu_seqlens_q[b+1] - cu_seqlens_q[b] queries and tk_b = cu_seqlens_k[b+1] -
 *     cu_seqlens_k[b] keys (int32 prefix sums, [batch + 1], starting at 0, non-decreasing;
 *     zero lengths allowed). q and o are [total_q][heads][d], k and v [total_k][kv_heads][d]:
 *     token r of head h, element x at r * stride[2] + h * stride[1] + x * stride[3] (stride[0]
 *     is 0). Every rule above (masks, window, ALiBi, bias, boolean mask, sinks) applies per
 *     sequence with tq_b, tk_b in place of tq, tk and i, j counted from the sequence's first
 *     token.
 *   - ATTNCHECK_FEAT_PAGED: queries packed as for VARLEN (cu_seqlens_q; cu_seqlens_k is
 *     NULL); keys and values live in pages, k and v [num_pages][page_size][kv_heads][d]: page
 *     g, slot s, kv head h, element x at g * stride[0] + s * stride[2] + h * stride[1] +
 *     x * stride[3]. Sequence b has tk_b = cache_seqlens[b] keys; key j is in page
 *     block_table[b * max_pages + j / page_size], slot j % page_size. Pages may come in any
 *     order, be shared between sequences or unused; entries past a sequence's pages are -1.
 *   - problem.tq and problem.tk are the longest tq_b and tk_b (max_seqlen); total_q, total_k,
 *     page_size, num_pages and max_pages are set; lse is [heads][total_q] (FlashAttention's
 *     varlen softmax_lse).
 *   - with a layout, bias and bool_mask are [1][heads][total_q][tk] (tk = max_seqlen_k): key
 *     j of sequence b's query i is element (0, h, cu_seqlens_q[b] + i, j) through bias_stride
 *     / bool_mask_stride (stride[0] is 0; stride[1] is 0 when broadcast over heads; columns
 *     j >= tk_b mean nothing); alibi_slopes with alibi_per_batch 1 are [batch][heads], row b
 *     for sequence b. Descales and per-tensor dtypes do not come with layouts.
 *   - a kernel must not read a slot of a page past its sequence's length, a page its sequence
 *     does not list, or a token of another sequence: attncheck fills them with NaN and reports
 *     such reads as OUT-OF-SEQUENCE.
 * The layout fields and tensors exist when problem.struct_size >= ATTNCHECK_PROBLEM_V3_SIZE.
 *
 * ABI 3 also adds the backward pass (docs/backward.md), optional, after every field of
 * attncheck_kernel: a kernel that declares ATTNCHECK_CAP_BACKWARD in caps, has struct_size >=
 * ATTNCHECK_KERNEL_V3_SIZE and a non-NULL run_backward is handed backward cases; every other
 * kernel (a version 1 or 2 plugin, whose struct ends before run_backward; a version 3 plugin
 * without the bit) loads and runs forward cases exactly as before, and is never asked for a
 * backward. run_backward(p, t, g) gets the forward's problem and inputs t (t->o and t->lse are
 * NULL there) and in g:
 *   - o [batch][heads][tq][dv] (o_dtype, problem.o_stride) and lse [batch][heads][tq]
 *     (contiguous binary32): the forward's output and LSE as the exact oracle gives them,
 *     correctly rounded to o's dtype and to binary32 (not the kernel's own forward);
 *   - dout: dO, o's shape and dtype, strides do_stride;
 *   - outputs dq [batch][heads][tq][dk], dk [batch][kv_heads][tk][dk], dv
 *     [batch][kv_heads][tk][dv] in problem.dtype, strides dq_stride, dk_stride, dv_stride
 *     (those of q, k, v): dS_ij = P_ij (dP_ij - D_i), dP_ij = dO_i·V_j, D_i = Σ_j P_ij dP_ij,
 *     dQ_i = scale Σ_j dS_ij K_j, dK_j = scale Σ_i dS_ij Q_i, dV_j = Σ_i P_ij dO_i, dK and dV
 *     summed over the query heads of a kv head; a masked key adds nothing, a row with no
 *     visible key has dQ_i = 0;
 *   - dsinks [heads] (binary32) with ATTNCHECK_FEAT_SINKS: dσ_h = -Σ_{b,i} P_i,sink D_i;
 *     NULL otherwise;
 *   - with ATTNCHECK_FEAT_SOFTCAP (handed to kernels whose backward_caps declare it): dS_ij above
 *     is w.r.t. the capped score; dQ and dK take it through the cap, dS_ij (1 - tanh²(scale
 *     q_i·k_j / softcap)), and P (dV) is that of the capped scores.
 * The same rules as the forward hold: every output element must be written (they are
 * pre-filled with NaN), nothing outside them, no input changed (o, lse and dout included),
 * in a forked child with the time limit.
 *
 * ABI 4 adds kernel.backward_caps after run_backward: the ATTNCHECK_FEAT_ bits run_backward
 * takes (each also in caps). A case is handed to run_backward only when every feature it uses is
 * in the kernel's backward set:
 *   - abi_version >= 4 and struct_size >= ATTNCHECK_KERNEL_V4_SIZE: backward_caps as declared
 *     (0: plain attention only);
 *   - a version 3 plugin (or a version 4 one built before the field, struct_size <
 *     ATTNCHECK_KERNEL_V4_SIZE): caps & ATTNCHECK_BACKWARD_V3_FEATS, the set ABI 3 handed to
 *     run_backward, so such a plugin is never given a feature it did not expect.
 * Features the exact backward refuses (docs/backward.md: descales, per-tensor dtypes) are never
 * handed to run_backward; softcap is handed to a backward_caps that declares it.
 *
 * ALiBi and the LSE (docs/variants.md): under a causal mask (either alignment) FlashAttention-2, and
 * the copy vendored in PyTorch, add +m_h j to key j's score instead of the -m_h |i + tk - tq - j| of
 * rule 3: the same o (the two differ by m_h (i + tk - tq), common to every key a bottom-right row
 * sees), an LSE larger by m_h (i + tk - tq) (tq, tk and i per sequence in a layout). A kernel whose
 * LSE follows that convention sets ATTNCHECK_CAP_ALIBI_LSE_FA2 in caps: attncheck then judges its
 * LSE, under ALiBi with a causal mask, against lse_i + m_h (i + tk - tq) correctly rounded to binary32
 * (exact: the shift is a binary32 slope times an integer), its o as before, with the budgets of the
 * scores it forms, and hands its run_backward that LSE in g->lse. Without the bit (every plugin
 * built before it) the LSE is judged by rule 6, the stricter default; attncheck --alibi-lse fa2
 * declares it for a kernel that cannot. The bit needs no new field and no new ABI version: any
 * abi_version >= 2 may set it; an attncheck that does not know it refuses the plugin ("unknown caps
 * bits"), never judging its LSE by the other convention.
 *
 * Varlen batches in the backward (docs/backward.md §7): a kernel whose backward_caps holds
 * ATTNCHECK_FEAT_VARLEN gets varlen cases in run_backward with the forward's problem and inputs
 * (cu_seqlens_q/k, packed q, k, v, the per-sequence variants as above) and, in g, everything packed
 * as the forward lays out o and lse with VARLEN: o and dout [total_q][heads][dv] (o_stride and
 * do_stride: token r of head h at r * stride[2] + h * stride[1]), lse [heads][total_q]; the outputs
 * dq [total_q][heads][dk] with q's strides, dk and dv [total_k][kv_heads][d] with k's and v's.
 * Each sequence's backward is independent, by the formulas above with tq_b, tk_b and its own
 * visible keys: a sequence with no keys has dQ = 0, a key no query sees (a sequence with no
 * queries, or masked from all of them) has dK = dV = 0; dsinks sums over every sequence. Every
 * element of dq, dk and dv must be written, as for dense cases. ATTNCHECK_FEAT_PAGED is never
 * handed to run_backward (a paged KV cache is an inference layout; training takes varlen).
 *
 * ABI 5 adds what a kernel declares about itself, after every field of version 4 (a plugin of
 * version 1 to 4, whose struct ends before them, loads and runs exactly as before):
 *   - a refusal after seeing the tensors: run() of a kernel with abi_version >= 5 that returns
 *     non-zero with err beginning "unsupported:" (the word of the exec protocol's "error
 *     unsupported:") refuses the case: SKIP with the rest of err as the reason, never a FAIL or
 *     a finding (ALiBi slopes a kernel cannot take, a bias it cannot represent). The guards
 *     and inputs are still checked: a refusing run that wrote outside its outputs or into its
 *     inputs is GUARD. A version 1 to 4 plugin's non-zero return stays a kernel error (FAIL),
 *     whatever its text;
 *   - empty_rows and empty_lse (struct_size >= ATTNCHECK_KERNEL_V5_SIZE): what the kernel writes
 *     for a row with no visible key and no sink: o (ATTNCHECK_EMPTY_ZERO or ATTNCHECK_EMPTY_NAN)
 *     and lse (ATTNCHECK_EMPTY_LSE_NEG_INF, _POS_INF or _NAN). attncheck judges such rows by the
 *     declaration (an explicit --empty-rows overrides it); 0 (ATTNCHECK_EMPTY_UNDECLARED) keeps
 *     attncheck's default: o = 0, lse +inf or -inf. ATTNCHECK_EMPTY_MEAN_V (a later addition to
 *     version 5; an attncheck built before it refuses the plugin with one line naming the value)
 *     is the convention of kernels that mask with a large finite negative score (JAX, MLX): o is
 *     the mean of V over every key of the row's sequence and kv head (all tk keys of a dense case,
 *     whatever the mask), judged against its exact value (a rational) with the budget of equal
 *     weights; lse as declared, or undeclared: +inf, -inf or a finite value <= -2^100 (the
 *     sentinel's own LSE, -0.7 FLT_MAX in JAX);
 *   - precision_of (struct_size >= ATTNCHECK_KERNEL_V5_SIZE; NULL: none): the class of the path
 *     the kernel takes for problem p (a kernel with tiled, scalar and split-KV paths of different
 *     accuracy). It writes a class as `precision` takes it (a name of `attncheck list --precision`,
 *     or "DTYPE=CLASS,...") into cls (cls_len >= 256 bytes, NUL-terminated) and returns 1, or
 *     returns 0 for `precision`. It is called in the child that runs the case, after supports()
 *     and before run(), with the problem run() gets; the case is judged under that class (an
 *     explicit --precision overrides it) and every report names it. A class attncheck does not
 *     know makes the case a kernel error (FAIL) naming it;
 *   - quantized tensors (docs/quantized.md), a later addition to version 5 that keeps every
 *     earlier plugin loading: kv_formats and q_formats (struct_size >= ATTNCHECK_KERNEL_V5Q_SIZE;
 *     bits 1u << ATTNCHECK_QF_...) are the formats the kernel reads for K and V and for Q. Only a
 *     host kernel declaring a case's formats gets it (every other kernel, and every plugin built
 *     before these fields, SKIPs quantized cases). ATTNCHECK_CAP_QUANT_ONLY in caps says the kernel
 *     takes quantized caches only: a case without a quantized tensor is never handed to it (SKIP,
 *     its supports() not asked), `list` says "quantized cases only", and the fuzzer draws a
 *     declared format for every case it gives it, dense, varlen and paged alike (a supports() that
 *     refuses plain caches then hides none of the layouts it takes). For a quantized case
 *     problem.q_format, k_format and v_format name each tensor's format (0: not quantized; they
 *     exist when problem.struct_size >= ATTNCHECK_PROBLEM_V5Q_SIZE, so supports() sees them),
 *     tensors.q/k/v of a quantized tensor are NULL, and tensors.quant (same condition; NULL when
 *     no tensor is quantized) holds the raw codes and scales, never dequantized values: for
 *     tensor x (0 q, 1 k, 2 v) of format quant->t[x].format, element (b, h, t, d) has
 *       code   codes[b s0 + h s1 + t s2 + d s3], s = code_stride (the tensor's own strides as in
 *              q/k/v_stride: packed or paged for a serving layout), one byte per element: int8
 *              codes as signed bytes, int4 codes as 0..15 (before their zero point), fp8 and
 *              e2m1 codes as their bits, ggml formats' codes unpacked (q4_0's 0..15 before its
 *              -8, q5's five bits);
 *       scale  scales[b c0 + h c1 + t c2 + e c3], c = scale_stride, e = d / block (granularity
 *              ATTNCHECK_QG_BLOCK) or d; a stride is 0 along what the granularity shares
 *              (TENSOR: all four; HEAD: t and e; TOKEN: e; CHANNEL: t). The scale's type is the
 *              format's: binary16 for the ggml formats, binary32 for fp8 and int, e4m3 bits for
 *              nvfp4's block scales, e8m0 bits for mxfp4's;
 *       aux    at the scale's offset: binary16 mins (q4_1, q5_1), int8 zero points (int8, int4),
 *              or for nvfp4 the binary32 tensor scale at aux[0]; NULL for the other formats;
 *       ggml   the ggml formats and mxfp4 also as ggml's block bytes (block_q8_0 ...): block e of
 *              (b, h, t) at ggml[b g0 + h g1 + t g2 + e g3], g = ggml_stride in bytes; NULL else.
 *     (b, t) is the pair the tensor's own strides take, for codes, scales, aux and ggml alike: in a
 *     dense case (batch, token); for a varlen tensor and the packed q of a paged case (0, packed
 *     token r), every stride[0] 0; for a paged K or V (page g, slot s), so that key j of sequence b
 *     has g = block_table[b * max_pages + j / page_size], s = j % page_size and its code, scale and
 *     block at codes[g s0 + h s1 + s s2 + d s3], scales[g c0 + h c1 + s c2 + e c3] and ggml[g g0 +
 *     h g1 + s g2 + e g3]: attncheck hands c0 = page_size * c2 (0 for a scale shared by every token:
 *     TENSOR, HEAD, CHANNEL) and g0 = page_size * g2, the pages lying token-major one after the other
 *     ((0, g * page_size + s) addresses the same element, as attncheck documented it before).
 *     The value of an element is the format's (docs/quantized.md "Exact values": d q, d (q - 8),
 *     d q + m, table[q] d, code scale, (code - zero) scale, ...). Every array is an input: a kernel
 *     writing into one is GUARD; memory a serving layout's sequence does not own holds NaN scales
 *     (block and token granularity) and NaN codes (fp8). quant->struct_size is
 *     sizeof(attncheck_quant) as attncheck was built (a plugin reads no further than it knows).
 *     CUDA kernels get no quantized case yet.
 */
#ifndef ATTNCHECK_KERNEL_H
#define ATTNCHECK_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNCHECK_ABI_VERSION 5

enum { ATTNCHECK_F64 = 0, ATTNCHECK_F32 = 1, ATTNCHECK_F16 = 2, ATTNCHECK_BF16 = 3, ATTNCHECK_E4M3 = 4, ATTNCHECK_E5M2 = 5 };
enum { ATTNCHECK_MASK_NONE = 0, ATTNCHECK_MASK_CAUSAL = 1, ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT = 2 };
enum { ATTNCHECK_MEM_HOST = 0, ATTNCHECK_MEM_CUDA = 1 };
enum { ATTNCHECK_ALIGN_BOTTOM_RIGHT = 0, ATTNCHECK_ALIGN_TOP_LEFT = 1 };

/* ABI 2: features a case uses (problem.features) and a kernel supports (kernel.caps). */
#define ATTNCHECK_FEAT_WINDOW       (1u << 0)
#define ATTNCHECK_FEAT_SOFTCAP      (1u << 1)
#define ATTNCHECK_FEAT_ALIBI        (1u << 2)
#define ATTNCHECK_FEAT_BIAS         (1u << 3)
#define ATTNCHECK_FEAT_BOOL_MASK    (1u << 4)
#define ATTNCHECK_FEAT_SINKS        (1u << 5)
#define ATTNCHECK_FEAT_MIXED_DTYPES (1u << 6)
#define ATTNCHECK_FEAT_DESCALE      (1u << 7)
#define ATTNCHECK_FEAT_ALL          0xffu
/* ABI 3: serving layouts (not part of ATTNCHECK_FEAT_ALL, the attention variants). */
#define ATTNCHECK_FEAT_VARLEN       (1u << 8)
#define ATTNCHECK_FEAT_PAGED        (1u << 9)
#define ATTNCHECK_FEAT_LAYOUTS      (ATTNCHECK_FEAT_VARLEN | ATTNCHECK_FEAT_PAGED)
/* kernel.caps only: the kernel never writes lse (attncheck passes lse = NULL). */
#define ATTNCHECK_CAP_NO_LSE        (1u << 31)
/* kernel.caps only, ABI 3: the kernel has run_backward (struct_size >= ATTNCHECK_KERNEL_V3_SIZE). */
#define ATTNCHECK_CAP_BACKWARD      (1u << 30)
/* kernel.caps only: the LSE follows FlashAttention-2's causal ALiBi convention (see "ALiBi and the
 * LSE" above); o is unchanged. */
#define ATTNCHECK_CAP_ALIBI_LSE_FA2 (1u << 29)
/* kernel.caps only (a later addition to ABI 5; earlier attncheck versions ignore the bit): the
 * kernel takes the scale and a bias in Q's dtype (OpenVINO's and MLX's attention round them
 * there), so a value that dtype does not hold is not the one it computes with: the fuzzer draws
 * for it only scales and bias values that Q's dtype holds. Judging is unchanged. */
#define ATTNCHECK_CAP_PARAMS_Q_DTYPE (1u << 25)
/* kernel.caps only, ABI 5 with kv_formats (struct_size >= ATTNCHECK_KERNEL_V5Q_SIZE): the kernel takes
 * quantized caches only (see "quantized tensors" above). */
#define ATTNCHECK_CAP_QUANT_ONLY    (1u << 28)
/* The features ABI 3 handed to run_backward (the backward set of a plugin without backward_caps). */
#define ATTNCHECK_BACKWARD_V3_FEATS                                                                     \
  (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_BOOL_MASK | ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_BIAS |    \
   ATTNCHECK_FEAT_SINKS)

typedef struct {
  uint32_t struct_size;                     /* sizeof(attncheck_problem) as the harness was built */
  int32_t dtype;                            /* ATTNCHECK_F64 ...; q, k, v and o share it unless MIXED_DTYPES */
  int32_t mask;                             /* ATTNCHECK_MASK_... */
  int32_t reserved0;
  int64_t batch, heads, kv_heads;           /* heads % kv_heads == 0; query head h reads kv head h / (heads / kv_heads) */
  int64_t tq, tk, dk, dv;
  double scale;                             /* multiply Q·Kᵀ by this (1/sqrt(dk) unless the case sets another) */
  int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];   /* in elements, for [batch][head][t][d] */
  /* ---- ABI 2 (struct_size >= ATTNCHECK_PROBLEM_V2_SIZE) ---- */
  uint32_t features;                        /* ATTNCHECK_FEAT_... bits this case uses */
  int32_t q_dtype, k_dtype, v_dtype, o_dtype;   /* per tensor (each equals dtype without MIXED_DTYPES) */
  int32_t window_align;                     /* ATTNCHECK_ALIGN_... */
  int64_t window_left, window_right;        /* -1 = unbounded (both -1 without WINDOW) */
  double softcap;                           /* > 0 with SOFTCAP, else 0 */
  int32_t alibi_per_batch;                  /* 1: alibi_slopes is [batch][heads], 0: [heads] */
  int32_t bias_dtype;                       /* ATTNCHECK_F64 ... (with BIAS) */
  int64_t bias_stride[4];                   /* elements, [batch][heads][tq][tk]; 0 broadcasts */
  int64_t bool_mask_stride[4];              /* elements, [batch][heads][tq][tk]; 0 broadcasts */
  int64_t reserved2[4];                     /* 0 */
  /* ---- ABI 3 (struct_size >= ATTNCHECK_PROBLEM_V3_SIZE); 0 without a layout ---- */
  int64_t total_q;                          /* VARLEN, PAGED: cu_seqlens_q[batch] */
  int64_t total_k;                          /* VARLEN: cu_seqlens_k[batch]; PAGED: num_pages * page_size */
  int64_t page_size;                        /* PAGED: slots per page (>= 1, any value) */
  int64_t num_pages;                        /* PAGED: pages in k and v */
  int64_t max_pages;                        /* PAGED: block_table columns per sequence */
  int64_t reserved3[3];                     /* 0 */
  /* ---- ABI 5, quantized tensors (struct_size >= ATTNCHECK_PROBLEM_V5Q_SIZE) ---- */
  int32_t q_format, k_format, v_format;     /* ATTNCHECK_QF_... of each tensor; 0: not quantized */
  int32_t reserved4;                        /* 0 */
} attncheck_problem;

#define ATTNCHECK_PROBLEM_V1_SIZE  ((uint32_t)offsetof(attncheck_problem, features))
#define ATTNCHECK_PROBLEM_V2_SIZE  ((uint32_t)offsetof(attncheck_problem, total_q))
#define ATTNCHECK_PROBLEM_V3_SIZE  ((uint32_t)offsetof(attncheck_problem, q_format))
#define ATTNCHECK_PROBLEM_V5Q_SIZE ((uint32_t)sizeof(attncheck_problem))

/* Quantized formats (kernel.kv_formats, q_formats: 1u << ATTNCHECK_QF_...; docs/quantized.md). */
enum {
  ATTNCHECK_QF_NONE = 0,
  ATTNCHECK_QF_Q8_0 = 1, ATTNCHECK_QF_Q4_0 = 2, ATTNCHECK_QF_Q4_1 = 3, ATTNCHECK_QF_Q5_0 = 4,
  ATTNCHECK_QF_Q5_1 = 5, ATTNCHECK_QF_IQ4_NL = 6,
  ATTNCHECK_QF_E4M3FN = 7, ATTNCHECK_QF_E4M3FNUZ = 8, ATTNCHECK_QF_E5M2 = 9,
  ATTNCHECK_QF_INT8 = 10, ATTNCHECK_QF_INT4 = 11,
  ATTNCHECK_QF_NVFP4 = 12, ATTNCHECK_QF_MXFP4 = 13
};
/* Scale granularities (what one scale covers). */
enum { ATTNCHECK_QG_BLOCK = 0, ATTNCHECK_QG_TENSOR = 1, ATTNCHECK_QG_HEAD = 2, ATTNCHECK_QG_TOKEN = 3,
       ATTNCHECK_QG_CHANNEL = 4 };

typedef struct {
  int32_t format;                           /* ATTNCHECK_QF_...; 0: the tensor is not quantized */
  int32_t granularity;                      /* ATTNCHECK_QG_... */
  int64_t block;                            /* elements per scale along d (BLOCK), else 0 */
  const uint8_t *codes;                     /* one byte per element, code_stride */
  const void *scales, *aux;                 /* scale_stride; aux NULL when the format has none */
  const uint8_t *ggml;                      /* ggml's blocks (ggml formats, mxfp4), else NULL */
  int64_t code_stride[4], scale_stride[4], ggml_stride[4];   /* elements; elements; bytes */
} attncheck_quant_tensor;

typedef struct {
  uint32_t struct_size;                     /* sizeof(attncheck_quant) as attncheck was built */
  uint32_t reserved0;                       /* 0 */
  attncheck_quant_tensor t[3];              /* q, k, v */
} attncheck_quant;

/* ABI 5: kernel.empty_rows and kernel.empty_lse, what a kernel writes for a row with no visible key. */
enum { ATTNCHECK_EMPTY_UNDECLARED = 0, ATTNCHECK_EMPTY_ZERO = 1, ATTNCHECK_EMPTY_NAN = 2, ATTNCHECK_EMPTY_MEAN_V = 3 };
enum { ATTNCHECK_EMPTY_LSE_UNDECLARED = 0, ATTNCHECK_EMPTY_LSE_NEG_INF = 1, ATTNCHECK_EMPTY_LSE_POS_INF = 2,
       ATTNCHECK_EMPTY_LSE_NAN = 3 };
/* ABI 5: run() refuses a case when it returns non-zero with err beginning with this word. */
#define ATTNCHECK_UNSUPPORTED "unsupported:"

typedef struct {
  const void *q, *k, *v;
  void *o;
  float *lse;        /* NULL, or [batch][heads][tq] contiguous: natural-log LSE */
  void *stream;      /* cudaStream_t for ATTNCHECK_MEM_CUDA kernels, NULL otherwise */
  /* ---- ABI 2 (problem.struct_size >= ATTNCHECK_PROBLEM_V2_SIZE); NULL when the feature is unused ---- */
  const void *bias;             /* bias_dtype, bias_stride */
  const uint8_t *bool_mask;     /* 1 = visible, bool_mask_stride */
  const float *alibi_slopes;    /* [heads] or [batch][heads] */
  const float *sinks;           /* [heads] */
  const float *descale_q, *descale_k, *descale_v;   /* [batch][kv_heads] each */
  /* ---- ABI 3 (problem.struct_size >= ATTNCHECK_PROBLEM_V3_SIZE); NULL without a layout ---- */
  const int32_t *cu_seqlens_q;  /* VARLEN, PAGED: [batch + 1] */
  const int32_t *cu_seqlens_k;  /* VARLEN: [batch + 1] */
  const int32_t *block_table;   /* PAGED: [batch][max_pages] */
  const int32_t *cache_seqlens; /* PAGED: [batch] */
  /* ---- ABI 5 (problem.struct_size >= ATTNCHECK_PROBLEM_V5Q_SIZE); NULL without a quantized tensor ---- */
  const attncheck_quant *quant;
} attncheck_tensors;

/* ABI 3: what run_backward gets besides the problem and the forward's inputs. */
typedef struct {
  uint32_t struct_size;        /* sizeof(attncheck_grad_tensors) as the harness was built */
  uint32_t reserved0;          /* 0 */
  const void *o;               /* the forward output (exact, rounded to o_dtype), problem.o_stride */
  const float *lse;            /* [batch][heads][tq] contiguous, exact LSE rounded to binary32 */
  const void *dout;            /* dO: o_dtype, do_stride */
  void *dq, *dk, *dv;          /* outputs in problem.dtype, strides below */
  float *dsinks;               /* [heads] with ATTNCHECK_FEAT_SINKS, else NULL */
  int64_t do_stride[4], dq_stride[4], dk_stride[4], dv_stride[4];   /* elements, [batch][head][t][d] */
  void *reserved[4];           /* NULL */
} attncheck_grad_tensors;

typedef struct {
  uint32_t abi_version;                     /* ATTNCHECK_ABI_VERSION */
  uint32_t struct_size;                     /* sizeof(attncheck_kernel) as the plugin was built */
  const char *name;
  const char *description;
  const char *precision;                    /* a precision class name from attncheck's table, or NULL for the dtype's default */
  int32_t memory;                           /* ATTNCHECK_MEM_... */
  uint32_t caps;                            /* ABI 2: ATTNCHECK_FEAT_... bits supported, | ATTNCHECK_CAP_NO_LSE
                                               (ABI 1: reserved0 = 0: no features, LSE written) */
  int (*supports)(const attncheck_problem *p, char *why, size_t why_len);      /* 1 = yes; 0 = no, reason in why */
  int (*run)(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len);  /* 0 = ok */
  void *reserved[4];                        /* NULL */
  /* ---- ABI 3, optional (struct_size >= ATTNCHECK_KERNEL_V3_SIZE, with ATTNCHECK_CAP_BACKWARD) ---- */
  int (*run_backward)(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g,
                      char *err, size_t err_len);  /* 0 = ok */
  /* ---- ABI 4, optional (struct_size >= ATTNCHECK_KERNEL_V4_SIZE) ---- */
  uint32_t backward_caps;                   /* ATTNCHECK_FEAT_... bits run_backward takes (a subset of caps) */
  uint32_t reserved1;                       /* 0 */
  /* ---- ABI 5, optional (struct_size >= ATTNCHECK_KERNEL_V5_SIZE) ---- */
  int32_t empty_rows;                       /* ATTNCHECK_EMPTY_...: o of a row with no visible key */
  int32_t empty_lse;                        /* ATTNCHECK_EMPTY_LSE_...: its lse */
  int (*precision_of)(const attncheck_problem *p, char *cls, size_t cls_len);  /* NULL; 1 = cls holds the class */
  /* ---- ABI 5, optional (struct_size >= ATTNCHECK_KERNEL_V5Q_SIZE) ---- */
  uint32_t kv_formats;                      /* 1u << ATTNCHECK_QF_...: formats it reads for k and v; 0: none */
  uint32_t q_formats;                       /* those it reads for q */
} attncheck_kernel;

/* struct_size of attncheck_kernel in versions 1 and 2 (and of a version 3 plugin built before
 * run_backward), with run_backward (version 3), with backward_caps (version 4), with the
 * declarations of version 5, and with its quantized formats. */
#define ATTNCHECK_KERNEL_V1_SIZE ((uint32_t)offsetof(attncheck_kernel, run_backward))
#define ATTNCHECK_KERNEL_V3_SIZE ((uint32_t)offsetof(attncheck_kernel, backward_caps))
#define ATTNCHECK_KERNEL_V4_SIZE ((uint32_t)offsetof(attncheck_kernel, empty_rows))
#define ATTNCHECK_KERNEL_V5_SIZE  ((uint32_t)offsetof(attncheck_kernel, kv_formats))
#define ATTNCHECK_KERNEL_V5Q_SIZE ((uint32_t)sizeof(attncheck_kernel))

/* The first fields of an attncheck_kernel initializer, for designated initializers:
 *   static const attncheck_kernel k = {ATTNCHECK_KERNEL_INIT, .name = "mine", .run = my_run, ...};
 * fields left out are 0 / NULL, and -Wall -Wextra do not warn. */
#define ATTNCHECK_KERNEL_INIT .abi_version = ATTNCHECK_ABI_VERSION, .struct_size = sizeof(attncheck_kernel)

/* A plugin shared object exports this one function. */
const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* ATTNCHECK_KERNEL_H */
