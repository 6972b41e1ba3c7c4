/* bench/quant_judge.c: judging a quantized case against judging the same case in binary32
 * (docs/quantized.md "Speed"; target: at most 1.3x). For each format a case of T = 1024 queries and
 * keys, d = 128, causal, normal(0, 1) values, K and V quantized by the format's reference quantizer;
 * its twin holds the same exact values in binary32 K and V where they are binary32 numbers (every
 * format but some q4_1, q5_1, fp8, int and NVFP4 values: their nearest binary32). Judging is what
 * `attncheck check` does around the kernel: read the case file (the codes decoded), the oracle on
 * every row (one thread, o rounded to binary32, the LSE), and the comparison of an output (the
 * oracle's own binary32 rounding, so that no kernel time enters). Process CPU time (a shared
 * machine's waits for a core left out), the two cases alternated, the best of 5 each; then the
 * layouts below (group and tile scales, token groups, dtypes, packed codes) alike. BLAS: the oracle's
 * BLAS level (ac_oracle_opts.blas, docs/numerics.md §12.2): 0 by the problem's size (the default,
 * as check runs), -1 the per-row passes only, 1 forced. The level takes a quantized head whose values
 * are not all binary32 numbers as it takes its binary32 twin (docs/numerics.md §12.2, wide values).
 * usage: bench/quant_judge [T [d [BLAS]]] */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "casefile.h"
#include "compare.h"
#include "oracle.h"
#include "quant.h"
#include "rng.h"

static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int blas_level;   /* ac_oracle_opts.blas of both cases */

static double judge_once(const char *path)
{
  ac_err e;
  ac_case c;
  double t0 = cpu_now();
  if (ac_case_read(&c, path, &e)) {
    fprintf(stderr, "bench/quant_judge: %s\n", e.msg);
    exit(3);
  }
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  o.threads = 1;
  o.blas = blas_level;
  ac_oracle_result r;
  if (ac_oracle_run(&c, &o, &r, &e)) {
    fprintf(stderr, "bench/quant_judge: %s\n", e.msg);
    exit(3);
  }
  int64_t n = r.nrows * c.p.dv;
  float *out = malloc((size_t)n * sizeof *out), *lse = malloc((size_t)r.nrows * sizeof *lse);
  for (int64_t x = 0; x < n; x++) memcpy(&out[x], &r.o_round[AC_F32][x], 4);
  for (int64_t x = 0; x < r.nrows; x++) lse[x] = r.rows[x].lse_f32;
  ac_compare_opts co;
  ac_compare_opts_init(&co);
  ac_report rep;
  ac_report_init(&rep, &co);
  if (ac_compare_outputs(&c, &r, out, lse, NULL, &co, &rep, &e)) {
    fprintf(stderr, "bench/quant_judge: %s\n", e.msg);
    exit(3);
  }
  double t = cpu_now() - t0;
  if (rep.n_fail) fprintf(stderr, "bench/quant_judge: the oracle's own output judged bad (%lld)\n", (long long)rep.n_fail);
  free(out);
  free(lse);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  return t;
}

/* The best of n judgements of each file, taken in turn. */
static void best_of(const char *fpath, const char *qpath, int n, double *tf, double *tq)
{
  *tf = *tq = INFINITY;
  for (int i = 0; i < n; i++) {
    double a = judge_once(fpath), b = judge_once(qpath);
    if (a < *tf) *tf = a;
    if (b < *tq) *tq = b;
  }
}

static void make_pair(const ac_qspec *q, int64_t T, int64_t d, const char *qpath, const char *fpath)
{
  ac_case c, f;
  ac_err e;
  ac_case_init(&c);
  c.p.dtype = AC_F32;
  c.p.mask = AC_MASK_CAUSAL;
  c.p.batch = c.p.heads = c.p.kv_heads = 1;
  c.p.tq = c.p.tk = T;
  c.p.dk = c.p.dv = d;
  c.p.scale_is_default = 1;
  c.p.scale = 1 / sqrt((double)d);
  if (ac_case_alloc(&c, &e)) exit(3);
  ac_rng r;
  ac_rng_init(&r, 29, 1);
  for (int64_t i = 0; i < T * d; i++) {
    ((float *)c.q)[i] = (float)ac_rng_normal(&r);
    ((float *)c.k)[i] = (float)ac_rng_normal(&r);
    ((float *)c.v)[i] = (float)ac_rng_normal(&r);
  }
  ac_case_init(&f);
  f.p = c.p;
  if (ac_case_alloc(&f, &e) || ac_quant_apply(&c, 'k', q, &e) || ac_quant_apply(&c, 'v', q, &e)) {
    fprintf(stderr, "bench/quant_judge: %s\n", e.msg);
    exit(3);
  }
  memcpy(f.q, c.q, (size_t)(T * d) * 4);
  for (int64_t i = 0; i < T * d; i++) {
    ((float *)f.k)[i] = (float)((const double *)c.k)[i];
    ((float *)f.v)[i] = (float)((const double *)c.v)[i];
  }
  if (ac_case_write(&c, qpath, &e) || ac_case_write(&f, fpath, &e)) {
    fprintf(stderr, "bench/quant_judge: %s\n", e.msg);
    exit(3);
  }
  ac_case_free(&c);
  ac_case_free(&f);
}

/* The layouts of docs/quantized.md "Layouts": group and tile scales, token groups, scale and zero
 * dtypes, packed codes, after every format at its default granularity. */
static const char *const layouts[] = {
    "int8:group:32",      "int4:group:64:packed=low", "int2:group:32:zero=f32:packed=high",
    "e4m3fn:group:128:scale=bf16", "int8:tile:1x128:scale=f16", "int8:tile:128x128",
    "int4:channel:64:packed=high", "uint8:token:zero=f32",    "mxfp4:packed=low",
};

int main(int argc, char **argv)
{
  int64_t T = argc > 1 ? atoll(argv[1]) : 1024, d = argc > 2 ? atoll(argv[2]) : 128;
  blas_level = argc > 3 ? atoi(argv[3]) : 0;
  if (T < 1 || d < 32 || d % 32 || blas_level < -1 || blas_level > 1) {
    fprintf(stderr, "usage: bench/quant_judge [T [d [BLAS]]] (d a multiple of 32; BLAS -1, 0 or 1)\n");
    return 2;
  }
  char qpath[64], fpath[64];
  snprintf(qpath, sizeof qpath, "/tmp/quant_judge_q_%d.npz", (int)getpid());
  snprintf(fpath, sizeof fpath, "/tmp/quant_judge_f_%d.npz", (int)getpid());
  printf("judging a quantized case (read + oracle + compare, 1 thread) against the same values in binary32\n");
  printf("T=%lld d=%lld causal, process CPU seconds, best of 5, oracle BLAS level %s\n", (long long)T, (long long)d,
         blas_level < 0 ? "off (per-row passes)" : blas_level > 0 ? "forced" : "by size (default)");
  printf("%-36s %10s %10s %8s\n", "format", "f32 s", "quant s", "ratio");
  double worst = 0;
  for (int x = 0; x < AC_QF_N - AC_QF_Q8_0 + (int)(sizeof layouts / sizeof *layouts); x++) {
    const int fmt = AC_QF_Q8_0 + x;
    ac_qspec q;
    ac_err e;
    if (fmt < AC_QF_N) {
      const ac_qfmt_info *fi = ac_qfmt_get(fmt);
      q = (ac_qspec){.fmt = fmt, .gran = (int)fi->gran, .block = fi->gran == AC_QG_BLOCK ? fi->block : 0};
    } else if (ac_qspec_parse(layouts[fmt - AC_QF_N], &q, &e)) {
      fprintf(stderr, "bench/quant_judge: %s\n", e.msg);
      return 3;
    }
    if (fmt >= AC_QF_N && d % (q.block > 0 ? q.block : 1)) continue;
    make_pair(&q, T, d, qpath, fpath);
    double tf, tq;
    best_of(fpath, qpath, 5, &tf, &tq);
    double ratio = tq / tf;
    if (ratio > worst) worst = ratio;
    char name[96];
    printf("%-36s %10.4f %10.4f %8.3f\n", ac_qspec_str(&q, name, sizeof name), tf, tq, ratio);
    fflush(stdout);
  }
  unlink(qpath);
  unlink(fpath);
  printf("largest ratio %.3f (target <= 1.3)\n", worst);
  return 0;
}
