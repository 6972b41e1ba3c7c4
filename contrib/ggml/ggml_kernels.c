/* ggml_kernels.c: the graphs of the three kernels, their computation on ggml's CPU backend, and
 * the plugin's kernel table (attncheck_plugin_kernels). */
#include "ggml_adapter.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ggml-cpu.h"

/* ATTNCHECK_GGML_THREADS (default 2): ggml's threads; the split-KV path cuts the keys in as many
 * chunks. */
static int n_threads(void)
{
  const char *s = getenv("ATTNCHECK_GGML_THREADS");
  const int n = s ? atoi(s) : 2;
  return n >= 1 && n <= 256 ? n : 2;
}

static size_t ctx_size(acg_path path, const attncheck_problem *p)
{
  const size_t f = sizeof(float), qn = (size_t)(p->dk * p->tq * p->heads * p->batch);
  const size_t kn = (size_t)(p->dk * p->tk * p->kv_heads * p->batch),
               vn = (size_t)(p->dv * p->tk * p->kv_heads * p->batch);
  const size_t mn = (size_t)(p->tk * (p->tq + 64) * p->heads * p->batch),
               on = (size_t)(p->dv * p->tq * p->heads * p->batch);
  size_t n = f * (qn + kn + vn + mn + on + (size_t)p->heads) + 32 * ggml_tensor_overhead() + ggml_graph_overhead();
  if (path == ACG_SOFTMAX) n += 5 * f * (size_t)(p->tk * p->tq * p->heads * p->batch); /* kq, softcap, P */
  return n + (1u << 20);
}

/* soft_max_ext's input: Q·Kᵀ, through the softcap as llama.cpp applies it (scale(1/c), tanh,
 * scale(c)) with the attention scale folded into the first scale; *scale what is left for
 * soft_max_ext. */
static struct ggml_tensor *scores(struct ggml_context *ctx, const attncheck_problem *p, struct ggml_tensor *k,
                                  struct ggml_tensor *q, float *scale)
{
  struct ggml_tensor *kq = ggml_mul_mat(ctx, k, q); /* [tk, tq, heads, batch] */
  *scale = (float)p->scale;
  if (p->softcap > 0) {
    kq = ggml_scale(ctx, kq, (float)p->scale / (float)p->softcap);
    kq = ggml_tanh(ctx, kq);
    kq = ggml_scale(ctx, kq, (float)p->softcap);
    *scale = 1.0f;
  }
  return kq;
}

static struct ggml_tensor *sinks_of(struct ggml_context *ctx, const attncheck_problem *p, const attncheck_tensors *t)
{
  if (!(p->features & ATTNCHECK_FEAT_SINKS)) return NULL;
  struct ggml_tensor *s = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, p->heads);
  if (s) memcpy(s->data, t->sinks, (size_t)p->heads * sizeof(float));
  return s;
}

/* The result tensor of the path, or NULL with err set. */
static struct ggml_tensor *graph(acg_path path, struct ggml_context *ctx, const attncheck_problem *p,
                                 const attncheck_tensors *t, char *err, size_t err_len)
{
  struct ggml_tensor *mask, *q = acg_copy_q(ctx, p, t), *k = acg_copy_kv(ctx, p, t, 'k');
  struct ggml_tensor *v = acg_copy_kv(ctx, p, t, path == ACG_SOFTMAX ? 't' : 'v'), *sinks = sinks_of(ctx, p, t);
  float max_bias;
  if (!q || !k || !v || ((p->features & ATTNCHECK_FEAT_SINKS) && !sinks)) {
    snprintf(err, err_len, "ggml: out of context memory");
    return NULL;
  }
  if (acg_build_mask(ctx, p, t, path == ACG_SOFTMAX ? GGML_TYPE_F32 : GGML_TYPE_F16, &mask, &max_bias, err, err_len) <
      0)
    return NULL;
  if (path != ACG_SOFTMAX) {
    struct ggml_tensor *r = ggml_flash_attn_ext(ctx, q, k, v, mask, (float)p->scale, max_bias, (float)p->softcap);
    ggml_flash_attn_ext_set_prec(r, GGML_PREC_F32);
#ifdef ACG_HAVE_FA_SINKS
    if (sinks) ggml_flash_attn_ext_add_sinks(r, sinks);
#endif
    return r;
  }
  float scale;
  struct ggml_tensor *kq = scores(ctx, p, k, q, &scale);
  kq = ggml_soft_max_ext(ctx, kq, mask, scale, max_bias);
#ifdef ACG_HAVE_SOFTMAX_SINKS
  if (sinks) ggml_soft_max_add_sinks(kq, sinks);
#endif
  return ggml_mul_mat(ctx, v, kq); /* [dv, tq, heads, batch] */
}

int acg_run(acg_path path, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  static int inited;
  if (!inited) ggml_cpu_init(), inited = 1;
  struct ggml_init_params ip = {ctx_size(path, p), NULL, false};
  struct ggml_context *ctx = ggml_init(ip);
  if (!ctx) {
    snprintf(err, err_len, "ggml_init: out of memory");
    return -1;
  }
  int rc = -1;
  struct ggml_tensor *r = graph(path, ctx, p, t, err, err_len);
  if (r) {
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, r);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads(), NULL);
#ifdef ACG_HAVE_USE_REF
    plan.use_ref = path == ACG_FA_REF;
#endif
    plan.work_data = plan.work_size ? malloc(plan.work_size) : NULL;
    if (plan.work_size && !plan.work_data)
      snprintf(err, err_len, "ggml: out of memory for the work buffer");
    else if (ggml_graph_compute(gf, &plan) != GGML_STATUS_SUCCESS)
      snprintf(err, err_len, "ggml_graph_compute failed");
    else {
      acg_store_o(p, t, r, path != ACG_SOFTMAX);
      rc = 0;
    }
    free(plan.work_data);
  }
  ggml_free(ctx);
  return rc;
}

static int fa_supports(const attncheck_problem *p, char *why, size_t n)
{
  return acg_supports(ACG_FA, p, why, n);
}
static int ref_supports(const attncheck_problem *p, char *why, size_t n)
{
  return acg_supports(ACG_FA_REF, p, why, n);
}
static int sm_supports(const attncheck_problem *p, char *why, size_t n)
{
  return acg_supports(ACG_SOFTMAX, p, why, n);
}
static int fa_run(const attncheck_problem *p, const attncheck_tensors *t, char *e, size_t n)
{
  return acg_run(ACG_FA, p, t, e, n);
}
static int ref_run(const attncheck_problem *p, const attncheck_tensors *t, char *e, size_t n)
{
  return acg_run(ACG_FA_REF, p, t, e, n);
}
static int sm_run(const attncheck_problem *p, const attncheck_tensors *t, char *e, size_t n)
{
  return acg_run(ACG_SOFTMAX, p, t, e, n);
}
static int fa_prec(const attncheck_problem *p, char *c, size_t n)
{
  return acg_precision_of(ACG_FA, p, c, n);
}
static int ref_prec(const attncheck_problem *p, char *c, size_t n)
{
  return acg_precision_of(ACG_FA_REF, p, c, n);
}
static int sm_prec(const attncheck_problem *p, char *c, size_t n)
{
  return acg_precision_of(ACG_SOFTMAX, p, c, n);
}

#define ACG_VARIANTS                                                                             \
  (ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP | ATTNCHECK_FEAT_ALIBI | ATTNCHECK_FEAT_BIAS | \
   ATTNCHECK_FEAT_BOOL_MASK | ATTNCHECK_FEAT_MIXED_DTYPES)
#ifdef ACG_HAVE_FA_SINKS
#define ACG_FA_CAPS (ACG_VARIANTS | ATTNCHECK_FEAT_SINKS)
#else
#define ACG_FA_CAPS ACG_VARIANTS
#endif
#ifdef ACG_HAVE_SOFTMAX_SINKS
#define ACG_SM_CAPS (ACG_VARIANTS | ATTNCHECK_FEAT_SINKS)
#else
#define ACG_SM_CAPS ACG_VARIANTS
#endif

/* Flash attention writes o = 0 for a row with no visible key (S = 0, S_inv = 0); soft_max_ext
 * divides 0 by 0 there (max -inf, exp(-inf + inf)): NaN. Neither writes an LSE. */
static const attncheck_kernel k_fa = {
    ATTNCHECK_KERNEL_INIT,
    .name = "ggml-fa",
    .description = "ggml_flash_attn_ext on ggml's CPU backend, ggml's own path (tiled, split-KV or scalar; "
                   "the class of each, precision_of)",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = ACG_FA_CAPS | ATTNCHECK_CAP_NO_LSE,
    .supports = fa_supports,
    .run = fa_run,
    .empty_rows = ATTNCHECK_EMPTY_ZERO,
    .precision_of = fa_prec,
};
static const attncheck_kernel k_ref = {
    ATTNCHECK_KERNEL_INIT,
    .name = "ggml-fa-ref",
    .description = "ggml_flash_attn_ext with ggml_cplan.use_ref: the scalar path (Q in K's type, an f16 V "
                   "accumulated in f16)",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = ACG_FA_CAPS | ATTNCHECK_CAP_NO_LSE,
    .supports = ref_supports,
    .run = ref_run,
    .empty_rows = ATTNCHECK_EMPTY_ZERO,
    .precision_of = ref_prec,
};
static const attncheck_kernel k_sm = {
    ATTNCHECK_KERNEL_INIT,
    .name = "ggml-softmax",
    .description = "mul_mat(K, Q), soft_max_ext (f32 mask, scale, max_bias, sinks), mul_mat(V^T, P): llama.cpp "
                   "without flash attention",
    .memory = ATTNCHECK_MEM_HOST,
    .caps = ACG_SM_CAPS | ATTNCHECK_CAP_NO_LSE,
    .supports = sm_supports,
    .run = sm_run,
    .empty_rows = ATTNCHECK_EMPTY_NAN,
    .precision_of = sm_prec,
};
static const attncheck_kernel *const kernels[] = {&k_fa, &k_ref, &k_sm};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
