/* ggml_kernels.c: the graphs of the three kernels, their computation on ggml's CPU backend, and
 * the plugin's kernel table (attncheck_plugin_kernels). */
#include "ggml_adapter.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

/* ATTNCHECK_GGML_THREADS (default 2): the CPU backend's threads; the split-KV path cuts the keys
 * in as many chunks. */
static int n_threads(void)
{
  const char *s = getenv("ATTNCHECK_GGML_THREADS");
  const int n = s ? atoi(s) : 2;
  return n >= 1 && n <= 256 ? n : 2;
}

int acg_backend_is_cpu(void)
{
  const char *name = getenv("ATTNCHECK_GGML_BACKEND");
  return !name || !*name || strcmp(name, "CPU") == 0;
}

/* The backend of ATTNCHECK_GGML_BACKEND (a ggml device name: CPU, CUDA0, Vulkan0, Metal, ...;
 * default CPU), set up for the path. */
static ggml_backend_t backend_open(acg_path path, char *err, size_t err_len)
{
  const char *name = getenv("ATTNCHECK_GGML_BACKEND");
  ggml_backend_load_all();
  ggml_backend_t be = acg_backend_is_cpu() ? ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL)
                                           : ggml_backend_init_by_name(name, NULL);
  if (!be) {
    snprintf(err, err_len, "ggml: no backend %s (ATTNCHECK_GGML_BACKEND)", acg_backend_is_cpu() ? "CPU" : name);
    return NULL;
  }
  if (ggml_backend_is_cpu(be)) {
    ggml_backend_cpu_set_n_threads(be, n_threads());
#ifdef ACG_HAVE_USE_REF
    ggml_backend_cpu_set_use_ref(be, path == ACG_FA_REF);
#endif
  }
  return be;
}

static size_t host_size(acg_path path, const attncheck_problem *p)
{
  const size_t f = sizeof(float), qn = (size_t)(p->dk * p->tq * p->heads * p->batch);
  const size_t kn = (size_t)(p->dk * p->tk * p->kv_heads * p->batch),
               vn = (size_t)(p->dv * p->tk * p->kv_heads * p->batch);
  const size_t mn = (size_t)(p->tk * (p->tq + 64) * p->heads * p->batch);
  (void)path;
  return f * (qn + kn + vn + mn + (size_t)p->heads) + 16 * ggml_tensor_overhead() + (1u << 16);
}

typedef struct {
  struct ggml_tensor *q, *k, *v, *mask, *sinks;
  float max_bias;
} acg_inputs;

/* The inputs as ggml lays them out, in the host context h. */
static int inputs(acg_path path, struct ggml_context *h, const attncheck_problem *p, const attncheck_tensors *t,
                  acg_inputs *in, char *err, size_t err_len)
{
  memset(in, 0, sizeof *in);
  if (acg_quant_ok(p, t, err, err_len) < 0) return -1;
  in->q = acg_copy_q(h, p, t), in->k = acg_copy_kv(h, p, t, 'k');
  in->v = acg_copy_kv(h, p, t, path == ACG_SOFTMAX ? 't' : 'v');
  if ((p->features & ATTNCHECK_FEAT_SINKS) && (in->sinks = ggml_new_tensor_1d(h, GGML_TYPE_F32, p->heads)))
    memcpy(in->sinks->data, t->sinks, (size_t)p->heads * sizeof(float));
  if (!in->q || !in->k || !in->v || ((p->features & ATTNCHECK_FEAT_SINKS) && !in->sinks)) {
    snprintf(err, err_len, "ggml: out of context memory");
    return -1;
  }
  return acg_build_mask(h, p, t, path == ACG_SOFTMAX ? GGML_TYPE_F32 : GGML_TYPE_F16, &in->mask, &in->max_bias, err,
                        err_len);
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

/* The path's graph on the backend's copies d of the inputs; its result. */
static struct ggml_tensor *graph(acg_path path, struct ggml_context *ctx, const attncheck_problem *p,
                                 const acg_inputs *d)
{
  if (path != ACG_SOFTMAX) {
    struct ggml_tensor *r =
        ggml_flash_attn_ext(ctx, d->q, d->k, d->v, d->mask, (float)p->scale, d->max_bias, (float)p->softcap);
    ggml_flash_attn_ext_set_prec(r, GGML_PREC_F32);
#ifdef ACG_HAVE_FA_SINKS
    if (d->sinks) ggml_flash_attn_ext_add_sinks(r, d->sinks);
#endif
    return r; /* [dv, heads, tq, batch] */
  }
  float scale;
  struct ggml_tensor *kq = scores(ctx, p, d->k, d->q, &scale);
  kq = ggml_soft_max_ext(ctx, kq, d->mask, scale, d->max_bias);
#ifdef ACG_HAVE_SOFTMAX_SINKS
  if (d->sinks) ggml_soft_max_add_sinks(kq, d->sinks);
#endif
  return ggml_mul_mat(ctx, d->v, kq); /* [dv, tq, heads, batch] */
}

static struct ggml_tensor *dup_of(struct ggml_context *g, struct ggml_tensor *h)
{
  return h ? ggml_dup_tensor(g, h) : NULL;
}

/* Builds the graph in g (no_alloc) on copies of in, allocates it on be, uploads the inputs,
 * computes; the result is *out (host floats, malloc'd). */
static int compute(acg_path path, ggml_backend_t be, struct ggml_context *g, const attncheck_problem *p,
                   const acg_inputs *in, float **out, char *err, size_t err_len)
{
  acg_inputs d = {dup_of(g, in->q),    dup_of(g, in->k),     dup_of(g, in->v),
                  dup_of(g, in->mask), dup_of(g, in->sinks), in->max_bias};
  struct ggml_tensor *r = graph(path, g, p, &d);
  struct ggml_cgraph *gf = ggml_new_graph(g);
  ggml_build_forward_expand(gf, r);
  for (int i = 0; i < ggml_graph_n_nodes(gf); i++)
    if (!ggml_backend_supports_op(be, ggml_graph_node(gf, i))) {
      snprintf(err, err_len, ATTNCHECK_UNSUPPORTED " the ggml backend %s does not support %s on these types",
               ggml_backend_name(be), ggml_op_desc(ggml_graph_node(gf, i)));
      return -1;
    }
  ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(g, be);
  if (!buf) {
    snprintf(err, err_len, "ggml: out of %s memory", ggml_backend_name(be));
    return -1;
  }
  const struct ggml_tensor *pairs[5][2] = {
      {d.q, in->q}, {d.k, in->k}, {d.v, in->v}, {d.mask, in->mask}, {d.sinks, in->sinks}};
  for (int i = 0; i < 5; i++)
    if (pairs[i][0])
      ggml_backend_tensor_set((struct ggml_tensor *)pairs[i][0], pairs[i][1]->data, 0, ggml_nbytes(pairs[i][1]));
  int rc = -1;
  if (ggml_backend_graph_compute(be, gf) != GGML_STATUS_SUCCESS)
    snprintf(err, err_len, "ggml_backend_graph_compute failed on %s", ggml_backend_name(be));
  else if (!(*out = malloc(ggml_nbytes(r))))
    snprintf(err, err_len, "ggml: out of memory for the result");
  else {
    ggml_backend_tensor_get(r, *out, 0, ggml_nbytes(r));
    rc = 0;
  }
  ggml_backend_buffer_free(buf);
  return rc;
}

int acg_run(acg_path path, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  struct ggml_init_params hp = {host_size(path, p), NULL, false};
  struct ggml_init_params gp = {32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
  struct ggml_context *h = ggml_init(hp), *g = ggml_init(gp);
  ggml_backend_t be = NULL;
  float *o = NULL;
  acg_inputs in;
  int rc = -1;
  if (!h || !g)
    snprintf(err, err_len, "ggml_init: out of memory");
  else if (inputs(path, h, p, t, &in, err, err_len) == 0 && (be = backend_open(path, err, err_len)) &&
           compute(path, be, g, p, &in, &o, err, err_len) == 0) {
    acg_store_o(p, t, o, path != ACG_SOFTMAX);
    rc = 0;
  }
  free(o);
  if (be) ggml_backend_free(be);
  if (g) ggml_free(g);
  if (h) ggml_free(h);
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

/* ggml's block formats (QUANTIZED): K and V as tensors.quant's ggml blocks */
#define ACG_KV_FORMATS                                                                              \
  ((1u << ATTNCHECK_QF_Q8_0) | (1u << ATTNCHECK_QF_Q4_0) | (1u << ATTNCHECK_QF_Q4_1) | (1u << ATTNCHECK_QF_Q5_0) | \
   (1u << ATTNCHECK_QF_Q5_1) | (1u << ATTNCHECK_QF_IQ4_NL))

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
    .kv_formats = ACG_KV_FORMATS,
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
    .kv_formats = ACG_KV_FORMATS,
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
    .kv_formats = ACG_KV_FORMATS, /* K only: a quantized V is refused (supports) */
};
static const attncheck_kernel *const kernels[] = {&k_fa, &k_ref, &k_sm};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  *count = sizeof kernels / sizeof kernels[0];
  return kernels;
}
