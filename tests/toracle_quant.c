/* toracle_quant.c: the oracle on quantized K and V (and Q) agrees bit for bit with the brute force
 * of tests/toracle_ref.c, which reads every element from its codes and scales by the format's
 * formula (never through src/core's decoders), on adversarial blocks: a scale 0 (a block of
 * zeros), the smallest subnormal, the largest finite and an overflowed (inf) or NaN scale, NaN
 * codes of the fp8 formats, random codes over the whole range, extreme zero points, q4_1 and q5_1
 * blocks whose d q + m needs far more than binary32's 24 bits, outliers that zero the rest of a
 * block. Rows whose scores are all finite are compared in every column whose visible V is finite
 * (binary32 and binary64 roundings, the LSE); a row with a NaN score must accept NaN alone. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "quant.h"
#include "quant/qspecial.h"
#include "testutil.h"
#include "toracle_ref.h"
#include "dtype_mpfr.h"

#define NCASES 60   /* per format; x10 with ATTNCHECK_TEST_EXPENSIVE=1 */
#define PREC 4000

/* Adversarial edits of tensor x's codes and scales (then decoded again). how: 0 finite, 1 with
 * non-finite scales and codes, 2 tiny (every scale the smallest subnormal of its type, nvfp4's tensor
 * scale 2^-140: values below binary32's range). */
enum { EDIT_FINITE, EDIT_NONFINITE, EDIT_TINY };
static void perturb(ac_case *c, char x, ac_rng *r, int how)
{
  const int nonfinite = how == EDIT_NONFINITE;
  const ac_qspec *q;
  const ac_qfmt_info *f;
  int64_t ns, n;
  ac_qdata *t = ac_test_qtensor(c, x, &q, &f, &ns, &n);
  int mode = how == EDIT_TINY ? 1 : (int)ac_rng_below(r, 6);
  if (mode == 1) ac_test_qcodes_random(c, x, r);   /* codes over the whole range */
  for (int64_t s = 0; how == EDIT_TINY && s < ns; s++)
    ac_test_qset_scale(f, t, s, ac_test_qspecial_scale(f->sdtype, f->sdtype == AC_QSD_E8M0 ? 0 : 1));
  if (how == EDIT_TINY && f->aux == AC_QAUX_TSCALE) ac_store_bits(AC_F32, t->aux, 0, 0x200);   /* 2^-140 */
  for (int64_t s = 0; how != EDIT_TINY && s < ns; s++) {
    if (ac_rng_below(r, 4)) continue;
    int k = (int)ac_rng_below(r, nonfinite ? 5 : 3);
    ac_test_qset_scale(f, t, s, ac_test_qspecial_scale(f->sdtype, k));
    if (f->aux == AC_QAUX_MIN && ac_rng_below(r, 2))   /* a large min beside a tiny d: d q + m far past 24 bits */
      ac_store_bits(AC_F16, t->aux, (size_t)s, ac_rng_below(r, 2) ? 0x7bff : 0x5555);
    if (f->aux == AC_QAUX_ZERO && ac_rng_below(r, 2)) ((int8_t *)t->aux)[s] = ac_rng_below(r, 2) ? -128 : 127;
  }
  if (f->aux == AC_QAUX_TSCALE && mode == 2) ac_store_bits(AC_F32, t->aux, 0, ac_rng_below(r, 2) ? 1 : 0x7f7fffff);
  if (nonfinite) ac_test_qcodes_nan(c, x, r);
  ac_quant_decode(c, x);
}

/* A small case with q f32 and k, v of format fmt (a granularity drawn), sometimes q too. */
static void draw_case(ac_case *c, int fmt, ac_rng *r, int how)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  int64_t kvh = 1 + (int64_t)ac_rng_below(r, 2), H = kvh * (1 + (int64_t)ac_rng_below(r, 2));
  int64_t blk = f->block ? f->block : 1, dk = blk * (1 + (int64_t)ac_rng_below(r, f->block ? 2 : 6));
  int64_t dv = blk * (1 + (int64_t)ac_rng_below(r, f->block ? 2 : 3));
  ref_case(c, AC_F32, (ac_mask)ac_rng_below(r, 3), 1 + (int64_t)ac_rng_below(r, 2), H, kvh, 1 + (int64_t)ac_rng_below(r, 4),
           1 + (int64_t)ac_rng_below(r, 6), dk, dv);
  ac_counts n;
  ac_err e;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  double sk = ldexp(1.0, (int)ac_rng_range(r, -8, 4));
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, sk * ac_rng_normal(r) * (ac_rng_below(r, 40) ? 1 : 1e4));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(r));
  for (int i = 0; i < 3; i++) {
    if (i == 0 && ac_rng_below(r, 4)) continue;
    ac_qspec q = {fmt, (int)f->gran, f->gran == AC_QG_BLOCK ? f->block : 0};
    if (!f->block) {
      int g[4] = {AC_QG_TENSOR, AC_QG_HEAD, AC_QG_TOKEN, AC_QG_CHANNEL};
      q.gran = g[ac_rng_below(r, 4)];
    }
    ck_assert_msg(ac_quant_apply(c, "qkv"[i], &q, &e) == 0, "%s", e.msg);
    perturb(c, "qkv"[i], r, how);
  }
}

/* The row's visible scores in MPFR (IEEE rules for NaN and inf): 1 when one is NaN, 2 when one is
 * infinite, 0 when all are finite. */
static int score_kind(const ac_case *c, int64_t b, int64_t h, int64_t i)
{
  const ac_problem *p = &c->p;
  mpfr_t s, x, y;
  mpfr_inits2(256, s, x, y, (mpfr_ptr)0);
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  int kind = 0;
  for (int64_t j = 0; j < ac_visible_count(p, i); j++) {
    mpfr_set_zero(s, 1);
    for (int64_t t = 0; t < p->dk; t++) {
      ref_value(x, c, 'q', ac_qidx(p, b, h, i, t));
      ref_value(y, c, 'k', ac_kidx(p, b, ac_kv_head(p, h), j, t));
      mpfr_mul(x, x, y, MPFR_RNDN);
      mpfr_add(s, s, x, MPFR_RNDN);
    }
    if (mpfr_nan_p(s)) kind = 1;
    else if (mpfr_inf_p(s) && !kind) kind = 2;
  }
  mpfr_clears(s, x, y, (mpfr_ptr)0);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return kind;
}

static int column_finite(const ac_case *c, int64_t b, int64_t h, int64_t i, int64_t t)
{
  const ac_problem *p = &c->p;
  mpfr_t v;
  mpfr_init2(v, 64);
  int ok = 1;
  for (int64_t j = 0; j < ac_visible_count(p, i); j++) {
    ref_value(v, c, 'v', ac_vidx(p, b, ac_kv_head(p, h), j, t));
    ok &= mpfr_number_p(v) != 0;
  }
  mpfr_clear(v);
  return ok;
}

static void check_row(const ac_case *c, const ac_oracle_result *r, int64_t b, int64_t h, int64_t i, mpfr_t *o, mpfr_t lse,
                      int fmt, int k, int64_t *compared)
{
  const ac_problem *p = &c->p;
  int64_t row = (int64_t)ac_rowidx(p, b, h, i);
  const ac_oracle_row *orow = &r->rows[row];
  int kind = score_kind(c, b, h, i);
  if (!ac_visible_count(p, i)) return;
  if (kind == 1) {
    for (int64_t t = 0; t < p->dv; t++)
      ck_assert_msg(r->elems[row * p->dv + t].accept == AC_ACCEPT_NAN, AC_SEED_FMT "%s case %d row %lld: a NaN score, accept %d",
                    AC_SEED_ARG, ac_qfmt_name(fmt), k, (long long)row, r->elems[row * p->dv + t].accept);
    return;
  }
  if (kind) return;   /* infinite scores: the rule table, tested in toracle_inf */
  ref_row(c, b, h, i, PREC, o, lse, NULL);
  int amb;
  uint64_t l32 = ref_round_bits(AC_F32, lse, &amb);
  ck_assert_msg(amb || l32 == ac_encode_f64(AC_F32, orow->lse_f32), AC_SEED_FMT "%s case %d row %lld: LSE %a, reference %a",
                AC_SEED_ARG, ac_qfmt_name(fmt), k, (long long)row, (double)orow->lse_f32, ac_decode(AC_F32, l32));
  for (int64_t t = 0; t < p->dv; t++) {
    const ac_oracle_elem *el = &r->elems[row * p->dv + t];
    if (!column_finite(c, b, h, i, t)) {
      ck_assert_msg(el->accept & AC_ACCEPT_NAN, AC_SEED_FMT "%s case %d row %lld col %lld: non-finite V, accept %d",
                    AC_SEED_ARG, ac_qfmt_name(fmt), k, (long long)row, (long long)t, el->accept);
      continue;
    }
    ck_assert_int_eq(el->accept, AC_ACCEPT_VALUE);
    const ac_dtype fs[2] = {AC_F32, AC_F64};
    for (int q = 0; q < 2; q++) {
      if (!r->o_round[fs[q]]) continue;   /* a format the oracle was not asked for */
      uint64_t want = ref_round_bits(fs[q], o[t], &amb), got = r->o_round[fs[q]][row * p->dv + t];
      /* zeros of either sign: an exact zero is +0; and where scales of 2^38 leave weights of
       * e^(-10^38) the brute force underflows to a zero whose sign the oracle decides */
      if (amb || (ac_bits_iszero(fs[q], got) && ac_bits_iszero(fs[q], want))) continue;
      ck_assert_msg(got == want, AC_SEED_FMT "%s case %d row %lld col %lld %s: oracle %a, reference %a", AC_SEED_ARG,
                    ac_qfmt_name(fmt), k, (long long)row, (long long)t, ac_dtype_name(fs[q]), ac_decode(fs[q], got),
                    ac_decode(fs[q], want));
      (*compared)++;
    }
  }
}

/* ncases of format fmt drawn with the edits of how (every third non-finite for EDIT_FINITE), the
 * oracle asked for formats, each row against the brute force. */
static void check_format(int fmt, int how, uint32_t formats, int ncases)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), (uint64_t)0x7175616e74ull + (uint64_t)fmt + ((uint64_t)how << 8));
  if (ac_test_expensive()) ncases *= 10;
  int64_t compared = 0;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    draw_case(&c, fmt, &rng, how == EDIT_FINITE && k % 3 == 2 ? EDIT_NONFINITE : how);
    const ac_problem *p = &c.p;
    ac_oracle_result r;
    ref_oracle_lse(&c, formats, 1 + k % 2, (formats >> AC_F64) & 1u, &r);
    ck_assert_msg(r.n_unresolved == 0, AC_SEED_FMT "%s case %d: unresolved", AC_SEED_ARG, ac_qfmt_name(fmt), k);
    mpfr_t *o = malloc((size_t)p->dv * sizeof *o), lse;
    for (int64_t t = 0; t < p->dv; t++) mpfr_init2(o[t], PREC);
    mpfr_init2(lse, PREC);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t h = 0; h < p->heads; h++)
        for (int64_t i = 0; i < p->tq; i++) check_row(&c, &r, b, h, i, o, lse, fmt, k, &compared);
    for (int64_t t = 0; t < p->dv; t++) mpfr_clear(o[t]);
    mpfr_clear(lse);
    free(o);
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
  ck_assert_msg(compared > 2 * ncases, AC_SEED_FMT "%s: only %lld roundings compared", AC_SEED_ARG, ac_qfmt_name(fmt),
                (long long)compared);
  mpfr_free_cache();
}

START_TEST(brute_every_format) { check_format(AC_QF_Q8_0 + _i, EDIT_FINITE, (1u << AC_F32) | (1u << AC_F64), NCASES); }
END_TEST

/* Every scale the smallest subnormal of its type (fp8 and int values down to 2^-159, nvfp4's down to
 * 2^-150 with a tensor scale 2^-140, mxfp4's exponent 0), codes over the whole range, and the oracle asked for
 * binary32 alone as `attncheck oracle` asks it: such heads leave the binary64 pass for the MPFR
 * levels (a SIGSEGV there once: their prefix sums of |V| were missing); the roundings agree with the
 * brute force. */
START_TEST(brute_tiny_scales_f32) { check_format(AC_QF_Q8_0 + _i, EDIT_TINY, 1u << AC_F32, NCASES / 4); }
END_TEST

/* q4_1 values need binary64: d = 2^-24 (a subnormal f16), m = 65504, q = 15 gives 65504 + 15 2^-24,
 * 40 significant bits; the oracle keeps all of them (a binary32 dequantization would not). */
START_TEST(q4_1_value_beyond_binary32)
{
  ac_case c;
  ref_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 1, 1, 32, 32);
  ac_err e;
  c.p.quant[1] = (ac_qspec){AC_QF_Q4_1, AC_QG_BLOCK, 32};
  ck_assert_msg(ac_quant_alloc(&c, &e) == 0, "%s", e.msg);
  ac_store_bits(AC_F16, c.quant->t[1].scales, 0, 1);
  ac_store_bits(AC_F16, c.quant->t[1].aux, 0, 0x7bff);
  for (int t = 0; t < 32; t++) c.quant->t[1].codes[t] = 15;
  ac_quant_decode(&c, 'k');
  ck_assert(((double *)c.k)[0] == 65504.0 + 15 * 0x1p-24);
  mpfr_t v;
  mpfr_init2(v, 128);
  ref_value(v, &c, 'k', 0);
  ck_assert(mpfr_cmp_d(v, 65504.0 + 15 * 0x1p-24) == 0);
  mpfr_clear(v);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_quant");
  TCase *tc = tcase_create("brute");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, brute_every_format, 0, AC_QF_N - AC_QF_Q8_0);
  tcase_add_loop_test(tc, brute_tiny_scales_f32, 0, AC_QF_N - AC_QF_Q8_0);
  tcase_add_test(tc, q4_1_value_beyond_binary32);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
