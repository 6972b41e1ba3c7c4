/* ggml_adapter.h: the attncheck plugin of ggml's CPU attention (contrib/ggml, docs/ggml.md).
 *
 * Three kernels of one plugin, built against a ggml the user points to (GGML_DIR):
 *   ggml-fa          ggml_flash_attn_ext with ggml's own choice of path (tiled, split-KV, scalar);
 *   ggml-fa-ref      the same op with ggml_cplan.use_ref: always the scalar reference path;
 *   ggml-softmax     llama.cpp's path without flash attention: mul_mat(K, Q), soft_max_ext (mask,
 *                    scale, max_bias, sinks), mul_mat(Vᵀ, P).
 * Every tensor is copied into a fresh ggml context as ggml lays it out (exactly: f32 stays f32,
 * f16 and bf16 K and V keep their bits); the mask, ALiBi and bias become ggml's mask tensor, and
 * whatever ggml cannot express exactly is refused ("unsupported: ..."), never approximated.
 * Quantized K and V (ggml's block types q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl; kernel ABI 5's
 * tensors.quant) are copied as ggml's block bytes, as they are (the places marked QUANTIZED in
 * ggml_io.c). */
#ifndef ATTNCHECK_GGML_ADAPTER_H
#define ATTNCHECK_GGML_ADAPTER_H

#include <stddef.h>
#include <stdint.h>
#include "attncheck_kernel.h"
#include "ggml.h"

typedef enum { ACG_FA = 0, ACG_FA_REF = 1, ACG_SOFTMAX = 2 } acg_path;

/* The ggml type K or V is handed to ggml in (GGML_TYPE_F32, _F16, _BF16), or -1. */
int acg_kv_type(int32_t dtype);

/* The ggml type K or V ('k', 'v') is handed to ggml in: its block type when quantized
 * (problem.k_format, v_format), else acg_kv_type of its dtype; -1 when ggml has none. */
int acg_tensor_type(const attncheck_problem *p, char which);

/* 0 when every quantized K or V of p has its ggml blocks in t->quant, else -1 with err. */
int acg_quant_ok(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len);

/* supports() of every kernel: dtypes, sizes and the feature combinations ggml has. */
int acg_supports(acg_path path, const attncheck_problem *p, char *why, size_t why_len);

/* The precision class of the path ggml takes for p (docs/ggml.md "Precision classes"). */
int acg_precision_of(acg_path path, const attncheck_problem *p, char *cls, size_t cls_len);

/* Q as ggml's f32 [dk, tq, heads, batch]; K or V ('k', 'v') in ggml's [d, tk, kv_heads, batch] of
 * acg_tensor_type; V transposed ('t': [tk, dv, kv_heads, batch], llama.cpp's cache without flash
 * attention). NULL when out of context memory. */
struct ggml_tensor *acg_copy_q(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t);
struct ggml_tensor *acg_copy_kv(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t,
                                char which);

/* The mask tensor [tk, tq, heads, batch] of type mtype (GGML_TYPE_F16 for flash attention, F32 for
 * soft_max_ext): -inf for an invisible key (mask, window, boolean mask), the bias, or minus the
 * ALiBi distance; *max_bias the max_bias whose ggml slope series is the case's slopes (0 without
 * ALiBi). *mask NULL when the case needs none. Returns 0, or -1 with err "unsupported: ..." (a
 * value the mask's type does not hold exactly, slopes that are not ggml's series) or another
 * error. */
int acg_build_mask(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t, int mtype,
                   struct ggml_tensor **mask, float *max_bias, char *err, size_t err_len);

/* o from ggml's f32 result r: flash attention's [dv, heads, tq, batch] (permuted) when permuted,
 * else mul_mat's [dv, tq, heads, batch]; rounded to o's dtype. */
void acg_store_o(const attncheck_problem *p, const attncheck_tensors *t, const float *r, int permuted);

/* 1 when ATTNCHECK_GGML_BACKEND names ggml's CPU backend (unset, empty or "CPU"). */
int acg_backend_is_cpu(void);

/* Runs one case on a kernel's path (ggml_kernels.c). */
int acg_run(acg_path path, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len);

#endif
