/* bench/oracle_blas.c: the oracle on every row (o correctly rounded into the case dtype, LSE into
 * binary32, every budget term) against the float64 attention a user would write in C on the same
 * BLAS (per batch and head: Q, K, V widened to binary64, S = c Q Kᵀ in one dgemm, the mask as -inf,
 * the softmax row by row with libm's exp, O = P V in one dgemm), in one process, on the same
 * threads, and the old naive binary64 baseline (bench/naive_baseline.h's three passes per row) as
 * a second line. Inputs normal(0, 1) rounded to the dtype, seed 7; B = 1, H heads.
 *
 *   bench/oracle_blas [--reps N] [--per-row] [lines|threads|mem [T]|one T D DTYPE causal|none H]...
 *
 * lines: T = 1024 (H 8), 2048 (H 4), 8192 (H 1) x d = 64, 128 x f32, bf16, f16 x causal, none; per
 * line the medians of N runs (default 3) of process CPU seconds (what a loaded machine does not
 * distort) and wall seconds, their ratios oracle / reference and oracle / naive, and the share of
 * elements the BLAS level left to the per-row levels (fb). threads: T = 2048, d = 128, f32 causal,
 * H 4 on 1 and 2 threads (the reference split over the same threads by heads): wall speedup and
 * the CPU split (CPU of the 2 threads over the busier one's: the speedup on an idle machine). mem:
 * a child process computes every row of T (default 32768), d = 128, f32 causal, H 1 and reports
 * its peak resident set against the inputs and the outputs (the result: elements, roundings,
 * rows). --per-row: the oracle's per-row passes alone (ac_oracle_opts.blas = -1), the path every
 * case took before the BLAS level. No argument: lines, threads, mem. */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "casefile.h"
#include "oracle.h"
#include "rng.h"
#include "gemm.h"

static int per_row;
static double sink;

static double proc_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void make_case(ac_case *c, ac_dtype dt, int64_t T, int64_t d, int64_t H, int causal)
{
  ac_err e;
  ac_case_init(c);
  c->p.dtype = dt;
  c->p.mask = causal ? AC_MASK_CAUSAL : AC_MASK_NONE;
  c->p.batch = 1;
  c->p.heads = c->p.kv_heads = H;
  c->p.tq = c->p.tk = T;
  c->p.dk = c->p.dv = d;
  c->p.scale_is_default = 1;
  c->p.scale = 1.0 / sqrt((double)d);
  if (ac_case_alloc(c, &e)) {
    fprintf(stderr, "bench/oracle_blas: %s\n", e.msg);
    exit(2);
  }
  ac_rng r;
  ac_rng_init(&r, 7, (uint64_t)(T * 1000 + d * 10 + causal));
  void *bufs[3] = {c->q, c->k, c->v};
  for (int b = 0; b < 3; b++)
    for (int64_t x = 0; x < H * T * d; x++) ac_store_bits(dt, bufs[b], (size_t)x, ac_encode_f64(dt, ac_rng_normal(&r)));
}

/* ---- the float64 reference and the naive baseline ---- */

typedef struct {
  const ac_case *c;
  int64_t h0, h1;   /* heads */
  int naive;
  double *Q, *K, *V, *S, *O;
} refjob;

static void widen(const ac_case *c, const void *src, int64_t h, double *dst)
{
  int64_t n = c->p.tq * c->p.dk;
  for (int64_t x = 0; x < n; x++) dst[x] = ac_decode(c->p.dtype, ac_load_bits(c->p.dtype, src, (size_t)(h * n + x)));
}

/* The reference of one head: S = c Q Kᵀ (dgemm), the mask, the softmax, O = P V (dgemm). */
static void ref_head(refjob *J, int64_t h)
{
  const ac_problem *p = &J->c->p;
  int64_t T = p->tq, d = p->dk;
  widen(J->c, J->c->q, h, J->Q);
  widen(J->c, J->c->k, h, J->K);
  widen(J->c, J->c->v, h, J->V);
  ac_gemm(0, 1, T, T, d, J->Q, d, J->K, d, 0, J->S, T);
  double sc = 1 / sqrt((double)d);
  for (int64_t i = 0; i < T; i++) {
    double *s = J->S + i * T, m = -INFINITY, L = 0;
    for (int64_t j = 0; j < T; j++) s[j] = p->mask == AC_MASK_CAUSAL && j > i ? -INFINITY : s[j] * sc;
    for (int64_t j = 0; j < T; j++) m = s[j] > m ? s[j] : m;
    for (int64_t j = 0; j < T; j++) L += s[j] = exp(s[j] - m);
    for (int64_t j = 0; j < T; j++) s[j] /= L;
  }
  ac_gemm(0, 0, T, d, T, J->S, T, J->V, d, 0, J->O, d);
  sink += J->O[0];
}

/* The naive baseline of one head (naive_baseline.h's passes on the widened values): per row the
 * scores as sequential dot products, their maximum, libm's exp, the weighted sum. */
static void naive_head(refjob *J, int64_t h)
{
  const ac_problem *p = &J->c->p;
  int64_t T = p->tq, d = p->dk;
  widen(J->c, J->c->q, h, J->Q);
  widen(J->c, J->c->k, h, J->K);
  widen(J->c, J->c->v, h, J->V);
  double sc = 1 / sqrt((double)d), *s = J->S, *o = J->O;
  for (int64_t i = 0; i < T; i++) {
    int64_t n = ac_visible_count(p, i);
    double m = -INFINITY, L = 0;
    for (int64_t j = 0; j < n; j++) {
      double z = 0;
      for (int64_t t = 0; t < d; t++) z += J->Q[i * d + t] * J->K[j * d + t];
      s[j] = z * sc;
      m = s[j] > m ? s[j] : m;
    }
    for (int64_t j = 0; j < n; j++) L += s[j] = exp(s[j] - m);
    for (int64_t t = 0; t < d; t++) o[t] = 0;
    for (int64_t j = 0; j < n; j++)
      for (int64_t t = 0; t < d; t++) o[t] += s[j] * J->V[j * d + t];
    for (int64_t t = 0; t < d; t++) o[t] /= L;
    sink += o[0];
  }
}

static void *ref_run(void *arg)
{
  refjob *J = arg;
  int64_t T = J->c->p.tq, d = J->c->p.dk;
  J->Q = ac_xmalloc((size_t)(4 * T * d + T * T) * sizeof *J->Q);
  J->K = J->Q + T * d;
  J->V = J->K + T * d;
  J->O = J->V + T * d;
  J->S = J->O + T * d;
  for (int64_t h = J->h0; h < J->h1; h++) (J->naive ? naive_head : ref_head)(J, h);
  free(J->Q);
  return NULL;
}

/* Seconds (process CPU, wall) of the reference (naive = 0) or the naive baseline on every head,
 * the heads split over threads. */
static void ref_time(const ac_case *c, int threads, int naive, double *cpu, double *wall)
{
  int64_t H = c->p.heads;
  refjob J[2];
  pthread_t th[2];
  if (threads > 2) threads = 2;
  double w0 = ac_now(), p0 = proc_now();
  for (int k = 0; k < threads; k++) {
    J[k] = (refjob){.c = c, .h0 = H * k / threads, .h1 = H * (k + 1) / threads, .naive = naive};
    if (threads == 1) ref_run(&J[k]);
    else pthread_create(&th[k], NULL, ref_run, &J[k]);
  }
  for (int k = 0; threads > 1 && k < threads; k++) pthread_join(th[k], NULL);
  *cpu = proc_now() - p0;
  *wall = ac_now() - w0;
}

/* ---- the oracle ---- */

typedef struct { double cpu, wall, fb, cpu_total, cpu_max; } otime;

static otime oracle_time(const ac_case *c, int threads)
{
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  o.threads = threads;
#ifndef AC_BENCH_NO_BLAS_OPT   /* the "before" numbers: built against a tree without the option */
  if (per_row) o.blas = -1;
#endif
  ac_oracle_result r;
  ac_err e;
  double w0 = ac_now(), p0 = proc_now();
  if (ac_oracle_run(c, &o, &r, &e)) {
    fprintf(stderr, "bench/oracle_blas: %s\n", e.msg);
    exit(3);
  }
  int64_t elems = r.rows_done * c->p.dv;
  otime t = {0, 0, elems ? (double)r.n_fallback / (double)elems : 0, r.cpu_seconds, r.cpu_max_thread};
  if (r.n_unresolved) fprintf(stderr, "bench/oracle_blas: %lld unresolved\n", (long long)r.n_unresolved);
  ac_oracle_result_free(&r);
  t.cpu = proc_now() - p0;
  t.wall = ac_now() - w0;
  return t;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *x, int n)
{
  qsort(x, (size_t)n, sizeof *x, cmp_d);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

#define MAXREPS 32
static int reps = 3;

/* One line; returns the CPU ratio oracle / reference, *fb the fallback share. */
static double line(ac_dtype dt, int64_t T, int64_t d, int64_t H, int causal, double *fb)
{
  ac_case c;
  make_case(&c, dt, T, d, H, causal);
  double rc[MAXREPS], rw[MAXREPS], oc[MAXREPS], ow[MAXREPS], nc = 0, nw = 0;
  for (int k = 0; k < reps; k++) {   /* alternating, so that both meet the same load */
    ref_time(&c, 1, 0, &rc[k], &rw[k]);
    otime t = oracle_time(&c, 1);
    oc[k] = t.cpu;
    ow[k] = t.wall;
    *fb = t.fb;
  }
  ref_time(&c, 1, 1, &nc, &nw);   /* the naive baseline: once (it is the slow one) */
  double mrc = median(rc, reps), mrw = median(rw, reps), moc = median(oc, reps), mow = median(ow, reps);
  printf("%5lld %4lld %4s %6s %2lld %9.3f %9.3f %7.2f %9.3f %9.3f %7.2f %9.3f %7.2f %9.2e\n", (long long)T, (long long)d,
         ac_dtype_name(dt), causal ? "causal" : "none", (long long)H, mrc, moc, moc / mrc, mrw, mow, mow / mrw, nc,
         moc / nc, *fb);
  fflush(stdout);
  ac_case_free(&c);
  return moc / mrc;
}

static void lines(void)
{
  static const int64_t Ts[] = {1024, 2048, 8192}, Hs[] = {8, 4, 1}, Ds[] = {64, 128};
  static const ac_dtype dts[] = {AC_F32, AC_BF16, AC_F16};
  printf("oracle (all rows, 1 thread%s) against the float64 BLAS reference and the naive binary64 baseline;\n"
         "medians of %d runs, seconds: cpu = process CPU, wall = wall clock; fb = elements left to the per-row levels\n",
         per_row ? ", per-row passes alone" : "", reps);
  printf("%5s %4s %4s %6s %2s %9s %9s %7s %9s %9s %7s %9s %7s %9s\n", "T", "d", "dt", "mask", "H", "ref-cpu", "orc-cpu",
         "ratio", "ref-wall", "orc-wall", "ratio", "naive-cpu", "/naive", "fb");
  double worst = 0, fbmax = 0;
  for (int ti = 0; ti < 3; ti++)
    for (int di = 0; di < 2; di++)
      for (int ki = 0; ki < 3; ki++)
        for (int causal = 1; causal >= 0; causal--) {
          double fb, r = line(dts[ki], Ts[ti], Ds[di], Hs[ti], causal, &fb);
          worst = r > worst ? r : worst;
          fbmax = fb > fbmax ? fb : fbmax;
        }
  printf("target: oracle <= 2x the float64 BLAS reference on every line (CPU): worst %.2fx %s; fallback <= 0.1%%: "
         "worst %.2e %s\n", worst, worst <= 2 ? "met" : "NOT met", fbmax, fbmax <= 1e-3 ? "met" : "NOT met");
}

static void threads_line(void)
{
  ac_case c;
  make_case(&c, AC_F32, 2048, 128, 4, 1);
  double w1[MAXREPS], w2[MAXREPS], split[MAXREPS], rw1[MAXREPS], rw2[MAXREPS];
  for (int k = 0; k < reps; k++) {
    double cpu;
    ref_time(&c, 1, 0, &cpu, &rw1[k]);
    ref_time(&c, 2, 0, &cpu, &rw2[k]);
    otime a = oracle_time(&c, 1), b = oracle_time(&c, 2);
    w1[k] = a.wall;
    w2[k] = b.wall;
    split[k] = b.cpu_max > 0 ? b.cpu_total / b.cpu_max : 0;
  }
  double sw = median(w1, reps) / median(w2, reps), sc = median(split, reps), rs = median(rw1, reps) / median(rw2, reps);
  printf("threads: T=2048 d=128 f32 causal H=4: oracle wall 1 thread %.3f s, 2 threads %.3f s: speedup %.2fx; CPU split "
         "%.2fx (reference on the same threads: %.2fx); target >= 1.8x: %s\n", median(w1, reps), median(w2, reps), sw,
         sc, rs, sc >= 1.8 ? "met" : "NOT met");
  ac_case_free(&c);
}

/* Peak memory of every row of a T x 128 f32 causal case in a child, against inputs and outputs. */
static void mem_line(int64_t T)
{
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    ac_case c;
    make_case(&c, AC_F32, T, 128, 1, 1);
    otime t = oracle_time(&c, 1);
    printf("mem: T=%lld: oracle %.1f s CPU, fb %.2e\n", (long long)T, t.cpu, t.fb);
    fflush(stdout);
    _exit(0);
  }
  int st;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "bench/oracle_blas: the memory child failed\n");
    return;
  }
  double in = 3.0 * (double)T * 128 * 4, o32 = (double)T * 128 * 4;
  double res = (double)T * 128 * ((double)sizeof(ac_oracle_elem) + 8) + (double)T * (double)sizeof(ac_oracle_row);
  double peak = (double)ru.ru_maxrss * 1024;
  printf("mem: T=%lld d=128 f32 causal, every row: peak RSS %.1f MiB; inputs %.1f MiB, outputs (the result) %.1f MiB: "
         "%.2fx inputs + outputs (target <= 3x: %s); %.2fx inputs + o in f32 (%.1f MiB)\n", (long long)T, peak / 1048576,
         in / 1048576, res / 1048576, peak / (in + res), peak <= 3 * (in + res) ? "met" : "NOT met", peak / (in + o32),
         (in + o32) / 1048576);
}

int main(int argc, char **argv)
{
  int any = 0;
  printf("bench/oracle_blas: %s\n", ac_gemm_backend());
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--reps") && a + 1 < argc) {
      reps = atoi(argv[++a]);
      reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
    } else if (!strcmp(argv[a], "--per-row")) {
      per_row = 1;
    } else if (!strcmp(argv[a], "lines")) {
      lines();
      any = 1;
    } else if (!strcmp(argv[a], "one") && a + 5 < argc) {   /* one line: T d dtype causal|none H */
      ac_dtype dt;
      double fb;
      if (ac_dtype_parse(argv[a + 3], &dt)) return 2;
      line(dt, atoll(argv[a + 1]), atoll(argv[a + 2]), atoll(argv[a + 5]), !strcmp(argv[a + 4], "causal"), &fb);
      a += 5;
      any = 1;
    } else if (!strcmp(argv[a], "threads")) {
      threads_line();
      any = 1;
    } else if (!strcmp(argv[a], "mem")) {
      int64_t T = a + 1 < argc && atoll(argv[a + 1]) > 0 ? atoll(argv[++a]) : 32768;
      mem_line(T);
      any = 1;
    } else {
      fprintf(stderr, "usage: bench/oracle_blas [--reps N] [--per-row] [lines|threads|mem [T]|one T D DTYPE causal|none H]...\n");
      return 2;
    }
  }
  if (!any) {
    lines();
    threads_line();
    mem_line(32768);
  }
  if (sink == 12345) printf("%g\n", sink);
  return 0;
}
