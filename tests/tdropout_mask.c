/* tdropout_mask.c: the DROPOUT-MASK verdict (src/judge/dropout_mask.c, docs/dropout.md) both ways.
 * No false alarm on masks of correct generators: the reference generator (53-bit threshold), an
 * 8-bit threshold as FlashAttention-2's (keep probability within 2^-8 of 1 - p) and a binary32
 * uniform compared with p (numpy's), over drop probabilities from 2^-10 to 1 - 2^-14 and 0, shapes
 * from one entry to 2 x 8 x 128 x 160, causal and windowed (the entries rows cannot see hold
 * anything and are not judged). Every structure fires, the test that names it among those fired: a mask
 * repeated over heads or batches, every row the same, a tile of 16 or 64 keys or 32 rows repeated,
 * keys alternating, the kept fraction of another p, everything kept, a drop at p = 0; and a mask
 * repeated over two heads of 13 x 13 entries (the smallest the header's bound claims) fires. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "toracle_ref.h"
#include "dropout.h"
#include "dropout_mask.h"
#include "variants.h"

enum { GEN_REF, GEN_U8, GEN_F32 };

static void mkcase(ac_case *c, ac_mask m, int64_t B, int64_t H, int64_t tq, int64_t tk, double p)
{
  ac_err e;
  ref_case(c, AC_F32, m, B, H, H, tq, tk, 4, 4);
  ac_features_plain(&c->p);
  c->p.f.used = AC_FEAT_DROPOUT;
  c->p.f.dropout_p = p;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
}

/* c's mask from generator g with drop probability p (the case's own p unless the test lies about it). */
static void draw(ac_case *c, int g, double p, ac_rng *r)
{
  size_t n = (size_t)ac_feat_tensor_count(&c->p, AC_FT_DROPOUT_MASK);
  if (g == GEN_REF) {
    ac_problem q = c->p;
    q.f.dropout_p = p, q.f.dropout_seed = ac_rng_next(r);
    ac_dropout_fill(&q, c->dropout_mask);
    return;
  }
  uint32_t t8 = (uint32_t)floor((1 - p) * 255.0);   /* FlashAttention-2: keep when an 8-bit draw <= t8 */
  for (size_t i = 0; i < n; i++)
    c->dropout_mask[i] = g == GEN_U8 ? (uint8_t)((ac_rng_next(r) & 255) <= t8)
                                     : (uint8_t)((float)ac_rng_uniform(r) >= (float)p);
}

static int fires(const ac_case *c, char *msg, size_t len)
{
  ac_dropout_verdict v;
  ac_dropout_mask_judge(c, c->dropout_mask, &v);
  snprintf(msg, len, "%s", v.fired);
  ck_assert_int_gt(v.tests, 0);
  return v.failed;
}

START_TEST(correct_generators_pass)
{
  static const double ps[] = {0x1.5c28f6p-3, 0.5, 0x1.ccccccp-1, 0x1p-10, 0x1.fffcp-1, 0x1.333334p-2, 0.0};
  static const int64_t shapes[][4] = {{1, 1, 1, 1}, {2, 4, 64, 96}, {3, 2, 17, 200}, {2, 8, 128, 160}};
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x646d736bu);
  int n = 0;
  for (size_t s = 0; s < 4; s++)
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
      for (int g = GEN_REF; g <= GEN_F32; g++)
        for (int m = 0; m < 3; m++) {
          ac_case c;
          mkcase(&c, m == 1 ? AC_MASK_CAUSAL : AC_MASK_NONE, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3],
                 ps[k]);
          if (m == 2) c.p.f.used |= AC_FEAT_WINDOW, c.p.f.win_left = 7, c.p.f.win_right = 2;
          draw(&c, g, ps[k], &r);
          for (size_t i = 0; m && i < (size_t)ac_feat_tensor_count(&c.p, AC_FT_DROPOUT_MASK); i++) {
            int64_t j = (int64_t)i % c.p.tk, row = (int64_t)i / c.p.tk, qi = row % c.p.tq;
            int64_t h = row / c.p.tq % c.p.heads, b = row / c.p.tq / c.p.heads;
            if (!ac_features_visible(&c, b, h, qi, j)) c.dropout_mask[i] = 0;   /* not judged */
          }
          char msg[256];
          ck_assert_msg(!fires(&c, msg, sizeof msg), "false alarm: shape %d, p %a, generator %d, mask %d: %s", (int)s,
                        ps[k], g, m, msg);
          n++;
          ac_case_free(&c);
        }
  ck_assert_int_eq(n, 4 * 7 * 3 * 3);
}
END_TEST

enum { S_HEADS, S_BATCHES, S_ROWS, S_KEYS16, S_KEYS64, S_ROWS32, S_ALTERNATE, S_OTHER_P, S_ALL_KEPT, S_DROP_AT_0 };

/* A 2 x 4 x 128 x 256 mask at p = 0.17 (0.5 alternating, 0 for the drop) broken by structure s. */
static void broken(ac_case *c, int s, ac_rng *r)
{
  double p = s == S_ALTERNATE ? 0.5 : s == S_DROP_AT_0 ? 0.0 : 0x1.5c28f6p-3;
  mkcase(c, AC_MASK_NONE, 2, 4, 128, 256, p);
  draw(c, GEN_REF, s == S_OTHER_P ? 0.25 : p, r);
  const ac_problem *q = &c->p;
  for (int64_t b = 0; b < q->batch; b++)
    for (int64_t h = 0; h < q->heads; h++)
      for (int64_t i = 0; i < q->tq; i++)
        for (int64_t j = 0; j < q->tk; j++) {
          uint8_t *m = c->dropout_mask;
          size_t at = (size_t)(((b * q->heads + h) * q->tq + i) * q->tk + j);
          size_t row = (size_t)(((b * q->heads + h) * q->tq) * q->tk);
          if (s == S_HEADS) m[at] = m[(size_t)((b * q->heads * q->tq + i) * q->tk + j)];
          if (s == S_BATCHES) m[at] = m[(size_t)((h * q->tq + i) * q->tk + j)];
          if (s == S_ROWS) m[at] = m[row + (size_t)j];
          if (s == S_KEYS16) m[at] = m[at - (size_t)(j - j % 16)];
          if (s == S_KEYS64) m[at] = m[at - (size_t)(j - j % 64)];
          if (s == S_ROWS32) m[at] = m[at - (size_t)((i - i % 32) * q->tk)];
          if (s == S_ALTERNATE && (j & 1)) m[at] = !m[at - 1];   /* antithetic pairs */
          if (s == S_ALL_KEPT) m[at] = 1;
        }
  if (s == S_DROP_AT_0) c->dropout_mask[12345] = 0;
}

START_TEST(structures_fire)
{
  static const char *named[] = {"heads (h, h+1)", "batches (b, b+1)", "rows (i, i+1)", "keys (j, j+16)",
                                "keys (j, j+64)", "rows (i, i+32)", "keys (j, j+1)", "kept fraction", "kept fraction",
                                "kept fraction"};
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x73747275u);
  for (int s = S_HEADS; s <= S_DROP_AT_0; s++) {
    ac_case c;
    broken(&c, s, &r);
    char msg[256];
    int f = fires(&c, msg, sizeof msg);
    ck_assert_msg(f > 0 && strstr(msg, named[s]), "structure %d: %d tests fired: %s",
                  s, f, msg);
    ac_case_free(&c);
  }
}
END_TEST

START_TEST(smallest_head_repeat)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 0x736d616cu);
  ac_case c;
  mkcase(&c, AC_MASK_NONE, 1, 2, 13, 13, 0x1.5c28f6p-3);
  draw(&c, GEN_REF, c.p.f.dropout_p, &r);
  memcpy(c.dropout_mask + 169, c.dropout_mask, 169);
  char msg[256];
  ck_assert_msg(fires(&c, msg, sizeof msg) && strstr(msg, "heads"), "%s", msg);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("dropout_mask");
  TCase *tc = tcase_create("verdict");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, correct_generators_pass);
  tcase_add_test(tc, structures_fire);
  tcase_add_test(tc, smallest_head_repeat);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
