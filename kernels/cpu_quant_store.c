/* cpu_quant_store.c: reference kernels that quantize their own cache (quantize-on-store,
 * docs/quantized.md "Quantize-on-store"), one per store convention of serving engines:
 *   store-fp8-ref-f32    K and V to fp8 (e4m3fn, e4m3fnuz, e5m2) by max|x| / the largest code per
 *                        group (vLLM's dynamic per-token fp8 quantization) or with given scales (its
 *                        reshape_and_cache with k_scale, v_scale), x / s in binary32, nearest even,
 *                        saturating;
 *   store-minmax-ref-f32 K and V to uint8, int8, int4 or int2 codes by min and max per group, a zero
 *                        point (integer, clamped, or float: OpenVINO's u8/u4 KV-cache compression,
 *                        KIVI), ties to even or away from zero;
 *   store-q8_0-ref-f32   K and V to ggml's q8_0 rows (quantize_row_q8_0_ref, llama.cpp's cache write).
 * Each writes what it stores into tensors.store, dequantizes it to binary32 (fp8 and q8_0: the exact
 * value rounded to nearest, class kv-f32; int codes as OpenVINO does, ((float)c - z) * s, class dq-f32)
 * and runs naive-f32 over it. Dense cases only. The store mutants
 * (kernels/mutants/store_mutants.c) are these kernels with one defect of the store (AC_SBUG_...). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_common.h"
#include "quant_view.h"

/* Group s of tensor (q, dims d) quantized with one defect (bug): its plain values x[0 .. n), the
 * codes, scale and aux bits the kernel stores; prev_* the group one token earlier (same head and
 * block), or NULL. */
static void store_group(const ac_qspec *q, int bug, const double *x, int64_t n, uint8_t *codes, uint64_t *sb, uint64_t *ab,
                        const uint64_t *prev_sb, const uint64_t *prev_ab)
{
  ac_qspec r = *q;
  ac_qstore st;
  ac_qstore_unpack(q->store, &st);
  if (bug == AC_SBUG_ROUND_AWAY && st.round == AC_QRD_EVEN) st.round = AC_QRD_AWAY;
  if (bug == AC_SBUG_FP8_NAN) st.overflow = AC_QOV_NAN;
  r.store = ac_qstore_pack(&st);
  ac_qstore_group(&r, x, n, codes, sb, ab);
  if (bug == AC_SBUG_PREV_SCALE && prev_sb && st.rule != AC_QSR_GIVEN) {   /* the previous token's scale */
    ac_qstore g = st;
    g.rule = AC_QSR_GIVEN;
    r.store = ac_qstore_pack(&g);
    *sb = *prev_sb, *ab = prev_ab ? *prev_ab : 0;
    ac_qstore_group(&r, x, n, codes, sb, ab);
  }
  const ac_qsdtype zd = ac_qspec_zdtype(q);
  if (bug == AC_SBUG_ZERO_UNCLAMPED && st.rule == AC_QSR_MINMAX && (zd == AC_QSD_I8 || zd == AC_QSD_U8)) {
    /* z = qmin - R(min / s) left as it is: a group that does not reach 0 gets a zero point past the codes */
    const int qmin = q->fmt == AC_QF_INT8 ? -128 : 0, qmax = q->fmt == AC_QF_INT8 ? 127 : ac_qfmt_get(q->fmt)->code_max;
    double lo = INFINITY, s = ac_qscale_value(ac_qspec_sdtype(q), *sb);
    for (int64_t j = 0; j < n; j++) lo = fmin(lo, x[j]);
    double z = qmin - rint((double)((float)lo / (float)s));
    *ab = (uint64_t)((unsigned)(int)z & 0xffu);
    for (int64_t j = 0; j < n; j++) {
      double c = rint((double)((float)x[j] / (float)s)) + z;
      codes[j] = (uint8_t)((unsigned)(int)(c < qmin ? qmin : c > qmax ? qmax : c) & 0xffu);
    }
  }
}

/* Quantizes store tensor i (plain values in t->q/k/v) into s->t[i] as its spec says. */
static void store_tensor(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *s, int i, int bug)
{
  const ac_qview_tensor *v = &s->t[i];
  ac_qspec q;
  ac_qspec_from_abi(p, v, i, &q);
  const ac_qfmt_info *f = ac_qfmt_get(q.fmt);
  int64_t d[4] = {p->batch, i ? p->kv_heads : p->heads, i ? p->tk : p->tq, i == 2 ? p->dv : p->dk};
  const void *plain = i == 0 ? t->q : i == 1 ? t->k : t->v;
  int64_t n = d[0] * d[1] * d[2] * d[3], ns = ac_qscale_count(&q, d), gm = ac_qgroup_max(&q, d);
  int64_t rows = ac_qscale_rows(&q, d[2]), per_row = ns / (d[0] * d[1] * (rows ? rows : 1));   /* groups per scale row */
  const ac_qsdtype sd = ac_qspec_sdtype(&q), zd = ac_qspec_zdtype(&q);
  uint8_t *codes = calloc((size_t)n + 1, 1), *gc = malloc((size_t)gm + 1);
  uint64_t *sb = calloc((size_t)ns + 1, sizeof *sb), *ab = calloc((size_t)ns + 1, sizeof *ab);
  int64_t *idx = malloc((size_t)gm * sizeof *idx);
  double *gx = malloc((size_t)gm * sizeof *gx);
  for (int64_t g = 0; codes && gc && sb && ab && idx && gx && g < ns; g++) {
    int64_t m = ac_qgroup_of(&q, d, g, idx);
    for (int64_t k = 0; k < m; k++) gx[k] = ac_load((ac_dtype)p->dtype, plain, (size_t)idx[k]);   /* contiguous */
    if (v->scales) sb[g] = ac_qsd_load(sd, v->scales, (size_t)g);   /* the rule given: the scales on entry */
    if (v->aux && zd != AC_QSD_N) ab[g] = ac_qsd_load(zd, v->aux, (size_t)g);
    int first = q.gran != AC_QG_BLOCK && q.gran != AC_QG_TOKEN ? 1 : (g / per_row) % rows == 0;
    store_group(&q, bug, gx, m, gc, &sb[g], &ab[g], first ? NULL : &sb[g - per_row], first ? NULL : &ab[g - per_row]);
    for (int64_t k = 0; k < m; k++) codes[idx[k]] = gc[k];
  }
  if (v->ggml) {   /* ggml's rows of blocks */
    for (int64_t e = 0; codes && sb && ab && e < n / 32; e++)
      ac_qggml_pack(q.fmt, codes + e * 32, (uint16_t)sb[e], (uint16_t)ab[e], (uint8_t *)v->ggml + e * f->ggml_bytes);
  } else if (codes && sb && ab) {
    ac_qpack(&q, codes, n, (uint8_t *)v->codes);
    for (int64_t g = 0; g < ns; g++) {
      ac_qsd_store(sd, (void *)v->scales, (size_t)g, sb[g]);
      if (v->aux && zd != AC_QSD_N) ac_qsd_store(zd, (void *)v->aux, (size_t)g, ab[g]);
    }
  }
  free(codes), free(gc), free(sb), free(ab), free(idx), free(gx);
}

int ac_cpu_store_run(int bug, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  if (!t->store || p->struct_size < ATTNCHECK_PROBLEM_V5QL_SIZE) {
    snprintf(err, n, "takes quantize-on-store cases only");
    return 1;
  }
  attncheck_tensors tt = *t;
  const void **slot[3] = {&tt.q, &tt.k, &tt.v};
  float *vals[3] = {NULL, NULL, NULL};
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++) {
    if (!p->quant_spec[i].store_rule) continue;
    store_tensor(p, t, t->store, i, bug);
    if (!(vals[i] = ac_cpu_quant_dequantize_dq32(p, &t->store->t[i], "qkv"[i]))) {
      snprintf(err, n, "out of memory");
      rc = 1;
    }
    *slot[i] = vals[i];
  }
  if (!rc) rc = ac_cpu_naive_f32.run(p, &tt, err, n);
  for (int i = 0; i < 3; i++) free(vals[i]);
  return rc;
}

static int store_supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) {
    snprintf(why, n, "dense cases only (a quantize-on-store case is dense)");
    return 0;
  }
  return ac_cpu_naive_f32.supports(p, why, n);
}

static int store_plain_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_store_run(AC_SBUG_NONE, p, t, err, n);
}

static int store_qrun(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  (void)v;
  return ac_cpu_store_run(AC_SBUG_NONE, p, t, err, n);
}

#define STORE_KERNEL(SYM, NAME, DESC, QUANTIZERS, CLASS)                                                          \
  const attncheck_kernel SYM = {ATTNCHECK_KERNEL_INIT,                                                     \
                                .name = NAME,                                                              \
                                .description = DESC,                                                       \
                                .precision = CLASS,                                                        \
                                .memory = ATTNCHECK_MEM_HOST,                                              \
                                .caps = AC_CPU_STORE_CAPS,                                                 \
                                .supports = store_supports,                                                \
                                .run = store_plain_run,                                                    \
                                .store_quantizers = QUANTIZERS};

STORE_KERNEL(ac_cpu_store_fp8_ref_f32, "store-fp8-ref-f32",
             "quantizes K and V itself to fp8 (max|x| / the largest code per group, or given scales; x / s in "
             "binary32, nearest even, saturating: vLLM), then naive-f32 over what it stored",
             AC_CPU_STORE_FP8_QUANTIZERS, "kv-f32")
STORE_KERNEL(ac_cpu_store_minmax_ref_f32, "store-minmax-ref-f32",
             "quantizes K and V itself to uint8, int8, int4 or int2 codes by min and max per group with a zero point "
             "(OpenVINO's u8/u4 cache, KIVI), then naive-f32 over ((float)c - z) * s",
             AC_CPU_STORE_MINMAX_QUANTIZERS, "dq-f32")
STORE_KERNEL(ac_cpu_store_q8_0_ref_f32, "store-q8_0-ref-f32",
             "quantizes K and V itself to ggml's q8_0 rows (quantize_row_q8_0_ref), then naive-f32 over what it stored",
             "ggml", "kv-f32")

#define F(x) (1u << AC_QF_##x)
const ac_quant_kernel ac_cpu_store_fp8_entry = {&ac_cpu_store_fp8_ref_f32, AC_CPU_STORE_FP8_FORMATS, 0, 1, store_qrun};
const ac_quant_kernel ac_cpu_store_minmax_entry = {&ac_cpu_store_minmax_ref_f32, AC_CPU_STORE_MINMAX_FORMATS, 0, 1, store_qrun};
const ac_quant_kernel ac_cpu_store_q8_0_entry = {&ac_cpu_store_q8_0_ref_f32, F(Q8_0), 0, 1, store_qrun};
#undef F
