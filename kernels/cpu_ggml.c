/* cpu_ggml.c: ggml-f16-style and q8q-f32-style, the arithmetic of ggml's CPU flash attention
 * (ggml_compute_forward_flash_attn_ext_f16: one query row at a time, keys in order, one online
 * maximum M and sum S):
 *   ggml-f16-style  its f16 path: Q rounded to f16, s = (Q16 . K16) in binary32 times the scale,
 *                   P = expf(s - M) unrounded, V accumulated in an f16 vector (each step
 *                   fl16(acc + v p), each rescale fl16(acc ms)), S in binary32; f16 K and V with
 *                   f32 Q and O (the KV cache of llama.cpp), or f16 throughout; class ggml-f16;
 *   q8q-f32-style   its quantized-dot path on an fp32 K: each row of Q rounded to q8_0 blocks
 *                   of 32 (d = max|x|/127 in binary32, codes roundf(x/d), the scale stored as
 *                   f16: q~ = f16(d) code), s = (q~ . K) in binary32, V accumulated in binary32;
 *                   class q8q-f32.
 * Scores through cpu_common's pipeline (softcap, ALiBi, bias, boolean mask: a key of score -inf
 * is skipped as ggml skips a -inf mask entry), the sink joins S after the keys, as ggml's sinks
 * do; LSE = max(M, sink) + ln S. mutants/ggml_mutants.c: the same code with one defect each. */
#include "config.h"
#include "cpu_ggml.h"
#include <stdio.h>
#include <stdlib.h>

/* q8_0 of n values x into q (dequantized: f16(d) times the code, d = max|x|/qmax: 127), block by
 * block (the last one partial); non-finite values are kept (the rule table judges their row). */
void ac_cpu_q8_row(const float *x, float *q, int64_t n, int qmax)
{
  for (int64_t b0 = 0; b0 < n; b0 += 32) {
    const int64_t b1 = ac_cpu_min(b0 + 32, n);
    float amax = 0.0f;
    for (int64_t t = b0; t < b1; t++)
      if (fabsf(x[t]) > amax) amax = fabsf(x[t]);
    const float d = amax / (float)qmax, id = d != 0.0f ? 1.0f / d : 0.0f;
    const float d16 = ac_cpu_round_f32(ATTNCHECK_F16, d);
    for (int64_t t = b0; t < b1; t++) {
      if (!isfinite(x[t]) || !isfinite(amax)) {
        q[t] = x[t];
        continue;
      }
      q[t] = d16 * roundf(x[t] * id);
    }
  }
}

/* acc = fl16(acc + v p) (ggml_vec_mad_f16: the product and sum in binary32, one f16 rounding) */
static void mad_f16(float *acc, const float *v, float p, int64_t n, int acc_dt)
{
  for (int64_t e = 0; e < n; e++) acc[e] = ac_cpu_round_f32(acc_dt, acc[e] + v[e] * p);
}

static void scale_acc(float *acc, float a, int64_t n, int acc_dt)
{
  for (int64_t e = 0; e < n; e++) acc[e] = ac_cpu_round_f32(acc_dt, acc[e] * a);
}

/* Row i of the current head. q: the row as the kernel reads it (f16 or q8 values; qs before its
 * rounding, for dot), k, v: scratch of one key; acc: dv. acc_dt: the accumulator's format (f16, or
 * f32 for the q8 path). */
static void ggml_row(const ac_cpu_vx *x, int64_t i, const float *q, const float *qs, const ac_ggml_dot *dot, float *kr,
                     float *vr, float *acc, int acc_dt)
{
  const attncheck_problem *p = x->p;
  const int64_t kvh = ac_cpu_kv_head(p, x->h);
  float *lse = x->t->lse ? &x->t->lse[ac_cpu_lse_index(p, x->b, x->h, i)] : NULL;
  int64_t lo, hi;
  ac_cpu_vx_range(x, i, &lo, &hi);
  if (hi <= lo) {
    ac_cpu_vx_empty_row(x, i, lse);
    return;
  }
  float S = 0.0f, M = -INFINITY;
  for (int64_t e = 0; e < p->dv; e++) acc[e] = 0.0f;
  for (int64_t j = lo; j < hi; j++) {
    float s = 0.0f;
    if (dot) {
      s = dot->dot(dot->ctx, qs, x->b, kvh, j);
    } else {
      for (int64_t t = 0; t < p->dk; t++)
        kr[t] = ac_cpu_load_f32(x->kd, x->t->k, ac_cpu_off(p->k_stride, x->b, kvh, j, t));
      for (int64_t t = 0; t < p->dk; t++) s += q[t] * kr[t];
    }
    s = ac_cpu_vx_score(x, i, j, s * x->scale);
    if (s == -INFINITY) continue;
    for (int64_t e = 0; e < p->dv; e++)
      vr[e] = ac_cpu_load_f32(x->vd, x->t->v, ac_cpu_off(p->v_stride, x->b, kvh, j, e));
    float ms = 1.0f, vs = 1.0f;
    if (s > M) { /* a new maximum: ms < 1, vs = expf(s - s) = 1 */
      const float Mold = M;
      M = s;
      ms = expf(Mold - M);
      scale_acc(acc, ms, p->dv, acc_dt);
    } else {
      vs = expf(s - M);
    }
    mad_f16(acc, vr, vs, p->dv, acc_dt);
    S = S * ms + vs;
  }
  float Mf = M;
  if (x->has_sink) {
    float ms = 1.0f, vs = 1.0f;
    if (x->sink > M) {
      ms = expf(M - x->sink);
      for (int64_t e = 0; e < p->dv; e++) acc[e] *= ms;
      Mf = x->sink;
    } else {
      vs = expf(x->sink - M);
    }
    S = S * ms + vs;
  }
  if (S == 0.0f) { /* every visible score -inf and no sink (ggml's S_inv = S == 0 ? 0 : 1/S: a NaN S stays NaN) */
    ac_cpu_vx_empty_row(x, i, lse);
    return;
  }
  const float inv = 1.0f / S;
  for (int64_t e = 0; e < p->dv; e++) ac_cpu_vx_store_o(x, i, e, acc[e] * inv);
  if (lse) *lse = Mf + logf(S);
}

int ac_cpu_ggml_run(ac_ggml_mode m, const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err,
                    size_t err_len)
{
  return ac_cpu_ggml_run_dot(m, name, p, t, NULL, err, err_len);
}

int ac_cpu_ggml_run_dot(ac_ggml_mode m, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                        const ac_ggml_dot *dot, char *err, size_t err_len)
{
  ac_cpu_vx x;
  if (ac_cpu_vx_init(&x, p->dtype, p, t, err, err_len) < 0) return -1;
  float *qs = ac_cpu_scratch(p->dk + 1, sizeof *qs), *q = ac_cpu_scratch(p->dk + 1, sizeof *q);
  float *kr = ac_cpu_scratch(p->dk + 1, sizeof *kr), *vr = ac_cpu_scratch(p->dv + 1, sizeof *vr);
  float *acc = ac_cpu_scratch(p->dv + 1, sizeof *acc);
  if (!qs || !q || !kr || !vr || !acc) {
    free(qs), free(q), free(kr), free(vr), free(acc);
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  const int q8 = m == AC_GGML_Q8 || m == AC_GGML_Q8_AS_Q4;
  const int acc_dt = q8 ? ATTNCHECK_F32 : m == AC_GGML_F16_BF16ACC ? ATTNCHECK_BF16 : ATTNCHECK_F16;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      ac_cpu_vx_head(&x, b, h, (float)p->scale);
      for (int64_t i = 0; i < p->tq; i++) {
        for (int64_t d = 0; d < p->dk; d++) qs[d] = ac_cpu_load_f32(x.qd, t->q, ac_cpu_off(p->q_stride, b, h, i, d));
        if (q8)
          ac_cpu_q8_row(qs, q, p->dk, m == AC_GGML_Q8_AS_Q4 ? 7 : 127);
        else
          for (int64_t d = 0; d < p->dk; d++) q[d] = ac_cpu_round_f32(ATTNCHECK_F16, qs[d]);
        ggml_row(&x, i, q, qs, dot, kr, vr, acc, acc_dt);
      }
    }
  free(qs), free(q), free(kr), free(vr), free(acc);
  return 0;
}

/* Every ABI 2 feature but the serving layouts (and per-tensor dtypes as below). */
#define GGML_CAPS (ATTNCHECK_FEAT_ALL & ~ATTNCHECK_FEAT_MIXED_DTYPES)

int ac_cpu_ggml_f16_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  if (p->dtype == ATTNCHECK_F16) return ac_cpu_supports_caps(p, ATTNCHECK_F16, GGML_CAPS, why, why_len);
  if (!ac_cpu_supports_caps(p, ATTNCHECK_F32, GGML_CAPS | ATTNCHECK_FEAT_MIXED_DTYPES, why, why_len)) return 0;
  if (p->k_dtype != ATTNCHECK_F16 || p->v_dtype != ATTNCHECK_F16) {
    snprintf(why, why_len,
             "ggml's f16 path reads f16 K and V: an f32 case needs them in f16 (gen --dtypes f32,f16,f16,f32)");
    return 0;
  }
  return 1;
}

static int ggml_f16_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return ac_cpu_ggml_run(AC_GGML_F16, "ggml-f16-style", p, t, err, err_len);
}

static int q8q_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports_caps(p, ATTNCHECK_F32, GGML_CAPS | ATTNCHECK_FEAT_MIXED_DTYPES, why, why_len);
}

static int q8q_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return ac_cpu_ggml_run(AC_GGML_Q8, "q8q-f32-style", p, t, err, err_len);
}

const attncheck_kernel ac_cpu_ggml_f16 = {
    ATTNCHECK_ABI_VERSION,
    sizeof(attncheck_kernel),
    "ggml-f16-style",
    "ggml's CPU f16 path: Q rounded to f16, f32 Q.K^T and softmax, unrounded P, f16 V accumulator, f32 row sum "
    "(f16 K and V with f32 Q and O, or f16 throughout)",
    "ggml-f16",
    ATTNCHECK_MEM_HOST,
    GGML_CAPS | ATTNCHECK_FEAT_MIXED_DTYPES,
    ac_cpu_ggml_f16_supports,
    ggml_f16_run,
    {NULL, NULL, NULL, NULL},
    NULL,
    0,
    0,
    0,
    0,
    NULL,
     0,
     0, NULL};

const attncheck_kernel ac_cpu_q8q_f32 = {
    ATTNCHECK_ABI_VERSION,
    sizeof(attncheck_kernel),
    "q8q-f32-style",
    "ggml's quantized-dot path on fp32 K: each row of Q rounded to q8_0 blocks of 32 (f16 scale max|x|/127), "
    "binary32 softmax and accumulation",
    "q8q-f32",
    ATTNCHECK_MEM_HOST,
    GGML_CAPS | ATTNCHECK_FEAT_MIXED_DTYPES,
    q8q_supports,
    q8q_run,
    {NULL, NULL, NULL, NULL},
    NULL,
    0,
    0,
    0,
    0,
    NULL,
     0,
     0, NULL};
