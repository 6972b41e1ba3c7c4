/* texplain_variants.c: explain on a case with attention variants prints every stage per key
 * (dot, scaled, capped, +ALiBi, +bias, visibility), the sink beside the weights, and the
 * oracle's correctly rounded output. */
#include "config.h"
#include <check.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "variants.h"
#include "explain_variants.h"

/* stdout of ac_explain_variants for row (0, 0, i), into a malloc'ed string. */
static char *explain_text(const ac_case *c, int64_t i, int *rc)
{
  ac_oracle_opts o;
  ac_oracle_result r;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.threads = 1;
  ck_assert(ac_oracle_run(c, &o, &r, &e) == 0);
  char path[600];
  snprintf(path, sizeof path, "%s/explain-%lld.txt", ac_test_tmpdir(), (long long)i);
  fflush(stdout);
  int saved = dup(1);
  ck_assert(freopen(path, "w", stdout) != NULL);
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  *rc = ac_explain_variants(c, 0, 0, i, &r);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  FILE *f = fopen(path, "r");
  ck_assert(f != NULL);
  char *buf = calloc(1, 1 << 16);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  buf[n] = 0;
  fclose(f);
  /* the oracle's correctly rounded value of every element appears as hex */
  for (int64_t t = 0; t < c->p.dv; t++) {
    char hx[32];
    ac_bits_hex(c->p.dtype, r.o_round[c->p.dtype][ac_oracle_slot(&r, (int64_t)ac_rowidx(&c->p, 0, 0, i)) * c->p.dv + t], hx,
                sizeof hx);
    ck_assert_msg(strstr(buf, hx) != NULL, "row %lld: %s missing from\n%s", (long long)i, hx, buf);
  }
  ac_oracle_result_free(&r);
  return buf;
}

START_TEST(stages_per_key)
{
  ac_case c;
  ac_err e;
  ref_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 4, 4, 2, 2);
  ac_features_plain(&c.p);
  c.p.f.used = AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS | AC_FEAT_BOOL_MASK;
  c.p.f.win_left = 1;
  c.p.f.softcap = 2;
  ck_assert(ac_features_alloc(&c, &e) == 0);
  for (int x = 0; x < 8; x++) { ref_set(&c, 'q', (size_t)x, 1 + x); ref_set(&c, 'k', (size_t)x, 0.5 * x); ref_set(&c, 'v', (size_t)x, x - 3); }
  c.alibi_slopes[0] = 0.5f;
  c.sinks[0] = 0.75f;
  for (int x = 0; x < 16; x++) { ((float *)c.bias)[x] = 0.25f * (float)x; c.bool_mask[x] = 1; }
  c.bool_mask[3 * 4 + 3] = 0;
  int rc;
  char *s = explain_text(&c, 3, &rc);
  ck_assert_int_eq(rc, 0);
  static const char *const want[] = {"window: left 1", "softcap: 2", "ALiBi slope of this head: 0.5", "sigma = 0.75",
                                     "capped", "+alibi", "+bias", "no (window)", "no (bool mask)", "1 of 4 keys visible",
                                     "sink ", "the sink included", "LSE"};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) ck_assert_msg(strstr(s, want[k]) != NULL, "'%s' missing from\n%s", want[k], s);
  free(s);
  /* a row whose only key is the sink: o = 0 */
  memset(c.bool_mask, 0, 16);
  s = explain_text(&c, 1, &rc);
  ck_assert_msg(strstr(s, "0 of 4 keys visible") && strstr(s, "exact case"), "%s", s);
  free(s);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("explain_variants");
  TCase *tc = tcase_create("stages");
  tcase_add_test(tc, stages_per_key);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
