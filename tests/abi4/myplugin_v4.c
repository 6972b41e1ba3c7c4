/* tests/abi4/myplugin_v4.c: a version 4 plugin (built against the frozen header
 * tests/abi4/attncheck/kernel.h, before ABI 5) with a naive binary64 forward of f32 attention,
 * initialized positionally as the README of version 4 showed. tests/plugin_abi4.sh proves that
 * attncheck loads it, judges it, and keeps reading an error of its run() as ABI 4 did: a kernel
 * error (FAIL), even when the text begins "unsupported:", which only ABI 5 makes a refusal. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <attncheck/kernel.h>

static int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

static int v4_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dtype == ATTNCHECK_F32) return 1;
  snprintf(why, why_len, "f32 only");
  return 0;
}

static int v4_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  const float *q = t->q, *k = t->k, *v = t->v;
  float *o = t->o;
  (void)err, (void)err_len;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t kh = h / (p->heads / p->kv_heads), lim = p->tk;
        if (p->mask == ATTNCHECK_MASK_CAUSAL) lim = i + 1;
        if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) lim = i + p->tk - p->tq + 1;
        if (lim > p->tk) lim = p->tk;
        double m = -INFINITY, sum = 0, acc[512] = {0};
        for (int64_t j = 0; j < lim; j++) {
          double s = 0;
          for (int64_t d = 0; d < p->dk; d++) s += (double)q[at(p->q_stride, b, h, i, d)] * k[at(p->k_stride, b, kh, j, d)];
          if (s * p->scale > m) m = s * p->scale;
        }
        for (int64_t j = 0; j < lim; j++) {
          double s = 0;
          for (int64_t d = 0; d < p->dk; d++) s += (double)q[at(p->q_stride, b, h, i, d)] * k[at(p->k_stride, b, kh, j, d)];
          double w = exp(s * p->scale - m);
          sum += w;
          for (int64_t d = 0; d < p->dv && d < 512; d++) acc[d] += w * v[at(p->v_stride, b, kh, j, d)];
        }
        for (int64_t d = 0; d < p->dv; d++) o[at(p->o_stride, b, h, i, d)] = (float)(sum > 0 ? acc[d] / sum : 0);
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = (float)(sum > 0 ? m + log(sum) : -INFINITY);
      }
  return 0;
}

/* The same kernel, but its run() answers "unsupported: ..." on cases with more than 8 keys. */
static int v4_run_refusing(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  if (p->tk > 8) {
    snprintf(err, err_len, "unsupported: more than 8 keys");
    return 1;
  }
  return v4_run(p, t, err, err_len);
}

static int v4_supports_small(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dv <= 512) return v4_supports(p, why, why_len);
  snprintf(why, why_len, "dv > 512");
  return 0;
}

static const attncheck_kernel v4_kernel = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "myplugin-v4-f32",
                                           "naive f32 (ABI 4 plugin)", "fp32", ATTNCHECK_MEM_HOST, 0,
                                           v4_supports_small, v4_run, {0}, NULL, 0, 0};
static const attncheck_kernel v4_refusing = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "myplugin-v4-refusing",
                                             "naive f32 whose run() refuses tk > 8 (ABI 4: a kernel error)", "fp32",
                                             ATTNCHECK_MEM_HOST, 0, v4_supports_small, v4_run_refusing, {0}, NULL, 0, 0};
static const attncheck_kernel *const v4_list[] = {&v4_kernel, &v4_refusing};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  *count = 2;
  return v4_list;
}
