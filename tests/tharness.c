/* tharness: the forked, guarded harness turns each kind of kernel misbehaviour into its
 * status (CRASH with the signal, TIMEOUT, GUARD, UNWRITTEN, KERNEL-ERROR, UNSUPPORTED,
 * NONDETERMINISTIC) and hands strided layouts and NaN pre-fills to kernels as promised. */
#include "config.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <errno.h>
#include "accuda.h"
#include "tharness_util.h"

/* Each test runs twice: _i = 0 in a fresh child per case, _i = 1 through the kernel's
 * persistent worker (the default). */
static int persistent;

static ac_run_result run_kernel(const char *spec, const ac_case *c, double timeout_s, int want_lse, int in_process)
{
  ac_kernel *k = th_kernel(spec);
  ac_run_opts o;
  ac_run_opts_init(&o);
  o.persistent = persistent;
  o.timeout_s = timeout_s;
  o.want_lse = want_lse;
  o.in_process = in_process;
  ac_run_result r;
  ac_err e;
  ck_assert_msg(ac_harness_run(k, c, &o, &r, &e) == 0, AC_SEED_FMT "%s: harness: %s", AC_SEED_ARG, spec, e.msg);
  ac_kernel_free(k);
  return r;
}

static void no_zombies(void)
{
  errno = 0;
  ck_assert_msg(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child process was left behind");
}

/* The reference, checked against a direct binary64 computation of one row. */
START_TEST(reference_runs_ok_with_lse)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_CAUSAL_BR, 2, 4, 2, 5, 7, 8, 6, 1);
  ac_run_result r = run_kernel("test-reference", &c, 10, 1, 0);
  ck_assert_msg(r.status == AC_RUN_OK, AC_SEED_FMT "status %s: %s", AC_SEED_ARG, ac_run_status_name(r.status), r.msg);
  ck_assert(r.guard_ok);
  ck_assert_int_eq(r.n_unwritten, 0);
  ck_assert_int_eq(r.n_lse_unwritten, 0);
  ck_assert_int_eq(r.o_count, 2 * 4 * 5 * 6);
  ck_assert_int_eq(r.lse_count, 2 * 4 * 5);
  ck_assert_ptr_null(r.unwritten);
  /* Row b=1 h=3 i=0 sees keys 0..2 (bottom-right: j <= 0 + 7 - 5); kv head 1. */
  const ac_problem *p = &c.p;
  double s[3], m = -INFINITY, sum = 0;
  for (int j = 0; j < 3; j++) {
    double dot = 0;
    for (int d = 0; d < 8; d++) dot += ac_load(AC_F32, c.q, ac_qidx(p, 1, 3, 0, d)) * ac_load(AC_F32, c.k, ac_kidx(p, 1, 1, j, d));
    s[j] = dot * ac_problem_scale(p);
    m = fmax(m, s[j]);
  }
  for (int j = 0; j < 3; j++) sum += exp(s[j] - m);
  for (int d = 0; d < 6; d++) {
    double want = 0;
    for (int j = 0; j < 3; j++) want += exp(s[j] - m) * ac_load(AC_F32, c.v, ac_vidx(p, 1, 1, j, d));
    want /= sum;
    double got = ac_load(AC_F32, r.o, ac_oidx(p, 1, 3, 0, d));
    ck_assert_msg(fabs(got - want) <= 1e-6 * fmax(1, fabs(want)), AC_SEED_FMT "o[1,3,0,%d] = %a, want %a", AC_SEED_ARG, d, got, want);
  }
  double lse = r.lse[ac_rowidx(p, 1, 3, 0)];
  ck_assert_msg(fabs(lse - (m + log(sum))) < 1e-5, AC_SEED_FMT "lse %a want %a", AC_SEED_ARG, lse, m + log(sum));
  ac_run_result_free(&r);
  ac_case_free(&c);
  no_zombies();
}
END_TEST

START_TEST(crash_reports_sigsegv)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 4, 4, 4, 4, 2);
  ac_run_result r = run_kernel("test-crash", &c, 10, 0, 0);
  ck_assert_msg(r.status == AC_RUN_CRASH, "status %s: %s", ac_run_status_name(r.status), r.msg);
  if (!th_sanitized()) {
    ck_assert_int_eq(r.sig, SIGSEGV);
    ck_assert_msg(strstr(r.msg, "SIGSEGV") != NULL, "message: %s", r.msg);
  }
  ck_assert_ptr_null(r.o);
  ac_run_result_free(&r);
  r = run_kernel("test-abort", &c, 10, 0, 0);
  ck_assert_msg(r.status == AC_RUN_CRASH && r.sig == SIGABRT, "status %s sig %d: %s", ac_run_status_name(r.status), r.sig, r.msg);
  ck_assert_msg(strstr(r.msg, "SIGABRT") != NULL, "message: %s", r.msg);
  ac_run_result_free(&r);
  r = run_kernel("test-exit", &c, 10, 0, 0);
  ck_assert_msg(r.status == AC_RUN_CRASH && r.sig == 0, "status %s sig %d: %s", ac_run_status_name(r.status), r.sig, r.msg);
  ck_assert_msg(strstr(r.msg, "status 3") != NULL, "message: %s", r.msg);
  ac_run_result_free(&r);
  /* The caller carries on: a good kernel still runs afterwards. */
  r = run_kernel("test-reference", &c, 10, 0, 0);
  ck_assert(r.status == AC_RUN_OK);
  ac_run_result_free(&r);
  ac_case_free(&c);
  no_zombies();
}
END_TEST

START_TEST(hang_times_out_within_limit)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 4, 4, 4, 4, 3);
  double t0 = ac_now();
  ac_run_result r = run_kernel("test-hang", &c, 1.0, 0, 0);
  double dt = ac_now() - t0;
  ck_assert_msg(r.status == AC_RUN_TIMEOUT, "status %s: %s", ac_run_status_name(r.status), r.msg);
  ck_assert_msg(dt >= 0.99 && dt < 2.0, "timeout after %a s (limit 1 s)", dt);
  ac_run_result_free(&r);
  ac_case_free(&c);
  no_zombies();
}
END_TEST

START_TEST(guard_overwrite_is_reported)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F16, AC_MASK_CAUSAL, 1, 2, 1, 3, 3, 4, 5, 4);
  ac_run_result r = run_kernel("test-guard", &c, 10, 0, 0);
  ck_assert_msg(r.status == AC_RUN_OK, "status %s: %s", ac_run_status_name(r.status), r.msg);
  ck_assert_int_eq(r.guard_ok, 0);
  ck_assert_msg(strstr(r.guard_msg, "o: guard after the tensor overwritten (1 element(s), first at end+0)") != NULL,
                "guard message: %s", r.guard_msg);
  ck_assert_int_eq(r.n_unwritten, 0);
  ac_run_result_free(&r);
  r = run_kernel("test-input-write", &c, 10, 0, 0);
  ck_assert_int_eq(r.guard_ok, 0);
  ck_assert_msg(strstr(r.guard_msg, "q: kernel wrote into its input (1 element(s), first at dense index 0)") != NULL,
                "guard message: %s", r.guard_msg);
  ac_run_result_free(&r);
  r = run_kernel("test-reference", &c, 10, 0, 0);
  ck_assert_msg(r.guard_ok && !r.guard_msg[0], "clean kernel flagged: %s", r.guard_msg);
  ac_run_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(unwritten_elements_are_counted)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_BF16, AC_MASK_NONE, 2, 2, 2, 3, 4, 4, 3, 5);
  ac_run_result r = run_kernel("test-unwritten", &c, 10, 1, 0);
  ck_assert_msg(r.status == AC_RUN_OK, "status %s: %s", ac_run_status_name(r.status), r.msg);
  ck_assert(r.guard_ok);
  ck_assert_int_eq(r.n_unwritten, 1);
  ck_assert_int_eq(r.n_lse_unwritten, 1);
  ck_assert_ptr_nonnull(r.unwritten);
  for (int64_t i = 0; i < r.o_count; i++)
    ck_assert_msg(r.unwritten[i] == (i == r.o_count - 1), "unwritten flag %lld", (long long)i);
  ck_assert_uint_eq(ac_load_bits(AC_BF16, r.o, (size_t)r.o_count - 1), ac_harness_prefill_bits(AC_BF16));
  ck_assert_uint_eq(ac_load_bits(AC_F32, r.lse, (size_t)r.lse_count - 1), ac_harness_prefill_bits(AC_F32));
  ac_run_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(computed_nan_equal_to_the_prefill_is_not_unwritten)
{
  /* e4m3 has one positive NaN, the pre-fill pattern itself: a NaN the kernel propagates from q
   * must not count as unwritten (the confirming run uses the sign-flipped pattern). */
  persistent = _i;
  ac_case c;
  th_case(&c, AC_E4M3, AC_MASK_NONE, 1, 1, 1, 1, 1, 1, 1, 9);
  ac_store_bits(AC_E4M3, c.q, 0, 0x7f);
  ac_store_bits(AC_E4M3, c.k, 0, ac_encode_f64(AC_E4M3, 1.0));
  ac_store_bits(AC_E4M3, c.v, 0, ac_encode_f64(AC_E4M3, -0.09375));
  ac_run_result r = run_kernel("flash-e4m3", &c, 10, 1, 0);
  ck_assert_msg(r.status == AC_RUN_OK, "status %s: %s", ac_run_status_name(r.status), r.msg);
  ck_assert_msg(ac_bits_isnan(AC_E4M3, ac_load_bits(AC_E4M3, r.o, 0)), "o = 0x%llx, want NaN",
                (unsigned long long)ac_load_bits(AC_E4M3, r.o, 0));
  ck_assert_int_eq(r.n_unwritten, 0);
  ac_run_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(kernel_error_and_unsupported_carry_messages)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F64, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 6);
  ac_run_result r = run_kernel("test-error", &c, 10, 0, 0);
  ck_assert_msg(r.status == AC_RUN_KERNEL_ERROR, "status %s", ac_run_status_name(r.status));
  ck_assert_str_eq(r.msg, "test-error: deliberate failure (workspace too small)");
  ac_run_result_free(&r);
  r = run_kernel("test-unsupported", &c, 10, 0, 0);
  ck_assert_msg(r.status == AC_RUN_UNSUPPORTED, "status %s", ac_run_status_name(r.status));
  ck_assert_str_eq(r.msg, "test-unsupported: supports no problem (dtype 0, mask 0)");
  ac_run_result_free(&r);
  r = run_kernel("test-masked-leak", &c, 10, 0, 0);   /* f32 only */
  ck_assert_msg(r.status == AC_RUN_UNSUPPORTED, "status %s", ac_run_status_name(r.status));
  ac_run_result_free(&r);
  ac_kernel *k = th_kernel("test-unsupported");
  char why[128];
  ck_assert_int_eq(ac_kernel_supports(k, &c.p, why, sizeof why), 0);
  ck_assert_str_eq(why, "test-unsupported: supports no problem (dtype 0, mask 0)");
  ac_kernel_free(k);
  ac_case_free(&c);
}
END_TEST

START_TEST(nondeterminism_is_detected_by_two_runs)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 2, 1, 4, 4, 4, 4, 7);
  for (int in_process = 0; in_process < 2; in_process++) {
    ac_run_result a = run_kernel("test-nondeterministic", &c, 10, 0, in_process);
    ac_run_result b = run_kernel("test-nondeterministic", &c, 10, 0, in_process);
    ck_assert(a.status == AC_RUN_OK && b.status == AC_RUN_OK);
    ck_assert_msg(!ac_harness_repeat_equal(&a, &b), "two runs%s agreed bit for bit", in_process ? " in process" : "");
    int64_t li;
    int64_t d = ac_harness_first_difference(&a, &b, &li);
    ck_assert_msg(d >= 0 && d < 32, "first difference at %lld", (long long)d);
    ac_run_result_free(&a);
    ac_run_result_free(&b);
  }
  ac_run_result a = run_kernel("test-reference", &c, 10, 1, 0);
  ac_run_result b = run_kernel("test-reference", &c, 10, 1, 0);
  ck_assert(ac_harness_repeat_equal(&a, &b));
  ck_assert_int_eq(ac_harness_first_difference(&a, &b, NULL), -1);
  ac_run_result_free(&a);
  ac_run_result_free(&b);
  ac_case_free(&c);
}
END_TEST

START_TEST(masked_nan_leaks_through_test_kernel)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 3, 3, 2, 2, 8);
  /* NaN in the value of key 2, which rows 0 and 1 must not see. */
  ac_store_bits(AC_F32, c.v, ac_vidx(&c.p, 0, 0, 2, 0), 0x7fc00000);
  ac_run_result leak = run_kernel("test-masked-leak", &c, 10, 0, 0);
  ac_run_result ref = run_kernel("test-reference", &c, 10, 0, 0);
  ck_assert(leak.status == AC_RUN_OK && ref.status == AC_RUN_OK);
  ck_assert(isnan(ac_load(AC_F32, leak.o, ac_oidx(&c.p, 0, 0, 0, 0))));
  ck_assert(!isnan(ac_load(AC_F32, ref.o, ac_oidx(&c.p, 0, 0, 0, 0))));
  ck_assert(!isnan(ac_load(AC_F32, leak.o, ac_oidx(&c.p, 0, 0, 0, 1))));
  ck_assert_int_eq(leak.n_unwritten, 0);
  ac_run_result_free(&leak);
  ac_run_result_free(&ref);
  ac_case_free(&c);
}
END_TEST

/* Strided layouts with gaps: the kernel sees numbers exactly at element positions and NaN
 * in every gap and in o; the gathered output equals the contiguous run bit for bit. */
START_TEST(strided_layouts_reach_the_kernel)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 2, 2, 1, 3, 4, 5, 3, 9);
  ac_run_result dense = run_kernel("test-strides", &c, 10, 1, 0);
  ck_assert_msg(dense.status == AC_RUN_OK, "dense: %s", dense.msg);
  /* q as [b][t][h][d] with a padded head dim, k transposed heads, v and o with gaps. */
  const int64_t qs[4] = {3 * 2 * 8, 8, 2 * 8, 1};
  const int64_t ks[4] = {4 * 5, 4 * 5, 5, 1};
  const int64_t vs[4] = {64, 64, 7, 2};
  const int64_t os[4] = {2 * 3 * 4 + 1, 3 * 4, 4, 1};
  memcpy(c.p.q_stride, qs, sizeof qs);
  memcpy(c.p.k_stride, ks, sizeof ks);
  memcpy(c.p.v_stride, vs, sizeof vs);
  memcpy(c.p.o_stride, os, sizeof os);
  ac_err e;
  ck_assert_msg(ac_problem_validate(&c.p, 1u << 30, &e) == 0, "layout: %s", e.msg);
  ac_run_result strided = run_kernel("test-strides", &c, 10, 1, 0);
  ck_assert_msg(strided.status == AC_RUN_OK, "strided: %s", strided.msg);
  ck_assert_msg(strided.guard_ok, "guard: %s", strided.guard_msg);
  ck_assert(ac_harness_repeat_equal(&dense, &strided));
  ac_run_result_free(&strided);
  /* A kernel ignoring the strides would read gaps: the same kernel in process, same result. */
  strided = run_kernel("test-strides", &c, 10, 1, 1);
  ck_assert_msg(strided.status == AC_RUN_OK, "in process: %s", strided.msg);
  ck_assert(ac_harness_repeat_equal(&dense, &strided));
  ac_run_result_free(&strided);
  ac_run_result_free(&dense);
  /* The ABI problem carries exactly those strides and the rounded default scale. */
  attncheck_problem a;
  ac_problem_to_abi(&c.p, &a);
  ck_assert_int_eq(a.struct_size, sizeof a);
  ck_assert_int_eq(a.v_stride[3], 2);
  ck_assert_int_eq(a.o_stride[0], 25);
  ck_assert(a.scale == ac_problem_scale(&c.p));
  ac_case_free(&c);
}
END_TEST

START_TEST(writes_into_output_gaps_are_guard_violations)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 10);
  const int64_t os[4] = {16, 16, 4, 1};   /* two padding elements after each row */
  memcpy(c.p.o_stride, os, sizeof os);
  /* A kernel that ignores o's strides writes positions 0..3: 2 and 3 are gaps, and the
   * elements at 4 and 5 stay unwritten. */
  ac_run_result r = run_kernel("test-dense-only", &c, 10, 0, 0);
  ck_assert(r.status == AC_RUN_OK);
  ck_assert(!r.guard_ok);
  ck_assert_msg(strstr(r.guard_msg, "o: wrote into the gaps of its strided layout (2 position(s), first at offset 2)") != NULL,
                "%s", r.guard_msg);
  ck_assert_int_eq(r.n_unwritten, 2);
  ac_run_result_free(&r);
  r = run_kernel("test-reference", &c, 10, 0, 0);
  ck_assert_msg(r.guard_ok && r.n_unwritten == 0, "%s", r.guard_msg);
  ac_run_result_free(&r);
  ac_case_free(&c);
}
END_TEST

/* A kernel that reads q densely although its rows are padded reads the gaps: their NaN
 * reaches the output, where it is told apart from the output's own pre-fill. */
START_TEST(reads_outside_the_inputs_are_recognized)
{
  persistent = _i;
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 4, 4, 4, 4, 11);
  const int64_t qs[4] = {32, 32, 8, 1};
  memcpy(c.p.q_stride, qs, sizeof qs);
  ac_run_result r = run_kernel("test-dense-only", &c, 10, 0, 0);
  ck_assert(r.status == AC_RUN_OK);
  ck_assert_msg(r.guard_ok, "%s", r.guard_msg);
  ck_assert_int_eq(r.n_unwritten, 0);
  ck_assert_int_eq(r.n_guard_nan, 8);   /* rows 1 and 3 read a gap */
  for (int d = 0; d < 4; d++) {
    ck_assert_uint_eq(ac_load_bits(AC_F32, r.o, ac_oidx(&c.p, 0, 0, 1, d)), ac_nan_bits(AC_F32));
    ck_assert(!isnan(ac_load(AC_F32, r.o, ac_oidx(&c.p, 0, 0, 2, d))));
  }
  ac_run_result_free(&r);
  r = run_kernel("test-reference", &c, 10, 0, 0);
  ck_assert_int_eq(r.n_guard_nan, 0);
  ac_run_result_free(&r);
  for (int t = 0; t < AC_NDTYPES; t++) {
    ck_assert(ac_bits_isnan((ac_dtype)t, ac_harness_prefill_bits((ac_dtype)t)));
    if (t == AC_E4M3) continue;   /* one positive NaN code: the pre-fill is it */
    ck_assert(ac_harness_prefill_bits((ac_dtype)t) != ac_nan_bits((ac_dtype)t));
    ck_assert(ac_harness_prefill_bits((ac_dtype)t) != ac_encode_f64((ac_dtype)t, NAN));
    ck_assert(ac_harness_prefill_bits((ac_dtype)t) != ac_encode_f64((ac_dtype)t, -NAN));
  }
  ac_case_free(&c);
}
END_TEST

START_TEST(names_and_repeat_helpers)
{
  persistent = _i;
  ck_assert_str_eq(ac_signal_name(SIGSEGV), "SIGSEGV");
  ck_assert_str_eq(ac_run_status_name(AC_RUN_TIMEOUT), "TIMEOUT");
  ac_run_result a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.status = b.status = AC_RUN_CRASH;
  a.sig = b.sig = SIGSEGV;
  ck_assert(ac_harness_repeat_equal(&a, &b));
  b.sig = SIGABRT;
  ck_assert(!ac_harness_repeat_equal(&a, &b));
  int flags = -1;
  ck_assert_ptr_nonnull(ac_builtin_find("test-hang", &flags));
  ck_assert_int_eq(flags, 2);
  ck_assert_ptr_null(ac_builtin_find("no-such-kernel", NULL));
}
END_TEST

/* CUDA kernels go through the child: a result (OK with intact guards and every element
 * written, or UNSUPPORTED when there is no device or no CUDA build), never a crash of ours.
 * The parent only lists the kernels (no driver call). */
START_TEST(cuda_kernels_run_in_the_child_or_skip)
{
  persistent = _i;
  size_t n = 0;
  const attncheck_kernel *const *ks = ac_cuda_kernels(&n);
  ac_kernel *ref = th_kernel("test-reference");
  for (size_t i = 0; i < n && i < 6; i++) {
    ac_kernel *k = th_kernel(ks[i]->name);
    ck_assert_int_eq(k->abi->memory, ATTNCHECK_MEM_CUDA);
    for (int strided = 0; strided < 2; strided++) {
      ac_case c;
      th_case(&c, AC_F32, AC_MASK_CAUSAL_BR, 1, 2, 1, 5, 7, 16, 8, 60 + (uint64_t)i);
      if (strided) {
        const int64_t os[4] = {2 * 5 * 9, 5 * 9, 9, 1};
        memcpy(c.p.o_stride, os, sizeof os);
      }
      ac_run_opts o;
      ac_run_opts_init(&o);
      o.persistent = persistent;
      o.want_lse = 1;
      o.timeout_s = 30;
      ac_run_result r, b;
      ac_err e;
      ck_assert(ac_harness_run(k, &c, &o, &r, &e) == 0);
      ck_assert_msg(r.status == AC_RUN_OK || r.status == AC_RUN_UNSUPPORTED, "%s: %s: %s", k->name,
                    ac_run_status_name(r.status), r.msg);
      if (r.status == AC_RUN_UNSUPPORTED) {
        if (i == 0 && !strided) fprintf(stderr, "cuda kernel %s: skipped: %s\n", k->name, r.msg);
      } else {
        ck_assert_msg(r.guard_ok, "%s: %s", k->name, r.guard_msg);
        ck_assert_msg(r.n_unwritten == 0, "%s: %lld unwritten", k->name, (long long)r.n_unwritten);
        ck_assert(ac_harness_run(ref, &c, &o, &b, &e) == 0);
        for (int64_t j = 0; j < r.o_count; j++) {
          double x = ac_load(AC_F32, r.o, (size_t)j), y = ac_load(AC_F32, b.o, (size_t)j);
          ck_assert_msg(fabs(x - y) <= 1e-2 * (1 + fabs(y)), "%s%s: o[%lld] = %a, reference %a", k->name,
                        strided ? " (strided o)" : "", (long long)j, x, y);
        }
        ac_run_result_free(&b);
      }
      ac_run_result_free(&r);
      ac_case_free(&c);
    }
    ac_kernel_free(k);
  }
  ac_kernel_free(ref);
  no_zombies();
}
END_TEST

int main(void)
{
  Suite *s = suite_create("harness");
  TCase *tc = tcase_create("harness");
  tcase_set_timeout(tc, 20);
  tcase_add_loop_test(tc, reference_runs_ok_with_lse, 0, 2);
  tcase_add_loop_test(tc, crash_reports_sigsegv, 0, 2);
  tcase_add_loop_test(tc, hang_times_out_within_limit, 0, 2);
  tcase_add_loop_test(tc, guard_overwrite_is_reported, 0, 2);
  tcase_add_loop_test(tc, unwritten_elements_are_counted, 0, 2);
  tcase_add_loop_test(tc, computed_nan_equal_to_the_prefill_is_not_unwritten, 0, 2);
  tcase_add_loop_test(tc, kernel_error_and_unsupported_carry_messages, 0, 2);
  tcase_add_loop_test(tc, nondeterminism_is_detected_by_two_runs, 0, 2);
  tcase_add_loop_test(tc, masked_nan_leaks_through_test_kernel, 0, 2);
  tcase_add_loop_test(tc, strided_layouts_reach_the_kernel, 0, 2);
  tcase_add_loop_test(tc, writes_into_output_gaps_are_guard_violations, 0, 2);
  tcase_add_loop_test(tc, reads_outside_the_inputs_are_recognized, 0, 2);
  tcase_add_loop_test(tc, names_and_repeat_helpers, 0, 1);
  tcase_add_loop_test(tc, cuda_kernels_run_in_the_child_or_skip, 0, 2);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
