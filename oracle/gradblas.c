/* gradblas.c: the driver of the backward's matrix-product level (gradblas.h, docs/backward.md §4.4).
 *
 * Tasks are the (batch, head) pairs, taken in order by the workers from an atomic counter; a task
 * runs its query tiles (gradtile.c) in order, deciding dQ as it goes, and leaves its column sums in
 * a part of its own. The parts of a kv head's query heads are merged in head order (a part that
 * finishes early waits for its turn), and when the last one is in, the kv head's dK and dV are
 * decided; dσ_h adds the batches' parts in batch order at the end. Every sum is thus formed in one
 * order whatever the number of threads: the values, bounds and decisions depend on the case only.
 *
 * Closing a column sum (hi, lo) of N rows with its accumulated bound A (non-negative terms added in
 * some order, fewer than 2N roundings: the true sum is at most (A + 2N 2^-1074)(1 + 2γ_2N)):
 * g = fl(hi + lo) errs by at most that plus u|g| (the TwoSum's lo within κ's 2^-60 share,
 * gradtile.c); dK then takes the scale as dQ does. */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gemm.h"
#include "gradblas.h"

#define U 0x1p-53
#define SL (1 + 0x1p-40)

int ac_gr_blas_applies(const ac_problem *p, uint32_t formats)
{
  if (p->dtype == AC_F64 || (formats & (1u << AC_F64)) || ac_problem_quantized(p)) return 0;
  if (p->f.used & ~(uint32_t)(AC_FEAT_WINDOW | AC_FEAT_BOOL_MASK | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_SINKS))
    return 0;
  double c = fabs(ac_problem_scale(p));
  return c == 0 || (c >= 0x1p-500 && c <= 0x1p500);
}

int ac_gb_decide(ac_grad_tensor *T, uint32_t *pend, int64_t e, double v, double err, ac_gb_count *cnt)
{
  if (!pend[e] || !isfinite(v) || !isfinite(err)) return 0;
  /* each end rounded outwards: fl(v -+ e') is beyond v -+ err when e' >= (err + u|v|) / (1 - u) */
  const double e2 = err * (1 + 0x1p-50) + 0x1p-52 * fabs(v) + 0x1p-1074, lo = v - e2, hi = v + e2;
  /* never around 0: the sign of a zero it rounds to (an exact 0 is +0) would be unknown */
  if (!(lo >= 0 || hi < 0)) return 0;
  uint32_t left = pend[e];
  uint64_t bits[AC_NDTYPES];
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!(left & (1u << f))) continue;
    uint64_t a = ac_encode_f64((ac_dtype)f, lo), b = ac_encode_f64((ac_dtype)f, hi);
    if (a != b) return 0;
    bits[f] = a;
  }
  for (int f = 0; f < AC_NDTYPES; f++)
    if (left & (1u << f)) T->bits[f][e] = bits[f];
  T->el[e] = (ac_grad_elem){v, err, AC_HOW_ROUNDED, AC_ACCEPT_VALUE};
  pend[e] = 0;
  cnt->rounded++;
  return 1;
}

void ac_gb_zero(ac_grad_tensor *T, uint32_t *pend, int64_t e, ac_gb_count *cnt)
{
  if (!pend[e]) return;
  T->el[e] = (ac_grad_elem){0.0, 0.0, AC_HOW_EXACT, AC_ACCEPT_VALUE};
  for (int f = 0; f < AC_NDTYPES; f++)
    if (T->bits[f]) T->bits[f][e] = ac_encode_f64((ac_dtype)f, 0.0);
  pend[e] = 0;
  cnt->exact++, cnt->zero++;
}

typedef struct {
  ac_gb_case G;
  int64_t ntask, hpg, nunit;
  atomic_llong next;
  pthread_mutex_t mu;
  uint8_t *need, *cols;       /* per unit: something pending; a pending column */
  ac_gb_part **acc;           /* per unit: the merged parts */
  ac_gb_part **done;          /* per task: finished, waiting for its turn */
  int64_t *merged;            /* per unit: heads merged */
  ac_gb_part *sink;           /* per task: its dσ share */
  ac_gb_count cnt;
  double cpu, cpu_max;        /* the workers' CPU seconds, and the busiest one's */
} gb_job;

static int any(const uint32_t *pend, int64_t e0, int64_t d)
{
  for (int64_t t = 0; t < d; t++)
    if (pend[e0 + t]) return 1;
  return 0;
}

static void part_free(ac_gb_part *P)
{
  if (!P) return;
  free(P->kh); free(P->kl); free(P->ka); free(P->vh); free(P->vl); free(P->va); free(P->nz);
  free(P);
}

/* Closes the column sums of unit u = (b, kvh): decides its pending dK and dV. */
static void close_unit(gb_job *J, int64_t u, const ac_gb_part *A)
{
  const ac_gb_case *G = &J->G;
  const ac_problem *p = &G->c->p;
  ac_grad_result *r = G->r;
  /* the bounds' sums: N rows' products, a tile's product added to what the earlier tiles left (one
   * more rounding per tile) and the heads' parts added: fewer than 2N roundings of non-negative terms */
  const double g2 = SL * (1 + 2 * ac_gemm_gamma(2 * A->rows)), fl = 2 * (double)A->rows * 0x1p-1074;
  const double cd = G->sc.cd, ec = G->sc.ec, ac = fabs(cd) + ec;
  for (int64_t j = 0; j < p->tk; j++) {
    int64_t s = r->dk.slot[u * p->tk + j];
    if (s < 0) continue;
    if (!A->nz[j] || (cd == 0 && ec == 0))   /* a stored scale 0: dK = 0 */
      for (int64_t t = 0; t < p->dk; t++) ac_gb_zero(&r->dk, G->pend[1], s * p->dk + t, &J->cnt);
    if (!A->nz[j]) {   /* every row that sees key j has dO = 0: dS_ij = 0 and P_ij dO_i = 0 */
      for (int64_t t = 0; t < p->dv; t++) ac_gb_zero(&r->dv, G->pend[2], s * p->dv + t, &J->cnt);
      continue;
    }
    for (int64_t t = 0; t < p->dk; t++) {
      int64_t x = j * p->dk + t;
      double g = A->kh[x] + A->kl[x], eg = g2 * (A->ka[x] + fl) + U * fabs(g), v = cd * g;
      ac_gb_decide(&r->dk, G->pend[1], s * p->dk + t, v, SL * (ac * eg + ec * fabs(g) + U * fabs(v)) + 0x1p-1073, &J->cnt);
    }
    for (int64_t t = 0; t < p->dv; t++) {
      int64_t x = j * p->dv + t;
      double g = A->vh[x] + A->vl[x];
      ac_gb_decide(&r->dv, G->pend[2], s * p->dv + t, g, g2 * (A->va[x] + fl) + U * fabs(g), &J->cnt);
    }
  }
}

/* P into the merged parts of its unit (under the lock), in head order. */
static void merge(gb_job *J, int64_t k, ac_gb_part *P)
{
  const ac_problem *p = &J->G.c->p;
  const int64_t u = k / J->hpg, nk = p->tk * p->dk, nv = p->tk * p->dv;
  J->done[k] = P;
  while (J->merged[u] < J->hpg && J->done[u * J->hpg + J->merged[u]]) {
    ac_gb_part *Q = J->done[u * J->hpg + J->merged[u]], *A = J->acc[u];
    J->done[u * J->hpg + J->merged[u]++] = NULL;
    if (!A) {
      J->acc[u] = Q;
      continue;
    }
    A->bad |= Q->bad;
    A->rows += Q->rows;
    if (A->kh && Q->kh) {
      double *dst[2][3] = {{A->kh, A->kl, A->ka}, {A->vh, A->vl, A->va}};
      const double *src[2][3] = {{Q->kh, Q->kl, Q->ka}, {Q->vh, Q->vl, Q->va}};
      for (int x = 0; x < 2; x++) {
        const int64_t n = x ? nv : nk;
        for (int64_t i = 0; i < n; i++) {
          double s = dst[x][0][i] + src[x][0][i], bp = s - dst[x][0][i];
          dst[x][1][i] += ((dst[x][0][i] - (s - bp)) + (src[x][0][i] - bp)) + src[x][1][i];
          dst[x][0][i] = s;
          dst[x][2][i] += src[x][2][i];
        }
      }
      for (int64_t j = 0; j < p->tk; j++) A->nz[j] |= Q->nz[j];
    }
    part_free(Q);
  }
  if (J->merged[u] == J->hpg && J->acc[u]) {
    ac_gb_part *A = J->acc[u];
    if (!A->bad && A->kh) close_unit(J, u, A);
    part_free(A);
    J->acc[u] = NULL;
  }
}

static void task(gb_job *J, ac_gb_ws *w, int64_t k)
{
  const ac_gb_case *G = &J->G;
  const ac_problem *p = &G->c->p;
  const int64_t b = k / p->heads, h = k % p->heads, u = k / J->hpg, kvh = h / J->hpg;
  ac_gb_part *P = ac_xcalloc(1, sizeof *P);
  ac_gb_count cnt = {0, 0, 0};
  const int sinkp = G->r->dsink.nsel && G->pend[3][G->r->dsink.slot[h]];
  const int all = J->cols[u] || sinkp;
  if (J->need[u] && J->cols[u]) {
    P->kh = ac_xcalloc((size_t)(p->tk * p->dk) + 1, sizeof(double));
    P->kl = ac_xcalloc((size_t)(p->tk * p->dk) + 1, sizeof(double));
    P->ka = ac_xcalloc((size_t)(p->tk * p->dk) + 1, sizeof(double));
    P->vh = ac_xcalloc((size_t)(p->tk * p->dv) + 1, sizeof(double));
    P->vl = ac_xcalloc((size_t)(p->tk * p->dv) + 1, sizeof(double));
    P->va = ac_xcalloc((size_t)(p->tk * p->dv) + 1, sizeof(double));
    P->nz = ac_xcalloc((size_t)p->tk + 1, 1);
  }
  if (J->need[u] && ac_gb_load_kv(w, G, b, kvh)) P->bad = 1;
  for (int64_t i0 = 0; J->need[u] && !P->bad && i0 < p->tq; i0 += G->qb) {
    const int64_t i1 = i0 + G->qb < p->tq ? i0 + G->qb : p->tq;
    int want = all;
    for (int64_t i = i0; i < i1 && !want; i++) {
      int64_t s = G->r->dq.slot[(b * p->heads + h) * p->tq + i];
      want = s >= 0 && any(G->pend[0], s * p->dk, p->dk);
    }
    if (want) ac_gb_tile(w, G, b, h, i0, i1, P, &cnt);
  }
  pthread_mutex_lock(&J->mu);
  J->cnt.rounded += cnt.rounded, J->cnt.exact += cnt.exact, J->cnt.zero += cnt.zero;
  J->sink[k] = (ac_gb_part){.sh = P->sh, .sl = P->sl, .se = P->se, .sa = P->sa, .rows = P->rows,
                            .bad = P->bad || !J->need[u] || !all};
  merge(J, k, P);
  pthread_mutex_unlock(&J->mu);
}

static double thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
  gb_job *J = arg;
  double t0 = thread_cpu();
  ac_gb_ws *w = ac_gb_ws_new(&J->G);
  for (;;) {
    long long k = atomic_fetch_add(&J->next, 1);
    if (k >= J->ntask) break;
    task(J, w, (int64_t)k);
  }
  ac_gb_ws_free(w);
  double t = thread_cpu() - t0;
  pthread_mutex_lock(&J->mu);
  J->cpu += t;
  if (t > J->cpu_max) J->cpu_max = t;
  pthread_mutex_unlock(&J->mu);
  return NULL;
}

/* dσ_h: the batches' shares in batch order. */
static void close_sinks(gb_job *J)
{
  const ac_problem *p = &J->G.c->p;
  ac_grad_result *r = J->G.r;
  for (int64_t h = 0; r->dsink.nsel && h < p->heads; h++) {
    int64_t e = r->dsink.slot[h];
    if (e < 0 || !J->G.pend[3][e]) continue;
    double hi = 0, lo = 0, se = 0, sa = 0, rows = 0;
    int bad = 0;
    for (int64_t b = 0; b < p->batch; b++) {
      const ac_gb_part *S = &J->sink[b * p->heads + h];
      double s = hi + S->sh, bp = s - hi;
      lo += ((hi - (s - bp)) + (S->sh - bp)) + S->sl;
      hi = s;
      se += S->se, sa += S->sa, rows += (double)S->rows;
      bad |= S->bad;
    }
    if (bad) continue;
    if (hi == 0 && lo == 0 && se == 0 && sa == 0) {   /* no sink, or dO = 0 on every row of the head */
      ac_gb_zero(&r->dsink, J->G.pend[3], e, &J->cnt);
      continue;
    }
    double g = hi + lo, m = rows + (double)p->batch;
    double err = SL * (se * (1 + 2 * ac_gemm_gamma((int64_t)m)) + (U + 2 * m * m * U * U) * sa) + U * fabs(g) + 0x1p-1073;
    ac_gb_decide(&r->dsink, J->G.pend[3], e, g, err, &J->cnt);
  }
}

void ac_gr_blas_level(const ac_case *c, const void *dout, ac_grad_result *r, uint32_t *const pend[4], int threads)
{
  const ac_problem *p = &c->p;
  gb_job J;
  memset(&J, 0, sizeof J);
  J.G = (ac_gb_case){.c = c, .dout = dout, .r = r, .pend = pend, .qb = 64, .kb = 256};
  ac_or_scale osc;
  ac_err e;
  if (ac_or_scale_init(&osc, p, &e)) return;   /* ac_grad_run checked it already */
  ac_bt_scale_init(&J.G.sc, &osc, p->dk);
  J.hpg = p->heads / p->kv_heads;
  J.nunit = p->batch * p->kv_heads;
  J.ntask = p->batch * p->heads;
  J.need = ac_xcalloc((size_t)J.nunit + 1, 1);
  J.cols = ac_xcalloc((size_t)J.nunit + 1, 1);
  J.acc = ac_xcalloc((size_t)J.nunit + 1, sizeof *J.acc);
  J.done = ac_xcalloc((size_t)J.ntask + 1, sizeof *J.done);
  J.merged = ac_xcalloc((size_t)J.nunit + 1, sizeof *J.merged);
  J.sink = ac_xcalloc((size_t)J.ntask + 1, sizeof *J.sink);
  for (int64_t u = 0; u < J.nunit; u++) {
    for (int64_t j = 0; j < p->tk && !J.cols[u]; j++) {
      int64_t s = r->dk.slot[u * p->tk + j];
      J.cols[u] = s >= 0 && (any(pend[1], s * p->dk, p->dk) || any(pend[2], s * p->dv, p->dv));
    }
    J.need[u] = J.cols[u];
    const int64_t b = u / p->kv_heads, kvh = u % p->kv_heads;
    for (int64_t hh = 0; hh < J.hpg && !J.need[u]; hh++) {
      const int64_t h = kvh * J.hpg + hh;
      J.need[u] = r->dsink.nsel && pend[3][r->dsink.slot[h]];
      for (int64_t i = 0; i < p->tq && !J.need[u]; i++) {
        int64_t s = r->dq.slot[(b * p->heads + h) * p->tq + i];
        J.need[u] = s >= 0 && any(pend[0], s * p->dk, p->dk);
      }
    }
  }
  pthread_mutex_init(&J.mu, NULL);
  atomic_init(&J.next, 0);
  long nth = threads > 1 ? threads : 1, started = 0;
  if (nth > J.ntask) nth = J.ntask > 0 ? J.ntask : 1;
  pthread_t *th = ac_xcalloc((size_t)nth, sizeof *th);
  while (nth > 1 && started < nth - 1 && pthread_create(&th[started], NULL, worker, &J) == 0) started++;
  worker(&J);   /* the caller's thread is a worker too; threads that could not start leave it theirs */
  for (long k = 0; k < started; k++) pthread_join(th[k], NULL);
  free(th);
  close_sinks(&J);
  r->blas_threads = (int)started + 1;
  r->blas_cpu = J.cpu, r->blas_cpu_max = J.cpu_max;
  r->n_rounded += J.cnt.rounded;
  r->n_fast += J.cnt.rounded;
  r->n_blas += J.cnt.rounded + J.cnt.exact;
  r->n_exact += J.cnt.exact;
  r->n_zero += J.cnt.zero;
  pthread_mutex_destroy(&J.mu);
  free(J.need); free(J.cols); free(J.acc); free(J.done); free(J.merged); free(J.sink);
}
