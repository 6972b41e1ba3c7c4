/* cpu_varlen.c: flash-varlen-f32 and flash-varlen-bf16, FlashAttention-2's online softmax
 * over the sequences of a varlen batch or a paged KV cache (ABI 3, docs/layouts.md): per
 * sequence and kv head, each query row (the query heads of the kv group together, so that a
 * key row is read once for all of them) walks its visible keys in tiles of ATTNCHECK_FLASH_BC
 * (default 64), keeping a running maximum, sum and accumulator rescaled when the maximum grows;
 * key j of a paged sequence is read through its block table. Binary32 arithmetic; bf16 rounds
 * P to bf16 before P·V. Masks, windows, softcap, ALiBi, bias, boolean masks and sinks apply per
 * sequence. Their backward (varlen batches only) is cpu_varlen_bwd.c. */
#include "config.h"
#include "cpu_varlen.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  const attncheck_problem *p;
  const attncheck_tensors *t;
  int dt, bug;
  int64_t bc;
  /* per query head of a kv group: accumulators [G][dv], a tile's scores [G][bc], query rows
   * [G][dk], running maxima and sums [G]; one key row and one value row */
  float *acc, *s, *q, *m, *l, *kr, *vr;
} lay_ctx;

/* Keys of sequence b (as the defect sees them). */
static int64_t seq_keys(const lay_ctx *L, int64_t b)
{
  const attncheck_problem *p = L->p;
  const attncheck_tensors *t = L->t;
  int paged = (p->features & ATTNCHECK_FEAT_PAGED) != 0;
  int64_t n = paged ? t->cache_seqlens[b] : t->cu_seqlens_k[b + 1] - t->cu_seqlens_k[b];
  if (L->bug == AC_LBUG_CU_OFF_BY_ONE && !paged) n++;
  if (L->bug == AC_LBUG_PREV_BOUNDARY && b > 0)
    n = paged ? t->cache_seqlens[b - 1] : t->cu_seqlens_k[b] - t->cu_seqlens_k[b - 1];
  if (L->bug == AC_LBUG_ZERO_LENGTH && n == 0) n = 1;
  if (L->bug == AC_LBUG_PAGE_COUNT && paged) {
    int64_t pages = 0;
    while (pages < p->max_pages && t->block_table[b * p->max_pages + pages] >= 0) pages++;
    n = pages * p->page_size;
  }
  return n;
}

/* Element offset of key j's row of kv head kvh in k (stride s) for sequence b. */
static int64_t key_off(const lay_ctx *L, const int64_t s[4], int64_t b, int64_t kvh, int64_t j)
{
  const attncheck_problem *p = L->p;
  if (!(p->features & ATTNCHECK_FEAT_PAGED)) return ac_cpu_off(s, 0, kvh, L->t->cu_seqlens_k[b] + j, 0);
  int64_t row = L->bug == AC_LBUG_WRONG_TABLE_ROW && p->max_pages > 1 ? b * (p->max_pages - 1) : b * p->max_pages;
  int64_t page = L->t->block_table[row + j / p->page_size];
  if (L->bug == AC_LBUG_BLOCK_ID_U16) page = (uint16_t)page;
  if (page < 0 && L->bug != AC_LBUG_PAGE_PAST_END) page = 0; /* only a defect reads an unused entry */
  return page * s[0] + (j % p->page_size) * s[2] + kvh * s[1];
}

/* The visible keys [lo, hi) of query i of a sequence of tq queries and tk keys. */
static void visible(const attncheck_problem *p, int64_t tq, int64_t tk, int64_t i, int64_t *lo, int64_t *hi)
{
  int64_t h = tk, l = 0;
  if (p->mask == ATTNCHECK_MASK_CAUSAL) h = i + 1;
  else if (p->mask == ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) h = i + 1 + tk - tq;
  if (p->features & ATTNCHECK_FEAT_WINDOW) {
    int64_t c = i + (p->window_align == ATTNCHECK_ALIGN_TOP_LEFT ? 0 : tk - tq);
    if (p->window_left >= 0 && c - p->window_left > l) l = c - p->window_left;
    if (p->window_right >= 0 && c + p->window_right + 1 < h) h = c + p->window_right + 1;
  }
  *lo = l;
  *hi = h < tk ? h : tk;
}

/* The score of key j of sequence b after the scale: softcap, ALiBi (bottom-right distance),
 * the bias, then the boolean mask (-inf); bias and mask rows are the carrier's query tokens,
 * their columns the sequence's keys. */
static float score(const lay_ctx *L, int64_t b, int64_t h, int64_t tq, int64_t tk, int64_t i, int64_t j, float s)
{
  const attncheck_problem *p = L->p;
  const attncheck_tensors *t = L->t;
  const int64_t row = L->bug == AC_LBUG_BIAS_LOCAL_ROW ? i : t->cu_seqlens_q[b] + i;
  if (p->features & ATTNCHECK_FEAT_SOFTCAP) s = (float)p->softcap * tanhf(s / (float)p->softcap);
  if (p->features & ATTNCHECK_FEAT_ALIBI) {
    int64_t d = i + tk - tq - j;
    s -= t->alibi_slopes[(p->alibi_per_batch ? b * p->heads : 0) + h] * (float)(d < 0 ? -d : d);
  }
  if (p->features & ATTNCHECK_FEAT_BIAS)
    s += ac_cpu_load_f32(p->bias_dtype, t->bias, ac_cpu_off(p->bias_stride, 0, h, row, j));
  if ((p->features & ATTNCHECK_FEAT_BOOL_MASK) && !t->bool_mask[ac_cpu_off(p->bool_mask_stride, 0, h, row, j)])
    s = -INFINITY;
  return s;
}

/* The epilogue of query i of sequence b, head h: o = acc / l with the sink, or an empty row. */
static void finish_row(const lay_ctx *L, int64_t b, int64_t h, int64_t i, float m, float l, const float *acc)
{
  const attncheck_problem *p = L->p;
  const attncheck_tensors *t = L->t;
  const int64_t tok = t->cu_seqlens_q[b] + i;
  float *lse = t->lse ? &t->lse[h * p->total_q + tok] : NULL;
  const int sink = (p->features & ATTNCHECK_FEAT_SINKS) != 0;
  const float sg = sink ? t->sinks[h] : -INFINITY;
  if (l == 0.0f) {   /* no visible key: o = 0, LSE -inf or the sink */
    for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(L->dt, t->o, ac_cpu_off(p->o_stride, 0, h, tok, e), 0.0f);
    if (lse) *lse = sg;
    return;
  }
  const float mf = sg > m ? sg : m, a = expf(m - mf), den = l * a + (sink ? expf(sg - mf) : 0.0f), inv = a / den;
  for (int64_t e = 0; e < p->dv; e++) ac_cpu_store_f32(L->dt, t->o, ac_cpu_off(p->o_stride, 0, h, tok, e), acc[e] * inv);
  if (lse) *lse = mf + logf(den);
}

/* Query i of sequence b for the G query heads of kv head kvh together (each key row is read
 * once for all of them): tiles of keys, an online softmax per head, then the epilogues. */
static void group_row(const lay_ctx *L, int64_t b, int64_t kvh, int64_t i)
{
  const attncheck_problem *p = L->p;
  const attncheck_tensors *t = L->t;
  const int64_t G = p->heads / p->kv_heads, h0 = kvh * G, dk = p->dk, dv = p->dv;
  const int64_t tq = t->cu_seqlens_q[b + 1] - t->cu_seqlens_q[b], tk = seq_keys(L, b), tok = t->cu_seqlens_q[b] + i;
  int64_t lo, hi, end;
  visible(p, tq, tk, i, &lo, &hi);
  end = hi;
  const int paged_end = (p->features & ATTNCHECK_FEAT_PAGED) && hi == tk, gqa64 = p->page_size == 64 && G > 1;
  if (paged_end && (L->bug == AC_LBUG_LAST_PAGE_WHOLE || (L->bug == AC_LBUG_LAST_PAGE_GQA64 && gqa64)))
    end = (tk + p->page_size - 1) / p->page_size * p->page_size;
  if (paged_end && L->bug == AC_LBUG_PAGE_PAST_END && tk > 0 && tk % p->page_size == 0) end = tk + p->page_size;
  float *acc = L->acc, *s = L->s, *q = L->q, *m = L->m, *l = L->l, *kr = L->kr, *vr = L->vr;
  for (int64_t g = 0; g < G; g++) {
    m[g] = -INFINITY, l[g] = 0.0f;
    for (int64_t e = 0; e < dv; e++) acc[g * dv + e] = 0.0f;
    for (int64_t x = 0; x < dk; x++) q[g * dk + x] = ac_cpu_load_f32(L->dt, t->q, ac_cpu_off(p->q_stride, 0, h0 + g, tok, x));
  }
  for (int64_t j0 = lo; j0 < end; j0 += L->bc) {
    const int64_t n = ac_cpu_min(L->bc, end - j0);
    for (int64_t c = 0; c < n; c++) {
      const int64_t ko = key_off(L, p->k_stride, b, kvh, j0 + c);
      for (int64_t x = 0; x < dk; x++) kr[x] = ac_cpu_load_f32(L->dt, t->k, ko + x * p->k_stride[3]);
      for (int64_t g = 0; g < G; g++) {
        float d = 0.0f;
        for (int64_t x = 0; x < dk; x++) d += q[g * dk + x] * kr[x];
        s[g * L->bc + c] = j0 + c < hi ? score(L, b, h0 + g, tq, tk, i, j0 + c, d * (float)p->scale) : -INFINITY;
      }
    }
    for (int64_t g = 0; g < G; g++) {
      float mt = -INFINITY, *sg = s + g * L->bc;
      for (int64_t c = 0; c < n; c++) mt = sg[c] > mt ? sg[c] : mt;
      const float mnew = mt > m[g] ? mt : m[g], mref = mnew == -INFINITY ? 0.0f : mnew, alpha = expf(m[g] - mref);
      l[g] *= alpha;
      for (int64_t e = 0; e < dv; e++) acc[g * dv + e] *= alpha;
      for (int64_t c = 0; c < n; c++) {
        sg[c] = expf(sg[c] - mref);
        l[g] += sg[c];
      }
      m[g] = mnew;
    }
    for (int64_t c = 0; c < n; c++) {
      const int64_t vo = key_off(L, p->v_stride, b, kvh, j0 + c);
      for (int64_t e = 0; e < dv; e++) vr[e] = ac_cpu_load_f32(L->dt, t->v, vo + e * p->v_stride[3]);
      for (int64_t g = 0; g < G; g++) {
        const float pc = ac_cpu_round_f32(L->dt, s[g * L->bc + c]);
        for (int64_t e = 0; e < dv; e++) acc[g * dv + e] += pc * vr[e];
      }
    }
  }
  for (int64_t g = 0; g < G; g++) finish_row(L, b, h0 + g, i, m[g], l[g], acc + g * dv);
}

int ac_cpu_layout_run(int dt, int bug, const char *name, const attncheck_problem *p, const attncheck_tensors *t,
                      char *err, size_t err_len)
{
  lay_ctx L = {.p = p, .t = t, .dt = dt, .bug = bug};
  if (ac_cpu_env_block("ATTNCHECK_FLASH_BC", 64, &L.bc, err, err_len) < 0) return -1;
  if (!t->cu_seqlens_q || (!t->cu_seqlens_k && !t->block_table)) {
    snprintf(err, err_len, "%s: the layout's arrays are missing", name);
    return -1;
  }
  const int64_t G = p->heads / p->kv_heads;
  L.acc = ac_cpu_scratch(G * p->dv, sizeof *L.acc);
  L.s = ac_cpu_scratch(G * L.bc, sizeof *L.s);
  L.q = ac_cpu_scratch(G * p->dk, sizeof *L.q);
  L.m = ac_cpu_scratch(G, sizeof *L.m), L.l = ac_cpu_scratch(G, sizeof *L.l);
  L.kr = ac_cpu_scratch(p->dk, sizeof *L.kr), L.vr = ac_cpu_scratch(p->dv, sizeof *L.vr);
  int ok = L.acc && L.s && L.q && L.m && L.l && L.kr && L.vr;
  if (ok)
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t kvh = 0; kvh < p->kv_heads; kvh++)
        for (int64_t i = 0; i < t->cu_seqlens_q[b + 1] - t->cu_seqlens_q[b]; i++) group_row(&L, b, kvh, i);
  free(L.acc), free(L.s), free(L.q), free(L.m), free(L.l), free(L.kr), free(L.vr);
  if (!ok) {
    snprintf(err, err_len, "%s: out of memory", name);
    return -1;
  }
  return 0;
}

int ac_cpu_layout_supports(const attncheck_problem *p, int dt, char *why, size_t why_len)
{
  if (p->struct_size < ATTNCHECK_PROBLEM_V3_SIZE || !(p->features & ATTNCHECK_FEAT_LAYOUTS)) {
    snprintf(why, why_len, "handles varlen and paged batches only");
    return 0;
  }
  return ac_cpu_supports_caps(p, dt, AC_CPU_LAYOUT_CAPS, why, why_len);
}

static int f32_supports(const attncheck_problem *p, char *why, size_t n) { return ac_cpu_layout_supports(p, ATTNCHECK_F32, why, n); }
static int bf16_supports(const attncheck_problem *p, char *why, size_t n) { return ac_cpu_layout_supports(p, ATTNCHECK_BF16, why, n); }
static int f32_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_layout_run(ATTNCHECK_F32, AC_LBUG_NONE, "flash-varlen-f32", p, t, err, n);
}
static int bf16_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_layout_run(ATTNCHECK_BF16, AC_LBUG_NONE, "flash-varlen-bf16", p, t, err, n);
}

static int f32_bwd(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err, size_t n)
{
  return ac_cpu_varlen_backward(ATTNCHECK_F32, 0, "flash-varlen-f32", p, t, g, err, n);
}
static int bf16_bwd(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err, size_t n)
{
  return ac_cpu_varlen_backward(ATTNCHECK_BF16, 0, "flash-varlen-bf16", p, t, g, err, n);
}

const attncheck_kernel ac_cpu_flash_varlen_f32 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "flash-varlen-f32",
  "FlashAttention-2 online softmax over varlen batches and paged KV caches, binary32 (ATTNCHECK_FLASH_BC)", "fp32",
  ATTNCHECK_MEM_HOST, AC_CPU_LAYOUT_CAPS | ATTNCHECK_CAP_BACKWARD, f32_supports, f32_run, {NULL, NULL, NULL, NULL},
  f32_bwd, AC_CPU_VARLEN_BWD_CAPS, 0, 0, 0, NULL, 0, 0, NULL};
const attncheck_kernel ac_cpu_flash_varlen_bf16 = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "flash-varlen-bf16",
  "FlashAttention-2 online softmax over varlen batches and paged KV caches, bf16 inputs, P rounded to bf16", "bf16-fa2",
  ATTNCHECK_MEM_HOST, AC_CPU_LAYOUT_CAPS | ATTNCHECK_CAP_BACKWARD, bf16_supports, bf16_run, {NULL, NULL, NULL, NULL},
  bf16_bwd, AC_CPU_VARLEN_BWD_CAPS, 0, 0, 0, NULL, 0, 0, NULL};
