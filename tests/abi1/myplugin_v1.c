/* myplugin.c: a complete attncheck plugin — one small, correct f32 attention kernel.
 *
 * It needs nothing from attncheck but the ABI header <attncheck/kernel.h>, installed by
 * `make install` with attncheck.pc. Build it outside the tree with
 *     cc -shared -fPIC -O2 $(pkg-config --cflags attncheck) myplugin.c -o myplugin.so
 * then run
 *     attncheck suite --kernel ./myplugin.so --suite ci
 * In the source tree the same header is kernels/attncheck_kernel.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <attncheck/kernel.h>

static int my_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dtype != ATTNCHECK_F32) {
    snprintf(why, why_len, "myplugin-naive-f32 handles f32 only");
    return 0;
  }
  return 1;
}

/* Element [b][h][i][d] of a tensor with strides s. */
static inline int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

/* Number of keys row i may see; they are always the prefix [0, n). */
static int64_t visible_keys(const attncheck_problem *p, int64_t i)
{
  int64_t n = p->tk;
  if (p->mask == ATTNCHECK_MASK_CAUSAL) n = i + 1;
  else if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) n = i + p->tk - p->tq + 1;
  if (n < 0) n = 0;
  if (n > p->tk) n = p->tk;
  return n;
}

/* Three passes per row over a materialized score row: max, sum of exponentials, P·V. */
static int my_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  const float *q = t->q, *k = t->k, *v = t->v;
  float *o = t->o;
  float *s = malloc((size_t)p->tk * sizeof *s);
  if (!s) {
    snprintf(err, err_len, "out of memory for %lld scores", (long long)p->tk);
    return 1;
  }
  int64_t group = p->heads / p->kv_heads;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      int64_t kh = h / group;   /* GQA: query head h reads key/value head h / group */
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t n = visible_keys(p, i);
        float m = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
          float dot = 0.0f;
          for (int64_t d = 0; d < p->dk; d++) dot += q[at(p->q_stride, b, h, i, d)] * k[at(p->k_stride, b, kh, j, d)];
          s[j] = dot * (float)p->scale;
          if (s[j] > m) m = s[j];
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < n; j++) {
          s[j] = expf(s[j] - m);
          sum += s[j];
        }
        for (int64_t d = 0; d < p->dv; d++) {
          float acc = 0.0f;
          for (int64_t j = 0; j < n; j++) acc += s[j] * v[at(p->v_stride, b, kh, j, d)];
          o[at(p->o_stride, b, h, i, d)] = n ? acc / sum : 0.0f;   /* a row with no visible key gives 0 */
        }
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = n ? m + logf(sum) : -INFINITY;
      }
    }
  free(s);
  return 0;
}

static const attncheck_kernel my_kernel = {
  .abi_version = ATTNCHECK_ABI_VERSION,
  .struct_size = sizeof(attncheck_kernel),
  .name = "myplugin-naive-f32",
  .description = "example plugin: three-pass naive f32 attention (every mask, GQA, strides, LSE)",
  .precision = "fp32",
  .memory = ATTNCHECK_MEM_HOST,
  .supports = my_supports,
  .run = my_run,
};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&my_kernel};
  *count = sizeof list / sizeof list[0];
  return list;
}
