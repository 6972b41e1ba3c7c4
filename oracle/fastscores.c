/* fastscores.c: the exact scores z_j = q·k_j of a row, as ac_or_row_scores computes them
 * (same fixed-point layout in the workspace), for the narrow dtypes (significands <= 24
 * bits) when the operands align into 64-bit integers.
 *
 * q_t = Q_t 2^qlsb and k_jt = K_jt 2^klsb with integers |Q_t| < 2^62, |K_jt| < 2^62 when the
 * row's and the head's bit windows are at most 62 wide; then z_j = (sum_t Q_t K_jt) 2^(qlsb+klsb)
 * exactly (Z_j, a budget term, in binary64 with four partial sums). The sum fits
 * int64 when qwin + kwin + bitlen(dk) + 1 <= 63 (fp16, bf16, fp8, narrow fp32 data: a plain
 * integer multiply-add the compiler vectorizes), else __int128 (one widening multiply per
 * product, no shifts: the 126-bit condition is the same as scores.c's). Anything wider, fp64
 * inputs and rows of zeros go to ac_or_row_scores. */
#include "config.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "fast.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

/* K at the head's lsb as integers: kd * 2^-k_lsb (sk) is exact and below 2^62 in magnitude
 * (kd holds k = m 2^e exactly, e >= k_lsb, and the head's window is at most 62 bits), so the
 * conversion to int64 is exact too. */
CLONES static int64_t dot64(const int64_t *restrict Q, const double *restrict kd, double sk, int64_t dk)
{
  int64_t s = 0;
  for (int64_t t = 0; t < dk; t++) s += Q[t] * (int64_t)(kd[t] * sk);
  return s;
}

static ac_i128 dot128(const int64_t *restrict Q, const double *restrict kd, double sk, int64_t dk)
{
  ac_i128 s0 = 0, s1 = 0;   /* two chains: the carries of one do not wait for the other */
  int64_t t = 0;
  for (; t + 2 <= dk; t += 2) {
    s0 += (ac_i128)Q[t] * (int64_t)(kd[t] * sk);
    s1 += (ac_i128)Q[t + 1] * (int64_t)(kd[t + 1] * sk);
  }
  if (t < dk) s0 += (ac_i128)Q[t] * (int64_t)(kd[t] * sk);
  return s0 + s1;
}

/* Z_j = sum |q_t k_jt| (budget term: a few percent suffice, any order): four partial sums
 * so that the loop vectorizes without reassociation by the compiler. */
CLONES static double zabs(const double *restrict qa, const double *restrict kd, int64_t dk)
{
  double a[4] = {0, 0, 0, 0};
  int64_t t = 0;
  for (; t + 4 <= dk; t += 4)
    for (int l = 0; l < 4; l++) a[l] += qa[t + l] * fabs(kd[t + l]);
  for (; t < dk; t++) a[0] += qa[t] * fabs(kd[t]);
  return (a[0] + a[1]) + (a[2] + a[3]);
}

/* Zb_j = sum qb_t |k_jt| with qb_t constant over each block: the block's largest |q| times the
 * block's sum of |k_jt| (a budget term, as zabs). */
CLONES static double zblock(const double *restrict qb, const double *restrict kd, int64_t dk)
{
  double s = 0;
  for (int64_t b0 = 0; b0 < dk; b0 += AC_ORACLE_QBLOCK) {
    int64_t b1 = b0 + AC_ORACLE_QBLOCK < dk ? b0 + AC_ORACLE_QBLOCK : dk;
    double a[4] = {0, 0, 0, 0};
    int64_t t = b0;
    for (; t + 4 <= b1; t += 4)
      for (int l = 0; l < 4; l++) a[l] += fabs(kd[t + l]);
    for (; t < b1; t++) a[0] += fabs(kd[t]);
    s += qb[b0] * ((a[0] + a[1]) + (a[2] + a[3]));
  }
  return s;
}

void ac_or_fast_scores(ac_or_ws *w)
{
  const ac_problem *p = w->p;
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dk = p->dk;
  /* fp64 (and any head whose 2^-k_lsb is not a binary64) takes the general path */
  if (p->dtype == AC_F64 || !hd->k_any || hd->k_lsb < -1000 || hd->k_lsb > 1000) { ac_or_row_scores(w); return; }
  int32_t qlsb = INT32_MAX, qmsb = INT32_MIN;
  for (int64_t t = 0; t < dk; t++)
    if (w->qm[t]) {
      int32_t top = w->qe[t] + ac_or_bitlen((uint64_t)llabs(w->qm[t]));
      if (w->qe[t] < qlsb) qlsb = w->qe[t];
      if (top > qmsb) qmsb = top;
    }
  if (qlsb == INT32_MAX) { ac_or_row_scores(w); return; }
  int64_t qwin = (int64_t)qmsb - qlsb, kwin = (int64_t)hd->k_msb - hd->k_lsb;
  int64_t bits = qwin + kwin + ac_or_bitlen((uint64_t)dk) + 1;
  if (qwin > 62 || kwin > 62 || bits > 126) { ac_or_row_scores(w); return; }
  int64_t *Q = ac_xmalloc((size_t)dk * sizeof *Q);
  double *qa = ac_xmalloc((size_t)dk * 2 * sizeof *qa), *qb = qa + dk;
  for (int64_t t = 0; t < dk; t++) {
    qa[t] = fabs(w->qd[t]);
    if (!w->qm[t]) w->qe[t] = qlsb;
    Q[t] = (int64_t)((uint64_t)w->qm[t] << (w->qe[t] - qlsb));
  }
  ac_or_qblock_max(qa, dk, qb);
  int32_t lsb = qlsb + hd->k_lsb;
  w->zlsb = lsb;
  w->nl = 2;
  ac_or_ensure_rows(w, n, 2);
  double sk = ldexp(1.0, -hd->k_lsb);
  double *kbuf = ac_xmalloc((size_t)dk * sizeof *kbuf);   /* a key widened from binary32 */
  for (int64_t j = 0; j < n; j++) {
    const double *kd = ac_or_krow(hd, j, dk, kbuf);
    if (bits <= 63) {
      int64_t s = dot64(Q, kd, sk, dk);
      w->z[2 * j] = (uint64_t)s;
      w->z[2 * j + 1] = s < 0 ? ~(uint64_t)0 : 0;
    } else {
      ac_i128 s = dot128(Q, kd, sk, dk);
      w->z[2 * j] = (uint64_t)s;
      w->z[2 * j + 1] = (uint64_t)((ac_u128)s >> 64);
    }
    w->Zabs[j] = zabs(qa, kd, dk);
    w->Zb[j] = zblock(qb, kd, dk);
  }
  free(kbuf);
  free(Q);
  free(qa);
}

/* ---- groups of equal score (ac_or_groups' order: decreasing score, then key index) ---- */

typedef struct { ac_i128 k; int64_t j; } skey;

static inline int skey_lt(const skey *a, const skey *b) { return a->k < b->k || (a->k == b->k && a->j < b->j); }

/* Bottom-up merge sort, ascending by (k, j): the keys are distinct, so the order is unique. */
static void sort_skeys(skey *a, skey *tmp, int64_t n)
{
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = skey_lt(&a[j], &a[i]) ? a[j++] : a[i++];
      while (i < mid) tmp[k++] = a[i++];
      while (j < hi) tmp[k++] = a[j++];
    }
    skey *t = a; a = tmp; tmp = t;
    memcpy(tmp, a, (size_t)n * sizeof *a);   /* keep the result in both buffers */
  }
}

void ac_or_fast_groups(ac_or_ws *w)
{
  int64_t n = w->n;
  if (w->nl != 2 || w->sc.sign == 0 || n < 2) { ac_or_groups(w); return; }
  skey *a = ac_xmalloc((size_t)n * 2 * sizeof *a), *tmp = a + n;
  for (int64_t j = 0; j < n; j++) {
    ac_i128 z = (ac_i128)(((ac_u128)w->z[2 * j + 1] << 64) | w->z[2 * j]);
    a[j].k = w->sc.sign > 0 ? -z : z;   /* |z| < 2^126: no overflow */
    a[j].j = j;
  }
  sort_skeys(a, tmp, n);
  int64_t g = 0;
  w->gst[0] = 0;
  for (int64_t r = 0; r < n; r++) {
    if (r > 0 && a[r].k != a[r - 1].k) w->gst[++g] = r;
    w->ord[r] = a[r].j;
    w->gof[a[r].j] = g;
  }
  w->ng = g + 1;
  w->gst[w->ng] = n;
  free(a);
}
