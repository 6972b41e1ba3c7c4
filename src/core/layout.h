/* layout.h: serving layouts of a case (docs/layouts.md): a varlen batch of packed sequences
 * (cu_seqlens for queries and keys) and a paged KV cache (block table, cache_seqlens).
 *
 * A layout case is one carrier problem: batch 1, heads H, tq = total query tokens (sequence b's
 * query i is carrier row cu_q[b] + i), tk = total keys (varlen: key j of b is cu_k[b] + j) or
 * num_pages * page_size (paged: page p slot s is p * page_size + s; key j of b lives in page
 * block_table[b][j / page_size], slot j % page_size). p.f.used carries AC_FEAT_VARLEN or
 * AC_FEAT_PAGED and p.l the dimensions (sequences, longest lengths, pages). Every rule of the
 * formula (mask, window, softcap, ALiBi, sinks) applies per sequence with its own tq_b, tk_b.
 * Paged cases pack their queries as varlen ones do (cu_q); the keys of b are cache_seqlens[b]. */
#ifndef AC_LAYOUT_H
#define AC_LAYOUT_H
#include <stdint.h>
#include "casefile.h"
#include "rng.h"

struct ac_layout {
  int32_t *cu_q;           /* [nseq + 1], cu_q[0] = 0, non-decreasing, cu_q[nseq] = p.tq */
  int32_t *cu_k;           /* VARLEN: [nseq + 1], cu_k[nseq] = p.tk; NULL for PAGED */
  int32_t *block_table;    /* PAGED: [nseq][max_pages], entries in [0, num_pages) or -1 past a
                              sequence's pages; NULL for VARLEN */
  int32_t *cache_seqlens;  /* PAGED: [nseq], each <= max_pages * page_size */
};

/* Sequences of the case (0 for a dense one). */
static inline int64_t ac_layout_nseq(const ac_case *c) { return c->lay ? c->p.l.nseq : 0; }
/* Query and key lengths of sequence b. */
int64_t ac_layout_tq(const ac_case *c, int64_t b);
int64_t ac_layout_tk(const ac_case *c, int64_t b);
/* Carrier key index of key j of sequence b (its page and slot for a paged case). */
int64_t ac_layout_key(const ac_case *c, int64_t b, int64_t j);
/* Sequence that owns carrier query row t (the last of equal cu_q entries: the non-empty one). */
int64_t ac_layout_seq_of_row(const ac_case *c, int64_t t);

/* Allocates c->lay for nseq sequences of the kind (AC_FEAT_VARLEN or AC_FEAT_PAGED), arrays
 * zeroed (block table -1); sets p.f.used's bit and p.l.nseq, page_size, max_pages. */
void ac_layout_alloc(ac_case *c, uint32_t kind, int64_t nseq, int64_t page_size, int64_t max_pages);
void ac_layout_free(ac_case *c);
/* Deep copy of src->lay into dst (dst->lay overwritten, not freed). */
void ac_layout_copy(ac_case *dst, const ac_case *src);
/* Hash of the layout arrays (0 for a dense case). */
uint64_t ac_layout_hash(const ac_case *c);
/* Sets p.l.max_tq, max_tk and p.tq, p.tk (varlen) or p.tk = num_pages * page_size (paged) from
 * the arrays; call after filling them, then ac_layout_validate. */
void ac_layout_finish(ac_case *c);

/* Checks the layout against the carrier problem: cu_seqlens start at 0, are non-decreasing and
 * end at the tensors' token counts; block-table entries in range; cache_seqlens within the pages
 * a sequence is given; page_size >= 1; features a layout does not take (bias, boolean mask,
 * per-batch ALiBi, descales, per-tensor dtypes, strides). -1 with one line otherwise. */
int ac_layout_validate(const ac_case *c, ac_err *e);

/* The dense problem of sequence b alone: batch 1, tq_b, tk_b, the case's mask, scale and
 * variants (p.l zero). Both lengths must be >= 1. */
void ac_layout_seq_problem(const ac_case *c, int64_t b, ac_problem *out);
/* The dense case of sequence b alone (tq_b >= 1): q, k, v gathered from the carrier, the
 * variant tensors copied. A sequence without keys gets one key of zeros that a boolean mask of
 * zeros hides from every row (its rows are empty, or see the sink alone). A case with dO gives
 * the sequence its rows of dO. -1 when tq_b is 0. */
int ac_layout_seq_case(const ac_case *c, int64_t b, ac_case *out, ac_err *e);

/* What a layout case looks like, for gen and the fuzz families (layout_build.c). */
typedef struct {
  uint32_t kind;           /* AC_FEAT_VARLEN or AC_FEAT_PAGED */
  int64_t nseq;
  const int64_t *tq;       /* [nseq] query lengths (>= 0) */
  const int64_t *tk;       /* [nseq] key lengths: varlen keys or paged cache_seqlens (>= 0) */
  int64_t page_size;       /* paged: >= 1 */
  int64_t spare_pages;     /* paged: pages no sequence lists */
  int64_t extra_cols;      /* paged: block-table columns past the longest sequence's pages (-1) */
  int64_t shared_pages;    /* paged: the first pages of every sequence are the same pages (each
                              sequence must fill them: tk >= shared_pages * page_size) */
  int shuffle;             /* paged: pages in a random order (rng) */
  int high_ids;            /* paged: the spare pages take the lowest ids and the sequences' pages
                              the ids above them (spare_pages past 65535: ids past 16 bits) */
} ac_layout_spec;
/* Sets up c's layout from s: p.l, the arrays, p.batch = 1, p.tq and p.tk of the carrier (the
 * caller then allocates the tensors and fills them). -1 with one line for lengths that do not fit
 * int32, no query token, no key slot, or shared pages a sequence does not fill. */
int ac_layout_build(ac_case *c, const ac_layout_spec *s, ac_rng *r, ac_err *e);

struct ac_vspec_s;
/* A whole layout case, for the suite and the fuzz families: the layout (pages shuffled from
 * stream 12 of seed), q, k, v normal(0, sigma) from stream 0 rounded into dtype, then the
 * variants of v (NULL: none; vgen.h, streams 11..). -1 with one line. */
typedef struct {
  ac_dtype dtype;
  ac_mask mask;
  int64_t heads, kv_heads, dk, dv;
  double sigma;
  ac_layout_spec lay;
  const struct ac_vspec_s *v;
} ac_layout_case_spec;
int ac_layout_case_make(ac_case *c, const ac_layout_case_spec *s, uint64_t seed, ac_err *e);

#endif
