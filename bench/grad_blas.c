/* bench/grad_blas.c: the backward oracle on every row and column against the float64 forward +
 * backward a user would write with the same BLAS (not run by make check), in one process and on
 * the same threads: per T, the reference, the exact backward (oracle/grad.h, rounding into the case
 * dtype as the judge asks), the oracle with the backward budgets (src/judge/budget_grad.h: what
 * check_grad and check --grad pay besides the kernel), their ratios, the share of elements the
 * matrix-product level left to the older levels, the peak memory of the oracle and budget over the
 * inputs and outputs (a forked child), and the speedup from 1 to 2 threads; then the naive binary64
 * baseline line of bench/grad_naive.h (16 rows, 8 columns, fp32, T = 1024, d = 128) as before.
 * Medians of --reps runs, alternating reference and oracle; 1-thread times are process CPU seconds,
 * 2-thread ones wall seconds (the machine may be shared: run it niced and compare the medians).
 *   bench/grad_blas [--dtype bf16] [--batch 1] [--heads 4] [--kv-heads H] [--d 64] [--mask causal]
 *                   [--t 1024,2048] [--reps 3] [--threads 2] [--no-blas] [--no-naive]
 * The reference: per (batch, head), S = c QK^T over all T x T (masked entries -inf), P = softmax (libm
 * exp), O = PV, dP = dO V^T, D = rowsum(dO∘O), dS = P∘(dP - D), dQ = c dS K, dK = c dS^T Q, dV = P^T dO,
 * every product through ac_gemm, the heads split over the threads; dK and dV summed over a GQA group. */
#include "config.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "budget_grad.h"
#include "dout.h"
#include "gemm.h"
#include "grad_naive.h"

typedef struct {
  const ac_case *c;
  atomic_llong next;
  double sum;
  pthread_mutex_t mu;
} ref_job;

static double wall_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One (batch, head) of the reference: returns a checksum. */
static double ref_head(const ac_case *c, int64_t b, int64_t h, double *buf)
{
  const ac_problem *p = &c->p;
  const int64_t T = p->tq, Tk = p->tk, dk = p->dk, dv = p->dv, kvh = h / (p->heads / p->kv_heads);
  double *Q = buf, *K = Q + T * dk, *V = K + Tk * dk, *dO = V + Tk * dv, *O = dO + T * dv, *dQ = O + T * dv;
  double *dK = dQ + T * dk, *dV = dK + Tk * dk, *S = dV + Tk * dv, *dP = S + T * Tk, *D = dP + T * Tk;
  const double sc = ac_problem_scale(p);
  for (int64_t i = 0; i < T; i++) {
    for (int64_t t = 0; t < dk; t++) Q[i * dk + t] = ac_load(p->dtype, c->q, ac_qidx(p, b, h, i, t));
    for (int64_t t = 0; t < dv; t++) dO[i * dv + t] = ac_load(p->dtype, c->dout, ac_oidx(p, b, h, i, t));
  }
  for (int64_t j = 0; j < Tk; j++) {
    for (int64_t t = 0; t < dk; t++) K[j * dk + t] = ac_load(p->dtype, c->k, ac_kidx(p, b, kvh, j, t));
    for (int64_t t = 0; t < dv; t++) V[j * dv + t] = ac_load(p->dtype, c->v, ac_vidx(p, b, kvh, j, t));
  }
  ac_gemm(0, 1, T, Tk, dk, Q, dk, K, dk, 0, S, Tk);
  for (int64_t i = 0; i < T; i++) {
    double *s = S + i * Tk, m = -INFINITY, l = 0;
    for (int64_t j = 0; j < Tk; j++) {
      s[j] = ac_visible(p, i, j) ? sc * s[j] : -INFINITY;
      if (s[j] > m) m = s[j];
    }
    for (int64_t j = 0; j < Tk; j++) l += s[j] = exp(s[j] - m);
    for (int64_t j = 0; j < Tk; j++) s[j] /= l;
  }
  ac_gemm(0, 0, T, dv, Tk, S, Tk, V, dv, 0, O, dv);
  ac_gemm(0, 1, T, Tk, dv, dO, dv, V, dv, 0, dP, Tk);
  for (int64_t i = 0; i < T; i++) {
    D[i] = 0;
    for (int64_t t = 0; t < dv; t++) D[i] += dO[i * dv + t] * O[i * dv + t];
    for (int64_t j = 0; j < Tk; j++) dP[i * Tk + j] = S[i * Tk + j] * (dP[i * Tk + j] - D[i]) * sc;
  }
  ac_gemm(0, 0, T, dk, Tk, dP, Tk, K, dk, 0, dQ, dk);
  ac_gemm(1, 0, Tk, dk, T, dP, Tk, Q, dk, 0, dK, dk);
  ac_gemm(1, 0, Tk, dv, T, S, Tk, dO, dv, 0, dV, dv);
  return dQ[0] + dK[dk * (Tk - 1)] + dV[0] + O[T * dv - 1];
}

static void *ref_worker(void *arg)
{
  ref_job *J = arg;
  const ac_problem *p = &J->c->p;
  const int64_t T = p->tq, Tk = p->tk, n = T * (p->dk + 3 * p->dv) + 2 * Tk * (p->dk + p->dv) + 2 * T * Tk + T;
  double *buf = malloc((size_t)n * sizeof *buf), s = 0;
  for (;;) {
    long long k = atomic_fetch_add(&J->next, 1);
    if (k >= p->batch * p->heads) break;
    s += ref_head(J->c, k / p->heads, k % p->heads, buf);
  }
  free(buf);
  pthread_mutex_lock(&J->mu);
  J->sum += s;
  pthread_mutex_unlock(&J->mu);
  return NULL;
}

/* The reference on nth threads: wall seconds (1 thread: process CPU seconds). */
static double ref_run(const ac_case *c, int nth)
{
  ref_job J = {.c = c, .sum = 0};
  atomic_init(&J.next, 0);
  pthread_mutex_init(&J.mu, NULL);
  double t0 = nth > 1 ? wall_now() : gn_proc_now();
  pthread_t th[16];
  for (int k = 1; k < nth; k++) pthread_create(&th[k], NULL, ref_worker, &J);
  ref_worker(&J);
  for (int k = 1; k < nth; k++) pthread_join(th[k], NULL);
  double t = (nth > 1 ? wall_now() : gn_proc_now()) - t0;
  pthread_mutex_destroy(&J.mu);
  if (!isfinite(J.sum)) fprintf(stderr, "bench: the reference is not finite\n");
  return t;
}

typedef struct {
  int64_t elems, blas, exact, unresolved, fast;
  int passes;
  double cpu, cpu_max;   /* the matrix-product level's and the budgets' workers: CPU s in total, the busiest one's */
} or_stats;

/* The oracle (and with budget, the backward budgets of the dtype's class) on nth threads. */
static double oracle_run(const ac_case *c, int nth, int budget, int no_blas, or_stats *st)
{
  ac_grad_opts o;
  ac_grad_opts_init(&o);
  o.formats = 0;   /* the case dtype alone, as the judge asks */
  o.threads = nth;
  o.no_blas = no_blas;
  ac_grad_result r;
  ac_err e;
  double t0 = nth > 1 ? wall_now() : gn_proc_now();
  if (ac_grad_run(c, c->dout, &o, &r, &e)) {
    fprintf(stderr, "bench: %s\n", e.msg);
    exit(3);
  }
  double bcpu = 0, bmax = 0;
  if (budget) {
    const ac_precision *cls;
    ac_grad_budget bg;
    if (ac_precision_resolve(NULL, NULL, c->p.dtype, &cls, &e) ||
        ac_grad_budget_compute_threads(cls, c, AC_ALIBI_LSE_ABI, nth, &bg, &e)) {
      fprintf(stderr, "bench: %s\n", e.msg);
      exit(3);
    }
    bcpu = bg.cpu, bmax = bg.cpu_max;
    ac_grad_budget_free(&bg);
  }
  double t = (nth > 1 ? wall_now() : gn_proc_now()) - t0;
  if (st) {
    st->elems = (r.dq.nsel + r.dk.nsel) * c->p.dk + r.dv.nsel * c->p.dv + r.dsink.nsel;
    st->blas = r.n_blas, st->exact = r.n_exact, st->unresolved = r.n_unresolved;
    st->fast = r.n_fast - r.n_blas, st->passes = r.passes;
    st->cpu = r.blas_cpu + bcpu, st->cpu_max = r.blas_cpu_max + bmax;
  }
  ac_grad_result_free(&r);
  return t;
}

static long rss_kb(void)
{
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f && fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
  if (f) fclose(f);
  return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Peak memory of the oracle and budget above the process before them, in a forked child (MB). */
static double peak_mb(const ac_case *c, int no_blas)
{
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    long before = rss_kb();
    oracle_run(c, 1, 1, no_blas, NULL);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mb = (double)(ru.ru_maxrss - before) / 1024;
    if (write(fd[1], &mb, sizeof mb) != sizeof mb) _exit(1);
    _exit(0);
  }
  double mb = -1;
  close(fd[1]);
  if (read(fd[0], &mb, sizeof mb) != sizeof mb) mb = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return mb;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void make_case(ac_case *c, ac_dtype dt, int64_t B, int64_t H, int64_t KVH, int64_t T, int64_t d, ac_mask m)
{
  ac_err e;
  ac_case_init(c);
  c->p.dtype = dt, c->p.mask = m;
  c->p.batch = B, c->p.heads = H, c->p.kv_heads = KVH;
  c->p.tq = c->p.tk = T, c->p.dk = c->p.dv = d;
  c->p.scale_is_default = 1;
  c->p.scale = ac_problem_scale(&c->p);
  if (ac_case_alloc(c, &e)) {
    fprintf(stderr, "bench: %s\n", e.msg);
    exit(2);
  }
  ac_rng r;
  ac_rng_init(&r, 7, 0x67726164);
  ac_counts n;
  ac_problem_counts(&c->p, &n, &e);
  void *bufs[3] = {c->q, c->k, c->v};
  int64_t cnt[3] = {n.q, n.k, n.v};
  for (int b = 0; b < 3; b++)
    for (int64_t x = 0; x < cnt[b]; x++) ac_store_bits(dt, bufs[b], (size_t)x, ac_encode_f64(dt, ac_rng_normal(&r)));
  if (ac_dout_generate(c, "normal", 7, &e)) {
    fprintf(stderr, "bench: %s\n", e.msg);
    exit(2);
  }
}

int main(int argc, char **argv)
{
  ac_dtype dt = AC_BF16;
  int64_t B = 1, H = 4, KVH = 0, d = 64, Ts[8] = {1024, 2048}, nT = 2;
  ac_mask mask = AC_MASK_CAUSAL;
  int reps = 3, nth = 2, no_blas = 0, naive = 1;
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : "";
    if (!strcmp(argv[a], "--dtype") && ac_dtype_parse(v, &dt) == 0) a++;
    else if (!strcmp(argv[a], "--batch")) B = atoll(v), a++;
    else if (!strcmp(argv[a], "--heads")) H = atoll(v), a++;
    else if (!strcmp(argv[a], "--kv-heads")) KVH = atoll(v), a++;
    else if (!strcmp(argv[a], "--d")) d = atoll(v), a++;
    else if (!strcmp(argv[a], "--mask") && ac_mask_parse(v, &mask) == 0) a++;
    else if (!strcmp(argv[a], "--reps")) reps = atoi(v), a++;
    else if (!strcmp(argv[a], "--threads")) nth = atoi(v), a++;
    else if (!strcmp(argv[a], "--no-blas")) no_blas = 1;
    else if (!strcmp(argv[a], "--no-naive")) naive = 0;
    else if (!strcmp(argv[a], "--t")) {
      nT = 0;
      for (char *s = argv[++a]; *s && nT < 8; s += *s == ',') Ts[nT++] = strtoll(s, &s, 10);
    } else {
      fprintf(stderr, "usage: bench/grad_blas [--dtype T] [--batch B] [--heads H] [--kv-heads K] [--d D] [--mask M]\n"
                      "                       [--t T1,T2] [--reps N] [--threads N] [--no-blas] [--no-naive]\n");
      return 2;
    }
  }
  if (!KVH) KVH = H;
  if (reps < 1 || nth < 1 || nth > 16 || B < 1 || H < 1 || KVH < 1 || H % KVH || d < 1) return 2;
  printf("backward oracle, all rows and columns, into the case dtype%s; BLAS: %s\n", no_blas ? " (no matrix-product level)" : "",
         ac_gemm_backend());
  for (int ti = 0; ti < nT; ti++) {
    ac_case c;
    make_case(&c, dt, B, H, KVH, Ts[ti], d, mask);
    double mem = peak_mb(&c, no_blas);
    double io = (double)(4 * B * H * Ts[ti] * d) * (double)ac_dtype_size(dt) / 1048576 * (1 + (double)KVH / (double)H);
    double tr[32], to[32], tb[32], r2[32], o2[32], ratio[32], ratiob[32], sp[32], spc[32], spb[32];
    or_stats st, s1, sn;
    for (int k = 0; k < reps && k < 32; k++) {
      tr[k] = ref_run(&c, 1);
      to[k] = oracle_run(&c, 1, 0, no_blas, &st);
      tb[k] = oracle_run(&c, 1, 1, no_blas, NULL);
      ratio[k] = to[k] / tr[k], ratiob[k] = tb[k] / tr[k];
      r2[k] = ref_run(&c, nth);
      double w1 = wall_now();
      oracle_run(&c, 1, 1, no_blas, &s1);
      w1 = wall_now() - w1;
      o2[k] = oracle_run(&c, nth, 1, no_blas, &sn);
      sp[k] = w1 / o2[k];
      spc[k] = s1.cpu / sn.cpu_max;   /* with a core per worker: the busiest one sets the time */
      spb[k] = sn.cpu / s1.cpu;
    }
    int n = reps < 32 ? reps : 32;
    printf("%s B%lld H%lld/%lld T=%lld d=%lld %s (%d runs, medians):\n", ac_dtype_name(dt), (long long)B, (long long)H,
           (long long)KVH, (long long)Ts[ti], (long long)d, ac_mask_name(mask), n);
    printf("  float64 forward + backward (C, same BLAS), 1 thread: %8.3f s\n", median(tr, n));
    printf("  exact backward oracle, 1 thread:                    %8.3f s  ratio %.2fx\n", median(to, n), median(ratio, n));
    printf("  oracle + backward budgets, 1 thread:                %8.3f s  ratio %.2fx\n", median(tb, n), median(ratiob, n));
    printf("  %lld elements: %lld decided by matrix products, %lld left to the older levels (%.4f%%): %lld of them decided "
           "by the extended pass, %d MPFR passes run; %lld exact in all, %lld unresolved\n",
           (long long)st.elems, (long long)st.blas, (long long)(st.elems - st.blas),
           100.0 * (double)(st.elems - st.blas) / (double)st.elems, (long long)st.fast, st.passes, (long long)st.exact,
           (long long)st.unresolved);
    printf("  %d threads, oracle + budgets: wall speedup %.2fx (reference %.3f s, oracle + budgets %.3f s, wall);\n"
           "    CPU of the busiest worker against 1 thread's: %.2fx (CPU in all: %.2fx of 1 thread's)\n",
           nth, median(sp, n), median(r2, n), median(o2, n), median(spc, n), median(spb, n));
    const double el = (double)st.elems / 1048576;
    printf("  peak memory of oracle + budgets: %.1f MB over inputs and outputs (q, k, v, dO, dq, dk, dv) of %.1f MB: %.2fx;\n"
           "    of it the exact result (%zu + 8 bytes per element) %.1f MB, the budgets W and E %.1f MB\n",
           mem, io, mem / io, sizeof(ac_grad_elem), el * (double)(sizeof(ac_grad_elem) + 8), el * 16);
    fflush(stdout);
    ac_case_free(&c);
  }
  if (naive) {
    ac_case c;
    float *dO;
    gn_make_case(&c, &dO, 1024, 128, AC_MASK_CAUSAL);
    gn_line(&c, dO, 16, 8, 0, "");
    free(dO);
    ac_case_free(&c);
  }
  return 0;
}
