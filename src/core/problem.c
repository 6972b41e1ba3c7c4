/* problem.c: problem descriptor validation, masks, strided layouts and guarded tensors. */
#include "config.h"
#include "problem.h"
#include "variants.h"
#include "quant.h"
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *ac_mask_name(ac_mask m)
{
  switch (m) {
  case AC_MASK_NONE: return "none";
  case AC_MASK_CAUSAL: return "causal";
  case AC_MASK_CAUSAL_BR: return "causal-bottom-right";
  default: return "?";
  }
}

int ac_mask_parse(const char *s, ac_mask *out)
{
  static const struct { const char *name; ac_mask m; } names[] = {
    {"none", AC_MASK_NONE}, {"causal", AC_MASK_CAUSAL}, {"causal-bottom-right", AC_MASK_CAUSAL_BR},
    {"causal-br", AC_MASK_CAUSAL_BR}, {"bottom-right", AC_MASK_CAUSAL_BR},
  };
  if (!s) return -1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(s, names[i].name) == 0) {
      *out = names[i].m;
      return 0;
    }
  return -1;
}

int ac_alibi_lse_parse(const char *s, int *out)
{
  if (s && !strcmp(s, "abi")) *out = AC_ALIBI_LSE_ABI;
  else if (s && !strcmp(s, "fa2")) *out = AC_ALIBI_LSE_FA2;
  else return -1;
  return 0;
}

int64_t ac_visible_count(const ac_problem *p, int64_t i)
{
  int64_t n;
  switch (p->mask) {
  case AC_MASK_CAUSAL: n = i + 1; break;
  case AC_MASK_CAUSAL_BR: n = i + 1 + p->tk - p->tq; break;
  default: n = p->tk; break;
  }
  if (n < 0) n = 0;
  if (n > p->tk) n = p->tk;
  return n;
}

void ac_visible_range(const ac_problem *p, int64_t i, int64_t *lo, int64_t *hi)
{
  *lo = 0;
  *hi = ac_visible_count(p, i);
  if (p->f.used & AC_FEAT_WINDOW) {
    int64_t c = i + (p->f.win_top_left ? 0 : p->tk - p->tq);
    if (p->f.win_left >= 0 && p->f.win_left < c) *lo = c - p->f.win_left;   /* no overflow on huge windows */
    if (p->f.win_right >= 0 && p->f.win_right < *hi - 1 - c) *hi = c + p->f.win_right + 1;
  }
  if (*lo > p->tk) *lo = p->tk;
  if (*hi < *lo) *hi = *lo;
}

/* Product of n factors with overflow detection. */
static int prod(const int64_t *f, int n, int64_t *out)
{
  int64_t r = 1;
  for (int i = 0; i < n; i++)
    if (ac_mul_overflow_i64(r, f[i], &r)) return -1;
  *out = r;
  return 0;
}

int ac_problem_counts(const ac_problem *p, ac_counts *c, ac_err *e)
{
  const int64_t q[] = {p->batch, p->heads, p->tq, p->dk}, k[] = {p->batch, p->kv_heads, p->tk, p->dk};
  const int64_t v[] = {p->batch, p->kv_heads, p->tk, p->dv}, o[] = {p->batch, p->heads, p->tq, p->dv};
  const int64_t rows[] = {p->batch, p->heads, p->tq};
  if (prod(q, 4, &c->q) || prod(k, 4, &c->k) || prod(v, 4, &c->v) || prod(o, 4, &c->o) ||
      prod(rows, 3, &c->rows))
    return ac_err_set(e, "tensor element count overflows 64 bits");
  return 0;
}

static int all_zero(const int64_t s[4]) { return !s[0] && !s[1] && !s[2] && !s[3]; }

static void contiguous(int64_t B, int64_t H, int64_t T, int64_t D, int64_t s[4])
{
  (void)B;
  s[3] = 1;
  s[2] = D;   /* unsigned products: callers validate sizes, garbage must not be UB */
  s[1] = (int64_t)((uint64_t)T * (uint64_t)D);
  s[0] = (int64_t)((uint64_t)H * (uint64_t)T * (uint64_t)D);
}

void ac_problem_default_strides(ac_problem *p)
{
  if (all_zero(p->q_stride)) contiguous(p->batch, p->heads, p->tq, p->dk, p->q_stride);
  if (all_zero(p->k_stride)) contiguous(p->batch, p->kv_heads, p->tk, p->dk, p->k_stride);
  if (all_zero(p->v_stride)) contiguous(p->batch, p->kv_heads, p->tk, p->dv, p->v_stride);
  if (all_zero(p->o_stride)) contiguous(p->batch, p->heads, p->tq, p->dv, p->o_stride);
}

int64_t ac_strided_span(int64_t B, int64_t H, int64_t T, int64_t D, const int64_t stride[4])
{
  const int64_t dim[4] = {B, H, T, D};
  int64_t s[4], span = 1, t;
  if (all_zero(stride)) contiguous(B, H, T, D, s);
  else memcpy(s, stride, sizeof s);
  stride = s;
  for (int i = 0; i < 4; i++) {
    if (dim[i] < 1) return 0;
    if (dim[i] == 1) continue;
    if (stride[i] < 0 || ac_mul_overflow_i64(dim[i] - 1, stride[i], &t) || ac_add_overflow_i64(span, t, &span))
      return -1;
  }
  return span;
}

/* Checks one tensor's layout; span receives the elements it spans. */
static int check_layout(const char *name, const int64_t dim[4], const int64_t stride_in[4], int64_t *span,
                        ac_err *e)
{
  int64_t stride[4];
  if (all_zero(stride_in)) contiguous(dim[0], dim[1], dim[2], dim[3], stride);
  else memcpy(stride, stride_in, sizeof stride);
  int order[4], n = 0;
  for (int i = 0; i < 4; i++) {
    if (stride[i] < 0) return ac_err_set(e, "%s stride %d is negative (%lld)", name, i, (long long)stride[i]);
    if (dim[i] == 1) continue;
    if (stride[i] == 0) return ac_err_set(e, "%s stride %d is 0 for a dimension of size %lld", name, i, (long long)dim[i]);
    order[n++] = i;
  }
  /* Sort the dimensions by stride (insertion sort, ties by position: inner last). Each stride
   * must be at least the extent of the dimensions inside it, so that no two elements share
   * an address. */
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0; b--) {
      int x = order[b - 1], y = order[b];
      if (stride[x] > stride[y] || (stride[x] == stride[y] && x < y)) {
        order[b - 1] = y;
        order[b] = x;
      }
    }
  int64_t extent = 1, t;
  for (int a = 0; a < n; a++) {
    int i = order[a];
    if (stride[i] < extent)
      return ac_err_set(e, "%s strides overlap: stride %d (%lld) is smaller than the extent %lld of the inner dimensions",
                        name, i, (long long)stride[i], (long long)extent);
    if (ac_mul_overflow_i64(dim[i] - 1, stride[i], &t) || ac_add_overflow_i64(extent, t, &extent))
      return ac_err_set(e, "%s strided span overflows 64 bits", name);
  }
  *span = extent;
  return 0;
}

int ac_problem_validate(const ac_problem *p, uint64_t cap_bytes, ac_err *e)
{
  if (!ac_dtype_get(p->dtype)) return ac_err_set(e, "unknown dtype %d", (int)p->dtype);
  if ((int)p->mask < 0 || p->mask > AC_MASK_CAUSAL_BR) return ac_err_set(e, "unknown mask %d", (int)p->mask);
  const struct { const char *name; int64_t v; } dims[] = {
    {"batch", p->batch}, {"heads", p->heads}, {"kv_heads", p->kv_heads}, {"tq", p->tq},
    {"tk", p->tk}, {"dk", p->dk}, {"dv", p->dv},
  };
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    if (dims[i].v < 1) return ac_err_set(e, "%s must be >= 1 (got %lld)", dims[i].name, (long long)dims[i].v);
  if (p->heads % p->kv_heads != 0)
    return ac_err_set(e, "heads (%lld) is not a multiple of kv_heads (%lld)", (long long)p->heads, (long long)p->kv_heads);
  if (!p->scale_is_default && !isfinite(p->scale)) return ac_err_set(e, "scale must be finite (got %a)", p->scale);
  if (ac_features_validate(p, e) || ac_quant_validate_problem(p, e)) return -1;
  ac_counts c;
  if (ac_problem_counts(p, &c, e)) return -1;

  const int64_t qd[4] = {p->batch, p->heads, p->tq, p->dk}, kd[4] = {p->batch, p->kv_heads, p->tk, p->dk};
  const int64_t vd[4] = {p->batch, p->kv_heads, p->tk, p->dv}, od[4] = {p->batch, p->heads, p->tq, p->dv};
  int64_t span[4];
  if (check_layout("q", qd, p->q_stride, &span[0], e) || check_layout("k", kd, p->k_stride, &span[1], e) ||
      check_layout("v", vd, p->v_stride, &span[2], e) || check_layout("o", od, p->o_stride, &span[3], e))
    return -1;

  /* Memory: the dense tensors of the case plus the strided spans presented to a kernel. */
  const int64_t dense[4] = {c.q, c.k, c.v, c.o};
  const int64_t esz = (int64_t)ac_dtype_size(p->dtype);
  int64_t total = 0, t;
  for (int i = 0; i < 4; i++) {
    int64_t n = dense[i] > span[i] ? dense[i] : span[i];
    if (ac_mul_overflow_i64(n, esz, &t) || ac_add_overflow_i64(total, t, &total))
      return ac_err_set(e, "tensor sizes overflow 64 bits");
  }
  uint64_t vb = ac_features_bytes(p), qb = ac_quant_bytes(p);
  if (qb > (uint64_t)INT64_MAX || ac_add_overflow_i64(total, (int64_t)qb, &total)) return ac_err_set(e, "tensor sizes overflow 64 bits");
  if (vb > (uint64_t)INT64_MAX || ac_add_overflow_i64(total, (int64_t)vb, &total)) return ac_err_set(e, "tensor sizes overflow 64 bits");
  if ((uint64_t)total > cap_bytes)
    return ac_err_set(e, "tensors need %lld bytes, more than the memory cap of %llu bytes (ATTNCHECK_MEM_CAP)",
                      (long long)total, (unsigned long long)cap_bytes);
  return 0;
}

double ac_problem_scale(const ac_problem *p)
{
  if (!p->scale_is_default) return p->scale;
  if (p->dk < 1) return NAN;
  static _Thread_local int64_t cached_dk;   /* callers ask per element: remember the last one */
  static _Thread_local double cached;
  if (p->dk == cached_dk) return cached;
  /* Correctly rounded 1/sqrt(dk): 1.0 / sqrt(dk) would round twice. */
  mpfr_t x, y;
  mpfr_init2(x, 64);   /* dk exactly */
  mpfr_init2(y, 53);   /* rounded once, straight to binary64 */
  mpfr_set_si(x, (long)p->dk, MPFR_RNDN);
  mpfr_rec_sqrt(y, x, MPFR_RNDN);
  double r = mpfr_get_d(y, MPFR_RNDN);
  mpfr_clears(x, y, (mpfr_ptr)0);
  cached_dk = p->dk;
  cached = r;
  return r;
}

static uint64_t mem_cap;   /* 0: not yet decided */

int ac_scale_parse_hex(const char *s, double *out, ac_err *e)
{
  int shown = 0;   /* the message quotes at most 40 characters and stops before a control character */
  while (shown < 40 && s[shown] && (unsigned char)s[shown] >= 0x20) shown++;
  const char *t = s + (*s == '-' || *s == '+');
  int hex = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  char *end = NULL;
  double v = hex ? strtod(s, &end) : 0;
  if (!hex || *end || !isfinite(v))
    return ac_err_set(e, "scale '%.*s' is neither \"default\" nor a finite hex float", shown, s);
  /* Exact parse: each hex digit holds 4 bits, so 4 bits per character are enough. */
  mpfr_t x;
  mpfr_init2(x, (mpfr_prec_t)(4 * strlen(s) + 8));
  int inexact = mpfr_strtofr(x, s, &end, 16, MPFR_RNDN);
  int exact = !*end && !inexact && mpfr_cmp_d(x, v) == 0;
  mpfr_clear(x);
  if (!exact && v == 0)
    return ac_err_set(e, "scale '%.*s' underflows to 0 in binary64 (a stored scale is never rounded)", shown, s);
  if (!exact)
    return ac_err_set(e, "scale '%.*s' has more significant bits than binary64 holds (it would round to %a; "
                      "a stored scale is never rounded)", shown, s, v);
  *out = v;
  return 0;
}

uint64_t ac_mem_cap(void)
{
  if (mem_cap == 0) {
    uint64_t v = 8ULL << 30;
    const char *s = getenv("ATTNCHECK_MEM_CAP");
    uint64_t parsed;
    if (s && *s && ac_parse_size(s, &parsed) == 0 && parsed > 0) v = parsed;
    mem_cap = v;
  }
  return mem_cap;
}

void ac_set_mem_cap(uint64_t bytes) { mem_cap = bytes; }

uint64_t ac_nan_bits(ac_dtype t)
{
  /* Quiet NaNs with distinctive payloads, so that an untouched guard or pre-filled output is
   * told apart from a NaN a kernel computed (canonical NaNs have an empty payload). e4m3 has
   * one NaN code per sign. */
  switch (t) {
  case AC_F64: return 0x7ffdeadbeefcafe5ULL;
  case AC_F32: return 0x7fdead5aULL;
  case AC_F16: return 0x7e5aULL;
  case AC_BF16: return 0x7fdaULL;
  case AC_E4M3: return 0x7fULL;
  case AC_E5M2: return 0x7fULL;
  default: return 0;
  }
}

int ac_guarded_alloc(ac_guarded *g, ac_dtype t, size_t n, size_t guard, ac_err *e)
{
  memset(g, 0, sizeof *g);
  const size_t esz = ac_dtype_size(t);
  if (!esz) return ac_err_set(e, "unknown dtype %d", (int)t);
  size_t total, bytes;
  if (__builtin_mul_overflow(guard, (size_t)2, &total) || __builtin_add_overflow(total, n, &total) ||
      __builtin_mul_overflow(total, esz, &bytes))
    return ac_err_set(e, "guarded tensor of %zu elements overflows", n);
  g->alloc = ac_xmalloc(bytes);
  const uint64_t nan = ac_nan_bits(t);
  for (size_t i = 0; i < total; i++) ac_store_bits(t, g->alloc, i, nan);
  g->dtype = t;
  g->data = (char *)g->alloc + guard * esz;
  g->n = n;
  g->guard = guard;
  return 0;
}

int ac_guarded_intact(const ac_guarded *g)
{
  if (!g->alloc) return 0;
  const uint64_t nan = ac_nan_bits(g->dtype);
  const size_t tail = g->guard + g->n;
  for (size_t i = 0; i < g->guard; i++)
    if (ac_load_bits(g->dtype, g->alloc, i) != nan || ac_load_bits(g->dtype, g->alloc, tail + i) != nan)
      return 0;
  return 1;
}

void ac_guarded_free(ac_guarded *g)
{
  free(g->alloc);
  memset(g, 0, sizeof *g);
}

/* Copy between dense [B][H][T][D] and strided storage; to_strided chooses the direction. */
static void copy_strided(ac_dtype t, const void *src, void *dst, int64_t B, int64_t H, int64_t T, int64_t D,
                         const int64_t stride[4], int to_strided)
{
  const size_t esz = ac_dtype_size(t);
  int64_t s[4];
  if (all_zero(stride)) contiguous(B, H, T, D, s);
  else memcpy(s, stride, sizeof s);
  size_t dense = 0;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < T; i++) {
        const int64_t row = b * s[0] + h * s[1] + i * s[2];
        for (int64_t d = 0; d < D; d++, dense++) {
          const size_t off = (size_t)(row + d * s[3]);
          if (to_strided) memcpy((char *)dst + off * esz, (const char *)src + dense * esz, esz);
          else memcpy((char *)dst + dense * esz, (const char *)src + off * esz, esz);
        }
      }
}

void ac_scatter_strided(ac_dtype t, const void *dense, int64_t B, int64_t H, int64_t T, int64_t D,
                        const int64_t stride[4], void *dst)
{
  copy_strided(t, dense, dst, B, H, T, D, stride, 1);
}

void ac_gather_strided(ac_dtype t, const void *src, int64_t B, int64_t H, int64_t T, int64_t D,
                       const int64_t stride[4], void *dense)
{
  copy_strided(t, src, dense, B, H, T, D, stride, 0);
}
