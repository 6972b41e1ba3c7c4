/* runtime.cu: running one CUDA kernel on one case: guarded device buffers, the stream,
 * cudaEvent timing, copies back, guard checks, sticky-error detection. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acmodule.h"

static size_t ac_cuda_esize(int dtype)
{
  switch (dtype) {
  case ATTNCHECK_F64: return 8;
  case ATTNCHECK_F32: return 4;
  case ATTNCHECK_F16: case ATTNCHECK_BF16: return 2;
  case ATTNCHECK_E4M3: case ATTNCHECK_E5M2: return 1;
  default: return 0;
  }
}

/* One device buffer: [guard | span | guard], margins filled with 0xFF bytes. */
typedef struct {
  unsigned char *base;
  size_t span_bytes, guard_bytes;
} ac_dbuf;

static cudaError_t ac_dbuf_alloc(ac_dbuf *b, size_t span_bytes, size_t guard_bytes)
{
  b->base = NULL;
  b->span_bytes = span_bytes;
  b->guard_bytes = guard_bytes;
  cudaError_t e = cudaMalloc((void **)&b->base, span_bytes + 2 * guard_bytes);
  if (e != cudaSuccess) { b->base = NULL; return e; }
  return cudaMemset(b->base, 0xFF, span_bytes + 2 * guard_bytes);
}
static void *ac_dbuf_data(const ac_dbuf *b) { return b->base ? b->base + b->guard_bytes : NULL; }
static void ac_dbuf_free(ac_dbuf *b)
{
  if (b->base) cudaFree(b->base);
  b->base = NULL;
}
/* 1 intact, 0 overwritten, -1 CUDA error (in *ce). */
static int ac_dbuf_guards_intact(const ac_dbuf *b, unsigned char *host, cudaError_t *ce)
{
  if (b->guard_bytes == 0) return 1;
  const unsigned char *pos[2] = { b->base, b->base + b->guard_bytes + b->span_bytes };
  for (int s = 0; s < 2; s++) {
    *ce = cudaMemcpy(host, pos[s], b->guard_bytes, cudaMemcpyDeviceToHost);
    if (*ce != cudaSuccess) return -1;
    for (size_t i = 0; i < b->guard_bytes; i++)
      if (host[i] != 0xFF) return 0;
  }
  return 1;
}

/* After a CUDA error: sticky (the context is unusable) or not. */
static int ac_cuda_is_sticky(void)
{
  (void)cudaGetLastError();
  void *probe = NULL;
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMalloc(&probe, 16);
  if (probe) cudaFree(probe);
  return e != cudaSuccess;
}

static int ac_cuda_fail(cudaError_t e, const char *what, char *err, size_t errn)
{
  int sticky = ac_cuda_is_sticky();
  if (err && errn)
    snprintf(err, errn, "%s: %s (%s)%s", cudaGetErrorName(e), cudaGetErrorString(e), what,
             sticky ? "" : " [not sticky]");
  return sticky ? AC_CUDA_RUN_CRASH : AC_CUDA_RUN_SETUP_ERROR;
}

extern "C" int ac_cudamod_run_case(const ac_cuda_case *c, double *kernel_ms, char *err, size_t errn)
{
  if (kernel_ms) *kernel_ms = 0;
  if (err && errn) err[0] = 0;
  if (!c || !c->p) {
    if (err && errn) snprintf(err, errn, "ac_cuda_run_case: not a CUDA kernel or bad arguments");
    return AC_CUDA_RUN_SETUP_ERROR;
  }
  const attncheck_kernel *k = c->k;
  const attncheck_problem *p = c->p;
  const void *q_span = c->q_span, *k_span = c->k_span, *v_span = c->v_span;
  size_t q_n = c->q_n, k_n = c->k_n, v_n = c->v_n, o_n = c->o_n, lse_n = c->lse_n, guard = c->guard;
  void *o_span = c->o_span;
  float *lse = c->lse;
  int device = c->device;
  size_t es = ac_cuda_esize(p->dtype);
  if (!k || !k->run || k->memory != ATTNCHECK_MEM_CUDA || es == 0 || !q_span || !k_span || !v_span || !o_span) {
    if (err && errn) snprintf(err, errn, "ac_cuda_run_case: not a CUDA kernel or bad arguments");
    return AC_CUDA_RUN_SETUP_ERROR;
  }
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    if (err && errn) snprintf(err, errn, "cudaSetDevice(%d): %s: %s", device, cudaGetErrorName(e), cudaGetErrorString(e));
    return AC_CUDA_RUN_SETUP_ERROR;
  }

  int rc = AC_CUDA_RUN_OK;
  ac_dbuf bq = { 0, 0, 0 }, bk = { 0, 0, 0 }, bv = { 0, 0, 0 }, bo = { 0, 0, 0 }, bl = { 0, 0, 0 };
  cudaStream_t stream = NULL;
  cudaEvent_t ev0 = NULL, ev1 = NULL;
  unsigned char *ghost = NULL;
  const char *stage = "allocating device buffers";
  size_t gmax = guard * (es > sizeof(float) ? es : sizeof(float));

#define AC_TRY(call)                                                                                   \
  do {                                                                                                 \
    e = (call);                                                                                        \
    if (e != cudaSuccess) { rc = ac_cuda_fail(e, stage, err, errn); goto done; }                       \
  } while (0)

  AC_TRY(ac_dbuf_alloc(&bq, q_n * es, guard * es));
  AC_TRY(ac_dbuf_alloc(&bk, k_n * es, guard * es));
  AC_TRY(ac_dbuf_alloc(&bv, v_n * es, guard * es));
  AC_TRY(ac_dbuf_alloc(&bo, o_n * es, guard * es));
  if (lse) AC_TRY(ac_dbuf_alloc(&bl, lse_n * sizeof(float), guard * sizeof(float)));
  stage = "copying inputs to the device";
  AC_TRY(cudaMemcpy(ac_dbuf_data(&bq), q_span, q_n * es, cudaMemcpyHostToDevice));
  AC_TRY(cudaMemcpy(ac_dbuf_data(&bk), k_span, k_n * es, cudaMemcpyHostToDevice));
  AC_TRY(cudaMemcpy(ac_dbuf_data(&bv), v_span, v_n * es, cudaMemcpyHostToDevice));
  AC_TRY(cudaMemcpy(ac_dbuf_data(&bo), o_span, o_n * es, cudaMemcpyHostToDevice));
  if (lse) AC_TRY(cudaMemcpy(ac_dbuf_data(&bl), lse, lse_n * sizeof(float), cudaMemcpyHostToDevice));
  stage = "creating the stream";
  AC_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  AC_TRY(cudaEventCreate(&ev0));
  AC_TRY(cudaEventCreate(&ev1));

  {
    attncheck_tensors t;
    memset(&t, 0, sizeof t);
    t.q = ac_dbuf_data(&bq);
    t.k = ac_dbuf_data(&bk);
    t.v = ac_dbuf_data(&bv);
    t.o = ac_dbuf_data(&bo);
    t.lse = lse ? (float *)ac_dbuf_data(&bl) : NULL;
    t.stream = (void *)stream;
    char kerr[512] = "";
    stage = "running the kernel";
    AC_TRY(cudaEventRecord(ev0, stream));
    int krc = k->run(p, &t, kerr, sizeof kerr);
    cudaError_t le = cudaGetLastError();
    cudaError_t re = cudaEventRecord(ev1, stream);
    cudaError_t se = cudaStreamSynchronize(stream);
    if (le == cudaSuccess) le = re;
    if (le == cudaSuccess) le = se;
    if (le != cudaSuccess) {
      int sticky = ac_cuda_is_sticky();
      if (err && errn)
        snprintf(err, errn, "%s: %s%s%s", cudaGetErrorName(le), cudaGetErrorString(le), kerr[0] ? "; kernel: " : "",
                 kerr);
      rc = sticky ? AC_CUDA_RUN_CRASH : AC_CUDA_RUN_KERNEL_ERROR;
      goto done;
    }
    if (krc != 0) {
      if (err && errn) snprintf(err, errn, "%s", kerr[0] ? kerr : "kernel returned an error without a message");
      rc = AC_CUDA_RUN_KERNEL_ERROR;
      goto done;
    }
    float ms = 0;
    if (kernel_ms && cudaEventElapsedTime(&ms, ev0, ev1) == cudaSuccess) *kernel_ms = ms;
  }

  stage = "copying outputs back";
  AC_TRY(cudaMemcpy(o_span, ac_dbuf_data(&bo), o_n * es, cudaMemcpyDeviceToHost));
  if (lse) AC_TRY(cudaMemcpy(lse, ac_dbuf_data(&bl), lse_n * sizeof(float), cudaMemcpyDeviceToHost));

  stage = "checking guards";
  if (gmax > 0) {
    ghost = (unsigned char *)malloc(gmax);
    if (!ghost) {
      if (err && errn) snprintf(err, errn, "out of host memory");
      rc = AC_CUDA_RUN_SETUP_ERROR;
      goto done;
    }
    const ac_dbuf *bufs[5] = { &bq, &bk, &bv, &bo, lse ? &bl : NULL };
    const char *names[5] = { "q", "k", "v", "o", "lse" };
    for (int i = 0; i < 5; i++) {
      if (!bufs[i]) continue;
      int g = ac_dbuf_guards_intact(bufs[i], ghost, &e);
      if (g < 0) { rc = ac_cuda_fail(e, stage, err, errn); goto done; }
      if (g == 0) {
        if (err && errn) snprintf(err, errn, "device guard margin of %s overwritten", names[i]);
        rc = AC_CUDA_RUN_GUARD;
        break;
      }
    }
  }
#undef AC_TRY

done:
  free(ghost);
  if (rc != AC_CUDA_RUN_CRASH) {
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    if (stream) cudaStreamDestroy(stream);
    ac_dbuf_free(&bq); ac_dbuf_free(&bk); ac_dbuf_free(&bv); ac_dbuf_free(&bo); ac_dbuf_free(&bl);
  }
  return rc;
}
