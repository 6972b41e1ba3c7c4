/* fuzz.h: generator families, value drawing, search, campaigns, minimizer and finding
 * signatures (layer 5). A generated case is a pure function of (family, seed, index, limits):
 * every random choice comes from the stream ac_rng(hash(seed, family), index). */
#ifndef AC_FUZZ_H
#define AC_FUZZ_H
#include <stdint.h>
#include <stdio.h>
#include "casefile.h"
#include "compare.h"
#include "harness.h"
#include "oracle.h"
#include "report.h"
#include "rng.h"
#include "verdict.h"

/* ---- limits a campaign imposes on every generator ---------------------------------- */
/* Shapes a kernel may not take (ac_gen_limits.shapes; an exec worker's "gqa", "dv-ne-dk",
 * "tq-ne-tk", "scale"): a generator never draws one the limits leave out. */
enum { AC_SHAPE_GQA = 1, AC_SHAPE_DV_NE_DK = 2, AC_SHAPE_TQ_NE_TK = 4, AC_SHAPE_SCALE = 8, AC_SHAPE_ALL = 15 };
/* A shape bucket (fuzz --shape-buckets): every dense case takes one of a campaign's few shapes,
 * so that a JIT-compiled kernel compiles each once. */
typedef struct {
  int64_t batch, heads, kv_heads, tq, tk, dk, dv;
} ac_shape_bucket;
#define AC_MAX_BUCKETS 64

#define AC_GEN_MAX_STORE 4
typedef struct {
  uint32_t dtypes;     /* bitmask of (1u << ac_dtype) the kernel accepts (0: f32 only) */
  uint32_t masks;      /* bitmask of (1u << ac_mask) (0: all three) */
  int64_t max_t;       /* longest tq or tk a long-T family may draw (16384 CPU, 131072 GPU) */
  int64_t max_elems;   /* cap on the elements of any one tensor */
  int64_t max_d;       /* largest head dim (dk and dv) */
  int no_strided;      /* 1: never ask for a strided layout */
  int no_nonfinite;    /* 1: never store NaN/inf (families that need them fall back to finite values) */
  uint32_t features;   /* AC_FEAT_... the kernel declares: variant families use no other (init: all) */
  int no_dense;        /* 1: the kernel takes no dense case (a layout-only kernel): only layout families */
  int backward;        /* 1: the kernel declares a backward: cases judge it too (init 1; probed) */
  uint32_t kv_formats; /* quantized formats (1u << AC_QF_..., quant.h) the kernel reads for k and v: every
                          family then draws quantized K and V for it (ac_fuzz_quantize); 0: none */
  uint32_t q_formats;  /* those it reads for q */
  int quant_only;      /* 1: the kernel takes quantized cases only */
  int params_q_dtype;  /* 1: the kernel takes the scale and a bias in Q's dtype: every case's scale and
                          bias are values of Q's dtype (ac_fuzz_params_q_dtype) */
  int32_t store_q[AC_GEN_MAX_STORE];   /* quantize-on-store (features AC_FEAT_QUANT_STORE): the quantizers the
                                          kernel stores with (quant.h), store_q[0 .. nstore) */
  int nstore;
  int store_only;      /* 1: the kernel takes quantize-on-store cases only */
  uint32_t shapes;     /* AC_SHAPE_... the kernel takes (init: all; probed) */
  int nbuckets;        /* > 0: dense cases take one of bucket[0 .. nbuckets-1] (ac_gen_buckets) */
  ac_shape_bucket bucket[AC_MAX_BUCKETS];
} ac_gen_limits;

void ac_gen_limits_init(ac_gen_limits *l);
/* The AC_SHAPE_ bits problem p uses. */
uint32_t ac_shapes_used(const ac_problem *p);
/* n shape buckets (at most AC_MAX_BUCKETS) drawn from seed within l (its dtypes, masks, sizes and
 * shapes) into l->bucket, l->nbuckets = n: distinct shapes of ac_draw_shape, tq and tk at most 512. */
void ac_gen_buckets(ac_gen_limits *l, uint64_t seed, int n);
/* The bucket of l nearest to p's shape (log2 distance over every dimension); -1 without buckets. */
int ac_bucket_nearest(const ac_gen_limits *l, const ac_problem *p);
/* p's shape within l before its tensors are allocated: the shapes l leaves out taken away (kv_heads
 * = heads, dv = dk, tk = tq, the default scale), then, with buckets and a dense case, the nearest
 * bucket's dimensions (a strided layout drawn for other dimensions becomes contiguous). The bucket's
 * index, or -1. ac_generate applies it to every family's case. */
int ac_gen_conform(ac_problem *p, const ac_gen_limits *l);

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

/* ---- score patterns at block edges (fuzz/families/patterns.c) ---------------------------------- */
enum { AC_PAT_NORMAL = 0, AC_PAT_TIES, AC_PAT_LARGE_V, AC_PAT_LATE, AC_PAT_CREEP, AC_PAT_DOMINANT,
       AC_PAT_SENTINEL_MASKED, AC_PAT_SENTINEL_BAND, AC_NPAT };
const char *ac_pattern_name(int pat);
/* A block (split) size 2^k, k in [lg_lo, lg_hi], not above tk unless 2^lg_lo is. */
int64_t ac_draw_block(ac_rng *r, int lg_lo, int lg_hi, int64_t tk);
/* A key at a block edge: m block - 1 or m block (below tk), or the last key (the remainder). */
int64_t ac_draw_edge_key(ac_rng *r, int64_t tk, int64_t block);
/* Keys j < ac_row_visible(p, i) are visible to query row i under p's mask. */
int64_t ac_row_visible(const ac_problem *p, int64_t i);
/* 1 when the first row with visible keys has masked keys too (sentinel_masked can be drawn). */
int ac_pat_has_masked(const ac_problem *p);
/* Key j of (b, kh) scoring s against Q rows of ones whose last channel is q_last. */
void ac_pat_set_score(ac_case *c, int64_t b, int64_t kh, int64_t j, double s, double q_last);
/* Fill Q, K, V of an allocated case with pattern pat, its structure at the edges of block:
 * late_max / creeping_max a staircase that moves the maximum at every block start (or end),
 * dominant one key at a block edge, ties the maximum on every block edge, large_v V toward the
 * dtype's range, sentinel_masked masked keys far above the visible ones, sentinel_band every
 * visible score where e^(s - sentinel) is subnormal, zero or has an overflowing reciprocal.
 * Records pattern, block, key and the pattern's knobs in pb. */
int ac_pat_apply(ac_case *c, ac_rng *r, int pat, int64_t block, ac_params *pb);

/* ---- families ------------------------------------------------------------------------ */
/* Draws the problem and the values of c (c->p is filled by the family, then the caller
 * allocates through ac_gen_alloc inside the family). Returns 0 or -1. */
typedef int (*ac_family_fn)(ac_case *c, ac_rng *r, const ac_gen_limits *l, ac_params *pb, ac_err *e);

enum { AC_FAM_COSTLY = 1,      /* long shapes: oracle on a row sample */
       AC_FAM_NONFINITE = 2 }; /* stores NaN/inf */

typedef struct {
  const char *name;
  const char *summary;   /* one line */
  const char *targets;   /* the docs/bugclasses.md §2 classes it hunts */
  ac_family_fn draw;
  unsigned flags;
  uint32_t feats;        /* AC_FEAT_... every case of the family uses (0: plain attention) */
  int (*usable)(const ac_gen_limits *l);   /* NULL, or 0 when no case can be drawn within l */
} ac_family;

const ac_family *ac_families(int *n);
const ac_family *ac_family_find(const char *name);
/* 1 when f can draw cases within l: the features it needs are in l->features (and its own
 * usable() agrees), and, when l->no_dense, it draws layout cases. A campaign draws no other family. */
int ac_family_usable(const ac_family *f, const ac_gen_limits *l);
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
/* Quantized K and V (and Q) for a kernel that declares formats (fuzz/families/gen_quant.c): half the
 * cases of every family (all of them for a kernel of quantized cases only) get a format the head
 * dims allow, a granularity, and one in four a block adversary, from a stream of their own; the
 * choice goes into pb. Nothing for a case that is quantized already or takes no quantization
 * (per-tensor dtypes, descales, strides). */
void ac_fuzz_quantize(ac_case *c, uint64_t seed, int64_t index, const ac_gen_limits *l, ac_params *pb);
int ac_gen_quant_usable(const ac_gen_limits *l);
/* For a kernel that takes the scale and a bias in Q's dtype (ac_gen_limits.params_q_dtype): the
 * case's scale becomes its rounding to Q's dtype (stored; the default stays when 1/sqrt(dk) is such
 * a value) and a bias is re-stored in Q's dtype, each value rounded to it (fuzz/families/params_qdtype.c). */
void ac_fuzz_params_q_dtype(ac_case *c, ac_params *pb);
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
AC_FAMILY_DECL(split_kv);
AC_FAMILY_DECL(scale);
AC_FAMILY_DECL(mixed);
AC_FAMILY_DECL(index_overflow);
AC_FAMILY_DECL(sentinel);
AC_FAMILY_DECL(window);
AC_FAMILY_DECL(softcap);
AC_FAMILY_DECL(alibi);
AC_FAMILY_DECL(bias);
AC_FAMILY_DECL(bool_mask);
AC_FAMILY_DECL(varlen_mix);
AC_FAMILY_DECL(page_table);
AC_FAMILY_DECL(decode);
AC_FAMILY_DECL(sinks);
AC_FAMILY_DECL(dropout);
AC_FAMILY_DECL(descale);
AC_FAMILY_DECL(variant_mix);
AC_FAMILY_DECL(mixed_dtypes);
AC_FAMILY_DECL(quant_blocks);
AC_FAMILY_DECL(quant_nonfinite);
/* fuzz/families/gen_mixed_dtypes.c: the dtype combinations the family draws (compute dtype, then
 * q, k, v, o), n of them; usable when one has its compute dtype in l->dtypes. */
const ac_dtype (*ac_mixed_dtype_combos(int *n))[5];
int ac_gen_mixed_dtypes_usable(const ac_gen_limits *l);
int ac_gen_variant_mix_usable(const ac_gen_limits *l);
int ac_gen_descale_usable(const ac_gen_limits *l);   /* a dtype below fp64 allowed */

/* ---- variant families (fuzz/families/vfam.c; the variant tensors come from src/core/vgen.c) ----------- */
struct ac_vspec_s;
/* One mutation of the attention variants of c (fuzz/engine/search_variants.c; nothing for a plain case):
 * a window width, the softcap, one slope, sink or descale, a bias row or element, mask bits.
 * The shape and the variant tensors' shapes stay. desc says what changed. */
void ac_mutate_variant(ac_case *c, ac_rng *r, double sigma, const ac_gen_limits *l, char *desc, size_t nd);
/* Reduce tq, then tk, until batch * heads * tq * tk (a bias or boolean mask) fits l->max_elems. */
void ac_vfam_clamp_pairs(ac_problem *p, const ac_gen_limits *l);
/* Allocate c for its problem and fill Q, K, V: a drawn value distribution, or (one case in
 * three) a score pattern of fuzz/families/patterns.c at the edges of a block of 16 to 128 keys. */
int ac_vfam_values(ac_case *c, ac_rng *r, ac_params *pb, ac_err *e);
/* Apply variant spec v (ac_vspec_apply, seeded from r), record it in pb ("variant" and every
 * knob) and validate the result against the memory cap. */
int ac_vfam_apply(ac_case *c, ac_rng *r, const struct ac_vspec_s *v, ac_params *pb, ac_err *e);
/* A bias dtype within the limits (binary64, binary32, binary16, bfloat16), half the time the
 * case's; the case's when the limits allow none of them. */
ac_dtype ac_vfam_bias_dtype(ac_rng *r, const ac_gen_limits *l, ac_dtype case_dtype);

/* ---- metamorphic checks (fuzz/engine/metamorphic.c): verdicts that need no oracle -------------- */
enum { AC_META_OFF = 0, AC_META_SOME = 1, AC_META_ALWAYS = 2 };
typedef struct {
  int checked;                    /* a transformed case ran and its rows were compared */
  int bad;                        /* some element beyond the tolerance (or NaN in one run only) */
  char transform[96];             /* the transformation */
  int64_t n_compared, n_bad;
  int64_t b, h, i, d;             /* worst element of the original case (-1: none) */
  double a, t;                    /* the kernel's value there, original and transformed run */
  double diff, tol, worst_ratio;  /* |a - t|, its tolerance, their ratio */
} ac_meta_result;
/* AC_META_SOME: cases judged on a row sample and 1 in 8 others (by case hash); never cases
 * beyond 2^26 elements. */
int ac_meta_selected(const ac_case *c, int mode);
/* Run k on one transformed case and compare its output with ra (the run of c). 0 (m->checked
 * says whether a comparison took place), -1 when the transformed case cannot be built. */
int ac_meta_check(const ac_kernel *k, const ac_run_opts *ro, const ac_case *c, const ac_precision *prec,
                  const ac_run_result *ra, ac_meta_result *m, ac_err *e);
/* The transformed case the check of c runs (plain dense cases; a layout case's are
 * metamorphic_layout.c's): 1 built into out, 0 when none applies, -1 when it cannot be built. */
int ac_meta_transformed(const ac_case *c, ac_case *out, ac_err *e);
/* Tolerances [heads][tq][dv] of every element of a dense batch-1 case of plain attention with
 * finite inputs (metamorphic.c's bound; 0 in an empty row): malloc'd. */
double *ac_meta_dense_tols(const ac_case *c, const ac_precision *prec);
/* Serving layouts (metamorphic_layout.c): a varlen batch equals one of its sequences run alone,
 * a paged cache equals the same keys packed densely (varlen); both within the tolerance above,
 * on every row, without the oracle. Same contract as ac_meta_check; m->b is the sequence, m->i
 * the query within it. */
int ac_meta_layout_check(const ac_kernel *k, const ac_run_opts *ro, const ac_case *c, const ac_precision *prec,
                         const ac_run_result *ra, ac_meta_result *m, ac_err *e);

/* Backward (fuzz/engine/metamorphic_grad.c, docs/backward.md "Fuzzing"): the kernel's backward
 * on one transformed case, without the oracle: dO times 2^k (linearity: 2^k times every gradient,
 * bit for bit where no value can underflow, for a deterministic kernel; within the budgets
 * otherwise) or the keys permuted among keys every row sees alike (dK, dV permuted alike, dQ
 * unchanged, within the budgets). */
typedef struct {
  int checked;                    /* a transformed case ran and its gradients were compared */
  int bad;                        /* some element beyond what is allowed */
  int exact;                      /* 1: bit-for-bit comparison (linearity, deterministic kernel) */
  char transform[128];            /* the transformation */
  int64_t n_compared, n_bad;
  int tensor;                     /* worst element: 0 dq, 1 dk, 2 dv, 3 dsinks (-1: none) */
  int64_t x, t;                   /* its row (dq) or column (dk, dv) and element, of the original run */
  double a, b;                    /* the original run's value there (times 2^k) and the transformed run's */
  double diff, tol, worst_ratio;  /* |a - b|, what is allowed (0: bit for bit), their ratio */
} ac_gmeta_result;
/* Runs the backward of k on one transformation of c (which carries the dO of run, the original
 * backward run, status OK) and compares. 0 (m->checked says whether a comparison took place),
 * -1 when the transformed case cannot be built. cls: the class the backward is judged in. */
int ac_meta_grad_check(const ac_kernel *k, const ac_run_opts *ro, const ac_case *c, const ac_precision *cls,
                       const ac_grad_run_result *run, ac_gmeta_result *m, ac_err *e);
/* 1 when the backward of c (with c->dout) stays inside the grad budget's model (eval_grad.c):
 * finite inputs, gradients far below the class's range, a finite W for every element. */
int ac_eval_grad_in_range(const ac_case *c, const ac_precision *cls);

/* ---- evaluating one case on the kernel under test --------------------------------------- */
typedef struct {
  ac_kernel *kernel;
  const char *kernel_spec;        /* as given on the command line (for reproducers) */
  const char *precision;          /* --precision override or NULL */
  ac_run_opts run;
  ac_compare_opts cmp;            /* prec is resolved per case from the dtype */
  ac_policies pol;
  int oracle_threads;
  int metamorphic;                /* AC_META_OFF, AC_META_SOME (default), AC_META_ALWAYS */
  int grad;                       /* 1: the kernel declares a backward; each case judges it too (eval_grad.c) */
  uint32_t grad_caps;             /* the features its backward takes (ac_kernel_backward_caps) */
  int rows_all;                   /* 1: the oracle and the comparison on every row (no ac_fuzz_oracle_rows sample) */
} ac_eval_ctx;

/* The row of the worst output element, per column (a window of at most AC_ROW_MAX columns
 * around the worst one): what the HTML report draws for a finding. */
#define AC_ROW_MAX 256
typedef struct {
  int n;                          /* columns stored (0: none) */
  int64_t b, h, i, d0;            /* the row and its first stored column */
  double exact[AC_ROW_MAX];       /* the oracle's binary64 value (NaN where undefined) */
  double kernel[AC_ROW_MAX];      /* the kernel's value */
  double W[AC_ROW_MAX];           /* the class's worst-case bound W of the element (NaN: none) */
} ac_eval_row;

typedef struct {
  uint32_t kinds;                 /* verdict kinds (bitmask 1u << ac_verdict_kind) */
  uint32_t kept;                  /* kinds whose policy is fail or warn: findings */
  int any_fail;                   /* a kind with policy fail */
  ac_report rep;
  double score;                   /* objective of the search: max err/E (output and LSE) */
  double err_w;                   /* max err/W (score and err_w: non-finite counts as 1e300, for ranking) */
  double max_err_w, max_err_e;    /* the same maxima for output: inf or nan kept */
  int64_t worst_i, worst_tq;      /* row of the worst element (-1: none) */
  ac_run_status status;
  int refused_by_run;             /* SKIP from the kernel's run() (ABI 5, a worker's refusal), not supports() */
  double oracle_s, kernel_s;
  ac_meta_result meta;            /* metamorphic check (meta.checked 0: none ran) */
  double meta_s;
  int grad_checked;               /* 1: the backward ran and was judged (GRAD-FAIL when it failed) */
  double grad_s;
  ac_gmeta_result gmeta;          /* metamorphic check of the backward (gmeta.checked 0: none ran) */
  ac_eval_row row;                /* the worst output element's row (row.n 0: none) */
  uint8_t grad_why[4];            /* the backward's dq, dk, dv, dsinks: 0 judged and right, else 1 + the ac_why of
                                     its worst element (AC_WHY_VALUE or AC_WHY_NONFINITE) */
  char not_started[512];          /* the kernel could not be started (AC_RUN_NOT_STARTED ...); "" when it was */
} ac_eval;

void ac_eval_ctx_init(ac_eval_ctx *x, ac_kernel *k, const char *spec);
/* Kernel (forked, time-limited), oracle, comparison. 0 on success (a verdict set in ev);
 * -1 when the tool itself failed (ev->kinds then holds ERROR). repeat: run up to that many more
 * times, comparing bits with the first run, until one differs (NONDETERMINISTIC). A dropout case's
 * dropout_mask becomes the kernel's, the one judged (docs/dropout.md), so that a finding holds it. */
int ac_eval_case(const ac_eval_ctx *x, const ac_case *c, int repeat, ac_eval *ev, ac_err *e);
/* The backward of c on a kernel with one (x->grad): dO from one of the campaign's patterns drawn
 * from the case hash (ac_eval_grad_pattern; c->dout when the case has one), the exact backward on
 * the rows and columns of ac_fuzz_oracle_rows, the grad judge; a GRAD-FAIL verdict in ev->rep when
 * it fails. Nothing for cases the backward is not judged on (ac_eval_grad_wanted), whose forward is
 * OUT-OF-DOMAIN, or whose inputs are not finite or whose gradients may leave the class's range. */
void ac_eval_grad(const ac_eval_ctx *x, const ac_case *c, const ac_precision *cls, ac_eval *ev);
int ac_eval_grad_wanted(const ac_eval_ctx *x, const ac_case *c);
const char *ac_eval_grad_pattern(const ac_case *c);
/* ev->kept and ev->any_fail from ev->kinds under x's policies. */
void ac_eval_policies(const ac_eval_ctx *x, ac_eval *ev);
/* The same with the oracle's result computed beforehand (pre; shared by several kernels). */
int ac_eval_case_pre(const ac_eval_ctx *x, const ac_case *c, const ac_oracle_result *pre, int repeat, ac_eval *ev,
                     ac_err *e);
/* The oracle as the fuzzer runs it (row sample for many rows, the case dtype, the mu list). */
int ac_eval_oracle(const ac_case *c, int threads, ac_oracle_result *r, ac_err *e);
/* Adds ev->row to a finding's report.json object as "worst_row" (nothing when row.n is 0). */
struct json_object;
void ac_eval_row_json(const ac_eval *ev, struct json_object *r);
/* The kernel's accepted dtypes and masks, probed on a tiny problem (exec kernels: all). */
void ac_eval_probe_limits(const ac_kernel *k, ac_gen_limits *l);
/* The variant features the kernel takes (l->features), each probed alone on a tiny problem of
 * a dtype and mask within l (exec-persistent kernels: after their declaration was read), and the
 * shapes it takes (l->shapes: GQA, dv != dk, tq != tk, an explicit scale) likewise. */
void ac_eval_probe_features(const ac_kernel *k, ac_gen_limits *l);

/* ---- signatures ---------------------------------------------------------------------------- */
/* "first", "last", "tile-edge", "interior" for row i of tq; "none" when i < 0. */
const char *ac_row_position(int64_t i, int64_t tq);
/* kernel__KIND__family__position with only [A-Za-z0-9._-]. kernel: a name, a plugin path (its
 * last component), or an exec:/exec-persistent: spec ("exec_" or "execp_", the command's first
 * 28 characters and a hash of the whole spec, so that two commands that differ anywhere get
 * different signatures). */
void ac_signature(const char *kernel, ac_verdict_kind k, const char *family, const char *pos, char *out, size_t n);
/* Severity rank for the summary (0 most severe). */
int ac_verdict_severity(ac_verdict_kind k);
/* The shape class of a finding's mechanism (docs/fuzzing.md "Distinct defects"): dtype, mask,
 * the layout ("paged seqs1 page64", "varlen seqs3-4"), the query and key lengths as classes (1,
 * 2, then the bracket (2^k, 2^(k+1)] as "65-128"; a layout's longest sequence), "batches" for
 * more than one batch, "gqa" or "heads" for more than one head, "+features" for variants. */
void ac_mechanism_shape(const ac_case *c, char *buf, size_t n);
/* The same from the parts (the report reads them from a stored size string). */
void ac_mechanism_shape_fmt(const char *dtype, const char *mask, int64_t batch, int64_t heads, int64_t kv_heads,
                            int64_t tq, int64_t tk, const char *layout, const char *features, char *buf, size_t n);
/* Short name of an ac_why (why an element is wrong): "value", "non-finite", ... ("" for none). */
const char *ac_why_name(int why);

/* ---- slicing and resizing cases ------------------------------------------------------------ */
typedef struct {
  int64_t b0, nb;      /* batches */
  int64_t h0, nh;      /* query heads: one head, or whole kv groups */
  int64_t i0, ni;      /* query rows */
  int64_t j0, nj;      /* keys */
  int64_t x0, ndk;     /* head dim of q/k */
  int64_t y0, ndv;     /* head dim of v */
} ac_slice;

void ac_slice_all(const ac_problem *p, ac_slice *s);
/* A sub-case (contiguous layout, same dtype, mask, scale rule, provenance). -1 on a bad slice. */
int ac_case_slice(const ac_case *c, const ac_slice *s, ac_case *out, ac_err *e);
/* c without [a, a + n) of one dimension (0 tq, 1 tk, 2 dk, 3 dv), the rest kept in order
 * (contiguous layout). -1 when the range is outside or would leave nothing. */
int ac_case_drop(const ac_case *c, int dim, int64_t a, int64_t n, ac_case *out, ac_err *e);
/* Change tq and tk (crop, or extend with copies of random existing rows/keys plus noise). */
int ac_case_resize_t(const ac_case *c, int64_t tq, int64_t tk, ac_rng *r, ac_case *out, ac_err *e);
/* c without the attention variant bit (an AC_FEAT_ bit; its tensors freed, its fields back to plain). */
int ac_case_without_feature(const ac_case *c, uint32_t bit, ac_case *out, ac_err *e);

/* ---- layout edits (fuzz/engine/layout_edit.c) -------------------------------------------- */
/* New sequences for a layout case: sequence b is the old sequence src[b] with tq[b] queries and
 * tk[b] keys (cache_seqlens when paged), pages of page_size (paged). */
typedef struct {
  int64_t nseq;
  const int64_t *src, *tq, *tk;
  int64_t page_size;
} ac_relayout;
/* The lengths of layout case c as they are (buf: 3 * nseq int64s holding src, tq, tk). */
void ac_relayout_of(const ac_case *c, ac_relayout *s, int64_t *buf);
/* c rebuilt with the sequences of s (pages shuffled from r, in order when r is NULL): tokens a
 * sequence keeps keep their values, tokens it gains repeat its last one; variants, provenance
 * kept (per-sequence bias, boolean-mask rows and ALiBi slopes follow their sequence). -1 with
 * one line (no query token left, a varlen batch without keys, ...). */
int ac_layout_relen(const ac_case *c, const ac_relayout *s, ac_rng *r, ac_case *out, ac_err *e);
/* One layout mutation of parent into child: one sequence's query or key length +-1, to a tile
 * or page edge or to 0, or (paged) pages split in two or merged pairwise. -1 when the result is
 * not a valid case within l. */
int ac_mutate_layout(const ac_case *parent, ac_rng *r, const ac_gen_limits *l, ac_case *child, char *desc, size_t nd,
                     ac_err *e);

/* ---- search: the elite pool and mutations -------------------------------------------------- */
typedef struct {
  ac_case c;
  double score;
  double sigma;                   /* relative step of value mutations: shrinks on failure */
  int tries;
  uint64_t hash;                  /* ac_case_hash of c */
  int64_t from;                   /* the campaign's case number that drew c; -1: a corpus case */
  char family[64];
} ac_elite;

typedef struct {
  ac_elite *e;
  int n, cap;
} ac_pool;

void ac_pool_init(ac_pool *p, int cap);
void ac_pool_free(ac_pool *p);
/* Offer a case: kept (copied) if it scores among the best; returns 1 if kept. from: the case
 * number that drew it (ac_elite.from); ac_pool_offer: -1, a corpus case. */
int ac_pool_offer(ac_pool *p, const ac_case *c, const char *family, double score);
int ac_pool_offer_from(ac_pool *p, const ac_case *c, const char *family, double score, int64_t from);
/* Pick a parent (biased to the best). NULL when empty. */
ac_elite *ac_pool_pick(ac_pool *p, ac_rng *r);
/* A mutated child of parent: values with relative step sigma, shape, mask, scale. Keeps the
 * dtype and the limits; desc names the mutation. */
int ac_mutate(const ac_case *parent, double sigma, ac_rng *r, const ac_gen_limits *l, ac_case *child, char *desc,
              size_t ndesc, ac_err *e);

/* ---- search policy: what case k is, and each family's share ---------------------------------
 * Case k is a fresh draw of one family (the stratified sweep: every family in turn, a costly one
 * one turn in AC_SEARCH_COSTLY_TURN) or, after the first sweep, with probability
 * 1 - AC_SEARCH_P_SWEEP a mutation of an elite of the pool. Each family's cases are capped:
 *     cases(F) <= cases / families + AC_SHARE_EARN * improvements(F) + AC_SHARE_SLACK
 * where an improvement is a case of F whose err/E beats F's best so far by more than the
 * factor 1 + AC_SHARE_GAIN. A family stuck at an err/E plateau earns nothing and is held to its
 * share; its mutations go to the elites of other families (or to a fresh draw). The counts are
 * kept per worker, so over J workers the bound holds with J * AC_SHARE_SLACK. */
#define AC_SEARCH_MAX_FAM 64
#define AC_SEARCH_P_SWEEP 0.4
#define AC_SEARCH_COSTLY_TURN 4
#define AC_SHARE_EARN 16
#define AC_SHARE_SLACK 8
#define AC_SHARE_GAIN 0.01
typedef struct {
  int n;                                  /* families in the campaign */
  int fam[AC_SEARCH_MAX_FAM];             /* their indices in ac_families() */
  int64_t cases[AC_SEARCH_MAX_FAM];       /* cases of each family (fresh draws and mutations) */
  int64_t improvements[AC_SEARCH_MAX_FAM];
  double best[AC_SEARCH_MAX_FAM];         /* each family's best err/E */
  int64_t total;
  int64_t sweep_n;                        /* the first sweep_n case numbers are all fresh draws */
} ac_search;

void ac_search_init(ac_search *s, const int *fam, int n, int64_t sweep_n);
/* Slot of a family name in the campaign, -1 when absent. */
int ac_search_slot(const ac_search *s, const char *name);
/* The most cases family slot f may have now (the rule above). */
int64_t ac_search_cap(const ac_search *s, int f);
/* Decide case k: returns the elite to mutate, or NULL and *slot the family to draw afresh. */
ac_elite *ac_search_next(ac_search *s, ac_pool *pool, int64_t k, ac_rng *r, int *slot);
/* Count a case of family slot f with objective score; 1 when it was an improvement. */
int ac_search_note(ac_search *s, int f, double score);
/* Stats lines for a campaign's totals (all workers): share.NAME, improvements.NAME,
 * share_cap.NAME and the rule. */
void ac_search_stats(FILE *f, const int *fam, int n, const int64_t *cases, const int64_t *improvements, int jobs);

/* ---- corpus: the best cases, seeding later runs ---------------------------------------------- */
void ac_corpus_save(const char *dir, const ac_case *c, const char *family, double score);
/* Offers up to max of the best corpus cases that fit the limits (dtypes, masks, variant features)
 * to the pool; returns how many joined. */
int ac_corpus_load(const char *dir, ac_pool *pool, const ac_gen_limits *l, int max);
/* Keeps the best keep files. */
void ac_corpus_prune(const char *dir, int keep);

/* ---- minimizer --------------------------------------------------------------------------- */
typedef int (*ac_holds_fn)(const ac_case *c, void *ctx);   /* 1: the finding still holds */
typedef struct {
  int max_evals;
  double max_seconds;
  int evals;                      /* out: evaluations used */
} ac_min_opts;
/* Shrink batch, heads, tq, tk, dk, dv (halves of every dimension, then dropped ranges of rows,
 * keys and columns, until nothing smaller holds), then simplify values while holds() stays 1.
 * holds() is called on c itself first (nothing shrinks when it fails there). out receives the
 * smallest case found (a copy of c when nothing shrank). hint_*: worst element. */
int ac_minimize(const ac_case *c, int64_t hint_b, int64_t hint_h, int64_t hint_i, int64_t hint_d, ac_holds_fn holds,
                void *ctx, ac_min_opts *mo, ac_case *out, ac_err *e);
/* How a case fails in one verdict kind (its failure mode): for each quantity the kernel computes
 * (o, lse; the backward's dq, dk, dv, dsinks) 0 when it does not fail in that kind, else 1 + the
 * ac_why of its worst failing element. Kinds without elements (CRASH, METAMORPHIC, ...) have none.
 * The minimizer keeps a finding's failure mode; defects are told apart by it (docs/fuzzing.md
 * "Defects"). */
enum { AC_QTY_O, AC_QTY_LSE, AC_QTY_DQ, AC_QTY_DK, AC_QTY_DV, AC_QTY_DSINK, AC_NQTY };
typedef struct {
  int kind;                       /* ac_verdict_kind */
  uint8_t why[AC_NQTY];
  double size;                    /* how far: err/W (FAIL), err/E (SUSPECT), non-finite as 1e300; 0 for other kinds */
} ac_fmode;
/* A case fails as before only with a size at least 1/AC_FMODE_SIZE_RATIO of the size it had: a
 * failure far smaller than before is another defect's, shown where the first one is gone. */
#define AC_FMODE_SIZE_RATIO 16.0
/* A FAIL's wrong value of o or of the LSE at most this far (err/W) beside one of the other quantity
 * AC_FMODE_SIZE_RATIO times further is left out of the mode (fmode.c). */
#define AC_FMODE_MARGINAL 2.0
/* The failure mode of kind k in ev (kind k need not be in ev->kinds: then every quantity is 0). */
void ac_fmode_of(const ac_eval *ev, ac_verdict_kind k, ac_fmode *m);
/* 1 when a and b are the same failure mode (sizes aside). */
int ac_fmode_eq(const ac_fmode *a, const ac_fmode *b);
/* ev fails in mode m, with a size comparable to m's: kind m->kind is in ev->kinds, its failure mode
 * is m's, and its size at least m->size / AC_FMODE_SIZE_RATIO. */
int ac_fmode_holds(const ac_eval *ev, const ac_fmode *m);
/* ev fails in kind m->kind with at least m's failing quantities, each for the same reason (others
 * may fail too), with a comparable size: what the minimizer keeps. */
int ac_fmode_covers(const ac_eval *ev, const ac_fmode *m);
/* a and b are one way to fail: the same kind, no quantity failing in both for different reasons,
 * and one failing in both (or none in either: CRASH, METAMORPHIC, ...). */
int ac_fmode_overlaps(const ac_fmode *a, const ac_fmode *b);

/* ---- defects: findings that fail the same way (engine/defect.c, defects.c; docs/fuzzing.md "Defects") ----
 * What a defect may need beyond plain attention; each is checked by judging the case without it. */
enum {
  AC_DF_CAUSAL = 1u << 0,        /* a causal mask (top-left, or bottom-right with tq == tk) */
  AC_DF_CAUSAL_BR = 1u << 1,     /* a bottom-right causal mask with tq != tk (the top-left one passes) */
  AC_DF_GQA = 1u << 2,           /* query heads sharing kv heads (the kv heads repeated for each pass) */
  AC_DF_HEADS = 1u << 3,         /* several heads, each with its own kv head (each head alone passes) */
  AC_DF_BATCHES = 1u << 4,
  AC_DF_DV_NE_DK = 1u << 5,
  AC_DF_SCALE = 1u << 6,         /* an explicit scale (1/sqrt(dk) passes) */
  AC_DF_NONFINITE = 1u << 7,     /* NaN or inf inputs (zeros in their place pass) */
  AC_DF_STRIDED = 1u << 8,
  AC_DF_QUANT = 1u << 9,         /* quantized tensors: kept as found, not checked */
  AC_DF_VARLEN = 1u << 10,       /* a varlen or paged layout (each sequence's dense case alone passes) */
  AC_DF_PAGED = 1u << 11,
  AC_DF_VARIANT_SHIFT = 16       /* the AC_FEAT_ variants (window, softcap, ...), shifted */
};
#define AC_DEFECT_MAX_EVALS 24          /* judgements of one fingerprint (none after a TIMEOUT); no clock */
#define AC_DEFECT_MAX_WORK 16777216.0   /* a case past this (rows x keys x (dk + dv)), on its sample, */
#define AC_DEFECT_MAX_ROWS 8192.0       /* or past this many rows, is sliced first (heads, a row), else judged once */
#define AC_DEFECT_MAX_SEQS 16           /* a layout trigger is checked on at most this many sequences */
typedef struct {
  ac_fmode mode;                  /* how the case fails */
  int attached;                   /* -1, or the finding's own kind (METAMORPHIC, GRAD-...) when mode is the FAIL of its
                                     forward on the case, which explains it */
  int finite;                     /* 1: attached as the FAIL of its case with zeros for its NaN and inf inputs */
  int smaller_v;                  /* 1: a non-finite o whose case with V scaled below 1 FAILs in value: that FAIL */
  uint32_t feats;                 /* AC_DF_ bits the failure needs (checked) or the case has (not checked) */
  int dtype_only;                 /* -1, or the dtype the failure needs: its values in a wider one pass */
  int checked;                    /* 1: each feature was taken away and the case judged again (0: the case
                                     too large, or the judgements or seconds spent first) */
  int reproduced;                 /* 0: the case did not fail in the finding's kind when judged again */
  int evals;                      /* judgements spent */
} ac_defect_fp;
/* The fingerprint of a finding of kind k whose case (its minimized form) is cs, judged on x: cs judged
 * again (every row), then without each feature it has in turn (a varlen or paged layout: one
 * sequence's dense case; strides, batches, GQA, heads, dv != dk,
 * the mask, the scale, non-finite inputs, each variant: a feature whose absence leaves the same
 * failure mode is dropped) and in a wider dtype; at most AC_DEFECT_MAX_EVALS judgements, none after
 * one whose kernel timed out, and no clock. A case past AC_DEFECT_MAX_WORK or AC_DEFECT_MAX_ROWS is
 * judged on its sample and sliced first (its strides, batches, heads, then the worst row alone);
 * one still past them keeps the rest (fp->checked 0). *reduced:
 * cs without what it does not need. -1 only when cs cannot be copied. */
int ac_defect_fingerprint(const ac_eval_ctx *x, const ac_case *cs, ac_verdict_kind k, ac_defect_fp *fp,
                          ac_case *reduced, ac_err *e);
/* The fingerprint of a finding of kind k on case cs from the evaluation ev that found it, nothing
 * judged again (a campaign that does not minimize): every feature the case has, not checked. */
void ac_defect_fp_of_eval(const ac_case *cs, const ac_eval *ev, ac_verdict_kind k, ac_defect_fp *fp);
/* 1 when cs, the case of a finding of kind k, judged again on x as its fingerprint judges it, fails
 * in a mode that overlaps fp's (ac_fmode_overlaps). */
int ac_defect_shows(const ac_eval_ctx *x, const ac_case *cs, ac_verdict_kind k, const ac_defect_fp *fp);
/* Findings of fingerprints a and b are one defect: both reproduced, overlapping modes, the same
 * needs and the same dtype (or none). */
int ac_defect_same(const ac_defect_fp *a, const ac_defect_fp *b);
/* The trigger findings of fingerprints a and b share (docs/fuzzing.md "Defects"): both reproduced, no
 * two different dtypes they need, and the features one needs all needed by the other (a bottom-right
 * mask counting as a causal one; quantized tensors never), at least one of them: those
 * features (AC_DF_ bits), else 0. Where one was not checked (its features are those its case has),
 * the trigger is the checked one's needs; never between two unchecked ones. */
uint32_t ac_defect_trigger(const ac_defect_fp *a, const ac_defect_fp *b);
/* 1 when the failure of cs goes with the features t: cs without them (ac_dcase_without; a varlen or
 * paged layout in t: each of its sequences' dense cases, at most AC_DEFECT_MAX_SEQS, without the
 * others) can be built and, judged again on x, no longer fails in its failure mode (a quantity of it right, or its size
 * 16 times smaller: ac_fmode_covers), which is mode, or (mode NULL) the one cs shows judged again as
 * a finding of kind k (as a fingerprint judges it: the forward's FAIL of a METAMORPHIC or backward
 * finding, ...). *evals counts the judgements. */
int ac_defect_gone_without(const ac_eval_ctx *x, const ac_case *cs, ac_verdict_kind k, const ac_fmode *mode, uint32_t t,
                           int *evals);
/* The identity two findings of one defect share: "FAIL o=value,lse=value needs=causal,gqa only=f16". */
void ac_defect_key(const ac_defect_fp *fp, char *buf, size_t n);
/* "causal", "gqa", ..., a variant's name, for one AC_DF_ bit. */
const char *ac_defect_feature_name(uint32_t bit);
/* report.json's "defect" member: {key, kind, fails: {o: why, ...}, needs: [...], only_dtype, through, ...} and back
 * (-1: not one). */
struct json_object *ac_defect_fp_json(const ac_defect_fp *fp);
int ac_defect_fp_parse(struct json_object *o, ac_defect_fp *fp);
/* The "trigger" by which a finding's "defect" member says it joined (AC_DF_ bits; 0: none). */
uint32_t ac_defect_trigger_parse(struct json_object *o);
int ac_defect_over_parse(struct json_object *o);   /* 1: joined as a wrong value that overflows */
/* One defect seen two ways, a wrong value that overflows (a sum kept in too narrow a type rounds and
 * overflows): 1 when a fails with a wrong value of o and b with o alone non-finite, 2 the other way
 * round, both needing the same features; else 0. ac_defect_overflows says whether they are: the
 * value failure's case cs with its keys repeated and V near the top of its range
 * (ac_dcase_large_v, 4 then 16 times) FAILs with o non-finite as over does (judgements added to
 * *evals). */
int ac_defect_overflow_pair(const ac_defect_fp *a, const ac_defect_fp *b);
int ac_fmode_o_overflows(const ac_fmode *m);   /* 1: a FAIL of o alone, non-finite (V cannot move the LSE) */
int ac_fmode_o_wrong(const ac_fmode *m);       /* 1: a FAIL or SUSPECT with a wrong value of o */
int ac_defect_overflows(const ac_eval_ctx *x, const ac_case *cs, const ac_fmode *over, int *evals);

/* Cases without one thing a defect may need (engine/defect_cases.c): batch or query head `at` alone
 * (what 0, 1); dv = dk (V cut to the dk columns from y, at most dv - dk, y < 0 the first; or padded
 * with zero columns; contiguous either way, a strided case's strides dropped with it); strides dropped; mask m; query row i
 * alone with the keys it sees, unmasked; the default scale (keep_scores: the scores kept, exactly
 * where that can be; *exact, when not NULL: 1 where they were kept exactly); zeros for NaN and inf inputs (largest: the dtype's largest finite value, of
 * their sign, NaN positive); the values in the wider dtype t; kv heads repeated for each query head. */
int ac_dcase_slice(const ac_case *c, int what, int64_t at, ac_case *out, ac_err *e);
int ac_dcase_dv_eq_dk(const ac_case *c, int64_t y, ac_case *out, ac_err *e);
int ac_dcase_contiguous(const ac_case *c, ac_case *out, ac_err *e);
int ac_dcase_mask(const ac_case *c, ac_mask m, ac_case *out, ac_err *e);
int ac_dcase_row_unmasked(const ac_case *c, int64_t i, ac_case *out, ac_err *e);
int ac_dcase_default_scale(const ac_case *c, int keep_scores, ac_case *out, int *exact, ac_err *e);
int ac_dcase_finite(const ac_case *c, int largest, ac_case *out, ac_err *e);
/* c with its explicit scale s replaced by the nearest of ±2^k times the default one (the sign of s):
 * other scores, a scale the default one can then replace exactly (-1: s is one already). */
int ac_dcase_snap_scale(const ac_case *c, ac_case *out, ac_err *e);
int ac_dcase_widen(const ac_case *c, ac_dtype t, ac_case *out, ac_err *e);
/* Sequence b of a layout case alone: its dense case (ac_layout_seq_case). A dense case of batch 1
 * as a varlen case of that one sequence, the form a kernel of layout cases only takes (-1 with one
 * line where it has none: batches, strides, a layout, a feature a layout does not take). c has a
 * serving layout beyond one varlen sequence (a paged cache, or several sequences). */
int ac_dcase_seq(const ac_case *c, int64_t b, ac_case *out, ac_err *e);
int ac_dcase_as_varlen(const ac_case *c, ac_case *out, ac_err *e);
int ac_dcase_layout_kept(const ac_case *c);
/* A case cand built (rc 0) from layout case `from` that lost the layout: given it again where it
 * has the same tokens (a head cut or repeated, a value edited), else freed and -1; rc otherwise. */
int ac_dcase_keep_layout(const ac_case *from, int rc, ac_case *cand);
int ac_dcase_expand_kv(const ac_case *c, ac_case *out, ac_err *e);
/* c with V times 2^-e, its largest |V| in [1/2, 1) (a dense case with finite V of which some |V| >= 1,
 * a quantized V through its scales where each stays exact; else -1): where a wrong value
 * overflowed, the same defect with room to show as a value. */
int ac_dcase_small_v(const ac_case *c, ac_case *out, ac_err *e);
/* c with its keys (and values) repeated r times over, key j being key j mod tk: the same exact output
 * (its LSE plus ln r), from r times as many terms (a dense case of plain values, no mask, no
 * variants; else -1): where a sum kept too narrow overflowed on few terms, its rounding shown on more. */
int ac_dcase_repeat_keys(const ac_case *c, int r, ac_case *out, ac_err *e);
/* c with its keys repeated r times (ac_dcase_repeat_keys) and every V made |V| times 2^e, its
 * largest a quarter to a half of the top of its dtype's range (a dtype of which a correct kernel's
 * binary32 sums of tk r values cannot overflow: binary16, fp8; else -1): o, exactly a weighted mean
 * of those values, is well inside the range, while a sum of them kept in the dtype itself (r times
 * the weights' sum) leaves it. */
int ac_dcase_large_v(const ac_case *c, int r, ac_case *out, ac_err *e);
/* c without every feature of t (AC_DF_ bits) it has: contiguous, batch 0, kv heads repeated (else
 * query head 0), query head 0, the default scale (the scores kept where it can be), dv = dk, a
 * bottom-right mask top-left (AC_DF_CAUSAL_BR) or no mask (AC_DF_CAUSAL), zeros for NaN and inf,
 * each variant left out. -1 when one cannot be taken away. */
int ac_dcase_without(const ac_case *c, uint32_t t, ac_case *out, ac_err *e);
int ac_dcase_strided(const ac_case *c);     /* 1: c presents strided tensors */
int ac_dcase_nonfinite(const ac_case *c);   /* 1: a dense c holds NaN or inf in q, k or v (a quantized one's values) */
/* The defects a directory's findings record (report.json "defect"), by id. */
typedef struct {
  int id;
  char kernel[2048];              /* the kernel_spec of its findings */
  ac_defect_fp fp;                /* its first finding's, failing in every way one of its findings does */
  int nfind, nfam, fail;          /* its findings, their families, 1: one of them has policy fail */
  char families[1024];            /* comma list, in the order found */
  char rep[256], rep_file[16];    /* its best finding (the smallest case of those that fail in their own
                                     way, else of any) and the file that shows it */
  int rep_derived;                /* 1: that finding's failure is derived (through another check, its
                                     finite or smaller-V case, joined by a trigger, or the overflow of a
                                     wrong value) */
  int overflowed;                 /* 1: a wrong value of o and its overflow joined in it */
  ac_verdict_kind rep_kind;       /* that finding's kind */
  char rep_size[200];
  int64_t rep_elems;
  double first_s;                 /* found_after_s of its first finding */
} ac_defect_info;
/* A defect whose finding failed again when judged again (its fingerprint reproduced). One that did
 * not (a crash, race or timeout that did not recur) stays listed, apart, and is not counted. */
static inline int ac_defect_confirmed(const ac_defect_info *d) { return d->fp.reproduced; }
typedef struct {
  ac_defect_info *v;
  int n, cap;
  int unassigned;                 /* findings without a defect (stored by an older version, or not assigned yet) */
} ac_defect_list;
int ac_defects_read(const char *dir, ac_defect_list *l, ac_err *e);
/* The confirmed defects of l (ac_defect_confirmed), and into *nfail those of them with a finding of
 * policy fail. */
int ac_defects_confirmed(const ac_defect_list *l, int *nfail);
void ac_defects_free(ac_defect_list *l);
/* Adds finding sig (its parsed report.json) to the defect its "defect" member names; -1 when it names none. */
int ac_defects_note(ac_defect_list *l, const char *sig, struct json_object *report);
/* DIR/defects.json (engine/defects_index.c): each defect's id, key, description, findings, families,
 * its case and repro.sh, its kernel and fingerprint. Written from l; read back into l (-1: none, or
 * not an index); rebuilt from the findings (*out: the defects, when not NULL). */
int ac_defects_index_write(const char *dir, const ac_defect_list *l, ac_err *e);
int ac_defects_index_read(const char *dir, ac_defect_list *l);
int ac_defects_rebuild(const char *dir, ac_defect_list *out, ac_err *e);
/* "o value and the LSE value on 1 query x 65 keys (dk 1, dv 1, f32); needs causal" (size: the case's
 * ac_case_size_str). */
void ac_defect_words(const ac_defect_fp *fp, const char *size, char *buf, size_t n);
/* How findings are assigned: lock/unlock (may be NULL) around choosing an id and writing it, so that
 * concurrent workers open one defect each; the judgements of each defect's case are remembered. */
#define AC_DEFECT_CACHE 256
typedef struct {
  void (*lock)(void *arg), (*unlock)(void *arg);
  void *arg;
  struct json_object *recorded;   /* not judged again (x NULL): the finding's fingerprint, recorded elsewhere */
  struct { int id, ok, over; uint32_t trig; char rep[256]; } cache[AC_DEFECT_CACHE];   /* trig 0, over 0: fails as
                                     its fingerprint says; trig: the failure goes with those features; over:
                                     with V near the top of its range, it overflows */
  int ncache;
} ac_defect_env;
typedef struct {
  int id;                         /* the finding's defect */
  int kind;                       /* the verdict kind of its failure mode */
  int is_new;                     /* 1: it opened the defect */
  int reproduced;                 /* 1: the finding failed again when judged again (its defect is confirmed) */
  int evals;                      /* judgements of its fingerprint */
  char key[700];
} ac_defect_result;
/* Assigns finding sig of dir (its minimized.npz, else case.npz) to a defect: its fingerprint on x,
 * the case reduced to what it needs stored as minimized.npz (unless the finding's kind is explained
 * by a forward FAIL), then the first defect of dir with the same kernel and fingerprint whose own
 * case fails the same way when judged again on x, else a new one (x NULL: the fingerprint
 * env->recorded, joined without judging). Writes report.json's "defect" and DIR/defects.json. A
 * finding assigned already keeps its defect. 0 or -1 with e. */
int ac_defect_assign(const char *dir, const char *sig, const ac_eval_ctx *x, ac_defect_env *env, ac_defect_result *res,
                     ac_err *e);
/* Every finding of dir without a defect (a merge's, engine/defects_merge.c) assigned as above: judged
 * again on its recorded kernel (kernel_override, trust: as ac_finding_kernel_of) when rerun, else by
 * the fingerprint its shard recorded ("shard_defect"). *nassigned: how many. -1 with the first
 * failure in e (the others are still assigned). */
int ac_defects_assign_all(const char *dir, const char *kernel_override, int trust, int rerun, int *nassigned, ac_err *e);
/* "BxHxKVHxTQxTKxDKxDV dtype mask" and the total elements of q, k, v. */
void ac_case_size_str(const ac_case *c, char *buf, size_t n);
int64_t ac_case_elems(const ac_case *c);
/* Multiply-adds of the oracle on every row of c: rows x keys x (dk + dv). */
double ac_case_oracle_work(const ac_case *c);

/* ---- campaigns ------------------------------------------------------------------------------ */
typedef struct {
  const char *kernel_spec;
  const char *out_dir;
  const char *corpus_dir;         /* NULL: OUT/corpus */
  double time_s;                  /* 0: none */
  int64_t max_cases;              /* 0: none */
  int jobs;
  uint64_t seed;
  int resume;
  int shard_i, shard_n;           /* 0/1 when not sharded */
  char families[1024];            /* comma list, "" = all */
  const char *precision;
  const char *empty_rows;         /* --empty-rows or NULL */
  const char *alibi_lse;          /* --alibi-lse ("abi" or "fa2") or NULL: the kernel's declaration */
  char policies[1024];            /* ';'-separated KIND=POLICY list as given */
  ac_gen_limits lim;
  int dtypes_given;
  double timeout_s;
  int minimize;
  double min_seconds;             /* 0: no clock (the default; a minimization is bounded by min_evals) */
  int min_evals;                  /* judgements per minimization (default 200) */
  int live;                       /* -1 auto (tty), 0 off, 1 on */
  int quiet;
  int repeat_every;               /* run every Nth case twice (NONDETERMINISTIC); 0 off */
  int stop_on_fail;               /* stop at the first finding with policy fail */
  int log_cases;                  /* one log.jsonl event per case */
  int no_backward;                /* --no-backward: the forward only (lim.backward 0 after the probe) */
  int allow_all_skipped;          /* a campaign that judged no case exits 0, not AC_EXIT_NOTHING_JUDGED */
  double stats_every;
} ac_campaign_opts;

void ac_campaign_opts_init(ac_campaign_opts *o);
/* Takes DIR/lock, held with flock by the one process writing a campaign directory (a campaign's
 * supervisor, merge). 0: taken (*fd holds it, close-on-exec; *prev: the pid a killed holder left
 * in the file, 0 if none). 1: held by another process (*prev: its pid, 0 if unknown). -1: error. */
int ac_campaign_lock(const char *dir, int *fd, long *prev, ac_err *e);
/* Releases it at a clean end (the pid is cleared first). */
void ac_campaign_unlock(int fd);
/* Removes what killed runs left: findings/.tmp-* directories and *.tmp.PID[.N] files in DIR,
 * findings/, findings/<sig>/, errors/, corpus/ and seeds/ whose PID is no longer running; how many. */
int ac_campaign_clean_tmp(const char *dir);
/* Runs a campaign; returns the exit code (0, 1 a fail-policy finding, 2 usage, 3 internal, 4
 * AC_EXIT_NOTHING_JUDGED: no case of the campaign was judged, 130 / 143 stopped by SIGINT / SIGTERM). */
int ac_campaign_run(ac_campaign_opts *o);

/* Findings of a campaign directory, ranked (severity, then err/W), printed. */
void ac_findings_summary(const char *dir, FILE *f, int max_lines);
/* The HTML report of a campaign directory (fuzz/report/report_html.c): DIR/report.html, or out when
 * not NULL (its links to the findings' files then use DIR's absolute path). -1 with a message
 * when dir is not a campaign directory or the file cannot be written. */
int ac_report_html(const char *dir, ac_err *e);
int ac_report_html_to(const char *dir, const char *out, ac_err *e);
/* Store a finding directory atomically: findings/<sig>/{case.npz, report.json, repro.sh}.
 * 1 stored, 0 already present, -1 error. */
int ac_finding_store(const char *dir, const char *sig, const ac_case *c, const char *report_json, ac_err *e);
/* The kernel spec to replay finding directory fdir on: override when given; else the one its
 * report.json records if that is a built-in kernel, or an exec: command and trust is set. A
 * recorded plugin path is never loaded (it is named in the message). 0 or -1 with message. */
int ac_finding_kernel(const char *fdir, const char *override, int trust, char *spec, size_t n, ac_err *e);
/* ---- findings directories as data (engine/findings_dir.c) ----------------------------
 * Whoever wrote a findings directory, what is read of it is checked first: no link followed at
 * any level, only regular files of a finding's names and sizes (report.json at most
 * AC_FINDING_JSON_MAX bytes and a JSON object whose signature, when it names one, is its
 * directory's name; case.npz and minimized.npz at most the memory cap, zip files); repro.sh is
 * never read but written from report.json. */
#define AC_FINDING_JSON_MAX (1u << 20)
struct json_object;
typedef struct {
  char sig[256];              /* the directory's name, a signature */
  char path[4400];            /* DIR/findings/SIG, escaped, for messages */
  int dirfd;                  /* the directory, opened without following a link */
  struct json_object *report; /* report.json */
  int has_min;                /* minimized.npz is there and passes the checks */
  char min_why[512];          /* why a minimized.npz there does not (empty: none there, or it does) */
} ac_finding_dir;
/* 1 when name can be a finding's (a signature: letters, digits, '.', '_', '+', '-'; no leading '.'). */
int ac_finding_name_ok(const char *name);
/* fd (from ac_data_open...) starts as a zip file does; -1 with "label: not a case file". */
int ac_case_file_check(int fd, const char *label, ac_err *e);
/* Opens DIR/findings: DIR as named, findings/ itself never through a link. fd, or -1 with e. */
int ac_findings_open(const char *dir, ac_err *e);
/* Opens and checks finding NAME of the findings directory fd (findings_path names it in
 * messages): 0, or -1 with one line (the entry and why) in e. */
int ac_finding_dir_open(int findings_fd, const char *findings_path, const char *name, ac_finding_dir *f, ac_err *e);
void ac_finding_dir_close(ac_finding_dir *f);
/* Calls fn for each finding of DIR/findings that passes the checks, in name order (names starting
 * with '.' are temporaries, left alone); each other entry is skipped with one line on warn
 * ("attncheck WHO: skipped PATH: why"; warn NULL: silently). fn's first nonzero answer, or 0;
 * -1 with e when DIR/findings cannot be opened. */
int ac_findings_each(const char *dir, FILE *warn, const char *who, int (*fn)(void *ctx, ac_finding_dir *f), void *ctx,
                     ac_err *e);
/* One line on warn per entry of f's directory that is no file of a finding, and for a
 * minimized.npz that does not pass the checks. */
void ac_finding_dir_extras(const ac_finding_dir *f, FILE *warn, const char *who);
/* The names in directory fd but "." and "..", sorted (ac_dir_names_free); NULL when unreadable. */
char **ac_dir_names(int fd, int *n);
void ac_dir_names_free(char **v, int n);
/* fdir/repro.sh of finding sig from its parsed report.json: `replay` of the recorded kernel_spec on
 * its directory, every word quoted, after the environment its "env" records ({NAME: value or
 * null}: export NAME='value' or unset NAME; names that are no variable names, and ATTNCHECK, left
 * out). 0 or -1 with a message. */
int ac_finding_write_repro(const char *fdir, const char *sig, struct json_object *report, ac_err *e);
/* The kernel spec to replay on, as ac_finding_kernel, from a finding's parsed report.json
 * (label names it in messages). */
int ac_finding_kernel_of(struct json_object *report, const char *label, const char *override, int trust, char *spec,
                         size_t n, ac_err *e);

/* What replay's command line gives over a finding's recorded options (NULL, 0: the recorded ones,
 * which themselves override the kernel's declarations where the campaign gave them). */
typedef struct {
  const char *kernel;       /* --kernel (ac_finding_kernel's override) */
  int trust;                /* --trust-recorded-kernel */
  const char *precision;    /* --precision */
  const char *empty_rows;   /* --empty-rows */
  const char *policies;     /* --policy KIND=P, ';'-separated: applied after the recorded ones */
  double timeout_s;         /* --timeout */
} ac_replay_opts;

/* What a finding's report.json records to judge it again (label names it in messages): the kernel of
 * ac_finding_kernel_of resolved, and its evaluation context with the recorded precision, policies,
 * empty-row convention, ALiBi LSE convention and time limit, under what ro gives over them (NULL: the
 * recorded ones). 0 or -1 with e; ac_finding_ctx_free releases the kernel. */
typedef struct {
  char spec[2048], prec[512];
  ac_kernel *kernel;
  ac_eval_ctx x;
} ac_finding_ctx;
int ac_finding_eval_ctx(struct json_object *report, const char *label, const ac_replay_opts *ro, ac_finding_ctx *fc,
                        ac_err *e);
void ac_finding_ctx_free(ac_finding_ctx *fc);

/* Re-evaluate a finding directory (its minimized case when present, else case.npz) on the kernel
 * of ac_finding_kernel; prints one line per case; returns the exit code contribution (1 if a
 * fail-policy kind holds), -1 with message when it cannot run. */
int ac_replay_finding(const char *fdir, const ac_replay_opts *ro, FILE *out, uint32_t *kinds_out, ac_err *e);

/* One line describing an evaluation (kinds, err/W, err/E, worst element). */
void ac_eval_print(FILE *f, const char *label, const ac_case *c, const ac_eval *ev);

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
