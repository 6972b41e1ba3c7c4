/* tharness_grad_varlen: the backward of varlen batches at the kernel boundary (docs/backward.md
 * §7): run_backward gets the layout arrays and packed o, LSE, dO and outputs; a write into
 * cu_seqlens is a guard failure, a key's dK left unwritten is counted, a paged case is never
 * handed to a backward (even one that declares it), a backward without VARLEN is SKIP, the
 * budgets of a packed element are those of its sequence's dense case; the
 * correct varlen backward kernels pass against the exact backward and the varlen backward mutant
 * fails. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "cpu_varlen.h"
#include "budget_grad.h"
#include "dout.h"
#include "grad_judge.h"
#include "layout.h"
#include "tharness_util.h"

enum { BAD_CU = 1, BAD_UNWRITTEN, BAD_DSINK };
static int bad_mode;

static int vl_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_layout_run(ATTNCHECK_F32, AC_LBUG_NONE, "test-varlen-backward", p, t, err, n);
}

/* The correct varlen backward, then the defect of bad_mode. */
static int vl_bwd(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err,
                  size_t n)
{
  int rc = ac_cpu_varlen_backward(ATTNCHECK_F32, 0, "test-varlen-backward", p, t, g, err, n);
  if (bad_mode == BAD_CU) ((int32_t *)t->cu_seqlens_q)[1]++;
  if (bad_mode == BAD_UNWRITTEN)   /* the last key of kv head 0: the pre-fill back in its dK */
    for (int64_t x = 0; x < p->dk; x++)
      ((uint32_t *)g->dk)[(p->total_k - 1) * g->dk_stride[2] + x * g->dk_stride[3]] =
        (uint32_t)ac_harness_prefill_bits(AC_F32);
  if (bad_mode == BAD_DSINK && g->dsinks) /* dσ of head 1 off by 2^-12 of itself */
    g->dsinks[1] *= 1 + 0x1p-12f;
  return rc;
}

static attncheck_kernel vl_abi = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-varlen-backward", "", "fp32",
                                  ATTNCHECK_MEM_HOST, ATTNCHECK_FEAT_LAYOUTS | ATTNCHECK_FEAT_SINKS | ATTNCHECK_CAP_BACKWARD,
                                  NULL, vl_run, {NULL, NULL, NULL, NULL}, vl_bwd,
                                  ATTNCHECK_FEAT_LAYOUTS | ATTNCHECK_FEAT_SINKS, 0, 0, 0, NULL, 0, 0, NULL};

static void varlen_case(ac_case *c, ac_dtype t, uint32_t kind, uint64_t seed)
{
  int64_t tq[] = {3, 0, 17, 2, 4}, tk[] = {4, 2, 20, 0, 6};
  ac_layout_case_spec s = {.dtype = t, .mask = AC_MASK_CAUSAL_BR, .heads = 4, .kv_heads = 2, .dk = 8, .dv = 6, .sigma = 1,
                           .lay = {.kind = kind, .nseq = 5, .tq = tq, .tk = tk, .page_size = 4}};
  ac_err e;
  ck_assert_msg(ac_layout_case_make(c, &s, seed, &e) == 0, "%s", e.msg);
  if (kind == AC_FEAT_VARLEN) ck_assert_msg(ac_dout_generate(c, "normal", seed, &e) == 0, "%s", e.msg);
  else c->dout = calloc(ac_case_bytes(c, 'o') + 1, 1);   /* by hand: gen refuses a paged dO */
}

static ac_grad_run_result run_mode(int mode, const ac_case *c)
{
  ac_kernel k = {.kind = AC_KIND_BUILTIN, .name = "test-varlen-backward", .abi = &vl_abi};
  void *o;
  float *lse;
  ac_err e;
  ck_assert_msg(ac_grad_forward_inputs(c, &o, &lse, &e) == 0, "%s", e.msg);
  bad_mode = mode;
  ac_grad_run_result r;
  ck_assert_msg(ac_harness_run_backward(&k, c, o, lse, NULL, &r, &e) == 0, "%s", e.msg);
  free(o);
  free(lse);
  return r;
}

START_TEST(guards_and_unwritten_elements)
{
  ac_case c;
  varlen_case(&c, AC_F32, AC_FEAT_VARLEN, 1);
  ac_grad_run_result r = run_mode(0, &c);
  ck_assert_msg(r.status == AC_RUN_OK && r.guard_ok, "%s %s", r.msg, r.guard_msg);
  for (int t = 0; t < 3; t++) ck_assert_int_eq(r.n_unwritten[t], 0);
  ac_grad_run_result_free(&r);
  r = run_mode(BAD_CU, &c);
  ck_assert_msg(!r.guard_ok && strstr(r.guard_msg, "cu_seqlens_q"), "%s", r.guard_msg);
  ac_grad_run_result_free(&r);
  r = run_mode(BAD_UNWRITTEN, &c);
  ck_assert_int_eq(r.n_unwritten[1], c.p.dk);
  ac_grad_run_result_free(&r);
  ac_case_free(&c);
}
END_TEST

START_TEST(paged_cases_get_no_backward)
{
  ac_case c;
  varlen_case(&c, AC_F32, AC_FEAT_PAGED, 2);
  ac_kernel k = {.kind = AC_KIND_BUILTIN, .name = "test-varlen-backward", .abi = &vl_abi};
  ac_grad_run_result r;
  ac_err e;
  float x[4] = {0};
  ck_assert_int_eq(ac_harness_run_backward(&k, &c, x, x, NULL, &r, &e), 0);
  ck_assert_msg(r.status == AC_RUN_UNSUPPORTED && strstr(r.msg, "paged"), "%s", r.msg);
  ac_case_free(&c);
}
END_TEST

/* The budgets of a packed element are its sequence's dense budgets (no term from another
 * sequence's rows or keys), and 0 for the keys of a sequence without queries. */
START_TEST(budgets_per_sequence)
{
  ac_case c;
  varlen_case(&c, AC_F32, AC_FEAT_VARLEN, 5);
  const ac_precision *cls = ac_precision_find("fp32");
  ac_grad_budget bg;
  ac_err e;
  ck_assert_msg(ac_grad_budget_compute(cls, &c, &bg, &e) == 0, "%s", e.msg);
  const ac_problem *p = &c.p;
  for (int64_t b = 0; b < p->l.nseq; b++) {
    const int64_t q0 = c.lay->cu_q[b], k0 = c.lay->cu_k[b], tk = ac_layout_tk(&c, b);
    if (ac_layout_tq(&c, b) == 0) {
      for (int64_t j = 0; j < tk; j++) ck_assert(bg.w[1][ac_kidx(p, 0, 1, k0 + j, 0)] == 0);
      continue;
    }
    ac_case sub;
    ac_grad_budget sb;
    ck_assert_msg(ac_layout_seq_case(&c, b, &sub, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_grad_budget_compute(cls, &sub, &sb, &e) == 0, "%s", e.msg);
    for (int typ = 0; typ < 2; typ++) {
      double **W = typ ? bg.e : bg.w, **S = typ ? sb.e : sb.w;
      for (int64_t h = 0; h < p->heads; h++)
        for (int64_t i = 0; i < sub.p.tq; i++)
          for (int64_t t = 0; t < p->dk; t++)
            ck_assert(W[0][ac_qidx(p, 0, h, q0 + i, t)] == S[0][ac_qidx(&sub.p, 0, h, i, t)]);
      for (int64_t kh = 0; kh < p->kv_heads; kh++)
        for (int64_t j = 0; j < tk; j++) {
          for (int64_t t = 0; t < p->dk; t++) ck_assert(W[1][ac_kidx(p, 0, kh, k0 + j, t)] == S[1][ac_kidx(&sub.p, 0, kh, j, t)]);
          for (int64_t t = 0; t < p->dv; t++) ck_assert(W[2][ac_vidx(p, 0, kh, k0 + j, t)] == S[2][ac_vidx(&sub.p, 0, kh, j, t)]);
        }
    }
    ac_grad_budget_free(&sb);
    ac_case_free(&sub);
  }
  ac_grad_budget_free(&bg);
  ac_case_free(&c);
}
END_TEST

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
  if (!strcmp(st, "FAIL")) ck_assert_int_ge(j.t[0].seq, 0);   /* the worst packed row's sequence */
  ac_grad_run_result_free(&run);
  ac_kernel_free(k);
  return st;
}

START_TEST(varlen_kernels_pass_and_the_mutant_fails)
{
  ac_case f, h;
  varlen_case(&f, AC_F32, AC_FEAT_VARLEN, 3);
  varlen_case(&h, AC_BF16, AC_FEAT_VARLEN, 4);
  ck_assert_str_eq(grad_status("flash-varlen-f32", &f), "PASS");
  ck_assert_str_eq(grad_status("flash-varlen-bf16", &h), "PASS");
  ck_assert_str_eq(grad_status("mutant-varlen-bwd-cu-k", &f), "FAIL");
  ck_assert_str_eq(grad_status("flash-bwd-f32", &f), "SKIP");   /* its backward does not take varlen */
  ac_case_free(&f);
  ac_case_free(&h);
}
END_TEST

/* dσ of a varlen batch is the sum over its sequences, correctly rounded to binary32 (or unresolved),
 * and judged with the sum of the sequences' terms: the correct backward passes it, one off by 2^-12
 * of itself fails it. */
START_TEST(varlen_dsinks_judged)
{
  ac_case c;
  varlen_case(&c, AC_F32, AC_FEAT_VARLEN, 6);
  static const float sk[4] = {0.5f, -1.25f, 2.0f, 0.0f};
  c.p.f.used |= AC_FEAT_SINKS;
  c.sinks = malloc(sizeof sk);
  memcpy(c.sinks, sk, sizeof sk);
  ac_grad_opts go;
  ac_grad_opts_init(&go);
  ac_grad_result ex;
  ac_grad_budget bg;
  ac_err e;
  ck_assert_msg(ac_grad_run(&c, c.dout, &go, &ex, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(ex.n_unresolved, 0);
  ck_assert_int_eq(ex.dsink.nsel, 4);
  ck_assert_msg(ac_grad_budget_compute(ac_precision_find("fp32"), &c, &bg, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(bg.nsink, 4);
  for (int mode = 0; mode < 2; mode++) {
    ac_grad_run_result r = run_mode(mode ? BAD_DSINK : 0, &c);
    ck_assert_msg(r.status == AC_RUN_OK && r.dsinks, "%s", r.msg);
    ac_grad_judgement j;
    ac_grad_judge(&bg, &ex, &r, &j);
    ck_assert_int_eq(j.nt, 4);
    ck_assert_int_eq(j.t[3].checked, 4);
    if (mode)
      ck_assert_msg(j.t[3].failed == 1 && j.t[3].worst_x == 1, "dσ err/W %g", j.t[3].worst);
    else
      ck_assert_msg(j.failed == 0, "dσ err/W %g", j.t[3].worst);
    ac_grad_run_result_free(&r);
  }
  ac_grad_budget_free(&bg);
  ac_grad_result_free(&ex);
  ac_case_free(&c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("harness_grad_varlen");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, guards_and_unwritten_elements);
  tcase_add_test(tc, paged_cases_get_no_backward);
  tcase_add_test(tc, budgets_per_sequence);
  tcase_add_test(tc, varlen_kernels_pass_and_the_mutant_fails);
  tcase_add_test(tc, varlen_dsinks_judged);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
