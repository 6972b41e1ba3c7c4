/* tharness_grad: the ABI 3 backward entry. run_backward is read only from kernels whose struct
 * reaches it and that declare ATTNCHECK_CAP_BACKWARD; the harness runs it with the forward's
 * guards (a write outside an output, into dO, an unwritten element, a crash, a hang each become
 * their status); the case file carries dO; the correct backward kernels pass and every backward
 * mutant fails against the exact backward with the class budgets (docs/backward.md). */
#include "config.h"
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include "budget_grad.h"
#include "compare.h"
#include "dout.h"
#include "grad_judge.h"
#include "tharness_util.h"
#include "vgen.h"

static void grad_case(ac_case *c, ac_dtype t, int64_t heads, int64_t kvh, int64_t tq, uint64_t stream)
{
  th_case(c, t, AC_MASK_CAUSAL_BR, 1, heads, kvh, tq, tq + 3, 8, 6, stream);
  ac_err e;
  ck_assert_msg(ac_dout_generate(c, "normal", ac_test_seed(), &e) == 0, "%s", e.msg);
}

/* What each misbehaving test kernel does wrong. */
enum { BAD_GUARD = 1, BAD_UNWRITTEN, BAD_INPUT, BAD_CRASH, BAD_HANG };
static int bad_mode;

static int bad_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  return 0;
}

static int bad_bwd(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err,
                   size_t n)
{
  (void)t, (void)err, (void)n;
  int64_t nq = p->batch * p->heads * p->tq * p->dk, nk = p->batch * p->kv_heads * p->tk * p->dk;
  int64_t nv = p->batch * p->kv_heads * p->tk * p->dv;
  for (int64_t i = 0; i < nq; i++) ((float *)g->dq)[i] = 0;
  for (int64_t i = 0; i < nk; i++) ((float *)g->dk)[i] = 0;
  for (int64_t i = 0; i < nv - (bad_mode == BAD_UNWRITTEN); i++) ((float *)g->dv)[i] = 0;
  if (bad_mode == BAD_GUARD) ((float *)g->dq)[nq] = 1;
  if (bad_mode == BAD_INPUT) ((float *)g->dout)[0] = 7;
  if (bad_mode == BAD_CRASH) raise(SIGSEGV);
  while (bad_mode == BAD_HANG) {
  }
  return 0;
}

static const attncheck_kernel bad_abi = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-bad-backward", "", "fp32",
                                         ATTNCHECK_MEM_HOST, ATTNCHECK_CAP_BACKWARD, NULL, bad_run,
                                         {NULL, NULL, NULL, NULL}, bad_bwd, 0, 0, 0, 0, NULL, 0, 0, NULL};

static ac_grad_run_result run_bad(int mode, const ac_case *c)
{
  ac_kernel k = {.kind = AC_KIND_BUILTIN, .name = "test-bad-backward", .abi = &bad_abi};
  void *o;
  float *lse;
  ac_err e;
  ck_assert_msg(ac_grad_forward_inputs(c, &o, &lse, &e) == 0, "%s", e.msg);
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ro.timeout_s = 1;
  bad_mode = mode;
  ac_grad_run_result r;
  ck_assert_msg(ac_harness_run_backward(&k, c, o, lse, &ro, &r, &e) == 0, "%s", e.msg);
  free(o);
  free(lse);
  return r;
}

START_TEST(the_backward_entry_is_read_only_where_the_struct_has_it)
{
  attncheck_kernel a = bad_abi;
  ac_kernel k = {.kind = AC_KIND_BUILTIN, .abi = &a};
  ck_assert_ptr_eq(ac_kernel_backward(&k), bad_bwd);
  a.struct_size = ATTNCHECK_KERNEL_V1_SIZE;   /* a version 3 plugin built before run_backward */
  ck_assert_ptr_null(ac_kernel_backward(&k));
  a.struct_size = sizeof a, a.abi_version = 2;   /* a version 2 plugin: the caps bit means nothing */
  ck_assert_ptr_null(ac_kernel_backward(&k));
  a.abi_version = 3, a.caps = 0;
  ck_assert_ptr_null(ac_kernel_backward(&k));
  ck_assert_ptr_null(ac_kernel_backward(th_kernel("naive-f32")));
}
END_TEST

START_TEST(misbehaviour_becomes_its_status)
{
  ac_case c;
  grad_case(&c, AC_F32, 2, 1, 5, 1);
  ac_grad_run_result r = run_bad(0, &c);
  ck_assert_msg(r.status == AC_RUN_OK && r.guard_ok && !r.n_unwritten[0] && !r.n_unwritten[2], "%s %s", r.msg, r.guard_msg);
  ac_grad_run_result_free(&r);
  r = run_bad(BAD_GUARD, &c);
  ck_assert_msg(!r.guard_ok && strstr(r.guard_msg, "dq: guard after"), "%s", r.guard_msg);
  ac_grad_run_result_free(&r);
  r = run_bad(BAD_UNWRITTEN, &c);
  ck_assert_int_eq(r.n_unwritten[2], 1);
  ac_grad_run_result_free(&r);
  r = run_bad(BAD_INPUT, &c);
  ck_assert_msg(!r.guard_ok && strstr(r.guard_msg, "do: kernel wrote into its input"), "%s", r.guard_msg);
  ac_grad_run_result_free(&r);
  r = run_bad(BAD_CRASH, &c);
  ck_assert_int_eq(r.status, AC_RUN_CRASH);
  r = run_bad(BAD_HANG, &c);
  ck_assert_int_eq(r.status, AC_RUN_TIMEOUT);
  ac_case_free(&c);
}
END_TEST

START_TEST(refusals)
{
  ac_case c;
  grad_case(&c, AC_F32, 2, 1, 5, 2);
  ac_grad_run_result r;
  ac_err e;
  float lse[16] = {0};
  ac_kernel *k = th_kernel("naive-f32");
  ck_assert_int_eq(ac_harness_run_backward(k, &c, lse, lse, NULL, &r, &e), 0);
  ck_assert_int_eq(r.status, AC_RUN_UNSUPPORTED);
  ac_kernel_free(k);
  free(c.dout);
  c.dout = NULL;
  k = th_kernel("flash-bwd-f32");
  ck_assert_int_eq(ac_harness_run_backward(k, &c, lse, lse, NULL, &r, &e), -1);
  ck_assert_int_eq(r.status, AC_RUN_HARNESS_ERROR);
  ck_assert_msg(strstr(e.msg, "no dO"), "%s", e.msg);
  ac_kernel_free(k);
  ac_case_free(&c);
}
END_TEST

START_TEST(do_survives_the_case_file)
{
  ac_case c, d;
  grad_case(&c, AC_BF16, 2, 2, 4, 3);
  char path[] = "/tmp/attncheck-tgrad-XXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  close(fd);
  ac_err e;
  ck_assert_msg(ac_case_write(&c, path, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_case_read(&d, path, &e) == 0, "%s", e.msg);
  unlink(path);
  ck_assert_ptr_nonnull(d.dout);
  ck_assert_mem_eq(c.dout, d.dout, ac_case_bytes(&c, 'o'));
  ac_case_free(&c);
  ac_case_free(&d);
}
END_TEST

/* dO pattern cancel: dO_i·V_j the same for every key of the head up to dO's rounding (tk <= dv). */
START_TEST(cancel_makes_dp_equal_over_the_keys)
{
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_NONE, 1, 2, 1, 5, 6, 4, 16, 6);
  ac_err e;
  ck_assert_msg(ac_dout_generate(&c, "cancel", ac_test_seed(), &e) == 0, "%s", e.msg);
  const ac_problem *p = &c.p;
  for (int64_t h = 0; h < p->heads; h++)
    for (int64_t i = 0; i < p->tq; i++) {
      double dp0 = 0, worst = 0;
      for (int64_t j = 0; j < p->tk; j++) {
        double dp = 0;
        for (int64_t t = 0; t < p->dv; t++)
          dp += ac_load(AC_F32, c.dout, ac_oidx(p, 0, h, i, t)) * ac_load(AC_F32, c.v, ac_vidx(p, 0, 0, j, t));
        if (j == 0) dp0 = dp;
        worst = fmax(worst, fabs(dp - dp0));
      }
      ck_assert_msg(fabs(dp0) > 1 && worst < 1e-5 * fabs(dp0), "row %lld of head %lld: dP_0 %g, spread %g", (long long)i,
                    (long long)h, dp0, worst);
    }
  ac_case_free(&c);
}
END_TEST

/* One kernel on one case: its status against the exact backward. */
static const char *grad_status(const char *name, const ac_case *c)
{
  ac_kernel *k = th_kernel(name);
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  ac_grad_run_result run;
  ac_grad_judgement j;
  const ac_precision *cls;
  ac_err e;
  ck_assert_msg(ac_grad_check(k, c, NULL, &go, NULL, &run, &j, &cls, &e) == 0, "%s: %s", name, e.msg);
  const char *st = ac_grad_status(&run, &j);
  ac_grad_run_result_free(&run);
  ac_kernel_free(k);
  return st;
}

/* grad_case with a softcap cap and the scale times sm (sm large: scores far past the cap). */
static void softcap_case(ac_case *c, ac_dtype t, uint64_t stream, double cap, double sm)
{
  grad_case(c, t, 4, 2, 20, stream);
  c->p.scale_is_default = 0;
  c->p.scale = sm / sqrt((double)c->p.dk);
  ac_vspec v = {.used = AC_FEAT_SOFTCAP, .softcap = cap};
  ac_err e;
  ck_assert_msg(ac_vspec_apply(c, &v, 1, &e) == 0, "%s", e.msg);
}

/* A dropout case (p = 0.17): the backward gets the mask its kernel's forward draws. */
static void dropout_case(ac_case *c, ac_dtype t, uint64_t stream)
{
  grad_case(c, t, 4, 2, 20, stream);
  ac_vspec v = {.used = AC_FEAT_DROPOUT, .dropout_p = 0x1.5c28f6p-3};
  ac_err e;
  ck_assert_msg(ac_vspec_apply(c, &v, stream, &e) == 0, "%s", e.msg);
}

/* compare --grad under --alibi-lse fa2: gradients a FlashAttention-2 backward computed from the LSE of
 * its convention (larger by m (i + tk - tq), so rounded coarser) are judged with that LSE's budget;
 * the ABI's budget, which charges the smaller LSE's rounding, rejects the same correct gradients. */
START_TEST(fa2_alibi_gradients_are_judged_with_their_lse_budget)
{
  ac_case c;
  th_case(&c, AC_F32, AC_MASK_CAUSAL_BR, 1, 4, 4, 40, 48, 8, 8, 21);
  ac_vspec v = {.used = AC_FEAT_ALIBI, .alibi_max = 64};
  ac_err e;
  ck_assert_msg(ac_vspec_apply(&c, &v, 1, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_dout_generate(&c, "normal", ac_test_seed(), &e) == 0, "%s", e.msg);
  ac_kernel *k = th_kernel("test-alibi-fa2");
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  ac_grad_run_result run;
  ac_grad_judgement j;
  const ac_precision *cls;
  ck_assert_msg(ac_grad_check(k, &c, NULL, &go, NULL, &run, &j, &cls, &e) == 0, "%s", e.msg);
  ck_assert_str_eq(ac_grad_status(&run, &j), "PASS");
  ck_assert_msg(ac_grad_judge_given_as(&c, cls, AC_ALIBI_LSE_FA2, &go, &run, &j, &e) == 0, "%s", e.msg);
  ck_assert_str_eq(ac_grad_status(&run, &j), "PASS");
  ck_assert_msg(ac_grad_judge_given(&c, cls, &go, &run, &j, &e) == 0, "%s", e.msg);
  ck_assert_str_eq(ac_grad_status(&run, &j), "FAIL");
  ac_grad_run_result_free(&run);
  ac_kernel_free(k);
  ac_case_free(&c);
}
END_TEST

START_TEST(correct_kernels_pass_and_mutants_fail)
{
  ac_case f, h, fs[3], hs[3], fd, hd;
  grad_case(&f, AC_F32, 4, 2, 20, 4);   /* GQA groups of 2, a causal mask, two query tiles */
  grad_case(&h, AC_BF16, 4, 2, 20, 5);
  dropout_case(&fd, AC_F32, 12);
  dropout_case(&hd, AC_BF16, 13);
  /* softcaps: tanh well away from linear, far past saturation (1 - t² tiny or 0), nearly linear */
  static const double caps[3][2] = {{1.5, 2}, {0.25, 64}, {30, 1}};
  for (int x = 0; x < 3; x++) {
    softcap_case(&fs[x], AC_F32, 6 + (uint64_t)x, caps[x][0], caps[x][1]);
    softcap_case(&hs[x], AC_BF16, 9 + (uint64_t)x, caps[x][0], caps[x][1]);
  }
  const char *ok32[] = {"naive-bwd-f32", "flash-bwd-f32"}, *ok16[] = {"naive-bwd-bf16", "flash-bwd-bf16"};
  for (int i = 0; i < 2; i++) {
    ck_assert_str_eq(grad_status(ok32[i], &f), "PASS");
    ck_assert_str_eq(grad_status(ok16[i], &h), "PASS");
    if (i) {   /* the flash kernels take dropout */
      ck_assert_str_eq(grad_status(ok32[i], &fd), "PASS");
      ck_assert_str_eq(grad_status(ok16[i], &hd), "PASS");
    }
    for (int x = 0; x < 3; x++) {
      ck_assert_msg(!strcmp(grad_status(ok32[i], &fs[x]), "PASS"), "%s, softcap %g", ok32[i], caps[x][0]);
      ck_assert_msg(!strcmp(grad_status(ok16[i], &hs[x]), "PASS"), "%s, softcap %g", ok16[i], caps[x][0]);
    }
  }
  size_t n;
  const attncheck_kernel *const *m = ac_mutant_kernels(&n);
  int nb = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(m[i]->caps & ATTNCHECK_CAP_BACKWARD)) continue;
    if (m[i]->backward_caps & ATTNCHECK_FEAT_VARLEN) continue;   /* varlen only: tests/tharness_grad_varlen */
    nb++;
    /* the case of the mutant's dtype; for a defect of the softcap's backward the first softcap case too,
     * and for one of dropout's backward the dropout case */
    ac_kernel *k = th_kernel(m[i]->name);
    char why[256];
    const ac_case *c = ac_kernel_supports(k, &f.p, why, sizeof why) ? &f : &h;
    int drop = ac_kernel_supports(k, &fd.p, why, sizeof why);
    ac_kernel_free(k);
    int fail = !strcmp(grad_status(m[i]->name, c), "FAIL") || !strcmp(grad_status(m[i]->name, &fs[0]), "FAIL") ||
               (drop && !strcmp(grad_status(m[i]->name, &fd), "FAIL"));
    ck_assert_msg(fail, "%s not exposed", m[i]->name);
  }
  ck_assert_str_eq(grad_status("mutant-bwd-softcap-noderiv", &f), "PASS");   /* no cap, no defect */
  ck_assert_int_ge(nb, 8);
  ac_case_free(&f);
  ac_case_free(&h);
  ac_case_free(&fd);
  ac_case_free(&hd);
  for (int x = 0; x < 3; x++) {
    ac_case_free(&fs[x]);
    ac_case_free(&hs[x]);
  }
}
END_TEST

/* The judgement's largest err/E and kcrit per tensor (bench/calibrate --grad reads SUSPECT from
 * kcrit > kappa): err/E is at least err/W (E <= W), and at least the worst element's; a correct
 * kernel stays below kappa, a backward one step a precision lower (the LSE in bf16) passes it. */
START_TEST(judgement_keeps_the_largest_err_e_and_kcrit)
{
  ac_case h;
  grad_case(&h, AC_BF16, 4, 2, 20, 5);
  const char *names[] = {"flash-bwd-bf16", "mutant-bwd-lse-bf16"};
  for (int x = 0; x < 2; x++) {
    ac_kernel *k = th_kernel(names[x]);
    ac_grad_opts go;
    ac_grad_opts_init(&go);
    ac_grad_run_result run;
    ac_grad_judgement j;
    const ac_precision *cls;
    ac_err e;
    ck_assert_msg(ac_grad_check(k, &h, NULL, &go, NULL, &run, &j, &cls, &e) == 0, "%s: %s", names[x], e.msg);
    double kc = 0;
    for (int t = 0; t < 3; t++) {
      ck_assert_msg(j.t[t].max_e >= j.t[t].worst && j.t[t].max_e >= j.t[t].worst_e, "%s %s: max err/E %g, err/W %g",
                    names[x], ac_grad_tensor_name(t), j.t[t].max_e, j.t[t].worst);
      kc = fmax(kc, j.t[t].max_kcrit);
    }
    if (x == 0) ck_assert_msg(kc > 0 && kc < AC_KAPPA_DEFAULT, "%s: kcrit %g", names[x], kc);
    else ck_assert_msg(kc > AC_KAPPA_DEFAULT, "%s: kcrit %g", names[x], kc);
    ac_grad_run_result_free(&run);
    ac_kernel_free(k);
  }
  ac_case_free(&h);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("harness_grad");
  TCase *tc = tcase_create("grad");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, the_backward_entry_is_read_only_where_the_struct_has_it);
  tcase_add_test(tc, misbehaviour_becomes_its_status);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, do_survives_the_case_file);
  tcase_add_test(tc, cancel_makes_dp_equal_over_the_keys);
  tcase_add_test(tc, correct_kernels_pass_and_mutants_fail);
  tcase_add_test(tc, judgement_keeps_the_largest_err_e_and_kcrit);
  tcase_add_test(tc, fa2_alibi_gradients_are_judged_with_their_lse_budget);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
