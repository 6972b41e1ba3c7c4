/* fastexp.c: exp(t) in binary64 for t in [AC_FX_TMIN, 0] with a proven relative error bound
 * AC_FX_EPS = 2^-50 (used by the certified binary64 pass, fast.c).
 *
 * Proof. u = 2^-53, all operations round to nearest, no FMA contraction (-ffp-contract=off).
 * 1. k: y = fl(t * INVLN2) with |t| <= 708, so |y| < 1022; s = fl(y + 1.5*2^52) lies in
 *    [2^52, 2^53) where the ulp is 1, so s = 1.5*2^52 + k exactly with k = nearest integer
 *    to y, and kd = s - 1.5*2^52 is exact (Sterbenz). |y - t/ln2| <= |t| |INVLN2 - 1/ln2| +
 *    u |y| <= 708*2^-53*1.45 + 2^-43 < 2^-41, so r* = t - k ln2 has |r*| <= ln2 (1/2 + 2^-41)
 *    < 0.34658.
 * 2. LN2HI has 32 significant bits (checked in the unit test) and |k| < 2^11, so kd*LN2HI
 *    is exact. r1 = t - kd*LN2HI is exact: for k = 0 it is t; otherwise |t| >= 0.3465, so t
 *    and kd*LN2HI are multiples of 2^-54, and |r1| < 0.3466 < 2^53 * 2^-54.
 *    r = fl(r1 - fl(kd*LN2LO)): |LN2LO| < 2^-32, |ln2 - LN2HI - LN2LO| < 2^-85 (unit test),
 *    so |r - r*| <= u*0.3466 + 2^11*(u*2^-32 + 2^-85) < 2^-54.4, and |r| < 0.3467.
 * 3. P(r) = sum_{i<=13} c_i r^i, c_i = fl(1/i!), by Horner. On |r| <= 0.3467:
 *    truncation |e^r - sum_{i<=13} r^i/i!| <= |r|^14/14! e^|r| < 5.9e-18 < 0.08u e^r
 *    (e^r >= 0.707); coefficients (c_0..c_2 exact): |sum (c_i - 1/i!) r^i| <=
 *    u sum_{i>=3} 0.3467^i/i! < 0.008u < 0.02u e^r; Horner: the computed value is
 *    sum_i c_i r^i (1 + theta_i) with |theta_i| <= gamma_{2i+1} (c_i meets one addition, then
 *    i multiplications and i additions; Higham, Accuracy and Stability, §5.1), so
 *    |fl(P) - P| <= 1.0001 u sum_i (2i+1) |c_i| |r|^i <= 1.0001 u (1 + 2|r|) e^|r| (1+u)
 *    < 2.4u < 3.4u e^r. With e^(2^-54.4) - 1 < 0.38u for the argument error of step 2:
 *    |fl(P(r)) - e^r*| < (3.4 + 0.02 + 0.08 + 0.38 + 0.02) u e^r* < 4u e^r*.
 * 4. E = fl(P) * 2^k: for t >= -708, k >= -1021 and fl(P) >= 0.7, so the product is a
 *    normal number and exact. Hence |E - e^t| < 4u e^t <= AC_FX_EPS e^t (2^-50 = 8u, a
 *    factor 2 of margin; the unit test measures the largest error on millions of points).
 * Below AC_FX_TMIN the caller treats the weight as [0, 2^-1000] (e^-700 < 2^-1009). */
#include "config.h"
#include <stdint.h>
#include <string.h>
#include "fast.h"

#define INVLN2 0x1.71547652b82fep0
#define SHIFT 0x1.8p52
/* 1/i! rounded to nearest, i = 0..13 */
static const double C[14] = {
  1.0, 1.0, 0x1p-1, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7,
  0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19,
  0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};

const double ac_fx_ln2hi = 0x1.62e42feep-1;          /* 32 significant bits */
const double ac_fx_ln2lo = 0x1.a39ef35793c76p-33;
const double *ac_fx_exp_coef(void) { return C; }

static inline double exp_core(double t)
{
  double y = t * INVLN2;
  double s = y + SHIFT;
  double kd = s - SHIFT;
  uint64_t sb;
  memcpy(&sb, &s, sizeof sb);
  int64_t k = (int64_t)(sb - 0x4338000000000000ull);   /* bits(1.5*2^52 + k) = bits(1.5*2^52) + k */
  double r1 = t - kd * ac_fx_ln2hi;
  double r = r1 - kd * ac_fx_ln2lo;
  double p = C[13];
  p = C[12] + r * p; p = C[11] + r * p; p = C[10] + r * p; p = C[9] + r * p;
  p = C[8] + r * p;  p = C[7] + r * p;  p = C[6] + r * p;   p = C[5] + r * p;
  p = C[4] + r * p;  p = C[3] + r * p;  p = C[2] + r * p;   p = C[1] + r * p;
  p = C[0] + r * p;
  uint64_t eb = (uint64_t)(k + 1023) << 52;
  double sc;
  memcpy(&sc, &eb, sizeof sc);
  return p * sc;
}

double ac_fx_exp(double t)
{
  AC_ASSERT(t >= -708.0 && t <= 0, "t in [-708, 0], where the bound is proven (2^k normal, the product exact)");
  return exp_core(t);
}

/* Element by element (no reassociation, no contraction), so every clone returns ac_fx_exp's
 * values; the BLAS level (blastile.c) takes whole rows of arguments through it. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void ac_fx_exp_array(const double *restrict t, double *restrict out, int64_t n)
{
  for (int64_t j = 0; j < n; j++) {
    double e = exp_core(t[j] >= -708.0 ? t[j] : 0);
    out[j] = t[j] >= -708.0 ? e : 0;
  }
}
