/* tapi.c: libattncheck's public API (<attncheck/attncheck.h>) as a client sees it: a case from the
 * kernel ABI's structs (strided B,T,H,D tensors), a correct output PASSes and a perturbed element
 * FAILs with that element as the worst, bad descriptions and options return -1 with a message,
 * a written reproducer is judged the same by `attncheck check FILE`, and two contexts in two
 * threads give the judgement of one; a quantized K (e4m3fn codes with per-token scales) and V
 * (q4_0, as codes and scales or as ggml's block bytes) are read as a kernel is handed them and
 * judged against attention over their exact values. Linked against the shared library only. */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attncheck.h"
#include "testutil.h"

enum { B = 1, T = 20, H = 2, KVH = 1, D = 8 };
/* B,T,H,D storage (FlashAttention's layout): element (b, t, h, d). */
static float q[B][T][H][D], k[B][T][KVH][D], v[B][T][KVH][D], o[B][T][H][D];

static void fill(void)
{
  uint64_t s = ac_test_seed() * 2862933555777941757ULL + 3037000493ULL;
  float *all[3] = {&q[0][0][0][0], &k[0][0][0][0], &v[0][0][0][0]};
  size_t n[3] = {sizeof q / 4, sizeof k / 4, sizeof v / 4};
  for (int x = 0; x < 3; x++)
    for (size_t i = 0; i < n[x]; i++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      all[x][i] = (float)((double)(s >> 40) / (double)(1ULL << 24) * 4.0 - 2.0);
    }
  /* causal attention in binary64, rounded once to binary32 */
  for (int h = 0; h < H; h++)
    for (int i = 0; i < T; i++) {
      double sc[T], m = -INFINITY, l = 0;
      for (int j = 0; j <= i; j++) {
        double d = 0;
        for (int t = 0; t < D; t++) d += (double)q[0][i][h][t] * k[0][j][0][t];
        sc[j] = d / sqrt((double)D);
        if (sc[j] > m) m = sc[j];
      }
      for (int j = 0; j <= i; j++) l += exp(sc[j] - m);
      for (int t = 0; t < D; t++) {
        double a = 0;
        for (int j = 0; j <= i; j++) a += exp(sc[j] - m) / l * v[0][j][0][t];
        o[0][i][h][t] = (float)a;
      }
    }
}

/* The problem of the arrays above: strides in attncheck's [batch][head][t][d] order. */
static void problem(attncheck_problem *p, attncheck_tensors *t)
{
  memset(p, 0, sizeof *p);
  memset(t, 0, sizeof *t);
  p->struct_size = sizeof *p;
  p->dtype = p->q_dtype = p->k_dtype = p->v_dtype = p->o_dtype = ATTNCHECK_F32;
  p->mask = ATTNCHECK_MASK_CAUSAL;
  p->batch = B, p->heads = H, p->kv_heads = KVH, p->tq = p->tk = T, p->dk = p->dv = D;
  int64_t qs[4] = {T * H * D, D, H * D, 1}, ks[4] = {T * KVH * D, D, KVH * D, 1};
  memcpy(p->q_stride, qs, sizeof qs);
  memcpy(p->o_stride, qs, sizeof qs);
  memcpy(p->k_stride, ks, sizeof ks);
  memcpy(p->v_stride, ks, sizeof ks);
  p->window_left = p->window_right = -1;
  t->q = q, t->k = k, t->v = v;
}

static attncheck_case *make_case(attncheck_ctx *ctx)
{
  attncheck_problem p;
  attncheck_tensors t;
  problem(&p, &t);
  attncheck_case_desc d = {sizeof d, ATTNCHECK_CASE_DEFAULT_SCALE, &p, &t, NULL, {0, 0, 0, 0}};
  attncheck_case *c = NULL;
  ck_assert_msg(attncheck_case_new(ctx, &d, &c) == 0, AC_SEED_FMT "case: %s", AC_SEED_ARG, attncheck_ctx_error(ctx));
  return c;
}

static attncheck_result *judge(attncheck_ctx *ctx, attncheck_case *c, const float *out)
{
  attncheck_outputs ou = {.struct_size = sizeof ou, .o = out};
  int64_t os[4] = {T * H * D, D, H * D, 1};
  memcpy(ou.o_stride, os, sizeof os);
  attncheck_result *r = NULL;
  ck_assert_msg(attncheck_judge(ctx, c, &ou, &r) == 0, "judge: %s", attncheck_ctx_error(ctx));
  return r;
}

START_TEST(correct_passes_perturbed_fails_at_its_element)
{
  fill();
  attncheck_ctx *ctx = attncheck_ctx_new();
  ck_assert_int_eq(attncheck_api_version(), ATTNCHECK_API_VERSION);
  ck_assert_int_eq(attncheck_ctx_set(ctx, "no-cache", NULL), 0);
  attncheck_case *c = make_case(ctx);
  attncheck_result *r = judge(ctx, c, &o[0][0][0][0]);
  attncheck_summary s = {.struct_size = sizeof s};
  ck_assert_int_eq(attncheck_result_summary(r, &s), 0);
  ck_assert_msg(s.status == ATTNCHECK_PASS && s.exit_code == 0 && s.err_w < 1, AC_SEED_FMT "%s", AC_SEED_ARG,
                attncheck_result_line(r));
  ck_assert_int_eq(s.judged, B * H * T * D);
  attncheck_result_free(r);
  static float bad[B][T][H][D];
  memcpy(bad, o, sizeof o);
  bad[0][11][1][5] += 0x1p-6f;
  r = judge(ctx, c, &bad[0][0][0][0]);
  attncheck_result_summary(r, &s);
  ck_assert_msg(s.status == ATTNCHECK_FAIL && s.exit_code == 1 && s.bad == 1, "%s", attncheck_result_line(r));
  ck_assert_int_eq(s.worst_tensor, ATTNCHECK_T_O);
  ck_assert(s.worst_index[0] == 0 && s.worst_index[1] == 1 && s.worst_index[2] == 11 && s.worst_index[3] == 5);
  ck_assert_msg(!strncmp(attncheck_result_line(r), "FAIL", 4) &&
                    strstr(attncheck_result_detail(r), "worst o[0,1,11,5]"),
                "%s%s", attncheck_result_line(r), attncheck_result_detail(r));
  ck_assert_int_eq(s.kinds & 1u, 1u); /* kind 0 is FAIL */
  ck_assert_str_eq(attncheck_kind_name(0), "FAIL");
  /* the reproducer: the stored outputs judged by the command give the same numbers */
  char path[512], cmd[1200], out[4096];
  snprintf(path, sizeof path, "%s/repro.npz", ac_test_tmpdir());
  ck_assert_int_eq(attncheck_result_write_case(ctx, r, path), 0);
  snprintf(cmd, sizeof cmd, "ATTNCHECK_CACHE=off %s check %s", ac_test_attncheck(), path);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 1);
  const char *a = strstr(attncheck_result_line(r), " FAIL err/W="), *b = strstr(out, " FAIL err/W=");
  ck_assert_msg(a && b && !strncmp(a, b, strcspn(a, "\n")), "library: %s\ncommand: %s", attncheck_result_line(r), out);
  attncheck_result_free(r);
  attncheck_case_free(c);
  attncheck_ctx_free(ctx);
}
END_TEST

START_TEST(bad_descriptions_and_options_fail_with_a_message)
{
  fill();
  attncheck_ctx *ctx = attncheck_ctx_new();
  attncheck_problem p;
  attncheck_tensors t;
  attncheck_case *c = NULL;
  problem(&p, &t);
  attncheck_case_desc d = {0, 0, &p, &t, NULL, {0, 0, 0, 0}};
  ck_assert_int_eq(attncheck_case_new(ctx, &d, &c), -1);
  ck_assert_ptr_null(c);
  ck_assert(strstr(attncheck_ctx_error(ctx), "struct_size"));
  d.struct_size = sizeof d;
  p.kv_heads = 3;
  ck_assert_int_eq(attncheck_case_new(ctx, &d, &c), -1);
  ck_assert_msg(strstr(attncheck_ctx_error(ctx), "kv_heads") || strstr(attncheck_ctx_error(ctx), "heads"), "%s",
                attncheck_ctx_error(ctx));
  p.kv_heads = KVH;
  p.dtype = 9;
  ck_assert_int_eq(attncheck_case_new(ctx, &d, &c), -1);
  ck_assert(strstr(attncheck_ctx_error(ctx), "problem.dtype"));
  p.dtype = ATTNCHECK_F32;
  t.v = NULL;
  ck_assert_int_eq(attncheck_case_new(ctx, &d, &c), -1);
  t.v = v;
  p.k_format = ATTNCHECK_QF_Q8_0; /* quantized tensors come from case files, not descriptions */
  ck_assert_int_eq(attncheck_case_new(ctx, &d, &c), -1);
  ck_assert_msg(strstr(attncheck_ctx_error(ctx), "quantized"), "%s", attncheck_ctx_error(ctx));
  p.k_format = 0;
  ck_assert_int_eq(attncheck_ctx_set(ctx, "no-such-option", "1"), -1);
  ck_assert(strstr(attncheck_ctx_error(ctx), "no-such-option"));
  ck_assert_int_eq(attncheck_ctx_set(ctx, "precision", "no-such-class"), -1);
  ck_assert_int_eq(attncheck_ctx_set(ctx, "timeout", "5"), -1); /* a kernel-run option */
  ck_assert_int_eq(attncheck_ctx_set(ctx, "rows", "99999"), 0);
  c = make_case(ctx);
  attncheck_outputs ou = {.struct_size = sizeof ou, .o = o};
  attncheck_result *r = NULL;
  ck_assert_int_eq(attncheck_judge(ctx, c, &ou, &r), -1); /* a row the case lacks */
  ck_assert_ptr_null(r);
  ck_assert(strstr(attncheck_ctx_error(ctx), "rows"));
  ck_assert_int_eq(attncheck_ctx_set(ctx, "rows", NULL), 0);
  ou.struct_size = 4;
  ck_assert_int_eq(attncheck_judge(ctx, c, &ou, &r), -1);
  attncheck_case_free(c);
  attncheck_ctx_free(ctx);
}
END_TEST

typedef struct {
  char line[1024];
} thread_out;

static void *one_judgement(void *arg)
{
  thread_out *to = arg;
  attncheck_ctx *ctx = attncheck_ctx_new();
  attncheck_ctx_set(ctx, "no-cache", NULL);
  attncheck_ctx_set(ctx, "threads", "2");
  attncheck_ctx_set(ctx, "rows", "edges+3");
  attncheck_case *c = make_case(ctx);
  attncheck_result *r = judge(ctx, c, &o[0][0][0][0]);
  attncheck_case_free(c); /* the result keeps what it needs */
  snprintf(to->line, sizeof to->line, "%s", attncheck_result_line(r));
  attncheck_result_free(r);
  attncheck_ctx_free(ctx);
  return NULL;
}

/* attncheck_case_problem writes the ABI 3 fields to a caller that does not ask for the whole struct
 * (one built against an earlier header has no room for the quantized formats of ABI 5). */
START_TEST(case_problem_writes_no_more_than_the_caller_asks)
{
  fill();
  attncheck_ctx *ctx = attncheck_ctx_new();
  attncheck_case *c = make_case(ctx);
  unsigned char buf[sizeof(attncheck_problem) + 16];
  memset(buf, 0xab, sizeof buf);
  attncheck_problem *out = (attncheck_problem *)(void *)buf;
  out->struct_size = 0;
  ck_assert_int_eq(attncheck_case_problem(c, out), 0);
  ck_assert_uint_eq(out->struct_size, ATTNCHECK_PROBLEM_V3_SIZE);
  ck_assert_int_eq(out->heads, H);
  for (size_t i = ATTNCHECK_PROBLEM_V3_SIZE; i < sizeof buf; i++) ck_assert_uint_eq(buf[i], 0xab);
  out->struct_size = sizeof *out;
  ck_assert_int_eq(attncheck_case_problem(c, out), 0);
  ck_assert_uint_eq(out->struct_size, sizeof *out);
  ck_assert_int_eq(out->k_format, 0);
  for (size_t i = sizeof *out; i < sizeof buf; i++) ck_assert_uint_eq(buf[i], 0xab);
  attncheck_case_free(c);
  attncheck_ctx_free(ctx);
}
END_TEST

START_TEST(two_contexts_in_two_threads_judge_as_one)
{
  fill();
  thread_out one, a, b;
  one_judgement(&one);
  pthread_t ta, tb;
  pthread_create(&ta, NULL, one_judgement, &a);
  pthread_create(&tb, NULL, one_judgement, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  ck_assert_str_eq(a.line, one.line);
  ck_assert_str_eq(b.line, one.line);
  ck_assert_msg(strstr(one.line, "(edges+3)"), "%s", one.line);
}
END_TEST


/* ---- quantized tensors: K e4m3fn with a binary32 scale per token, V q4_0 (blocks of 32) ---- */
enum { QT = 12, QH = 2, QKVH = 1, QD = 32 };
static float qq[QH][QT][QD], qo[QH][QT][QD];
static uint8_t kcodes[QKVH][QT][QD], vcodes[QKVH][QT][QD], vblocks[QKVH][QT][18];
static float kscale[QKVH][QT];
static uint16_t vscale[QKVH][QT];

/* e4m3fn and binary16 decoded here from their definitions (not the library's decoders) */
static double e4m3fn(uint8_t c)
{
  int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  double x = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
  return s ? -x : x;
}
static double f16val(uint16_t h)
{
  int e = (h >> 10) & 31, m = h & 1023;
  double x = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h >> 15 ? -x : x;
}

static void qfill(void)
{
  uint64_t s = ac_test_seed() * 6364136223846793005ULL + 97;
#define NEXT (s = s * 6364136223846793005ULL + 1442695040888963407ULL, s >> 33)
  for (int h = 0; h < QH; h++)
    for (int i = 0; i < QT; i++)
      for (int d = 0; d < QD; d++) qq[h][i][d] = (float)((double)(NEXT % 4096) / 1024.0 - 2.0);
  for (int j = 0; j < QT; j++) {
    kscale[0][j] = (float)ldexp(1.0 + (double)(NEXT % 1000) / 1000.0, -6);
    vscale[0][j] = (uint16_t)(0x2800 + NEXT % 1024);   /* 2^-5 (1 + m/1024) */
    for (int d = 0; d < QD; d++) {
      uint8_t c;
      do c = (uint8_t)NEXT; while ((c & 0x7f) == 0x7f);   /* not NaN */
      kcodes[0][j][d] = c;
      vcodes[0][j][d] = (uint8_t)(NEXT % 16);
    }
    /* ggml's block_q4_0: f16 d, then qs[16] with element i in the low nibble of qs[i], i + 16 in the high */
    memcpy(vblocks[0][j], &vscale[0][j], 2);
    for (int x = 0; x < 16; x++) vblocks[0][j][2 + x] = (uint8_t)(vcodes[0][j][x] | vcodes[0][j][x + 16] << 4);
  }
#undef NEXT
  for (int h = 0; h < QH; h++)   /* non-causal attention over the exact values, rounded once */
    for (int i = 0; i < QT; i++) {
      double sc[QT], m = -INFINITY, l = 0;
      for (int j = 0; j < QT; j++) {
        double d = 0;
        for (int t = 0; t < QD; t++) d += (double)qq[h][i][t] * e4m3fn(kcodes[0][j][t]) * kscale[0][j];
        sc[j] = d / sqrt((double)QD);
        if (sc[j] > m) m = sc[j];
      }
      for (int j = 0; j < QT; j++) l += exp(sc[j] - m);
      for (int t = 0; t < QD; t++) {
        double a = 0;
        for (int j = 0; j < QT; j++) a += exp(sc[j] - m) / l * f16val(vscale[0][j]) * ((int)vcodes[0][j][t] - 8);
        qo[h][i][t] = (float)a;
      }
    }
}

/* The problem and tensors of the arrays above; v from ggml's blocks when ggml is set. */
static void qproblem(attncheck_problem *p, attncheck_tensors *t, attncheck_quant *qt, int ggml)
{
  memset(p, 0, sizeof *p);
  memset(t, 0, sizeof *t);
  memset(qt, 0, sizeof *qt);
  p->struct_size = sizeof *p;
  p->dtype = p->q_dtype = p->k_dtype = p->v_dtype = p->o_dtype = ATTNCHECK_F32;
  p->batch = 1, p->heads = QH, p->kv_heads = QKVH, p->tq = p->tk = QT, p->dk = p->dv = QD;
  int64_t qs[4] = {QH * QT * QD, QT * QD, QD, 1}, ks[4] = {QKVH * QT * QD, QT * QD, QD, 1};
  memcpy(p->q_stride, qs, sizeof qs);
  memcpy(p->o_stride, qs, sizeof qs);
  memcpy(p->k_stride, ks, sizeof ks);
  memcpy(p->v_stride, ks, sizeof ks);
  p->window_left = p->window_right = -1;
  p->k_format = ATTNCHECK_QF_E4M3FN, p->v_format = ATTNCHECK_QF_Q4_0;
  qt->struct_size = sizeof *qt;
  attncheck_quant_tensor *kt = &qt->t[1], *vt = &qt->t[2];
  kt->format = ATTNCHECK_QF_E4M3FN, kt->granularity = ATTNCHECK_QG_TOKEN;
  kt->codes = &kcodes[0][0][0], kt->scales = &kscale[0][0];
  int64_t kss[4] = {QKVH * QT, QT, 1, 0};   /* [B][H][T], shared along d */
  memcpy(kt->scale_stride, kss, sizeof kss);
  vt->format = ATTNCHECK_QF_Q4_0, vt->granularity = ATTNCHECK_QG_BLOCK, vt->block = 32;
  if (ggml) {
    vt->ggml = &vblocks[0][0][0];
  } else {
    vt->codes = &vcodes[0][0][0], vt->scales = &vscale[0][0];   /* strides all zero: [B][H][T][D/32] */
  }
  t->q = qq;
  t->quant = qt;
}

static attncheck_result *qjudge(attncheck_ctx *ctx, attncheck_case *c, const float *out)
{
  attncheck_outputs ou = {.struct_size = sizeof ou, .o = out};
  attncheck_result *r = NULL;
  ck_assert_msg(attncheck_judge(ctx, c, &ou, &r) == 0, "judge: %s", attncheck_ctx_error(ctx));
  return r;
}

START_TEST(quantized_tensors_are_read_as_a_kernel_gets_them)
{
  qfill();
  attncheck_ctx *ctx = attncheck_ctx_new();
  ck_assert_int_eq(attncheck_ctx_set(ctx, "no-cache", NULL), 0);
  attncheck_problem p;
  attncheck_tensors t;
  attncheck_quant qt;
  char lines[2][1024];
  static float bad[QH][QT][QD];
  memcpy(bad, qo, sizeof qo);
  bad[1][7][20] += 0x1p-8f;
  for (int g = 0; g < 2; g++) {
    qproblem(&p, &t, &qt, g);
    attncheck_case_desc d = {sizeof d, ATTNCHECK_CASE_DEFAULT_SCALE, &p, &t, NULL, {0, 0, 0, 0}};
    attncheck_case *c = NULL;
    ck_assert_msg(attncheck_case_new(ctx, &d, &c) == 0, AC_SEED_FMT "%s", AC_SEED_ARG, attncheck_ctx_error(ctx));
    attncheck_problem back = {.struct_size = sizeof back};
    ck_assert_int_eq(attncheck_case_problem(c, &back), 0);
    ck_assert(back.k_format == ATTNCHECK_QF_E4M3FN && back.v_format == ATTNCHECK_QF_Q4_0 && back.q_format == 0);
    attncheck_grads gr = {.struct_size = sizeof gr, .dq = qq, .dk = qq, .dv = qq};
    attncheck_result *r = NULL;
    ck_assert_int_eq(attncheck_judge_grad(ctx, c, &gr, &r), -1);   /* no backward of a quantized cache */
    ck_assert_msg(strstr(attncheck_ctx_error(ctx), "no backward"), "%s", attncheck_ctx_error(ctx));
    r = qjudge(ctx, c, &qo[0][0][0]);
    attncheck_summary s = {.struct_size = sizeof s};
    attncheck_result_summary(r, &s);
    ck_assert_msg(s.status == ATTNCHECK_PASS && s.err_w < 0.1, AC_SEED_FMT "%s", AC_SEED_ARG, attncheck_result_line(r));
    attncheck_result_free(r);
    r = qjudge(ctx, c, &bad[0][0][0]);
    attncheck_result_summary(r, &s);
    ck_assert_msg(s.status == ATTNCHECK_FAIL && s.bad == 1 && s.worst_index[1] == 1 && s.worst_index[2] == 7 &&
                      s.worst_index[3] == 20,
                  AC_SEED_FMT "%s", AC_SEED_ARG, attncheck_result_line(r));
    snprintf(lines[g], sizeof lines[g], "%s", attncheck_result_line(r));
    if (g == 1) {   /* the reproducer holds the codes and scales: the command judges it the same */
      char path[512], cmd[1200], out[4096];
      snprintf(path, sizeof path, "%s/qrepro.npz", ac_test_tmpdir());
      ck_assert_int_eq(attncheck_result_write_case(ctx, r, path), 0);
      snprintf(cmd, sizeof cmd, "ATTNCHECK_CACHE=off %s check %s", ac_test_attncheck(), path);
      ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 1);
      const char *a = strstr(lines[g], " FAIL err/W="), *b = strstr(out, " FAIL err/W=");
      ck_assert_msg(a && b && !strncmp(a, b, strcspn(a, "\n")), "library: %s\ncommand: %s", lines[g], out);
      snprintf(cmd, sizeof cmd, "%s info %s", ac_test_attncheck(), path);
      ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
      ck_assert_msg(strstr(out, "k e4m3fn:token") && strstr(out, "v q4_0"), "%s", out);
    }
    attncheck_result_free(r);
    attncheck_case_free(c);
  }
  /* codes and scales, or ggml's blocks: the same values */
  ck_assert_str_eq(strstr(lines[0], " FAIL"), strstr(lines[1], " FAIL"));
  /* refusals, one line each */
  struct {
    const char *want;
    int what;
  } bad_desc[] = {{"tensors.k is set", 0},       {"code 16", 1},           {"problem.k_format", 2},
                  {"tensors.quant is NULL", 3},  {"no codes", 4},          {"block is 32", 5},
                  {"names no quantized format", 6}, {"ggml formats and mxfp4 only", 7}};
  for (size_t x = 0; x < sizeof bad_desc / sizeof bad_desc[0]; x++) {
    qproblem(&p, &t, &qt, 0);
    uint8_t saved = vcodes[0][3][5];
    switch (bad_desc[x].what) {
    case 0: t.k = kcodes; break;
    case 1: vcodes[0][3][5] = 16; break;
    case 2: qt.t[1].format = ATTNCHECK_QF_E5M2; break;
    case 3: t.quant = NULL; break;
    case 4: qt.t[2].codes = NULL; break;
    case 5: qt.t[2].block = 16; break;
    case 6: p.k_format = p.v_format = 0, t.k = kcodes, t.v = vcodes; break;
    case 7: qt.t[1].codes = NULL, qt.t[1].ggml = &vblocks[0][0][0]; break;   /* e4m3fn has no ggml blocks */
    }
    attncheck_case_desc d = {sizeof d, ATTNCHECK_CASE_DEFAULT_SCALE, &p, &t, NULL, {0, 0, 0, 0}};
    attncheck_case *c = NULL;
    ck_assert_int_eq(attncheck_case_new(ctx, &d, &c), -1);
    ck_assert(c == NULL);
    const char *msg = attncheck_ctx_error(ctx);
    ck_assert_msg(strstr(msg, bad_desc[x].want) && !strchr(msg, '\n'), "case %zu: '%s', expected '%s'", x, msg,
                  bad_desc[x].want);
    vcodes[0][3][5] = saved;
  }
  attncheck_ctx_free(ctx);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("api");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, correct_passes_perturbed_fails_at_its_element);
  tcase_add_test(tc, bad_descriptions_and_options_fail_with_a_message);
  tcase_add_test(tc, case_problem_writes_no_more_than_the_caller_asks);
  tcase_add_test(tc, two_contexts_in_two_threads_judge_as_one);
  tcase_add_test(tc, quantized_tensors_are_read_as_a_kernel_gets_them);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
