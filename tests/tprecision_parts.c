/* tprecision_parts.c: precision classes as sets of parts (docs/numerics.md §6.1): every preset's
 * canonical string looks up to the preset itself, presets have distinct parts, a string over a
 * preset and the same parts in another order are one class, unknown parts and values are refused
 * with one line, the fields each new part sets, specs whose entries continue with parts, the
 * canonical spec of a reproducer, and the parts the backward refuses. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "precision.h"

static const ac_precision *lookup_ok(const char *s)
{
  const ac_precision *c = NULL;
  ac_err e;
  ck_assert_msg(ac_precision_lookup(s, &c, &e) == 0, "'%s': %s", s, e.msg);
  return c;
}

START_TEST(preset_strings_are_presets)
{
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  ck_assert_uint_ge(n, 15);
  for (size_t i = 0; i < n; i++) {
    char s[512];
    ac_precision_string(&t[i], s, sizeof s);
    ck_assert_msg(!strchr(s, ' '), "%s: '%s' has a space", t[i].name, s);
    ck_assert_msg(lookup_ok(s) == &t[i], "%s: its string '%s' is another class", t[i].name, s);
    ck_assert_ptr_eq(lookup_ok(t[i].name), &t[i]);
    for (size_t j = 0; j < i; j++)
      ck_assert_msg(memcmp(t[i].parts.v, t[j].parts.v, sizeof t[i].parts.v), "%s and %s have the same parts", t[i].name,
                    t[j].name);
  }
}
END_TEST

START_TEST(refused_with_one_line)
{
  static const char *const bad[] = {"q=f8",      "foo=1",   "k=q8", "q=f16,q=bf16", "q=f16,,pv=f16",
                                    "q=f16,pv",  "eu=0",    "eu=x", "sub=maybe",    "bogus",
                                    "fp32,q=zz", "qk=e4m3", "",     "lse=log10"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const ac_precision *c = NULL;
    ac_err e;
    e.msg[0] = 0;
    ck_assert_msg(ac_precision_lookup(bad[i], &c, &e) == -1, "'%s' accepted", bad[i]);
    ck_assert_msg(e.msg[0] && !strchr(e.msg, '\n'), "'%s': message '%s'", bad[i], e.msg);
  }
}
END_TEST

START_TEST(strings_are_one_class)
{
  const ac_precision *a = lookup_ok("q=f16,pv=f16,l=f32"), *b = lookup_ok("l=f32,pv=f16,q=f16"),
                     *c = lookup_ok("fp32,q=f16,pv=f16");
  ck_assert_ptr_eq(a, b);
  ck_assert_ptr_eq(a, c);
  ck_assert_ptr_ne(a, lookup_ok("q=f16,pv=f16,l=f16"));
  ck_assert_ptr_eq(lookup_ok("q=f16,pv=f16,rs=acc"), lookup_ok("ggml-f16"));
  ck_assert_ptr_eq(lookup_ok("exp=exp2"), lookup_ok("fp32-exp2")); /* lse follows exp */
  ck_assert_ptr_ne(lookup_ok("exp=exp2,lse=ln"), lookup_ok("fp32-exp2"));
  ck_assert_ptr_eq(lookup_ok("fp32"), lookup_ok("f32"));
  char s[512];
  ac_precision_string(a, s, sizeof s);
  ck_assert_str_eq(a->name, s);
}
END_TEST

START_TEST(fields_of_parts)
{
  const ac_precision *g = lookup_ok("ggml-f16");
  ck_assert(g->u_a == 0x1p-11 && g->u_l == 0x1p-24 && g->rs_acc && g->u_qin == 0x1p-11 && g->u_kin == 0);
  ck_assert(g->range == AC_F32 && g->sum_range == AC_F16 && g->eta_a == 0x1p-25 && g->mu == 0x1p-126);
  const ac_precision *q = lookup_ok("q8q-f32");
  ck_assert(q->q8 && q->u_qin == 0 && q->u_a == 0x1p-24);
  const ac_precision *f = lookup_ok("sub=ftz"), *d = lookup_ok("sub=daz");
  ck_assert(f->eta_qk == 0x1p-126 && f->eta_a == 0x1p-126 && f->daz_qk == 0);
  ck_assert(d->daz_qk == 0x1p-126 && d->daz_v == 0x1p-126);
  const ac_precision *v = lookup_ok("v=bf16,k=e4m3,l=f16,eu=2,lse=log2");
  /* K's and V's rounding to a format narrower than binary32 is charged through binary32: u + 2^-23 */
  ck_assert(v->u_vin == 0x1p-8 + 0x1p-23 && v->u_kin == 0x1p-4 + 0x1p-23 && v->u_l == 0x1p-11 && v->mu_sum == 0x1p-14);
  ck_assert(lookup_ok("kv-f32")->u_kin == 0x1p-24 && lookup_ok("kv-f16-fa2")->u_vin == 0x1p-11 + 0x1p-23);
  ck_assert(v->u_e == 2 * 0x1p-24 && v->u_lse == 1.5 * 0x1p-24 && v->u_s == 0x1p-24);
  ck_assert(lookup_ok("fp64")->eta_qk == 0x1p-1074);
}
END_TEST

START_TEST(specs_with_parts)
{
  const char *spec = "f16=fp16-fa2,p=none,bf16=bf16-fa2";
  ac_err e;
  ck_assert_msg(ac_precision_spec_check(spec, &e) == 0, "%s", e.msg);
  const ac_precision *c;
  ck_assert(ac_precision_resolve(NULL, spec, AC_F16, &c, &e) == 0);
  ck_assert(c->u_p == 0 && c->qk_trunc && c->parts.v[AC_PART_EXP] == 1);
  ck_assert(ac_precision_resolve(NULL, spec, AC_BF16, &c, &e) == 0 && c == lookup_ok("bf16-fa2"));
  ck_assert(ac_precision_resolve(NULL, spec, AC_F32, &c, &e) == 0 && c == lookup_ok("fp32"));
  ck_assert(ac_precision_resolve("q=f16,pv=f16", spec, AC_F16, &c, &e) == 0 && c == lookup_ok("q=f16,pv=f16"));
  ck_assert(ac_precision_resolve("f32=q8q-f32", spec, AC_F16, &c, &e) == 0 && c->u_p == 0); /* names f32 only */
  ck_assert(ac_precision_spec_check("q=f16,fp32", &e) < 0);                                 /* two bare classes */
  ck_assert(ac_precision_spec_check("f17=fp32", &e) < 0 && !strchr(e.msg, '\n'));
  ck_assert(ac_precision_spec_check("f16=", &e) < 0);
  char canon[1024], s[512];
  ac_precision_string(lookup_ok("fp16-fa2"), s, sizeof s);
  char given[600];
  snprintf(given, sizeof given, "fp16=%s,fp32", s);
  ck_assert(ac_precision_spec_canonical(given, canon, sizeof canon) == 0);
  ck_assert_str_eq(canon, "f16=fp16-fa2,fp32");
  ck_assert(ac_precision_spec_names(spec, AC_F16) && !ac_precision_spec_names(spec, AC_F32));
}
END_TEST

START_TEST(backward_refuses_unmodelled_parts)
{
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  char b[96];
  for (size_t i = 0; i < n; i++) {
    int ext = !strcmp(t[i].name, "ggml-f16") || !strcmp(t[i].name, "q8q-f32") || !strcmp(t[i].name, "kv-f32") ||
              !strcmp(t[i].name, "qkv-f32") || !strcmp(t[i].name, "q8kv-f32") || !strcmp(t[i].name, "fold-f32") ||
              !strcmp(t[i].name, "dq-f32") || !strcmp(t[i].name, "kv-f16-fa2") || !strcmp(t[i].name, "kv-bf16-fa2");
    ck_assert_msg(ac_precision_grad_unmodelled(&t[i], b, sizeof b) == ext, "%s", t[i].name);
  }
  ck_assert(ac_precision_grad_unmodelled(lookup_ok("l=f16"), b, sizeof b) && strstr(b, "l=f16"));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("precision_parts");
  TCase *tc = tcase_create("parts");
  tcase_add_test(tc, preset_strings_are_presets);
  tcase_add_test(tc, refused_with_one_line);
  tcase_add_test(tc, strings_are_one_class);
  tcase_add_test(tc, fields_of_parts);
  tcase_add_test(tc, specs_with_parts);
  tcase_add_test(tc, backward_refuses_unmodelled_parts);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
