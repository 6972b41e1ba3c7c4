/* cpu_quant.c: the reference kernels of the quantized formats (docs/quantized.md "Reference
 * kernels"), one per family: ggml-ref-f32 (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, read from ggml's
 * block bytes), fp8kv-ref-f32 (e4m3fn, e4m3fnuz, e5m2 with their scales; q too), intkv-ref-f32
 * (int8, int4 with scale and zero point) and fp4kv-ref-f32 (nvfp4, mxfp4 from its ggml blocks).
 * Each dequantizes every quantized element once to binary32 (the exact value rounded to nearest:
 * exact for q8_0, q4_0, q5_0, iq4_nl and mxfp4, one rounding for the others, as a CPU kernel that
 * dequantizes to float does), then runs naive-f32 (dense cases) or flash-varlen-f32 (varlen batches
 * and paged caches) on those values. They take quantized cases only, and the ABI 2 variants
 * naive-f32 takes but per-tensor dtypes and descales (a quantized tensor's scales are its descale). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_common.h"
#include "cpu_varlen.h"
#include "quant_view.h"
#include "dtype.h"

extern const attncheck_kernel ac_cpu_flash_varlen_f32;   /* cpu_varlen.c */

static double scale_at(const ac_qview_tensor *v, const ac_qspec *q, int64_t off)
{
  ac_qsdtype sd = ac_qspec_sdtype(q);
  return ac_qscale_value(sd, ac_qsd_load(sd, v->scales, (size_t)off));
}

/* one defect of a quantized kernel's dequantization (AC_QBUG_..., quant_view.h; 0: none): element
 * (b, h, t, d) of tensor x ('q', 'k', 'v') of head dim D, spec q (ac_qspec_from_abi) */
static double qview_value(const ac_qview_tensor *v, const ac_qspec *q, int64_t b, int64_t h, int64_t t, int64_t d, char x,
                          int64_t D, int bug)
{
  const ac_qfmt_info *f = ac_qfmt_get(v->format);
  if (!f) return NAN;
  const int q4 = v->format == AC_QF_Q4_0 || v->format == AC_QF_Q4_1 || v->format == AC_QF_IQ4_NL;
  double val;
  if (v->ggml) {   /* ggml's block: its scale, min and codes from the bytes */
    int64_t e = d / 32, j = d % 32;
    const uint8_t *blk = v->ggml + b * v->ggml_stride[0] + h * v->ggml_stride[1] + t * v->ggml_stride[2] + e * v->ggml_stride[3];
    uint8_t c[32];
    uint16_t sd, sm;
    ac_qggml_unpack(v->format, blk, c, &sd, &sm);
    if (bug == AC_QBUG_NIBBLE_SWAP && q4) j = (j + 16) % 32;
    if (bug == AC_QBUG_NEXT_BLOCK_SCALE && (e + 1) * 32 < D) {
      uint8_t c2[32];
      uint16_t sm2;
      ac_qggml_unpack(v->format, blk + v->ggml_stride[3], c2, &sd, &sm2);
    }
    double s = ac_qscale_value(f->sdtype, sd), m = f->aux == AC_QAUX_MIN ? ac_qscale_value(AC_QSD_F16, sm) : 0;
    if (bug == AC_QBUG_BF16_SCALE && f->sdtype == AC_QSD_F16) s = ac_bf16_to_f32(sd);
    if (bug == AC_QBUG_NO_Q4_OFFSET && v->format == AC_QF_Q4_0) return s * c[j];
    return ac_qvalue(v->format, c[j], s, m);
  }
  int64_t e = v->granularity == AC_QG_BLOCK ? d / v->block : d, g = ac_qspec_tgroup(q);
  int64_t so = b * v->scale_stride[0] + h * v->scale_stride[1] + (g > 1 ? t / g : t) * v->scale_stride[2] + e * v->scale_stride[3];
  int per = ac_qspec_per_byte(q);
  int64_t at = b * v->code_stride[0] + h * v->code_stride[1] + t * v->code_stride[2] + (d / per) * v->code_stride[3];
  uint8_t code = per > 1 ? ac_qpacked_code(q->pack, f->bits, v->codes + at, d % per) : v->codes[at];
  if (bug == AC_QBUG_PACK_ORDER && per > 1)   /* the other nibble (crumb) order */
    code = ac_qpacked_code(q->pack == AC_QPACK_LOW_FIRST ? AC_QPACK_HIGH_FIRST : AC_QPACK_LOW_FIRST, f->bits, v->codes + at, d % per);
  const ac_qsdtype zd = ac_qspec_zdtype(q);
  double a = 0, s = scale_at(v, q, so);
  if (f->aux == AC_QAUX_MIN || f->aux == AC_QAUX_ZERO) a = ac_qscale_value(zd, ac_qsd_load(zd, v->aux, (size_t)so));
  else if (f->aux == AC_QAUX_TSCALE) a = ac_qscale_value(AC_QSD_F32, ac_qsd_load(AC_QSD_F32, v->aux, 0));
  if ((bug == AC_QBUG_NO_V_SCALE && x == 'v') || (bug == AC_QBUG_NO_Q_SCALE && x == 'q')) s = 1;
  if (bug == AC_QBUG_ZERO_SIGN && f->aux == AC_QAUX_ZERO) a = -a;
  int rounded = 0;
  if (bug == AC_QDQ_F32 && f->aux == AC_QAUX_ZERO)
    return (double)(((float)(v->format == AC_QF_INT8 ? (int8_t)code : (int)code) - (float)a) * (float)s);
  if (bug == AC_QBUG_FN_AS_FNUZ && v->format == AC_QF_E4M3FN) val = ac_e4m3fnuz_decode(code) * s;
  else if (f->aux == AC_QAUX_ZERO && zd != AC_QSD_I8 && zd != AC_QSD_U8) val = ac_qvalue_zero(v->format, code, s, a, &rounded);
  else val = ac_qvalue(v->format, code, s, a);
  if (bug == AC_QBUG_SCALE_TWICE) val *= s;
  if (bug == AC_QBUG_NAN_DROPPED && isnan(val)) val = 0;
  return val;
}

/* The dims {B, H, T, D} of tensor x of p as a kernel sees it (a layout's carrier: B = 1, T tokens or
 * slots), and the elements its strides span. */
static int64_t view_span(const attncheck_problem *p, char x, int64_t dims[4])
{
  const int layout = (p->features & ATTNCHECK_FEAT_LAYOUTS) != 0, isq = x == 'q';
  dims[0] = layout ? 1 : p->batch, dims[1] = isq ? p->heads : p->kv_heads;
  dims[2] = layout ? (isq ? p->total_q : p->total_k) : (isq ? p->tq : p->tk), dims[3] = x == 'v' ? p->dv : p->dk;
  const int64_t *st = x == 'q' ? p->q_stride : x == 'k' ? p->k_stride : p->v_stride;
  return 1 + (dims[0] - 1) * st[0] + (dims[1] - 1) * st[1] + (dims[2] - 1) * st[2] + (dims[3] - 1) * st[3];
}

static float *dequantize(const attncheck_problem *p, const ac_qview_tensor *v, char x, int bug)
{
  int64_t dims[4];
  const int64_t span = view_span(p, x, dims), B = dims[0], H = dims[1], T = dims[2], D = dims[3];
  const int64_t *st = x == 'q' ? p->q_stride : x == 'k' ? p->k_stride : p->v_stride;   /* the values' own layout */
  ac_qspec q;
  ac_qspec_from_abi(p, v, ac_qslot(x), &q);
  float *out = malloc((size_t)span * sizeof *out);
  if (!out) return NULL;
  for (int64_t k = 0; k < span; k++) out[k] = NAN;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < D; d++) out[ac_cpu_off(st, b, h, t, d)] = (float)qview_value(v, &q, b, h, t, d, x, D, bug);
  return out;
}

float *ac_cpu_quant_dequantize(const attncheck_problem *p, const ac_qview_tensor *v, char x)
{
  return dequantize(p, v, x, 0);
}

float *ac_cpu_quant_dequantize_dq32(const attncheck_problem *p, const ac_qview_tensor *v, char x)
{
  return dequantize(p, v, x, AC_QDQ_F32);
}

uint16_t *ac_cpu_quant_dequantize16(const attncheck_problem *p, const ac_qview_tensor *v, char x, int dt)
{
  int64_t dims[4];
  const int64_t span = view_span(p, x, dims);
  float *f = dequantize(p, v, x, 0);
  uint16_t *out = f ? malloc((size_t)span * sizeof *out) : NULL;
  for (int64_t k = 0; out && k < span; k++) out[k] = dt == ATTNCHECK_BF16 ? ac_bf16_from_f32(f[k]) : ac_f16_from_f32(f[k]);
  free(f);
  return out;
}

/* AC_QBUG_QHEAD_SCALE: K and V expanded to the query heads ([B][H][T][D], packed), query head h
 * reading the codes of kv head h / (H / H_kv) with per-head scale h of the [B][H_kv] array (that of
 * a later batch's head, or NaN, the array's guard, past its end) */
static float *expand_qhead(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview_tensor *v, char x)
{
  const int64_t B = p->batch, H = p->heads, Hk = p->kv_heads, T = p->tk, D = x == 'v' ? p->dv : p->dk;
  const int64_t *st = x == 'v' ? p->v_stride : p->k_stride;
  const float *dense = x == 'v' ? t->v : t->k;
  ac_qspec q;
  ac_qspec_from_abi(p, v, ac_qslot(x), &q);
  float *out = malloc((size_t)(B * H * T * D) * sizeof *out);
  if (!out) return NULL;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t j = 0; j < T; j++)
        for (int64_t d = 0; d < D; d++) {
          int64_t hk = h / (H / Hk), si = b * Hk + h;
          double val;
          if (!v->format) val = dense[ac_cpu_off(st, b, hk, j, d)];
          else if (v->granularity != AC_QG_HEAD) val = qview_value(v, &q, b, hk, j, d, x, D, 0);
          else {
            uint8_t code = v->codes[b * v->code_stride[0] + hk * v->code_stride[1] + j * v->code_stride[2] + d * v->code_stride[3]];
            val = si < B * Hk ? ac_qvalue(v->format, code, scale_at(v, &q, si), 0) : NAN;
          }
          out[((b * H + h) * T + j) * D + d] = (float)val;
        }
  return out;
}

static int qhead_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  attncheck_problem pp = *p;
  attncheck_tensors tt = *t;
  float *vals[3] = {NULL, NULL, NULL};
  int rc = 0;
  if (v->t[0].format && !(vals[0] = dequantize(p, &v->t[0], 'q', 0))) rc = 1;
  if (!rc && !(vals[1] = expand_qhead(p, t, &v->t[1], 'k'))) rc = 1;
  if (!rc && !(vals[2] = expand_qhead(p, t, &v->t[2], 'v'))) rc = 1;
  if (rc) snprintf(err, n, "out of memory");
  else {
    if (vals[0]) tt.q = vals[0];
    tt.k = vals[1], tt.v = vals[2];
    pp.kv_heads = p->heads;
    const int64_t ks[4] = {p->heads * p->tk * p->dk, p->tk * p->dk, p->dk, 1}, vs[4] = {p->heads * p->tk * p->dv, p->tk * p->dv, p->dv, 1};
    memcpy(pp.k_stride, ks, sizeof ks);
    memcpy(pp.v_stride, vs, sizeof vs);
    rc = ac_cpu_naive_f32.run(&pp, &tt, err, n);
  }
  for (int i = 0; i < 3; i++) free(vals[i]);
  return rc;
}

int ac_cpu_quant_bug_run(int bug, const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  if (bug == AC_QBUG_QHEAD_SCALE && !(p->features & ATTNCHECK_FEAT_LAYOUTS) && p->heads != p->kv_heads)
    return qhead_run(p, t, v, err, n);
  attncheck_tensors tt = *t;
  float *vals[3] = {NULL, NULL, NULL};
  const void **slot[3] = {&tt.q, &tt.k, &tt.v};
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++) {
    if (!v->t[i].format) continue;
    if (!(vals[i] = dequantize(p, &v->t[i], "qkv"[i], bug))) {
      snprintf(err, n, "out of memory");
      rc = 1;
    }
    *slot[i] = vals[i];
  }
  if (!rc && bug == AC_QBUG_PAST_SEQLEN && (p->features & ATTNCHECK_FEAT_PAGED))
    rc = ac_cpu_layout_run(ATTNCHECK_F32, AC_LBUG_PAGE_COUNT, "mutant-quant-past-seqlen", p, &tt, err, n);
  else if (!rc) {
    const attncheck_kernel *base = p->features & ATTNCHECK_FEAT_LAYOUTS ? &ac_cpu_flash_varlen_f32 : &ac_cpu_naive_f32;
    rc = base->run(p, &tt, err, n);
  }
  for (int i = 0; i < 3; i++) free(vals[i]);
  return rc;
}

int ac_cpu_quant_ref_run(const attncheck_problem *p, const attncheck_tensors *t, const ac_qview *v, char *err, size_t n)
{
  return ac_cpu_quant_bug_run(0, p, t, v, err, n);
}

static int ref_supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->features & ATTNCHECK_FEAT_LAYOUTS) return ac_cpu_flash_varlen_f32.supports(p, why, n);
  return ac_cpu_naive_f32.supports(p, why, n);
}

static int ref_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "takes quantized tensors only");
  return 1;
}

#define QREF_CAPS \
  ((ATTNCHECK_FEAT_ALL & ~(ATTNCHECK_FEAT_MIXED_DTYPES | ATTNCHECK_FEAT_DESCALE)) | ATTNCHECK_FEAT_LAYOUTS | \
   ATTNCHECK_FEAT_QUANT_LAYOUT)
/* their classes (docs/quantized.md): K and V (and an fp8 Q) rounded once to binary32, then fp32 */
#define QREF_KERNEL(SYM, NAME, DESC, PREC) \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, PREC, ATTNCHECK_MEM_HOST, \
                                QREF_CAPS, ref_supports, ref_run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

QREF_KERNEL(ac_cpu_ggml_ref_f32, "ggml-ref-f32",
            "K and V in ggml blocks (q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl) read from their bytes, dequantized to binary32, then naive-f32",
            "kv-f32")
QREF_KERNEL(ac_cpu_fp8kv_ref_f32, "fp8kv-ref-f32",
            "fp8 codes (e4m3fn e4m3fnuz e5m2) of Q, K, V times their scales, dequantized to binary32, then naive-f32",
            "qkv-f32")
QREF_KERNEL(ac_cpu_intkv_ref_f32, "intkv-ref-f32",
            "int8, uint8, int4 and int2 codes of K and V with scale and zero point, dequantized to binary32, then naive-f32",
            "kv-f32")
QREF_KERNEL(ac_cpu_fp4kv_ref_f32, "fp4kv-ref-f32",
            "e2m1 codes of K and V (nvfp4 with e4m3 scales per 16 and a tensor scale, mxfp4 from ggml blocks), binary32, naive-f32",
            "kv-f32")

#define F(x) (1u << AC_QF_##x)
static const ac_quant_kernel table[] = {
  {&ac_cpu_ggml_ref_f32, F(Q8_0) | F(Q4_0) | F(Q4_1) | F(Q5_0) | F(Q5_1) | F(IQ4_NL), 0, 1, ac_cpu_quant_ref_run},
  {&ac_cpu_fp8kv_ref_f32, F(E4M3FN) | F(E4M3FNUZ) | F(E5M2), F(E4M3FN) | F(E4M3FNUZ) | F(E5M2), 1, ac_cpu_quant_ref_run},
  {&ac_cpu_intkv_ref_f32, F(INT8) | F(UINT8) | F(INT4) | F(INT2), 0, 1, ac_cpu_quant_ref_run},
  {&ac_cpu_fp4kv_ref_f32, F(NVFP4) | F(MXFP4), 0, 1, ac_cpu_quant_ref_run},
};
#undef F

extern const ac_quant_kernel ac_tk_quant_entry;   /* kernels/testkernels/quant.c */

const ac_quant_kernel *ac_quant_kernel_of(const attncheck_kernel *k)
{
  for (size_t i = 0; k && i < sizeof table / sizeof table[0]; i++)
    if (table[i].k == k) return &table[i];
  if (k && k == ac_cpu_ggml_q8_entry.k) return &ac_cpu_ggml_q8_entry;
  if (k && k == ac_cpu_fp8fold_entry.k) return &ac_cpu_fp8fold_entry;
  if (k && k == ac_cpu_kv16_f16_entry.k) return &ac_cpu_kv16_f16_entry;
  if (k && k == ac_cpu_kv16_bf16_entry.k) return &ac_cpu_kv16_bf16_entry;
  if (k && k == ac_tk_quant_entry.k) return &ac_tk_quant_entry;
  const ac_quant_kernel *const store[] = {&ac_cpu_store_fp8_entry, &ac_cpu_store_minmax_entry, &ac_cpu_store_q8_0_entry};
  for (size_t i = 0; k && i < sizeof store / sizeof store[0]; i++)
    if (store[i]->k == k) return store[i];
  const ac_quant_kernel *m = ac_quant_mutant_entry_of(k);
  return m ? m : ac_store_mutant_entry_of(k);
}
