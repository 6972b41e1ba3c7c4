/* tests/abi5/myplugin_v5.c: a version 5 plugin built against the frozen header
 * tests/abi5/attncheck/kernel.h (before ABI 5's quantized tensors: its struct ends at
 * precision_of), with a naive binary64 forward of f32 attention initialized positionally.
 * tests/tplugin_quant.sh proves that attncheck loads it, judges it, and never hands it a
 * quantized case (SKIP: it declares no format). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <attncheck/kernel.h>

static int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

static int v5_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dtype == ATTNCHECK_F32) return 1;
  snprintf(why, why_len, "f32 only");
  return 0;
}

static int v5_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
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

static const attncheck_kernel v5_kernel = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "myplugin-v5-f32",
                                           "naive f32 (ABI 5 plugin before quantized tensors)", "fp32", ATTNCHECK_MEM_HOST,
                                           0, v5_supports, v5_run, {0}, NULL, 0, 0, 0, 0, NULL};
static const attncheck_kernel *const v5_list[] = {&v5_kernel};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  *count = 1;
  return v5_list;
}
