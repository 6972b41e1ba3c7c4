/* cpu_common.c: problem checks, block sizes and scratch shared by the built-in CPU kernels. */
#include "config.h"
#include "cpu_common.h"
#include "dropout.h"
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int supports_base(const attncheck_problem *p, int dt, int f32_scale, char *why, size_t why_len)
{
  if (p->struct_size < sizeof(attncheck_problem)) {
    snprintf(why, why_len, "problem struct of %u bytes, this kernel needs %zu", (unsigned)p->struct_size,
             sizeof(attncheck_problem));
    return 0;
  }
  if (p->dtype != dt) {
    snprintf(why, why_len, "takes %s tensors only, not %s", ac_dtype_name((ac_dtype)dt),
             ac_dtype_name((ac_dtype)p->dtype));
    return 0;
  }
  if (p->mask < ATTNCHECK_MASK_NONE || p->mask > ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) {
    snprintf(why, why_len, "unknown mask %d", (int)p->mask);
    return 0;
  }
  if (p->batch < 0 || p->heads < 1 || p->kv_heads < 1 || p->tq < 0 || p->tk < 0 || p->dk < 0 || p->dv < 0) {
    snprintf(why, why_len, "negative or zero size (batch %lld, heads %lld, kv_heads %lld, tq %lld, tk %lld, dk %lld, dv %lld)",
             (long long)p->batch, (long long)p->heads, (long long)p->kv_heads, (long long)p->tq, (long long)p->tk,
             (long long)p->dk, (long long)p->dv);
    return 0;
  }
  if (p->heads % p->kv_heads != 0) {
    snprintf(why, why_len, "heads %lld not a multiple of kv_heads %lld", (long long)p->heads, (long long)p->kv_heads);
    return 0;
  }
  if (!isfinite(p->scale) || (f32_scale && fabs(p->scale) > FLT_MAX)) {
    snprintf(why, why_len, "scale %a is not a finite %s", p->scale, f32_scale ? "binary32" : "binary64");
    return 0;
  }
  return 1;
}

/* The bits of a problem's features that are variants of the attention (a quantized tensor's layout
 * and store bits describe its inputs, which the quantized kernels read before these run). */
#define AC_CPU_FEATS(p) ((p)->features & ~(uint32_t)(ATTNCHECK_FEAT_QUANT_STORE | ATTNCHECK_FEAT_QUANT_LAYOUT))

int ac_cpu_supports(const attncheck_problem *p, int dt, int f32_scale, char *why, size_t why_len)
{
  if (!supports_base(p, dt, f32_scale, why, why_len)) return 0;
  if (AC_CPU_FEATS(p)) {
    snprintf(why, why_len, "features 0x%x not supported (none are)", (unsigned)AC_CPU_FEATS(p));
    return 0;
  }
  return 1;
}

static int float_dtype(int d) { return d >= ATTNCHECK_F64 && d <= ATTNCHECK_BF16; }

int ac_cpu_supports_caps(const attncheck_problem *p, int dt, uint32_t caps, char *why, size_t why_len)
{
  if (!supports_base(p, dt, 1, why, why_len)) return 0;
  const uint32_t f = AC_CPU_FEATS(p), missing = f & ~caps;
  if (missing) {
    snprintf(why, why_len, "features 0x%x not supported", (unsigned)missing);
    return 0;
  }
  if (!f) return 1;   /* a plain case: the per-tensor dtypes are not read */
  const int32_t d[4] = {p->q_dtype, p->k_dtype, p->v_dtype, p->o_dtype};
  const int mixed = (f & ATTNCHECK_FEAT_MIXED_DTYPES) != 0, fp8 = dt == ATTNCHECK_E4M3 || dt == ATTNCHECK_E5M2;
  for (int x = 0; x < 4; x++) {
    /* binary32 kernels: K and V also f16 or bf16; fp8 kernels: O also bf16, f16 or f32 */
    const int narrow = mixed && !fp8 && (x == 1 || x == 2) && (d[x] == ATTNCHECK_F16 || d[x] == ATTNCHECK_BF16);
    const int wide_o = mixed && fp8 && x == 3 && (d[x] == ATTNCHECK_BF16 || d[x] == ATTNCHECK_F16 || d[x] == ATTNCHECK_F32);
    if (d[x] != dt && !narrow && !wide_o) {
      snprintf(why, why_len, "%c in dtype %d: takes %s%s", "qkvo"[x], (int)d[x], ac_dtype_name((ac_dtype)dt),
               !mixed ? "" : fp8 ? " (O also bf16, f16 or f32)" : " (K and V also f16 or bf16)");
      return 0;
    }
  }
  if ((f & ATTNCHECK_FEAT_SOFTCAP) && !(isfinite(p->softcap) && p->softcap > 0 && p->softcap <= FLT_MAX)) {
    snprintf(why, why_len, "softcap %g is not a finite positive binary32", p->softcap);
    return 0;
  }
  if ((f & ATTNCHECK_FEAT_WINDOW) && (p->window_left < -1 || p->window_right < -1)) {
    snprintf(why, why_len, "window (%lld, %lld): values below -1", (long long)p->window_left,
             (long long)p->window_right);
    return 0;
  }
  if ((f & ATTNCHECK_FEAT_BIAS) && !float_dtype(p->bias_dtype)) {
    snprintf(why, why_len, "bias dtype %d: takes f64, f32, f16 or bf16", (int)p->bias_dtype);
    return 0;
  }
  return 1;
}

int ac_cpu_vx_init(ac_cpu_vx *x, int dt, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                   size_t err_len)
{
  memset(x, 0, sizeof *x);
  x->p = p, x->t = t;
  x->f = AC_CPU_FEATS(p);
  x->qd = x->kd = x->vd = x->od = dt;
  if (x->f & ATTNCHECK_FEAT_MIXED_DTYPES) x->qd = p->q_dtype, x->kd = p->k_dtype, x->vd = p->v_dtype, x->od = p->o_dtype;
  const char *missing = (x->f & ATTNCHECK_FEAT_BIAS) && !t->bias ? "bias"
                      : (x->f & ATTNCHECK_FEAT_BOOL_MASK) && !t->bool_mask ? "bool_mask"
                      : (x->f & ATTNCHECK_FEAT_ALIBI) && !t->alibi_slopes ? "alibi_slopes"
                      : (x->f & ATTNCHECK_FEAT_SINKS) && !t->sinks ? "sinks"
                      : (x->f & ATTNCHECK_FEAT_DESCALE) && !(t->descale_q && t->descale_k && t->descale_v) ? "descale"
                      : (x->f & ATTNCHECK_FEAT_DROPOUT) && !t->dropout_mask ? "dropout_mask"
                      : NULL;
  if (missing) {
    snprintf(err, err_len, "the case uses %s but its tensor is NULL", missing);
    return -1;
  }
  /* FlashAttention keeps p_keep = 1 - p and rp_dropout = 1 / p_keep, each a binary32 rounding */
  const float keep = 1.0f - p->dropout_p;
  x->rp = x->f & ATTNCHECK_FEAT_DROPOUT ? 1.0f / keep : 1.0f;
  return 0;
}

void ac_cpu_drop_fill(const attncheck_problem *p, uint8_t *mask, int per_head)
{
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t j = 0; j < p->tk; j++) {
          int64_t hh = per_head ? h : 0;
          uint64_t x = (uint64_t)(((b * p->heads + hh) * p->tq + i) * p->tk + j);
          mask[((b * p->heads + h) * p->tq + i) * p->tk + j] = (uint8_t)ac_dropout_keep(p->dropout_seed, x, p->dropout_p);
        }
}

void ac_cpu_vx_head(ac_cpu_vx *x, int64_t b, int64_t h, float scale0)
{
  const attncheck_problem *p = x->p;
  const attncheck_tensors *t = x->t;
  x->b = b, x->h = h;
  x->scale = scale0;
  x->dv = 1.0f;
  if (x->f & ATTNCHECK_FEAT_DESCALE) {
    const int64_t kv = b * p->kv_heads + ac_cpu_kv_head(p, h);
    x->scale = scale0 * t->descale_q[kv] * t->descale_k[kv];
    x->dv = t->descale_v[kv];
  }
  x->slope = x->f & ATTNCHECK_FEAT_ALIBI ? t->alibi_slopes[p->alibi_per_batch ? b * p->heads + h : h] : 0.0f;
  x->has_sink = (x->f & ATTNCHECK_FEAT_SINKS) != 0;
  x->sink = x->has_sink ? t->sinks[h] : 0.0f;
}

int ac_cpu_vx_tile_hidden(const ac_cpu_vx *x, int64_t i0, int64_t rows, int64_t j0, int64_t cols)
{
  if (!(x->f & ATTNCHECK_FEAT_BOOL_MASK)) return 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      if (ac_cpu_vx_bmask(x, i0 + r, j0 + c)) return 0;
  return 1;
}

void ac_cpu_vx_empty_row(const ac_cpu_vx *x, int64_t i, float *lse)
{
  for (int64_t e = 0; e < x->p->dv; e++) ac_cpu_store_f32(x->od, x->t->o, ac_cpu_off(x->p->o_stride, x->b, x->h, i, e), 0.0f);
  if (lse) *lse = x->has_sink ? x->sink : -INFINITY;
}

int ac_cpu_env_block(const char *name, int64_t def, int64_t *out, char *err, size_t err_len)
{
  const char *s = getenv(name);
  *out = def;
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < 1 || v > 65536) {
    snprintf(err, err_len, "%s=%s: want an integer in [1, 65536]", name, s);
    return -1;
  }
  *out = v;
  return 0;
}

void *ac_cpu_scratch(int64_t n, size_t sz)
{
  if (n < 1) n = 1;
  if ((uint64_t)n > SIZE_MAX / sz) return NULL;
  return calloc((size_t)n, sz);
}

static float fp8_values[2][256];
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

static void fp8_init(void)
{
  for (int i = 0; i < 256; i++) {
    fp8_values[0][i] = (float)ac_decode(AC_E4M3, (uint64_t)i);   /* exact: at most 4 significant bits */
    fp8_values[1][i] = (float)ac_decode(AC_E5M2, (uint64_t)i);
  }
}

float ac_cpu_fp8_value(int dt, uint8_t bits)
{
  pthread_once(&fp8_once, fp8_init);
  return fp8_values[dt == ATTNCHECK_E5M2][bits];
}
