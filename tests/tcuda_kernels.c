/* tcuda_kernels: every built CUDA kernel against a double-precision reference on a few small
 * cases (GQA, tq != tk, all three masks, empty rows, a padded non-contiguous layout), with
 * dtype-appropriate tolerances; device guards must stay intact. The device is probed in a
 * forked child first: without one the program exits 77 (SKIP). The full oracle judgement of
 * these kernels is `attncheck suite` (scripts/gpu-check). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "accuda.h"
#include "testutil.h"

/* Under AddressSanitizer the CUDA driver needs the shadow gap unprotected to map device memory. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "protect_shadow_gap=0"; }

typedef struct {
  int64_t B, H, KVH, tq, tk, dk, dv;
  int mask;
  int padded;   /* 1: [b][t][h][d] with 8 spare elements per row instead of dense [b][h][t][d] */
  const char *label;
} tcase;

static const tcase cases[] = {
  { 1, 2, 2, 17, 17, 32, 32, ATTNCHECK_MASK_NONE, 0, "mha-none-17" },
  { 2, 4, 2, 33, 70, 64, 64, ATTNCHECK_MASK_CAUSAL, 0, "gqa-causal-33x70" },
  { 1, 2, 1, 40, 100, 64, 32, ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 0, "mqa-br-40x100-dv32" },
  { 1, 1, 1, 130, 65, 16, 16, ATTNCHECK_MASK_CAUSAL, 0, "causal-130x65" },
  { 1, 3, 1, 50, 20, 24, 40, ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 0, "br-empty-rows-50x20" },
  { 2, 4, 4, 65, 129, 128, 128, ATTNCHECK_MASK_CAUSAL, 1, "padded-layout-d128" },
};

static uint64_t rng_state;
static uint64_t splitmix(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double normal01(void)
{
  double u = ((double)(splitmix() >> 11) + 0.5) * 0x1p-53, w = ((double)(splitmix() >> 11) + 0.5) * 0x1p-53;
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * w);
}

/* Storage: f32, f16 (_Float16), bf16 (round to nearest even on the binary32 bits). */
static size_t esize(int dt) { return dt == ATTNCHECK_F32 ? 4 : 2; }
static uint16_t bf16_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static double load(int dt, const void *base, int64_t i)
{
  if (dt == ATTNCHECK_F32) return ((const float *)base)[i];
  if (dt == ATTNCHECK_F16) return (double)((const _Float16 *)base)[i];
  uint32_t u = (uint32_t)((const uint16_t *)base)[i] << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static void store(int dt, void *base, int64_t i, double x)
{
  if (dt == ATTNCHECK_F32) ((float *)base)[i] = (float)x;
  else if (dt == ATTNCHECK_F16) ((_Float16 *)base)[i] = (_Float16)(float)x;
  else ((uint16_t *)base)[i] = bf16_bits((float)x);
}

static void strides(const tcase *c, int64_t H, int64_t T, int64_t D, int64_t s[4])
{
  if (c->padded) { s[3] = 1; s[1] = D + 8; s[2] = H * (D + 8); s[0] = T * H * (D + 8); }
  else { s[3] = 1; s[2] = D; s[1] = T * D; s[0] = H * T * D; }
}
static int64_t span(int64_t B, int64_t H, int64_t T, int64_t D, const int64_t s[4])
{
  return 1 + (B - 1) * s[0] + (H - 1) * s[1] + (T - 1) * s[2] + (D - 1) * s[3];
}
static int64_t off(const int64_t s[4], int64_t b, int64_t h, int64_t t, int64_t d)
{
  return b * s[0] + h * s[1] + t * s[2] + d * s[3];
}
static void *nan_span(int dt, int64_t n)
{
  void *p = malloc((size_t)n * esize(dt));
  for (int64_t i = 0; i < n; i++) store(dt, p, i, NAN);
  return p;
}
static void fill(int dt, void *p, int64_t B, int64_t H, int64_t T, int64_t D, const int64_t s[4])
{
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < D; d++) store(dt, p, off(s, b, h, t, d), normal01());
}
static int64_t last_key(int mask, int64_t i, int64_t tq, int64_t tk)
{
  int64_t l = mask == ATTNCHECK_MASK_CAUSAL ? i : mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT ? i + tk - tq : tk - 1;
  return l > tk - 1 ? tk - 1 : l;
}

/* Tolerances in units of max|V| (output) and 1 + |lse| (LSE) for a precision class. */
static void tolerances(const char *prec, double *to, double *tl)
{
  if (strcmp(prec, "fp32") == 0) { *to = 2e-5; *tl = 2e-5; }
  else if (strncmp(prec, "bf16", 4) == 0) { *to = 3e-2; *tl = 8e-3; }
  else { *to = 6e-3; *tl = 4e-3; }
}

static int kernel_dtype(const attncheck_kernel *k)
{
  const char *n = k->name;
  size_t l = strlen(n);
  if (l > 5 && strcmp(n + l - 5, "-bf16") == 0) return ATTNCHECK_BF16;
  if (l > 4 && strcmp(n + l - 4, "-f16") == 0) return ATTNCHECK_F16;
  return ATTNCHECK_F32;
}

static void run_kernel_case(const attncheck_kernel *k, const tcase *c)
{
  const int dt = kernel_dtype(k);
  attncheck_problem p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.dtype = dt; p.mask = c->mask;
  p.batch = c->B; p.heads = c->H; p.kv_heads = c->KVH;
  p.tq = c->tq; p.tk = c->tk; p.dk = c->dk; p.dv = c->dv;
  p.scale = 1.0 / sqrt((double)c->dk);
  strides(c, c->H, c->tq, c->dk, p.q_stride);
  strides(c, c->KVH, c->tk, c->dk, p.k_stride);
  strides(c, c->KVH, c->tk, c->dv, p.v_stride);
  strides(c, c->H, c->tq, c->dv, p.o_stride);
  char why[256] = "";
  if (!k->supports(&p, why, sizeof why)) {
    printf("%s on %s: not supported (%s)\n", k->name, c->label, why);
    return;
  }
  rng_state = ac_test_seed() ^ (uint64_t)(c - cases) * 0x1234567ULL;
  int64_t nq = span(c->B, c->H, c->tq, c->dk, p.q_stride), nk = span(c->B, c->KVH, c->tk, c->dk, p.k_stride);
  int64_t nv = span(c->B, c->KVH, c->tk, c->dv, p.v_stride), no = span(c->B, c->H, c->tq, c->dv, p.o_stride);
  int64_t nl = c->B * c->H * c->tq;
  void *q = nan_span(dt, nq), *kk = nan_span(dt, nk), *v = nan_span(dt, nv), *o = nan_span(dt, no);
  float *lse = malloc(sizeof(float) * (size_t)nl);
  for (int64_t i = 0; i < nl; i++) lse[i] = NAN;
  fill(dt, q, c->B, c->H, c->tq, c->dk, p.q_stride);
  fill(dt, kk, c->B, c->KVH, c->tk, c->dk, p.k_stride);
  fill(dt, v, c->B, c->KVH, c->tk, c->dv, p.v_stride);

  char err[512] = "";
  double ms = 0;
  ac_cuda_case cc = {.k = k,
                     .p = &p,
                     .q_span = q,
                     .k_span = kk,
                     .v_span = v,
                     .q_n = (size_t)nq,
                     .k_n = (size_t)nk,
                     .v_n = (size_t)nv,
                     .o_span = o,
                     .o_n = (size_t)no,
                     .lse = lse,
                     .lse_n = (size_t)nl,
                     .device = 0,
                     .guard = 64};
  int rc = ac_cuda_run_case(&cc, &ms, err, sizeof err);
  ck_assert_msg(rc == AC_CUDA_RUN_OK, AC_SEED_FMT "%s on %s: ac_cuda_run_case = %d: %s", AC_SEED_ARG, k->name,
                c->label, rc, err);

  double to, tl, vmax = 0, worst_o = 0, worst_l = 0;
  tolerances(k->precision, &to, &tl);
  for (int64_t i = 0; i < nv; i++) {
    double x = fabs(load(dt, v, i));
    if (x == x && x > vmax) vmax = x;
  }
  double *sc = malloc(sizeof(double) * (size_t)c->tk);
  const int64_t G = c->H / c->KVH;
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->H; h++)
      for (int64_t i = 0; i < c->tq; i++) {
        const int64_t kh = h / G, last = last_key(c->mask, i, c->tq, c->tk);
        const int64_t row = (b * c->H + h) * c->tq + i;
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j <= last; j++) {
          double s = 0;
          for (int64_t t = 0; t < c->dk; t++)
            s += load(dt, q, off(p.q_stride, b, h, i, t)) * load(dt, kk, off(p.k_stride, b, kh, j, t));
          sc[j] = s * p.scale;
          if (sc[j] > m) m = sc[j];
        }
        for (int64_t j = 0; j <= last; j++) l += exp(sc[j] - m);
        for (int64_t d = 0; d < c->dv; d++) {
          double ref = 0;
          for (int64_t j = 0; j <= last; j++) ref += exp(sc[j] - m) / l * load(dt, v, off(p.v_stride, b, kh, j, d));
          double got = load(dt, o, off(p.o_stride, b, h, i, d));
          double e = fabs(got - ref);
          ck_assert_msg(e <= to * vmax, AC_SEED_FMT "%s on %s: o[%lld][%lld][%lld][%lld] = %a, reference %a (err %g > %g)",
                        AC_SEED_ARG, k->name, c->label, (long long)b, (long long)h, (long long)i, (long long)d, got,
                        ref, e, to * vmax);
          if (e > worst_o) worst_o = e;
        }
        double lg = lse[row];
        if (last < 0) {
          ck_assert_msg(isinf(lg), AC_SEED_FMT "%s on %s: empty row %lld has lse %a, not +-inf", AC_SEED_ARG, k->name,
                        c->label, (long long)row, lg);
        } else {
          double lref = m + log(l), e = fabs(lg - lref);
          ck_assert_msg(e <= tl * (1 + fabs(lref)), AC_SEED_FMT "%s on %s: lse[%lld] = %a, reference %a", AC_SEED_ARG,
                        k->name, c->label, (long long)row, lg, lref);
          if (e > worst_l) worst_l = e;
        }
      }
  /* Gaps of the padded layout were not touched. */
  if (c->padded)
    for (int64_t b = 0; b < c->B; b++)
      for (int64_t t = 0; t < c->tq; t++)
        for (int64_t h = 0; h < c->H; h++)
          for (int64_t d = c->dv; d < c->dv + 8; d++) {
            double x = load(dt, o, b * p.o_stride[0] + t * p.o_stride[2] + h * p.o_stride[1] + d);
            ck_assert_msg(x != x, AC_SEED_FMT "%s on %s: gap element written (%a)", AC_SEED_ARG, k->name, c->label, x);
          }
  printf("%s on %s: max |err| o %.3g (tol %.3g), lse %.3g, %.3f ms\n", k->name, c->label, worst_o, to * vmax, worst_l,
         ms);
  free(sc); free(q); free(kk); free(v); free(o); free(lse);
}

START_TEST(kernel_matches_reference)
{
  size_t n = 0;
  const attncheck_kernel *const *l = ac_cuda_kernels(&n);
  ck_assert_uint_gt(n, (size_t)_i);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) run_kernel_case(l[_i], &cases[c]);
}
END_TEST

/* 1 when a device answers; the probe initializes CUDA, so it runs in a child. */
static int device_present(char *why, size_t n)
{
  int fd[2];
  if (pipe(fd) != 0) return 0;
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    char err[256] = "";
    int c = ac_cuda_device_count(err, sizeof err);
    char line[300];
    int len = snprintf(line, sizeof line, "%d %s", c, err);
    if (write(fd[1], line, (size_t)len) < 0) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  char buf[300] = "";
  ssize_t r = read(fd[0], buf, sizeof buf - 1);
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (r <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    snprintf(why, n, "the device probe child failed");
    return 0;
  }
  snprintf(why, n, "%s", buf);
  return atoi(buf) > 0;
}

int main(void)
{
  char why[300];
  if (!device_present(why, sizeof why)) {
    printf("SKIP: no CUDA device (%s)\n", why);
    return 77;
  }
  printf("CUDA devices: %s\n", why);
  size_t n = 0;
  ac_cuda_kernels(&n);
  Suite *s = suite_create("cuda_kernels");
  TCase *tc = tcase_create("kernels");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, kernel_matches_reference, 0, (int)n);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
