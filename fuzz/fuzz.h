/* fuzz.h: generator families, value drawing, search, campaigns, minimizer and finding
 * signatures (layer 5). A generated case is a pure function of (family, seed, index, limits):
 * every random choice comes from the stream ac_rng(hash(seed, family), index). */
#ifndef AC_FUZZ_H
#define AC_FUZZ_H
#include <stdint.h>
#include <stdio.h>
#include "casefile.h"
#include "rng.h"

/* ---- limits a campaign imposes on every generator ---------------------------------- */
typedef struct {
  uint32_t dtypes;     /* bitmask of (1u << ac_dtype) the kernel accepts (0: f32 only) */
  uint32_t masks;      /* bitmask of (1u << ac_mask) (0: all three) */
  int64_t max_t;       /* longest tq or tk a long-T family may draw (16384 CPU, 131072 GPU) */
  int64_t max_elems;   /* cap on the elements of any one tensor */
  int no_strided;      /* 1: never ask for a strided layout */
  int no_nonfinite;    /* 1: never store NaN/inf (families that need them fall back to finite values) */
} ac_gen_limits;

void ac_gen_limits_init(ac_gen_limits *l);

/* ---- params: a JSON object recording a family's knobs ------------------------------ */
typedef struct {
  char *buf;
  size_t len, cap;
} ac_params;

void ac_params_init(ac_params *pb);
void ac_params_int(ac_params *pb, const char *key, int64_t v);
void ac_params_dbl(ac_params *pb, const char *key, double v);   /* hex float string, exact */
void ac_params_str(ac_params *pb, const char *key, const char *v);
/* Returns the finished object text (malloc'd) and resets pb. */
char *ac_params_finish(ac_params *pb);
void ac_params_free(ac_params *pb);

/* ---- value distributions: exponent band and value class ---------------------------- */
typedef enum {
  AC_VAL_NORMAL = 0,   /* scale * N(0,1) */
  AC_VAL_UNIFORM,      /* scale * U(-1,1) */
  AC_VAL_BAND,         /* sign * m * 2^e, m in [1,2), e uniform in [emin, emax], times scale */
  AC_VAL_INT,          /* integers in [-imax, imax], times scale */
  AC_VAL_CONST         /* scale */
} ac_val_kind;

typedef struct {
  ac_val_kind kind;
  double scale;
  int emin, emax;      /* AC_VAL_BAND */
  int imax;            /* AC_VAL_INT */
  int positive;        /* 1: magnitudes only */
  /* value classes mixed in: probability of ±0, of a subnormal of the dtype, of a value
   * near the dtype's overflow threshold */
  double p_zero, p_sub, p_big;
} ac_valdist;

void ac_valdist_normal(ac_valdist *v, double scale);
/* One value of the distribution, already representable in dtype t (rounded to nearest). */
double ac_draw_value(ac_rng *r, ac_dtype t, const ac_valdist *v);
/* Fill n dense elements. */
void ac_fill(ac_rng *r, ac_dtype t, void *base, size_t n, const ac_valdist *v);
/* Describe a distribution in params under key prefix. */
void ac_params_valdist(ac_params *pb, const char *prefix, const ac_valdist *v);
/* A distribution drawn at random by exponent band and class (normal, uniform, band, int,
 * with occasional zeros, subnormals); moderate magnitude so scores stay in range. */
void ac_draw_valdist(ac_rng *r, ac_dtype t, ac_valdist *v);

/* ---- shapes -------------------------------------------------------------------------- */
/* A length drawn mostly small (throughput), often at tile edges (2^k ± 1, 16m ± 1 ...),
 * occasionally log-uniform up to max. */
int64_t ac_draw_len(ac_rng *r, int64_t max);
/* A length at a tile edge: 2^k ± 1, multiple of 16/32/64/128 ± 1, or below a tile. */
int64_t ac_draw_tile_len(ac_rng *r, int64_t max);
/* A head dim: common (64, 128, 32) often, odd and large (1, 3, 59, 111, 256) sometimes. */
int64_t ac_draw_head_dim(ac_rng *r);
ac_dtype ac_draw_dtype(ac_rng *r, const ac_gen_limits *l);
ac_mask ac_draw_mask(ac_rng *r, const ac_gen_limits *l);
/* A full default shape into p: dtype, mask, batch 1-2, heads 1-4 (GQA sometimes), lengths
 * and dims as above, default scale; clamped to the limits. */
void ac_draw_shape(ac_rng *r, const ac_gen_limits *l, ac_problem *p);
/* Reduce tq/tk (then batch/heads) until every tensor fits l->max_elems. */
void ac_clamp_shape(ac_problem *p, const ac_gen_limits *l);
/* Record the shape in params. */
void ac_params_shape(ac_params *pb, const ac_problem *p);
/* Strided layout with gaps (padding in the d and t dimensions, or a heads-major order). */
void ac_draw_strides(ac_rng *r, ac_problem *p);

/* ---- families ------------------------------------------------------------------------ */
/* Draws the problem and the values of c (c->p is filled by the family, then the caller
 * allocates through ac_gen_alloc inside the family). Returns 0 or -1. */
typedef int (*ac_family_fn)(ac_case *c, ac_rng *r, const ac_gen_limits *l, ac_params *pb, ac_err *e);

enum { AC_FAM_COSTLY = 1,      /* long shapes: oracle on a row sample */
       AC_FAM_NONFINITE = 2 }; /* stores NaN/inf */

typedef struct {
  const char *name;
  const char *summary;   /* one line */
  const char *targets;   /* the BUGCLASSES.md rows it hunts */
  ac_family_fn draw;
  unsigned flags;
} ac_family;

const ac_family *ac_families(int *n);
const ac_family *ac_family_find(const char *name);
/* Parses "a,b,c" into a list of family indices; -1 with message on an unknown name. */
int ac_family_parse_list(const char *list, int *idx, int *n, int max, ac_err *e);
/* Allocates c's tensors for c->p (after validating it). */
int ac_gen_alloc(ac_case *c, ac_err *e);
/* Dense element counts of c (aborts on an invalid problem: families only build valid ones). */
ac_counts ac_case_counts(const ac_case *c);
/* Fill q, k, v from three distributions (NULL leaves a tensor as it is). */
void ac_fill_qkv(ac_case *c, ac_rng *r, const ac_valdist *q, const ac_valdist *k, const ac_valdist *v);
/* Generate case (family, seed, index): fills provenance (seed, index, generator, params). */
int ac_generate(const ac_family *f, uint64_t seed, int64_t index, const ac_gen_limits *l, ac_case *c, ac_err *e);
/* Oracle row selection for a case: NULL (all rows) or "edges+K" for costly shapes. */
const char *ac_fuzz_oracle_rows(const ac_case *c);

/* Family declarations (one per file fuzz/gen_NAME.c). */
#define AC_FAMILY_DECL(n) int ac_gen_##n(ac_case *c, ac_rng *r, const ac_gen_limits *l, ac_params *pb, ac_err *e)
AC_FAMILY_DECL(normal);
AC_FAMILY_DECL(uniform);
AC_FAMILY_DECL(small_int);
AC_FAMILY_DECL(large_mag);
AC_FAMILY_DECL(neg_logits);
AC_FAMILY_DECL(large_v);
AC_FAMILY_DECL(tiny);
AC_FAMILY_DECL(zero_q);
AC_FAMILY_DECL(zero_k);
AC_FAMILY_DECL(ties);
AC_FAMILY_DECL(dominant);
AC_FAMILY_DECL(late_max);
AC_FAMILY_DECL(outlier);
AC_FAMILY_DECL(v_cancel);
AC_FAMILY_DECL(masked_rows);
AC_FAMILY_DECL(nonfinite);
AC_FAMILY_DECL(tile_edge);
AC_FAMILY_DECL(tq_ne_tk);
AC_FAMILY_DECL(head_dim);
AC_FAMILY_DECL(gqa);
AC_FAMILY_DECL(per_head);
AC_FAMILY_DECL(strided);
AC_FAMILY_DECL(long_t);
AC_FAMILY_DECL(scale);
AC_FAMILY_DECL(mixed);

/* Helpers shared by families: set one element of a dense tensor from a binary64 value. */
/* A finite x beyond the dtype's range saturates (only explicit infinities are stored as such). */
static inline void ac_set(ac_dtype t, void *base, size_t i, double x)
{
  double m = ac_dtype_get(t)->max_finite;
  if (x > m && x <= 1.7976931348623157e308) x = m;
  if (x < -m && x >= -1.7976931348623157e308) x = -m;
  ac_store_bits(t, base, i, ac_encode_f64(t, x));
}
static inline double ac_get(ac_dtype t, const void *base, size_t i) { return ac_load(t, base, i); }

#endif
