/* tproblem: masks, validation (sizes, kv heads, scale, overflow, memory cap, strides), the
 * default scale, strided scatter/gather with NaN gaps, guarded tensors. */
#include "config.h"
#include <math.h>
#include <stddef.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "problem.h"
#include "rng.h"
#include "testutil.h"

#define REQUIRE(expr, ...)                  \
  do {                                      \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

static ac_problem base(void)
{
  ac_problem p;
  memset(&p, 0, sizeof p);
  p.dtype = AC_F16;
  p.mask = AC_MASK_CAUSAL;
  p.batch = 2;
  p.heads = 8;
  p.kv_heads = 2;
  p.tq = 5;
  p.tk = 7;
  p.dk = 16;
  p.dv = 8;
  p.scale_is_default = 1;
  p.scale = 0.25;
  return p;
}

START_TEST(mask_names)
{
  ac_mask m;
  ck_assert_int_eq(ac_mask_parse("none", &m), 0);
  ck_assert_int_eq(m, AC_MASK_NONE);
  ck_assert_int_eq(ac_mask_parse("causal", &m), 0);
  ck_assert_int_eq(m, AC_MASK_CAUSAL);
  const char *br[] = {"causal-bottom-right", "causal-br", "bottom-right"};
  for (int i = 0; i < 3; i++) {
    m = AC_MASK_NONE;
    ck_assert_int_eq(ac_mask_parse(br[i], &m), 0);
    ck_assert_int_eq(m, AC_MASK_CAUSAL_BR);
  }
  ck_assert_int_eq(ac_mask_parse("causal-top", &m), -1);
  ck_assert_int_eq(ac_mask_parse("", &m), -1);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(ac_mask_parse(ac_mask_name((ac_mask)i), &m), 0);
    ck_assert_int_eq(m, i);
  }
}
END_TEST

/* Visible counts equal a brute-force count of ac_visible, and the visible keys are a prefix. */
START_TEST(visible_counts)
{
  for (int mask = 0; mask < 3; mask++)
    for (int tq = 1; tq <= 9; tq++)
      for (int tk = 1; tk <= 9; tk++) {
        ac_problem p = base();
        p.mask = (ac_mask)mask;
        p.tq = tq;
        p.tk = tk;
        for (int i = 0; i < tq; i++) {
          int64_t n = 0, prefix = 1;
          for (int j = 0; j < tk; j++) {
            if (ac_visible(&p, i, j)) {
              if (j != n) prefix = 0;
              n++;
            }
          }
          REQUIRE(prefix && n == ac_visible_count(&p, i), "mask %d tq %d tk %d row %d: %lld vs %lld", mask, tq, tk, i,
                  (long long)n, (long long)ac_visible_count(&p, i));
        }
        /* bottom-right: the last row sees every key; top-left causal: row i sees i+1 */
        if (mask == AC_MASK_CAUSAL_BR) ck_assert_int_eq(ac_visible_count(&p, tq - 1), tk);
        if (mask == AC_MASK_CAUSAL) ck_assert_int_eq(ac_visible_count(&p, 0), 1);
      }
  ac_problem p = base();
  ck_assert_int_eq(ac_kv_head(&p, 3), 0);
  ck_assert_int_eq(ac_kv_head(&p, 4), 1);
  ck_assert_int_eq(ac_kv_head(&p, 7), 1);
}
END_TEST

START_TEST(validation_errors)
{
  ac_err e;
  ac_problem p = base();
  ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == 0, "valid problem rejected: %s", e.msg);
  ac_counts c;
  ck_assert_int_eq(ac_problem_counts(&p, &c, &e), 0);
  ck_assert_int_eq(c.q, 2 * 8 * 5 * 16);
  ck_assert_int_eq(c.k, 2 * 2 * 7 * 16);
  ck_assert_int_eq(c.v, 2 * 2 * 7 * 8);
  ck_assert_int_eq(c.o, 2 * 8 * 5 * 8);
  ck_assert_int_eq(c.rows, 2 * 8 * 5);

  static const size_t offs[] = {offsetof(ac_problem, batch), offsetof(ac_problem, heads), offsetof(ac_problem, kv_heads),
                                offsetof(ac_problem, tq), offsetof(ac_problem, tk), offsetof(ac_problem, dk),
                                offsetof(ac_problem, dv)};
  for (int i = 0; i < 7; i++) {
    p = base();
    int64_t *d = (int64_t *)((char *)&p + offs[i]);
    *d = 0;
    e.msg[0] = 0;
    ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == -1, "dimension %d = 0 accepted", i);
    ck_assert(e.msg[0] != 0);
    *d = -3;
    ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == -1, "dimension %d < 0 accepted", i);
  }
  p = base();
  p.kv_heads = 3;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "kv_heads"));
  p = base();
  p.scale_is_default = 0;
  p.scale = NAN;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "scale"));
  p.scale = -INFINITY;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  p.scale = 0;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), 0);   /* zero and negative scales are fine */
  p.scale = -3.5;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), 0);
  /* products that overflow 64 bits */
  p = base();
  p.batch = 1LL << 40;
  p.heads = 1LL << 20;
  p.kv_heads = 1;
  p.tq = 1LL << 10;
  ck_assert_int_eq(ac_problem_validate(&p, UINT64_MAX, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "overflow"));
  p = base();
  p.dtype = AC_F64;
  p.tq = p.tk = INT64_MAX / 2;
  p.dk = p.dv = 1;
  p.batch = p.heads = p.kv_heads = 1;
  ck_assert_int_eq(ac_problem_validate(&p, UINT64_MAX, &e), -1);   /* bytes overflow */
  /* memory cap: q+k+v+o of base() in f16 is (1280 + 448 + 224 + 640) * 2 = 5184 bytes */
  p = base();
  ck_assert_int_eq(ac_problem_validate(&p, 5184, &e), 0);
  ck_assert_int_eq(ac_problem_validate(&p, 5183, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "cap"));
  p.dtype = (ac_dtype)17;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  p = base();
  p.mask = (ac_mask)9;
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
}
END_TEST

START_TEST(memory_cap_default_and_override)
{
  unsetenv("ATTNCHECK_MEM_CAP");
  ac_set_mem_cap(0);
  ck_assert_uint_eq(ac_mem_cap(), 8ULL << 30);
  setenv("ATTNCHECK_MEM_CAP", "512M", 1);
  ac_set_mem_cap(0);
  ck_assert_uint_eq(ac_mem_cap(), 512ULL << 20);
  ac_set_mem_cap(12345);
  ck_assert_uint_eq(ac_mem_cap(), 12345);
  setenv("ATTNCHECK_MEM_CAP", "lots", 1);
  ac_set_mem_cap(0);
  ck_assert_uint_eq(ac_mem_cap(), 8ULL << 30);
  unsetenv("ATTNCHECK_MEM_CAP");
}
END_TEST

/* The default scale is 1/sqrt(dk) correctly rounded: no binary64 value is nearer. */
START_TEST(default_scale_is_correctly_rounded)
{
  ac_problem p = base();
  p.dk = 64;
  ck_assert(ac_problem_scale(&p) == 0.125);
  p.dk = 2;
  ck_assert(ac_problem_scale(&p) == 0x1.6a09e667f3bcdp-1);
  mpfr_t exact, d;
  mpfr_inits2(300, exact, d, (mpfr_ptr)0);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 4);
  for (int i = 0; i < 20000; i++) {
    p.dk = i < 10000 ? i + 1 : ac_rng_range(&r, 1, INT64_MAX);
    double s = ac_problem_scale(&p);
    mpfr_set_si(exact, (long)p.dk, MPFR_RNDN);
    mpfr_rec_sqrt(exact, exact, MPFR_RNDN);
    const double nb[2] = {nextafter(s, 0), nextafter(s, INFINITY)};
    mpfr_sub_d(d, exact, s, MPFR_RNDN);
    mpfr_abs(d, d, MPFR_RNDN);
    for (int k = 0; k < 2; k++) {
      MPFR_DECL_INIT(d2, 300);
      mpfr_sub_d(d2, exact, nb[k], MPFR_RNDN);
      mpfr_abs(d2, d2, MPFR_RNDN);
      REQUIRE(mpfr_cmp(d, d2) < 0, AC_SEED_FMT "scale of dk=%lld is %a, not nearest", AC_SEED_ARG, (long long)p.dk, s);
    }
  }
  mpfr_clears(exact, d, (mpfr_ptr)0);
  p.scale_is_default = 0;
  p.scale = -0x1.8p-3;
  ck_assert(ac_problem_scale(&p) == -0x1.8p-3);
}
END_TEST

START_TEST(stride_validation)
{
  ac_err e;
  ac_problem p = base();
  const int64_t H = 8, T = 5, D = 16;
  /* BSHD (FlashAttention) layout for q: valid */
  int64_t bshd[4] = {T * H * D, D, H * D, 1};
  memcpy(p.q_stride, bshd, sizeof bshd);
  ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == 0, "%s", e.msg);
  /* padded rows and an element gap: valid */
  int64_t pad[4] = {H * T * (2 * D + 3), T * (2 * D + 3), 2 * D + 3, 2};
  memcpy(p.q_stride, pad, sizeof pad);
  ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(ac_strided_span(2, H, T, D, pad), 1 + H * T * (2 * D + 3) + 7 * T * (2 * D + 3) + 4 * (2 * D + 3) + 15 * 2);
  /* overlapping: rows one element too close */
  int64_t ov[4] = {H * T * D, T * D, D - 1, 1};
  memcpy(p.q_stride, ov, sizeof ov);
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "overlap"));
  /* overlapping with the order hidden: heads inside d */
  int64_t ov2[4] = {1000000, 3, 16 * 8, 8};
  memcpy(p.q_stride, ov2, sizeof ov2);
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  /* interleaved without overlap: heads between d elements */
  int64_t il[4] = {100000, 1, 16 * 8, 8};
  memcpy(p.q_stride, il, sizeof il);
  ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == 0, "%s", e.msg);
  /* equal strides on two dimensions > 1 */
  int64_t eq[4] = {H * T * D, D, D, 1};
  memcpy(p.q_stride, eq, sizeof eq);
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  /* zero stride on a real dimension, negative stride */
  int64_t z[4] = {H * T * D, T * D, 0, 1};
  memcpy(p.q_stride, z, sizeof z);
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  int64_t n[4] = {H * T * D, T * D, -D, 1};
  memcpy(p.q_stride, n, sizeof n);
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  /* a size-1 dimension's stride does not matter */
  p = base();
  p.batch = 1;
  int64_t one[4] = {0, T * D, D, 1};
  memcpy(p.o_stride, one, sizeof one);
  p.o_stride[3] = 1;
  p.o_stride[2] = 8;
  p.o_stride[1] = T * 8;
  ck_assert_msg(ac_problem_validate(&p, 1ULL << 30, &e) == 0, "%s", e.msg);
  /* a huge stride: span counts toward the cap, overflow is an error */
  p = base();
  int64_t huge[4] = {1LL << 40, 7 * D, D, 1};   /* k: tk = 7 */
  memcpy(p.k_stride, huge, sizeof huge);
  ck_assert_int_eq(ac_problem_validate(&p, 1ULL << 30, &e), -1);
  ck_assert_msg(strstr(e.msg, "cap") != NULL, "%s", e.msg);
  huge[0] = INT64_MAX / 2;
  memcpy(p.k_stride, huge, sizeof huge);
  ck_assert_int_eq(ac_problem_validate(&p, UINT64_MAX, &e), -1);
  /* default strides are contiguous */
  p = base();
  ac_problem_default_strides(&p);
  ck_assert_int_eq(p.q_stride[0], 8 * 5 * 16);
  ck_assert_int_eq(p.q_stride[1], 5 * 16);
  ck_assert_int_eq(p.q_stride[2], 16);
  ck_assert_int_eq(p.q_stride[3], 1);
  ck_assert_int_eq(p.k_stride[0], 2 * 7 * 16);
  ck_assert_int_eq(p.v_stride[2], 8);
  ck_assert_int_eq(p.o_stride[1], 5 * 8);
  ck_assert_int_eq(ac_strided_span(2, 8, 5, 16, p.q_stride), 2 * 8 * 5 * 16);
}
END_TEST

/* Scatter dense data into a guarded strided span: exactly the strided elements change, gaps keep
 * the NaN code, gather gives the data back, guards stay intact; then an overwrite is detected. */
START_TEST(scatter_gather_round_trip)
{
  static const ac_dtype types[] = {AC_F64, AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 5);
  for (int ti = 0; ti < 6; ti++) {
    const ac_dtype t = types[ti];
    const int64_t B = 2, H = 3, T = 4, D = 5;
    const int64_t layouts[3][4] = {
      {T * H * (D + 2), D + 2, H * (D + 2), 1},         /* BSHD with padded heads */
      {H * T * D * 2 + 7, T * D * 2, D * 2, 2},        /* every other element, batch gap */
      {0, 0, 0, 0},                                    /* contiguous */
    };
    for (int li = 0; li < 3; li++) {
      const int64_t *st = layouts[li];
      const int64_t n = B * H * T * D, span = ac_strided_span(B, H, T, D, st);
      ck_assert_int_ge(span, n);
      const size_t esz = ac_dtype_size(t);
      unsigned char *dense = malloc((size_t)n * esz), *back = malloc((size_t)n * esz);
      for (int64_t i = 0; i < n; i++) {
        uint64_t bits;
        do bits = ac_rng_next(&r); while (ac_bits_isnan(t, bits) || bits == ac_nan_bits(t));
        ac_store_bits(t, dense, (size_t)i, bits);
      }
      ac_guarded g;
      ac_err e;
      ck_assert_int_eq(ac_guarded_alloc(&g, t, (size_t)span, 16, &e), 0);
      ck_assert(ac_guarded_intact(&g));
      for (int64_t i = 0; i < span; i++) REQUIRE(ac_load_bits(t, g.data, (size_t)i) == ac_nan_bits(t), "pre-fill");
      ac_scatter_strided(t, dense, B, H, T, D, st, g.data);
      int64_t changed = 0;
      for (int64_t i = 0; i < span; i++) changed += ac_load_bits(t, g.data, (size_t)i) != ac_nan_bits(t);
      ck_assert_msg(changed == n, "%s layout %d: %lld of %lld elements written", ac_dtype_name(t), li,
                    (long long)changed, (long long)n);
      ck_assert(ac_guarded_intact(&g));
      memset(back, 0, (size_t)n * esz);
      ac_gather_strided(t, g.data, B, H, T, D, st, back);
      ck_assert_msg(memcmp(dense, back, (size_t)n * esz) == 0, "%s layout %d: gather differs", ac_dtype_name(t), li);
      /* element (b,h,i,d) = (1,2,3,4) sits at its strided offset */
      int64_t s[4];
      memcpy(s, st, sizeof s);
      if (!s[0] && !s[1] && !s[2] && !s[3]) s[0] = H * T * D, s[1] = T * D, s[2] = D, s[3] = 1;
      const int64_t off = 1 * s[0] + 2 * s[1] + 3 * s[2] + 4 * s[3], di = ((1 * H + 2) * T + 3) * D + 4;
      ck_assert_uint_eq(ac_load_bits(t, g.data, (size_t)off), ac_load_bits(t, dense, (size_t)di));
      /* overwrites just outside the span on either side are detected */
      ac_store_bits(t, g.data, (size_t)span, 0);
      ck_assert(!ac_guarded_intact(&g));
      ac_store_bits(t, g.data, (size_t)span, ac_nan_bits(t));
      ck_assert(ac_guarded_intact(&g));
      ac_store_bits(t, g.alloc, 0, ac_nan_bits(t) ^ 1);
      ck_assert(!ac_guarded_intact(&g));
      ac_guarded_free(&g);
      ck_assert_ptr_null(g.alloc);
      free(dense);
      free(back);
    }
  }
}
END_TEST

START_TEST(guarded_edge_cases)
{
  ac_guarded g;
  ac_err e;
  ck_assert_int_eq(ac_guarded_alloc(&g, AC_F32, 0, 4, &e), 0);
  ck_assert(ac_guarded_intact(&g));
  ac_guarded_free(&g);
  ck_assert_int_eq(ac_guarded_alloc(&g, AC_F32, SIZE_MAX / 2, 4, &e), -1);
  ck_assert(e.msg[0] != 0);
  ck_assert_int_eq(ac_guarded_alloc(&g, (ac_dtype)42, 4, 4, &e), -1);
  ck_assert_int_eq(ac_guarded_alloc(&g, AC_BF16, 10, 0, &e), 0);
  ck_assert(ac_guarded_intact(&g));   /* no margins: nothing to break */
  ac_guarded_free(&g);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("problem");
  TCase *tc = tcase_create("problem");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, mask_names);
  tcase_add_test(tc, visible_counts);
  tcase_add_test(tc, validation_errors);
  tcase_add_test(tc, memory_cap_default_and_override);
  tcase_add_test(tc, default_scale_is_correctly_rounded);
  tcase_add_test(tc, stride_validation);
  tcase_add_test(tc, scatter_gather_round_trip);
  tcase_add_test(tc, guarded_edge_cases);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
