/* gen_layouts.c: the serving-layout families (docs/layouts.md), drawn only for kernels that
 * declare the layout: "varlen_mix" (sequence-length mixes: many one-token sequences, one long
 * among short, zero lengths, lengths at tile edges), "page_table" (every power of two from 1 to
 * 512 and non-powers of two as page sizes, GQA in two frames of three, last pages partly
 * filled; pages shuffled, a shared prefix, fragmented among spare pages, wide block tables, or a
 * pool past 65,536 pages whose sequences hold the ids above 65,535) and "decode" (one query per
 * sequence against long caches, row-sampled, page sizes 1 to 256). Values come
 * from the value distributions and score patterns of the plain families; one case in four also
 * takes a window, softcap, ALiBi or sinks the kernel declares. */
#include "config.h"
#include <string.h>
#include "fuzz.h"
#include "layout.h"
#include "vgen.h"

#define MAXSEQ 64

/* Heads, kv heads, head dim and dtype within l (the mask: drawn). */
static void draw_frame(ac_rng *r, const ac_gen_limits *l, ac_problem *p)
{
  static const int64_t hs[][2] = {{1, 1}, {2, 1}, {2, 2}, {4, 2}, {4, 1}, {8, 2}};
  static const int64_t ds[] = {16, 32, 40, 64, 8};
  int k = (int)ac_rng_below(r, 6);
  p->dtype = ac_draw_dtype(r, l);
  p->mask = ac_draw_mask(r, l);
  p->heads = hs[k][0], p->kv_heads = hs[k][1];
  p->dk = p->dv = ds[ac_rng_below(r, 5)];
  if (p->dk > l->max_d) p->dk = p->dv = l->max_d;
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
}

/* A length near a tile edge (1 .. cap), or 0 with probability zero_pct in 100. */
static int64_t edge_len(ac_rng *r, int64_t cap, int zero_pct)
{
  if ((int)ac_rng_below(r, 100) < zero_pct) return 0;
  return ac_draw_tile_len(r, cap);
}

/* Values (a value distribution, or a score pattern of the plain families), then perhaps a
 * variant the kernel declares. */
static int layout_values(ac_case *c, ac_rng *r, const ac_gen_limits *l, ac_params *pb, ac_err *e)
{
  ac_problem *p = &c->p;
  if (ac_case_alloc(c, e)) return -1;
  if (ac_rng_below(r, 3) == 0) {
    static const int pats[] = {AC_PAT_NORMAL, AC_PAT_TIES, AC_PAT_LARGE_V, AC_PAT_LATE, AC_PAT_DOMINANT};
    if (ac_pat_apply(c, r, pats[ac_rng_below(r, 5)], ac_draw_block(r, 4, 7, p->tk), pb)) return -1;
  } else {
    ac_valdist d;
    ac_draw_valdist(r, p->dtype, &d);
    ac_params_valdist(pb, "qkv", &d);
    ac_fill_qkv(c, r, &d, &d, &d);
  }
  uint32_t lay = p->f.used & AC_FEAT_LAYOUTS, can = l->features & (AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_SINKS);
  if (!can || ac_rng_below(r, 4)) return 0;
  ac_vspec v;
  memset(&v, 0, sizeof v);
  uint32_t bits[4] = {AC_FEAT_WINDOW, AC_FEAT_SOFTCAP, AC_FEAT_ALIBI, AC_FEAT_SINKS};
  do v.used = bits[ac_rng_below(r, 4)]; while (!(v.used & can));
  v.win_left = ac_rng_range(r, 0, 40), v.win_right = ac_rng_below(r, 2) ? 0 : -1;
  v.softcap = 5 + 45 * ac_rng_uniform(r);
  v.alibi_max = 1 + 7 * ac_rng_uniform(r);
  v.sinks = (int)ac_rng_below(r, 3);
  if (ac_vfam_apply(c, r, &v, pb, e)) return -1;
  p->f.used |= lay;
  return ac_layout_validate(c, e);
}

/* Builds the layout of the lengths (pages as asked), halving every length until the packed
 * tensors fit --max-elems, records it, then the values. */
static int finish(ac_case *c, ac_rng *r, const ac_gen_limits *l, ac_params *pb, ac_layout_spec *s, int64_t *tq,
                  int64_t *tk, ac_err *e)
{
  for (int round = 0; round < 64; round++) {
    int64_t nq = 0, nk = 0, ps = s->kind == AC_FEAT_PAGED ? s->page_size : 1;
    for (int64_t b = 0; b < s->nseq; b++) nq += tq[b], nk += (tk[b] + ps - 1) / ps * ps;
    nk += (s->spare_pages + 1) * ps;
    int64_t h = c->p.heads > c->p.kv_heads ? c->p.heads : c->p.kv_heads;
    if ((nq <= 1 && nk <= ps + 1) || (nq * h * c->p.dk <= l->max_elems && nk * h * c->p.dk <= l->max_elems)) break;
    for (int64_t b = 0; b < s->nseq; b++) tq[b] = (tq[b] + 1) / 2, tk[b] = (tk[b] + 1) / 2;
    s->shared_pages /= 2;
    s->spare_pages /= 2;
    if (round > 8 && s->nseq > 1) s->nseq = (s->nseq + 1) / 2;
  }
  int64_t anyq = 0, anyk = 0;   /* the packed tensors hold a query token and a key */
  for (int64_t b = 0; b < s->nseq; b++) anyq += tq[b], anyk += tk[b];
  if (!anyq) tq[0] = 1;
  if (!anyk && s->kind == AC_FEAT_VARLEN) tk[0] = 1;
  if (ac_layout_build(c, s, r, e)) return -1;
  ac_params_int(pb, "sequences", s->nseq);
  ac_params_int(pb, "page_size", s->page_size);
  ac_params_int(pb, "spare_pages", s->spare_pages);
  ac_params_int(pb, "shared_pages", s->shared_pages);
  ac_params_int(pb, "shuffle", s->shuffle);
  return layout_values(c, r, l, pb, e);
}

static uint32_t kind_of(const ac_gen_limits *l, uint32_t prefer)
{
  return l->features & prefer ? prefer : l->features & AC_FEAT_VARLEN ? AC_FEAT_VARLEN : AC_FEAT_PAGED;
}

AC_FAMILY_DECL(varlen_mix)
{
  int64_t tq[MAXSEQ], tk[MAXSEQ], n, cap = l->max_t < 300 ? l->max_t : 300;
  draw_frame(r, l, &c->p);
  int mode = (int)ac_rng_below(r, 5);
  n = mode == 0 ? ac_rng_range(r, 8, MAXSEQ) : ac_rng_range(r, 1, 12);
  for (int64_t b = 0; b < n; b++) {
    switch (mode) {
    case 0: tq[b] = 1, tk[b] = ac_rng_range(r, 1, 3); break;                        /* many one-token sequences */
    case 1: tq[b] = tk[b] = ac_rng_range(r, 0, 4); break;                           /* short ones ... */
    case 2: tq[b] = edge_len(r, 40, 30), tk[b] = edge_len(r, 40, 30); break;        /* zero lengths */
    case 3: tq[b] = edge_len(r, cap, 5), tk[b] = edge_len(r, cap, 5); break;        /* tile edges */
    default: tq[b] = ac_rng_range(r, 0, 60), tk[b] = ac_rng_range(r, 0, 60); break;
    }
  }
  if (mode == 1) {   /* ... and one long among them */
    int64_t x = (int64_t)ac_rng_below(r, (uint64_t)n);
    tq[x] = tk[x] = ac_rng_range(r, cap / 2, cap);
  }
  int64_t anyq = 0;   /* one query token and one key at least */
  for (int64_t b = 0; b < n; b++) anyq += tq[b];
  if (!anyq) tq[0] = 1;
  tk[n - 1] += tk[n - 1] == 0;
  ac_params_int(pb, "mode", mode);
  ac_layout_spec s = {.kind = kind_of(l, AC_FEAT_VARLEN), .nseq = n, .tq = tq, .tk = tk, .page_size = 16, .shuffle = 1};
  return finish(c, r, l, pb, &s, tq, tk, e);
}

/* Page ids past 16 bits: a pool of 65,536 spare pages (and a few) below the sequences' pages,
 * which straddle id 65,535, in a frame small enough for the pool to stay cheap and fit
 * --max-elems (d 8, one kv head with pages of 1 or 2 slots, or two with pages of one slot, up to
 * 4 query heads: at most 2^20 elements a tensor); 0 when no such frame fits. */
static int high_ids(ac_rng *r, const ac_gen_limits *l, ac_case *c, ac_layout_spec *s, int64_t *tq, int64_t *tk)
{
  static const int64_t hs[][2] = {{1, 1}, {2, 1}, {4, 1}, {2, 2}, {4, 2}};
  ac_problem *p = &c->p;
  int k = (int)ac_rng_below(r, 5);
  p->heads = hs[k][0], p->kv_heads = hs[k][1];
  p->dk = p->dv = l->max_d < 8 ? l->max_d : 8;
  p->scale = ac_problem_scale(p);
  int64_t ps = p->kv_heads == 1 ? (int64_t)1 << ac_rng_below(r, 2) : 1, n = ac_rng_range(r, 1, 6), used = 0;
  while (ps > 1 && (65536 + 64 * 6) * ps * p->heads * p->dk > l->max_elems) ps /= 2;
  if ((65536 + 64 * 6) * ps * p->heads * p->dk > l->max_elems) return 0;
  for (int64_t b = 0; b < n; b++) {
    tq[b] = ac_rng_range(r, 1, 3), tk[b] = ac_rng_range(r, 1, 40 * ps);
    used += (tk[b] + ps - 1) / ps;
  }
  s->nseq = n, s->page_size = ps, s->shuffle = 1, s->high_ids = 1;
  s->spare_pages = 65536 - (int64_t)ac_rng_below(r, (uint64_t)used); /* the last used ids past 65,535 */
  return 1;
}

AC_FAMILY_DECL(page_table)
{
  static const int64_t sizes[] = {1, 2, 4, 8, 16, 16, 32, 64, 128, 256, 512, 3, 5, 7, 13, 24, 48, 80, 100};
  int64_t tq[MAXSEQ], tk[MAXSEQ], n = ac_rng_range(r, 1, 10), any = 0;
  draw_frame(r, l, &c->p);
  ac_layout_spec s = {.kind = AC_FEAT_PAGED, .nseq = n, .tq = tq, .tk = tk, .page_size = sizes[ac_rng_below(r, 19)]};
  int mode = (int)ac_rng_below(r, 5);
  if (mode == 4 && high_ids(r, l, c, &s, tq, tk)) {
    ac_params_int(pb, "mode", mode);
    ac_params_int(pb, "high_ids", 1);
    return finish(c, r, l, pb, &s, tq, tk, e);
  }
  if (mode == 4) mode = 0;
  int64_t cap = s.page_size >= 256 ? 2 * s.page_size + 100 : s.page_size * 12 + 3;
  for (int64_t b = 0; b < n; b++) {
    tq[b] = ac_rng_below(r, 4) ? ac_rng_range(r, 1, 4) : 0;
    tk[b] = ac_rng_below(r, 8) ? ac_rng_range(r, 1, cap) : 0;
    if (ac_rng_below(r, 3) == 0) tk[b] = (tk[b] / s.page_size) * s.page_size + ac_rng_range(r, -1, 1);   /* page edges */
    else if (ac_rng_below(r, 2))
      tk[b] = (tk[b] / s.page_size) * s.page_size + ac_rng_range(r, 1, s.page_size); /* a partial last page */
    if (tk[b] < 0) tk[b] = 0;
    any += tq[b];
  }
  if (!any) tq[0] = 1;
  s.shuffle = mode != 0;
  if (mode == 1) {   /* a shared prefix: the first pages of every sequence */
    int64_t m = tk[0];
    for (int64_t b = 0; b < n; b++) m = tk[b] < m ? tk[b] : m;
    s.shared_pages = m / s.page_size > 0 ? ac_rng_range(r, 1, m / s.page_size) : 0;
  }
  if (mode == 2) s.spare_pages = ac_rng_range(r, 1, 3 * n + 3);   /* fragmented among unused pages */
  if (mode == 3) s.extra_cols = ac_rng_range(r, 1, 4);
  ac_params_int(pb, "mode", mode);
  return finish(c, r, l, pb, &s, tq, tk, e);
}

AC_FAMILY_DECL(decode)
{
  int64_t tq[MAXSEQ], tk[MAXSEQ], n = ac_rng_range(r, 1, ac_rng_below(r, 4) ? 16 : MAXSEQ);
  draw_frame(r, l, &c->p);
  int64_t budget = l->max_elems / (c->p.kv_heads * c->p.dk), longest = l->max_t < budget / n ? l->max_t : budget / n;
  if (longest < 1) longest = 1;
  for (int64_t b = 0; b < n; b++) {
    tq[b] = 1;
    tk[b] = ac_rng_below(r, 3) ? ac_rng_range(r, longest / 2, longest) : ac_rng_range(r, 0, 100 < longest ? 100 : longest);
  }
  static const int64_t sizes[] = {16, 16, 1, 256, 7, 8, 32, 64, 128, 12};
  ac_layout_spec s = {.kind = kind_of(l, AC_FEAT_PAGED), .nseq = n, .tq = tq, .tk = tk,
                      .page_size = sizes[ac_rng_below(r, 10)], .shuffle = 1, .spare_pages = ac_rng_range(r, 0, 4)};
  if (s.kind == AC_FEAT_VARLEN) tk[n - 1] += tk[n - 1] == 0;
  ac_params_int(pb, "longest", longest);
  return finish(c, r, l, pb, &s, tq, tk, e);
}
