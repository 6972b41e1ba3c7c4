/* cudnn_graph.cu: cuDNN's fused flash attention, reached through the backend (graph) API.
 * cuDNN 9 has no single forward-attention operation in its composite path: its fused engine
 * is selected for this graph of backend operations (the decomposition NVIDIA's cudnn-frontend
 * lowers an SDPA node to):
 *   S  = MATMUL(Q [b,h,sq,d], Kᵀ [b,hk,d,skv])                 fp32, virtual
 *   S  = POINTWISE MUL(S, scale)                               scale passed by value
 *   causal: r = GEN_INDEX(S, axis 2) [+ skv - sq for bottom-right], c = GEN_INDEX(S, axis 3),
 *           S = BINARY_SELECT(S, lowest float, CMP_GE(r, c))
 *   M  = REDUCTION MAX(S) [b,h,sq,1]; E = EXP(S - M); L = REDUCTION ADD(E)
 *   LSE = ADD(M, LOG(L))                                       the stats output, fp32
 *   P  = DIV(E, L)                                             in the input dtype
 *   O  = MATMUL(P, V)
 * The heuristics (mode A, then fallback) rank engine configurations; the first one that
 * finalizes into an execution plan runs the case. The last plan is cached by shape. */
#include <cudnn.h>
#include <vector>
#include <string.h>
#include "common.cuh"
#include "cudnn_graph.h"

#define AC_DNN_MAXD 128

enum {
  UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_LOWEST, UID_SKV, UID_SQ,
  UID_VIRTUAL = 100
};

namespace {

struct ac_dnn_err {
  char *msg;
  size_t n;
};

/* Every descriptor of one graph and its plan; destroyed together. */
struct ac_dnn_graph {
  std::vector<cudnnBackendDescriptor_t> descs;
  cudnnBackendDescriptor_t plan = NULL;
  int64_t workspace = 0;
  int64_t next_uid = UID_VIRTUAL;
  int64_t key[32];
  int nkey = 0;

  ~ac_dnn_graph()
  {
    for (size_t i = descs.size(); i-- > 0;) cudnnBackendDestroyDescriptor(descs[i]);
  }
};

struct ac_dnn_fail {};

static void ac_dnn_check(cudnnStatus_t st, const char *what, ac_dnn_err *e)
{
  if (st == CUDNN_STATUS_SUCCESS) return;
  char last[256] = "";
  cudnnGetLastErrorString(last, sizeof last);
  snprintf(e->msg, e->n, "%s: %s%s%s", what, cudnnGetErrorString(st), last[0] ? ": " : "", last);
  throw ac_dnn_fail();
}

static cudnnBackendDescriptor_t ac_dnn_new(ac_dnn_graph *g, cudnnBackendDescriptorType_t type, ac_dnn_err *e)
{
  cudnnBackendDescriptor_t d = NULL;
  ac_dnn_check(cudnnBackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor", e);
  g->descs.push_back(d);
  return d;
}

static void ac_dnn_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                       int64_t count, const void *val, const char *what, ac_dnn_err *e)
{
  ac_dnn_check(cudnnBackendSetAttribute(d, name, type, count, val), what, e);
}

static void ac_dnn_finalize(cudnnBackendDescriptor_t d, const char *what, ac_dnn_err *e)
{
  ac_dnn_check(cudnnBackendFinalize(d), what, e);
}

/* A tensor descriptor: uid 0 allocates a virtual uid. */
static cudnnBackendDescriptor_t ac_dnn_tensor(ac_dnn_graph *g, int64_t uid, cudnnDataType_t dt, const int64_t dim[4],
                                              const int64_t stride[4], bool is_virtual, bool by_value, ac_dnn_err *e)
{
  cudnnBackendDescriptor_t t = ac_dnn_new(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR, e);
  if (uid == 0) uid = g->next_uid++;
  int64_t align = 16;
  ac_dnn_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, "tensor data type", e);
  ac_dnn_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim, "tensor dimensions", e);
  ac_dnn_set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, stride, "tensor strides", e);
  ac_dnn_set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor uid", e);
  ac_dnn_set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, "tensor alignment", e);
  ac_dnn_set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, "tensor virtual", e);
  if (by_value) ac_dnn_set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, "tensor by value", e);
  ac_dnn_finalize(t, "tensor finalize", e);
  return t;
}

static cudnnBackendDescriptor_t ac_dnn_scalar(ac_dnn_graph *g, int64_t uid, cudnnDataType_t dt, ac_dnn_err *e)
{
  static const int64_t one[4] = { 1, 1, 1, 1 };
  return ac_dnn_tensor(g, uid, dt, one, one, false, true, e);
}

/* One pointwise operation y = mode(x [, b [, t]]) with the given math precision. */
static cudnnBackendDescriptor_t ac_dnn_pointwise(ac_dnn_graph *g, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                                                 int64_t axis, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                                                 cudnnBackendDescriptor_t tt, cudnnBackendDescriptor_t y,
                                                 ac_dnn_err *e)
{
  cudnnBackendDescriptor_t pw = ac_dnn_new(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, e);
  ac_dnn_set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode", e);
  ac_dnn_set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, "pointwise precision", e);
  if (axis >= 0) ac_dnn_set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, "pointwise axis", e);
  ac_dnn_finalize(pw, "pointwise descriptor finalize", e);
  cudnnBackendDescriptor_t op = ac_dnn_new(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, "pointwise op", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, "pointwise x", e);
  if (b) ac_dnn_set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, "pointwise b", e);
  if (tt) ac_dnn_set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tt, "pointwise t", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "pointwise y", e);
  ac_dnn_finalize(op, "pointwise operation finalize", e);
  return op;
}

static cudnnBackendDescriptor_t ac_dnn_reduction(ac_dnn_graph *g, cudnnReduceTensorOp_t mode,
                                                 cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y, ac_dnn_err *e)
{
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t rd = ac_dnn_new(g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, e);
  ac_dnn_set(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, "reduction mode", e);
  ac_dnn_set(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &prec, "reduction precision", e);
  ac_dnn_finalize(rd, "reduction descriptor finalize", e);
  cudnnBackendDescriptor_t op = ac_dnn_new(g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, "reduction op", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, "reduction x", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "reduction y", e);
  ac_dnn_finalize(op, "reduction operation finalize", e);
  return op;
}

static cudnnBackendDescriptor_t ac_dnn_matmul(ac_dnn_graph *g, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                                              cudnnBackendDescriptor_t c, ac_dnn_err *e)
{
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t md = ac_dnn_new(g, CUDNN_BACKEND_MATMUL_DESCRIPTOR, e);
  ac_dnn_set(md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &prec, "matmul precision", e);
  ac_dnn_finalize(md, "matmul descriptor finalize", e);
  cudnnBackendDescriptor_t op = ac_dnn_new(g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, "matmul a", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, "matmul b", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, "matmul c", e);
  ac_dnn_set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &md, "matmul op", e);
  ac_dnn_finalize(op, "matmul operation finalize", e);
  return op;
}

/* Builds the graph for one problem (Q, K, V, O strides as given, d stride 1) and its plan. */
static void ac_dnn_build(ac_dnn_graph *g, cudnnHandle_t handle, const attncheck_problem *p, const int64_t qs[4],
                         const int64_t ks[4], const int64_t vs[4], const int64_t os[4], ac_dnn_err *e)
{
  const cudnnDataType_t io = p->dtype == ATTNCHECK_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, bl = CUDNN_DATA_BOOLEAN;
  const int64_t B = p->batch, H = p->heads, KVH = p->kv_heads, sq = p->tq, skv = p->tk, dk = p->dk, dv = p->dv;

  const int64_t qdim[4] = { B, H, sq, dk };
  const int64_t ktdim[4] = { B, KVH, dk, skv }, ktstr[4] = { ks[0], ks[1], ks[3], ks[2] };
  const int64_t vdim[4] = { B, KVH, skv, dv };
  const int64_t odim[4] = { B, H, sq, dv };
  const int64_t sdim[4] = { B, H, sq, skv }, sstr[4] = { H * sq * skv, sq * skv, skv, 1 };
  const int64_t rdim[4] = { B, H, sq, 1 }, rstr[4] = { H * sq, sq, 1, 1 };

  cudnnBackendDescriptor_t tq_ = ac_dnn_tensor(g, UID_Q, io, qdim, qs, false, false, e);
  cudnnBackendDescriptor_t tk_ = ac_dnn_tensor(g, UID_K, io, ktdim, ktstr, false, false, e);
  cudnnBackendDescriptor_t tv_ = ac_dnn_tensor(g, UID_V, io, vdim, vs, false, false, e);
  cudnnBackendDescriptor_t to_ = ac_dnn_tensor(g, UID_O, io, odim, os, false, false, e);
  cudnnBackendDescriptor_t tstats = ac_dnn_tensor(g, UID_STATS, f32, rdim, rstr, false, false, e);
  cudnnBackendDescriptor_t tscale = ac_dnn_scalar(g, UID_SCALE, f32, e);

  std::vector<cudnnBackendDescriptor_t> ops;
  cudnnBackendDescriptor_t s1 = ac_dnn_tensor(g, 0, f32, sdim, sstr, true, false, e);
  ops.push_back(ac_dnn_matmul(g, tq_, tk_, s1, e));
  cudnnBackendDescriptor_t s2 = ac_dnn_tensor(g, 0, f32, sdim, sstr, true, false, e);
  ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_MUL, f32, -1, s1, tscale, NULL, s2, e));
  cudnnBackendDescriptor_t s = s2;

  if (p->mask != ATTNCHECK_MASK_NONE) {
    cudnnBackendDescriptor_t row = ac_dnn_tensor(g, 0, i32, sdim, sstr, true, false, e);
    ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_GEN_INDEX, i32, 2, s, NULL, NULL, row, e));
    if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) {
      cudnnBackendDescriptor_t tskv = ac_dnn_scalar(g, UID_SKV, i32, e);
      cudnnBackendDescriptor_t tsq = ac_dnn_scalar(g, UID_SQ, i32, e);
      cudnnBackendDescriptor_t row2 = ac_dnn_tensor(g, 0, i32, sdim, sstr, true, false, e);
      ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_ADD, i32, -1, row, tskv, NULL, row2, e));
      cudnnBackendDescriptor_t row3 = ac_dnn_tensor(g, 0, i32, sdim, sstr, true, false, e);
      ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_SUB, i32, -1, row2, tsq, NULL, row3, e));
      row = row3;
    }
    cudnnBackendDescriptor_t col = ac_dnn_tensor(g, 0, i32, sdim, sstr, true, false, e);
    ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_GEN_INDEX, i32, 3, s, NULL, NULL, col, e));
    cudnnBackendDescriptor_t keep = ac_dnn_tensor(g, 0, bl, sdim, sstr, true, false, e);
    ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_CMP_GE, bl, -1, row, col, NULL, keep, e));
    cudnnBackendDescriptor_t tlow = ac_dnn_scalar(g, UID_LOWEST, f32, e);
    cudnnBackendDescriptor_t s3 = ac_dnn_tensor(g, 0, f32, sdim, sstr, true, false, e);
    ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_BINARY_SELECT, f32, -1, s, tlow, keep, s3, e));
    s = s3;
  }

  cudnnBackendDescriptor_t mx = ac_dnn_tensor(g, 0, f32, rdim, rstr, true, false, e);
  ops.push_back(ac_dnn_reduction(g, CUDNN_REDUCE_TENSOR_MAX, s, mx, e));
  cudnnBackendDescriptor_t sub = ac_dnn_tensor(g, 0, f32, sdim, sstr, true, false, e);
  ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_SUB, f32, -1, s, mx, NULL, sub, e));
  cudnnBackendDescriptor_t ex = ac_dnn_tensor(g, 0, f32, sdim, sstr, true, false, e);
  ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_EXP, f32, -1, sub, NULL, NULL, ex, e));
  cudnnBackendDescriptor_t sum = ac_dnn_tensor(g, 0, f32, rdim, rstr, true, false, e);
  ops.push_back(ac_dnn_reduction(g, CUDNN_REDUCE_TENSOR_ADD, ex, sum, e));
  cudnnBackendDescriptor_t lg = ac_dnn_tensor(g, 0, f32, rdim, rstr, true, false, e);
  ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_LOG, f32, -1, sum, NULL, NULL, lg, e));
  ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_ADD, f32, -1, mx, lg, NULL, tstats, e));
  cudnnBackendDescriptor_t pr = ac_dnn_tensor(g, 0, io, sdim, sstr, true, false, e);
  ops.push_back(ac_dnn_pointwise(g, CUDNN_POINTWISE_DIV, f32, -1, ex, sum, NULL, pr, e));
  ops.push_back(ac_dnn_matmul(g, pr, tv_, to_, e));

  cudnnBackendDescriptor_t graph = ac_dnn_new(g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, e);
  ac_dnn_set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, (int64_t)ops.size(), ops.data(),
             "graph operations", e);
  ac_dnn_set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "graph handle", e);
  ac_dnn_finalize(graph, "operation graph finalize", e);

  const cudnnBackendHeurMode_t modes[2] = { CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK };
  char first_err[512] = "";
  for (int mi = 0; mi < 2 && !g->plan; mi++) {
    cudnnBackendDescriptor_t heur = ac_dnn_new(g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, e);
    ac_dnn_set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, "heur graph", e);
    ac_dnn_set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[mi], "heur mode", e);
    if (cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS) continue;
    int64_t count = 0;
    if (cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL) !=
            CUDNN_STATUS_SUCCESS ||
        count <= 0)
      continue;
    std::vector<cudnnBackendDescriptor_t> cfgs((size_t)count);
    for (int64_t c = 0; c < count; c++) cfgs[(size_t)c] = ac_dnn_new(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, e);
    int64_t got = 0;
    ac_dnn_check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                          &got, cfgs.data()),
                 "heuristics results", e);
    for (int64_t c = 0; c < got && !g->plan; c++) {
      cudnnBackendDescriptor_t plan = ac_dnn_new(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, e);
      ac_dnn_set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "plan handle", e);
      ac_dnn_set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[(size_t)c],
                 "plan engine config", e);
      cudnnStatus_t st = cudnnBackendFinalize(plan);
      if (st != CUDNN_STATUS_SUCCESS) {
        if (!first_err[0]) {
          char last[256] = "";
          cudnnGetLastErrorString(last, sizeof last);
          snprintf(first_err, sizeof first_err, "%s%s%s", cudnnGetErrorString(st), last[0] ? ": " : "", last);
        }
        continue;
      }
      int64_t ws = 0, wn = 0;
      ac_dnn_check(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &wn,
                                            &ws),
                   "plan workspace size", e);
      g->plan = plan;
      g->workspace = ws;
    }
  }
  if (!g->plan) {
    snprintf(e->msg, e->n, "cuDNN found no execution plan for this attention graph on this GPU%s%s",
             first_err[0] ? ": " : "", first_err);
    throw ac_dnn_fail();
  }
}

static cudnnHandle_t ac_dnn_handle(ac_dnn_err *e)
{
  static cudnnHandle_t h = NULL;
  static int dev = -1;
  int cur = 0;
  cudaGetDevice(&cur);
  if (h && dev != cur) { cudnnDestroy(h); h = NULL; }
  if (!h) {
    ac_dnn_check(cudnnCreate(&h), "cudnnCreate", e);
    dev = cur;
  }
  return h;
}

static ac_dnn_graph *ac_dnn_cached = NULL;

/* Direct use needs unit d stride, 16-byte aligned rows and base. */
static bool ac_dnn_direct(const void *ptr, const int64_t s[4])
{
  return s[3] == 1 && s[0] % 8 == 0 && s[1] % 8 == 0 && s[2] % 8 == 0 && ((uintptr_t)ptr % 16) == 0;
}

} /* namespace */

int ac_cudnn_sdpa_supports(const attncheck_problem *p, int dtype, const char *dname, char *why, size_t n)
{
  if (!ac_cu_supports_common(p, dtype, dname, AC_DNN_MAXD, why, n)) return 0;
  if (p->dk % 8 != 0 || p->dv % 8 != 0) return ac_cu_why(why, n, "cuDNN needs head dims that are multiples of 8");
  if (p->dk != p->dv) return ac_cu_why(why, n, "this kernel builds cuDNN graphs for dk == dv only");
  if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT && p->tq > p->tk)
    return ac_cu_why(why, n, "cuDNN refuses a bottom-right causal mask with tq > tk");
  if (p->batch * p->heads * p->tq * p->tk > ((int64_t)1 << 40) || p->tq > INT32_MAX / 2 || p->tk > INT32_MAX / 2)
    return ac_cu_why(why, n, "problem too large for this graph");
  return 1;
}

int ac_cudnn_sdpa_run(const char *name, const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  ac_dnn_err e = { err, n };
  cudaStream_t stream = (cudaStream_t)t->stream;
  const int64_t B = p->batch, H = p->heads, KVH = p->kv_heads, tq = p->tq, tk = p->tk, dk = p->dk, dv = p->dv;
  const size_t es = 2;
  int64_t qs[4], ks[4], vs[4], os[4];
  memcpy(qs, p->q_stride, sizeof qs); memcpy(ks, p->k_stride, sizeof ks);
  memcpy(vs, p->v_stride, sizeof vs); memcpy(os, p->o_stride, sizeof os);
  const void *q = t->q, *k = t->k, *v = t->v;
  void *o = t->o, *qd = NULL, *kd = NULL, *vd = NULL, *od = NULL, *ws = NULL;
  float *stats = t->lse, *statsd = NULL;
  int rc = 0;
  try {
    cudnnHandle_t handle = ac_dnn_handle(&e);
    ac_dnn_check(cudnnSetStream(handle, stream), "cudnnSetStream", &e);

    /* Copy layouts the engine cannot take to dense, aligned buffers. */
    struct { const void **src; void **dst; int64_t *st; int64_t H_, T_, D_; } in[3] = {
      { &q, &qd, qs, H, tq, dk }, { &k, &kd, ks, KVH, tk, dk }, { &v, &vd, vs, KVH, tk, dv } };
    for (int x = 0; x < 3; x++) {
      if (ac_dnn_direct(*in[x].src, in[x].st)) continue;
      int64_t cnt = B * in[x].H_ * in[x].T_ * in[x].D_;
      if (cudaMalloc(in[x].dst, es * cnt) != cudaSuccess) {
        snprintf(err, n, "%s: cudaMalloc failed", name);
        throw ac_dnn_fail();
      }
      ac_cu_gather<unsigned short><<<ac_cu_grid(cnt, 256), 256, 0, stream>>>(
          (const unsigned short *)*in[x].src, ac_cu_make_strides(in[x].st), B, in[x].H_, in[x].T_, in[x].D_,
          (unsigned short *)*in[x].dst);
      *in[x].src = *in[x].dst;
      ac_cu_strides d = ac_cu_dense(in[x].H_, in[x].T_, in[x].D_);
      in[x].st[0] = d.s0; in[x].st[1] = d.s1; in[x].st[2] = d.s2; in[x].st[3] = d.s3;
    }
    if (!ac_dnn_direct(o, os)) {
      if (cudaMalloc(&od, es * B * H * tq * dv) != cudaSuccess) {
        snprintf(err, n, "%s: cudaMalloc failed", name);
        throw ac_dnn_fail();
      }
      o = od;
      ac_cu_strides d = ac_cu_dense(H, tq, dv);
      os[0] = d.s0; os[1] = d.s1; os[2] = d.s2; os[3] = d.s3;
    }
    if (!stats || (uintptr_t)stats % 16 != 0) {
      if (cudaMalloc((void **)&statsd, sizeof(float) * B * H * tq) != cudaSuccess) {
        snprintf(err, n, "%s: cudaMalloc failed", name);
        throw ac_dnn_fail();
      }
    }
    if (cudaGetLastError() != cudaSuccess) {
      snprintf(err, n, "%s: gather launch failed", name);
      throw ac_dnn_fail();
    }

    int64_t key[32];
    int nk = 0;
    key[nk++] = p->dtype; key[nk++] = p->mask; key[nk++] = B; key[nk++] = H; key[nk++] = KVH;
    key[nk++] = tq; key[nk++] = tk; key[nk++] = dk; key[nk++] = dv;
    for (int x = 0; x < 4; x++) { key[nk++] = qs[x]; key[nk++] = ks[x]; key[nk++] = vs[x]; key[nk++] = os[x]; }
    int dev = 0;
    cudaGetDevice(&dev);
    key[nk++] = dev;
    if (!ac_dnn_cached || ac_dnn_cached->nkey != nk || memcmp(ac_dnn_cached->key, key, sizeof(int64_t) * nk) != 0) {
      delete ac_dnn_cached;
      ac_dnn_cached = NULL;
      ac_dnn_graph *g = new ac_dnn_graph;
      try {
        ac_dnn_build(g, handle, p, qs, ks, vs, os, &e);
      } catch (ac_dnn_fail &) {
        delete g;
        throw;
      }
      memcpy(g->key, key, sizeof(int64_t) * nk);
      g->nkey = nk;
      ac_dnn_cached = g;
    }
    ac_dnn_graph *g = ac_dnn_cached;
    if (g->workspace > 0 && cudaMalloc(&ws, (size_t)g->workspace) != cudaSuccess) {
      snprintf(err, n, "%s: cudaMalloc of a %lld-byte workspace failed", name, (long long)g->workspace);
      throw ac_dnn_fail();
    }

    float scale = (float)p->scale, lowest = -3.402823466e+38f;
    int32_t skv = (int32_t)tk, sq = (int32_t)tq;
    int64_t uids[9] = { UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_LOWEST, UID_SKV, UID_SQ };
    void *ptrs[9] = { (void *)q, (void *)k, (void *)v, o, statsd ? (void *)statsd : (void *)stats,
                      &scale, &lowest, &skv, &sq };
    int64_t nv = p->mask == ATTNCHECK_MASK_NONE ? 6 : p->mask == ATTNCHECK_MASK_CAUSAL ? 7 : 9;
    ac_dnn_graph vpg;
    cudnnBackendDescriptor_t vp = ac_dnn_new(&vpg, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &e);
    ac_dnn_set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, nv, uids, "variant pack uids", &e);
    ac_dnn_set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, nv, ptrs, "variant pack pointers", &e);
    ac_dnn_set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, "variant pack workspace", &e);
    ac_dnn_finalize(vp, "variant pack finalize", &e);
    ac_dnn_check(cudnnBackendExecute(handle, g->plan, vp), "cudnnBackendExecute", &e);

    if (od) {
      ac_cu_scatter<unsigned short><<<ac_cu_grid(B * H * tq * dv, 256), 256, 0, stream>>>(
          (const unsigned short *)od, B, H, tq, dv, ac_cu_make_strides(p->o_stride), (unsigned short *)t->o);
      if (cudaGetLastError() != cudaSuccess) {
        snprintf(err, n, "%s: scatter launch failed", name);
        throw ac_dnn_fail();
      }
    }
    if (statsd && t->lse &&
        cudaMemcpyAsync(t->lse, statsd, sizeof(float) * B * H * tq, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
      snprintf(err, n, "%s: copying the stats failed", name);
      throw ac_dnn_fail();
    }
    if (cudaStreamSynchronize(stream) != cudaSuccess) {
      snprintf(err, n, "%s: the stream failed after cudnnBackendExecute", name);
      throw ac_dnn_fail();
    }
  } catch (ac_dnn_fail &) {
    rc = -1;
    cudaStreamSynchronize(stream);
  }
  cudaFree(qd); cudaFree(kd); cudaFree(vd); cudaFree(od); cudaFree(statsd); cudaFree(ws);
  return rc;
}
