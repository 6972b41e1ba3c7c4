/* tfuzz_variants.c: the variant families draw valid variant cases, only the features the limits
 * allow, and every transformation of the fuzzer (slice, drop, resize, mutation, the minimizer's
 * steps, the metamorphic check) keeps the variant tensors in step with the shape: each result
 * validates and round-trips through ac_case_write / ac_case_read unchanged. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "testutil.h"
#include "variants.h"

#define PER_FAMILY 12

static void limits_all(ac_gen_limits *l)
{
  ac_gen_limits_init(l);
  l->dtypes = 0x3f;
  l->masks = 7;
  l->max_t = 1024;
  l->max_elems = (int64_t)1 << 16;
  l->features |= AC_FEAT_DROPOUT;   /* the dropout family too */
}

/* The case validates, every variant tensor it uses is there (and no other), and writing and
 * reading it back gives the same case (hash over shape, features and every tensor's bytes). */
static void check_case(const ac_case *c, const char *what)
{
  ac_err e;
  ck_assert_msg(ac_problem_validate(&c->p, ac_mem_cap(), &e) == 0, AC_SEED_FMT "%s: %s", AC_SEED_ARG, what, e.msg);
  for (int t = 0; t < AC_FT_N; t++) {
    const void *d = *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t);
    int used = ac_feat_tensor_count(&c->p, (ac_feat_tensor)t) > 0;
    ck_assert_msg(used == (d != NULL), AC_SEED_FMT "%s: tensor %s %s", AC_SEED_ARG, what,
                  ac_feat_tensor_name((ac_feat_tensor)t), used ? "missing" : "left over");
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/v.npz", ac_test_tmpdir());
  ck_assert_msg(ac_case_write(c, path, &e) == 0, AC_SEED_FMT "%s: write: %s", AC_SEED_ARG, what, e.msg);
  ac_case back;
  ck_assert_msg(ac_case_read(&back, path, &e) == 0, AC_SEED_FMT "%s: read: %s", AC_SEED_ARG, what, e.msg);
  ck_assert_msg(ac_case_hash(&back) == ac_case_hash(c) && back.p.f.used == c->p.f.used,
                AC_SEED_FMT "%s: changed by the round trip", AC_SEED_ARG, what);
  ac_case_free(&back);
}

/* the quantized families, usable only for a kernel that declares formats (tfuzz_quant) */
static int is_quant_family(const ac_family *f) { return f->usable == ac_gen_quant_usable; }
/* the attention-variant families (the serving layouts' families: tfuzz_layouts) */
static int is_variant_family(const ac_family *f)
{
  return (f->feats & (AC_FEAT_ALL | AC_FEAT_DROPOUT)) || (f->usable && !is_quant_family(f));
}

/* Case k of every variant family (a few per family). */
static int next_case(int64_t k, ac_case *c, const char **fam)
{
  int nf, nv = 0, idx[64];
  const ac_family *f = ac_families(&nf);
  for (int i = 0; i < nf; i++)
    if (is_variant_family(&f[i])) idx[nv++] = i;
  if (k >= (int64_t)nv * PER_FAMILY) return 0;
  ac_gen_limits l;
  limits_all(&l);
  ac_err e;
  const ac_family *fa = &f[idx[k % nv]];
  *fam = fa->name;
  ck_assert_msg(ac_generate(fa, ac_test_seed(), k / nv, &l, c, &e) == 0, AC_SEED_FMT "%s: %s", AC_SEED_ARG, fa->name, e.msg);
  return 1;
}

START_TEST(families_draw_their_features)
{
  int nf, nv = 0;
  const ac_family *f = ac_families(&nf);
  ac_gen_limits l;
  limits_all(&l);
  for (int i = 0; i < nf; i++) {
    if (!is_variant_family(&f[i])) continue;
    nv++;
    uint32_t seen = 0;
    for (int64_t k = 0; k < PER_FAMILY; k++) {
      ac_case c;
      ac_err e;
      ck_assert_msg(ac_generate(&f[i], ac_test_seed(), k, &l, &c, &e) == 0, "%s: %s", f[i].name, e.msg);
      ck_assert_msg((c.p.f.used & f[i].feats) == f[i].feats, "%s: case %lld lacks its feature", f[i].name, (long long)k);
      ck_assert_msg(strstr(c.params_json, "\"variant\":") != NULL, "%s: params without the variant", f[i].name);
      check_case(&c, f[i].name);
      seen |= c.p.f.used;
      ac_case_free(&c);
    }
    ck_assert_msg(seen != 0, "%s drew no variant", f[i].name);
  }
  ck_assert_int_ge(nv, 8);
}
END_TEST

/* Limits of one dtype and one mask (fp8 included, where no sentinel fits a bias of the case's
 * dtype): every variant family stays within them, its bias in an allowed dtype. */
START_TEST(families_within_one_dtype)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  for (int t = 0; t < AC_NDTYPES; t++)
    for (int i = 0; i < nf; i++) {
      if (!is_variant_family(&f[i])) continue;
      ac_gen_limits l;
      limits_all(&l);
      l.dtypes = 1u << t;
      l.masks = 1u << (t % 3);
      if (!ac_family_usable(&f[i], &l)) {   /* descales: no fp64; mixed dtypes: f32, e4m3, e5m2 compute only */
        ck_assert_msg((t == AC_F64 && !strcmp(f[i].name, "descale")) ||
                      (!strcmp(f[i].name, "mixed_dtypes") && t != AC_F32 && t != AC_E4M3 && t != AC_E5M2),
                      "%s unusable in dtype %d", f[i].name, t);
        continue;
      }
      for (int64_t k = 0; k < 6; k++) {
        ac_case c;
        ac_err e;
        ck_assert_msg(ac_generate(&f[i], ac_test_seed(), k, &l, &c, &e) == 0, "%s: %s", f[i].name, e.msg);
        ck_assert_msg(c.p.dtype == (ac_dtype)t && (l.masks & (1u << c.p.mask)), "%s: dtype or mask outside", f[i].name);
        ck_assert_msg(!(c.p.f.used & AC_FEAT_BIAS) || c.p.f.bias_dtype == (ac_dtype)t, "%s: bias dtype %d", f[i].name,
                      (int)c.p.f.bias_dtype);
        ac_case_free(&c);
      }
    }
}
END_TEST

/* A kernel declaring only window and sinks: only window, sinks and variant_mix are usable, and
 * variant_mix then draws window + sinks alone. */
START_TEST(families_follow_declared_features)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  ac_gen_limits l;
  limits_all(&l);
  l.features = AC_FEAT_WINDOW | AC_FEAT_SINKS;
  for (int i = 0; i < nf; i++) {
    int want = !(f[i].feats & AC_FEAT_LAYOUTS) && !is_quant_family(&f[i]) &&
               (!is_variant_family(&f[i]) || !strcmp(f[i].name, "window") ||
                                                   !strcmp(f[i].name, "sinks") || !strcmp(f[i].name, "variant_mix"));
    ck_assert_msg(ac_family_usable(&f[i], &l) == want, "%s usable %d", f[i].name, !want);
  }
  const ac_family *mix = ac_family_find("variant_mix");
  for (int64_t k = 0; k < 16; k++) {
    ac_case c;
    ac_err e;
    ck_assert(ac_generate(mix, ac_test_seed(), k, &l, &c, &e) == 0);
    ck_assert_msg((c.p.f.used & ~l.features) == 0, "variant_mix used 0x%x", (unsigned)c.p.f.used);
    ac_case_free(&c);
  }
  l.features = 0;
  ck_assert(!ac_family_usable(mix, &l));
  ck_assert(!ac_family_usable(ac_family_find("bias"), &l));
  ck_assert(ac_family_usable(ac_family_find("normal"), &l));
}
END_TEST

START_TEST(slice_and_drop_keep_variants)
{
  ac_case c;
  const char *fam;
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 77);
  for (int64_t k = 0; next_case(k, &c, &fam); k++) {
    const ac_problem *p = &c.p;
    ac_case out;
    ac_err e;
    char what[128];
    ac_slice s;
    ac_slice_all(p, &s);
    s.b0 = (int64_t)ac_rng_below(&r, (uint64_t)p->batch);
    s.nb = 1;
    s.h0 = (int64_t)ac_rng_below(&r, (uint64_t)p->heads);
    s.nh = 1;
    s.i0 = (int64_t)ac_rng_below(&r, (uint64_t)p->tq);
    s.ni = p->tq - s.i0;
    s.j0 = (int64_t)ac_rng_below(&r, (uint64_t)p->tk);
    s.nj = 1 + (int64_t)ac_rng_below(&r, (uint64_t)(p->tk - s.j0));
    snprintf(what, sizeof what, "%s %lld slice", fam, (long long)k);
    ck_assert_msg(ac_case_slice(&c, &s, &out, &e) == 0, "%s: %s", what, e.msg);
    check_case(&out, what);
    ac_case_free(&out);
    for (int dim = 0; dim < 4; dim++) {
      int64_t len = dim == 0 ? p->tq : dim == 1 ? p->tk : dim == 2 ? p->dk : p->dv;
      if (len < 2) continue;
      int64_t a = (int64_t)ac_rng_below(&r, (uint64_t)(len - 1));
      snprintf(what, sizeof what, "%s %lld drop dim %d", fam, (long long)k, dim);
      ck_assert_msg(ac_case_drop(&c, dim, a, 1, &out, &e) == 0, "%s: %s", what, e.msg);
      check_case(&out, what);
      ac_case_free(&out);
    }
    for (int t = 0; t < 2; t++) {
      int64_t tq = t ? p->tq + 5 : (p->tq + 1) / 2, tk = t ? p->tk * 2 + 1 : (p->tk + 1) / 2;
      snprintf(what, sizeof what, "%s %lld resize %lldx%lld", fam, (long long)k, (long long)tq, (long long)tk);
      ck_assert_msg(ac_case_resize_t(&c, tq, tk, &r, &out, &e) == 0, "%s: %s", what, e.msg);
      check_case(&out, what);
      ac_case_free(&out);
    }
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(mutations_keep_variants)
{
  ac_case c;
  const char *fam;
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 78);
  ac_gen_limits l;
  limits_all(&l);
  int variant_mutations = 0;
  for (int64_t k = 0; next_case(k, &c, &fam); k++) {
    for (int m = 0; m < 12; m++) {
      ac_case child;
      ac_err e;
      char desc[128], what[256];
      ck_assert_msg(ac_mutate(&c, 0.5, &r, &l, &child, desc, sizeof desc, &e) == 0, "%s: %s", fam, e.msg);
      snprintf(what, sizeof what, "%s %lld mutation '%s'", fam, (long long)k, desc);
      check_case(&child, what);
      variant_mutations += !strncmp(desc, "variant:", 8);
      ac_case_free(&child);
    }
    ac_case_free(&c);
  }
  ck_assert_msg(variant_mutations >= 10, "only %d mutations of the variants", variant_mutations);
}
END_TEST

/* Every candidate the minimizer builds (head and batch slices, features left out, halves,
 * dropped ranges, simpler values) is checked; the finding "holds" for every other one, so the
 * minimizer walks all its steps. */
static int holds_checked(const ac_case *c, void *ctx)
{
  int *calls = ctx;
  check_case(c, "minimizer candidate");
  return ++*calls % 2 == 0 || c->p.f.used;
}

START_TEST(minimizer_keeps_variants)
{
  ac_case c;
  const char *fam;
  int dropped_feature = 0;
  for (int64_t k = 0; next_case(k, &c, &fam); k += 3) {
    int calls = 0;
    ac_min_opts mo = {.max_evals = 60, .max_seconds = 5};
    ac_case out;
    ac_err e;
    ck_assert_msg(ac_minimize(&c, 0, 0, 0, 0, holds_checked, &calls, &mo, &out, &e) == 0, "%s: %s", fam, e.msg);
    check_case(&out, fam);
    if (out.p.f.used != c.p.f.used) dropped_feature = 1;
    ac_case_free(&out);
    ac_case_free(&c);
  }
  ck_assert_msg(dropped_feature, "the minimizer never left a variant out");
}
END_TEST

/* The metamorphic bounds are those of plain attention: a variant case is not checked. */
START_TEST(metamorphic_skips_variants)
{
  ac_case c;
  const char *fam;
  ck_assert(next_case(0, &c, &fam));
  ac_kernel **ks = NULL;
  int nk = 0;
  ac_err e;
  ck_assert_msg(ac_kernel_resolve("naive-f32", &ks, &nk, &e) == 0, "%s", e.msg);
  ac_run_result ra;
  memset(&ra, 0, sizeof ra);
  ra.status = AC_RUN_OK;
  ra.o = ac_xcalloc((size_t)ac_case_counts(&c).o, 8);
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ac_meta_result m;
  ck_assert(ac_meta_check(ks[0], &ro, &c, NULL, &ra, &m, &e) == 0);
  ck_assert_msg(!m.checked, "variant case %s checked", fam);
  free(ra.o);
  for (int i = 0; i < nk; i++) ac_kernel_free(ks[i]);
  free(ks);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("fuzz_variants");
  TCase *tc = tcase_create("variants");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, families_draw_their_features);
  tcase_add_test(tc, families_follow_declared_features);
  tcase_add_test(tc, families_within_one_dtype);
  tcase_add_test(tc, slice_and_drop_keep_variants);
  tcase_add_test(tc, mutations_keep_variants);
  tcase_add_test(tc, minimizer_keeps_variants);
  tcase_add_test(tc, metamorphic_skips_variants);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
