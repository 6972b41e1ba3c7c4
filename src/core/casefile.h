/* casefile.h: a case (problem + Q, K, V + provenance) and its NPZ file.
 * File format (DESIGN.md "Files a user touches"): an uncompressed zip of .npy members
 * q [B,H,tq,dk], k [B,KVH,tk,dk], v [B,KVH,tk,dv] (dense, C order) and meta.json
 * (schema 1: shape, strides, mask, dtype name, scale "default" or hex-float string,
 * seed, generator, params, tool version); optional do [B,H,tq,dv] (dO, o's dtype) for the backward. bf16 is stored as <u2, fp8 as |u1 bit patterns. */
#ifndef AC_CASEFILE_H
#define AC_CASEFILE_H
#include <stdint.h>
#include "problem.h"
#include "npz.h"

typedef struct {
  ac_problem p;
  void *q, *k, *v;          /* dense tensors, each in its dtype (ac_tensor_dtype: p.dtype unless mixed_dtypes) */
  uint64_t seed;
  int64_t case_index;       /* case number k within a run, -1 if none */
  char generator[64];       /* generator family, "gen", "example:tiny3", "external" */
  char *params_json;        /* JSON object text with the generator's parameters, or NULL */
  char tool_version[32];
  int has_o, has_lse;       /* optional kernel outputs stored in the file */
  void *o;                  /* dense [B,H,tq,dv] in o's dtype, when has_o */
  float *lse;               /* [B,H,tq], when has_lse */
  void *dout;               /* dO, the upstream gradient of o (member "do", docs/backward.md): dense
                               [B,H,tq,dv] in o's dtype, NULL when the case has none */
  /* Variant inputs (p.f.used; docs/variants.md), NULL when unused. Dense, C order. */
  void *bias;               /* [f.bias_b][f.bias_h][tq][tk] in f.bias_dtype */
  uint8_t *bool_mask;       /* [f.mask_b][f.mask_h][tq][tk], 1 = visible */
  float *alibi_slopes;      /* [heads], or [batch][heads] with f.alibi_per_batch */
  float *sinks;             /* [heads] */
  float *descale[3];        /* q, k, v: [batch][kv_heads] */
  uint8_t *dropout_mask;    /* AC_FEAT_DROPOUT: the keep-mask judged against, [B][H][tq][tk], 1 kept, 0 dropped
                               (member "dropout_mask"; docs/dropout.md) */
  struct ac_layout *lay;    /* serving layout (layout.h), NULL for a dense case */
  struct ac_quant *quant;   /* codes and scales of the quantized tensors (quant.h), NULL when p.quant names none */
} ac_case;

/* Zero the case, case_index -1, generator "external", tool_version PACKAGE_VERSION. */
void ac_case_init(ac_case *c);
/* Allocate dense q/k/v for c->p (zero-filled). Validates against the memory cap.
 * c must have come through ac_case_init (q/k/v are freed first when already set). */
int ac_case_alloc(ac_case *c, ac_err *e);
void ac_case_free(ac_case *c);
/* Deep copy. */
int ac_case_copy(ac_case *dst, const ac_case *src, ac_err *e);
/* dst's seed, case index, generator and params_json those of src (a case derived from src). */
void ac_case_copy_origin(ac_case *dst, const ac_case *src);
/* Index helpers into the dense tensors. */
static inline size_t ac_qidx(const ac_problem *p, int64_t b, int64_t h, int64_t i, int64_t t)
{ return (size_t)(((b * p->heads + h) * p->tq + i) * p->dk + t); }
static inline size_t ac_kidx(const ac_problem *p, int64_t b, int64_t kh, int64_t j, int64_t t)
{ return (size_t)(((b * p->kv_heads + kh) * p->tk + j) * p->dk + t); }
static inline size_t ac_vidx(const ac_problem *p, int64_t b, int64_t kh, int64_t j, int64_t t)
{ return (size_t)(((b * p->kv_heads + kh) * p->tk + j) * p->dv + t); }
static inline size_t ac_oidx(const ac_problem *p, int64_t b, int64_t h, int64_t i, int64_t t)
{ return (size_t)(((b * p->heads + h) * p->tq + i) * p->dv + t); }
static inline size_t ac_rowidx(const ac_problem *p, int64_t b, int64_t h, int64_t i)
{ return (size_t)((b * p->heads + h) * p->tq + i); }
/* Element (b, h, i, j) of the broadcast bias / boolean mask. */
static inline size_t ac_biasidx(const ac_problem *p, int64_t b, int64_t h, int64_t i, int64_t j)
{ return (size_t)((((p->f.bias_b > 1 ? b : 0) * p->f.bias_h + (p->f.bias_h > 1 ? h : 0)) * p->tq + i) * ac_bias_cols(p) + j); }
static inline size_t ac_bmaskidx(const ac_problem *p, int64_t b, int64_t h, int64_t i, int64_t j)
{ return (size_t)((((p->f.mask_b > 1 ? b : 0) * p->f.mask_h + (p->f.mask_h > 1 ? h : 0)) * p->tq + i) * ac_bias_cols(p) + j); }

/* Write the case (and o/lse when present) as NPZ; atomic (temp file + rename). */
int ac_case_write(const ac_case *c, const char *path, ac_err *e);
/* As ac_case_write, plus extra members: each an npy array (descr set, e.g. "<f4" for the oracle's
 * o_exact_f32 [B,H,tq,dv]) or raw bytes (descr ""). Names q, k, v, o, lse, meta.json are reserved.
 * Read extras back with ac_npz_open + ac_npz_read; ac_case_read ignores members it does not know. */
int ac_case_write_ex(const ac_case *c, const char *path, const ac_npz_member *extra, int nextra, ac_err *e);
/* Strict read: every problem gives a one-line message naming the file, and -1. */
int ac_case_read(ac_case *c, const char *path, ac_err *e);
/* The same from an open descriptor (ac_data_open...), which it takes over; label names it. */
int ac_case_read_fd(ac_case *c, int fd, const char *label, ac_err *e);
/* The same from bytes in memory; name appears in messages. */
int ac_case_read_buffer(ac_case *c, const void *data, size_t n, const char *name, ac_err *e);
/* The n bytes of meta.json text into c (casemeta.c; c as ac_case_init leaves it): strict, every
 * problem one line naming path, and -1. */
int ac_case_meta_read(ac_case *c, const char *text, size_t n, const char *path, ac_err *e);
/* Bytes of a dense tensor of the case (after a successful alloc/read). */
size_t ac_case_bytes(const ac_case *c, char tensor /* 'q','k','v','o' */);
/* Canonical hash of the case content, for the oracle cache and dedup: dtype, mask, shape, scale,
 * strides (all-zero read as contiguous) and the q/k/v bytes; not provenance, not o/lse. */
uint64_t ac_case_hash(const ac_case *c);

/* The worked examples: "tiny3", "andrea-120m". -1 if unknown. */
int ac_case_example(ac_case *c, const char *name, ac_err *e);
const char *const *ac_case_example_names(void);

#endif
