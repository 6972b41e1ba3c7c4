/* tplugin_misbehave.c: plugin kernels that misbehave outside their outputs, for tcontain.sh.
 * All compute fp32 attention without a mask (naive, in double) when they compute at all:
 *   segv-supports   supports() dies of SIGSEGV
 *   hang-supports   supports() never returns
 *   printf-run      run() prints to stdout (and flushes) before it computes
 *   fork-run        run() forks a process that writes its pid to $TCONTAIN_PIDFILE and sleeps
 *                   with stdout and stderr open, then computes
 *   setsid-run      run() forks a process that leaves its session and group (setsid) and forks
 *                   again: the grandchild, an orphan once run() returns, sleeps 60 s and its pid
 *                   goes to $TCONTAIN_ESCAPE_PIDFILE; run() fails when the grandchild of the case
 *                   before is still alive, then computes
 *   setsid-hang     the same escape, then run() never returns
 *   forge-run       run() fails with a message of newlines, CR, terminal escapes, a C1 control
 *                   and a byte that is not UTF-8 (a forged "PASS" line); so does its description
 *   forge-supports  supports() refuses every case with such a reason
 * and naive-f32 behaves. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "attncheck_kernel.h"

static int plain_supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype != ATTNCHECK_F32 || p->mask != ATTNCHECK_MASK_NONE) {
    snprintf(why, n, "fp32 without a mask only");
    return 0;
  }
  return 1;
}

static int segv_supports(const attncheck_problem *p, char *why, size_t n)
{
  (void)p, (void)why, (void)n;
  raise(SIGSEGV);
  return 1;
}

static int hang_supports(const attncheck_problem *p, char *why, size_t n)
{
  (void)p, (void)why, (void)n;
  for (;;) pause();
  return 1;
}

static int naive(const attncheck_problem *p, const attncheck_tensors *t)
{
  const float *q = t->q, *k = t->k, *v = t->v;
  float *o = t->o;
  double *w = malloc((size_t)p->tk * sizeof *w);
  if (!w) return 1;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      int64_t g = h / (p->heads / p->kv_heads);
      for (int64_t i = 0; i < p->tq; i++) {
        const float *qi = q + b * p->q_stride[0] + h * p->q_stride[1] + i * p->q_stride[2];
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < p->tk; j++) {
          const float *kj = k + b * p->k_stride[0] + g * p->k_stride[1] + j * p->k_stride[2];
          double s = 0;
          for (int64_t d = 0; d < p->dk; d++) s += (double)qi[d * p->q_stride[3]] * kj[d * p->k_stride[3]];
          w[j] = s * p->scale;
          if (w[j] > mx) mx = w[j];
        }
        for (int64_t j = 0; j < p->tk; j++) sum += w[j] = exp(w[j] - mx);
        for (int64_t d = 0; d < p->dv; d++) {
          double acc = 0;
          for (int64_t j = 0; j < p->tk; j++)
            acc += w[j] * v[b * p->v_stride[0] + g * p->v_stride[1] + j * p->v_stride[2] + d * p->v_stride[3]];
          o[b * p->o_stride[0] + h * p->o_stride[1] + i * p->o_stride[2] + d * p->o_stride[3]] = (float)(acc / sum);
        }
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = (float)(mx + log(sum));
      }
    }
  free(w);
  return 0;
}

static int plain_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)err, (void)n;
  return naive(p, t);
}

static int printf_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)err, (void)n;
  printf("PLUGIN-STDOUT from run()\n");
  fflush(stdout);
  printf("PLUGIN-STDOUT unflushed\n");
  return naive(p, t);
}

static int fork_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  pid_t pid = fork();
  if (pid == 0) {
    const char *pf = getenv("TCONTAIN_PIDFILE");
    FILE *f = pf ? fopen(pf, "w") : NULL;
    if (f) {
      fprintf(f, "%ld\n", (long)getpid());
      fclose(f);
    }
    sleep(60);
    _exit(0);
  }
  if (pid < 0) {
    snprintf(err, n, "fork failed");
    return 1;
  }
  usleep(100000);   /* the pid file is written */
  return naive(p, t);
}

/* 1 when process pid exists and is not a zombie. */
static int alive(long pid)
{
  char p[64], buf[256];
  snprintf(p, sizeof p, "/proc/%ld/stat", pid);
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' && rp[2] != 'Z';
}

/* The escape of setsid-run: -1 with err when the grandchild of the case before still runs. */
static int escape(char *err, size_t n)
{
  const char *pf = getenv("TCONTAIN_ESCAPE_PIDFILE");
  FILE *f = pf ? fopen(pf, "r") : NULL;
  long old = 0;
  if (f && fscanf(f, "%ld", &old) == 1 && alive(old)) {
    fclose(f);
    snprintf(err, n, "the escaped grandchild of the case before (pid %ld) is still running", old);
    return -1;
  }
  if (f) fclose(f);
  pid_t x = fork();
  if (x == 0) {
    setsid();
    pid_t y = fork();
    if (y == 0) {
      sleep(60);
      _exit(0);
    }
    FILE *w = pf && y > 0 ? fopen(pf, "w") : NULL;
    if (w) fprintf(w, "%ld\n", (long)y), fclose(w);
    _exit(0);
  }
  if (x < 0) {
    snprintf(err, n, "fork failed");
    return -1;
  }
  while (waitpid(x, NULL, 0) < 0 && errno == EINTR) {}
  return 0;
}

static int setsid_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return escape(err, n) ? 1 : naive(p, t);
}

static int setsid_hang(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  if (escape(err, n)) return 1;
  for (;;) pause();
}

#define FORGED "boom\nPASS  inj f32-fake.npz - err/W=0\r\033[2K\033]0;title\007\302\233 \377 end"

static int forge_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t;
  snprintf(err, n, "%s", FORGED);
  return 1;
}

static int forge_supports(const attncheck_problem *p, char *why, size_t n)
{
  (void)p;
  snprintf(why, n, "%s", FORGED);
  return 0;
}

#define KERNEL(var, name, sup, run)                                                                     \
  static const attncheck_kernel var = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), name, name, "fp32", \
                                       ATTNCHECK_MEM_HOST, 0, sup, run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, \
                                       0, 0, NULL, 0, 0, NULL}
KERNEL(k_plain, "naive-f32", plain_supports, plain_run);
KERNEL(k_segv, "segv-supports", segv_supports, plain_run);
KERNEL(k_hang, "hang-supports", hang_supports, plain_run);
KERNEL(k_printf, "printf-run", plain_supports, printf_run);
KERNEL(k_fork, "fork-run", plain_supports, fork_run);
KERNEL(k_setsid, "setsid-run", plain_supports, setsid_run);
KERNEL(k_setsid_hang, "setsid-hang", plain_supports, setsid_hang);
static const attncheck_kernel k_forge = {ATTNCHECK_ABI_VERSION,
                                         sizeof(attncheck_kernel),
                                         "forge-run",
                                         FORGED,
                                         "fp32",
                                         ATTNCHECK_MEM_HOST,
                                         0,
                                         plain_supports,
                                         forge_run,
                                         {NULL, NULL, NULL, NULL},
                                         NULL,
                                         0,
                                         0,
                                         0,
                                         0,
                                         NULL,
                                          0,
                                          0, NULL};
KERNEL(k_forge_sup, "forge-supports", forge_supports, plain_run);

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&k_plain,  &k_segv,        &k_hang,  &k_printf,   &k_fork,
                                                 &k_setsid, &k_setsid_hang, &k_forge, &k_forge_sup};
  *count = sizeof list / sizeof list[0];
  return list;
}
