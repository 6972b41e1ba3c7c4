/* tfuzz_serving: the generators reach the split-KV and serving-layout defects of
 * docs/bugclasses.md §2.25-2.26 by construction, not by luck: split_kv puts a later split's
 * maximum past binary32's exp range above the first 1024 keys' (the split of a decode kernel), and
 * sinks at the rows' level; sinks draws split-KV-sized key counts with sinks at the rows' level;
 * page_table draws GQA caches whose last pages are partly filled at every power of two from 2 to
 * 512 (and at non-powers of two), and pools past 65,536 pages whose sequences hold ids on both
 * sides of 65,535, within --max-elems. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "testutil.h"

static const ac_family *family(const char *name)
{
  const ac_family *f = ac_family_find(name);
  ck_assert_msg(f != NULL, "no family %s", name);
  return f;
}

/* Scores scale q.k of (batch 0, head h, row i) into s[tk] (dense cases). */
static void scores(const ac_case *c, int64_t h, int64_t i, double *s)
{
  const ac_problem *p = &c->p;
  for (int64_t j = 0; j < p->tk; j++) {
    double d = 0;
    for (int64_t x = 0; x < p->dk; x++)
      d += ac_load(p->dtype, c->q, ac_qidx(p, 0, h, i, x)) *
           ac_load(p->dtype, c->k, ac_kidx(p, 0, ac_kv_head(p, h), j, x));
    s[j] = d * ac_problem_scale(p);
  }
}

/* LSE of s[0..n). */
static double lse(const double *s, int64_t n)
{
  double m = -INFINITY, t = 0;
  for (int64_t j = 0; j < n; j++) m = s[j] > m ? s[j] : m;
  for (int64_t j = 0; j < n; j++) t += exp(s[j] - m);
  return m + log(t);
}

/* 1 when head 0's last row has a sink within 3.5 of its LSE (the level pattern). */
static int sink_at_level(const ac_case *c, const double *s)
{
  if (!(c->p.f.used & AC_FEAT_SINKS)) return 0;
  int64_t n = ac_row_visible(&c->p, c->p.tq - 1);
  return n > 0 && fabs((double)c->sinks[0] - lse(s, n)) <= 3.5;
}

START_TEST(split_kv_later_split_far_above)
{
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  int far = 0, level = 0, n = 40;
  for (int64_t k = 0; k < n; k++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(family("split_kv"), 11, k, &l, &c, &e) == 0, "%lld: %s", (long long)k, e.msg);
    double *s = ac_xmalloc(sizeof(double) * (size_t)c.p.tk);
    scores(&c, 0, c.p.tq - 1, s);
    int64_t vis = ac_row_visible(&c.p, c.p.tq - 1);
    double m0 = -INFINITY, m1 = -INFINITY;
    for (int64_t j = 0; j < vis; j++) {
      if (j < 1024)
        m0 = s[j] > m0 ? s[j] : m0;
      else
        m1 = s[j] > m1 ? s[j] : m1;
    }
    far += m1 - m0 > 88.8; /* e^(m1 - m0) overflows binary32 */
    level += sink_at_level(&c, s);
    free(s);
    ac_case_free(&c);
  }
  ck_assert_msg(far >= 3, "a later split's maximum past exp's range above the first 1024 keys' in %d of %d cases", far,
                n);
  ck_assert_msg(level >= 5, "sinks at the rows' level in %d of %d cases", level, n);
}
END_TEST

START_TEST(sinks_at_split_sizes)
{
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  int hit = 0, n = 100;
  for (int64_t k = 0; k < n; k++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(family("sinks"), 12, k, &l, &c, &e) == 0, "%lld: %s", (long long)k, e.msg);
    if (c.p.tk > 1024 && ac_row_visible(&c.p, c.p.tq - 1) > 1024) {
      double *s = ac_xmalloc(sizeof(double) * (size_t)c.p.tk);
      scores(&c, 0, c.p.tq - 1, s);
      hit += sink_at_level(&c, s);
      free(s);
    }
    ac_case_free(&c);
  }
  ck_assert_msg(hit >= 4, "sinks at the rows' level against more than 1024 keys in %d of %d cases", hit, n);
}
END_TEST

START_TEST(page_table_gqa_partial_pages_and_high_ids)
{
  ac_gen_limits l;
  ac_gen_limits_init(&l);
  l.features |= AC_FEAT_LAYOUTS;
  uint32_t pow2 = 0; /* bit k: page size 2^k met with GQA and a partly filled last page */
  int odd = 0, high = 0;
  for (int64_t k = 0; k < 200; k++) {
    ac_case c;
    ac_err e;
    ck_assert_msg(ac_generate(family("page_table"), 13, k, &l, &c, &e) == 0, "%lld: %s", (long long)k, e.msg);
    const ac_problem *p = &c.p;
    int64_t ps = p->l.page_size, lo = INT64_MAX, hi = -1;
    int partial = 0;
    for (int64_t b = 0; b < p->l.nseq; b++) {
      partial |= ac_layout_tk(&c, b) % ps != 0;
      for (int64_t x = 0; x < (ac_layout_tk(&c, b) + ps - 1) / ps; x++) {
        int64_t id = c.lay->block_table[b * p->l.max_pages + x];
        lo = id < lo ? id : lo, hi = id > hi ? id : hi;
      }
    }
    if (partial && p->heads > p->kv_heads) {
      if ((ps & (ps - 1)) == 0)
        pow2 |= 1u << __builtin_ctzll((unsigned long long)ps);
      else
        odd++;
    }
    if (lo <= 65535 && hi > 65535) {
      high++;
      ck_assert_int_le(p->tk * p->kv_heads * p->dk, l.max_elems);
    }
    ac_case_free(&c);
  }
  for (int x = 1; x <= 9; x++)
    ck_assert_msg(pow2 & (1u << x), "no GQA case with a partial last page of page size %d", 1 << x);
  ck_assert_msg(odd >= 8, "%d GQA cases with partial last pages of a page size that is not a power of two", odd);
  ck_assert_msg(high >= 10, "%d cases whose sequences hold page ids on both sides of 65535", high);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("fuzz_serving");
  TCase *tc = tcase_create("generators");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, split_kv_later_split_far_above);
  tcase_add_test(tc, sinks_at_split_sizes);
  tcase_add_test(tc, page_table_gqa_partial_pages_and_high_ids);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
