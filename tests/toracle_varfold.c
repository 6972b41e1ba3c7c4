/* toracle_varfold.c: FOLD offsets in integers (oracle/varfold.c) against the brute force of
 * toracle_varref.c: ALiBi, bias and sinks under dyadic scales (the default 1/8, 1/2, a stored
 * -2^-3, the default 1/3 of dk = 9; stored 0.3 and -0.375, which FOLD keeps unfolded), with offsets that fit the integer form and offsets that
 * leave it (a slope of 2^-126 times a distance next to a bias of 1.5 2^10: 136 bits), and scores
 * that do or do not fit two limbs after the fold (a bias or sink of 2^-149 or 2^-140 next to
 * q·k at the lsb of binary32 products). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "variants.h"
#include "toracle_varref.h"

static void fold_case(ac_case *c, ac_dtype dt, uint32_t used, int64_t dk, double scale, int64_t tq, int64_t tk, ac_rng *r,
                      int wide)
{
  ac_err e;
  ref_case(c, dt, AC_MASK_CAUSAL_BR, 1, 2, 1, tq, tk, dk, 2);
  ac_features_plain(&c->p);
  c->p.f.used = used;
  if (scale != 0) { c->p.scale_is_default = 0; c->p.scale = scale; }
  if (used & AC_FEAT_BIAS) { c->p.f.bias_b = 1; c->p.f.bias_h = 2; }
  if (used & AC_FEAT_SOFTCAP) c->p.f.softcap = 30;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  ac_counts n;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  for (int64_t x = 0; x < n.q; x++) ref_set(c, 'q', (size_t)x, ac_rng_normal(r));
  for (int64_t x = 0; x < n.k; x++) ref_set(c, 'k', (size_t)x, ac_rng_normal(r));
  for (int64_t x = 0; x < n.v; x++) ref_set(c, 'v', (size_t)x, ac_rng_normal(r));
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SLOPES); x++)
    c->alibi_slopes[x] = wide ? 0x1p-126f : (float)ldexp(1 + ac_rng_uniform(r), -(int)ac_rng_below(r, 8));
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_SINKS); x++)
    c->sinks[x] = wide ? 0x1p-140f : (float)(ac_rng_normal(r) * 2);
  for (int64_t x = 0; x < ac_feat_tensor_count(&c->p, AC_FT_BIAS); x++) {
    double b = ac_rng_normal(r) * 2;
    if (wide) b = x % 4 == 0 ? 0x1p-149 : x % 4 == 1 ? 0x1.8p10 : x % 4 == 2 ? -0x1p-130 : b;
    ac_store_bits(c->p.f.bias_dtype, c->bias, (size_t)x, ac_encode_f64(c->p.f.bias_dtype, b));
  }
}

START_TEST(fold_offsets)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x666f6c64);
  vstats vs = {0};
  static const struct { int64_t dk; double scale; } sc[] = {{64, 0}, {4, 0}, {3, 0.5}, {5, -0.125}, {9, 0}, {4, 0.3},
                                                           {2, -0.375}};
  static const uint32_t feats[] = {AC_FEAT_ALIBI, AC_FEAT_BIAS, AC_FEAT_SINKS, AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS};
  for (int wide = 0; wide < 2; wide++)
    for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++)
      for (size_t f = 0; f < sizeof feats / sizeof feats[0]; f++) {
        ac_case c;
        fold_case(&c, s % 2 ? AC_BF16 : AC_F32, feats[f], sc[s].dk, sc[s].scale, 6, 9, &r, wide);
        char what[96];
        snprintf(what, sizeof what, "fold dk %lld scale %g features 0x%x%s", (long long)sc[s].dk, sc[s].scale,
                 (unsigned)feats[f], wide ? " wide" : "");
        vref_check_case(&c, what, &vs);
        ac_case_free(&c);
      }
  vref_report("fold offsets", &vs);
}
END_TEST

/* The binary64 pass decides ordinary rows of every variant whole (max_prec 0: no MPFR level
 * ran): FOLD (ALiBi, bias, sinks, scale 1/8), LIN (the same, dk = 2) and CAP (softcap 30, 5,
 * scale 1/8 and 1/sqrt(2)), f32 and bf16; each against the brute force as well. */
START_TEST(fast_path_taken)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x66617374);
  vstats vs = {0};
  static const uint32_t feats[] = {AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS, AC_FEAT_SOFTCAP,
                                   AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_SINKS};
  int64_t slow = 0, rows = 0;
  for (int dk = 2; dk <= 64; dk += 62)
    for (size_t f = 0; f < sizeof feats / sizeof feats[0]; f++)
      for (int dt = 0; dt < 2; dt++) {
        ac_case c;
        fold_case(&c, dt ? AC_BF16 : AC_F32, feats[f], dk, 0, 24, 40, &r, 0);
        c.p.f.softcap = dt ? 5 : 30;
        ac_oracle_result res;
        ac_oracle_opts o;
        ac_err e;
        ac_oracle_opts_init(&o);
        o.threads = 1;
        ck_assert_msg(ac_oracle_run(&c, &o, &res, &e) == 0, "%s", e.msg);
        rows += res.nrows;
        if (res.max_prec > 0) slow++;
        ac_oracle_result_free(&res);
        char what[96];
        snprintf(what, sizeof what, "fast path dk %d features 0x%x %s", dk, (unsigned)feats[f], dt ? "bf16" : "f32");
        vref_check_case(&c, what, &vs);
        ac_case_free(&c);
      }
  fprintf(stderr, "fast path: %lld of 12 cases (%lld rows) needed an MPFR level\n", (long long)slow, (long long)rows);
  ck_assert_msg(slow <= 2, "%lld of 12 ordinary variant cases needed the MPFR levels", (long long)slow);
  vref_report("fast path", &vs);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("oracle_varfold");
  TCase *tc = tcase_create("fold_offsets");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, fold_offsets);
  tcase_add_test(tc, fast_path_taken);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
