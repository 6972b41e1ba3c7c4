/* layout_build.c: a layout case from lengths and a page policy (layout.h, ac_layout_build). */
#include "config.h"
#include "layout.h"
#include <stdlib.h>
#include "vgen.h"

static int prefix(int32_t *cu, const int64_t *len, int64_t n, const char *name, ac_err *e)
{
  int64_t t = 0;
  cu[0] = 0;
  for (int64_t b = 0; b < n; b++) {
    if (len[b] < 0) return ac_err_set(e, "%s: length %lld of sequence %lld is negative", name, (long long)len[b], (long long)b);
    t += len[b];
    if (t > INT32_MAX) return ac_err_set(e, "%s: %lld tokens do not fit int32 prefix sums", name, (long long)t);
    cu[b + 1] = (int32_t)t;
  }
  return 0;
}

/* Pages of each sequence: shared ones first, then its own, drawn from a (shuffled) pool. */
static int build_pages(ac_case *c, const ac_layout_spec *s, ac_rng *r, ac_err *e)
{
  int64_t ps = s->page_size, n = s->nseq, own = 0, maxp = 0;
  for (int64_t b = 0; b < n; b++) {
    int64_t np = (s->tk[b] + ps - 1) / ps;
    if (s->tk[b] < s->shared_pages * ps)
      return ac_err_set(e, "shared pages: sequence %lld has %lld keys, fewer than %lld shared pages of %lld", (long long)b,
                        (long long)s->tk[b], (long long)s->shared_pages, (long long)ps);
    own += np - s->shared_pages;
    if (np > maxp) maxp = np;
  }
  int64_t num = s->shared_pages + own + s->spare_pages, cols = maxp + s->extra_cols;
  if (num < 1) num = 1;
  if (cols < 1) cols = 1;
  if (num > INT32_MAX || num * ps > INT32_MAX || (double)n * (double)cols * 4 > (double)ac_mem_cap())
    return ac_err_set(e, "paged layout: %lld pages of %lld slots are too many", (long long)num, (long long)ps);
  ac_layout_alloc(c, AC_FEAT_PAGED, n, ps, cols);
  c->p.l.num_pages = num;
  int32_t *perm = ac_xmalloc((size_t)num * sizeof *perm);
  int64_t used = s->shared_pages + own, shuf = s->high_ids ? used : num;
  for (int64_t x = 0; x < num; x++) perm[x] = (int32_t)(s->high_ids ? (x + s->spare_pages) % num : x);
  for (int64_t x = shuf - 1; s->shuffle && x > 0; x--) {
    int64_t y = (int64_t)ac_rng_below(r, (uint64_t)x + 1);
    int32_t t = perm[x];
    perm[x] = perm[y], perm[y] = t;
  }
  int64_t next = s->shared_pages;
  for (int64_t b = 0; b < n; b++) {
    c->lay->cache_seqlens[b] = (int32_t)s->tk[b];
    int64_t np = (s->tk[b] + ps - 1) / ps;
    for (int64_t x = 0; x < np; x++)
      c->lay->block_table[b * cols + x] = perm[x < s->shared_pages ? x : next++];
  }
  free(perm);
  return 0;
}

int ac_layout_build(ac_case *c, const ac_layout_spec *s, ac_rng *r, ac_err *e)
{
  if (s->nseq < 1) return ac_err_set(e, "layout: needs at least one sequence");
  if (s->kind == AC_FEAT_PAGED && s->page_size < 1)
    return ac_err_set(e, "page_size must be >= 1 (got %lld)", (long long)s->page_size);
  if (s->kind == AC_FEAT_PAGED) {
    if (build_pages(c, s, r, e) != 0) return -1;
  } else {
    ac_layout_alloc(c, AC_FEAT_VARLEN, s->nseq, 0, 0);
    if (prefix(c->lay->cu_k, s->tk, s->nseq, "cu_seqlens_k", e) != 0) goto fail;
    if (c->lay->cu_k[s->nseq] < 1) {
      ac_err_set(e, "varlen layout: no key in any sequence (the packed k needs at least one)");
      goto fail;
    }
  }
  if (prefix(c->lay->cu_q, s->tq, s->nseq, "cu_seqlens_q", e) != 0) goto fail;
  if (c->lay->cu_q[s->nseq] < 1) {
    ac_err_set(e, "layout: no query token in any sequence (the packed q needs at least one)");
    goto fail;
  }
  ac_layout_finish(c);
  return 0;
fail:
  ac_layout_free(c);
  c->p.f.used &= ~(uint32_t)AC_FEAT_LAYOUTS;
  return -1;
}

int ac_layout_case_make(ac_case *c, const ac_layout_case_spec *s, uint64_t seed, ac_err *e)
{
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = s->dtype;
  p->mask = s->mask;
  p->heads = s->heads, p->kv_heads = s->kv_heads, p->dk = s->dk, p->dv = s->dv;
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  ac_rng r;
  ac_rng_init(&r, seed, 12);
  if (ac_layout_build(c, &s->lay, &r, e) != 0 || ac_case_alloc(c, e) != 0) goto fail;
  ac_rng_init(&r, seed, 0);
  void *t[3] = {c->q, c->k, c->v};
  for (int x = 0; x < 3; x++) {
    size_t n = ac_case_bytes(c, "qkv"[x]) / ac_dtype_size(p->dtype);
    for (size_t i = 0; i < n; i++) ac_store_bits(p->dtype, t[x], i, ac_encode_f64(p->dtype, s->sigma * ac_rng_normal(&r)));
  }
  c->seed = seed;
  uint32_t lay = p->f.used & AC_FEAT_LAYOUTS;
  if (s->v && ac_vspec_apply(c, s->v, seed, e) != 0) goto fail;
  p->f.used |= lay;   /* ac_vspec_apply sets the variant bits */
  if (ac_layout_validate(c, e) != 0) goto fail;
  return 0;
fail:
  ac_case_free(c);
  return -1;
}
