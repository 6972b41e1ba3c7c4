/* attncheck.h — libattncheck, the attncheck library (installed as <attncheck/attncheck.h>;
 * link with `pkg-config --libs attncheck`). API version 1.
 *
 * What the attncheck command does to judge an attention kernel's output, as functions: describe
 * a problem (shapes, dtypes, strides, mask, scale, variants, serving layouts) with the kernel
 * ABI's own attncheck_problem and attncheck_tensors (<attncheck/kernel.h>: the structs a plugin
 * kernel is handed), run the exact oracle on chosen rows, judge a kernel's o and LSE (or dQ, dK,
 * dV and dσ) against it under a precision class, and read the verdict, err/W, err/E, the worst
 * element and its explanation. `attncheck compare` is a client of these functions, and `attncheck
 * check` judges with the same comparison, so a result here is the one the command prints.
 *
 * Conventions:
 *   - every public name starts with attncheck_; a function returns 0 (or a handle) on success and
 *     -1 (or NULL) on failure, with a one-line message in attncheck_ctx_error(ctx);
 *   - structs the caller fills start with struct_size (set it to sizeof the struct as you were
 *     built; fields past it read as zero), so a later version adds fields without breaking you;
 *   - no global state: a context holds the options and the last error; two contexts (in two
 *     threads, say) share nothing but the on-disk oracle cache, whose entries are written
 *     atomically. One context, and a case with its results, are used by one thread at a time;
 *   - tensors are read, never written, and copied: a case does not keep the caller's pointers;
 *   - the library also exports symbols named ac_*: they are the command's internals, with no
 *     stability promise; do not call them.
 */
#ifndef ATTNCHECK_H
#define ATTNCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <attncheck/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNCHECK_API_VERSION 1

/* ATTNCHECK_API_VERSION of the library loaded, and its package version ("0.1.0"). */
int attncheck_api_version(void);
const char *attncheck_version(void);

typedef struct attncheck_ctx attncheck_ctx;       /* options and the last error */
typedef struct attncheck_case attncheck_case;     /* a problem, its inputs and, once computed, its oracle */
typedef struct attncheck_result attncheck_result; /* one judgement */

/* A context with the command's defaults (the dtype's standard precision class, the class budget,
 * every row, the oracle cache of $ATTNCHECK_CACHE or ~/.cache/attncheck/oracle). NULL only when
 * out of memory. */
attncheck_ctx *attncheck_ctx_new(void);
void attncheck_ctx_free(attncheck_ctx *ctx);
/* The message of the last call that failed on ctx ("" when none did). */
const char *attncheck_ctx_error(const attncheck_ctx *ctx);
/* Sets one option by the name the command gives it, with the same values (see `attncheck check
 * --help`): "precision" (a class, or DTYPE=CLASS,...), "budget" (class, baseline is refused: it
 * needs a kernel run, fixed), "atol", "rtol", "kappa", "policy" (KIND=fail|warn|ignore, repeatable),
 * "empty-rows" (zero, nan, skip, mean-v), "rows" (edges+K or a list of rows; NULL: every row), "threads"
 * (oracle threads, 0: all cores), "no-cache" (value ignored); and the labels of the verdict line:
 * "name" (the producer of the outputs), "case" (the case's name), "repro" (a reproducer command,
 * printed under a FAIL or WARN). value is copied. -1 for an unknown option or a bad value. */
int attncheck_ctx_set(attncheck_ctx *ctx, const char *option, const char *value);

/* ---- cases ---- */

#define ATTNCHECK_CASE_DEFAULT_SCALE (1u << 0) /* the scale is the exact real 1/sqrt(dk); problem->scale is ignored */

typedef struct {
  uint32_t struct_size;             /* sizeof(attncheck_case_desc) */
  uint32_t flags;                   /* ATTNCHECK_CASE_... */
  const attncheck_problem *problem; /* as a kernel gets it (problem->struct_size set); strides in elements */
  const attncheck_tensors *tensors; /* q, k, v, the variant and the layout tensors (o, lse, stream ignored) */
  const void *dout;                 /* dO for the backward (o_dtype, shaped like o), or NULL */
  int64_t do_stride[4];             /* its strides, [batch][head][t][d] (all zero: o's strides) */
} attncheck_case_desc;

/* A case from a description: the tensors are read through the problem's strides (a zero stride
 * of bias and bool_mask broadcasts; varlen and paged tensors as the ABI lays them out) and
 * copied. The problem is validated as a case file is (sizes, heads % kv_heads, the scale, the
 * layout arrays, the memory cap): -1 with one line naming what is wrong. Quantized tensors
 * (docs/quantized.md) are described as a kernel is handed them (<attncheck/kernel.h>, ABI 5):
 * problem.q_format, k_format, v_format name the formats (problem.struct_size >=
 * ATTNCHECK_PROBLEM_V5Q_SIZE), tensors.q/k/v of a quantized tensor is NULL and tensors.quant->t[x]
 * holds its format (equal to the problem's), granularity, block, and either
 *   - codes through code_stride (all zero: the problem's q/k/v_stride, packed or paged as the ABI
 *     lays out a serving layout) with scales and aux (mins, zero points, nvfp4's tensor scale)
 *     through scale_stride, indexed (b, h, t, e) as the ABI says: (page, slot) for a paged K or V,
 *     (0, packed token) for a varlen tensor or a paged case's q (all zero: contiguous
 *     [B][H][T'][X], or token-major [T'][H][X] for a serving layout); or
 *   - for the ggml formats and mxfp4, without codes, ggml's block bytes through ggml_stride
 *     (bytes; all zero: contiguous blocks, token-major for a layout), indexed alike.
 *   For a paged K or V a stride[0] of 0 (of scales or ggml blocks whose stride[2] is not) stands for
 *   page_size * stride[2]: pages lying token-major one after the other, (0, page * page_size + slot)
 *   as this header documented it before.
 * The codes are checked against their format's range and decoded to their exact values, as a
 * case file's are; attncheck_result_write_case writes them as the case file's members. The caller
 * guarantees that every pointer covers what the problem and its strides address. */
int attncheck_case_new(attncheck_ctx *ctx, const attncheck_case_desc *d, attncheck_case **out);
/* A case file (NPZ; `attncheck gen`, a reproducer), as `attncheck check` reads it. */
int attncheck_case_read(attncheck_ctx *ctx, const char *path, attncheck_case **out);
/* Frees the case; results judged on it keep what they need. */
void attncheck_case_free(attncheck_case *c);
/* The case's problem as a kernel would get it (contiguous strides; layouts packed). With
 * out->struct_size set to sizeof(attncheck_problem) on entry, the whole struct (a quantized case's
 * q_format, k_format, v_format of ABI 5); otherwise the ABI 3 fields alone (struct_size
 * ATTNCHECK_PROBLEM_V3_SIZE), all a caller built against an earlier header has room for. */
int attncheck_case_problem(const attncheck_case *c, attncheck_problem *out);
/* Computes the exact oracle on the rows the context selects, from the cache when it holds them;
 * attncheck_judge calls it when needed, so calling it first only moves the time. */
int attncheck_oracle(attncheck_ctx *ctx, attncheck_case *c);

/* ---- judging ---- */

typedef struct {
  uint32_t struct_size;  /* sizeof(attncheck_outputs) */
  uint32_t reserved0;    /* 0 */
  const void *o;         /* o_dtype, [batch][heads][tq][dv] through o_stride (varlen, paged: [total_q][heads][dv]) */
  int64_t o_stride[4];   /* elements; all zero: as attncheck_case_problem's o_stride */
  const float *lse;      /* NULL (o judged alone), or binary32 natural-log LSE [batch][heads][tq] ([heads][total_q]) */
  int64_t lse_stride[3]; /* elements; all zero: contiguous */
} attncheck_outputs;

/* Judges the kernel's outputs against the oracle under the context's class and budget (the
 * comparison of `attncheck check` and `compare`). 0 with *res set, whatever the verdict (an oracle
 * that fails gives status ERROR); -1 when nothing could be judged (bad arguments). */
int attncheck_judge(attncheck_ctx *ctx, attncheck_case *c, const attncheck_outputs *out, attncheck_result **res);

typedef struct {
  uint32_t struct_size;                             /* sizeof(attncheck_grads) */
  uint32_t reserved0;                               /* 0 */
  const void *dq, *dk, *dv;                         /* problem dtype; shaped like q, k, v */
  int64_t dq_stride[4], dk_stride[4], dv_stride[4]; /* all zero: q's, k's, v's strides of attncheck_case_problem */
  const float *dsinks;                              /* [heads] binary32 with sinks (judged on dense cases), else NULL */
} attncheck_grads;

/* Judges dQ, dK, dV (and dσ) against the exact backward of a case with dO, under the context's
 * class (`attncheck compare --grad`); "rows" samples dQ rows and dK/dV columns. -1 when the case
 * has no dO, has quantized tensors (an inference cache) or the exact backward refuses it. */
int attncheck_judge_grad(attncheck_ctx *ctx, attncheck_case *c, const attncheck_grads *g, attncheck_result **res);

enum { ATTNCHECK_PASS = 0, ATTNCHECK_WARN = 1, ATTNCHECK_FAIL = 2, ATTNCHECK_SKIP = 3, ATTNCHECK_ERROR = 4 };
/* The worst element's tensor. */
enum {
  ATTNCHECK_T_NONE = 0,
  ATTNCHECK_T_O,
  ATTNCHECK_T_LSE,
  ATTNCHECK_T_DQ,
  ATTNCHECK_T_DK,
  ATTNCHECK_T_DV,
  ATTNCHECK_T_DSINKS
};

typedef struct {
  uint32_t struct_size; /* sizeof(attncheck_summary), set by the caller */
  int32_t status;       /* ATTNCHECK_PASS ... under the context's policies */
  uint32_t kinds;       /* bit k set: verdict kind k is present (attncheck_kind_name) */
  int32_t exit_code;    /* what the command exits with for this result: 0, 1 (a fail policy), 3 (ERROR) */
  double err_w, err_e;  /* the largest err/W and err/E (inf for a NaN or inf where a value is due) */
  double ulps, nmse;    /* o: the largest error in ulps of the dtype, the NMSE (NaN for a backward) */
  int64_t bad, judged;  /* elements beyond W (or misplaced) of those compared */
  int64_t rows_judged, rows_total;
  int32_t worst_tensor; /* ATTNCHECK_T_...; NONE when nothing was judged */
  int32_t reserved0;
  /* o: (b, h, i, d); lse: (b, h, i, -1); dq, dk, dv, dsinks: the row, column or head and the
   * element that the grad detail names, then -1, -1 */
  int64_t worst_index[4];
  double worst_exact, worst_got, worst_err, worst_W, worst_E;
} attncheck_summary;

/* Fills s up to s->struct_size. */
int attncheck_result_summary(const attncheck_result *r, attncheck_summary *s);
/* The command's texts of the result, valid until the result is freed: the verdict line
 * ("FAIL NAME CASE FAIL err/W=.. ... DTYPE budget=.."), the detail lines (notes, the worst
 * element and LSE with the exact value, its rounding, the kernel's value, ulps, err/W, err/E,
 * the budget; the reproducer under a FAIL or WARN), and one JSON object (`--json`). */
const char *attncheck_result_line(const attncheck_result *r);
const char *attncheck_result_detail(const attncheck_result *r);
const char *attncheck_result_json(const attncheck_result *r);
/* Writes the case with the judged outputs (members o and lse, or dq, dk, dv, dsinks) as a case
 * file, atomically: `attncheck check CASE` and `attncheck compare [--grad] CASE` judge it again. */
int attncheck_result_write_case(attncheck_ctx *ctx, const attncheck_result *r, const char *path);
void attncheck_result_free(attncheck_result *r);

/* "FAIL", "SUSPECT", ..., the name of verdict kind k (a bit of summary.kinds); NULL past the last. */
const char *attncheck_kind_name(int k);
/* "PASS", "WARN", "FAIL", "SKIP", "ERROR". */
const char *attncheck_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* ATTNCHECK_H */
