/* scores.c: exact scores z_j = q·k_j by integer fixed-point accumulation (docs/numerics.md §2).
 *
 * Every finite value is M·2^e (|M| < 2^53), so a product is (Mq·Mk)·2^(eq+ek), an integer
 * below 2^106 times a power of two, and the dk products of one score add exactly in fixed
 * point with the least significant bit at the smallest eq + ek. When the row's window
 * (largest product bit - smallest + log2 dk + sign) fits 126 bits one __int128 holds the
 * sum; otherwise (fp64, wide fp32 ranges) 64-bit chunks in __int128 take the shifted
 * products and are carry-normalized once per key. Both are exact; the choice only changes
 * the speed. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"
#include "casefile.h"

int ac_or_scale_init(ac_or_scale *s, const ac_problem *p, ac_err *e)
{
  memset(s, 0, sizeof *s);
  s->dk = p->dk;
  if (p->scale_is_default) {
    s->is_default = 1;
    s->sign = 1;
    int64_t k = (int64_t)floor(sqrt((double)p->dk));
    while (k * k > p->dk) k--;
    while ((k + 1) * (k + 1) <= p->dk) k++;
    if (k * k != p->dk) s->kind = AC_SCALE_IRRATIONAL;
    else s->kind = (k & (k - 1)) == 0 ? AC_SCALE_DYADIC : AC_SCALE_RATIONAL;
    s->approx = 1.0 / sqrt((double)p->dk);
    return 0;
  }
  if (!isfinite(p->scale)) return ac_err_set(e, "the scale %a is not finite", p->scale);
  s->stored = p->scale;
  s->approx = p->scale;
  s->kind = AC_SCALE_DYADIC;
  s->sign = p->scale > 0 ? 1 : p->scale < 0 ? -1 : 0;
  return 0;
}

void ac_or_scale_interval(const ac_or_scale *s, mpfr_t lo, mpfr_t hi)
{
  if (!s->is_default) {
    mpfr_set_d(lo, s->stored, MPFR_RNDD);
    mpfr_set_d(hi, s->stored, MPFR_RNDU);
    return;
  }
  mpfr_t d;
  mpfr_init2(d, 64);
  mpfr_set_si(d, (long)s->dk, MPFR_RNDN);
  mpfr_rec_sqrt(lo, d, MPFR_RNDD);
  mpfr_rec_sqrt(hi, d, MPFR_RNDU);
  mpfr_clear(d);
}

static void grow64(int64_t **a, int64_t n) { *a = ac_xrealloc(*a, (size_t)n * sizeof **a); }

void ac_or_head_free(ac_or_head *hd)
{
  free(hd->km); free(hd->ke); free(hd->kd); free(hd->kown); free(hd->kbad);
  free(hd->vm); free(hd->ve); free(hd->vd); free(hd->vown); free(hd->vcls);
  free(hd->v_lsb); free(hd->v_msb); free(hd->v_any); free(hd->vabs);
  memset(hd, 0, sizeof *hd);
  hd->b = hd->kvh = -1;
}

void ac_or_head_load(ac_or_ws *w, int64_t b, int64_t kvh)
{
  if (!(w->own.b == b && w->own.kvh == kvh && w->own.cap_k)) ac_or_head_decode(&w->own, w->cs, b, kvh);
  w->head = &w->own;
}

void ac_or_head_finish_k(ac_or_head *hd, int64_t tk, int64_t dk, int32_t lsb, int32_t msb)
{
  hd->k_any = lsb != INT32_MAX;
  hd->k_l1max = ac_or_k_l1max(hd, tk, dk);
  hd->k_lsb = hd->k_any ? lsb : 0;
  hd->k_msb = hd->k_any ? msb : 0;
  if (hd->km)
    for (int64_t x = 0; x < tk * dk; x++)
      if (!hd->km[x]) hd->ke[x] = hd->k_lsb;   /* keeps every shift non-negative (ac_or_k alike) */
}

void ac_or_head_decode(ac_or_head *hd, const ac_case *cs, int64_t b, int64_t kvh)
{
  const ac_problem *p = &cs->p;
  int64_t nk = p->tk * p->dk, nv = p->tk * p->dv;
  free(hd->kown); free(hd->vown);   /* binary64 here: kd and vd */
  hd->kown = NULL; hd->vown = NULL; hd->kf = NULL; hd->vf = NULL;
  if (nk > hd->cap_k) {
    grow64(&hd->km, nk);
    hd->ke = ac_xrealloc(hd->ke, (size_t)nk * sizeof *hd->ke);
    hd->kd = ac_xrealloc(hd->kd, (size_t)nk * sizeof *hd->kd);
    hd->kbad = ac_xrealloc(hd->kbad, (size_t)p->tk);
    hd->cap_k = nk;
  }
  if (nv > hd->cap_v) {
    grow64(&hd->vm, nv);
    hd->ve = ac_xrealloc(hd->ve, (size_t)nv * sizeof *hd->ve);
    hd->vd = ac_xrealloc(hd->vd, (size_t)nv * sizeof *hd->vd);
    hd->vcls = ac_xrealloc(hd->vcls, (size_t)nv);
    hd->vabs = ac_xrealloc(hd->vabs, (size_t)(nv + p->dv) * sizeof *hd->vabs);
    hd->v_lsb = ac_xrealloc(hd->v_lsb, (size_t)p->dv * sizeof *hd->v_lsb);
    hd->v_msb = ac_xrealloc(hd->v_msb, (size_t)p->dv * sizeof *hd->v_msb);
    hd->v_any = ac_xrealloc(hd->v_any, (size_t)p->dv);
    hd->cap_v = nv;
  }
  /* the values the formula uses: each tensor's dtype, times its descale (1 for plain cases) */
  ac_dtype dt = ac_or_tdtype(p, 'k');
  double ds = ac_or_descale(cs, 'k', b, kvh);
  int32_t lsb = INT32_MAX, msb = INT32_MIN;
  for (int64_t j = 0; j < p->tk; j++) {
    uint8_t bad = 0;
    for (int64_t t = 0; t < p->dk; t++) {
      size_t x = (size_t)(j * p->dk + t);
      double d = ac_decode(dt, ac_load_bits(dt, cs->k, ac_kidx(p, b, kvh, j, t))) * ds;
      hd->km[x] = 0; hd->ke[x] = 0; hd->kd[x] = 0;
      if (isnan(d)) { bad = 1; continue; }
      if (isinf(d)) { if (!bad) bad = 2; continue; }
      hd->kd[x] = d;
      ac_or_split(d, &hd->km[x], &hd->ke[x]);
      if (hd->km[x]) {
        int32_t top = hd->ke[x] + ac_or_bitlen((uint64_t)llabs(hd->km[x]));
        if (hd->ke[x] < lsb) lsb = hd->ke[x];
        if (top > msb) msb = top;
      }
    }
    hd->kbad[j] = bad;
  }
  ac_or_head_finish_k(hd, p->tk, p->dk, lsb, msb);

  for (int64_t t = 0; t < p->dv; t++) { hd->v_lsb[t] = INT32_MAX; hd->v_msb[t] = INT32_MIN; }
  dt = ac_or_tdtype(p, 'v');
  ds = ac_or_descale(cs, 'v', b, kvh);
  for (int64_t j = 0; j < p->tk; j++)
    for (int64_t t = 0; t < p->dv; t++) {
      size_t x = (size_t)(j * p->dv + t);
      double d = ac_decode(dt, ac_load_bits(dt, cs->v, ac_vidx(p, b, kvh, j, t))) * ds;
      hd->vm[x] = 0; hd->ve[x] = 0; hd->vd[x] = 0;
      if (isnan(d)) { hd->vcls[x] = AC_VCLS_NAN; continue; }
      if (isinf(d)) {
        hd->vcls[x] = d > 0 ? AC_VCLS_PINF : AC_VCLS_NINF;
        continue;
      }
      hd->vcls[x] = AC_VCLS_FINITE;
      hd->vd[x] = d;
      ac_or_split(d, &hd->vm[x], &hd->ve[x]);
      if (hd->vm[x]) {
        int32_t top = hd->ve[x] + ac_or_bitlen((uint64_t)llabs(hd->vm[x]));
        if (hd->ve[x] < hd->v_lsb[t]) hd->v_lsb[t] = hd->ve[x];
        if (top > hd->v_msb[t]) hd->v_msb[t] = top;
      }
    }
  for (int64_t t = 0; t < p->dv; t++) {
    hd->v_any[t] = hd->v_lsb[t] != INT32_MAX;
    if (!hd->v_any[t]) { hd->v_lsb[t] = 0; hd->v_msb[t] = 0; }
  }
  for (int64_t j = 0; j < p->tk; j++)
    for (int64_t t = 0; t < p->dv; t++) {
      size_t x = (size_t)(j * p->dv + t);
      if (!hd->vm[x]) hd->ve[x] = hd->v_lsb[t];
    }
  /* prefix sums of |V| (exact; used only where the column window fits 126 bits) */
  for (int64_t t = 0; t < p->dv; t++) hd->vabs[t] = 0;
  for (int64_t j = 0; j < p->tk; j++)
    for (int64_t t = 0; t < p->dv; t++) {
      size_t x = (size_t)(j * p->dv + t);
      int fits = ac_or_vcol_bits(hd, t, p->tk, 0) <= 126;
      ac_i128 a = fits ? (ac_i128)((ac_u128)(uint64_t)llabs(hd->vm[x]) << (hd->ve[x] - hd->v_lsb[t])) : 0;
      hd->vabs[x + (size_t)p->dv] = hd->vabs[x] + a;
    }
  hd->b = b;
  hd->kvh = kvh;
}

int ac_or_row_q(ac_or_ws *w, int64_t b, int64_t h, int64_t i)
{
  const ac_problem *p = w->p;
  int bad = 0;
  w->b = b; w->h = h; w->i = i;
  ac_dtype dt = ac_or_tdtype(p, 'q');
  double ds = ac_or_descale(w->cs, 'q', b, ac_kv_head(p, h));
  for (int64_t t = 0; t < p->dk; t++) {
    double d = ac_decode(dt, ac_load_bits(dt, w->cs->q, ac_qidx(p, b, h, i, t))) * ds;
    w->qm[t] = 0; w->qe[t] = 0; w->qd[t] = 0;
    if (isnan(d)) { bad = 1; continue; }
    if (isinf(d)) { if (!bad) bad = 2; continue; }
    w->qd[t] = d;
    ac_or_split(w->qd[t], &w->qm[t], &w->qe[t]);
  }
  return bad;
}

void ac_or_fx_norm(const ac_i128 *acc, int nc, uint64_t *limbs)
{
  ac_i128 carry = 0;
  for (int k = 0; k < nc; k++) {
    ac_i128 v = acc[k] + carry;
    limbs[k] = (uint64_t)v;
    carry = (v - (ac_i128)(uint64_t)v) / ((ac_i128)1 << 64);
  }
  AC_ASSERT(carry == ((int64_t)limbs[nc - 1] < 0 ? -1 : 0), "the sum fits its chunks (no carry out of the top limb)");
}

void ac_or_ensure_rows(ac_or_ws *w, int64_t n, int nl)
{
  if (n > w->cap_n || nl > w->cap_nl) {
    int64_t cn = n > w->cap_n ? n : w->cap_n;
    int cl = nl > w->cap_nl ? nl : w->cap_nl;
    w->z = ac_xrealloc(w->z, (size_t)cn * (size_t)cl * sizeof *w->z);
    w->cap_nl = cl;
  }
  if (n > w->cap_n) {
    w->Zabs = ac_xrealloc(w->Zabs, (size_t)n * sizeof *w->Zabs);
    w->Zb = ac_xrealloc(w->Zb, (size_t)n * sizeof *w->Zb);
    w->ord = ac_xrealloc(w->ord, (size_t)n * sizeof *w->ord);
    w->gst = ac_xrealloc(w->gst, (size_t)(n + 1) * sizeof *w->gst);
    w->gof = ac_xrealloc(w->gof, (size_t)n * sizeof *w->gof);
    w->cap_n = n;
  }
}

const uint64_t *ac_or_z(const ac_or_ws *w, int64_t j) { return w->z + (size_t)j * (size_t)w->nl; }

void ac_or_row_scores(ac_or_ws *w)
{
  const ac_problem *p = w->p;
  const ac_or_head *hd = w->head;
  int64_t n = w->n, dk = p->dk;
  int32_t qlsb = INT32_MAX, qmsb = INT32_MIN;
  for (int64_t t = 0; t < dk; t++)
    if (w->qm[t]) {
      int32_t top = w->qe[t] + ac_or_bitlen((uint64_t)llabs(w->qm[t]));
      if (w->qe[t] < qlsb) qlsb = w->qe[t];
      if (top > qmsb) qmsb = top;
    }
  int any = qlsb != INT32_MAX && hd->k_any;
  for (int64_t t = 0; t < dk; t++)
    if (!w->qm[t]) w->qe[t] = any ? qlsb : 0;

  ac_or_ensure_rows(w, n, 1);
  /* Z_j and Zb_j: budget terms only (a few percent suffice); long double keeps fp64 in range. */
  double *kbuf = ac_xmalloc((size_t)dk * 2 * sizeof *kbuf); /* a key widened from binary32 */
  double *qb = kbuf + dk;
  ac_or_qblock_max(w->qd, dk, qb);
  for (int64_t j = 0; j < n; j++) {
    const double *kd = ac_or_krow(hd, j, dk, kbuf);
    if (p->dtype == AC_F64 || ac_or_tdtype(p, 'q') == AC_F64 || ac_or_tdtype(p, 'k') == AC_F64) {
      long double s = 0, sb = 0;
      for (int64_t t = 0; t < dk; t++) {
        s += fabsl((long double)w->qd[t] * kd[t]);
        sb += fabsl((long double)qb[t] * kd[t]);
      }
      w->Zabs[j] = s;
      w->Zb[j] = sb;
    } else {
      double s = 0, sb = 0;
      for (int64_t t = 0; t < dk; t++) {
        s += fabs(w->qd[t] * kd[t]);
        sb += qb[t] * fabs(kd[t]);
      }
      w->Zabs[j] = s;
      w->Zb[j] = sb;
    }
  }
  free(kbuf);

  if (!any) {   /* every product is zero */
    w->nl = 1;
    w->zlsb = 0;
    ac_or_ensure_rows(w, n, 1);
    memset(w->z, 0, (size_t)n * sizeof *w->z);
    return;
  }
  int32_t lsb = qlsb + hd->k_lsb;
  int64_t bits = (int64_t)qmsb + hd->k_msb - lsb + ac_or_bitlen((uint64_t)dk) + 1;
  w->zlsb = lsb;
  if (bits <= 126) {
    w->nl = 2;
    ac_or_ensure_rows(w, n, 2);
    for (int64_t j = 0; j < n; j++) {
      ac_i128 s = 0;
      for (int64_t t = 0; t < dk; t++) {
        int32_t ke;
        ac_i128 P = (ac_i128)w->qm[t] * ac_or_k(hd, (size_t)(j * dk + t), &ke);
        AC_ASSERT(w->qe[t] + ke - lsb >= 0 && w->qe[t] + ke - lsb < 126, "a product lies in the row's window");
        s += (ac_i128)((ac_u128)P << (w->qe[t] + ke - lsb));
      }
      w->z[2 * j] = (uint64_t)s;
      w->z[2 * j + 1] = (uint64_t)((ac_u128)s >> 64);
    }
    return;
  }
  int nc = ac_or_fx_chunks(bits);
  if (nc > w->cap_acc) {
    w->acc = ac_xrealloc(w->acc, (size_t)nc * sizeof *w->acc);
    w->cap_acc = nc;
  }
  w->nl = nc;
  ac_or_ensure_rows(w, n, nc);
  for (int64_t j = 0; j < n; j++) {
    memset(w->acc, 0, (size_t)nc * sizeof *w->acc);
    for (int64_t t = 0; t < dk; t++) {
      int32_t ke;
      ac_i128 P = (ac_i128)w->qm[t] * ac_or_k(hd, (size_t)(j * dk + t), &ke);
      if (!P) continue;
      int neg = P < 0;
      ac_or_fx_add(w->acc, nc, (ac_u128)(neg ? -P : P), neg, w->qe[t] + ke - lsb);
    }
    ac_or_fx_norm(w->acc, nc, w->z + (size_t)j * (size_t)nc);
  }
}

int ac_or_fx_sign(const uint64_t *a, int nl)
{
  if ((int64_t)a[nl - 1] < 0) return -1;
  for (int k = 0; k < nl; k++)
    if (a[k]) return 1;
  return 0;
}

int ac_or_fx_cmp(const uint64_t *a, const uint64_t *b, int nl)
{
  int64_t x = (int64_t)a[nl - 1], y = (int64_t)b[nl - 1];
  if (x != y) return x < y ? -1 : 1;
  for (int k = nl - 2; k >= 0; k--)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

/* Magnitude of a two's complement number into mag; returns 1 if negative. */
static int fx_abs(const uint64_t *a, int nl, uint64_t *mag)
{
  int neg = (int64_t)a[nl - 1] < 0;
  if (!neg) { memcpy(mag, a, (size_t)nl * sizeof *mag); return 0; }
  unsigned carry = 1;
  for (int k = 0; k < nl; k++) {
    uint64_t v = ~a[k] + carry;
    carry = carry && v == 0;
    mag[k] = v;
  }
  return 1;
}

void ac_or_fx_to_mpfr(ac_or_ws *w, mpfr_t x, const uint64_t *a, const uint64_t *b, int nl, int32_t lsb)
{
  uint64_t d[nl], mag[nl];
  if (b) {
    ac_or_fx_sub(a, b, d, nl);
  } else {
    memcpy(d, a, (size_t)nl * sizeof *d);
  }
  int neg = fx_abs(d, nl, mag);
  mpz_import(w->zt, (size_t)nl, -1, sizeof(uint64_t), 0, 0, mag);
  if (neg) mpz_neg(w->zt, w->zt);
  mpfr_prec_t need = (mpfr_prec_t)nl * 64 + 2;
  if (mpfr_get_prec(x) < need) mpfr_set_prec(x, need);
  AC_EXACT(mpfr_set_z_2exp(x, w->zt, lsb, MPFR_RNDN), "x holds the nl limbs (extended exponent range)");
}

long double ac_or_fx_to_ld(const uint64_t *a, int nl, int32_t lsb)
{
  uint64_t mag[nl];
  int neg = fx_abs(a, nl, mag);
  int k = nl - 1;
  while (k >= 0 && !mag[k]) k--;
  if (k < 0) return 0;
  long double v = (long double)mag[k];
  if (k > 0) v += ldexpl((long double)mag[k - 1], -64);
  v = ldexpl(v, lsb + 64 * k);
  return neg ? -v : v;
}
