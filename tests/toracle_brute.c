/* toracle_brute.c: the oracle agrees bit for bit with a brute-force 4000-bit evaluation on
 * random small cases in every dtype, for every output format and for LSE in binary32 and
 * binary64. A reference value within 2^-3900 (relative) of a rounding breakpoint is
 * ambiguous for the brute force (an exact case, or a tie tipped by weights far below
 * 2^-3900) and is skipped here; toracle_exact covers those. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "dtype_mpfr.h"

#define NCASES 200          /* per dtype; x10 with ATTNCHECK_TEST_EXPENSIVE=1 */
#define PREC 4000

static void check_dtype(ac_dtype dt)
{
  ac_rng rng;
  ac_rng_init(&rng, ac_test_seed(), 0x62727574 + (uint64_t)dt);
  int64_t elems = 0, ambiguous = 0, rounded = 0;
  int ncases = ac_test_expensive() ? 10 * NCASES : NCASES;
  for (int k = 0; k < ncases; k++) {
    ac_case c;
    ref_random_case(&c, dt, &rng);
    const ac_problem *p = &c.p;
    ac_oracle_result r;
    ref_oracle(&c, (1u << AC_NDTYPES) - 1, 1, &r);
    if (r.n_unresolved) {
      ac_err e;
      char path[256];
      snprintf(path, sizeof path, "%s/unresolved-%s-%d.npz", ac_test_tmpdir(), ac_dtype_name(dt), k);
      if (ac_case_write(&c, path, &e) == 0) fprintf(stderr, "case written to %s\n", path);
    }
    ck_assert_msg(r.n_unresolved == 0, AC_SEED_FMT "%s case %d: %lld unresolved", AC_SEED_ARG, ac_dtype_name(dt), k,
                  (long long)r.n_unresolved);
    mpfr_t *o = malloc((size_t)p->dv * sizeof *o), lse;
    for (int64_t t = 0; t < p->dv; t++) mpfr_init2(o[t], PREC);
    mpfr_init2(lse, PREC);
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t h = 0; h < p->heads; h++)
        for (int64_t i = 0; i < p->tq; i++) {
          int64_t row = (int64_t)ac_rowidx(p, b, h, i);
          int64_t n = ref_row(&c, b, h, i, PREC, o, lse, NULL);
          const ac_oracle_row *orow = &r.rows[row];
          ck_assert_int_eq(orow->visible, n);
          if (!n) {
            ck_assert_int_eq(orow->lse_accept, AC_ACCEPT_EMPTY);
            continue;
          }
          int amb;
          uint64_t l32 = ref_round_bits(AC_F32, lse, &amb);
          ck_assert_msg(amb || l32 == ac_encode_f64(AC_F32, orow->lse_f32),
                        AC_SEED_FMT "%s case %d row %lld: LSE %a, reference %a", AC_SEED_ARG, ac_dtype_name(dt), k,
                        (long long)row, (double)orow->lse_f32, ac_decode(AC_F32, l32));
          uint64_t l64 = ref_round_bits(AC_F64, lse, &amb);
          ck_assert_msg(amb || l64 == ac_encode_f64(AC_F64, orow->lse_f64),
                        AC_SEED_FMT "%s case %d row %lld: LSE f64 %a, reference %a", AC_SEED_ARG, ac_dtype_name(dt),
                        k, (long long)row, orow->lse_f64, ac_decode(AC_F64, l64));
          for (int64_t t = 0; t < p->dv; t++) {
            const ac_oracle_elem *el = &r.elems[row * p->dv + t];
            elems++;
            rounded += el->how == AC_HOW_ROUNDED;
            ck_assert_int_eq(el->accept, AC_ACCEPT_VALUE);
            double ov = mpfr_get_d(o[t], MPFR_RNDN);
            ck_assert_msg(fabs(el->o - ov) <= el->o_err + fabs(ov) * 0x1p-52 + 0x1p-1074,
                          AC_SEED_FMT "%s case %d elem %lld,%lld: o %a +- %a, reference %a", AC_SEED_ARG,
                          ac_dtype_name(dt), k, (long long)row, (long long)t, el->o, el->o_err, ov);
            for (int f = 0; f < AC_NDTYPES; f++) {
              uint64_t want = ref_round_bits((ac_dtype)f, o[t], &amb), got = r.o_round[f][row * p->dv + t];
              if (amb) {   /* exact cases, or weights below 2^-3900 tipping a tie: see toracle_exact */
                ambiguous++;
                continue;
              }
              /* an exact zero is +0; the brute force may carry a sign from rounding noise */
              if (el->how == AC_HOW_EXACT && ac_bits_iszero((ac_dtype)f, got) && ac_bits_iszero((ac_dtype)f, want))
                continue;
              ck_assert_msg(got == want,
                            AC_SEED_FMT "%s case %d row %lld col %lld format %s: oracle %a (bits %llx, how %d), "
                                        "reference %a (bits %llx), exact approx %a",
                            AC_SEED_ARG, ac_dtype_name(dt), k, (long long)row, (long long)t,
                            ac_dtype_name((ac_dtype)f), ac_decode((ac_dtype)f, got), (unsigned long long)got, el->how,
                            ac_decode((ac_dtype)f, want), (unsigned long long)want, ov);
            }
          }
        }
    for (int64_t t = 0; t < p->dv; t++) mpfr_clear(o[t]);
    mpfr_clear(lse);
    free(o);
    ac_oracle_result_free(&r);
    ac_case_free(&c);
  }
  ck_assert_msg(ambiguous < elems * AC_NDTYPES / 5, AC_SEED_FMT "%s: %lld of %lld element roundings ambiguous", AC_SEED_ARG,
                ac_dtype_name(dt), (long long)ambiguous, (long long)elems * AC_NDTYPES);
  ck_assert_msg(rounded > elems / 4, AC_SEED_FMT "%s: only %lld of %lld elements went through the Ziv loop",
                AC_SEED_ARG, ac_dtype_name(dt), (long long)rounded, (long long)elems);
  mpfr_free_cache();
}

START_TEST(brute_f64) { check_dtype(AC_F64); }
END_TEST
START_TEST(brute_f32) { check_dtype(AC_F32); }
END_TEST
START_TEST(brute_f16) { check_dtype(AC_F16); }
END_TEST
START_TEST(brute_bf16) { check_dtype(AC_BF16); }
END_TEST
START_TEST(brute_e4m3) { check_dtype(AC_E4M3); }
END_TEST
START_TEST(brute_e5m2) { check_dtype(AC_E5M2); }
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_brute");
  TCase *tc = tcase_create("agrees_with_4000_bit_brute_force");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, brute_f64);
  tcase_add_test(tc, brute_f32);
  tcase_add_test(tc, brute_f16);
  tcase_add_test(tc, brute_bf16);
  tcase_add_test(tc, brute_e4m3);
  tcase_add_test(tc, brute_e5m2);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
