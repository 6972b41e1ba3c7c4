/* myplugin.c: a complete attncheck plugin — a small, correct f32 attention kernel that also
 * computes the attention variants of ABI 2 (sliding window, softcap, ALiBi, bias, boolean
 * mask, sinks), and the same kernel declared as one that writes no LSE.
 *
 * It needs nothing from attncheck but the ABI header <attncheck/kernel.h>, installed by
 * `make install` with attncheck.pc. Build it outside the tree with
 *     cc -shared -fPIC -O2 $(pkg-config --cflags attncheck) myplugin.c -o myplugin.so
 * then run
 *     attncheck suite --kernel ./myplugin.so --suite ci
 * In the source tree the same header is kernels/attncheck_kernel.h; its first comment gives
 * the formula this file follows step by step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <attncheck/kernel.h>

/* The variants computed here; descales and per-tensor dtypes are not (attncheck SKIPs those cases). */
#define MY_CAPS (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP | ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_BIAS | \
                 ATTNCHECK_FEAT_BOOL_MASK | ATTNCHECK_FEAT_SINKS)

static int my_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dtype != ATTNCHECK_F32) {
    snprintf(why, why_len, "myplugin handles f32 only");
    return 0;
  }
  if ((p->features & ATTNCHECK_FEAT_BIAS) && p->bias_dtype != ATTNCHECK_F32) {
    snprintf(why, why_len, "myplugin takes an f32 bias only");
    return 0;
  }
  return 1;
}

/* Element [b][h][i][d] of a tensor with strides s (a zero stride broadcasts). */
static inline int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

/* Step 5 of the formula: is key j visible to query i (mask, window and boolean mask)? */
static int visible(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, int64_t j)
{
  if (p->mask == ATTNCHECK_MASK_CAUSAL && j > i) return 0;
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT && j > i + p->tk - p->tq) return 0;
  if (p->features & ATTNCHECK_FEAT_WINDOW) {
    int64_t c = i + (p->window_align == ATTNCHECK_ALIGN_BOTTOM_RIGHT ? p->tk - p->tq : 0);
    if (p->window_left >= 0 && j < c - p->window_left) return 0;
    if (p->window_right >= 0 && j > c + p->window_right) return 0;
  }
  if ((p->features & ATTNCHECK_FEAT_BOOL_MASK) && !t->bool_mask[at(p->bool_mask_stride, b, h, i, j)]) return 0;
  return 1;
}

/* Steps 1-4: the score of visible key j. */
static float score(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, int64_t j)
{
  const float *q = t->q, *k = t->k;
  int64_t kh = h / (p->heads / p->kv_heads);   /* GQA: query head h reads key/value head kh */
  float dot = 0.0f;
  for (int64_t d = 0; d < p->dk; d++) dot += q[at(p->q_stride, b, h, i, d)] * k[at(p->k_stride, b, kh, j, d)];
  float s = dot * (float)p->scale;
  if (p->features & ATTNCHECK_FEAT_SOFTCAP) s = (float)p->softcap * tanhf(s / (float)p->softcap);
  if (p->features & ATTNCHECK_FEAT_ALIBI) {
    float m = t->alibi_slopes[p->alibi_per_batch ? b * p->heads + h : h];
    s -= m * (float)llabs(i + p->tk - p->tq - j);
  }
  if (p->features & ATTNCHECK_FEAT_BIAS) s += ((const float *)t->bias)[at(p->bias_stride, b, h, i, j)];
  return s;
}

/* Step 6 for one row, three passes over its visible keys: max, sum of exponentials, P·V.
 * s and key hold tk scores and key indices; lse is NULL or this row's LSE. */
static void row(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, float *s,
                int64_t *key, float *lse)
{
  const float *v = t->v;
  float *o = t->o;
  int64_t kh = h / (p->heads / p->kv_heads), n = 0;
  int sink = (p->features & ATTNCHECK_FEAT_SINKS) != 0;
  float m = sink ? t->sinks[h] : -INFINITY;
  for (int64_t j = 0; j < p->tk; j++)
    if (visible(p, t, b, h, i, j)) {
      key[n] = j;
      s[n] = score(p, t, b, h, i, j);
      if (s[n] > m || isnan(s[n])) m = s[n]; /* a NaN score makes the row NaN: keep it, never skip it */
      n++;
    }
  if (m == -INFINITY) {   /* no visible key (or only scores of -inf): o = 0, lse = the sink or -inf */
    for (int64_t d = 0; d < p->dv; d++) o[at(p->o_stride, b, h, i, d)] = 0.0f;
    if (lse) *lse = sink ? t->sinks[h] : -INFINITY;
    return;
  }
  float sum = sink ? expf(t->sinks[h] - m) : 0.0f;   /* the sink: in the denominator, value 0 */
  for (int64_t x = 0; x < n; x++) {
    s[x] = expf(s[x] - m);
    sum += s[x];
  }
  for (int64_t d = 0; d < p->dv; d++) {
    float acc = 0.0f;
    for (int64_t x = 0; x < n; x++) acc += s[x] * v[at(p->v_stride, b, kh, key[x], d)];
    o[at(p->o_stride, b, h, i, d)] = acc / sum;
  }
  if (lse) *lse = m + logf(sum);
}

static int attend(const attncheck_problem *p, const attncheck_tensors *t, float *lse, char *err, size_t err_len)
{
  float *s = malloc((size_t)(p->tk + 1) * sizeof *s);
  int64_t *key = malloc((size_t)(p->tk + 1) * sizeof *key);
  if (!s || !key) {
    free(s);
    free(key);
    snprintf(err, err_len, "out of memory for %lld scores", (long long)p->tk);
    return 1;
  }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        row(p, t, b, h, i, s, key, lse ? &lse[(b * p->heads + h) * p->tq + i] : NULL);
  free(s);
  free(key);
  return 0;
}

static int my_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return attend(p, t, t->lse, err, err_len);   /* t->lse is NULL when attncheck wants no LSE (--no-lse) */
}

/* Declares ATTNCHECK_CAP_NO_LSE: attncheck passes lse = NULL and judges o only. */
static int my_run_nolse(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return attend(p, t, NULL, err, err_len);
}

static const attncheck_kernel my_kernel = {
  .abi_version = ATTNCHECK_ABI_VERSION,
  .struct_size = sizeof(attncheck_kernel),
  .name = "myplugin-naive-f32",
  .description = "example plugin: three-pass naive f32 attention (every mask, GQA, strides, LSE, variants)",
  .precision = "fp32",
  .memory = ATTNCHECK_MEM_HOST,
  .caps = MY_CAPS,
  .supports = my_supports,
  .run = my_run,
};

static const attncheck_kernel my_kernel_nolse = {
  .abi_version = ATTNCHECK_ABI_VERSION,
  .struct_size = sizeof(attncheck_kernel),
  .name = "myplugin-nolse-f32",
  .description = "example plugin: myplugin-naive-f32 that writes no LSE",
  .precision = "fp32",
  .memory = ATTNCHECK_MEM_HOST,
  .caps = MY_CAPS | ATTNCHECK_CAP_NO_LSE,
  .supports = my_supports,
  .run = my_run_nolse,
};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&my_kernel, &my_kernel_nolse};
  *count = sizeof list / sizeof list[0];
  return list;
}
