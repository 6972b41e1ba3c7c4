/* tcompare.c: budgets, verdicts, policies and exit codes on synthetic oracle results
 * (no oracle and no kernel involved: every expected value is set by hand). */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "budget.h"
#include "compare.h"
#include "report.h"
#include "testutil.h"
#include "verdict.h"

#define U32 0x1p-24

/* A case of B=1, H=1, tq rows, tk keys, d = 2, f32 values all 1 (unless changed), and a
 * synthetic oracle result whose every element is o = 0.75 with terms R = 1, others 0. */
typedef struct {
  ac_case c;
  ac_oracle_result r;
  float *o;
  float *lse;
} fixture;

static void fx_init(fixture *f, ac_dtype t, ac_mask mask, int64_t tq, int64_t tk)
{
  memset(f, 0, sizeof *f);
  ac_case_init(&f->c);
  ac_problem *p = &f->c.p;
  p->dtype = t;
  p->mask = mask;
  p->batch = p->heads = p->kv_heads = 1;
  p->tq = tq;
  p->tk = tk;
  p->dk = p->dv = 2;
  p->scale_is_default = 1;
  p->scale = 1 / sqrt(2.0);
  ac_err e;
  ck_assert_msg(ac_case_alloc(&f->c, &e) == 0, "%s", e.msg);
  ac_counts n;
  ac_problem_counts(p, &n, &e);
  for (int64_t x = 0; x < n.k; x++) ac_store_bits(t, f->c.k, (size_t)x, ac_encode_f64(t, 1));
  for (int64_t x = 0; x < n.v; x++) ac_store_bits(t, f->c.v, (size_t)x, ac_encode_f64(t, 1));
  for (int64_t x = 0; x < n.q; x++) ac_store_bits(t, f->c.q, (size_t)x, ac_encode_f64(t, 1));
  ac_oracle_result *r = &f->r;
  r->p = *p;
  r->nrows = tq;
  r->rows = calloc((size_t)tq, sizeof *r->rows);
  r->elems = calloc((size_t)(tq * 2), sizeof *r->elems);
  r->o_round[t] = calloc((size_t)(tq * 2), sizeof(uint64_t));
  r->formats = 1u << t;
  r->nmu = ac_precision_mu_list(r->mu, AC_ORACLE_NMU);
  for (int64_t i = 0; i < tq; i++) {
    ac_oracle_row *rw = &r->rows[i];
    rw->visible = ac_visible_count(p, i);
    rw->selected = 1;
    rw->m = 1;
    rw->max_abs_s = 1;
    rw->max_abs_z = 1.5;
    rw->lse = rw->visible ? 1 + log((double)rw->visible) : -INFINITY;
    rw->lse_f32 = (float)rw->lse;
    rw->lse_accept = rw->visible ? AC_ACCEPT_VALUE : AC_ACCEPT_EMPTY;
    rw->lse_how = AC_HOW_ROUNDED;
    for (int d = 0; d < 2; d++) {
      ac_oracle_elem *el = &r->elems[i * 2 + d];
      el->o = rw->visible ? 0.75 : 0;
      el->R = rw->visible ? 1 : 0;
      el->M = INFINITY;   /* no hull information: the convex-hull cap never binds */
      el->how = AC_HOW_ROUNDED;
      el->accept = rw->visible ? AC_ACCEPT_VALUE : AC_ACCEPT_EMPTY;
      r->o_round[t][i * 2 + d] = ac_encode_f64(t, el->o);
    }
  }
  f->o = calloc((size_t)(tq * 2), 8);
  f->lse = calloc((size_t)tq, sizeof(float));
  for (int64_t x = 0; x < tq * 2; x++) ac_store_bits(t, f->o, (size_t)x, r->o_round[t][x]);
  for (int64_t i = 0; i < tq; i++) f->lse[i] = r->rows[i].visible ? r->rows[i].lse_f32 : INFINITY;
}

static void fx_free(fixture *f)
{
  free(f->r.rows);
  free(f->r.elems);
  for (int t = 0; t < AC_NDTYPES; t++) free(f->r.o_round[t]);
  free(f->o);
  free(f->lse);
  ac_case_free(&f->c);
}

static void judge(fixture *f, ac_compare_opts *o, ac_report *rep)
{
  ac_err e;
  ac_report_init(rep, o);
  ck_assert_msg(ac_compare_outputs(&f->c, &f->r, f->o, f->lse, NULL, o, rep, &e) == 0, "%s", e.msg);
}

START_TEST(gamma_values)
{
  ck_assert(ac_gamma_w(4, U32, 0) == 4 * U32 / (1 - 4 * U32));
  ck_assert(ac_gamma_w(4, U32, 1) == 8 * U32 / (1 - 8 * U32));
  ck_assert(isinf(ac_gamma_w(1 << 24, U32, 0)));
  ck_assert(ac_gamma_e(16, U32, 0) == 16 * U32);
  ck_assert(ac_gamma_e(16, U32, 1) == 32 * U32);
}
END_TEST

START_TEST(budget_half_ulp_only)
{
  /* the fixed part is 1/2 ulp of the output format, the same in W and E (never scaled) */
  fixture f;
  fx_init(&f, AC_F16, AC_MASK_NONE, 1, 4);
  f.r.elems[0].R = 0;
  ac_bound b;
  ac_budget_elem(ac_precision_find("fp16-fa2"), &f.c.p, AC_F16, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b);
  ck_assert_msg(b.fixed == 0x1p-12 && b.W == b.W_terms + 0x1p-12 && b.E == b.E_terms + 0x1p-12 && b.W_terms < 0x1p-18,
                AC_SEED_FMT "W %a E %a", AC_SEED_ARG, b.W, b.E);
  fx_free(&f);
}
END_TEST

START_TEST(budget_terms)
{
  /* fp32 class, T = 4 visible keys, R = 1, |o| = 0.75: W_terms = margin*((u_p + lw) R + gamma_w(4,u)(R+|o|) + u_s |o|) */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 4);
  const ac_precision *c = ac_precision_find("fp32");
  ac_bound b;
  ac_budget_elem(c, &f.c.p, AC_F32, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b);
  /* weights through a rounded LSE: (e^eps - 1) R, eps = 4u_s(max|s| + ln T) + u_e(2 + ln T), max|s| = 1 */
  double lw = expm1(4 * U32 * (1 + log(4.0)) + 4 * U32 * (2 + log(4.0)));
  double w = AC_BUDGET_MARGIN * (lw + ac_gamma_w(4, U32, 0) * 1.75 + U32 * 0.75);
  double e = AC_BUDGET_MARGIN * (lw + ac_gamma_e(4, U32, 0) * 1.75 + U32 * 0.75);
  ck_assert_msg(fabs(b.W_terms - w) <= 1e-6 * w && fabs(b.E_terms - e) <= 1e-6 * e, "W %a want %a, E %a want %a",
                b.W_terms, w, b.E_terms, e);
  ck_assert(b.fixed == 0.5 * ac_ulp(AC_F32, 0.75 + b.W_terms));
  /* truncating classes double u per accumulation step; the fa2 classes charge P storage */
  ac_bound b2;
  ac_budget_elem(ac_precision_find("fp16-fa2"), &f.c.p, AC_F32, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b2);
  ck_assert(b2.W_terms > b.W_terms + 0x1p-11);
  /* D and G terms scale with the score-stage roundoffs */
  f.r.elems[0].G = 10;
  ac_bound b3;
  ac_budget_elem(c, &f.c.p, AC_F32, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b3);
  ck_assert(fabs(b3.W_terms - b.W_terms - AC_BUDGET_MARGIN * 10 * ac_gamma_w(2, U32, 0)) < 1e-3 * b3.W_terms);
  fx_free(&f);
}
END_TEST

/* Q scaled before Q·Kᵀ: a subnormal c·q_t errs by 2^-150, times |k_t| up to 2^127 */
START_TEST(budget_underflow_of_scaled_q)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 4);
  f.r.elems[0].D = 1;
  const ac_precision *c = ac_precision_find("fp32");
  ac_bound b0, b1;
  ac_budget_elem(c, &f.c.p, AC_F32, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b0);
  f.r.rows[0].qk_l1 = 64 * 0x1p127;
  ac_budget_elem(c, &f.c.p, AC_F32, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b1);
  /* score error 64 * 2^127 * 2^-150 = 2^-17 on every key, times D = 1 */
  ck_assert_msg(b1.W_terms - b0.W_terms >= 0x1p-17 && b1.W_terms - b0.W_terms < 0x1p-15, "W %a -> %a", b0.W_terms,
                b1.W_terms);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_pass_exact_rounding)
{
  fixture f;
  fx_init(&f, AC_F16, AC_MASK_NONE, 3, 3);
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == 0, "kinds %x note %s", rep.kinds, rep.note);
  ck_assert(rep.n_judged == 6 && rep.max_err == 0 && rep.nmse == 0);
  ck_assert(strcmp(rep.prec_name, "fp16-fa2") == 0);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_fail_and_worst)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 3, 3);
  f.o[2 * 2 + 1] = 0.5f;   /* row 2, column 1: error 0.25 */
  f.o[1 * 2 + 0] = 0.75f + 0x1p-16f;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds & (1u << AC_V_FAIL));
  ck_assert_int_eq(rep.n_fail, 2);
  ck_assert(rep.worst.valid && rep.worst.i == 2 && rep.worst.d == 1 && rep.worst.err == 0.25);
  ck_assert(rep.worst.kernel_bits == 0x3f000000 && rep.worst.round_bits == 0x3f400000);
  ck_assert(rep.worst.ulps == 0.25 / 0x1p-24 && rep.worst.err_w > 1);
  ck_assert(rep.nmse > 0);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_suspect_between_kappa_e_and_w)
{
  /* T = 1000 keys: W ~ 1000u (R + |o|), E ~ 4 sqrt(1000) u (R + |o|) ~ 126u; err = 400u (R + |o|) */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 1000);
  ac_bound b;
  ac_budget_elem(ac_precision_find("fp32"), &f.c.p, AC_F32, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b);
  double err = 0.5 * (b.W + (b.E_terms + b.fixed));
  f.o[0] = (float)(0.75 + err);
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_SUSPECT), "kinds %x W %a E %a err %a", rep.kinds, b.W, b.E, err);
  ck_assert(rep.max_suspect > 1 && rep.max_err_w < 1);
  /* a larger kappa makes it pass */
  o.kappa = 1e6;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_nonfinite_fail)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 2, 2);
  f.o[3] = NAN;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL));
  ck_assert(rep.worst.why == AC_WHY_NONFINITE && rep.worst.i == 1 && rep.worst.d == 1);
  ck_assert(isinf(rep.nmse));
  /* the oracle accepts only NaN (NaN input): a finite value fails, NaN passes */
  f.o[3] = 0.75f;
  f.r.elems[3].accept = AC_ACCEPT_NAN;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL) && rep.worst.why == AC_WHY_FINITE);
  char mm[200];
  ck_assert_str_eq(ac_report_mismatch(&rep, mm, sizeof mm), "finite where the oracle accepts only nan");
  f.o[3] = NAN;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0);
  fx_free(&f);
}
END_TEST

/* The one-line summary of rep (fp16). */
static void summary(const ac_report *rep, char *buf, size_t n)
{
  ac_policies pol;
  ac_policies_init(&pol);
  FILE *f = fmemopen(buf, n, "w");
  ck_assert_ptr_nonnull(f);
  ac_report_line(f, "k", "c", rep, &pol, AC_F16);
  fclose(f);
}

/* fp16: a working value within W of o = 65504 may round to inf; far from the top it may not. */
START_TEST(verdict_overflow_within_budget)
{
  fixture f;
  fx_init(&f, AC_F16, AC_MASK_NONE, 1, 64);
  const ac_precision *fa2 = ac_precision_find("fp16-fa2");
  ck_assert_ptr_nonnull(fa2);
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  o.prec = fa2;
  ac_report rep;
  for (int top = 0; top < 2; top++) {
    /* u_p R alone is 2^-11 * 65504 = 32 > 65520 - 65504 */
    double v = top ? 65504 : 60000;
    f.r.elems[0].o = f.r.elems[0].R = v;
    f.r.o_round[AC_F16][0] = ac_encode_f64(AC_F16, v);
    ac_bound b;
    ac_budget_elem(fa2, &f.c.p, AC_F16, &f.r.rows[0], &f.r.elems[0], f.r.mu, f.r.nmu, &b);
    ck_assert_msg(top ? v + b.W_terms >= 65520 : v + b.W_terms < 65520, "W_terms %a", b.W_terms);
    ac_store_bits(AC_F16, f.o, 0, 0x7c00); /* +inf */
    judge(&f, &o, &rep);
    char line[512];
    summary(&rep, line, sizeof line);
    if (top) {
      ck_assert_msg(rep.kinds == 0 && rep.n_within_overflow == 1, "kinds %#x", rep.kinds);
      ck_assert_msg(strstr(line, " overflow=1(inf within budget)"), "%s", line);   /* a PASS that says so */
    } else {
      ck_assert(rep.kinds == (1u << AC_V_FAIL) && rep.worst.why == AC_WHY_NONFINITE);
      ck_assert_msg(strstr(line, " ulps=inf ") && strstr(line, " mismatch=\"+inf where exact is finite\""), "%s", line);
    }
    /* -inf, the wrong side, always fails; so does NaN; no finite figure for either */
    ac_store_bits(AC_F16, f.o, 0, 0xfc00);
    judge(&f, &o, &rep);
    ck_assert(rep.kinds == (1u << AC_V_FAIL) && rep.n_within_overflow == 0);
    summary(&rep, line, sizeof line);
    ck_assert_msg(strstr(line, " err/W=inf ") && strstr(line, " ulps=inf ") && strstr(line, "mismatch=\"-inf where exact is finite\""),
                  "%s", line);
    ac_store_bits(AC_F16, f.o, 0, 0x7e00);
    judge(&f, &o, &rep);
    ck_assert(rep.kinds == (1u << AC_V_FAIL));
    summary(&rep, line, sizeof line);
    ck_assert_msg(strstr(line, " ulps=inf ") && strstr(line, "mismatch=\"nan where exact is finite\""), "%s", line);
  }
  fx_free(&f);
}
END_TEST

START_TEST(verdict_masked_leak)
{
  /* causal, tq = 2, tk = 3: key 2 is visible to no row; NaN there, NaN in row 0's output */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_CAUSAL, 2, 3);
  ((float *)f.c.v)[2 * 2 + 0] = NAN;
  f.o[0] = NAN;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_MASKED_LEAK), "kinds %x", rep.kinds);
  ck_assert(rep.n_leak == 1);
  /* the same NaN without a masked non-finite input is a FAIL */
  ((float *)f.c.v)[2 * 2 + 0] = 1;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL));
  fx_free(&f);
}
END_TEST

/* Leaks are attributed per element: a masked NaN in V reaches its own column only (0*NaN), a
 * masked NaN in K every column and the LSE. tq = 1, tk = 2, causal: row 0 sees key 0. */
START_TEST(verdict_masked_leak_per_element)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_CAUSAL, 1, 2);
  float *v = f.c.v, *k = f.c.k;
  v[0] = NAN, v[1] = 0, v[2] = 0, v[3] = NAN;   /* V = [[NaN, 0], [0, NaN]] */
  f.r.rows[0].has_nonfinite = 1;                /* the visible V holds a NaN (column 0) */
  f.r.elems[0].o = NAN;
  f.r.elems[0].accept = AC_ACCEPT_NAN;
  f.r.elems[0].R = 0;
  f.r.o_round[AC_F32][0] = ac_encode_f64(AC_F32, NAN);
  f.r.elems[1].o = 0;
  f.r.elems[1].R = 0;
  f.r.o_round[AC_F32][1] = 0;
  f.o[0] = NAN;
  f.o[1] = NAN;                                  /* exact 0, NaN from the masked key's V */
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_MASKED_LEAK) && rep.n_leak == 1, "kinds %x %s", rep.kinds, rep.note);
  /* the same as with a finite visible V = [[1, 0], [0, NaN]] */
  v[0] = 1;
  f.r.rows[0].has_nonfinite = 0;
  f.r.elems[0].o = 1;
  f.r.elems[0].accept = AC_ACCEPT_VALUE;
  f.r.elems[0].R = 1;
  f.r.o_round[AC_F32][0] = ac_encode_f64(AC_F32, 1);
  f.o[0] = 1;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_MASKED_LEAK) && rep.n_leak == 1, "kinds %x %s", rep.kinds, rep.note);
  /* the masked NaN sits in the other column: nothing reaches o[1], its NaN is a FAIL */
  v[3] = 0;
  v[2] = NAN;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_FAIL), "kinds %x %s", rep.kinds, rep.note);
  f.o[1] = 0;
  /* V does not enter the LSE: a NaN LSE is a FAIL with a masked V NaN, a leak with a masked K NaN */
  f.lse[0] = NAN;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_FAIL) && rep.lse_fail == 1, "kinds %x %s", rep.kinds, rep.note);
  k[2] = NAN;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_MASKED_LEAK) && rep.n_leak == 1, "kinds %x %s", rep.kinds, rep.note);
  fx_free(&f);
}
END_TEST

/* A row with keys of score -inf (weight 0): NaN is accepted where the value is finite
 * (AC_ACCEPT_NAN_WEIGHT0, a blocked kernel's exp(-inf - (-inf))) but reported as MASKED-LEAK,
 * never FAIL; a finite value is judged; where only NaN is defined nothing is reported. */
START_TEST(verdict_nan_from_weight0)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 2);
  for (int d = 0; d < 2; d++) f.r.elems[d].accept |= AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0;
  f.r.rows[0].lse_accept |= AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0;
  f.r.rows[0].has_nonfinite = 1;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == 0 && rep.n_nan_weight0 == 0, "kinds %x %s", rep.kinds, rep.note);
  f.o[0] = NAN;
  f.lse[0] = NAN;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_MASKED_LEAK) && rep.n_nan_weight0 == 2 && rep.n_fail == 0 &&
                strstr(rep.note, "score -inf"), "kinds %x %s", rep.kinds, rep.note);
  ac_policies pol;
  ac_policies_init(&pol);
  ck_assert(ac_status_of(&pol, rep.kinds) == AC_STATUS_WARN);
  /* a column where only NaN is defined (a NaN V at a weighted key): the NaN is the answer */
  f.o[0] = 0.75f;
  f.lse[0] = f.r.rows[0].lse_f32;
  f.r.elems[1].accept = AC_ACCEPT_NAN | AC_ACCEPT_NAN_WEIGHT0;
  f.o[1] = NAN;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == 0 && rep.n_nan_weight0 == 0, "kinds %x %s", rep.kinds, rep.note);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_out_of_domain)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 2, 2);
  f.r.rows[1].max_abs_z = 1e39;   /* q.k beyond binary32 (the score itself small) */
  f.o[2] = NAN;
  f.o[3] = 1e30f;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_OUT_OF_DOMAIN), "kinds %x %s", rep.kinds, rep.note);
  /* an fp64 class has a binary64 working range: in domain, so the values fail */
  o.prec = ac_precision_find("fp64");
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL));
  /* scores of 1e9 are in binary32's range, but one ulp of them is 64 logits: a correct fp32
   * kernel's exp may overflow (the class's score error bound is past ln FLT_MAX) */
  f.r.rows[1].max_abs_z = 1.5;
  f.r.rows[1].max_abs_s = 1e9;
  o.prec = NULL;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_OUT_OF_DOMAIN), "kinds %x %s", rep.kinds, rep.note);
  /* at 1e6 the bound is a third of a logit: NaN is a defect */
  f.r.rows[1].max_abs_s = 1e6;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_FAIL), "kinds %x %s", rep.kinds, rep.note);
  /* exact output beyond the dtype (f16 max 65504) */
  fixture g;
  fx_init(&g, AC_F16, AC_MASK_NONE, 1, 1);
  g.r.elems[0].o = 1e5;
  g.r.o_round[AC_F16][0] = ac_encode_f64(AC_F16, INFINITY);
  ac_store_bits(AC_F16, g.o, 0, ac_encode_f64(AC_F16, 65504));
  ac_compare_opts_init(&o);
  judge(&g, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_OUT_OF_DOMAIN), "kinds %x %s", rep.kinds, rep.note);
  /* inf is the correct rounding there: a pass */
  ac_store_bits(AC_F16, g.o, 0, ac_encode_f64(AC_F16, INFINITY));
  judge(&g, &o, &rep);
  ck_assert_msg(rep.kinds == 0, "kinds %x %s", rep.kinds, rep.note);
  fx_free(&g);
  fx_free(&f);
}
END_TEST

/* Classes that accumulate or store scores in fp16 have fp16's range: a partial sum past 65504
 * or a stored score past it is out of their domain, not a defect of the class; the dtype's
 * standard class still judges the value (WEAK-CLASS). */
START_TEST(verdict_domain_of_narrow_classes)
{
  fixture f;
  fx_init(&f, AC_F16, AC_MASK_NONE, 1, 2);
  f.r.rows[0].max_abs_s = 7e4;
  f.r.rows[0].max_abs_z = 7e4 * sqrt(2.0);
  ac_store_bits(AC_F16, f.o, 0, 0x7e00);
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);   /* fp16-fa2 keeps scores in binary32 */
  ck_assert_msg(rep.kinds == (1u << AC_V_FAIL), "kinds %x %s", rep.kinds, rep.note);
  const char *narrow[] = {"fp16-acc16", "fp16-cublas"};
  for (int k = 0; k < 2; k++) {
    o.prec = ac_precision_find(narrow[k]);
    ck_assert_ptr_nonnull(o.prec);
    judge(&f, &o, &rep);
    /* out of the class's domain only: the standard class fp16-fa2 judges it (WEAK-CLASS) */
    ck_assert_msg(rep.kinds == ((1u << AC_V_OUT_OF_DOMAIN) | (1u << AC_V_WEAK_CLASS)) && rep.n_weak == 1
                  && rep.n_weak_ood == 1, "%s: kinds %x %s", narrow[k], rep.kinds, rep.note);
  }
  fx_free(&f);
}
END_TEST

START_TEST(verdict_empty_rows)
{
  /* bottom-right causal, tq = 3 > tk = 1: rows 0 and 1 see no key */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_CAUSAL_BR, 3, 1);
  ck_assert(f.r.rows[0].visible == 0 && f.r.rows[2].visible == 1);
  f.lse[0] = INFINITY;
  f.lse[1] = -INFINITY;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == 0, "kinds %x %s", rep.kinds, rep.note);
  ck_assert(rep.empty_lse_pinf == 1 && rep.empty_lse_ninf == 1 && rep.n_empty_rows == 2 && rep.empty_o_zero == 4);
  /* NaN output: FAIL under zero, PASS under nan, not judged under skip */
  f.o[0] = f.o[1] = f.o[2] = f.o[3] = NAN;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL) && rep.worst.why == AC_WHY_EMPTY);
  o.empty = AC_EMPTY_NAN;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0);
  o.empty = AC_EMPTY_SKIP;
  f.o[0] = 5;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0);
  /* a finite LSE for an empty row fails */
  o.empty = AC_EMPTY_ZERO;
  f.o[0] = f.o[1] = f.o[2] = f.o[3] = 0;
  f.lse[0] = 0;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL) && rep.lse_fail == 1);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_lse_bound)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 2, 4);
  f.lse[1] += 0.01f;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL) && rep.lse_fail == 1 && rep.lse_worst.i == 1 && rep.lse_worst.is_lse);
  f.lse[1] = nextafterf(f.r.rows[1].lse_f32, 10);
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == 0, "kinds %x", rep.kinds);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_unresolved_is_error)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 2, 2);
  f.r.elems[1].how = AC_HOW_UNRESOLVED;
  f.o[1] = 100;   /* never judged: the oracle could not decide it */
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_ERROR));
  ac_policies pol;
  ac_policies_init(&pol);
  ac_exit x = {0, 0};
  ac_exit_add(&x, &pol, rep.kinds);
  ck_assert_int_eq(ac_exit_code(&x), 3);
  ck_assert_int_eq(ac_status_of(&pol, rep.kinds), AC_STATUS_ERROR);
  fx_free(&f);
}
END_TEST

START_TEST(budget_fixed_and_baseline)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 2);
  f.o[0] = 0.75f + 1e-3f;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_err e;
  ck_assert(ac_budget_parse("fixed", &o, &e) == 0);
  o.atol = 2e-3;
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0 && strncmp(rep.budget_desc, "fixed:", 6) == 0);
  o.atol = 1e-4;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL));
  o.rtol = 2e-3;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0);
  ck_assert(ac_budget_parse("baseline:3", &o, &e) == 0 && o.baseline_k == 3);
  ck_assert(ac_budget_parse("baseline:x", &o, &e) < 0);
  ck_assert(ac_budget_parse("nope", &o, &e) < 0);
  o.baseline_k = 2;
  o.baseline_err = 4e-4;   /* 2 x 4e-4 + 2 ulps < 1e-3 */
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == (1u << AC_V_FAIL) && strncmp(rep.budget_desc, "baseline:", 9) == 0);
  o.baseline_err = 6e-4;
  judge(&f, &o, &rep);
  ck_assert(rep.kinds == 0);
  /* the tensor-wide max error the baseline is built from */
  ck_assert(fabs(ac_compare_max_err(&f.c, &f.r, f.o) - 1e-3) < 1e-7);
  fx_free(&f);
}
END_TEST

START_TEST(harness_statuses)
{
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 2, 2);
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_run_result run;
  ac_report rep;
  ac_err e;
  struct { ac_run_status st; ac_verdict_kind k; } map[] = {
    {AC_RUN_UNSUPPORTED, AC_V_SKIP}, {AC_RUN_KERNEL_ERROR, AC_V_FAIL}, {AC_RUN_CRASH, AC_V_CRASH},
    {AC_RUN_TIMEOUT, AC_V_TIMEOUT}, {AC_RUN_HARNESS_ERROR, AC_V_ERROR}};
  for (size_t x = 0; x < sizeof map / sizeof map[0]; x++) {
    memset(&run, 0, sizeof run);
    run.status = map[x].st;
    run.sig = 11;
    ac_report_init(&rep, &o);
    ck_assert(ac_compare_run(&f.c, &f.r, &run, &o, &rep, &e) == 0);
    ck_assert_msg(rep.kinds == (1u << map[x].k), "status %d kinds %x", (int)map[x].st, rep.kinds);
  }
  /* guard overwritten, one element unwritten (not judged) */
  uint8_t unw[4] = {0, 0, 0, 1};
  memset(&run, 0, sizeof run);
  run.status = AC_RUN_OK;
  run.o = f.o;
  run.lse = f.lse;
  run.unwritten = unw;
  run.n_unwritten = 1;
  run.guard_ok = 0;
  f.o[3] = NAN;
  ac_report_init(&rep, &o);
  ck_assert(ac_compare_run(&f.c, &f.r, &run, &o, &rep, &e) == 0);
  ck_assert_msg(rep.kinds == ((1u << AC_V_GUARD) | (1u << AC_V_UNWRITTEN)), "kinds %x", rep.kinds);
  /* repeat mode */
  ac_run_result a = run, b = run;
  float o2[4];
  memcpy(o2, f.o, sizeof o2);
  b.o = o2;
  ac_report_init(&rep, &o);
  ck_assert(ac_compare_repeat(&f.c, &a, &b, &rep) == 0 && rep.kinds == 0);
  o2[1] = nextafterf(o2[1], 2);
  ck_assert(ac_compare_repeat(&f.c, &a, &b, &rep) == 1 && rep.kinds == (1u << AC_V_NONDETERMINISTIC));
  fx_free(&f);
}
END_TEST

START_TEST(policies_and_exit_codes)
{
  ac_policies p;
  ac_policies_init(&p);
  ac_err e;
  ck_assert(p.p[AC_V_FAIL] == AC_POLICY_FAIL && p.p[AC_V_SUSPECT] == AC_POLICY_WARN &&
            p.p[AC_V_MASKED_LEAK] == AC_POLICY_WARN && p.p[AC_V_OUT_OF_DOMAIN] == AC_POLICY_IGNORE &&
            p.p[AC_V_NONDETERMINISTIC] == AC_POLICY_WARN && p.p[AC_V_CRASH] == AC_POLICY_FAIL);
  ck_assert_int_eq(ac_status_of(&p, 1u << AC_V_SUSPECT), AC_STATUS_WARN);
  ck_assert_int_eq(ac_status_of(&p, 1u << AC_V_OUT_OF_DOMAIN), AC_STATUS_PASS);
  ck_assert_int_eq(ac_status_of(&p, 1u << AC_V_SKIP), AC_STATUS_SKIP);
  ck_assert(ac_policies_set(&p, "suspect=fail", &e) == 0 && p.p[AC_V_SUSPECT] == AC_POLICY_FAIL);
  ck_assert(ac_policies_set(&p, "MASKED_LEAK=ignore", &e) == 0 && p.p[AC_V_MASKED_LEAK] == AC_POLICY_IGNORE);
  ck_assert(ac_policies_set(&p, "out-of-domain=fail", &e) == 0);
  ck_assert(ac_policies_set(&p, "FAIL=warn", &e) == 0 && p.p[AC_V_FAIL] == AC_POLICY_WARN);
  ck_assert(ac_policies_set(&p, "skip=fail", &e) < 0);
  ck_assert(ac_policies_set(&p, "bogus=fail", &e) < 0);
  ck_assert(ac_policies_set(&p, "fail", &e) < 0);
  ck_assert(ac_policies_set(&p, "fail=maybe", &e) < 0);
  ck_assert_int_eq(ac_status_of(&p, 1u << AC_V_SUSPECT), AC_STATUS_FAIL);
  ck_assert_int_eq(ac_status_of(&p, 1u << AC_V_FAIL), AC_STATUS_WARN);
  ac_exit x = {0, 0};
  ac_exit_add(&x, &p, 1u << AC_V_FAIL);
  ck_assert_int_eq(ac_exit_code(&x), 0);
  ac_exit_add(&x, &p, 1u << AC_V_ERROR);
  ck_assert_int_eq(ac_exit_code(&x), 3);
  ac_exit_add(&x, &p, 1u << AC_V_OUT_OF_DOMAIN);
  ck_assert_int_eq(ac_exit_code(&x), 1);
  ac_verdict_kind k;
  for (int i = 0; i < AC_V_NKINDS; i++)
    ck_assert(ac_verdict_parse(ac_verdict_name((ac_verdict_kind)i), &k) == 0 && k == (ac_verdict_kind)i);
}
END_TEST

START_TEST(precision_table)
{
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  const char *need[] = {"fp64", "fp32", "fp32-exp2", "fp16-fa2", "bf16-fa2", "fp16-acc16", "bf16-acc16"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) ck_assert_msg(ac_precision_find(need[i]), "%s", need[i]);
  for (size_t i = 0; i < n; i++) {
    ck_assert(t[i].u_qk > 0 && t[i].u_s > 0 && t[i].u_a > 0 && t[i].mu > 0);
    ck_assert_msg(ac_precision_mu_index(t[i].mu) >= 0, "%s: mu not among the oracle's thresholds", t[i].name);
  }
  ck_assert(strcmp(ac_precision_default(AC_F16)->name, "fp16-fa2") == 0);
  ck_assert(strcmp(ac_precision_default(AC_F64)->name, "fp64") == 0);
  const ac_precision *c;
  ac_err e;
  ck_assert(ac_precision_resolve(NULL, "bf16-acc16", AC_BF16, &c, &e) == 0 && !strcmp(c->name, "bf16-acc16"));
  ck_assert(ac_precision_resolve("fp32", "bf16-acc16", AC_BF16, &c, &e) == 0 && !strcmp(c->name, "fp32"));
  ck_assert(ac_precision_resolve(NULL, NULL, AC_F32, &c, &e) == 0 && !strcmp(c->name, "fp32"));
  ck_assert(ac_precision_resolve("nope", NULL, AC_F32, &c, &e) < 0);
  ck_assert(ac_precision_nr(ac_precision_find("fp32"), 100) == 100);
}
END_TEST

START_TEST(verdict_ood_lse_counted_like_elements)
{
  /* an out-of-domain row: its wrong LSE is counted out of domain like its wrong elements,
   * neither judged nor silently dropped */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 4);
  f.r.rows[0].max_abs_s = 1e39;   /* beyond binary32: out of the fp32 domain */
  ac_store_bits(AC_F32, f.o, 0, ac_encode_f64(AC_F32, 0.5));
  ac_store_bits(AC_F32, f.o, 1, ac_encode_f64(AC_F32, 0.5));
  f.lse[0] = 100;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_OUT_OF_DOMAIN) && rep.n_ood == 3 && rep.n_judged == 0 && rep.lse_judged == 0,
                "kinds %x n_ood %lld judged %lld lse_judged %lld", rep.kinds, (long long)rep.n_ood,
                (long long)rep.n_judged, (long long)rep.lse_judged);
  /* a non-finite LSE in that row is counted the same way */
  f.lse[0] = NAN;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.n_ood == 3 && rep.lse_judged == 1, "n_ood %lld lse_judged %lld", (long long)rep.n_ood,
                (long long)rep.lse_judged);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_beyond_format_lse_like_elements)
{
  /* exact values beyond binary32 in a row within the domain: a finite kernel value other than
   * the correct rounding is out of domain and not judged, for an element and an LSE alike */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_NONE, 1, 4);
  f.r.elems[0].o = 1e39;
  f.r.o_round[AC_F32][0] = ac_encode_f64(AC_F32, INFINITY);
  ac_store_bits(AC_F32, f.o, 0, ac_encode_f64(AC_F32, FLT_MAX));
  f.r.rows[0].lse = 1e39;
  f.r.rows[0].lse_f32 = INFINITY;
  f.lse[0] = FLT_MAX;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_OUT_OF_DOMAIN) && rep.n_ood == 2 && rep.n_judged == 1 && rep.lse_judged == 0,
                "kinds %x n_ood %lld judged %lld lse_judged %lld", rep.kinds, (long long)rep.n_ood,
                (long long)rep.n_judged, (long long)rep.lse_judged);
  /* the correct rounding (inf) is judged, an exact match */
  ac_store_bits(AC_F32, f.o, 0, ac_encode_f64(AC_F32, INFINITY));
  f.lse[0] = INFINITY;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == 0 && rep.n_ood == 0 && rep.n_judged == 2 && rep.lse_judged == 1, "kinds %x %s", rep.kinds,
                rep.note);
  fx_free(&f);
}
END_TEST

START_TEST(verdict_worst_failure_before_leak)
{
  /* a masked NaN in V column 1 reaches o[0,0,0,1] (MASKED-LEAK, first in order); o[0,0,1,0] is
   * NaN with nothing to excuse it: the worst element named is the failure, not the leak */
  fixture f;
  fx_init(&f, AC_F32, AC_MASK_CAUSAL, 2, 2);
  float *v = f.c.v;
  v[3] = NAN;   /* V[1][1], masked for row 0 */
  f.r.rows[1].has_nonfinite = 1;
  f.r.elems[3].accept = AC_ACCEPT_NAN;
  f.r.o_round[AC_F32][3] = ac_encode_f64(AC_F32, NAN);
  f.o[1] = NAN;
  f.o[2] = NAN;
  f.o[3] = NAN;
  ac_compare_opts o;
  ac_compare_opts_init(&o);
  ac_report rep;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == ((1u << AC_V_FAIL) | (1u << AC_V_MASKED_LEAK)) && rep.n_leak == 1 && rep.n_fail == 1,
                "kinds %x %s", rep.kinds, rep.note);
  ck_assert_msg(rep.worst.valid && rep.worst.i == 1 && rep.worst.d == 0 && rep.worst.why == AC_WHY_NONFINITE,
                "worst o[%lld,%lld]", (long long)rep.worst.i, (long long)rep.worst.d);
  /* the leak alone: it is the worst element named */
  f.o[2] = (float)f.r.elems[2].o;
  judge(&f, &o, &rep);
  ck_assert_msg(rep.kinds == (1u << AC_V_MASKED_LEAK) && rep.worst.valid && rep.worst.i == 0 && rep.worst.d == 1,
                "kinds %x worst o[%lld,%lld]", rep.kinds, (long long)rep.worst.i, (long long)rep.worst.d);
  fx_free(&f);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("compare");
  TCase *tc = tcase_create("compare");
  tcase_add_test(tc, gamma_values);
  tcase_add_test(tc, budget_half_ulp_only);
  tcase_add_test(tc, budget_terms);
  tcase_add_test(tc, verdict_pass_exact_rounding);
  tcase_add_test(tc, verdict_fail_and_worst);
  tcase_add_test(tc, verdict_suspect_between_kappa_e_and_w);
  tcase_add_test(tc, verdict_nonfinite_fail);
  tcase_add_test(tc, verdict_domain_of_narrow_classes);
  tcase_add_test(tc, budget_underflow_of_scaled_q);
  tcase_add_test(tc, verdict_overflow_within_budget);
  tcase_add_test(tc, verdict_masked_leak);
  tcase_add_test(tc, verdict_masked_leak_per_element);
  tcase_add_test(tc, verdict_nan_from_weight0);
  tcase_add_test(tc, verdict_out_of_domain);
  tcase_add_test(tc, verdict_empty_rows);
  tcase_add_test(tc, verdict_lse_bound);
  tcase_add_test(tc, verdict_ood_lse_counted_like_elements);
  tcase_add_test(tc, verdict_beyond_format_lse_like_elements);
  tcase_add_test(tc, verdict_worst_failure_before_leak);
  tcase_add_test(tc, verdict_unresolved_is_error);
  tcase_add_test(tc, budget_fixed_and_baseline);
  tcase_add_test(tc, harness_statuses);
  tcase_add_test(tc, policies_and_exit_codes);
  tcase_add_test(tc, precision_table);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return ac_test_run(suite());
}
