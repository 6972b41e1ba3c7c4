/* tdtype_ref.c: MPFR references for the dtype tests (independent of src/core/dtype.c). */
#include "config.h"
#include "tdtype_ref.h"
#include <stdio.h>

/* prec = m + 1; emax = 2^(expbits-1) (e4m3: one more binade, top code NaN); emin = 1 - bias - m + 1
 * (MPFR's exponent of the smallest subnormal 2^(1-bias-m) is 2 - bias - m). */
const ref_fmt ref_fmts[REF_N] = {
  [REF_F64] = {"f64", 64, 52, 1023, 11, 0, 53, 2 - 1023 - 52, 1024},
  [REF_F32] = {"f32", 32, 23, 127, 8, 0, 24, 2 - 127 - 23, 128},
  [REF_F16] = {"f16", 16, 10, 15, 5, 0, 11, 2 - 15 - 10, 16},
  [REF_BF16] = {"bf16", 16, 7, 127, 8, 0, 8, 2 - 127 - 7, 128},
  [REF_E4M3] = {"e4m3", 8, 3, 7, 4, 1, 4, 2 - 7 - 3, 9},
  [REF_E5M2] = {"e5m2", 8, 2, 15, 5, 0, 3, 2 - 15 - 2, 16},
};

int ref_read_bits(mpfr_t x, int f, uint64_t bits, int *quiet)
{
  const ref_fmt *F = &ref_fmts[f];
  const int neg = (int)((bits >> (F->nbits - 1)) & 1);
  const uint64_t E = (bits >> F->m) & ((1ULL << F->expbits) - 1);
  const uint64_t M = bits & ((1ULL << F->m) - 1);
  const uint64_t Emax = (1ULL << F->expbits) - 1;
  if (quiet) *quiet = 0;
  if (F->e4m3 && E == Emax && M == (1ULL << F->m) - 1) {
    mpfr_set_nan(x);
    if (quiet) *quiet = 1;
    return REF_NAN;
  }
  if (!F->e4m3 && E == Emax) {
    if (M == 0) {
      mpfr_set_inf(x, neg ? -1 : 1);
      return REF_INF;
    }
    mpfr_set_nan(x);
    if (quiet) *quiet = (int)((M >> (F->m - 1)) & 1);
    return REF_NAN;
  }
  /* value = M * 2^(1 - bias - m) for E = 0, (2^m + M) * 2^(E - bias - m) otherwise */
  if (E == 0) {
    mpfr_set_ui_2exp(x, (unsigned long)M, 1 - F->bias - F->m, MPFR_RNDN);
  } else {
    mpfr_set_ui(x, 1, MPFR_RNDN);
    mpfr_mul_2ui(x, x, (unsigned long)F->m, MPFR_RNDN);
    mpfr_add_ui(x, x, (unsigned long)M, MPFR_RNDN);
    mpfr_mul_2si(x, x, (long)E - F->bias - F->m, MPFR_RNDN);
  }
  if (neg) mpfr_neg(x, x, MPFR_RNDN);
  return REF_FINITE;
}

void ref_round(mpfr_t r, int f, const mpfr_t x)
{
  const ref_fmt *F = &ref_fmts[f];
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(F->emin);
  mpfr_set_emax(F->emax);
  int inex = mpfr_set(r, x, MPFR_RNDN);
  inex = mpfr_check_range(r, inex, MPFR_RNDN);
  mpfr_subnormalize(r, inex, MPFR_RNDN);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
}

void ref_round_d(mpfr_t r, int f, double x)
{
  const ref_fmt *F = &ref_fmts[f];
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(F->emin);
  mpfr_set_emax(F->emax);
  int inex = mpfr_set_d(r, x, MPFR_RNDN);
  inex = mpfr_check_range(r, inex, MPFR_RNDN);
  mpfr_subnormalize(r, inex, MPFR_RNDN);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
}

int ref_is_quiet_nan(int f, uint64_t bits, int neg)
{
  const ref_fmt *F = &ref_fmts[f];
  MPFR_DECL_INIT(x, 64);
  int quiet;
  int kind = ref_read_bits(x, f, bits, &quiet);
  return kind == REF_NAN && quiet && (int)((bits >> (F->nbits - 1)) & 1) == neg;
}

int ref_bits_match(int f, uint64_t bits, const mpfr_t r, int e4m3_nan_on_overflow, char *why, size_t n)
{
  const ref_fmt *F = &ref_fmts[f];
  const int neg = mpfr_signbit(r) != 0;
  MPFR_DECL_INIT(got, 64);
  int quiet;
  int kind = ref_read_bits(got, f, bits, &quiet);
  const int gneg = (int)((bits >> (F->nbits - 1)) & 1);
  if (F->e4m3 && (mpfr_inf_p(r) || mpfr_cmpabs_ui(r, 448) > 0)) {
    /* overflow: saturate to ±448 (0x7e) or NaN (0x7f) */
    uint64_t want = ((uint64_t)neg << 7) | (e4m3_nan_on_overflow ? 0x7f : 0x7e);
    if (bits == want) return 1;
    snprintf(why, n, "e4m3 overflow: expected 0x%02llx", (unsigned long long)want);
    return 0;
  }
  if (kind == REF_NAN) {
    snprintf(why, n, "got a NaN");
    return 0;
  }
  if (gneg != neg) {
    snprintf(why, n, "sign differs");
    return 0;
  }
  if (mpfr_inf_p(r) != (kind == REF_INF) || (!mpfr_inf_p(r) && !mpfr_equal_p(got, r))) {
    mpfr_snprintf(why, n, "value %Ra, expected %Ra", got, r);
    return 0;
  }
  return 1;
}

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  ref_tested_fn tested;
  ref_block_fn ref;
  uint64_t lo, hi;          /* [lo, hi) of the 2^32 inputs */
  uint64_t bad;
  uint32_t bad_in;
  uint16_t bad_got, bad_want;
} exh_job;

enum { EXH_BLOCK = 4096 };

static void *exh_run(void *arg)
{
  exh_job *j = arg;
  float x[EXH_BLOCK];
  uint16_t want[EXH_BLOCK];
  for (uint64_t base = j->lo; base < j->hi; base += EXH_BLOCK) {
    for (int i = 0; i < EXH_BLOCK; i++) {
      uint32_t u = (uint32_t)(base + (uint64_t)i);
      memcpy(&x[i], &u, sizeof u);
    }
    j->ref(x, want, EXH_BLOCK);
    for (int i = 0; i < EXH_BLOCK; i++) {
      uint16_t got = j->tested(x[i]);
      if (got != want[i]) {
        if (!j->bad) {
          j->bad_in = (uint32_t)(base + (uint64_t)i);
          j->bad_got = got;
          j->bad_want = want[i];
        }
        j->bad++;
      }
    }
  }
  return NULL;
}

int ref_test_threads(void)
{
  const char *s = getenv("ATTNCHECK_TEST_THREADS");
  int n = s && *s ? atoi(s) : 2;
  return n < 1 ? 1 : n > 64 ? 64 : n;
}

uint64_t ref_exhaustive_f32(ref_tested_fn tested, ref_block_fn ref, int nthreads, uint32_t *bad_in,
                            uint16_t *bad_got, uint16_t *bad_want)
{
  const uint64_t total = 1ULL << 32, nblocks = total / EXH_BLOCK;
  exh_job jobs[64];
  pthread_t th[64];
  for (int t = 0; t < nthreads; t++) {
    jobs[t] = (exh_job){tested, ref, nblocks * (uint64_t)t / (uint64_t)nthreads * EXH_BLOCK,
                        nblocks * (uint64_t)(t + 1) / (uint64_t)nthreads * EXH_BLOCK, 0, 0, 0, 0};
    if (t > 0 && pthread_create(&th[t], NULL, exh_run, &jobs[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      abort();
    }
  }
  exh_run(&jobs[0]);
  uint64_t bad = 0;
  int reported = 0;
  for (int t = 0; t < nthreads; t++) {
    if (t > 0) pthread_join(th[t], NULL);
    bad += jobs[t].bad;
    if (jobs[t].bad && !reported) {
      *bad_in = jobs[t].bad_in;
      *bad_got = jobs[t].bad_got;
      *bad_want = jobs[t].bad_want;
      reported = 1;
    }
  }
  return bad;
}

#include <math.h>
#include "rng.h"

static uint64_t check_one_f32(int f, ref_tested_fn tested, float x, mpfr_t r, char *msg, size_t n, uint64_t bad)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint16_t got = tested(x);
  char why[256];
  int ok;
  if (isnan(x)) {
    ok = ref_is_quiet_nan(f, got, (int)(u >> 31));
    snprintf(why, sizeof why, "expected a quiet NaN of the same sign");
  } else {
    ref_round_d(r, f, (double)x);
    ok = ref_bits_match(f, got, r, 0, why, sizeof why);
  }
  if (!ok && !bad)
    snprintf(msg, n, "%s from binary32 0x%08x (%a): got 0x%04x: %s", ref_fmts[f].name, u, (double)x, got, why);
  return ok ? 0 : 1;
}

uint64_t ref_halfway_f32(int f, ref_tested_fn tested, char *msg, size_t n)
{
  const ref_fmt *F = &ref_fmts[f];
  const uint64_t top = (((1ULL << F->expbits) - 1) << F->m) - 1;   /* largest finite positive code */
  mpfr_t lo, hi, mid, r;
  mpfr_inits2(64, lo, hi, mid, (mpfr_ptr)0);
  mpfr_init2(r, F->prec);
  uint64_t bad = 0;
  for (uint64_t h = 0; h <= top; h++) {
    ref_read_bits(lo, f, h, NULL);
    if (h == top) mpfr_set_ui_2exp(hi, 1, F->emax, MPFR_RNDN);   /* the overflow threshold's other side */
    else ref_read_bits(hi, f, h + 1, NULL);
    mpfr_add(mid, lo, hi, MPFR_RNDN);
    mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
    float m = mpfr_get_flt(mid, MPFR_RNDN);
    if (mpfr_cmp_d(mid, (double)m) != 0) {
      snprintf(msg, n, "test bug: midpoint above code 0x%llx not a binary32", (unsigned long long)h);
      return bad + 1;
    }
    for (int s = 0; s < 2; s++) {
      float c = s ? -m : m;
      const float xs[3] = {c, nextafterf(c, -INFINITY), nextafterf(c, INFINITY)};
      for (int k = 0; k < 3; k++) bad += check_one_f32(f, tested, xs[k], r, msg, n, bad);
      uint16_t got = tested(c);
      if (got & 1) {
        if (!bad) snprintf(msg, n, "%s: exact midpoint %a rounded to odd code 0x%04x", F->name, (double)c, got);
        bad++;
      }
    }
  }
  mpfr_clears(lo, hi, mid, r, (mpfr_ptr)0);
  return bad;
}

uint64_t ref_sample_f32(int f, ref_tested_fn tested, uint64_t count, uint64_t seed, char *msg, size_t n)
{
  const ref_fmt *F = &ref_fmts[f];
  ac_rng g;
  ac_rng_init(&g, seed, 7);
  mpfr_t r;
  mpfr_init2(r, F->prec);
  uint64_t bad = 0;
  /* binary32 biased exponents covering the format's range +- 4 binades */
  int elo = F->emin - 1 + 127 - 4, ehi = F->emax - 1 + 127 + 4;
  if (elo < 0) elo = 0;
  if (ehi > 255) ehi = 255;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t u = (uint32_t)ac_rng_next(&g);
    if (i & 1) u = (u & 0x807fffffu) | ((uint32_t)ac_rng_range(&g, elo, ehi) << 23);
    float x;
    memcpy(&x, &u, sizeof x);
    bad += check_one_f32(f, tested, x, r, msg, n, bad);
  }
  mpfr_clear(r);
  return bad;
}
