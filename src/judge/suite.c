/* suite.c: the fixed suite's case list and value patterns. */
#include "config.h"
#include "suite.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "variants.h"
#include "vgen.h"
#include "suite_values.h"

/* Seeds of the suite are 1000 + spec number (streams per tensor and dtype); bench/calibrate
 * draws its seeds at 2^32 and above, so the two never share a case. */
#define SUITE_SEED_BASE 1000

enum { L_DENSE = 0, L_BTHD, L_PADDED };
static const char *const dist_names[] = {"normal", "uniform", "large", "negative", "latemax", "ties",
                                         "maskednan", "vones", "zeroq", "perm", "q2", "slice", "example",
                                         "steep", "tail", "largeneg", "cliff", "extreme", "splitstep"};

typedef struct {
  int64_t B, H, KVH, tq, tk, dk, dv;
  ac_mask mask;
  int layout, dist;
  int rows_k;           /* > 0: oracle on rows edges+K */
  int repeat;
  int seed_of;          /* >= 0: use the seed (and for D_SLICE the shape) of that spec */
  const char *example;
} spec;

/* The ci list (each spec crossed with every dtype). */
static const spec ci_specs[] = {
  {1, 1, 1, 1, 1, 1, 1, AC_MASK_NONE, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 1, 1, 1, 1, 64, 64, AC_MASK_CAUSAL_BR, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 1, 1, 239, 1, 32, 32, AC_MASK_CAUSAL_BR, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 1, 1, 1, 239, 59, 59, AC_MASK_CAUSAL, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {2, 4, 2, 113, 203, 64, 64, AC_MASK_CAUSAL_BR, L_DENSE, D_NORMAL, 0, 1, -1, NULL},
  {1, 2, 2, 203, 113, 111, 111, AC_MASK_CAUSAL, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 2, 2, 128, 128, 128, 128, AC_MASK_NONE, L_BTHD, D_NORMAL, 0, 1, -1, NULL},
  {1, 1, 1, 127, 129, 3, 5, AC_MASK_NONE, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 1, 1, 1023, 1024, 128, 128, AC_MASK_CAUSAL, L_DENSE, D_NORMAL, 8, 0, -1, NULL},
  {1, 1, 1, 256, 256, 256, 256, AC_MASK_NONE, L_PADDED, D_NORMAL, 16, 0, -1, NULL},
  {2, 2, 1, 65, 65, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_NORMAL, 0, 1, -1, NULL},
  {1, 1, 1, 33, 47, 64, 64, AC_MASK_NONE, L_DENSE, D_LARGE, 0, 0, -1, NULL},
  {1, 1, 1, 17, 300, 16, 16, AC_MASK_NONE, L_DENSE, D_LATEMAX, 0, 0, -1, NULL},
  {1, 1, 1, 19, 77, 64, 64, AC_MASK_CAUSAL_BR, L_DENSE, D_NEGATIVE, 0, 0, -1, NULL},
  {1, 1, 1, 40, 70, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_MASKED_NAN, 0, 0, -1, NULL},
  {1, 1, 1, 64, 200, 32, 32, AC_MASK_NONE, L_DENSE, D_TIES, 0, 0, -1, NULL},
  {1, 1, 1, 31, 45, 40, 40, AC_MASK_NONE, L_DENSE, D_VONES, 0, 0, -1, NULL},
  {1, 1, 1, 31, 45, 40, 40, AC_MASK_CAUSAL, L_DENSE, D_ZEROQ, 0, 0, -1, NULL},
  {1, 1, 1, 64, 96, 32, 32, AC_MASK_NONE, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 1, 1, 64, 96, 32, 32, AC_MASK_NONE, L_DENSE, D_PERM, 0, 0, 18, NULL},
  {1, 1, 1, 64, 96, 32, 32, AC_MASK_NONE, L_DENSE, D_Q2, 0, 0, 18, NULL},
  {1, 1, 1, 113, 203, 64, 64, AC_MASK_CAUSAL_BR, L_DENSE, D_SLICE, 0, 0, 4, NULL},
  {1, 3, 3, 129, 257, 80, 80, AC_MASK_CAUSAL_BR, L_DENSE, D_UNIFORM, 0, 0, -1, NULL},
  {1, 1, 1, 8, 8, 16, 16, AC_MASK_CAUSAL, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {1, 1, 1, 48, 48, 16, 16, AC_MASK_CAUSAL, L_DENSE, D_STEEP, 0, 0, -1, NULL},
  {1, 1, 1, 24, 40, 16, 8, AC_MASK_NONE, L_DENSE, D_TAIL, 0, 0, -1, NULL},
  {1, 1, 1, 33, 47, 64, 64, AC_MASK_CAUSAL, L_DENSE, D_LARGENEG, 0, 0, -1, NULL},
  {1, 1, 1, 48, 48, 16, 16, AC_MASK_CAUSAL, L_DENSE, D_CLIFF, 0, 0, -1, NULL},
  {1, 1, 1, 2, 3000, 16, 16, AC_MASK_NONE, L_DENSE, D_SPLITSTEP, 0, 0, -1, NULL},
  /* causal self-attention (tq = tk) and no mask at tq = tk, with every value pattern: a kernel
   * that supports only square problems still meets each of them */
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_LARGE, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_NEGATIVE, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_LATEMAX, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_MASKED_NAN, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_TIES, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_VONES, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_ZEROQ, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_UNIFORM, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 16, 8, AC_MASK_CAUSAL, L_DENSE, D_TAIL, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_CAUSAL, L_DENSE, D_LARGENEG, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_LARGE, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_NEGATIVE, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_LATEMAX, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_TIES, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_VONES, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_ZEROQ, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_UNIFORM, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 16, 8, AC_MASK_NONE, L_DENSE, D_TAIL, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 32, 32, AC_MASK_NONE, L_DENSE, D_LARGENEG, 0, 0, -1, NULL},
  {1, 1, 1, 40, 40, 16, 16, AC_MASK_NONE, L_DENSE, D_STEEP, 0, 0, -1, NULL},
  /* rows with no visible key after rows with visible keys (the next batch and head), in
   * multi-head, multi-batch and GQA cases */
  {2, 3, 3, 50, 20, 16, 16, AC_MASK_CAUSAL_BR, L_DENSE, D_NORMAL, 0, 0, -1, NULL},
  {2, 4, 2, 37, 29, 32, 32, AC_MASK_CAUSAL_BR, L_BTHD, D_LARGE, 0, 0, -1, NULL},
};
#define N_CI ((int64_t)(sizeof ci_specs / sizeof ci_specs[0]))

/* Attention variants (docs/variants.md): each a base shape and value pattern with a variant
 * spec (vgen.h), crossed with every dtype; a kernel that does not declare a feature SKIPs it.
 * Windows of width 0, 1, a 64-key tile - 1 and tile, wider than T, both alignments; softcap
 * far past saturation (capped scores tie); ALiBi with large slopes at long T; bias with -inf
 * blocks and rows, NaN under masked keys and the finite sentinels of real code; boolean masks
 * random, banded, emptying middle rows and sparse; sinks that dominate or vanish, with empty
 * rows; descales; and the combinations of gpt-oss, Gemma 2 and ALiBi models. */
typedef struct {
  spec base;
  ac_vspec v;
} var_spec;
#define VB(B, H, KVH, TQ, TK, D, MASK, DIST) {B, H, KVH, TQ, TK, D, D, MASK, L_DENSE, DIST, 0, 0, -1, NULL}
#define W AC_FEAT_WINDOW
static const var_spec var_specs[] = {
  {VB(1, 2, 1, 64, 96, 32, AC_MASK_NONE, D_NORMAL), {.used = W, .win_left = 16, .win_right = 0}},
  {VB(1, 1, 1, 40, 40, 16, AC_MASK_NONE, D_NORMAL), {.used = W, .win_left = 0, .win_right = 0}},
  /* left edge 1: row 64's window starts at key 63, the last key of the first 64-key tile */
  {VB(1, 1, 1, 130, 130, 16, AC_MASK_NONE, D_NORMAL), {.used = W, .win_left = 1, .win_right = 1}},
  {VB(1, 1, 1, 200, 200, 32, AC_MASK_NONE, D_NORMAL), {.used = W, .win_left = 63, .win_right = 64}},
  {VB(1, 1, 1, 70, 130, 32, AC_MASK_CAUSAL, D_NORMAL), {.used = W, .win_left = 500, .win_right = 500, .win_top_left = 1}},
  {VB(1, 1, 1, 50, 50, 16, AC_MASK_NONE, D_NORMAL), {.used = W, .win_left = 10, .win_right = -1, .win_top_left = 1}},
  {VB(1, 2, 2, 64, 64, 32, AC_MASK_CAUSAL, D_LARGE), {.used = AC_FEAT_SOFTCAP, .softcap = 30}},
  {VB(1, 1, 1, 48, 80, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_SOFTCAP, .softcap = 5}},
  {VB(1, 1, 1, 40, 40, 32, AC_MASK_CAUSAL, D_TIES), {.used = AC_FEAT_SOFTCAP, .softcap = 0.5}},
  {VB(1, 4, 4, 128, 128, 32, AC_MASK_CAUSAL, D_NORMAL), {.used = AC_FEAT_ALIBI, .alibi_max = 1}},
  {VB(2, 4, 2, 300, 300, 16, AC_MASK_CAUSAL_BR, D_NORMAL), {.used = AC_FEAT_ALIBI, .alibi_max = 8, .alibi_per_batch = 1}},
  {VB(1, 2, 2, 17, 300, 16, AC_MASK_CAUSAL_BR, D_LATEMAX), {.used = AC_FEAT_ALIBI, .alibi_max = 1}},
  {VB(2, 2, 2, 48, 64, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_NORMAL, .bias_scale = 1, .bias_bcast_b = 1}},
  {VB(1, 2, 2, 64, 64, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_NEGINF_BLOCKS}},
  {VB(1, 1, 1, 40, 60, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_NEGINF_ROWS}},
  {VB(1, 1, 1, 48, 48, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_SENTINEL, .bias_scale = -1e4}},
  {VB(1, 1, 1, 48, 48, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_SENTINEL, .bias_scale = -65504}},
  {VB(1, 1, 1, 48, 48, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_SENTINEL, .bias_scale = -1e9}},
  {VB(1, 1, 1, 48, 48, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_SENTINEL, .bias_scale = -0x1.fffffep+127}},
  {VB(1, 1, 1, 40, 70, 32, AC_MASK_CAUSAL, D_NORMAL), {.used = AC_FEAT_BIAS, .bias = AC_VB_NAN_MASKED}},
  {VB(2, 2, 1, 64, 80, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BOOL_MASK, .bmask = AC_VM_RANDOM, .mask_bcast_h = 1}},
  {VB(1, 1, 1, 100, 100, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BOOL_MASK, .bmask = AC_VM_BANDED}},
  {VB(1, 2, 2, 60, 90, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BOOL_MASK, .bmask = AC_VM_EMPTY_MIDDLE}},
  {VB(1, 1, 1, 64, 64, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_BOOL_MASK, .bmask = AC_VM_SPARSE}},
  {VB(1, 4, 2, 50, 30, 32, AC_MASK_CAUSAL_BR, D_NORMAL), {.used = AC_FEAT_SINKS, .sinks = AC_VS_NORMAL}},
  {VB(1, 2, 2, 40, 40, 32, AC_MASK_CAUSAL, D_NORMAL), {.used = AC_FEAT_SINKS, .sinks = AC_VS_DOMINANT}},
  {VB(1, 2, 2, 40, 40, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_SINKS, .sinks = AC_VS_VANISHING}},
  {VB(1, 2, 1, 2, 2100, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_SINKS, .sinks = AC_VS_LEVEL}},
  {VB(1, 2, 1, 64, 64, 32, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_DESCALE, .descale = AC_VD_NORMAL}},
  {VB(1, 1, 1, 32, 32, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_DESCALE, .descale = AC_VD_TINY}},
  {VB(1, 1, 1, 32, 32, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_DESCALE, .descale = AC_VD_HUGE}},
  {VB(1, 4, 2, 128, 128, 64, AC_MASK_CAUSAL, D_NORMAL), {.used = W | AC_FEAT_SINKS, .win_left = 31, .win_right = 0}},
  {VB(1, 2, 1, 96, 96, 32, AC_MASK_CAUSAL, D_NORMAL), {.used = W | AC_FEAT_SOFTCAP, .softcap = 50, .win_left = 32, .win_right = 0}},
  {VB(1, 2, 2, 64, 64, 32, AC_MASK_NONE, D_NORMAL),
   {.used = AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_BOOL_MASK, .softcap = 20, .alibi_max = 1,
    .bias = AC_VB_SLOPE, .bias_scale = 4, .bmask = AC_VM_RANDOM}},
  /* dropout with the kernel's keep-mask (docs/dropout.md): FlashAttention's p = 0.17 over two batches of
   * four heads (the mask's structure tests pair heads and batches), and p = 1/2 in a window */
  {VB(2, 4, 2, 64, 96, 32, AC_MASK_CAUSAL, D_NORMAL), {.used = AC_FEAT_DROPOUT, .dropout_p = 0x1.5c28f6p-3}},
  {VB(1, 4, 4, 48, 48, 16, AC_MASK_NONE, D_NORMAL), {.used = AC_FEAT_DROPOUT | W, .dropout_p = 0.5, .win_left = 20, .win_right = 4}},
};
#undef W
#undef VB
#define N_VAR ((int64_t)(sizeof var_specs / sizeof var_specs[0]))
/* Per-tensor dtypes (mixed_dtypes): each a base shape and value pattern with the compute dtype
 * and the dtypes of q, k, v and o, not crossed with the dtypes; every combination a built-in
 * kernel takes (binary32 with f16 or bf16 K and V, fp8 inputs with a bf16, f16 or f32 output),
 * with values at each format's extremes (D_EXTREME: V at the largest finite values, Q and K
 * down to the subnormals of their dtypes) and the patterns where a wrong conversion shows. */
typedef struct {
  spec base;
  ac_dtype t;           /* compute dtype */
  ac_dtype d[4];        /* q, k, v, o */
} mix_spec;
#define MB(B, H, KVH, TQ, TK, D, MASK, DIST) {B, H, KVH, TQ, TK, D, D, MASK, L_DENSE, DIST, 0, 0, -1, NULL}
static const mix_spec mix_specs[] = {
  {MB(1, 2, 1, 64, 96, 32, AC_MASK_NONE, D_NORMAL), AC_F32, {AC_F32, AC_F16, AC_F16, AC_F32}},
  {MB(2, 4, 2, 113, 203, 64, AC_MASK_CAUSAL_BR, D_NORMAL), AC_F32, {AC_F32, AC_BF16, AC_BF16, AC_F32}},
  {MB(1, 1, 1, 40, 70, 32, AC_MASK_CAUSAL, D_NORMAL), AC_F32, {AC_F32, AC_F16, AC_BF16, AC_F32}},
  {MB(1, 1, 1, 40, 70, 32, AC_MASK_NONE, D_NORMAL), AC_F32, {AC_F32, AC_BF16, AC_F16, AC_F32}},
  {MB(1, 1, 1, 33, 47, 64, AC_MASK_NONE, D_LARGE), AC_F32, {AC_F32, AC_F16, AC_F16, AC_F32}},
  {MB(1, 1, 1, 17, 300, 16, AC_MASK_NONE, D_LATEMAX), AC_F32, {AC_F32, AC_BF16, AC_BF16, AC_F32}},
  {MB(1, 1, 1, 48, 64, 32, AC_MASK_NONE, D_EXTREME), AC_F32, {AC_F32, AC_F16, AC_F16, AC_F32}},
  {MB(1, 1, 1, 48, 64, 32, AC_MASK_CAUSAL, D_EXTREME), AC_F32, {AC_F32, AC_BF16, AC_BF16, AC_F32}},
  {MB(1, 2, 2, 64, 96, 32, AC_MASK_NONE, D_NORMAL), AC_E4M3, {AC_E4M3, AC_E4M3, AC_E4M3, AC_BF16}},
  {MB(2, 4, 2, 113, 203, 64, AC_MASK_CAUSAL_BR, D_NORMAL), AC_E4M3, {AC_E4M3, AC_E4M3, AC_E4M3, AC_BF16}},
  {MB(1, 1, 1, 40, 70, 32, AC_MASK_CAUSAL, D_NORMAL), AC_E4M3, {AC_E4M3, AC_E4M3, AC_E4M3, AC_F32}},
  {MB(1, 1, 1, 40, 70, 32, AC_MASK_NONE, D_NORMAL), AC_E4M3, {AC_E4M3, AC_E4M3, AC_E4M3, AC_F16}},
  {MB(1, 1, 1, 48, 64, 32, AC_MASK_NONE, D_EXTREME), AC_E4M3, {AC_E4M3, AC_E4M3, AC_E4M3, AC_BF16}},
  {MB(1, 2, 2, 64, 96, 32, AC_MASK_NONE, D_NORMAL), AC_E5M2, {AC_E5M2, AC_E5M2, AC_E5M2, AC_BF16}},
  {MB(1, 1, 1, 40, 70, 32, AC_MASK_CAUSAL, D_NORMAL), AC_E5M2, {AC_E5M2, AC_E5M2, AC_E5M2, AC_F32}},
  {MB(1, 1, 1, 48, 64, 32, AC_MASK_NONE, D_EXTREME), AC_E5M2, {AC_E5M2, AC_E5M2, AC_E5M2, AC_BF16}},
};
#undef MB
#define N_MIX ((int64_t)(sizeof mix_specs / sizeof mix_specs[0]))
static const char *const examples[] = {"tiny3", "andrea-120m"};
#define N_EX 2

/* full: the FlashAttention test grid of (tq, tk) pairs, head dims and masks. */
static const int64_t fa_pairs[][2] = {{113, 203}, {128, 217}, {113, 211}, {108, 256}, {256, 512},
                                      {512, 256}, {1024, 1024}, {1023, 1024}, {1024, 1023}, {2048, 2048}};
static const int64_t fa_dims[] = {32, 40, 59, 64, 80, 96, 111, 128, 160, 192, 224, 256};
#define N_PAIRS 10
#define N_FULL_GRID (N_PAIRS * 3 * 4)

static const ac_dtype dtypes[] = {AC_F64, AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
#define N_DT 6

int ac_suite_parse(const char *s, ac_suite_kind *out)
{
  if (!strcmp(s, "ci")) *out = AC_SUITE_CI;
  else if (!strcmp(s, "full")) *out = AC_SUITE_FULL;
  else return -1;
  return 0;
}

int64_t ac_suite_count(ac_suite_kind k)
{
  int64_t n = N_CI * N_DT + N_EX + N_VAR * N_DT + N_MIX;
  if (k == AC_SUITE_FULL) n += N_FULL_GRID * N_DT;
  return n + ac_suite_layout_count();
}

/* Cases before the serving layouts (suite_layouts.c). */
static int64_t layout_base(ac_suite_kind k) { return ac_suite_count(k) - ac_suite_layout_count(); }

/* Spec of grid case g (full suite). */
static spec grid_spec(int64_t g)
{
  spec s = {1, 2, 1, 0, 0, 0, 0, AC_MASK_NONE, L_DENSE, D_NORMAL, 0, 0, -1, NULL};
  int64_t pair = g / 12, rest = g % 12, mask = rest / 4, di = rest % 4;
  s.tq = fa_pairs[pair][0];
  s.tk = fa_pairs[pair][1];
  s.dk = s.dv = fa_dims[(pair * 5 + mask * 4 + di * 3) % 12];
  s.mask = (ac_mask)mask;
  if (s.tq * s.tk >= 512 * 256) s.rows_k = 8;
  if (g % 7 == 3) s.layout = L_BTHD;
  if (g % 5 == 1) s.KVH = 2;
  if (g % 11 == 4) s.dv = 32;
  return s;
}

/* Locate case i: spec (copied), dtype, example name, spec number for seeds; *vs the variant
 * spec of a variant case, *mx the dtypes of a mixed-dtype case (NULL otherwise). */
static int locate(ac_suite_kind k, int64_t i, spec *s, ac_dtype *t, int64_t *specno, const ac_vspec **vs,
                  const mix_spec **mx)
{
  *vs = NULL;
  *mx = NULL;
  if (i < 0 || i >= ac_suite_count(k)) return -1;
  if (i < N_CI * N_DT) {
    *s = ci_specs[i / N_DT];
    *t = dtypes[i % N_DT];
    *specno = i / N_DT;
    return 0;
  }
  i -= N_CI * N_DT;
  if (i < N_EX) {
    memset(s, 0, sizeof *s);
    s->dist = D_EXAMPLE;
    s->example = examples[i];
    s->seed_of = -1;
    if (i == 1) s->rows_k = 16;
    *t = AC_F32;
    *specno = 900 + i;
    return 0;
  }
  i -= N_EX;
  if (i < N_VAR * N_DT) {
    *s = var_specs[i / N_DT].base;
    *vs = &var_specs[i / N_DT].v;
    *t = dtypes[i % N_DT];
    *specno = 2000 + i / N_DT;
    return 0;
  }
  i -= N_VAR * N_DT;
  if (i < N_MIX) {
    *mx = &mix_specs[i];
    *s = mix_specs[i].base;
    *t = mix_specs[i].t;
    *specno = 3000 + i;
    return 0;
  }
  i -= N_MIX;
  *s = grid_spec(i / N_DT);
  *t = dtypes[i % N_DT];
  *specno = 1000 + i / N_DT;
  return 0;
}

static void spec_name(const spec *s, const ac_vspec *vs, const mix_spec *mx, ac_dtype t, char *name, size_t n)
{
  if (s->dist == D_EXAMPLE) {
    snprintf(name, n, "example-%s", s->example);
    return;
  }
  size_t len = (size_t)snprintf(name, n, "%s-%lldx%lld-d%lld", ac_dtype_name(t), (long long)s->tq, (long long)s->tk,
                                (long long)s->dk);
  if (s->dv != s->dk) len += (size_t)snprintf(name + len, n - len, "v%lld", (long long)s->dv);
  len += (size_t)snprintf(name + len, n - len, "-%s", ac_mask_name(s->mask));
  if (s->B > 1 || s->H > 1) len += (size_t)snprintf(name + len, n - len, "-b%lldh%lldkv%lld", (long long)s->B,
                                                    (long long)s->H, (long long)s->KVH);
  if (s->layout == L_BTHD) len += (size_t)snprintf(name + len, n - len, "-bthd");
  if (s->layout == L_PADDED) len += (size_t)snprintf(name + len, n - len, "-padded");
  if (s->dist != D_NORMAL) len += (size_t)snprintf(name + len, n - len, "-%s", dist_names[s->dist]);
  if (vs && len < n) {
    name[len++] = '-';
    ac_vspec_name(vs, name + len, n - len);
  }
  if (mx && len < n)
    snprintf(name + len, n - len, "-dtypes-%s.%s.%s.%s", ac_dtype_name(mx->d[0]), ac_dtype_name(mx->d[1]),
             ac_dtype_name(mx->d[2]), ac_dtype_name(mx->d[3]));
}

int ac_suite_describe(ac_suite_kind k, int64_t i, char *name, size_t n, ac_dtype *dtype)
{
  spec s;
  ac_dtype t;
  int64_t no;
  const ac_vspec *vs;
  const mix_spec *mx;
  if (i >= layout_base(k)) return ac_suite_layout_describe(i - layout_base(k), name, n, dtype);
  if (locate(k, i, &s, &t, &no, &vs, &mx) < 0) return -1;
  spec_name(&s, vs, mx, t, name, n);
  if (dtype) *dtype = t;
  return 0;
}

static void set_layout(ac_problem *p, int layout)
{
  memset(p->q_stride, 0, sizeof p->q_stride);
  memset(p->k_stride, 0, sizeof p->k_stride);
  memset(p->v_stride, 0, sizeof p->v_stride);
  memset(p->o_stride, 0, sizeof p->o_stride);
  if (layout == L_DENSE) return;
  const int64_t H[4] = {p->heads, p->kv_heads, p->kv_heads, p->heads};
  const int64_t T[4] = {p->tq, p->tk, p->tk, p->tq};
  const int64_t D[4] = {p->dk, p->dk, p->dv, p->dv};
  int64_t *st[4] = {p->q_stride, p->k_stride, p->v_stride, p->o_stride};
  for (int x = 0; x < 4; x++) {
    if (layout == L_BTHD) {      /* [batch][t][head][d], as FlashAttention takes its inputs */
      st[x][3] = 1;
      st[x][1] = D[x];
      st[x][2] = H[x] * D[x];
      st[x][0] = T[x] * H[x] * D[x];
    } else {                     /* padded rows and heads */
      st[x][3] = 1;
      st[x][2] = D[x] + 3;
      st[x][1] = T[x] * (D[x] + 3) + 5;
      st[x][0] = H[x] * st[x][1] + 7;
    }
  }
}

static void set_shape(ac_problem *p, const spec *s, ac_dtype t)
{
  memset(p, 0, sizeof *p);
  p->dtype = t;
  p->mask = s->mask;
  p->batch = s->B;
  p->heads = s->H;
  p->kv_heads = s->KVH;
  p->tq = s->tq;
  p->tk = s->tk;
  p->dk = s->dk;
  p->dv = s->dv;
  p->scale_is_default = 1;
  p->scale = 1 / sqrt((double)s->dk);
  if (s->dist == D_LARGENEG) {
    p->scale_is_default = 0;
    p->scale = -p->scale;
  }
  set_layout(p, s->layout);
}

int ac_suite_make(ac_suite_kind k, int64_t i, ac_suite_case *sc, ac_err *e)
{
  spec s;
  ac_dtype t;
  int64_t no;
  const ac_vspec *vs;
  const mix_spec *mx;
  memset(sc, 0, sizeof *sc);
  ac_case_init(&sc->c);
  if (i >= layout_base(k) && i < ac_suite_count(k)) return ac_suite_layout_make(i - layout_base(k), sc, e);
  if (locate(k, i, &s, &t, &no, &vs, &mx) < 0) return ac_err_set(e, "suite case %lld does not exist", (long long)i);
  spec_name(&s, vs, mx, t, sc->name, sizeof sc->name);
  sc->repeat = s.repeat;
  if (s.rows_k > 0) snprintf(sc->rows, sizeof sc->rows, "edges+%d", s.rows_k);
  if (s.dist == D_EXAMPLE) return ac_case_example(&sc->c, s.example, e);
  uint64_t seed = SUITE_SEED_BASE + (uint64_t)(s.seed_of >= 0 ? s.seed_of : no);
  seed = seed * 8 + (uint64_t)t;
  ac_case *c = &sc->c;
  if (s.dist == D_SLICE) {
    /* the base case alone, then one (batch, head) slice of it */
    const spec *bs = &ci_specs[s.seed_of];
    ac_case base;
    ac_case_init(&base);
    set_shape(&base.p, bs, t);
    if (ac_case_alloc(&base, e) < 0) return -1;
    ac_suite_fill_values(&base, bs->dist, seed);
    set_shape(&c->p, &s, t);
    if (ac_case_alloc(c, e) < 0) {
      ac_case_free(&base);
      return -1;
    }
    const ac_problem *bp = &base.p;
    int64_t b = bp->batch - 1, h = bp->heads - 1, kh = ac_kv_head(bp, h);
    size_t es = ac_dtype_size(t);
    memcpy(c->q, (char *)base.q + ac_qidx(bp, b, h, 0, 0) * es, (size_t)(bp->tq * bp->dk) * es);
    memcpy(c->k, (char *)base.k + ac_kidx(bp, b, kh, 0, 0) * es, (size_t)(bp->tk * bp->dk) * es);
    memcpy(c->v, (char *)base.v + ac_vidx(bp, b, kh, 0, 0) * es, (size_t)(bp->tk * bp->dv) * es);
    ac_case_free(&base);
  } else {
    set_shape(&c->p, &s, t);
    if (mx && ac_features_set_dtypes(&c->p, mx->d, e)) return -1;
    if (ac_case_alloc(c, e) < 0) return -1;
    ac_suite_fill_values(c, s.dist == D_PERM || s.dist == D_Q2 ? D_NORMAL : s.dist, seed);
    if (s.dist == D_PERM) {
      /* reverse-and-rotate the keys (with their values) */
      ac_problem *p = &c->p;
      size_t es = ac_dtype_size(t);
      size_t nk = (size_t)(p->tk * p->dk) * es, nv = (size_t)(p->tk * p->dv) * es;
      char *tk = ac_xmalloc(nk), *tv = ac_xmalloc(nv);
      for (int64_t b = 0; b < p->batch; b++)
        for (int64_t kh = 0; kh < p->kv_heads; kh++) {
          char *K = (char *)c->k + ac_kidx(p, b, kh, 0, 0) * es, *V = (char *)c->v + ac_vidx(p, b, kh, 0, 0) * es;
          memcpy(tk, K, nk);
          memcpy(tv, V, nv);
          for (int64_t j = 0; j < p->tk; j++) {
            int64_t src = (p->tk - 1 - j + 7) % p->tk;
            memcpy(K + (size_t)(j * p->dk) * es, tk + (size_t)(src * p->dk) * es, (size_t)p->dk * es);
            memcpy(V + (size_t)(j * p->dv) * es, tv + (size_t)(src * p->dv) * es, (size_t)p->dv * es);
          }
        }
      free(tk);
      free(tv);
    } else if (s.dist == D_Q2) {
      /* Q x 2 (exact) with the scale halved */
      ac_counts n;
      ac_problem_counts(&c->p, &n, NULL);
      for (int64_t x = 0; x < n.q; x++) ac_store_bits(t, c->q, (size_t)x, ac_encode_f64(t, 2 * ac_load(t, c->q, (size_t)x)));
      c->p.scale_is_default = 0;
      c->p.scale = 0.5 / sqrt((double)c->p.dk);
    }
  }
  if (vs && (vs->used & AC_FEAT_DESCALE) && t == AC_F64) {
    snprintf(sc->skip, sizeof sc->skip, "not defined: fp64 tensors take no descales");
    return 0;
  }
  if (vs && ac_vspec_apply(c, vs, seed, e)) return -1;
  c->seed = seed;
  snprintf(c->generator, sizeof c->generator, "suite:%s%s%s", dist_names[s.dist], vs ? "+variant" : "", mx ? "+dtypes" : "");
  return 0;
}

void ac_suite_case_free(ac_suite_case *sc)
{
  ac_case_free(&sc->c);
}
