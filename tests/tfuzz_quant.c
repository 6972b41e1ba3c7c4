/* tfuzz_quant.c: quantized K and V in the fuzzer (fuzz/families/gen_quant.c, docs/quantized.md):
 * every family draws them for a kernel that declares formats and none for one that does not; the
 * quant families draw each block adversary; and every case the fuzzer makes of a quantized one
 * (mutations, slices, dropped ranges, new lengths, a layout's sequences and new layouts) keeps
 * its values the exact values of its codes and scales; a kernel that declares the quantized layouts
 * gets group, tile and channel-group scales, scale and zero dtypes and packed codes, one that stores
 * its own cache store cases of its quantizers only. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"
#include "layout.h"
#include "quant.h"
#include "report_html.h"
#include "testutil.h"

static void limits(ac_gen_limits *l, uint32_t kv, int only)
{
  ac_gen_limits_init(l);
  l->dtypes = 1u << AC_F32;
  l->max_t = 2048;
  l->max_elems = (int64_t)1 << 18;
  l->kv_formats = kv;
  l->q_formats = kv & (1u << AC_QF_E4M3FN | 1u << AC_QF_INT8);
  l->quant_only = only;
}

/* Every quantized tensor's values are its codes' (decoded again and compared bit for bit). */
static int consistent(const ac_case *c)
{
  ac_case d;
  ac_err e;
  if (ac_case_copy(&d, c, &e)) return 0;
  int ok = 1;
  for (const char *x = "qkv"; *x; x++) {
    if (!ac_tensor_quantized(&c->p, *x)) continue;
    ac_quant_decode(&d, *x);
    const void *a = *x == 'q' ? c->q : *x == 'k' ? c->k : c->v, *b = *x == 'q' ? d.q : *x == 'k' ? d.k : d.v;
    int same = memcmp(a, b, ac_case_bytes(c, *x)) == 0;
    if (!same && getenv("TFQ_DEBUG")) {
      char qs[48];
      for (size_t i = 0; i < ac_case_bytes(c, *x) / 8; i++)
        if (memcmp((const double *)a + i, (const double *)b + i, 8)) {
          fprintf(stderr, "%c %s elem %zu: %a vs %a (tk %lld)\n", *x, ac_qspec_str(&c->p.quant[ac_qslot(*x)], qs, sizeof qs), i,
                  ((const double *)a)[i], ((const double *)b)[i], (long long)c->p.tk);
          break;
        }
    }
    ok &= same;
  }
  ac_case_free(&d);
  return ok;
}

#define ALL_FORMATS ((1u << AC_QF_N) - 2)

START_TEST(every_family_draws_quantized_cases)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  const ac_family *fam = &f[_i];
  ac_gen_limits l;
  limits(&l, ALL_FORMATS, 1);
  if (!ac_family_usable(fam, &l)) return;
  int quantized = 0;
  for (int64_t k = 0; k < 30; k++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(fam, ac_test_seed(), k, &l, &c, &e) == 0, "%s %lld: %s", fam->name, (long long)k, e.msg);
    if (ac_problem_quantized(&c.p)) {
      quantized++;
      ck_assert_msg(consistent(&c), AC_SEED_FMT "%s %lld: values are not their codes'", AC_SEED_ARG, fam->name, (long long)k);
      ck_assert_msg(strstr(c.params_json, "\"quant_kv\""), "%s: params lack quant_kv: %s", fam->name, c.params_json);
      char path[512];
      ac_case back;
      snprintf(path, sizeof path, "%s/%s-%lld.npz", ac_test_tmpdir(), fam->name, (long long)k);
      ck_assert_msg(ac_case_write(&c, path, &e) == 0 && ac_case_read(&back, path, &e) == 0, "%s: %s", fam->name, e.msg);
      ck_assert(ac_case_hash(&back) == ac_case_hash(&c));
      ac_case_free(&back);
      unlink(path);
    }
    ac_case again;
    ck_assert(ac_generate(fam, ac_test_seed(), k, &l, &again, &e) == 0);
    ck_assert_msg(ac_case_hash(&again) == ac_case_hash(&c), "%s %lld: not a function of the draw", fam->name, (long long)k);
    ac_case_free(&again);
    ac_case_free(&c);
  }
  /* strides, per-tensor dtypes and descales take no quantized tensor */
  int exempt = !strcmp(fam->name, "strided") || !strcmp(fam->name, "mixed_dtypes") || !strcmp(fam->name, "descale");
  ck_assert_msg(exempt || quantized > 0, AC_SEED_FMT "%s: no quantized case in 30", AC_SEED_ARG, fam->name);
}
END_TEST

START_TEST(no_quantized_case_without_formats)
{
  int nf;
  const ac_family *f = ac_families(&nf);
  ac_gen_limits l;
  limits(&l, 0, 0);
  for (int i = 0; i < nf; i++) {
    if (!ac_family_usable(&f[i], &l)) {
      ck_assert_msg(!strncmp(f[i].name, "quant_", 6) || f[i].feats || f[i].usable, "%s not usable", f[i].name);
      continue;
    }
    for (int64_t k = 0; k < 8; k++) {
      ac_case c;
      ac_err e;
      ck_assert(ac_generate(&f[i], ac_test_seed(), k, &l, &c, &e) == 0);
      ck_assert_msg(!ac_problem_quantized(&c.p), "%s: quantized without a declared format", f[i].name);
      ac_case_free(&c);
    }
  }
}
END_TEST

START_TEST(quant_families_draw_every_adversary)
{
  ac_gen_limits l;
  limits(&l, ALL_FORMATS, 1);
  const char *names[] = {"outlier", "zero_blocks", "scale_subnormal", "ties", "asym_range", "scale_overflow", "nan_in_block"};
  int seen[7] = {0}, nonfinite = 0;
  for (int fam = 0; fam < 2; fam++) {
    const ac_family *f = ac_family_find(fam ? "quant_nonfinite" : "quant_blocks");
    ck_assert(f != NULL);
    for (int64_t k = 0; k < 120; k++) {
      ac_case c;
      ac_err e;
      ck_assert_msg(ac_generate(f, ac_test_seed(), k, &l, &c, &e) == 0, "%s: %s", f->name, e.msg);
      ck_assert(ac_problem_quantized(&c.p) && consistent(&c));
      for (int n = 0; n < 7; n++) {
        char key[64];
        snprintf(key, sizeof key, "\"quant_adv_k\":\"%s\"", names[n]);
        seen[n] |= strstr(c.params_json, key) != NULL;
      }
      ac_counts n = ac_case_counts(&c);
      for (int64_t x = 0; x < n.k && fam; x++) nonfinite |= !isfinite(((const double *)c.k)[x]);
      ac_case_free(&c);
    }
  }
  for (int n = 0; n < 7; n++) ck_assert_msg(seen[n], "no %s block drawn", names[n]);
  ck_assert(nonfinite);
}
END_TEST

/* The fuzzer's case edits on quantized cases: every result keeps its values its codes', or is
 * refused (a slice that cuts a block). */
START_TEST(edits_keep_codes_and_values_together)
{
  ac_gen_limits l;
  limits(&l, ALL_FORMATS, 1);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x65646974);
  const char *fams[] = {"quant_blocks", "normal", "varlen_mix", "page_table", "gqa"};
  int edits = 0;
  for (int fi = 0; fi < 5; fi++) {
    const ac_family *f = ac_family_find(fams[fi]);
    for (int64_t k = 0; k < 12; k++) {
      ac_case c, out;
      ac_err e;
      ck_assert(ac_generate(f, ac_test_seed(), k, &l, &c, &e) == 0);
      if (!ac_problem_quantized(&c.p)) {
        ac_case_free(&c);
        continue;
      }
      for (int m = 0; m < 12; m++) {
        char desc[160];
        if (ac_mutate(&c, 0.1, &r, &l, &out, desc, sizeof desc, &e) == 0) {
          ck_assert_msg(ac_problem_quantized(&out.p) && consistent(&out), "%s after '%s'", fams[fi], desc);
          ac_case_free(&out);
          edits++;
        }
      }
      if (!c.lay) {
        for (int dim = 0; dim < 4; dim++) {
          int64_t len = dim == 0 ? c.p.tq : dim == 1 ? c.p.tk : dim == 2 ? c.p.dk : c.p.dv;
          if (len < 2) continue;
          if (ac_case_drop(&c, dim, 0, len / 2, &out, &e) == 0) {
            ck_assert_msg(consistent(&out), "%s: drop of dim %d", fams[fi], dim);
            ac_case_free(&out);
            edits++;
          }
        }
        ac_slice s;
        ac_slice_all(&c.p, &s);
        s.nb = 1, s.b0 = c.p.batch - 1;
        ck_assert_msg(ac_case_slice(&c, &s, &out, &e) == 0 && consistent(&out), "%s: slice: %s", fams[fi], e.msg);
        ac_case_free(&out);
      } else {
        for (int64_t b = 0; b < c.p.l.nseq; b++) {
          if (ac_layout_tq(&c, b) < 1) continue;
          int rc = ac_layout_seq_case(&c, b, &out, &e);
          ck_assert_msg(rc == 0, "%s: sequence %lld: %s", fams[fi], (long long)b, e.msg);
          ck_assert_msg(consistent(&out), "%s: sequence %lld inconsistent", fams[fi], (long long)b);
          ac_case_free(&out);
          edits++;
        }
      }
      ac_case_free(&c);
    }
  }
  ck_assert_msg(edits > 100, "only %d edits", edits);
}
END_TEST

/* report.html's weights of a finding's worst row read each tensor in its own dtype: Q in the
 * case dtype, quantized K as its codes' exact values (binary64), not K as if it were binary32. */
START_TEST(report_row_weights_read_quantized_k)
{
  ac_gen_limits l;
  limits(&l, 1u << AC_QF_Q8_0 | 1u << AC_QF_E4M3FN, 1);
  l.q_formats = 0;
  const char *fams[] = {"normal", "quant_blocks"};
  int rows = 0;
  for (int fi = 0; fi < 2; fi++)
    for (int64_t k = 0; k < 8; k++) {
      ac_case c;
      ac_err e;
      ck_assert(ac_generate(ac_family_find(fams[fi]), ac_test_seed(), k, &l, &c, &e) == 0);
      const ac_problem *p = &c.p;
      if (!ac_tensor_quantized(p, 'k') || c.lay || p->f.used || p->dtype == AC_F64) {
        ac_case_free(&c);
        continue;
      }
      double *w = ac_xmalloc(sizeof(double) * (size_t)p->tk), *s = ac_xmalloc(sizeof(double) * (size_t)p->tk);
      int64_t i = p->tq - 1, h = p->heads - 1, nv;
      if (ac_report_row_weights(&c, 0, h, i, w, &nv) == 0) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < nv; j++) {
          double d = 0;
          for (int64_t t = 0; t < p->dk; t++)
            d += ac_load(p->dtype, c.q, ac_qidx(p, 0, h, i, t)) *
                 ((const double *)c.k)[ac_kidx(p, 0, ac_kv_head(p, h), j, t)];
          s[j] = d * ac_problem_scale(p);
          m = fmax(m, s[j]);
        }
        for (int64_t j = 0; j < nv; j++) sum += (s[j] = exp(s[j] - m));
        for (int64_t j = 0; j < nv; j++)
          ck_assert_msg(fabs(w[j] - s[j] / sum) <= 1e-12, "%s %lld: weight %lld is %g, not %g", fams[fi], (long long)k,
                        (long long)j, w[j], s[j] / sum);
        rows++;
      }
      free(w);
      free(s);
      ac_case_free(&c);
    }
  ck_assert_msg(rows >= 4, "only %d rows compared", rows);
}
END_TEST

/* ATTNCHECK_FEAT_QUANT_LAYOUT: the extended specs are drawn (and nothing else without it: the other
 * tests); ATTNCHECK_FEAT_QUANT_STORE with quantizers: every quantized case of a store-only kernel is a
 * store case of one of them, its codes its quantizer's; cases written and read back alike. */
START_TEST(layouts_and_stores_drawn)
{
  ac_gen_limits l;
  limits(&l, ALL_FORMATS, 1);
  l.features |= AC_FEAT_QUANT_LAYOUT;
  int seen[6] = {0};   /* group, tile, channel group, scale dtype, float zero, packed */
  const char *fams[] = {"normal", "quant_blocks", "gqa", "late_max", "varlen_mix"};
  for (int st = 0; st < 2; st++) {
    if (st) {
      static const char *const qz[] = {"absmax-even-f32-sat", "minmax-away-f32-sat", "ggml"};
      ac_err e;
      l.features |= AC_FEAT_QUANT_STORE;
      l.nstore = 3, l.store_only = 1;
      for (int j = 0; j < 3; j++) ck_assert(ac_qstore_parse(qz[j], &l.store_q[j], &e) == 0);
    }
    int stores = 0;
    for (int fi = 0; fi < 5; fi++)
      for (int64_t k = 0; k < 24; k++) {
        ac_case c, back;
        ac_err e;
        ck_assert(ac_generate(ac_family_find(fams[fi]), ac_test_seed(), k, &l, &c, &e) == 0);
        for (int i = 1; i < 3 && c.p.quant[i].fmt; i++) {
          const ac_qspec *q = &c.p.quant[i];
          seen[0] |= q->gran == AC_QG_BLOCK && !ac_qfmt_get(q->fmt)->block && !q->tgroup;
          seen[1] |= q->gran == AC_QG_BLOCK && q->tgroup > 1;
          seen[2] |= q->gran == AC_QG_CHANNEL && q->tgroup > 1;
          seen[3] |= q->sdtype != 0;
          seen[4] |= q->zdtype != 0;
          seen[5] |= q->pack != 0;
          if (st) {
            ck_assert_msg(q->store == l.store_q[0] || q->store == l.store_q[1] || q->store == l.store_q[2],
                          "%s %lld: a store case of an undeclared quantizer", fams[fi], (long long)k);
            stores += i == 1;
          }
        }
        if (ac_problem_quantized(&c.p)) {
          ck_assert(consistent(&c));
          char path[512];
          snprintf(path, sizeof path, "%s/ls-%d-%d-%lld.npz", ac_test_tmpdir(), st, fi, (long long)k);
          ck_assert_msg(ac_case_write(&c, path, &e) == 0 && ac_case_read(&back, path, &e) == 0, "%s", e.msg);
          ck_assert(ac_case_hash(&back) == ac_case_hash(&c));
          ac_case_free(&back);
          unlink(path);
        }
        ac_case_free(&c);
      }
    if (st) ck_assert_msg(stores > 20, "%d store cases of 120", stores);
  }
  for (int k = 0; k < 6; k++) ck_assert_msg(seen[k], "layout part %d never drawn", k);
}
END_TEST

int main(void)
{
  int nf;
  ac_families(&nf);
  Suite *s = suite_create("fuzz_quant");
  TCase *tc = tcase_create("quant");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, every_family_draws_quantized_cases, 0, nf);
  tcase_add_test(tc, no_quantized_case_without_formats);
  tcase_add_test(tc, quant_families_draw_every_adversary);
  tcase_add_test(tc, edits_keep_codes_and_values_together);
  tcase_add_test(tc, report_row_weights_read_quantized_k);
  tcase_add_test(tc, layouts_and_stores_drawn);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
