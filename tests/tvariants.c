/* tvariants.c: the ABI 2 variants (sliding window, softcap, ALiBi, bias, boolean mask, sinks,
 * mixed dtypes, descales) of the built-in CPU kernels against a long-double reference written
 * from the formula in attncheck_kernel.h, with a tolerance a correct binary32 (or f16/bf16
 * FlashAttention-2 style) kernel meets; every variant mutant exceeds that tolerance on at
 * least one of the same cases. Kernels are called directly through the ABI. */
#include "config.h"
#include "testutil.h"
#include "harness.h"
#include "cpu_common.h"
#include "dtype.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

enum { BI_NORMAL, BI_NEGINF_BLOCKS, BI_NEGINF_ROWS, BI_SENT_1E9, BI_SENT_65504 };
enum { BD_KERNEL, BD_F32, BD_F16 };                    /* bias dtype */
enum { BB_FULL, BB_BATCH, BB_HEADS };                  /* bias broadcast over batch / heads */
enum { BM_RANDOM, BM_EMPTY_ROWS, BM_TILES };
enum { SK_NORMAL, SK_DOMINANT, SK_VANISH };

#define W ATTNCHECK_FEAT_WINDOW
#define SC ATTNCHECK_FEAT_SOFTCAP
#define AL ATTNCHECK_FEAT_ALIBI
#define BI ATTNCHECK_FEAT_BIAS
#define BM ATTNCHECK_FEAT_BOOL_MASK
#define SK ATTNCHECK_FEAT_SINKS
#define MX ATTNCHECK_FEAT_MIXED_DTYPES
#define DS ATTNCHECK_FEAT_DESCALE
#define BR_ ATTNCHECK_ALIGN_BOTTOM_RIGHT
#define TL_ ATTNCHECK_ALIGN_TOP_LEFT
#define NONE_ ATTNCHECK_MASK_NONE
#define CAUSAL_ ATTNCHECK_MASK_CAUSAL
#define CBR_ ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT

typedef struct {
  const char *what;
  uint32_t feat;
  int mask;
  int64_t B, H, KV, tq, tk, dk, dv;
  double qmag;              /* Q values times this (1 when 0) */
  int align;
  int64_t wl, wr;
  double softcap;
  int alibi_pb;
  int bias_kind, bias_dt, bias_bcast;
  int bmask_kind;
  int sink_kind;
  int kv_dt;                /* with MIXED: the dtype of K and V */
} vcase;

#define SHAPE(B_, H_, KV_, TQ, TK, DK, DV) .B = B_, .H = H_, .KV = KV_, .tq = TQ, .tk = TK, .dk = DK, .dv = DV
/* The flash kernels run with Br = 8, Bc = 16 (and 3 x 5): windows 0, 1, Bc - 1, Bc, > T. */
static const vcase cases[] = {
  {"window (0, 0), bottom-right, tq < tk", W, NONE_, SHAPE(1, 2, 1, 37, 70, 16, 8), .align = BR_, .wl = 0, .wr = 0},
  {"window (1, 0), square", W, NONE_, SHAPE(1, 2, 2, 70, 70, 16, 8), .align = BR_, .wl = 1, .wr = 0},
  {"window left Bc-1, causal bottom-right", W, CBR_, SHAPE(2, 2, 1, 45, 70, 16, 8), .align = BR_, .wl = 15, .wr = -1},
  {"window (Bc, 3), top-left, tq > tk", W, NONE_, SHAPE(1, 2, 1, 70, 45, 16, 8), .align = TL_, .wl = 16, .wr = 3},
  {"window (0, 0), top-left, tq > tk: empty rows", W, NONE_, SHAPE(1, 1, 1, 70, 40, 8, 8), .align = TL_, .wl = 0, .wr = 0},
  {"window > T both sides, top-left", W, CAUSAL_, SHAPE(1, 2, 2, 30, 70, 16, 8), .align = TL_, .wl = 100, .wr = 100},
  {"window right 1 only", W, NONE_, SHAPE(1, 1, 1, 33, 50, 8, 16), .align = BR_, .wl = -1, .wr = 1},
  {"softcap 30", SC, NONE_, SHAPE(1, 2, 1, 20, 70, 16, 8), .softcap = 30.0},
  {"softcap 5, huge raw scores", SC, CAUSAL_, SHAPE(1, 2, 1, 40, 70, 16, 8), .qmag = 100.0, .softcap = 5.0},
  {"ALiBi per head, tq < tk", AL, CBR_, SHAPE(1, 4, 2, 5, 70, 16, 8)},
  {"ALiBi per batch x head", AL, NONE_, SHAPE(2, 4, 2, 37, 70, 16, 8), .alibi_pb = 1},
  {"ALiBi square", AL, CAUSAL_, SHAPE(1, 2, 1, 50, 50, 16, 8)},
  {"bias", BI, NONE_, SHAPE(2, 2, 1, 30, 70, 16, 8), .bias_kind = BI_NORMAL},
  {"bias -inf blocks, broadcast over batch", BI, CBR_, SHAPE(2, 2, 2, 40, 70, 16, 8), .bias_kind = BI_NEGINF_BLOCKS,
   .bias_bcast = BB_BATCH},
  {"bias whole -inf rows, broadcast over heads", BI, NONE_, SHAPE(1, 4, 2, 40, 50, 16, 8), .bias_kind = BI_NEGINF_ROWS,
   .bias_bcast = BB_HEADS},
  {"bias -1e9 sentinel (f32)", BI, NONE_, SHAPE(1, 2, 1, 30, 70, 16, 8), .bias_kind = BI_SENT_1E9, .bias_dt = BD_F32},
  {"bias -65504 sentinel (f16)", BI, CAUSAL_, SHAPE(1, 2, 1, 40, 40, 16, 8), .bias_kind = BI_SENT_65504,
   .bias_dt = BD_F16},
  {"boolean mask random", BM, NONE_, SHAPE(2, 2, 1, 37, 70, 16, 8), .bmask_kind = BM_RANDOM},
  {"boolean mask emptying middle rows", BM, CAUSAL_, SHAPE(1, 2, 1, 45, 45, 16, 8), .bmask_kind = BM_EMPTY_ROWS},
  {"boolean mask hiding whole tiles", BM, NONE_, SHAPE(1, 2, 2, 40, 70, 16, 8), .bmask_kind = BM_TILES},
  {"sinks", SK, NONE_, SHAPE(1, 4, 2, 30, 70, 16, 8), .sink_kind = SK_NORMAL},
  {"sinks dominant (+30)", SK, CAUSAL_, SHAPE(1, 2, 1, 30, 50, 16, 8), .sink_kind = SK_DOMINANT},
  {"sinks vanishing (-80)", SK, NONE_, SHAPE(1, 2, 1, 30, 50, 16, 8), .sink_kind = SK_VANISH},
  {"sinks with empty rows (mask, window)", SK | BM | W, CBR_, SHAPE(1, 2, 1, 60, 40, 16, 8), .align = BR_, .wl = 20,
   .wr = 0, .bmask_kind = BM_EMPTY_ROWS, .sink_kind = SK_NORMAL},
  {"descales", DS, NONE_, SHAPE(2, 2, 2, 30, 70, 16, 8)},
  {"descales, GQA", DS, CBR_, SHAPE(1, 4, 2, 30, 70, 16, 16)},
  {"mixed: f32 Q/O, f16 K/V", MX, CAUSAL_, SHAPE(1, 2, 1, 40, 70, 16, 8), .kv_dt = ATTNCHECK_F16},
  {"mixed: f32 Q/O, bf16 K/V, descales", MX | DS, NONE_, SHAPE(1, 2, 2, 30, 70, 16, 8), .kv_dt = ATTNCHECK_BF16},
  {"window, softcap, ALiBi", W | SC | AL, CBR_, SHAPE(1, 2, 1, 40, 70, 16, 8), .align = BR_, .wl = 16, .wr = 0,
   .softcap = 20.0},
  {"all features", W | SC | AL | BI | BM | SK | DS, NONE_, SHAPE(2, 4, 2, 37, 70, 16, 8), .align = TL_, .wl = 31,
   .wr = 40, .softcap = 15.0, .alibi_pb = 1, .bias_kind = BI_NEGINF_BLOCKS, .bmask_kind = BM_EMPTY_ROWS,
   .sink_kind = SK_NORMAL},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* ---- one problem: the kernel's buffers and the exact values ---------------------------- */

typedef struct {
  attncheck_problem p;
  attncheck_tensors t;
  void *q, *k, *v, *o, *bias;
  float *lse, *slopes, *sinks, *ds[3];
  uint8_t *bmask;
  double *q64, *k64, *v64, *bias64;   /* exact values, dense */
} vprob;

static int64_t dense(int64_t H, int64_t T, int64_t D, int64_t b, int64_t h, int64_t t, int64_t d)
{
  return ((b * H + h) * T + t) * D + d;
}

static void contiguous(int64_t H, int64_t T, int64_t D, int64_t s[4])
{
  s[3] = 1, s[2] = D, s[1] = T * D, s[0] = H * T * D;
}

/* A tensor of n elements of dtype dt from value(), rounded to dt; exact copy in x64. */
static void *tensor(int dt, size_t n, double *x64, double mag)
{
  void *x = ac_xcalloc(n + 1, ac_dtype_size((ac_dtype)dt));
  for (size_t i = 0; i < n; i++) {
    uint64_t bits = ac_encode_f64((ac_dtype)dt, mag * rng_normal());
    ac_store_bits((ac_dtype)dt, x, i, bits);
    x64[i] = ac_decode((ac_dtype)dt, bits);
  }
  return x;
}

static double bias_value(const vcase *c, int64_t i, int64_t j)
{
  const double r = 2.0 * rng_normal();
  switch (c->bias_kind) {
  case BI_NEGINF_BLOCKS: return (j / 7) % 3 == 1 && (i / 4) % 2 == 0 ? -INFINITY : r;
  case BI_NEGINF_ROWS: return i % 5 == 2 ? -INFINITY : r;
  case BI_SENT_1E9: return (i + j) % 3 == 0 ? -1e9 : r;
  case BI_SENT_65504: return (i + 2 * j) % 3 == 0 ? -65504.0 : r;
  default: return r;
  }
}

static uint8_t bmask_value(const vcase *c, int64_t i, int64_t j)
{
  switch (c->bmask_kind) {
  case BM_EMPTY_ROWS: return i % 4 == 1 ? 0 : rng_unif() < 0.7;
  case BM_TILES: return (j / 16) % 2 == 1 && (i / 8) % 2 == 0 ? 0 : rng_unif() < 0.8;
  default: return rng_unif() < 0.7;
  }
}

static void variant_tensors(vprob *P, const vcase *c, int dt)
{
  attncheck_problem *p = &P->p;
  if (c->feat & BI) {
    const int64_t eb = c->bias_bcast == BB_BATCH ? 1 : c->B, eh = c->bias_bcast == BB_HEADS ? 1 : c->H;
    p->bias_dtype = c->bias_dt == BD_F32 ? ATTNCHECK_F32 : c->bias_dt == BD_F16 ? ATTNCHECK_F16 : dt;
    contiguous(eh, c->tq, c->tk, p->bias_stride);
    if (eb == 1) p->bias_stride[0] = 0;
    if (eh == 1) p->bias_stride[1] = 0;
    const size_t n = (size_t)(eb * eh * c->tq * c->tk);
    P->bias = ac_xcalloc(n + 1, ac_dtype_size((ac_dtype)p->bias_dtype));
    P->bias64 = ac_xcalloc(n + 1, sizeof(double));
    for (size_t x = 0; x < n; x++) {
      const int64_t j = (int64_t)x % c->tk, i = (int64_t)x / c->tk % c->tq;
      uint64_t bits = ac_encode_f64((ac_dtype)p->bias_dtype, bias_value(c, i, j));
      ac_store_bits((ac_dtype)p->bias_dtype, P->bias, x, bits);
      P->bias64[x] = ac_decode((ac_dtype)p->bias_dtype, bits);
    }
  }
  if (c->feat & BM) {
    contiguous(c->H, c->tq, c->tk, p->bool_mask_stride);
    const size_t n = (size_t)(c->B * c->H * c->tq * c->tk);
    P->bmask = ac_xcalloc(n + 1, 1);
    for (size_t x = 0; x < n; x++) P->bmask[x] = bmask_value(c, (int64_t)x / c->tk % c->tq, (int64_t)x % c->tk);
  }
  P->slopes = ac_xcalloc((size_t)(c->B * c->H), sizeof(float));
  for (int64_t x = 0; x < c->B * c->H; x++)   /* 2^(-8(h+1)/H), times 1.5^b per batch */
    P->slopes[x] = (float)(exp2(-8.0 * (double)(x % c->H + 1) / (double)c->H) * (c->alibi_pb ? pow(1.5, (double)(x / c->H)) : 1));
  P->sinks = ac_xcalloc((size_t)c->H, sizeof(float));
  for (int64_t h = 0; h < c->H; h++)
    P->sinks[h] = (float)(c->sink_kind == SK_DOMINANT ? 30.0 + rng_normal() : c->sink_kind == SK_VANISH ? -80.0 : rng_normal());
  static const float dsv[] = {0.5f, 0.75f, 1.25f, 2.0f, 0.375f, 1.5f};
  for (int x = 0; x < 3; x++) {
    P->ds[x] = ac_xcalloc((size_t)(c->B * c->KV), sizeof(float));
    for (int64_t y = 0; y < c->B * c->KV; y++) P->ds[x][y] = dsv[(rng_next() >> 7) % 6];
  }
  attncheck_tensors *t = &P->t;
  t->bias = c->feat & BI ? P->bias : NULL;
  t->bool_mask = c->feat & BM ? P->bmask : NULL;
  t->alibi_slopes = c->feat & AL ? P->slopes : NULL;
  t->sinks = c->feat & SK ? P->sinks : NULL;
  t->descale_q = c->feat & DS ? P->ds[0] : NULL;
  t->descale_k = c->feat & DS ? P->ds[1] : NULL;
  t->descale_v = c->feat & DS ? P->ds[2] : NULL;
}

static void prob_make(vprob *P, const vcase *c, int dt, uint64_t seed)
{
  memset(P, 0, sizeof *P);
  rng_state = seed;
  attncheck_problem *p = &P->p;
  p->struct_size = sizeof *p;
  p->dtype = dt;
  p->mask = c->mask;
  p->batch = c->B, p->heads = c->H, p->kv_heads = c->KV;
  p->tq = c->tq, p->tk = c->tk, p->dk = c->dk, p->dv = c->dv;
  p->scale = 1.0 / sqrt((double)c->dk);
  contiguous(c->H, c->tq, c->dk, p->q_stride);
  contiguous(c->KV, c->tk, c->dk, p->k_stride);
  contiguous(c->KV, c->tk, c->dv, p->v_stride);
  contiguous(c->H, c->tq, c->dv, p->o_stride);
  p->features = c->feat;
  p->q_dtype = p->o_dtype = dt;
  p->k_dtype = p->v_dtype = c->feat & MX ? c->kv_dt : dt;
  p->window_align = c->align;
  p->window_left = c->feat & W ? c->wl : -1;
  p->window_right = c->feat & W ? c->wr : -1;
  p->softcap = c->feat & SC ? c->softcap : 0.0;
  p->alibi_per_batch = c->alibi_pb;
  p->bias_dtype = dt;
  const size_t nq = (size_t)(c->B * c->H * c->tq * c->dk), nk = (size_t)(c->B * c->KV * c->tk * c->dk);
  const size_t nv = (size_t)(c->B * c->KV * c->tk * c->dv), no = (size_t)(c->B * c->H * c->tq * c->dv);
  P->q64 = ac_xcalloc(nq + 1, sizeof(double)), P->k64 = ac_xcalloc(nk + 1, sizeof(double));
  P->v64 = ac_xcalloc(nv + 1, sizeof(double));
  P->q = tensor(dt, nq, P->q64, c->qmag > 0 ? c->qmag : 1.0);
  P->k = tensor(p->k_dtype, nk, P->k64, 1.0);
  P->v = tensor(p->v_dtype, nv, P->v64, 1.0);
  P->o = ac_xmalloc((no + 1) * ac_dtype_size((ac_dtype)dt));
  for (size_t x = 0; x < no; x++) ac_store_bits((ac_dtype)dt, P->o, x, ac_encode_f64((ac_dtype)dt, NAN));
  const size_t rows = (size_t)(c->B * c->H * c->tq);
  P->lse = ac_xmalloc((rows + 1) * sizeof(float));
  for (size_t x = 0; x < rows; x++) P->lse[x] = NAN;
  P->t.q = P->q, P->t.k = P->k, P->t.v = P->v, P->t.o = P->o, P->t.lse = P->lse;
  variant_tensors(P, c, dt);
}

static void prob_free(vprob *P)
{
  free(P->q), free(P->k), free(P->v), free(P->o), free(P->bias), free(P->lse), free(P->slopes), free(P->sinks);
  free(P->bmask), free(P->q64), free(P->k64), free(P->v64), free(P->bias64);
  for (int x = 0; x < 3; x++) free(P->ds[x]);
}

/* ---- the reference: attncheck_kernel.h's formula in long double --------------------------- */

/* Key j visible to row i of (b, h): the mask, the window and the boolean mask. */
static int ref_visible(const vprob *P, int64_t b, int64_t h, int64_t i, int64_t j)
{
  const attncheck_problem *p = &P->p;
  if (p->mask == CAUSAL_ && j > i) return 0;
  if (p->mask == CBR_ && j > i + p->tk - p->tq) return 0;
  if (p->features & W) {
    const int64_t off = p->window_align == TL_ ? 0 : p->tk - p->tq;
    if (p->window_left >= 0 && j < i + off - p->window_left) return 0;
    if (p->window_right >= 0 && j > i + off + p->window_right) return 0;
  }
  return !(p->features & BM) || P->bmask[ac_cpu_off(p->bool_mask_stride, b, h, i, j)];
}

/* The score s_ij (steps 1-4) and dsj, a bound on a binary32 kernel's error in it. */
static long double ref_score(const vprob *P, int64_t b, int64_t h, int64_t i, int64_t j, double *dsj)
{
  const attncheck_problem *p = &P->p;
  const int64_t kvh = h / (p->heads / p->kv_heads), kv = b * p->kv_heads + kvh;
  const double u = 0x1p-24;
  long double d = 0, dabs = 0;
  for (int64_t e = 0; e < p->dk; e++) {
    long double x = (long double)P->q64[dense(p->heads, p->tq, p->dk, b, h, i, e)] *
                    P->k64[dense(p->kv_heads, p->tk, p->dk, b, kvh, j, e)];
    d += x, dabs += fabsl(x);
  }
  long double f = p->scale;
  if (p->features & DS) f *= (long double)P->ds[0][kv] * P->ds[1][kv];
  long double s = f * d, slope = 1, err = (double)(p->dk + 4) * u * fabsl(f) * dabs;
  double terms = fabs((double)s);
  if (p->features & SC) {
    const long double th = tanhl(s / p->softcap);
    err *= 1 - th * th;
    s = p->softcap * th;
    terms += p->softcap;
  }
  if (p->features & AL) {
    slope = P->slopes[p->alibi_per_batch ? b * p->heads + h : h];
    const long double a = slope * (long double)llabs(i + p->tk - p->tq - j);
    s -= a;
    terms += (double)a;
  }
  if (p->features & BI) {
    const double bv = P->bias64[ac_cpu_off(p->bias_stride, b, h, i, j)];
    s += bv;
    terms += fabs(bv);
  }
  *dsj = (double)err + 8.0 * u * (terms + fabs((double)s)) + 16.0 * u;
  return s;
}

/* ---- comparison ------------------------------------------------------------------------- */

/* Worst err/tol of the kernel's row (b, h, i) (o, and lse unless lse_ok is 0); inf for NaN, a
 * non-zero empty row or a wrong empty-row LSE. */
static double check_row(const vprob *P, int dt, int lse_ok, int64_t b, int64_t h, int64_t i, char *where, size_t wn)
{
  const attncheck_problem *p = &P->p;
  const int64_t kvh = h / (p->heads / p->kv_heads), kv = b * p->kv_heads + kvh, row = (b * p->heads + h) * p->tq + i;
  long double *s = ac_xcalloc((size_t)p->tk + 1, sizeof(long double));
  double *ds = ac_xcalloc((size_t)p->tk + 1, sizeof(double));
  long double mx = -INFINITY;
  for (int64_t j = 0; j < p->tk; j++) {
    s[j] = ref_visible(P, b, h, i, j) ? ref_score(P, b, h, i, j, &ds[j]) : -INFINITY;
    if (s[j] > mx) mx = s[j];
  }
  const int sink = (p->features & SK) != 0;
  const long double sg = sink ? P->sinks[h] : -INFINITY, dv = p->features & DS ? P->ds[2][kv] : 1.0f;
  if (sg > mx) mx = sg;
  long double den = 0, err = 0;
  double vmax = 0;
  int64_t n = 0;
  for (int64_t j = 0; j < p->tk; j++)
    if (s[j] > -INFINITY) den += expl(s[j] - mx), n++;
  if (sink) den += expl(sg - mx);
  double worst = 0;
  const int low = dt == ATTNCHECK_F16 || dt == ATTNCHECK_BF16;
  const double u = 0x1p-24, ulow = dt == ATTNCHECK_F16 ? 0x1p-11 : dt == ATTNCHECK_BF16 ? 0x1p-8 : 0.0;
  for (int64_t j = 0; j < p->tk; j++)
    if (s[j] > -INFINITY) {
      err += expl(s[j] - mx) / den * expm1l(fminl(ds[j], 60));
      for (int64_t e = 0; e < p->dv; e++) vmax = fmax(vmax, fabs(P->v64[dense(p->kv_heads, p->tk, p->dv, b, kvh, j, e)] * (double)dv));
    }
  const double sumerr = 4.0 * u * (double)(n + 16);
  for (int64_t e = 0; e < p->dv; e++) {
    long double num = 0;
    for (int64_t j = 0; j < p->tk; j++)
      if (s[j] > -INFINITY) num += expl(s[j] - mx) * P->v64[dense(p->kv_heads, p->tk, p->dv, b, kvh, j, e)];
    const double ref = den > 0 && n > 0 ? (double)(num / den * dv) : 0.0;
    const double ov = ac_load((ac_dtype)dt, P->o, (size_t)ac_cpu_off(p->o_stride, b, h, i, e));
    const double tol = vmax * (2.0 * (double)err + 2.0 * sumerr + 2.0 * ulow) + (low ? ac_ulp((ac_dtype)dt, ref) : 0) + 0x1p-120;
    const double r = n == 0 ? (ov == 0.0 ? 0.0 : INFINITY) : isnan(ov) ? INFINITY : fabs(ov - ref) / tol;
    if (r > worst) {
      snprintf(where, wn, "o row %lld (i %lld) e %lld: %a, reference %a, tolerance %a", (long long)row, (long long)i,
               (long long)e, ov, ref, tol);
      worst = r;
    }
  }
  if (lse_ok) {
    const double lse = P->lse[row], ref = n == 0 ? (sink ? (double)P->sinks[h] : -INFINITY) : (double)(mx + logl(den));
    const double tol = 2.0 * (double)err + 2.0 * sumerr + 8.0 * u * (fabs(ref) + 1.0);
    const double r = n == 0 ? (lse == ref ? 0.0 : INFINITY) : isnan(lse) ? INFINITY : fabs(lse - ref) / tol;
    if (r > worst) {
      snprintf(where, wn, "lse row %lld (i %lld): %a, reference %a, tolerance %a", (long long)row, (long long)i, lse,
               ref, tol);
      worst = r;
    }
  }
  free(s), free(ds);
  return worst;
}

/* Runs K on case c in dtype dt; the worst err/tol over every row. */
static double run_case(const attncheck_kernel *K, const vcase *c, int dt, uint64_t seed, char *where, size_t wn)
{
  vprob P;
  char msg[256] = "";
  prob_make(&P, c, dt, seed);
  const int nolse = (K->caps & ATTNCHECK_CAP_NO_LSE) != 0;
  if (nolse) P.t.lse = NULL;
  ck_assert_msg(K->supports(&P.p, msg, sizeof msg) == 1, AC_SEED_FMT "%s refuses %s: %s", AC_SEED_ARG, K->name, c->what, msg);
  ck_assert_msg(K->run(&P.p, &P.t, msg, sizeof msg) == 0, AC_SEED_FMT "%s failed on %s: %s", AC_SEED_ARG, K->name, c->what, msg);
  double worst = 0;
  snprintf(where, wn, "nowhere");
  char w[512];
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->H; h++)
      for (int64_t i = 0; i < c->tq; i++) {
        const double r = check_row(&P, dt, !nolse, b, h, i, w, sizeof w);
        if (r > worst) worst = r, snprintf(where, wn, "%s", w);
      }
  prob_free(&P);
  return worst;
}

static const vcase *case_named(const char *what)
{
  for (size_t i = 0; i < NCASES; i++)
    if (strcmp(cases[i].what, what) == 0) return &cases[i];
  ck_abort_msg("no case %s", what);
  return NULL;
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

static int kernel_dtype(const attncheck_kernel *K)
{
  return strstr(K->name, "bf16") ? ATTNCHECK_BF16 : strstr(K->name, "f16") ? ATTNCHECK_F16 : ATTNCHECK_F32;
}

static void set_blocks(const char *br, const char *bc)
{
  setenv("ATTNCHECK_FLASH_BR", br, 1);
  setenv("ATTNCHECK_FLASH_BC", bc, 1);
}

/* ---- tests ------------------------------------------------------------------------------- */

static const char *const correct_names[] = {"naive-f32", "flash-f32", "naive-nolse-f32", "naive-f16", "flash-f16",
                                            "naive-bf16", "flash-bf16"};
#define NCORRECT (sizeof correct_names / sizeof correct_names[0])

START_TEST(test_correct_kernel_meets_reference)
{
  const attncheck_kernel *K = kernel_named(correct_names[_i]);
  ck_assert_msg(K != NULL, "kernel %s not found", correct_names[_i]);
  const int dt = kernel_dtype(K);
  static const char *const blocks[][2] = {{"8", "16"}, {"3", "5"}, {"64", "64"}};
  double worst = 0;
  size_t ran = 0;
  for (size_t bl = 0; bl < 3; bl++) {
    set_blocks(blocks[bl][0], blocks[bl][1]);
    for (size_t ci = 0; ci < NCASES; ci++) {
      if (cases[ci].feat & ~K->caps) continue;
      char where[512];
      const double w = run_case(K, &cases[ci], dt, ac_test_seed() + ci, where, sizeof where);
      ck_assert_msg(w <= 1.0, AC_SEED_FMT "%s (Br %s, Bc %s) on %s: err/tol %g at %s", AC_SEED_ARG, K->name,
                    blocks[bl][0], blocks[bl][1], cases[ci].what, w, where);
      worst = fmax(worst, w), ran++;
    }
  }
  ck_assert_uint_ge(ran, 3 * (NCASES - 2));
  fprintf(stderr, "%-16s largest err/tol over %zu runs: %.3g\n", K->name, ran, worst);
}
END_TEST

/* Every variant mutant (a mutant with ABI 2 caps, not a layout one) exceeds the tolerance on one of the cases. */
START_TEST(test_variant_mutants_exposed)
{
  size_t n, nvx = 0;
  const attncheck_kernel *const *l = ac_mutant_kernels(&n);
  set_blocks("8", "16");
  for (size_t m = 0; m < n; m++) {
    const attncheck_kernel *K = l[m];
    /* the serving-layout mutants: tests/tcmd_layouts.sh; the backward mutants: tests/tharness_grad;
     * the split-KV ones (sinks only): tests/tserving.sh; the dropout ones: tests/tcmd_dropout.sh; the
     * quantized ones: tests/tquant_mutants.sh */
    if (!(K->caps & ATTNCHECK_FEAT_ALL) ||
        (K->caps & (ATTNCHECK_FEAT_LAYOUTS | ATTNCHECK_CAP_BACKWARD | ATTNCHECK_FEAT_DROPOUT | ATTNCHECK_FEAT_QUANT_STORE |
                    ATTNCHECK_FEAT_QUANT_LAYOUT)))
      continue;
    if (!strncmp(K->name, "mutant-splitkv-", 15)) continue;
    nvx++;
    ck_assert_uint_eq(K->caps & ATTNCHECK_FEAT_ALL, ATTNCHECK_FEAT_ALL);
    double worst = 0;
    char where[512], best[512] = "";
    const char *what = "";
    for (size_t ci = 0; ci < NCASES; ci++) {
      const double w = run_case(K, &cases[ci], ATTNCHECK_F32, ac_test_seed() + ci, where, sizeof where);
      if (w > worst) worst = w, snprintf(best, sizeof best, "%s", where), what = cases[ci].what;
    }
    ck_assert_msg(worst > 1.0, AC_SEED_FMT "%s agrees with the reference on every case (largest err/tol %g)",
                  AC_SEED_ARG, K->name, worst);
    fprintf(stderr, "%-30s exposed on %-40s err/tol %-9.3g %s\n", K->name, what, worst, best);
  }
  ck_assert_uint_ge(nvx, 8);
}
END_TEST

/* A kernel without LSE never touches an LSE buffer, and gives the o of its LSE twin. */
START_TEST(test_nolse_kernel)
{
  const attncheck_kernel *K = kernel_named("naive-nolse-f32"), *twin = kernel_named("naive-f32");
  ck_assert_uint_eq(K->caps & ATTNCHECK_CAP_NO_LSE, ATTNCHECK_CAP_NO_LSE);
  ck_assert_uint_eq(twin->caps & ATTNCHECK_CAP_NO_LSE, 0);
  const vcase *c = &cases[0];
  vprob P, Q;
  char err[256];
  prob_make(&P, c, ATTNCHECK_F32, ac_test_seed());
  prob_make(&Q, c, ATTNCHECK_F32, ac_test_seed());
  ck_assert_int_eq(K->run(&P.p, &P.t, err, sizeof err), 0);
  ck_assert_int_eq(twin->run(&Q.p, &Q.t, err, sizeof err), 0);
  for (int64_t r = 0; r < c->B * c->H * c->tq; r++) ck_assert_msg(isnan(P.lse[r]), "lse[%lld] written", (long long)r);
  ck_assert(memcmp(P.o, Q.o, (size_t)(c->B * c->H * c->tq * c->dv) * sizeof(float)) == 0);
  prob_free(&P), prob_free(&Q);
}
END_TEST

/* supports() refuses features outside the caps and tensor dtypes the kernel cannot read. */
START_TEST(test_supports_follows_caps)
{
  vprob P;
  char why[256];
  prob_make(&P, case_named("mixed: f32 Q/O, f16 K/V"), ATTNCHECK_F32, ac_test_seed());
  ck_assert_int_eq(kernel_named("flash-f32")->supports(&P.p, why, sizeof why), 1);
  P.p.q_dtype = ATTNCHECK_F16;
  why[0] = 0;
  ck_assert_int_eq(kernel_named("flash-f32")->supports(&P.p, why, sizeof why), 0);
  ck_assert_msg(why[0] != 0, "no reason");
  prob_free(&P);
  prob_make(&P, &cases[0], ATTNCHECK_F16, ac_test_seed());    /* window */
  ck_assert_int_eq(kernel_named("flash-f16")->supports(&P.p, why, sizeof why), 1);
  P.p.features |= MX;
  ck_assert_int_eq(kernel_named("flash-f16")->supports(&P.p, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "features") != NULL, "reason: %s", why);
  prob_free(&P);
  prob_make(&P, &cases[0], ATTNCHECK_F32, ac_test_seed());
  ck_assert_int_eq(kernel_named("naive-scaleq-f32")->supports(&P.p, why, sizeof why), 0);
  ck_assert_int_eq(kernel_named("splitkv-f32")->supports(&P.p, why, sizeof why), 0);
  P.p.window_left = -2;
  ck_assert_int_eq(kernel_named("naive-f32")->supports(&P.p, why, sizeof why), 0);
  P.p.window_left = 0;
  P.t.bool_mask = NULL, P.p.features |= BM;   /* a feature whose tensor is missing: an error, not a crash */
  ck_assert_int_ne(kernel_named("flash-f32")->run(&P.p, &P.t, why, sizeof why), 0);
  ck_assert_msg(strstr(why, "bool_mask") != NULL, "message: %s", why);
  prob_free(&P);
}
END_TEST


/* A NaN in key 0 reaches the output of every row that sees key 0, under ALiBi, a window and a
 * softcap: a row whose first key tile holds only that key (causal row 0) must not drop it as a tile
 * of -inf scores (the flash kernels' skip of fully masked tiles). */
START_TEST(test_nan_key_reaches_every_row_that_sees_it)
{
  static const char *const what[] = {"ALiBi square", "window (1, 0), square", "softcap 5, huge raw scores"};
  set_blocks("8", "16");
  const attncheck_kernel *K = kernel_named(correct_names[_i]);
  const int dt = kernel_dtype(K);
  size_t rows = 0;
  for (size_t w = 0; w < sizeof what / sizeof what[0]; w++) {
    const vcase *c = case_named(what[w]);
    if (c->feat & ~K->caps) continue;
    vprob P;
    char msg[256] = "";
    prob_make(&P, c, dt, ac_test_seed() + w);
    ac_store_bits((ac_dtype)P.p.k_dtype, P.k, 0, ac_encode_f64((ac_dtype)P.p.k_dtype, NAN));   /* (b 0, kv head 0, key 0, d 0) */
    ck_assert_msg(K->run(&P.p, &P.t, msg, sizeof msg) == 0, "%s on %s: %s", K->name, c->what, msg);
    for (int64_t h = 0; h < c->H; h++) {
      if (h / (c->H / c->KV) != 0) continue;
      for (int64_t i = 0; i < c->tq; i++) {
        if (!ref_visible(&P, 0, h, i, 0)) continue;
        for (int64_t e = 0; e < c->dv; e++) {
          const double o = ac_load((ac_dtype)dt, P.o, (size_t)((h * c->tq + i) * c->dv + e));
          ck_assert_msg(isnan(o), AC_SEED_FMT "%s on %s: row (h %lld, i %lld) sees the NaN key but o[%lld] = %g",
                        AC_SEED_ARG, K->name, c->what, (long long)h, (long long)i, (long long)e, o);
        }
        rows++;
      }
    }
    prob_free(&P);
  }
  ck_assert_msg(rows > 0, "%s: no row checked", K->name);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("variants");
  TCase *tc = tcase_create("correct");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_correct_kernel_meets_reference, 0, NCORRECT);
  tcase_add_test(tc, test_nolse_kernel);
  tcase_add_test(tc, test_supports_follows_caps);
  tcase_add_loop_test(tc, test_nan_key_reaches_every_row_that_sees_it, 0, NCORRECT);
  suite_add_tcase(s, tc);
  TCase *tm = tcase_create("mutants");
  tcase_set_timeout(tm, 120);
  tcase_add_test(tm, test_variant_mutants_exposed);
  suite_add_tcase(s, tm);
  return ac_test_run(s);
}
