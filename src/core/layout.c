/* layout.c: serving layouts of a case (layout.h, docs/layouts.md). */
#include "config.h"
#include "layout.h"
#include "quant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "variants.h"

static void clear_strides(ac_problem *p)
{
  memset(p->q_stride, 0, sizeof p->q_stride);
  memset(p->k_stride, 0, sizeof p->k_stride);
  memset(p->v_stride, 0, sizeof p->v_stride);
  memset(p->o_stride, 0, sizeof p->o_stride);
}

static int strides_zero(const ac_problem *p)
{
  for (int i = 0; i < 4; i++)
    if (p->q_stride[i] || p->k_stride[i] || p->v_stride[i] || p->o_stride[i]) return 0;
  return 1;
}


int64_t ac_layout_tq(const ac_case *c, int64_t b) { return (int64_t)c->lay->cu_q[b + 1] - c->lay->cu_q[b]; }

int64_t ac_layout_tk(const ac_case *c, int64_t b)
{
  const struct ac_layout *l = c->lay;
  return l->cu_k ? (int64_t)l->cu_k[b + 1] - l->cu_k[b] : (int64_t)l->cache_seqlens[b];
}

int64_t ac_layout_key(const ac_case *c, int64_t b, int64_t j)
{
  const struct ac_layout *l = c->lay;
  if (l->cu_k) return l->cu_k[b] + j;
  int64_t ps = c->p.l.page_size;
  return (int64_t)l->block_table[b * c->p.l.max_pages + j / ps] * ps + j % ps;
}

int64_t ac_layout_seq_of_row(const ac_case *c, int64_t t)
{
  int64_t lo = 0, hi = c->p.l.nseq - 1;   /* last b with cu_q[b] <= t */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (c->lay->cu_q[mid] <= t) lo = mid; else hi = mid - 1;
  }
  return lo;
}

static int32_t *dup_i32(const int32_t *a, int64_t n)
{
  if (!a) return NULL;
  int32_t *d = ac_xmalloc((size_t)n * sizeof *d);
  memcpy(d, a, (size_t)n * sizeof *d);
  return d;
}

void ac_layout_alloc(ac_case *c, uint32_t kind, int64_t nseq, int64_t page_size, int64_t max_pages)
{
  ac_layout_free(c);
  struct ac_layout *l = ac_xcalloc(1, sizeof *l);
  l->cu_q = ac_xcalloc((size_t)nseq + 1, sizeof(int32_t));
  c->p.f.used = (c->p.f.used & ~(uint32_t)AC_FEAT_LAYOUTS) | kind;
  memset(&c->p.l, 0, sizeof c->p.l);
  c->p.l.nseq = nseq;
  if (kind == AC_FEAT_VARLEN) {
    l->cu_k = ac_xcalloc((size_t)nseq + 1, sizeof(int32_t));
  } else {
    c->p.l.page_size = page_size;
    c->p.l.max_pages = max_pages;
    l->cache_seqlens = ac_xcalloc((size_t)nseq ? (size_t)nseq : 1, sizeof(int32_t));
    size_t nb = (size_t)(nseq * max_pages);
    l->block_table = ac_xmalloc((nb ? nb : 1) * sizeof(int32_t));
    for (size_t i = 0; i < nb; i++) l->block_table[i] = -1;
  }
  c->lay = l;
}

void ac_layout_free(ac_case *c)
{
  if (!c->lay) return;
  free(c->lay->cu_q);
  free(c->lay->cu_k);
  free(c->lay->block_table);
  free(c->lay->cache_seqlens);
  free(c->lay);
  c->lay = NULL;
}

void ac_layout_copy(ac_case *dst, const ac_case *src)
{
  dst->lay = NULL;
  if (!src->lay) return;
  const struct ac_layout *s = src->lay;
  int64_t n = src->p.l.nseq;
  struct ac_layout *l = ac_xcalloc(1, sizeof *l);
  l->cu_q = dup_i32(s->cu_q, n + 1);
  l->cu_k = dup_i32(s->cu_k, n + 1);
  l->cache_seqlens = dup_i32(s->cache_seqlens, n ? n : 1);
  int64_t nb = n * src->p.l.max_pages;
  l->block_table = dup_i32(s->block_table, nb > 0 ? nb : 1);
  dst->lay = l;
}

static uint64_t mix(uint64_t h, uint64_t w)
{
  h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

uint64_t ac_layout_hash(const ac_case *c)
{
  if (!c->lay) return 0;
  const ac_problem *p = &c->p;
  uint64_t h = 0x6c61796f75743031ULL;
  const int64_t dims[] = {p->f.used & AC_FEAT_LAYOUTS, p->l.nseq, p->l.page_size, p->l.num_pages, p->l.max_pages};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) h = mix(h, (uint64_t)dims[i]);
  for (int64_t b = 0; b <= p->l.nseq; b++) h = mix(h, (uint32_t)c->lay->cu_q[b]);
  if (c->lay->cu_k)
    for (int64_t b = 0; b <= p->l.nseq; b++) h = mix(h, (uint32_t)c->lay->cu_k[b]);
  if (c->lay->cache_seqlens)
    for (int64_t b = 0; b < p->l.nseq; b++) h = mix(h, (uint32_t)c->lay->cache_seqlens[b]);
  if (c->lay->block_table)
    for (int64_t x = 0; x < p->l.nseq * p->l.max_pages; x++) h = mix(h, (uint32_t)c->lay->block_table[x]);
  return h;
}

void ac_layout_finish(ac_case *c)
{
  ac_problem *p = &c->p;
  const struct ac_layout *l = c->lay;
  int64_t n = p->l.nseq;
  p->l.max_tq = p->l.max_tk = 0;
  for (int64_t b = 0; b < n; b++) {
    if (ac_layout_tq(c, b) > p->l.max_tq) p->l.max_tq = ac_layout_tq(c, b);
    if (ac_layout_tk(c, b) > p->l.max_tk) p->l.max_tk = ac_layout_tk(c, b);
  }
  p->batch = 1;
  clear_strides(p);   /* the layout's strides are the kernel's business (harness_layout.c) */
  p->tq = l->cu_q[n];
  if (l->cu_k) p->tk = l->cu_k[n];
  else p->tk = p->l.num_pages * p->l.page_size;
}

static int check_cu(const int32_t *cu, int64_t n, int64_t total, const char *name, ac_err *e)
{
  if (cu[0] != 0) return ac_err_set(e, "%s[0] is %d, must be 0", name, (int)cu[0]);
  for (int64_t b = 0; b < n; b++)
    if (cu[b + 1] < cu[b])
      return ac_err_set(e, "%s is not non-decreasing: %s[%lld] = %d after %d", name, name, (long long)(b + 1),
                        (int)cu[b + 1], (int)cu[b]);
  if (cu[n] != total)
    return ac_err_set(e, "%s ends at %d but the tensors hold %lld tokens", name, (int)cu[n], (long long)total);
  return 0;
}

static int check_pages(const ac_case *c, ac_err *e)
{
  const ac_problem *p = &c->p;
  const struct ac_layout *l = c->lay;
  if (p->l.page_size < 1) return ac_err_set(e, "page_size must be >= 1 (got %lld)", (long long)p->l.page_size);
  if (p->l.num_pages < 1) return ac_err_set(e, "num_pages must be >= 1 (got %lld)", (long long)p->l.num_pages);
  if (p->l.max_pages < 1) return ac_err_set(e, "block_table needs at least one column");
  if (p->tk != p->l.num_pages * p->l.page_size)
    return ac_err_set(e, "k and v hold %lld slots, not num_pages * page_size = %lld", (long long)p->tk,
                      (long long)(p->l.num_pages * p->l.page_size));
  for (int64_t b = 0; b < p->l.nseq; b++) {
    int64_t len = l->cache_seqlens[b];
    if (len < 0) return ac_err_set(e, "cache_seqlens[%lld] = %lld is negative", (long long)b, (long long)len);
    if (len > p->l.max_pages * p->l.page_size)
      return ac_err_set(e, "cache_seqlens[%lld] = %lld is beyond the %lld pages of %lld slots given", (long long)b,
                        (long long)len, (long long)p->l.max_pages, (long long)p->l.page_size);
    int64_t used = (len + p->l.page_size - 1) / p->l.page_size;
    for (int64_t x = 0; x < p->l.max_pages; x++) {
      int32_t v = l->block_table[b * p->l.max_pages + x];
      if ((v < 0 || v >= p->l.num_pages) && !(v == -1 && x >= used))
        return ac_err_set(e, "block_table[%lld][%lld] = %d is out of range [0, %lld)%s", (long long)b, (long long)x,
                          (int)v, (long long)p->l.num_pages, x >= used ? " (-1 marks an unused entry)" : "");
    }
  }
  return 0;
}

int ac_layout_validate(const ac_case *c, ac_err *e)
{
  const ac_problem *p = &c->p;
  uint32_t kind = p->f.used & AC_FEAT_LAYOUTS;
  if (!c->lay && !kind) return 0;
  if (!c->lay || (kind != AC_FEAT_VARLEN && kind != AC_FEAT_PAGED))
    return ac_err_set(e, "layout: varlen and paged are exclusive, and need their arrays");
  if (p->l.nseq < 1) return ac_err_set(e, "layout: needs at least one sequence (got %lld)", (long long)p->l.nseq);
  if (p->batch != 1) return ac_err_set(e, "layout: the packed tensors have batch 1 (got %lld)", (long long)p->batch);
  uint32_t no = AC_FEAT_DESCALE | AC_FEAT_MIXED_DTYPES;
  if (p->f.used & no) {
    char names[128];
    return ac_err_set(e, "layout: %s not supported with %s cases", ac_feat_list(p->f.used & no, names, sizeof names),
                      kind == AC_FEAT_VARLEN ? "varlen" : "paged");
  }
  ac_problem d = *p;   /* the carrier's own strides: none, or the contiguous ones */
  clear_strides(&d);
  ac_problem_default_strides(&d);
  if (!strides_zero(p) && (memcmp(d.q_stride, p->q_stride, sizeof d.q_stride) || memcmp(d.k_stride, p->k_stride, sizeof d.k_stride) ||
                            memcmp(d.v_stride, p->v_stride, sizeof d.v_stride) || memcmp(d.o_stride, p->o_stride, sizeof d.o_stride)))
    return ac_err_set(e, "layout: strides are set by the layout, the case must not state other ones");
  if (check_cu(c->lay->cu_q, p->l.nseq, p->tq, "cu_seqlens_q", e) != 0) return -1;
  if (kind == AC_FEAT_VARLEN) {
    if (p->l.page_size || p->l.num_pages || p->l.max_pages)
      return ac_err_set(e, "layout: page fields given for a varlen case");
    return check_cu(c->lay->cu_k, p->l.nseq, p->tk, "cu_seqlens_k", e);
  }
  return check_pages(c, e);
}

void ac_layout_seq_problem(const ac_case *c, int64_t b, ac_problem *out)
{
  *out = c->p;
  memset(&out->l, 0, sizeof out->l);
  out->f.used &= ~(uint32_t)AC_FEAT_LAYOUTS;
  clear_strides(out);
  out->batch = 1;
  out->tq = ac_layout_tq(c, b);
  out->tk = ac_layout_tk(c, b);
}

/* The per-sequence variant tensors of sequence b in its dense case out (after
 * ac_features_copy): rows cu_q[b] .. of the carrier's bias and boolean mask, their first tk_b
 * columns; row b of per-sequence ALiBi slopes. A sequence without keys keeps its mask of zeros
 * and a zero bias for its one hidden key. */
static int seq_variants(const ac_case *c, int64_t b, ac_case *out, ac_err *e)
{
  const ac_problem *p = &c->p;
  ac_problem *s = &out->p;
  int64_t tk = ac_layout_tk(c, b), q0 = c->lay->cu_q[b];
  free(out->bias), out->bias = NULL;
  free(out->bool_mask), out->bool_mask = NULL;
  int per_seq = (p->f.used & AC_FEAT_ALIBI) && p->f.alibi_per_batch;
  if (per_seq) free(out->alibi_slopes), out->alibi_slopes = NULL;
  if (tk < 1 && (p->f.used & AC_FEAT_BOOL_MASK)) s->f.mask_h = 1;   /* the mask of zeros */
  if (ac_features_alloc(out, e) != 0) return -1;
  size_t be = (p->f.used & AC_FEAT_BIAS) ? ac_dtype_size(p->f.bias_dtype) : 0;
  for (int64_t i = 0; i < s->tq && tk > 0; i++) {
    for (int64_t h = 0; h < p->f.bias_h && be; h++)
      memcpy((char *)out->bias + ac_biasidx(s, 0, h, i, 0) * be, (const char *)c->bias + ac_biasidx(p, 0, h, q0 + i, 0) * be,
             (size_t)tk * be);
    for (int64_t h = 0; h < p->f.mask_h && c->bool_mask; h++)
      memcpy(out->bool_mask + ac_bmaskidx(s, 0, h, i, 0), c->bool_mask + ac_bmaskidx(p, 0, h, q0 + i, 0), (size_t)tk);
  }
  if (per_seq)
    memcpy(out->alibi_slopes, c->alibi_slopes + b * p->heads, (size_t)p->heads * sizeof(float));
  return 0;
}

/* The rows of sequence b of the carrier's dO (the backward, docs/backward.md) into out->dout. */
static void seq_dout(const ac_case *c, int64_t b, ac_case *out)
{
  const ac_problem *p = &c->p, *s = &out->p;
  const size_t es = ac_dtype_size(ac_tensor_dtype(p, 'o'));
  out->dout = ac_xmalloc(ac_case_bytes(out, 'o') + 1);
  for (int64_t h = 0; h < p->heads; h++)
    memcpy((char *)out->dout + ac_oidx(s, 0, h, 0, 0) * es, (const char *)c->dout + ac_oidx(p, 0, h, c->lay->cu_q[b], 0) * es,
           (size_t)(s->tq * p->dv) * es);
}

/* The codes and scales of sequence b's tokens (queries cu_q[b] + i, keys ac_layout_key); a sequence
 * without keys keeps the zero codes of its hidden key. */
static int seq_quant(const ac_case *c, int64_t b, ac_case *out, ac_err *e)
{
  if (!ac_problem_quantized(&c->p)) return 0;
  int64_t tq = out->p.tq, tk = ac_layout_tk(c, b), zero = 0;
  int64_t *rows = ac_xmalloc((size_t)tq * sizeof *rows), *keys = ac_xmalloc((size_t)(tk > 0 ? tk : 1) * sizeof *keys);
  for (int64_t i = 0; i < tq; i++) rows[i] = c->lay->cu_q[b] + i;
  for (int64_t j = 0; j < tk; j++) keys[j] = ac_layout_key(c, b, j);
  ac_qmap mq = {&zero, NULL, rows, NULL}, mk = {&zero, NULL, keys, NULL};
  int rc = ac_quant_remap(c, out, 'q', &mq, e);
  if (!rc && tk > 0) rc = ac_quant_remap(c, out, 'k', &mk, e) || ac_quant_remap(c, out, 'v', &mk, e) ? -1 : 0;
  free(rows);
  free(keys);
  return rc;
}

int ac_layout_seq_case(const ac_case *c, int64_t b, ac_case *out, ac_err *e)
{
  ac_case_init(out);
  ac_layout_seq_problem(c, b, &out->p);
  int64_t tk = out->p.tk;
  if (out->p.tq < 1) return ac_err_set(e, "sequence %lld has no query: no dense case", (long long)b);
  if (tk < 1) {   /* no key: one key that a boolean mask of zeros hides from every row */
    out->p.tk = 1;
    out->p.f.used |= AC_FEAT_BOOL_MASK;
    out->p.f.mask_b = out->p.f.mask_h = 1;
  }
  if (ac_case_alloc(out, e) != 0) return -1;
  const ac_problem *p = &c->p, *s = &out->p;
  size_t eq = ac_dtype_size(ac_tensor_dtype(p, 'q')), ek = ac_dtype_size(ac_tensor_dtype(p, 'k')),
         ev = ac_dtype_size(ac_tensor_dtype(p, 'v'));
  int64_t q0 = c->lay->cu_q[b];
  for (int64_t h = 0; h < p->heads; h++)
    memcpy((char *)out->q + ac_qidx(s, 0, h, 0, 0) * eq, (const char *)c->q + ac_qidx(p, 0, h, q0, 0) * eq,
           (size_t)(s->tq * p->dk) * eq);
  for (int64_t kh = 0; kh < p->kv_heads; kh++)
    for (int64_t j = 0; j < tk; j++) {
      int64_t t = ac_layout_key(c, b, j);
      memcpy((char *)out->k + ac_kidx(s, 0, kh, j, 0) * ek, (const char *)c->k + ac_kidx(p, 0, kh, t, 0) * ek,
             (size_t)p->dk * ek);
      memcpy((char *)out->v + ac_vidx(s, 0, kh, j, 0) * ev, (const char *)c->v + ac_vidx(p, 0, kh, t, 0) * ev,
             (size_t)p->dv * ev);
    }
  if (seq_quant(c, b, out, e) != 0) {
    ac_case_free(out);
    return -1;
  }
  if (c->dout) seq_dout(c, b, out);
  ac_features_copy(out, c);
  if (seq_variants(c, b, out, e) != 0) {
    ac_case_free(out);
    return -1;
  }
  out->seed = c->seed;
  snprintf(out->generator, sizeof out->generator, "%s", c->generator);
  return 0;
}
