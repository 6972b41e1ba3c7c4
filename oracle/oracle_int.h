/* oracle_int.h: internals shared by the files of oracle/ (never included outside it).
 *
 * One row at a time: the exact scores of the visible keys as fixed-point integers
 * (scores.c), the groups of equal score and the exact-case test (exactcase.c), the
 * interval evaluation by levels (ziv.c) with rounding decisions per format (round.c),
 * then the budget terms (budget.c). Level 0 is the cheap pass (weights as 62-bit
 * fixed-point intervals, exact integer sums); levels >= 1 use MPFR with directed
 * rounding at growing precision. A faster certified first pass slots in as another
 * level 0 implementation: it only has to fill the same element intervals. */
#ifndef AC_ORACLE_INT_H
#define AC_ORACLE_INT_H
#include <stdio.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>
#include "oracle.h"
#include "dtype_mpfr.h"
#include "ac_assert.h"

typedef __int128 ac_i128;
typedef unsigned __int128 ac_u128;

/* ---- exact values: every finite stored value is M * 2^e with M odd (or 0) ---- */
static inline void ac_or_split(double d, int64_t *m, int32_t *e)
{
  if (d == 0) { *m = 0; *e = 0; return; }
  int x;
  double f = frexp(d, &x);
  int64_t M = (int64_t)ldexp(f, 53);
  int32_t E = x - 53;
  int tz = __builtin_ctzll((uint64_t)M);
  *m = M / ((int64_t)1 << tz);
  *e = E + tz;
}
static inline int ac_or_bitlen(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }
/* The same representation from the binary64 bits, without libm. */
static inline void ac_or_split_bits(double d, int64_t *m, int32_t *e)
{
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  uint64_t mant = b & ((UINT64_C(1) << 52) - 1);
  int ex = (int)((b >> 52) & 0x7ff);
  if (!ex && !mant) { *m = 0; *e = 0; return; }
  uint64_t M = ex ? mant | (UINT64_C(1) << 52) : mant;
  int32_t E = ex ? ex - 1075 : -1074;
  int tz = __builtin_ctzll(M);
  M >>= tz;
  *m = (b >> 63) ? -(int64_t)M : (int64_t)M;
  *e = E + tz;
}

/* ---- the softmax scale c ---- */
enum { AC_SCALE_DYADIC = 0, AC_SCALE_RATIONAL = 1, AC_SCALE_IRRATIONAL = 2 };
typedef struct {
  int sign;        /* -1, 0, +1 */
  int kind;        /* AC_SCALE_...: stored scales are dyadic; 1/sqrt(dk) may be any */
  int is_default;
  double stored;   /* the stored scale when not default */
  int64_t dk;
  double approx;   /* binary64 approximation of c */
} ac_or_scale;
int ac_or_scale_init(ac_or_scale *s, const ac_problem *p, ac_err *e);
/* [lo, hi] containing c, at the precisions of lo and hi (equal when c is exact there). */
void ac_or_scale_interval(const ac_or_scale *s, mpfr_t lo, mpfr_t hi);

/* ---- per (batch, kv head): decoded K and V, shared by the threads working on its rows ---- */
enum { AC_VCLS_FINITE = 0, AC_VCLS_NAN = 1, AC_VCLS_PINF = 2, AC_VCLS_NINF = 3 };
typedef struct {
  int64_t b, kvh;           /* cached head, -1 none */
  int64_t cap_k, cap_v;
  int64_t *km; int32_t *ke; double *kd;   /* tk*dk; km, ke NULL: from kd (ac_or_k) */
  const float *kf;          /* tk*dk in binary32 in place of kd (NULL) for the narrow dtypes (fastdecode.c) */
  float *kown;              /* kf when it is a copy; NULL when kf is the case's own fp32 array */
  uint8_t *kbad;            /* per key: 0 finite, 1 some NaN, 2 some inf (no NaN) */
  int32_t k_lsb, k_msb;     /* over finite nonzero K elements of the head; k_any = 0 if none */
  int k_any;
  long double k_l1max;      /* max over the head's keys of Σ_t |k_jt| (finite elements) */
  int64_t *vm; int32_t *ve; double *vd; uint8_t *vcls;   /* tk*dv; vm, ve NULL: from vd (ac_or_v) */
  const float *vf;          /* tk*dv in binary32 in place of vd (NULL), as kf */
  float *vown;              /* vf when it is a copy, as kown */
  int32_t *v_lsb, *v_msb; uint8_t *v_any;                /* per column */
  ac_i128 *vabs;            /* (tk+1)*dv prefix sums of |V| at lsb v_lsb (columns whose window fits) */
} ac_or_head;

/* K and V element x as binary64, from kd/vd or (exactly) from kf/vf. */
static inline double ac_or_kval(const ac_or_head *hd, size_t x) { return hd->kd ? hd->kd[x] : (double)hd->kf[x]; }
static inline double ac_or_vval(const ac_or_head *hd, size_t x) { return hd->vd ? hd->vd[x] : (double)hd->vf[x]; }
/* Row j (n elements) of d, or of f widened into buf: the binary64 values either way. */
static inline const double *ac_or_row64(const double *d, const float *f, int64_t j, int64_t n, double *buf)
{
  if (d) return d + j * n;
  const float *s = f + j * n;
  for (int64_t t = 0; t < n; t++) buf[t] = (double)s[t];
  return buf;
}
static inline const double *ac_or_krow(const ac_or_head *hd, int64_t j, int64_t dk, double *buf)
{
  return ac_or_row64(hd->kd, hd->kf, j, dk, buf);
}
static inline const double *ac_or_vrow(const ac_or_head *hd, int64_t j, int64_t dv, double *buf)
{
  return ac_or_row64(hd->vd, hd->vf, j, dv, buf);
}

/* K element x as M 2^e, M odd or 0, e = k_lsb when M = 0: stored in km/ke by
 * ac_or_head_decode, split from kd when the narrow-dtype decode left them out (kd holds
 * those values exactly, 0 for non-finite ones). */
static inline int64_t ac_or_k(const ac_or_head *hd, size_t x, int32_t *e)
{
  if (hd->km) { *e = hd->ke[x]; return hd->km[x]; }
  int64_t m;
  ac_or_split_bits(ac_or_kval(hd, x), &m, e);
  if (!m) *e = hd->k_lsb;
  return m;
}

/* V element x (column t) as M 2^e, M odd or 0, e = v_lsb[t] when M = 0: stored in vm/ve by
 * ac_or_head_decode, split from vd when the narrow-dtype decode left them out (fastdecode.c:
 * vd holds those values exactly, 0 for non-finite ones). */
static inline int64_t ac_or_v(const ac_or_head *hd, size_t x, int64_t t, int32_t *e)
{
  if (hd->vm) { *e = hd->ve[x]; return hd->vm[x]; }
  int64_t m;
  ac_or_split_bits(ac_or_vval(hd, x), &m, e);
  if (!m) *e = hd->v_lsb[t];
  return m;
}

/* ---- the values the formula uses (variants: per-tensor dtypes, descales) ---- */
/* dtype of tensor x ('q', 'k', 'v', 'o'): the case dtype unless AC_FEAT_MIXED_DTYPES; binary64 for a
 * quantized tensor, whose array holds the exact values of its codes (ac_tensor_dtype). */
static inline ac_dtype ac_or_tdtype(const ac_problem *p, char x) { return ac_tensor_dtype(p, x); }
/* Descale of tensor x ('q', 'k', 'v') for (batch b, kv head kvh): 1 without AC_FEAT_DESCALE.
 * Values are stored value * descale, exact in binary64 for every dtype but fp64 (ac_oracle_run
 * refuses descales of fp64 tensors). */
static inline double ac_or_descale(const ac_case *c, char x, int64_t b, int64_t kvh)
{
  if (!(c->p.f.used & AC_FEAT_DESCALE)) return 1.0;
  const float *d = c->descale[x == 'q' ? 0 : x == 'k' ? 1 : 2];
  return d ? (double)d[b * c->p.kv_heads + kvh] : 1.0;
}

/* variants (varscores.c, varziv.c): the per-key parts of the scores of a row */
typedef struct ac_or_var ac_or_var;

/* ---- per-thread row workspace ---- */
typedef struct {
  const ac_case *cs;
  const ac_problem *p;
  const ac_oracle_opts *opts;
  ac_or_scale sc;
  uint32_t formats;         /* formats o is rounded into */
  int tprec;                /* largest target precision among formats (and LSE) */
  long prec_cap;
  const ac_or_head *head;  /* the decoded head of the current row */
  ac_or_head own;          /* used by ac_or_head_load (single-threaded callers) */
  ac_or_head sub;          /* the keys of a row that keep a weight when others score ±inf (infscores.c) */
  ac_or_var *var;           /* variant scores (AC_OR_VAR_SCORES): beyond scale * q·k; NULL otherwise */
  ac_or_head rowh;          /* variant cases: the row's visible keys (and the sink), ac_or_row_gather */
  const ac_or_head *pick_src; /* rowh holds src's keys 0..pick_m-1 (then the sink): NULL when not a prefix */
  int64_t pick_b, pick_kvh, pick_m;
  int64_t *rkey;            /* their indices in storage order (-1 the sink); NULL: keys are the prefix */
  int64_t cap_rkey;

  /* the row */
  int64_t b, h, i, n;       /* n = visible keys */
  int64_t *qm; int32_t *qe; double *qd;   /* dk */
  int nl;                   /* limbs per exact score */
  int32_t zlsb;             /* z_j = (two's complement limbs) * 2^zlsb */
  uint64_t *z;              /* n * nl */
  long double *Zabs;        /* n: Σ|q_t k_jt| */
  long double *Zb;          /* n: Σ qb_t |k_jt|, qb_t the largest |q| of t's block (AC_ORACLE_QBLOCK) */
  int64_t cap_n; int cap_nl;
  ac_i128 *acc; int cap_acc;

  /* groups of equal exact score, by decreasing score; group 0 holds the maximum */
  int64_t *ord, *gst, *gof, ng;

  /* weights per group at the current level: t = c (z_g - z_top) in [tlo, thi], w in [wlo, whi] */
  mpfr_prec_t wprec;        /* precision of the current weights, 0 when none */
  int64_t cap_g;
  mpfr_t *tlo, *thi, *wlo, *whi;
  uint64_t *Wlo, *Whi;      /* level 0: floor/ceil(w * 2^62) */
  mpfr_t Llo, Lhi, Lm1lo, Lm1hi, mlo, mhi;   /* L, L - 1 and the maximum score m */

  /* the LSE under FlashAttention-2's causal ALiBi convention (lsealt.c): the row's shift m_h (i + tk - tq) */
  int alt, alt_done;        /* the row has a shift; its alternative LSE is decided */
  mpfr_t alt_shift;

  /* dropout (dropout.c): o = o' / q with o' the attention of the row's masked values, q = 1 - p exactly */
  int drop;                 /* the case has dropout (dq, dlo, dhi initialized) */
  mpfr_t dq, dlo, dhi;      /* q; the enclosure of o = o' / q for the rounding decisions */
  double drop_r;            /* 1 / q rounded up (the budget terms' factor) */

  /* scratch */
  mpz_t zt;
  mpfr_t *prod; mpfr_ptr *pp; int64_t cap_prod; mpfr_prec_t prod_prec;
  mpfr_t olo, ohi, bp;
  ac_i128 *nlo, *nhi; uint32_t *pend; uint8_t *slow; int64_t cap_dv;
} ac_or_ws;

void ac_or_ws_init(ac_or_ws *w, const ac_case *cs, const ac_oracle_opts *o, const ac_or_scale *sc,
                   uint32_t formats, int tprec, long cap);
void ac_or_ws_free(ac_or_ws *w);

/* scores.c */
/* Decodes head (b, kvh) of cs into hd (reusing its buffers). */
void ac_or_head_decode(ac_or_head *hd, const ac_case *cs, int64_t b, int64_t kvh);
/* Decodes into w->own when not already there and points w->head at it. */
void ac_or_head_load(ac_or_ws *w, int64_t b, int64_t kvh);
void ac_or_head_free(ac_or_head *hd);
/* Decodes q row (b,h,i); returns 1 if q has NaN, 2 if inf (no NaN), else 0. */
int ac_or_row_q(ac_or_ws *w, int64_t b, int64_t h, int64_t i);
/* Exact z_j and Z_j of the n visible keys (all finite). */
void ac_or_row_scores(ac_or_ws *w);
const uint64_t *ac_or_z(const ac_or_ws *w, int64_t j);
int ac_or_fx_cmp(const uint64_t *a, const uint64_t *b, int nl);
int ac_or_fx_sign(const uint64_t *a, int nl);
/* d = a - b in nl-limb two's complement (d may be a or b). */
static inline void ac_or_fx_sub(const uint64_t *a, const uint64_t *b, uint64_t *d, int nl)
{
  unsigned borrow = 0;
  for (int k = 0; k < nl; k++) {
    uint64_t v = a[k] - b[k] - borrow;
    borrow = a[k] < b[k] || (a[k] == b[k] && borrow);
    d[k] = v;
  }
}
/* x = (a - b) * 2^lsb exactly (x's precision is raised when needed); b may be NULL. */
void ac_or_fx_to_mpfr(ac_or_ws *w, mpfr_t x, const uint64_t *a, const uint64_t *b, int nl, int32_t lsb);
long double ac_or_fx_to_ld(const uint64_t *a, int nl, int32_t lsb);
/* Chunks of a fixed-point accumulator for sums of at most `bits` bits: one per 64 bits, and
 * 3 more so that the 128-bit term added at the top chunk (k, k + 1, k + 2) stays inside. */
static inline int ac_or_fx_chunks(int64_t bits) { return (int)((bits + 63) / 64) + 3; }
/* Fixed-point accumulation of sign*P*2^pos into the nc 64-bit chunks (held in int128) of acc. */
static inline void ac_or_fx_add(ac_i128 *acc, int nc, ac_u128 P, int neg, int64_t pos)
{
  AC_ASSERT(pos >= 0 && (pos >> 6) + 2 < nc, "a term lands inside the accumulator's chunks");
  int64_t k = pos >> 6;
  int sh = (int)(pos & 63);
  uint64_t lo = (uint64_t)P, hi = (uint64_t)(P >> 64), w0, w1, w2;
  if (sh == 0) { w0 = lo; w1 = hi; w2 = 0; }
  else { w0 = lo << sh; w1 = (lo >> (64 - sh)) | (hi << sh); w2 = hi >> (64 - sh); }
  if (neg) { acc[k] -= w0; acc[k + 1] -= w1; acc[k + 2] -= w2; }
  else { acc[k] += w0; acc[k + 1] += w1; acc[k + 2] += w2; }
}
/* Carry-normalizes nc chunks into nc two's-complement limbs. */
void ac_or_fx_norm(const ac_i128 *acc, int nc, uint64_t *limbs);

/* exactcase.c */
void ac_or_groups(ac_or_ws *w);
/* Exact sum of V over the keys of group g (g < 0: all visible keys), column t; exact. */
void ac_or_group_vsum(ac_or_ws *w, int64_t g, int64_t t, mpfr_t out);
/* 1 if o of column t is exactly rational W/n (all group means equal); out = the exact sum W. */
int ac_or_exact_elem(ac_or_ws *w, int64_t t, mpfr_t W);
/* Sign of o - bp from the exact groups and the current weights: +1, -1, or 0 (undecided). */
/* Tries to decide every pending format (mask pend) of column t from [olo, ohi], with the sign
 * test at a breakpoint; writes the decided bits and returns the mask left. */
uint32_t ac_or_decide_formats(ac_or_ws *w, int64_t t, uint32_t pend, uint64_t **obits, int64_t eidx);
int ac_or_sign_vs(ac_or_ws *w, int64_t t, mpfr_srcptr bp);
/* m exactly as a dyadic number when it is one (returns 1), else 0. */
int ac_or_m_exact(ac_or_ws *w, mpfr_t m);

/* round.c */
/* Rounding of a value in [lo, hi] to format t: 0 decided (*bits); 1 exactly one breakpoint
 * between the two roundings (bp set exactly; *bits = lower, *bits_hi = upper); 2 wider. */
int ac_or_round_decide(ac_dtype t, mpfr_srcptr lo, mpfr_srcptr hi, uint64_t *bits, uint64_t *bits_hi, mpfr_t bp);
uint64_t ac_or_round_exact(ac_dtype t, mpfr_srcptr x);
/* Correct rounding of the rational W/n (n >= 1); returns 0, or -1 past the cap. */
int ac_or_round_rational(ac_dtype t, mpfr_srcptr W, int64_t n, long cap, uint64_t *bits);
/* The same for W/D, D an exact non-zero dyadic number (n times dropout's 1 - p). */
int ac_or_round_quotient(ac_dtype t, mpfr_srcptr W, mpfr_srcptr D, long cap, uint64_t *bits);
uint64_t ac_or_inf_bits(ac_dtype t, int neg);
/* binary64 value and bound for [lo, hi]. */
void ac_or_interval_double(mpfr_srcptr lo, mpfr_srcptr hi, double *mid, double *err);

/* ziv.c */
/* Weights of the groups at precision p (p = 64 for level 0 also fills Wlo/Whi). */
void ac_or_weights(ac_or_ws *w, mpfr_prec_t p);
/* LSE = m + log1p(L - 1) enclosed at precision p + 8 from the weights of precision p. */
void ac_or_lse_enclosure(const ac_or_ws *w, mpfr_prec_t p, mpfr_t lo, mpfr_t hi);
typedef struct { int64_t exact, rounded, unresolved, fallback, blas; long max_prec; } ac_or_stats;
/* Every element and the LSE of the current row (finite inputs, n >= 1). */
void ac_or_row_eval(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, uint64_t **obits, int64_t slot,
                    ac_or_stats *st);
/* ziv.c: element t decided without the Ziv loop (NaN/inf in V, or an exact rational when
 * try_exact): 1 = decided; 0 = needs the loop (e->accept set to VALUE). */
int ac_or_decide_special(ac_or_ws *w, int64_t t, int nan, int pinf, int ninf, int try_exact, ac_oracle_elem *e,
                         uint64_t **obits, int64_t eidx, mpfr_t W, mpfr_t Nlo, mpfr_t Nhi, ac_or_stats *st);

/* dropout.c (docs/numerics.md §13): a row's values are V'_j = m_j V_j (its mask) and o = o' / q, q = 1 - p.
 * ac_or_drop_init/free with the workspace; ac_or_drop_row zeroes the V of the dropped keys of the
 * gathered row head (w->rowh, w->rkey of row (b, h, i), m keys); ac_or_drop_interval encloses o from
 * o' in [w->dlo, w->dhi]; ac_or_drop_bp turns a breakpoint b of o into b q, that of o' (exact);
 * ac_or_drop_quotient: D = n q for the exact rational o = W / (n q); ac_or_drop_finish turns the
 * row's elements (o', its bound and budget terms) into o's, and re-encodes unresolved ones. */
void ac_or_drop_init(ac_or_ws *w);
void ac_or_drop_free(ac_or_ws *w);
void ac_or_drop_row(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t m);
/* The keep-mask of row (b, h, i) of case cs, indexed by key; in head hd (m keys, key r the case's key
 * idx[r], -1 the sink) the values of the keys it drops set to 0 (their prefix sums of |V| with them). */
const uint8_t *ac_or_drop_mask_row(const ac_case *cs, int64_t b, int64_t h, int64_t i);
void ac_or_drop_vzero(ac_or_head *hd, const ac_problem *p, const uint8_t *keep, const int64_t *idx, int64_t m);
void ac_or_drop_interval(ac_or_ws *w, mpfr_srcptr lo, mpfr_srcptr hi);
void ac_or_drop_bp(ac_or_ws *w, mpfr_t bp);
void ac_or_drop_quotient(ac_or_ws *w, int64_t n, mpfr_t D);
void ac_or_drop_finish(ac_or_ws *w, ac_oracle_elem *el, uint64_t **obits, int64_t slot);
/* infscores.c: the prefix sums of |V| (vabs) of the n keys of a picked head (ac_or_head_pick). */
void ac_or_head_vabs(ac_or_head *dst, const ac_problem *p, int64_t n);

/* infscores.c: score classes of the visible keys (rule table of oracle.h) */
enum { AC_SCLS_FINITE = 0, AC_SCLS_NINF = 1, AC_SCLS_PINF = 2, AC_SCLS_NAN = 3 };
/* cls[j] for the n visible keys of row (b, h, i) from the stored values; returns the row's
 * class: NAN if any key is NaN, else PINF if any is +inf, else NINF if any is -inf, else FINITE. */
int ac_or_inf_classify(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t n, uint8_t *cls);
/* dst = the keys j < n of src with keep[j] != 0, in order (K, V and their windows); returns
 * their number (ac_or_head_pick of their indices). */
int64_t ac_or_head_subset(ac_or_head *dst, const ac_or_head *src, const ac_problem *p, const uint8_t *keep,
                          int64_t n);
/* dst = the keys idx[0..m) of src in that order, then nzero keys with K = 0 and V = 0 (a sink: one
 * more key that carries weight and no value); the windows of src are kept. Keys before from are
 * taken to be in dst already (a pick of the same src and idx before). */
void ac_or_head_pick(ac_or_head *dst, const ac_or_head *src, const ac_problem *p, const int64_t *idx, int64_t m,
                     int64_t nzero, int64_t from);
/* Score class (AC_SCLS_...) of c (q·k_j) on IEEE semantics, q the row's stored values (times the
 * descale) and j a key of kv head kvh in storage order. */
uint8_t ac_or_inf_key_class(const ac_or_ws *w, const double *q, int64_t b, int64_t kvh, int64_t j);
/* The row's q as stored values times its descale (NaN and infinities kept) into q[dk]. */
void ac_or_q_values(const ac_or_ws *w, int64_t b, int64_t h, int64_t i, double *q);
/* scores.c: the row buffers (z, Zabs, ord, gst, gof) for n keys of nl limbs, grown as needed
 * (both score paths). */
void ac_or_ensure_rows(ac_or_ws *w, int64_t n, int nl);
/* scores.c: after a head loader has decoded K (km, ke, kd) with lsb/msb over the nonzero
 * elements (INT32_MAX/INT32_MIN when none): k_any, k_lsb, k_msb, k_l1max, and ke of zeros. */
void ac_or_head_finish_k(ac_or_head *hd, int64_t tk, int64_t dk, int32_t lsb, int32_t msb);
/* max_j |c| Z_j over the keys of the row (both oracle paths: identical bits). */
static inline double ac_or_max_cz(const ac_or_ws *w)
{
  if (w->sc.sign == 0) return 0;
  long double z = 0;
  for (int64_t j = 0; j < w->n; j++)
    if (w->Zabs[j] > z) z = w->Zabs[j];
  return (double)(z * fabsl((long double)w->sc.approx) * (1 + 0x1p-40L));
}

/* max_j Σ_t |k_jt| over the decoded keys of a head (both head loaders). */
static inline long double ac_or_k_l1max(const ac_or_head *hd, int64_t nkeys, int64_t dk)
{
  long double best = 0;
  for (int64_t j = 0; j < nkeys; j++) {
    long double s = 0;
    for (int64_t t = 0; t < dk; t++) s += fabsl((long double)ac_or_kval(hd, (size_t)(j * dk + t)));
    if (s > best) best = s;
  }
  return best;
}
/* max_j |c| Zb_j over the keys of the row, as ac_or_max_cz. */
static inline double ac_or_max_czb(const ac_or_ws *w)
{
  if (w->sc.sign == 0) return 0;
  long double z = 0;
  for (int64_t j = 0; j < w->n; j++)
    if (w->Zb[j] > z) z = w->Zb[j];
  return (double)(z * fabsl((long double)w->sc.approx) * (1 + 0x1p-40L));
}
/* qb[t] = the largest |q[t']| of t's block of AC_ORACLE_QBLOCK along d_k (the last one partial). */
static inline void ac_or_qblock_max(const double *q, int64_t dk, double *qb)
{
  for (int64_t b0 = 0; b0 < dk; b0 += AC_ORACLE_QBLOCK) {
    int64_t b1 = b0 + AC_ORACLE_QBLOCK < dk ? b0 + AC_ORACLE_QBLOCK : dk;
    double m = 0;
    for (int64_t t = b0; t < b1; t++) m = fabs(q[t]) > m ? fabs(q[t]) : m;
    for (int64_t t = b0; t < b1; t++) qb[t] = m;
  }
}
/* Σ_t |q_t| + max_j Σ_t |k_jt|: the underflow term of kernels that scale Q or K before Q·Kᵀ. */
static inline double ac_or_qk_l1(const ac_or_ws *w)
{
  long double s = w->head->k_l1max;
  for (int64_t t = 0; t < w->p->dk; t++) s += fabsl((long double)w->qd[t]);
  return (double)(s * (1 + 0x1p-40L));
}

/* Precision that holds a + b (or a - b) exactly. */
static inline mpfr_prec_t ac_or_exact_prec(mpfr_srcptr a, mpfr_srcptr b)
{
  if (mpfr_zero_p(a)) return mpfr_get_prec(b);
  if (mpfr_zero_p(b)) return mpfr_get_prec(a);
  mpfr_exp_t ea = mpfr_get_exp(a), eb = mpfr_get_exp(b);
  mpfr_exp_t hi = ea > eb ? ea : eb;
  mpfr_exp_t la = ea - (mpfr_exp_t)mpfr_get_prec(a), lb = eb - (mpfr_exp_t)mpfr_get_prec(b);
  mpfr_exp_t lo = la < lb ? la : lb;
  return (mpfr_prec_t)(hi - lo + 2);
}

/* ---- variants: varscores.c (visibility, classes, exact offsets, groups), varziv.c (intervals) ----
 * Every score is s_j = S(c z_j) + a_j: z_j = q·k_j exact (0 for a fixed key), S the identity or
 * the softcap cap tanh(x / cap), a_j = -m_h dist + bias exact (docs/numerics.md §11). A fixed key
 * (the sink, or an infinite raw score under a softcap) has the score a_j alone. */
/* The features whose scores go beyond scale * q·k (varscores.c); windows, boolean masks, descales
 * and per-tensor dtypes keep plain scores on the row's gathered keys. */
#define AC_OR_VAR_SCORES (AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS)
void ac_or_var_init(ac_or_ws *w);
void ac_or_var_free(ac_or_ws *w);
/* Builds the row's head of visible keys (and the sink, with variant scores) from w->head into
 * w->rowh (indices in w->rkey) and points w->head at it; returns the number of keys (sink
 * included) and sets *nvis (sink excluded). */
int64_t ac_or_row_gather(ac_or_ws *w, int64_t b, int64_t h, int64_t i, int64_t *nvis);
/* Score class of every key of the row head (cls[n]), the exact offsets of the finite ones; returns
 * the row's class as ac_or_inf_classify. q_bad: the row's q holds NaN or inf. */
int ac_or_var_classify(ac_or_ws *w, int64_t n, int q_bad, uint8_t *cls);
/* Keeps the per-key parts of the keys with keep[j] != 0 (after ac_or_head_subset); pinf: the kept
 * keys score +inf, and the limit gives them equal weights (every score becomes 0). */
void ac_or_var_compact(ac_or_ws *w, const uint8_t *keep, int64_t n, int pinf);
/* path scores and groups of variant rows (scores: through ac_or_row_scores or ac_or_fast_scores) */
void ac_or_var_scores(ac_or_ws *w);
void ac_or_var_scores_fast(ac_or_ws *w);
/* 1 when the scores of a variant case fold into plain fixed-point scores of its scale (no softcap,
 * c a signed power of two or the default 1/sqrt(dk) rational): plain groups and the fast path. */
int ac_or_var_foldable(const ac_problem *p, const ac_or_scale *sc);
void ac_or_var_groups(ac_or_ws *w);
/* FOLD: makes g_j (= cnum z'_j; every key when j < 0) where the integer fold of varfold.c left
 * it unset. */
void ac_or_var_need_g(ac_or_ws *w, int64_t j);
/* [lo, hi] at precision p containing s_j - s_k; returns its sign when known exactly (-1, 0, 1),
 * else 2. */
int ac_or_var_diff(ac_or_ws *w, int64_t j, int64_t k, mpfr_prec_t p, mpfr_t lo, mpfr_t hi);
/* [lo, hi] containing s_j - s_k for the weights: under a softcap from the enclosed scores when
 * that is within 2^-(p+4) absolutely (the weights' relative error), else ac_or_var_diff. */
void ac_or_var_tdiff(ac_or_ws *w, int64_t j, int64_t k, mpfr_prec_t p, mpfr_t lo, mpfr_t hi);
/* [lo, hi] at precision p containing s_j. */
void ac_or_var_score(ac_or_ws *w, int64_t j, mpfr_prec_t p, mpfr_t lo, mpfr_t hi);
/* m = s of the top group exactly when it is a dyadic number (1), else 0. */
/* CAP: K = ±cap + a_top exactly and the side of K the top score lies on (-1 below, +1 above; it
 * is never on it); 0 when that does not apply (no softcap, a fixed top key, c z_top = 0). */
int ac_or_var_m_side(ac_or_ws *w, mpfr_t K);
/* The side of a breakpoint bp of the LSE's enclosure that the LSE lies on when known exactly (+1
 * above, -1 below, else 0): above m = bp when n >= 2 and m is exact (L > 1); for one key under a
 * softcap, the side of K (ac_or_var_m_side) when bp = K (LSE = s_top). */
int ac_or_lse_bp_side(ac_or_ws *w, int mex, mpfr_srcptr m, mpfr_srcptr bp);
/* lsealt.c: the alternative LSE of the current row, LSE + m_h (i + tk - tq) under a causal mask with
 * ALiBi (docs/variants.md). ac_or_alt_row sets the shift of row (b, h, i) before the row is computed
 * (w->alt: there is one); the LSE's evaluations then decide it from their enclosures: exactly when the
 * LSE is m (ac_or_alt_exact), from [lo, hi] (ac_or_alt_decide: 1 when decided or not needed), or left
 * unresolved at the cap (ac_or_alt_left, counted); ac_or_alt_finish copies the LSE where there is none. */
void ac_or_alt_row(ac_or_ws *w, ac_oracle_row *row, int64_t b, int64_t h, int64_t i);
void ac_or_alt_exact(ac_or_ws *w, ac_oracle_row *row, mpfr_srcptr m);
int ac_or_alt_decide(ac_or_ws *w, ac_oracle_row *row, int mex, mpfr_srcptr m, mpfr_srcptr lo, mpfr_srcptr hi);
void ac_or_alt_left(ac_or_ws *w, ac_oracle_row *row, mpfr_srcptr lo, mpfr_srcptr hi, ac_or_stats *st);
void ac_or_alt_finish(ac_or_ws *w, ac_oracle_row *row);

int ac_or_var_m_exact(ac_or_ws *w, mpfr_t m);
/* Sign of Σ_g c_g e^{s_g} (c exact, ng groups, gs the first with c_g != 0) by e^{s_g - s_gs} =
 * 1 + expm1(s_g - s_gs): 1, -1 or 0 (undecided). */
int ac_or_var_sign(ac_or_ws *w, mpfr_t *c, int64_t ng, int64_t gs);
/* Per-key score magnitude for the budget (docs/numerics.md §11.4), n keys of the row. */
const long double *ac_or_var_smag(const ac_or_ws *w);
/* max_abs_z over the row's keys; max_abs_s (score magnitudes) and max_cZ (|c| zf_j Z_j: variant
 * rows keep zf_j Z_j in Zabs, so G and lse_cZ take the factor too) over the keys that carry
 * weight (s_j - m > -11400, A_j > 0 in long double: a -1e9 sentinel's key does not) (§11.4). */
void ac_or_var_row_terms(const ac_or_ws *w, ac_oracle_row *row);
/* Per-key factor of |c| Z_j in the budget (sech^2 of the softcap's argument, else 1; 0 fixed keys). */
const long double *ac_or_var_zf(const ac_or_ws *w);

/* budget.c */
void ac_or_row_budget(ac_or_ws *w, ac_oracle_row *row, ac_oracle_elem *el, const ac_oracle_opts *o,
                      const double *mu, int nmu);
/* el[t].M = max_j |V_jt - o_t| over the n keys of the head in use (every key that may carry
 * weight in a kernel), for the elements whose only outcome is a value. */
void ac_or_row_hull(const ac_or_ws *w, ac_oracle_elem *el);
/* el[t].M from the extremes lo[t], hi[t] of column t over the n keys (lo[t] > hi[t] when
 * none): max_j |V_j - o| is reached at the largest or the smallest V_j, and rounding is
 * monotone, so round(hi - o) and round(o - lo) are the largest of the rounded differences.
 * Shared by ac_or_row_hull and the binary64 pass (fast.c), which finds the extremes in its
 * budget pass over V. */
void ac_or_hull_finish(const double *lo, const double *hi, int64_t n, int64_t dv, ac_oracle_elem *el);

/* Bits of the fixed-point sum of column t over n keys, each |V_j| (a window of v_msb - v_lsb
 * bits above the column's lsb) times an integer weight of wbits bits, with a sign bit and one
 * bit of slack: the level-0 sums of ziv.c (wbits = 62) and the prefix sums of |V| of a head
 * (wbits = 0, n = tk). A sum of at most 126 bits fits one __int128. */
static inline int64_t ac_or_vcol_bits(const ac_or_head *hd, int64_t t, int64_t n, int wbits)
{
  return (int64_t)hd->v_msb[t] - hd->v_lsb[t] + wbits + ac_or_bitlen((uint64_t)n) + 2;
}

/* x = x 2^e, rounded by rnd (the direction of the bound x belongs to): exact, except where it
 * underflows MPFR's extended exponent range (a weight below e^-(2^62) times a tiny V), and
 * then 0 or the smallest positive number, on the outward side. */
static inline void ac_or_mul_2si_outward(mpfr_t x, long e, mpfr_rnd_t rnd)
{
  int inex = mpfr_mul_2si(x, x, e, rnd);
  AC_ASSERT(!inex || mpfr_zero_p(x) || mpfr_get_exp(x) == mpfr_get_emin(), "exact unless it underflows");
}

/* precision schedule: start 64 bits above target, +64, then x1.5 */
static inline mpfr_prec_t ac_or_next_prec(mpfr_prec_t p, int tprec)
{
  if (p < tprec + 64) return tprec + 64;
  if (p < tprec + 128) return tprec + 128;
  return p + p / 2;
}

#endif
