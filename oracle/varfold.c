/* varfold.c: FOLD offsets in integers (docs/numerics.md §11.2).
 *
 * Without a softcap each offset a_j = -m_h dist + bias_j (the sink: sigma_h) is a sum of two
 * dyadic numbers: a binary32 slope times a 63-bit distance (117 bits at most) and a stored
 * value (53 bits). When the sum fits 125 bits at its own lsb it is kept as am_j 2^ae_j and
 * the MPFR parts of FOLD (a_j, g_j = c z_j + rk a_j) are built only where they are read:
 *   - foldable scales (c = ±2^e, or the default 1/k): z'_j = g_j / cnum = z_j + F a_j with
 *     F = rk (cnum = 1) or 1/c (cnum = c), added in the fixed point of the scores when every
 *     z'_j fits two limbs at a common lsb (ac_or_var_fold_fast) -- the values fold_scores
 *     would give, without MPFR; g_j = cnum z'_j is then made on demand (ac_or_var_need_g) by
 *     the MPFR levels, which the fast path reaches only for what it cannot decide;
 *   - otherwise a_j goes to MPFR (ac_or_var_a_mpfr) and FOLD runs as before.
 * Every step is exact; a value that does not fit takes the MPFR route, never a rounding. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"
#include "varint.h"

static int bitlen128(ac_i128 x)
{
  ac_u128 m = x < 0 ? -(ac_u128)x : (ac_u128)x;
  uint64_t hi = (uint64_t)(m >> 64);
  return hi ? 64 + ac_or_bitlen(hi) : ac_or_bitlen((uint64_t)m);
}

/* x 2^ex + y 2^ey exactly into (*m, *e) when it fits 125 bits; 1 when it does not. */
static int dy_add(ac_i128 x, int32_t ex, ac_i128 y, int32_t ey, ac_i128 *m, int32_t *e)
{
  if (!x) { *m = y; *e = ey; return 0; }
  if (!y) { *m = x; *e = ex; return 0; }
  if (ex < ey) {
    ac_i128 t = x; x = y; y = t;
    int32_t u = ex; ex = ey; ey = u;
  }
  int64_t sh = (int64_t)ex - ey;   /* x at the lsb of y */
  if (sh + bitlen128(x) > 124 || bitlen128(y) > 124) return 1;
  *m = (ac_i128)((ac_u128)x << sh) + y;
  *e = ey;
  return 0;
}

int ac_or_var_dy_offset(ac_or_var *v, int64_t r, double slope, int64_t dist, double stored)
{
  int64_t ms, mb;
  int32_t es, eb;
  ac_or_split_bits(-slope, &ms, &es);
  ac_or_split_bits(stored, &mb, &eb);
  v->mag[2 * r] = fabsl((long double)slope * (long double)dist);
  v->mag[2 * r + 1] = fabsl((long double)stored);
  return dy_add((ac_i128)ms * dist, es, mb, eb, &v->am[r], &v->ae[r]);
}

void ac_or_var_a_mpfr(ac_or_var *v, int64_t r)
{
  ac_i128 m = v->am[r];
  mpfr_set_prec(v->a[r], 128);
  AC_EXACT(mpfr_set_sj(v->a[r], (intmax_t)(m >> 64), MPFR_RNDN), "the high limb");
  AC_EXACT(mpfr_mul_2ui(v->a[r], v->a[r], 64, MPFR_RNDN), "a scaling");
  mpfr_set_prec(v->t1, 64);
  AC_EXACT(mpfr_set_uj(v->t1, (uintmax_t)(uint64_t)m, MPFR_RNDN), "the low limb");
  AC_EXACT(mpfr_add(v->a[r], v->a[r], v->t1, MPFR_RNDN), "128 bits in 128");
  AC_EXACT(mpfr_mul_2si(v->a[r], v->a[r], v->ae[r], MPFR_RNDN), "a scaling");
}

long double ac_or_var_pow2(ac_or_var *v, int32_t e)
{
  if (e < -16000 || e > 16000) return 0;
  unsigned k = (unsigned)e & 63u;
  if (!v->p2ok[k] || v->p2e[k] != e) {
    v->p2[k] = ldexpl(1.0L, e);
    v->p2e[k] = e;
    v->p2ok[k] = 1;
  }
  return v->p2[k];
}

/* x 2^e as ldexpl rounds it: the product by an exact power of two rounds once, alike. */
static long double scale2(ac_or_var *v, long double x, int32_t e)
{
  long double p = ac_or_var_pow2(v, e);
  return p != 0 ? x * p : ldexpl(x, e);
}

/* (long double) x, correctly rounded; the 64-bit conversion where x fits it (the 128-bit one is a
 * library call). */
static inline long double i128_ld(ac_i128 x)
{
  return x == (ac_i128)(int64_t)x ? (long double)(int64_t)x : (long double)x;
}

long double ac_or_var_a_ld(ac_or_var *v, int64_t r)
{
  if (!v->dy) return mpfr_zero_p(v->a[r]) ? 0 : mpfr_get_ld(v->a[r], MPFR_RNDN);
  return scale2(v, i128_ld(v->am[r]), v->ae[r]);
}

long double ac_or_var_z_ld(ac_or_ws *w, int64_t r)
{
  const uint64_t *z = ac_or_z(w, r);
  return scale2(w->var, i128_ld((ac_i128)(((ac_u128)z[1] << 64) | z[0])), w->zlsb);
}

/* F = rk (cnum = 1) or 1/c (cnum = c = ±2^e) as fm 2^fe. */
static void fold_factor(const ac_or_ws *w, int64_t *fm, int32_t *fe)
{
  const ac_or_var *v = w->var;
  if (v->rk > 1) { *fm = v->rk; *fe = 0; return; }
  ac_or_split_bits(w->sc.is_default ? w->sc.approx : w->sc.stored, fm, fe);
  AC_ASSERT(*fm == 1 || *fm == -1, "a foldable scale is ±2^e");
  *fe = -*fe;
}

int ac_or_var_fold_fast(ac_or_ws *w, int zbits)
{
  ac_or_var *v = w->var;
  int64_t n = w->n, fm;
  int32_t fe;
  if (!v->dy || w->nl != 2) return 0;
  fold_factor(w, &fm, &fe);
  int fbits = ac_or_bitlen((uint64_t)(fm < 0 ? -fm : fm));
  int64_t lsb = w->zlsb, top = INT64_MIN;   /* top: the largest ae + bitlen(am) */
  for (int64_t r = 0; r < n; r++) {
    if (!v->am[r]) continue;
    int ba = bitlen128(v->am[r]);
    if (ba + fbits > 124) return 0;
    if ((int64_t)v->ae[r] + fe < lsb) lsb = (int64_t)v->ae[r] + fe;
    if ((int64_t)v->ae[r] + ba > top) top = (int64_t)v->ae[r] + ba;
  }
  if (lsb <= INT32_MIN / 2 || (int64_t)w->zlsb - lsb + zbits > 124) return 0;
  if (top != INT64_MIN && top + fe - lsb + fbits > 124) return 0;
  for (int64_t r = 0; r < n; r++) {
    uint64_t *z = (uint64_t *)ac_or_z(w, r);
    ac_i128 x = (ac_i128)(((ac_u128)z[1] << 64) | z[0]);
    ac_i128 s = (ac_i128)((ac_u128)x << (w->zlsb - lsb));
    if (v->am[r]) s += (ac_i128)((ac_u128)(v->am[r] * fm) << ((int64_t)v->ae[r] + fe - lsb));
    z[0] = (uint64_t)s;
    z[1] = (uint64_t)((ac_u128)s >> 64);
  }
  w->zlsb = (int32_t)lsb;
  v->g_ok = 0;
  memset(v->gk, 0, (size_t)n);
  return 1;
}

static void make_g(ac_or_ws *w, int64_t r)
{
  ac_or_var *v = w->var;
  mpfr_set_prec(v->t1, (mpfr_prec_t)w->nl * 64 + 2);
  ac_or_fx_to_mpfr(w, v->t1, ac_or_z(w, r), NULL, w->nl, w->zlsb);
  mpfr_set_prec(v->g[r], mpfr_get_prec(v->t1) + mpfr_get_prec(v->c));
  AC_EXACT(mpfr_mul(v->g[r], v->t1, v->c, MPFR_RNDN), "cnum z' in the sum of the precisions");
  v->gk[r] = 1;
}

void ac_or_var_need_g(ac_or_ws *w, int64_t j)
{
  ac_or_var *v = w->var;
  if (v->mode != AC_VAR_FOLD || v->g_ok) return;
  if (j >= 0) {
    if (!v->gk[j]) make_g(w, j);
    return;
  }
  for (int64_t r = 0; r < w->n; r++)   /* g = cnum z' exactly */
    if (!v->gk[r]) make_g(w, r);
  v->g_ok = 1;
}
