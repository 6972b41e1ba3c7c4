/* tests/abi3/myplugin_v3.c: a version 3 plugin (built against the frozen header
 * tests/abi3/attncheck/kernel.h, before ABI 4's backward_caps) with a forward that takes windows,
 * softcap and boolean masks and a backward (ATTNCHECK_CAP_BACKWARD, run_backward), both naive in
 * binary64 rounded to f32. tests/plugin_abi3.sh proves that attncheck loads it, judges its
 * backward on a windowed case, and never hands its run_backward a softcap case: ABI 3 did not,
 * so the backward of such a plugin knows nothing of the softcap derivative. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <attncheck/kernel.h>

#define V3_CAPS (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP | ATTNCHECK_FEAT_BOOL_MASK)

static int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

static int v3_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dtype == ATTNCHECK_F32) return 1;
  snprintf(why, why_len, "f32 only");
  return 0;
}

static int visible(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, int64_t j)
{
  if (p->mask == ATTNCHECK_MASK_CAUSAL && j > i) return 0;
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT && j > i + p->tk - p->tq) return 0;
  if (p->features & ATTNCHECK_FEAT_WINDOW) {
    int64_t c = i + (p->window_align == ATTNCHECK_ALIGN_BOTTOM_RIGHT ? p->tk - p->tq : 0);
    if (p->window_left >= 0 && j < c - p->window_left) return 0;
    if (p->window_right >= 0 && j > c + p->window_right) return 0;
  }
  return !(p->features & ATTNCHECK_FEAT_BOOL_MASK) || t->bool_mask[at(p->bool_mask_stride, b, h, i, j)];
}

/* P of row (b, h, i) into w[tk] (0 for hidden keys); returns 0 for a row with no visible key. */
static int weights(const attncheck_problem *p, const attncheck_tensors *t, int64_t b, int64_t h, int64_t i, double *w)
{
  const float *q = t->q, *k = t->k;
  int64_t kh = h / (p->heads / p->kv_heads);
  double m = -INFINITY, sum = 0;
  for (int64_t j = 0; j < p->tk; j++) {
    w[j] = -INFINITY;
    if (!visible(p, t, b, h, i, j)) continue;
    double dot = 0;
    for (int64_t d = 0; d < p->dk; d++) dot += (double)q[at(p->q_stride, b, h, i, d)] * k[at(p->k_stride, b, kh, j, d)];
    double s = dot * p->scale;
    if (p->features & ATTNCHECK_FEAT_SOFTCAP) s = p->softcap * tanh(s / p->softcap);
    w[j] = s;
    if (s > m) m = s;
  }
  for (int64_t j = 0; j < p->tk; j++) sum += w[j] = w[j] == -INFINITY ? 0 : exp(w[j] - m);
  for (int64_t j = 0; j < p->tk && sum > 0; j++) w[j] /= sum;
  return sum > 0;
}

static int v3_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  double *w = malloc((size_t)(p->tk + 1) * sizeof *w);
  if (!w) return snprintf(err, err_len, "out of memory"), 1;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        int any = weights(p, t, b, h, i, w);
        for (int64_t d = 0; d < p->dv; d++) {
          double acc = 0;
          for (int64_t j = 0; j < p->tk && any; j++)
            acc += w[j] * ((const float *)t->v)[at(p->v_stride, b, h / (p->heads / p->kv_heads), j, d)];
          ((float *)t->o)[at(p->o_stride, b, h, i, d)] = (float)acc;
        }
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = NAN;   /* not judged by the test */
      }
  free(w);
  return 0;
}

/* The exact-form backward of plain attention (no softcap derivative: ABI 3 never hands softcap). */
static int v3_backward(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g,
                       char *err, size_t err_len)
{
  int64_t grp = p->heads / p->kv_heads;
  double *w = malloc((size_t)(p->tk + 1) * sizeof *w), *dp = malloc((size_t)(p->tk + 1) * sizeof *dp);
  double *dk = calloc((size_t)(p->batch * p->kv_heads * p->tk * p->dk + 1), sizeof *dk);
  double *dv = calloc((size_t)(p->batch * p->kv_heads * p->tk * p->dv + 1), sizeof *dv);
  if (!w || !dp || !dk || !dv) return free(w), free(dp), free(dk), free(dv), snprintf(err, err_len, "out of memory"), 1;
  const float *q = t->q, *k = t->k, *v = t->v, *dout = g->dout;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++) {
        int64_t kh = h / grp, col = (b * p->kv_heads + kh) * p->tk;
        int any = weights(p, t, b, h, i, w);
        double D = 0;
        for (int64_t j = 0; j < p->tk; j++) {
          dp[j] = 0;
          for (int64_t d = 0; d < p->dv && any; d++) dp[j] += (double)dout[at(g->do_stride, b, h, i, d)] * v[at(p->v_stride, b, kh, j, d)];
          D += w[j] * dp[j];
        }
        for (int64_t d = 0; d < p->dk; d++) {
          double acc = 0;
          for (int64_t j = 0; j < p->tk && any; j++) {
            double ds = w[j] * (dp[j] - D) * p->scale;
            acc += ds * k[at(p->k_stride, b, kh, j, d)];
            dk[(col + j) * p->dk + d] += ds * q[at(p->q_stride, b, h, i, d)];
          }
          ((float *)g->dq)[at(g->dq_stride, b, h, i, d)] = (float)acc;
        }
        for (int64_t j = 0; j < p->tk && any; j++)
          for (int64_t d = 0; d < p->dv; d++) dv[(col + j) * p->dv + d] += w[j] * dout[at(g->do_stride, b, h, i, d)];
      }
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t kh = 0; kh < p->kv_heads; kh++)
      for (int64_t j = 0; j < p->tk; j++) {
        int64_t col = (b * p->kv_heads + kh) * p->tk + j;
        for (int64_t d = 0; d < p->dk; d++) ((float *)g->dk)[at(g->dk_stride, b, kh, j, d)] = (float)dk[col * p->dk + d];
        for (int64_t d = 0; d < p->dv; d++) ((float *)g->dv)[at(g->dv_stride, b, kh, j, d)] = (float)dv[col * p->dv + d];
      }
  free(w), free(dp), free(dk), free(dv);
  return 0;
}

static const attncheck_kernel v3_kernel = {
  .abi_version = ATTNCHECK_ABI_VERSION,
  .struct_size = sizeof(attncheck_kernel),
  .name = "myplugin-v3-bwd-f32",
  .description = "ABI 3 plugin: naive binary64 forward and backward, rounded to f32",
  .precision = "fp32",
  .memory = ATTNCHECK_MEM_HOST,
  .caps = V3_CAPS | ATTNCHECK_CAP_BACKWARD,
  .supports = v3_supports,
  .run = v3_run,
  .run_backward = v3_backward,
};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&v3_kernel};
  *count = 1;
  return list;
}
