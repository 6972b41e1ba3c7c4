/* oracle.h: the exact answer for a case (docs/numerics.md §2-§7).
 *
 * For every selected row and output element: o correctly rounded into each requested
 * format, an accurate binary64 value with a proven error bound, how it was decided,
 * what kernel outcomes are acceptable (rule table below), and the budget terms.
 *
 * Rule table for non-finite inputs (visible positions only; masked keys never count), on IEEE
 * semantics of the stored values (oracle/infscores.c). Per visible key the score class is
 *   NaN   any NaN operand of q·k_j, a product 0·inf, a sum of +inf and -inf terms, or c = 0
 *         times an infinite q·k_j;
 *   ±inf  an infinite product and no NaN (c < 0 flips the sign);
 *   finite otherwise (a kernel's own overflow of finite values is the domain rule's business).
 * Per row, first match:
 *   - no visible key:                 expect EMPTY (o = 0, LSE = -inf); conventions apply in compare
 *                                     (mean-v: the mean of V over the row's keys, ac_oracle_mean_v).
 *   - some score NaN:                 every element and the LSE: accept NaN only.
 *   - some score +inf:                o = the limit, the mean of V over the +inf keys (exact rational,
 *                                     judged with the budget of equal scores), or NaN (a kernel's
 *                                     exp(+inf - +inf)); LSE +inf or NaN.
 *   - every score -inf:               o = 0 or NaN (exp(-inf - (-inf)) is NaN unless the kernel
 *                                     guards m = -inf, which then writes 0 as for an empty row);
 *                                     LSE -inf, +inf (the empty conventions) or NaN.
 *   - some scores -inf:               those keys drop out exactly like masked keys (weight 0) and the
 *                                     row is computed over the others: accept VALUE (judged against
 *                                     o) or NaN, in every element and the LSE, flagged
 *                                     AC_ACCEPT_NAN_WEIGHT0. A kernel that keeps a finite maximum
 *                                     gets exp(-inf - m) = 0 and the value; one that works in blocks
 *                                     (tiles, split-K chunks) computes exp(-inf - (-inf)) = NaN in a
 *                                     block of -inf keys unless it guards that case (FlashAttention
 *                                     does, many split-K kernels do not), and a non-finite V at a
 *                                     weight-0 key meets 0·inf or 0·NaN in P·V. Both are NaN from keys
 *                                     that carry no weight, as with masked keys: not a wrong value, so
 *                                     not FAIL, but the value is lost, so compare reports such a NaN
 *                                     (where VALUE or an infinity is also accepted) as MASKED-LEAK
 *                                     (n_nan_weight0; warn by default).
 *   - otherwise the scores are finite; per column over the keys that keep a weight:
 *       NaN in V, or ±inf of both signs:   accept NaN only;
 *       ±inf of one sign:                  accept that infinity or NaN;
 *       all finite:                        accept VALUE (judged against the budget).
 *   The LSE of a row follows its q and visible keys only (V does not enter it).
 * row.has_nonfinite is set when q or a visible key or value holds a non-finite value.
 * Domain (decided in compare from the row terms): scores beyond binary32 range (binary64
 * for fp64 classes) or |o| beyond the output dtype make the case OUT-OF-DOMAIN.
 *
 * Values of the result for special elements: empty rows o = 0 (+0 in o_round), LSE -inf,
 * how EXACT; undefined elements o = NaN (o_round holds the dtype's NaN, or ±inf when an
 * infinity is accepted; e4m3 has none), how EXACT, budget terms 0.
 * Rows not selected (--rows): selected = 0, m NaN, lse_how AC_HOW_NOT_SELECTED, no elements
 * stored (slot -1; oracle -o writes o NaN and how AC_HOW_NOT_SELECTED); judge only selected rows.
 * Exact zeros are +0 in o_round; a kernel's -0 matches them (compare's rule).
 * Rounding into formats is to nearest even, in one step, e4m3 saturating at ±448. */
#ifndef AC_ORACLE_H
#define AC_ORACLE_H
#include <stdint.h>
#include "casefile.h"

#define AC_ORACLE_NMU 4
/* The block of Zb (ac_oracle_elem.Gb): q8_0's 32 values (AC_Q8_BLOCK in precision.h). */
#define AC_ORACLE_QBLOCK 32

/* AC_HOW_NOT_SELECTED: the row was not computed (--rows); its values mean nothing. */
typedef enum { AC_HOW_EXACT = 0, AC_HOW_ROUNDED = 1, AC_HOW_UNRESOLVED = 2, AC_HOW_NOT_SELECTED = 3 } ac_how;

/* Accepted kernel outcomes for an element. */
enum {
  AC_ACCEPT_VALUE = 1,   /* a finite value, judged against o with the budget */
  AC_ACCEPT_NAN = 2,
  AC_ACCEPT_PINF = 4,
  AC_ACCEPT_NINF = 8,
  AC_ACCEPT_EMPTY = 16,  /* empty row: the --empty-rows convention decides */
  AC_ACCEPT_NAN_WEIGHT0 = 32   /* with NAN: a NaN here comes from keys of weight exactly 0 (a score
                                  of -inf), like a masked key's NaN reaching the output: compare
                                  reports it as MASKED-LEAK where a value was defined */
};

typedef struct {
  double o;        /* binary64 approximation of the exact output (0 for empty rows, NaN when undefined) */
  double o_err;    /* proven bound on |o - exact| (0 when exact) */
  /* docs/numerics.md §7.1 budget terms (approximations to a few percent, never below the truth by more):
   * R = Σ A_j|V_j|, D = Σ A_j|V_j - o|, S = Σ A_j|V_j - o||s_j - m|, Sp = Σ A_j|V_j - o||s_j|,
   * G = Σ A_j|V_j - o||c|Z_j, F[k] = Σ_{A_j < mu[k]} A_j|V_j - o|;
   * M = max_j |V_j - o| over every key that may carry weight (rounded up; for the convex-hull
   * cap of W: a kernel that normalizes its nonnegative weights stays within the hull of the V_j). */
  double R, D, S, Sp, G, M;
  double F[AC_ORACLE_NMU];
  /* Gb = Σ A_j|V_j - o||c|Zb_j, Zb_j = Σ_t qb_t |k_jt| with qb_t the largest |q| of t's block of
   * AC_ORACLE_QBLOCK along d_k (a class rounding Q to blocks, or its inputs under a softcap:
   * docs/numerics.md §7.18); never times the softcap's sech^2 */
  double Gb;
  uint8_t how;     /* ac_how */
  uint8_t accept;  /* AC_ACCEPT_... */
} ac_oracle_elem;

typedef struct {
  int64_t visible;     /* number of visible keys */
  double m;            /* max scaled score, binary64 approximation (-inf when empty) */
  double max_abs_s;    /* largest |s_j| over visible keys (may be inf beyond binary64) */
  double max_abs_z;    /* largest exact |q·k_j| over visible keys */
  double lse;          /* binary64 approximation of LSE (-inf when empty) */
  double lse_err;      /* proven bound */
  float lse_f32;       /* LSE correctly rounded to binary32 */
  double lse_f64;      /* LSE correctly rounded to binary64 (when requested, else 0) */
  double lse_cZ;       /* Σ A_j |c| Z_j  (LSE budget) */
  double lse_s;        /* Σ A_j |s_j|    (LSE budget) */
  double max_cZ;       /* max_j |c| Z_j over the keys that carry weight (score error bound Δ) */
  double qk_l1;        /* Σ_t |q_t| + max_j Σ_t |k_jt| (underflow when Q or K is scaled before Q·Kᵀ) */
  double lse_cZb;      /* Σ A_j |c| Zb_j (LSE budget of a class rounding Q to blocks) */
  double max_cZb;      /* max_j |c| Zb_j over the keys that carry weight */
  double Fmass[AC_ORACLE_NMU];   /* Σ_{A_j < mu[k]} A_j: with F, bounds Σ_{A_j < mu} A_j |V_j| <= F + |o| Fmass */
  uint8_t selected;    /* row computed */
  uint8_t lse_how;     /* ac_how */
  uint8_t lse_accept;  /* AC_ACCEPT_... */
  uint8_t has_nonfinite; /* a visible input of this row is NaN or inf */
  /* FlashAttention-2's causal ALiBi convention (docs/variants.md "ALiBi and the LSE"): with ALiBi
   * and a causal mask alibi_shift = m_h (i + tk - tq) (binary64; per sequence in a layout), and the
   * LSE + alibi_shift correctly rounded (lse_alt_f32), its binary64 value and bound, and how; the
   * row's own LSE fields where the shift is 0 or the LSE is not finite. */
  uint8_t lse_alt_how;
  float lse_alt_f32;
  double alibi_shift, lse_alt, lse_alt_err;
} ac_oracle_row;

typedef struct {
  int threads;          /* 0: all cores */
  const char *rows;     /* NULL: all rows; "edges+K"; or a comma list of global row numbers */
  uint64_t rows_seed;   /* for the K random rows of edges+K */
  uint32_t formats;     /* bitmask of (1u << ac_dtype) to round o into; the case dtype is always added */
  int lse_f64;          /* also round LSE correctly to binary64 */
  long prec_cap;        /* precision cap in bits (0: default 1<<16) */
  int nmu;              /* number of mu thresholds for F */
  double mu[AC_ORACLE_NMU];
  int no_fast;          /* the MPFR levels alone: no certified binary64 pass, the plain decoder and scores */
  int blas;             /* the BLAS level of docs/numerics.md §12.6: 0 by the problem's size, 1 wherever it
                           applies, -1 never (the per-row passes alone) */
} ac_oracle_opts;
/* Defaults (ac_oracle_opts_init): all rows, all cores, no extra format, binary32 LSE only,
 * cap 65536 bits, mu = {2^-149, 2^-126, 2^-24, 2^-14} (fp32 subnormal and normal, fp16
 * subnormal and normal minima: what a kernel flushing P below them drops). */

typedef struct {
  ac_problem p;
  int64_t nrows;                 /* batch * heads * tq; row r = (b*heads + h)*tq + i */
  ac_oracle_row *rows;           /* nrows */
  /* Elements are stored for the selected rows only, so that memory follows the rows judged:
   * row x lives at slot ac_oracle_slot(r, x) (-1 when not selected). slot NULL: every row is
   * stored, slot x = x. */
  int64_t *slot;                 /* nrows, or NULL */
  int64_t nsel;                  /* rows stored when slot is set */
  ac_oracle_elem *elems;         /* stored rows * dv, row-major */
  uint64_t *o_round[AC_NDTYPES]; /* stored rows * dv bit patterns per requested format, else NULL */
  uint32_t formats;
  int nmu; double mu[AC_ORACLE_NMU];
  /* statistics: elements decided by the exact-case test (special elements included), by the
   * Ziv loop, unresolved (elements and LSEs), fallback = elements that needed a level past
   * the first; max_prec = largest working precision in bits */
  double seconds;
  int64_t rows_done, n_exact, n_rounded, n_unresolved, n_fallback;
  long max_prec;
  /* threads used, their CPU seconds in total and the busiest one's: on an idle machine the
   * wall time approaches cpu_max_thread, whatever else runs beside */
  int threads;
  double cpu_seconds, cpu_max_thread;
  /* elements whose roundings the BLAS level (docs/numerics.md §12.2) decided in its tiles (its
   * second pass included), of those counted in n_exact and n_rounded */
  int64_t n_blas;
} ac_oracle_result;

/* Where row x is stored in elems and o_round (index of its first element / dv), -1 when the
 * row was not selected. */
static inline int64_t ac_oracle_slot(const ac_oracle_result *r, int64_t x)
{
  return r->slot ? r->slot[x] : x;
}
/* Number of rows stored in elems and o_round. */
static inline int64_t ac_oracle_nstored(const ac_oracle_result *r)
{
  return r->slot ? r->nsel : r->nrows;
}
/* Element t of row x (x selected). */
static inline const ac_oracle_elem *ac_oracle_elem_at(const ac_oracle_result *r, int64_t x, int64_t t)
{
  return &r->elems[ac_oracle_slot(r, x) * r->p.dv + t];
}

void ac_oracle_opts_init(ac_oracle_opts *o);
/* Computes the oracle for c. -1 only for bad input (NaN/inf scale, bad row spec);
 * unresolved elements are reported in the result, not as an error. A serving-layout case
 * (c->lay) goes to ac_oracle_run_layout. */
int ac_oracle_run(const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r, ac_err *e);
/* A serving-layout case (docs/layouts.md), sequence by sequence: each is the dense case of
 * ac_layout_seq_case, computed by ac_oracle_run or loaded from the cache under its own key (the
 * layout case itself is never stored); the result is the carrier's (rows h * tq + token), rows
 * and row specs counted in the carrier. */
int ac_oracle_run_layout(const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r, ac_err *e);
void ac_oracle_result_free(ac_oracle_result *r);
/* The mean-v convention of empty rows (meanv.c, docs/numerics.md §5): *out is a copy of r in which
 * every selected row with no visible key (lse_accept AC_ACCEPT_EMPTY) holds the mean of V over the
 * keys of its sequence and kv head, judged as a value (its elements, budget terms and row terms
 * are those of equal weights over those keys; its LSE fields stay the empty row's). A sequence
 * without keys keeps its empty rows. -1 with a message (out freed) when that oracle fails. */
int ac_oracle_mean_v(const ac_case *c, const ac_oracle_result *r, ac_oracle_result *out, ac_err *e);

/* Bytes ac_oracle_run allocates beside the case for nsel selected rows of p with that many
 * threads (an upper estimate; the case's own tensors not included). ac_oracle_run refuses
 * (-1) when it and the case's tensors together exceed the memory cap (ac_mem_cap). */
double ac_oracle_mem_need(const ac_problem *p, uint32_t formats, int64_t nsel, long threads);
/* The check ac_oracle_run makes, before anything runs: -1 with its message when the oracle's
 * memory for c under o (its rows, formats, threads) and the case exceed the memory cap (0 for a
 * layout case, whose sequences are checked one by one when they run). */
int ac_oracle_mem_check(const ac_case *c, const ac_oracle_opts *o, ac_err *e);

/* Row selection: fills sel[nrows] with 0/1. -1 on a bad spec. */
int ac_oracle_select_rows(const ac_problem *p, const char *spec, uint64_t seed, uint8_t *sel, ac_err *e);

/* On-disk cache keyed by the case hash and the options that change the result (formats,
 * lse_f64, prec_cap, rows, rows_seed, mu). dir: ac_oracle_cache_dir() = $ATTNCHECK_CACHE, or
 * ~/.cache/attncheck/oracle; NULL (ATTNCHECK_CACHE empty, "off" or "0", ac_oracle_cache_disable,
 * or a directory that is not the user's private one without ATTNCHECK_CACHE_SHARED=1: group- or
 * world-writable, another user's, a symbolic link; said once) disables. load: 0 = hit (r filled,
 * free it), -1 = miss. store: written atomically, its directory created with mode 0700, 0 or -1. */
int ac_oracle_cache_load(const char *dir, const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r);
int ac_oracle_cache_store(const char *dir, const ac_case *c, const ac_oracle_opts *o, const ac_oracle_result *r);
const char *ac_oracle_cache_dir(void);
/* --no-cache: no cache for the rest of the process (every reader, the per-sequence results of
 * layout cases included). */
void ac_oracle_cache_disable(void);

#endif
