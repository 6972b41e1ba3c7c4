/* tcpukernels.c: the built-in CPU kernels against naive-f64 run on the same values widened to
 * binary64 (every mask, GQA, dv != dk, strided layouts, tq != tk, empty rows, LSE, odd block
 * sizes; the LSE unless the kernel declares ATTNCHECK_CAP_NO_LSE), with a tolerance derived from
 * the dtype's unit roundoff; every mutant differs from
 * the reference beyond that tolerance on its trigger input, while the unmutated mutant base
 * agrees on the same input. Kernels are called directly through the ABI. */
#include "config.h"
#include "testutil.h"
#include "harness.h"
#include "cpu_common.h"
#include "dtype.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The mutant base without any hook: flash-f32/-f16/-bf16 by another path (the control). */
#include "../kernels/mutants/mutant_flash.h"
MUTANT_KERNEL(control_f32, ATTNCHECK_F32, "control-f32", "fp32", "mutant base, no defect")
static int control_any_supports(const attncheck_problem *p, char *why, size_t why_len)
{
  return ac_cpu_supports(p, p->dtype, 1, why, why_len);
}
static int control_any_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t err_len)
{
  return mutant_flash_run(p->dtype, "control", p, t, err, err_len);
}
static const attncheck_kernel control_any = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "control", "mutant base",
                                             NULL, ATTNCHECK_MEM_HOST, 0, control_any_supports, control_any_run,
                                             {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

/* ---- random values ------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng_next(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double rng_unif(void) { return ((double)(rng_next() >> 11) + 0.5) * 0x1p-53; }
static double rng_normal(void) { return sqrt(-2.0 * log(rng_unif())) * cos(6.283185307179586 * rng_unif()); }

/* ---- cases ------------------------------------------------------------------------------ */

/* V_MASKNAN: NaN in K and V at keys no row sees; V_NANDIAG: NaN in V[.][0] at the last key the
 * last row sees (rows that see it must give NaN there, the others must not). */
enum { V_NORMAL, V_LARGE, V_LATE, V_NEGATIVE, V_MASKNAN, V_NANDIAG, V_FLATBIG };
enum { L_DENSE, L_BSHD, L_DMAJOR };

typedef struct {
  const char *what;
  int mask;
  int64_t B, H, KV, tq, tk, dk, dv;
  double scale;   /* NAN: 1/sqrt(dk) */
  int layout, values;
  double param;   /* magnitude (V_LARGE), growth (V_LATE) */
} tcase;

/* One problem's tensors in a kernel's layout and dtype, plus the same values dense in f64. */
typedef struct {
  attncheck_problem p, p64;
  void *q, *k, *v, *o;
  size_t nq, nk, nv, no;          /* elements of the strided buffers */
  double *q64, *k64, *v64, *o64;  /* dense */
  float *lse, *lse64;
} tprob;

static int tvis(const tcase *c, int64_t i)   /* visible keys of row i, computed here independently */
{
  int64_t n = c->mask == ATTNCHECK_MASK_NONE ? c->tk : c->mask == ATTNCHECK_MASK_CAUSAL ? i + 1 : i + 1 + c->tk - c->tq;
  return (int)(n < 0 ? 0 : n > c->tk ? c->tk : n);
}

/* Strides and span of a [B][H][T][D] tensor in the given layout. */
static size_t layout_strides(int layout, int64_t B, int64_t H, int64_t T, int64_t D, int64_t s[4])
{
  switch (layout) {
  case L_BSHD: /* [b][t][h][d], rows padded by 3 elements */
    s[3] = 1, s[1] = D + 3, s[2] = H * (D + 3), s[0] = T * H * (D + 3);
    return (size_t)(B * T * H * (D + 3));
  case L_DMAJOR: /* [b][h][d][t] */
    s[2] = 1, s[3] = T, s[1] = D * T, s[0] = H * D * T;
    return (size_t)(B * H * D * T);
  default:
    s[3] = 1, s[2] = D, s[1] = T * D, s[0] = H * T * D;
    return (size_t)(B * H * T * D);
  }
}

static int64_t dense(int64_t H, int64_t T, int64_t D, int64_t b, int64_t h, int64_t t, int64_t d)
{
  return ((b * H + h) * T + t) * D + d;
}

static void *nan_buffer(int dt, size_t n)
{
  size_t sz = ac_dtype_size((ac_dtype)dt);
  void *x = ac_xmalloc((n ? n : 1) * sz);
  uint64_t nanbits = ac_encode_f64((ac_dtype)dt, NAN);
  for (size_t i = 0; i < n; i++) ac_store_bits((ac_dtype)dt, x, i, nanbits);
  return x;
}

/* Fills one tensor: value() gives the logical value, rounded to dt; the f64 copy holds it exactly. */
static void fill(int dt, const tcase *c, void *buf, double *d64, const int64_t s[4], int64_t B, int64_t H, int64_t T,
                 int64_t D, double (*value)(const tcase *, int64_t, int64_t, int64_t, int64_t))
{
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < D; d++) {
          uint64_t bits = ac_encode_f64((ac_dtype)dt, value(c, h, t, d, b));
          ac_store_bits((ac_dtype)dt, buf, (size_t)ac_cpu_off(s, b, h, t, d), bits);
          d64[dense(H, T, D, b, h, t, d)] = ac_decode((ac_dtype)dt, bits);
        }
}

/* Keys masked for every query row (V_MASKNAN puts NaN there). */
static int masked_for_all(const tcase *c, int64_t j) { return c->tq == 0 || j >= tvis(c, c->tq - 1); }

static double val_q(const tcase *c, int64_t h, int64_t t, int64_t d, int64_t b)
{
  (void)h, (void)t, (void)d, (void)b;
  switch (c->values) {
  case V_LARGE: return c->param * rng_normal();
  case V_LATE: return 1.0 + 0.25 * rng_normal();
  case V_NEGATIVE: return 100.0 + 0.01 * rng_normal();
  default: return rng_normal();
  }
}
static double val_k(const tcase *c, int64_t h, int64_t t, int64_t d, int64_t b)
{
  (void)h, (void)d, (void)b;
  switch (c->values) {
  case V_LARGE: return c->param * rng_normal();
  case V_LATE: return c->param * (double)t / (double)c->tk + 0.1 * rng_normal();   /* scores grow with j */
  case V_NEGATIVE: return -10.0 + 0.01 * rng_normal();
  case V_MASKNAN: return masked_for_all(c, t) ? NAN : rng_normal();
  default: return rng_normal();
  }
}
static double val_v(const tcase *c, int64_t h, int64_t t, int64_t d, int64_t b)
{
  (void)h, (void)b;
  switch (c->values) {
  case V_MASKNAN: return masked_for_all(c, t) ? NAN : rng_normal();
  case V_NANDIAG: return c->tq > 0 && t == tvis(c, c->tq - 1) - 1 && d == 0 ? NAN : rng_normal();
  case V_FLATBIG: return 100.0 + rng_normal();
  default: return rng_normal();
  }
}

static void prob_make(tprob *P, const tcase *c, int dt, uint64_t seed)
{
  memset(P, 0, sizeof *P);
  rng_state = seed;
  attncheck_problem *p = &P->p;
  p->struct_size = sizeof *p;
  p->dtype = dt;
  p->mask = c->mask;
  p->batch = c->B, p->heads = c->H, p->kv_heads = c->KV;
  p->tq = c->tq, p->tk = c->tk, p->dk = c->dk, p->dv = c->dv;
  /* the default scale, rounded to the dtype's scale precision as a harness would pass it */
  p->scale = isnan(c->scale) ? 1.0 / sqrt((double)(c->dk ? c->dk : 1)) : c->scale;
  P->nq = layout_strides(c->layout, c->B, c->H, c->tq, c->dk, p->q_stride);
  P->nk = layout_strides(c->layout, c->B, c->KV, c->tk, c->dk, p->k_stride);
  P->nv = layout_strides(c->layout, c->B, c->KV, c->tk, c->dv, p->v_stride);
  P->no = layout_strides(c->layout, c->B, c->H, c->tq, c->dv, p->o_stride);
  P->q = nan_buffer(dt, P->nq), P->k = nan_buffer(dt, P->nk), P->v = nan_buffer(dt, P->nv), P->o = nan_buffer(dt, P->no);
  P->q64 = ac_xcalloc((size_t)(c->B * c->H * c->tq * c->dk) + 1, sizeof(double));
  P->k64 = ac_xcalloc((size_t)(c->B * c->KV * c->tk * c->dk) + 1, sizeof(double));
  P->v64 = ac_xcalloc((size_t)(c->B * c->KV * c->tk * c->dv) + 1, sizeof(double));
  P->o64 = ac_xcalloc((size_t)(c->B * c->H * c->tq * c->dv) + 1, sizeof(double));
  fill(dt, c, P->q, P->q64, p->q_stride, c->B, c->H, c->tq, c->dk, val_q);
  fill(dt, c, P->k, P->k64, p->k_stride, c->B, c->KV, c->tk, c->dk, val_k);
  fill(dt, c, P->v, P->v64, p->v_stride, c->B, c->KV, c->tk, c->dv, val_v);
  size_t nrows = (size_t)(c->B * c->H * c->tq);
  P->lse = ac_xmalloc((nrows + 1) * sizeof(float));
  P->lse64 = ac_xmalloc((nrows + 1) * sizeof(float));
  for (size_t i = 0; i < nrows; i++) P->lse[i] = NAN, P->lse64[i] = NAN;
  /* the reference problem: same values, dense f64 */
  P->p64 = *p;
  P->p64.dtype = ATTNCHECK_F64;
  layout_strides(L_DENSE, c->B, c->H, c->tq, c->dk, P->p64.q_stride);
  layout_strides(L_DENSE, c->B, c->KV, c->tk, c->dk, P->p64.k_stride);
  layout_strides(L_DENSE, c->B, c->KV, c->tk, c->dv, P->p64.v_stride);
  layout_strides(L_DENSE, c->B, c->H, c->tq, c->dv, P->p64.o_stride);
}

static void prob_free(tprob *P)
{
  free(P->q), free(P->k), free(P->v), free(P->o);
  free(P->q64), free(P->k64), free(P->v64), free(P->o64);
  free(P->lse), free(P->lse64);
}

static const attncheck_kernel *kernel_named(const char *name)
{
  size_t n;
  const attncheck_kernel *const *l = ac_builtin_kernels(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i]->name, name) == 0) return l[i];
  l = ac_mutant_kernels(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i]->name, name) == 0) return l[i];
  return NULL;
}

/* Runs kernel K on case c in dtype dt and returns the worst err/tol over o and lse (inf for
 * a NaN where the reference is finite, a non-zero empty row, or a touched gap); where says
 * which element. */
static double run_and_compare(const attncheck_kernel *K, const tcase *c, int dt, uint64_t seed, char *where,
                              size_t where_len)
{
  tprob P;
  char msg[256] = "";
  prob_make(&P, c, dt, seed);
  attncheck_tensors t = {P.q, P.k, P.v, P.o, P.lse, NULL};
  attncheck_tensors t64 = {P.q64, P.k64, P.v64, P.o64, P.lse64, NULL};
  ck_assert_msg(K->supports(&P.p, msg, sizeof msg) == 1, AC_SEED_FMT "%s refuses %s: %s", AC_SEED_ARG, K->name, c->what, msg);
  ck_assert_msg(K->run(&P.p, &t, msg, sizeof msg) == 0, AC_SEED_FMT "%s failed on %s: %s", AC_SEED_ARG, K->name, c->what, msg);
  ck_assert_msg(ac_cpu_naive_f64.run(&P.p64, &t64, msg, sizeof msg) == 0, "reference failed: %s", msg);

  /* gaps of the strided output untouched */
  const uint64_t nanbits = ac_encode_f64((ac_dtype)dt, NAN);
  uint8_t *inside = ac_xcalloc(P.no + 1, 1);
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->H; h++)
      for (int64_t i = 0; i < c->tq; i++)
        for (int64_t e = 0; e < c->dv; e++) inside[ac_cpu_off(P.p.o_stride, b, h, i, e)] = 1;
  double worst = 0.0;
  snprintf(where, where_len, "nowhere");
  for (size_t x = 0; x < P.no; x++)
    if (!inside[x] && ac_load_bits((ac_dtype)dt, P.o, x) != nanbits) {
      snprintf(where, where_len, "gap element %zu of o overwritten", x);
      worst = INFINITY;
    }
  free(inside);

  const double u32 = 0x1p-24, u = dt == ATTNCHECK_F64 ? 0x1p-53 : u32;
  const int nolse = (K->caps & ATTNCHECK_CAP_NO_LSE) != 0;   /* its LSE is not judged */
  double *srow = ac_xmalloc(((size_t)c->tk + 1) * sizeof *srow);
  const int low = dt != ATTNCHECK_F64 && dt != ATTNCHECK_F32;
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->H; h++) {
      const int64_t kvh = h / (c->H / c->KV);
      for (int64_t i = 0; i < c->tq; i++) {
        const int n = tvis(c, i);
        const int64_t row = (b * c->H + h) * c->tq + i;
        const double lse = P.lse[row], lse_ref = P.lse64[row];
        if (n == 0) {
          for (int64_t e = 0; e < c->dv; e++) {
            double ov = ac_load((ac_dtype)dt, P.o, (size_t)ac_cpu_off(P.p.o_stride, b, h, i, e));
            if (ov != 0.0 && worst < INFINITY) {
              snprintf(where, where_len, "empty row %lld: o[%lld] = %a", (long long)row, (long long)e, ov);
              worst = INFINITY;
            }
          }
          if (!nolse && lse != -INFINITY && worst < INFINITY) {
            snprintf(where, where_len, "empty row %lld: lse = %a", (long long)row, lse);
            worst = INFINITY;
          }
          continue;
        }
        /* size of the problem seen by this row, for the tolerance */
        double vmax = 0.0, qkmax = 0.0, smax = 0.0, m = -INFINITY;
        for (int j = 0; j < n; j++) {
          double qk = 0.0, s = 0.0;
          for (int64_t d = 0; d < c->dk; d++) {
            double a = P.q64[dense(c->H, c->tq, c->dk, b, h, i, d)], k = P.k64[dense(c->KV, c->tk, c->dk, b, kvh, j, d)];
            qk += fabs(a * k);
            s += a * k;
          }
          srow[j] = s * P.p.scale;
          m = fmax(m, srow[j]);
          qkmax = fmax(qkmax, qk * fabs(P.p.scale));
          smax = fmax(smax, fabs(srow[j]));
          for (int64_t e = 0; e < c->dv; e++) vmax = fmax(vmax, fabs(P.v64[dense(c->KV, c->tk, c->dv, b, kvh, j, e)]));
        }
        /* P rounded to the dtype before P.V: at most half an ulp of each P, over the row sum */
        double l = 0.0, pround = 0.0;
        for (int j = 0; j < n; j++) {
          double pj = exp(srow[j] - m);
          l += pj;
          if (low) pround += 0.5 * ac_ulp((ac_dtype)dt, pj);
        }
        pround /= l;
        const double base = 4.0 * u * (2.0 * (double)c->dk * qkmax + 4.0 * smax + 2.0 * n + 16.0);
        for (int64_t e = 0; e < c->dv; e++) {
          const double ref = P.o64[dense(c->H, c->tq, c->dv, b, h, i, e)];
          const double ov = ac_load((ac_dtype)dt, P.o, (size_t)ac_cpu_off(P.p.o_stride, b, h, i, e));
          const double tol = vmax * base + (low ? 2.0 * pround * vmax + ac_ulp((ac_dtype)dt, ref) : 0.0) + 0x1p-1000;
          const double r = isnan(ov) != isnan(ref) ? INFINITY : isnan(ov) ? 0.0
                         : isinf(ov) || isinf(ref) ? (ov == ref ? 0.0 : INFINITY) : fabs(ov - ref) / tol;
          if (r > worst || (r == INFINITY && worst < INFINITY)) {
            snprintf(where, where_len, "o row %lld e %lld: %a, reference %a, tolerance %a", (long long)row, (long long)e, ov,
                     ref, tol);
            worst = r;
          }
        }
        const double ltol = base + 4.0 * u32 * fabs(lse_ref);
        const double lr = nolse ? 0.0 : isfinite(lse) ? fabs(lse - lse_ref) / ltol : INFINITY;
        if (lr > worst) {
          snprintf(where, where_len, "lse row %lld: %a, reference %a, tolerance %a", (long long)row, lse, lse_ref, ltol);
          worst = lr;
        }
      }
    }
  free(srow);
  prob_free(&P);
  return worst;
}

/* ---- correct kernels ---------------------------------------------------------------------- */

#define N0 NAN
static const tcase correct_cases[] = {
  {"GQA, no mask, dv != dk, dense", ATTNCHECK_MASK_NONE, 2, 4, 2, 37, 150, 24, 40, N0, L_DENSE, V_NORMAL, 0},
  {"GQA, causal tq < tk, NaN in keys masked for all, BSHD", ATTNCHECK_MASK_CAUSAL, 2, 4, 2, 37, 150, 24, 40, N0, L_BSHD, V_MASKNAN, 0},
  {"GQA, bottom-right tq < tk, d-major", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 2, 4, 2, 37, 150, 24, 40, N0, L_DMAJOR, V_NORMAL, 0},
  {"bottom-right tq > tk: empty rows, BSHD", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 1, 2, 1, 150, 37, 16, 8, N0, L_BSHD, V_NORMAL, 0},
  {"causal tq > tk", ATTNCHECK_MASK_CAUSAL, 1, 2, 2, 150, 37, 16, 8, N0, L_DENSE, V_NORMAL, 0},
  {"causal square, NaN in V at the last key", ATTNCHECK_MASK_CAUSAL, 1, 2, 1, 90, 90, 8, 8, N0, L_BSHD, V_NANDIAG, 0},
  {"bottom-right, NaN in V at the last key", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 1, 1, 1, 50, 70, 8, 8, N0, L_DENSE, V_NANDIAG, 0},
  {"causal square, max in the last tiles", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 200, 200, 32, 32, N0, L_DENSE, V_LATE, 60.0},
  {"no mask, max in the last tiles", ATTNCHECK_MASK_NONE, 1, 1, 1, 20, 300, 32, 16, N0, L_BSHD, V_LATE, 60.0},
  {"large logits (|s| > 88)", ATTNCHECK_MASK_NONE, 1, 2, 1, 30, 130, 16, 16, 3.0, L_DENSE, V_LARGE, 3.0},
  {"logits near -1e5", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 20, 70, 4, 8, 30.0, L_DENSE, V_NEGATIVE, 0},
  {"scale 0", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 1, 2, 2, 30, 90, 8, 8, 0.0, L_DMAJOR, V_NORMAL, 0},
  {"negative scale", ATTNCHECK_MASK_NONE, 2, 2, 1, 30, 90, 8, 12, -0.7, L_DENSE, V_NORMAL, 0},
  {"1x1, d = 1", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 1, 1, 1, 1, N0, L_DENSE, V_NORMAL, 0},
  {"decode row, d = 3 and 5", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 3, 4, 1, 1, 300, 3, 5, N0, L_BSHD, V_NORMAL, 0},
  {"no keys", ATTNCHECK_MASK_NONE, 1, 1, 1, 4, 0, 8, 8, N0, L_DENSE, V_NORMAL, 0},
};
#define NCORRECT (sizeof correct_cases / sizeof correct_cases[0])

static const char *const correct_names[] = {"naive-f64", "naive-f32", "naive-nolse-f32", "flash-f32", "flash-exp2-f32", "splitkv-f32",
                                            "splitkv-fa-f32", "naive-scaleq-f32",
                                            "naive-f16", "flash-f16", "naive-bf16", "flash-bf16", "flash-e4m3",
                                            "flash-e5m2"};
#define NKERNELS (sizeof correct_names / sizeof correct_names[0])
/* The GEMM composites store their scores in the input dtype, and naive-scaleq-f16/-bf16 round
 * Q and K scaled in it, beyond this file's tolerance at large logits: the oracle judges them
 * (thull, tscaled, suite ci), the registration checks here; so are the serving-layout kernels
 * flash-varlen-f32/-bf16 (tcmd_layouts.sh, suite ci), asked about a varlen batch, and the
 * backward kernels, whose forward is naive-f32/-bf16's or flash-f32/-bf16's (their backward:
 * tharness_grad, tcli_grad.sh), and ggml-f16-style and q8q-f32-style, whose Q rounded to f16 or
 * q8 blocks and f16 sums are their classes' (tcmd_ggml_kernels.sh, bench/calibrate). */
static const char *const composite_names[] = {"cublas-style-f16",  "cublas-style-bf16", "naive-scaleq-f16",
                                              "naive-scaleq-bf16", "flash-varlen-f32",  "flash-varlen-bf16",
                                              "naive-bwd-f32",     "naive-bwd-bf16",    "flash-bwd-f32",
                                              "flash-bwd-bf16",    "ggml-f16-style",    "q8q-f32-style"};
#define NCOMPOSITE (sizeof composite_names / sizeof composite_names[0])
/* the reference kernels of the quantized formats (kernels/cpu_quant.c, cpu_quant_paths.c) */
static const char *const quant_names[] = {"ggml-ref-f32",      "fp8kv-ref-f32",        "intkv-ref-f32",     "fp4kv-ref-f32",
                                          "ggml-q8-ref-f32",   "fp8kv-fold-ref-f32",   "kv16-ref-f16",      "kv16-ref-bf16",
                                          "store-fp8-ref-f32", "store-minmax-ref-f32", "store-q8_0-ref-f32"};
#define NQUANT (sizeof quant_names / sizeof quant_names[0])

START_TEST(test_correct_kernels_match_reference)
{
  const attncheck_kernel *K = kernel_named(correct_names[_i]);
  ck_assert_msg(K != NULL, "kernel %s not registered", correct_names[_i]);
  int dt = -1;
  for (int d = 0; d < AC_NDTYPES && dt < 0; d++) {
    attncheck_problem p = {.struct_size = sizeof p, .dtype = d, .batch = 1, .heads = 1, .kv_heads = 1,
                           .tq = 1, .tk = 1, .dk = 1, .dv = 1, .scale = 1.0};
    char why[256];
    if (K->supports(&p, why, sizeof why)) dt = d;
  }
  ck_assert_msg(dt >= 0, "%s supports no dtype", K->name);
  double worst = 0.0;
  for (size_t ci = 0; ci < NCORRECT; ci++) {
    const tcase *c = &correct_cases[ci];
    char where[512];
    double w = run_and_compare(K, c, dt, ac_test_seed() + ci, where, sizeof where);
    ck_assert_msg(w <= 1.0, AC_SEED_FMT "%s on %s: err/tol %g at %s", AC_SEED_ARG, K->name, c->what, w, where);
    worst = fmax(worst, w);
  }
  fprintf(stderr, "%-16s largest err/tol over %zu cases: %.3g\n", K->name, NCORRECT, worst);
}
END_TEST

/* Odd block and chunk sizes: many tiles, partial tails, tiles that straddle the diagonal. */
START_TEST(test_odd_block_sizes)
{
  static const char *const tiled[] = {"flash-f32", "flash-exp2-f32", "splitkv-f32", "splitkv-fa-f32", "flash-f16",
                                      "flash-bf16"};
  setenv("ATTNCHECK_FLASH_BR", "5", 1);
  setenv("ATTNCHECK_FLASH_BC", "7", 1);
  setenv("ATTNCHECK_SPLITKV_CHUNK", "9", 1);
  for (size_t ki = 0; ki < sizeof tiled / sizeof tiled[0]; ki++) {
    const attncheck_kernel *K = kernel_named(tiled[ki]);
    ck_assert_ptr_nonnull(K);
    int dt = strstr(K->name, "bf16") ? ATTNCHECK_BF16 : strstr(K->name, "f16") ? ATTNCHECK_F16 : ATTNCHECK_F32;
    for (size_t ci = 0; ci < 9; ci++) {
      char where[512];
      double w = run_and_compare(K, &correct_cases[ci], dt, ac_test_seed() + 100 + ci, where, sizeof where);
      ck_assert_msg(w <= 1.0, AC_SEED_FMT "%s (blocks 5x7, chunk 9) on %s: err/tol %g at %s", AC_SEED_ARG, K->name,
                    correct_cases[ci].what, w, where);
    }
  }
  setenv("ATTNCHECK_FLASH_BC", "0", 1);
  tprob P;
  char err[256] = "";
  prob_make(&P, &correct_cases[0], ATTNCHECK_F32, ac_test_seed());
  attncheck_tensors t = {P.q, P.k, P.v, P.o, NULL, NULL};
  ck_assert_int_ne(kernel_named("flash-f32")->run(&P.p, &t, err, sizeof err), 0);
  ck_assert_msg(strstr(err, "ATTNCHECK_FLASH_BC") != NULL, "message: %s", err);
  prob_free(&P);
  unsetenv("ATTNCHECK_FLASH_BR");
  unsetenv("ATTNCHECK_FLASH_BC");
  unsetenv("ATTNCHECK_SPLITKV_CHUNK");
}
END_TEST

/* A kernel without an LSE buffer still writes o, identical to the run with one. */
START_TEST(test_lse_optional)
{
  for (size_t ki = 0; ki < NKERNELS; ki++) {
    const attncheck_kernel *K = kernel_named(correct_names[ki]);
    int dt = ATTNCHECK_F32;
    for (int d = 0; d < AC_NDTYPES; d++) {
      attncheck_problem p = {.struct_size = sizeof p, .dtype = d, .batch = 1, .heads = 1, .kv_heads = 1,
                             .tq = 1, .tk = 1, .dk = 1, .dv = 1, .scale = 1.0};
      char why[256];
      if (K->supports(&p, why, sizeof why)) dt = d;
    }
    tprob P;
    char err[256];
    prob_make(&P, &correct_cases[3], dt, ac_test_seed());
    attncheck_tensors t = {P.q, P.k, P.v, P.o, P.lse, NULL};
    ck_assert_int_eq(K->run(&P.p, &t, err, sizeof err), 0);
    size_t bytes = P.no * ac_dtype_size((ac_dtype)dt);
    void *first = ac_xmalloc(bytes);
    memcpy(first, P.o, bytes);
    t.lse = NULL;
    ck_assert_int_eq(K->run(&P.p, &t, err, sizeof err), 0);
    ck_assert_msg(memcmp(first, P.o, bytes) == 0, "%s: o differs without an LSE buffer", K->name);
    free(first);
    prob_free(&P);
  }
}
END_TEST

START_TEST(test_supports_refuses_with_reason)
{
  size_t n;
  const attncheck_kernel *const *l = ac_builtin_kernels(&n);
  size_t ncpu = 0;
  for (size_t i = 0; i < n; i++) {
    const attncheck_kernel *K = l[i];
    if (K->memory != ATTNCHECK_MEM_HOST) continue;
    ncpu++;
    ck_assert_uint_eq(K->abi_version, ATTNCHECK_ABI_VERSION);
    ck_assert_uint_eq(K->struct_size, sizeof(attncheck_kernel));
    ck_assert_msg(K->precision != NULL, "%s declares no precision class", K->name);
    int nyes = 0;
    for (int d = 0; d < AC_NDTYPES; d++) {
      attncheck_problem p = {.struct_size = sizeof p, .dtype = d, .batch = 1, .heads = 4, .kv_heads = 2,
                             .tq = 3, .tk = 5, .dk = 2, .dv = 3, .scale = 1.0, .q_dtype = d, .k_dtype = d,
                             .v_dtype = d, .o_dtype = d, .window_left = -1, .window_right = -1};
      if (K->caps & ATTNCHECK_FEAT_LAYOUTS) p.features = ATTNCHECK_FEAT_VARLEN;
      char why[256] = "";
      if (K->supports(&p, why, sizeof why)) {
        nyes++;
        p.kv_heads = 3;
        ck_assert_int_eq(K->supports(&p, why, sizeof why), 0);
        ck_assert_msg(why[0] != 0, "%s: no reason for heads %% kv_heads", K->name);
        p.kv_heads = 2, p.scale = INFINITY;
        ck_assert_int_eq(K->supports(&p, why, sizeof why), 0);
      } else {
        ck_assert_msg(why[0] != 0, "%s refuses %s without a reason", K->name, ac_dtype_name((ac_dtype)d));
      }
    }
    ck_assert_msg(nyes == 1, "%s supports %d dtypes", K->name, nyes);
  }
  ck_assert_uint_eq(ncpu, NKERNELS + NCOMPOSITE + NQUANT);
  for (size_t i = 0; i < NCOMPOSITE; i++) ck_assert_ptr_nonnull(kernel_named(composite_names[i]));
  for (size_t i = 0; i < NQUANT; i++) ck_assert_ptr_nonnull(kernel_named(quant_names[i]));
}
END_TEST

/* ---- mutants ------------------------------------------------------------------------------ */

typedef struct {
  const char *name;
  int dt;
  tcase c;
} trigger;

static const trigger triggers[] = {
    {"mutant-no-max-sub",
     ATTNCHECK_F32,
     {"logits > 88", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 16, 8, 3.0, L_DENSE, V_LARGE, 3.0}},
    {"mutant-max-sentinel",
     ATTNCHECK_F32,
     {"logits near -1e5", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 4, 8, 30.0, L_DENSE, V_NEGATIVE, 0}},
    {"mutant-causal-off-by-one",
     ATTNCHECK_F32,
     {"causal square", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 20, 20, 8, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-causal-top-left",
     ATTNCHECK_F32,
     {"bottom-right tq < tk", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 1, 1, 1, 20, 50, 8, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-no-rescale-sum",
     ATTNCHECK_F32,
     {"max in the last tiles", ATTNCHECK_MASK_NONE, 1, 1, 1, 4, 200, 32, 8, N0, L_DENSE, V_LATE, 60.0}},
    {"mutant-no-rescale-acc",
     ATTNCHECK_F32,
     {"max in the last tiles", ATTNCHECK_MASK_NONE, 1, 1, 1, 4, 200, 32, 8, N0, L_DENSE, V_LATE, 60.0}},
    {"mutant-tail-unmasked",
     ATTNCHECK_F32,
     {"causal, one tile", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 20, 20, 8, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-scale-eighth",
     ATTNCHECK_F32,
     {"dk = 24", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 24, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-f16-acc-pv",
     ATTNCHECK_F16,
     {"flat scores, V ~ 100, T = 800", ATTNCHECK_MASK_NONE, 1, 1, 1, 2, 800, 8, 8, 0.0, L_DENSE, V_FLATBIG, 0}},
    {"mutant-f16-score-acc",
     ATTNCHECK_F16,
     {"|q.k| > 65504", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 8, 8, 0.001, L_DENSE, V_LARGE, 200.0}},
    {"mutant-bf16-rowsum",
     ATTNCHECK_BF16,
     {"flat scores, T = 1024", ATTNCHECK_MASK_NONE, 1, 1, 1, 2, 1024, 8, 8, 0.0, L_DENSE, V_NORMAL, 0}},
    {"mutant-empty-row-nan",
     ATTNCHECK_F32,
     {"bottom-right tq > tk", ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 1, 1, 1, 20, 5, 8, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-masked-nan-leak",
     ATTNCHECK_F32,
     {"NaN in V at the last key, causal", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 20, 20, 8, 8, N0, L_DENSE, V_NANDIAG, 0}},
    {"mutant-gqa-modulo",
     ATTNCHECK_F32,
     {"heads 4, kv_heads 2", ATTNCHECK_MASK_NONE, 1, 4, 2, 8, 40, 8, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-dv-as-dk",
     ATTNCHECK_F32,
     {"dk 8, dv 16", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 8, 16, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-head-batch-swap",
     ATTNCHECK_F32,
     {"batch 2, heads 2", ATTNCHECK_MASK_NONE, 2, 2, 2, 8, 40, 8, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-fast-exp",
     ATTNCHECK_F32,
     {"plain normal, dk 4", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 4, 8, N0, L_DENSE, V_NORMAL, 0}},
    {"mutant-cublas-sentinel",
     ATTNCHECK_F16,
     {"causal, masked scores 1e4 above", ATTNCHECK_MASK_CAUSAL, 1, 1, 1, 20, 20, 16, 8, N0, L_DENSE, V_LATE, 3000.0}},
    {"mutant-bf16-acc16-pv",
     ATTNCHECK_BF16,
     {"flat scores, V ~ 100, T = 800", ATTNCHECK_MASK_NONE, 1, 1, 1, 2, 800, 8, 8, 0.0, L_DENSE, V_FLATBIG, 0}},
    {"mutant-ggml-bf16-acc",
     ATTNCHECK_F16,
     {"flat scores, V ~ 100, T = 800", ATTNCHECK_MASK_NONE, 1, 1, 1, 2, 800, 8, 8, 0.0, L_DENSE, V_FLATBIG, 0}},
    {"mutant-q8q-as-q4",
     ATTNCHECK_F32,
     {"plain normal, dk 64", ATTNCHECK_MASK_NONE, 1, 1, 1, 8, 40, 64, 8, N0, L_DENSE, V_NORMAL, 0}},
};
#define NTRIGGERS (sizeof triggers / sizeof triggers[0])

START_TEST(test_every_mutant_has_a_trigger)
{
  size_t n;
  const attncheck_kernel *const *l = ac_mutant_kernels(&n);
  ck_assert_uint_ge(n, 10);
  for (size_t i = 0; i < n; i++) {
    if (l[i]->caps & ATTNCHECK_FEAT_ALL) continue;   /* a variant mutant: tvariants exposes it */
    /* two planted defects from the single mutants' hooks (each triggered here): tests/tfuzz_defects.sh */
    if (!strncmp(l[i]->name, "mutant2-", 8)) continue;
    size_t found = 0;
    for (size_t j = 0; j < NTRIGGERS; j++) found += strcmp(triggers[j].name, l[i]->name) == 0;
    ck_assert_msg(found == 1, "mutant %s has %zu trigger inputs here", l[i]->name, found);
    ck_assert_msg(kernel_named(l[i]->name) == l[i], "%s", l[i]->name);
    ck_assert_msg(strncmp(l[i]->name, "mutant-", 7) == 0, "%s", l[i]->name);
    size_t nb;
    const attncheck_kernel *const *b = ac_builtin_kernels(&nb);
    for (size_t j = 0; j < nb; j++) ck_assert_msg(b[j] != l[i], "mutant %s in the built-in list", l[i]->name);
  }
}
END_TEST

START_TEST(test_mutant_differs_on_its_trigger)
{
  const trigger *tr = &triggers[_i];
  const attncheck_kernel *K = kernel_named(tr->name);
  ck_assert_msg(K != NULL, "mutant %s not registered", tr->name);
  char where[512];
  /* the base without the defect agrees on the same input ... */
  const attncheck_kernel *base = tr->dt == ATTNCHECK_F32 ? &control_f32 : &control_any;
  double w = run_and_compare(base, &tr->c, tr->dt, ac_test_seed() + 1000 + (uint64_t)_i, where, sizeof where);
  ck_assert_msg(w <= 1.0, AC_SEED_FMT "unmutated base on the trigger of %s (%s): err/tol %g at %s", AC_SEED_ARG, tr->name,
                tr->c.what, w, where);
  /* ... and the mutant does not */
  w = run_and_compare(K, &tr->c, tr->dt, ac_test_seed() + 1000 + (uint64_t)_i, where, sizeof where);
  ck_assert_msg(w > 1.0, AC_SEED_FMT "%s agrees with the reference on %s (err/tol %g at %s)", AC_SEED_ARG, tr->name,
                tr->c.what, w, where);
  fprintf(stderr, "%-26s %-34s err/tol %-10.3g %s\n", tr->name, tr->c.what, w, where);
}
END_TEST

/* T = 1024, d = 128 timing of every correct kernel (informative; ATTNCHECK_TEST_EXPENSIVE=1). */
START_TEST(test_timing)
{
  if (!ac_test_expensive()) return;
  const tcase c = {"timing", ATTNCHECK_MASK_NONE, 1, 1, 1, 1024, 1024, 128, 128, N0, L_DENSE, V_NORMAL, 0};
  for (size_t ki = 0; ki < NKERNELS; ki++) {
    const attncheck_kernel *K = kernel_named(correct_names[ki]);
    int dt = 0;
    for (int d = 0; d < AC_NDTYPES; d++) {
      attncheck_problem p = {.struct_size = sizeof p, .dtype = d, .batch = 1, .heads = 1, .kv_heads = 1,
                             .tq = 1, .tk = 1, .dk = 1, .dv = 1, .scale = 1.0};
      char why[256];
      if (K->supports(&p, why, sizeof why)) dt = d;
    }
    tprob P;
    char err[256];
    prob_make(&P, &c, dt, ac_test_seed());
    attncheck_tensors t = {P.q, P.k, P.v, P.o, P.lse, NULL};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(K->run(&P.p, &t, err, sizeof err), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    fprintf(stderr, "%-16s T=1024 d=128 one head: %.3f s\n", K->name, (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
    prob_free(&P);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cpukernels");
  TCase *tc = tcase_create("correct");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_correct_kernels_match_reference, 0, NKERNELS);
  tcase_add_test(tc, test_odd_block_sizes);
  tcase_add_test(tc, test_lse_optional);
  tcase_add_test(tc, test_supports_refuses_with_reason);
  suite_add_tcase(s, tc);
  TCase *tm = tcase_create("mutants");
  tcase_set_timeout(tm, 120);
  tcase_add_test(tm, test_every_mutant_has_a_trigger);
  tcase_add_loop_test(tm, test_mutant_differs_on_its_trigger, 0, NTRIGGERS);
  suite_add_tcase(s, tm);
  TCase *tt = tcase_create("timing");
  tcase_set_timeout(tt, 600);
  tcase_add_test(tt, test_timing);
  suite_add_tcase(s, tt);
  return ac_test_run(s);
}
