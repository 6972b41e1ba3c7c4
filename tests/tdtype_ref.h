/* tdtype_ref.h: reference readings and roundings for the dtype tests, built only on MPFR and
 * the formats' definitions (its own table), never on src/core/dtype.c. */
#ifndef AC_TDTYPE_REF_H
#define AC_TDTYPE_REF_H
#include <mpfr.h>
#include <stdint.h>

enum { REF_F64, REF_F32, REF_F16, REF_BF16, REF_E4M3, REF_E5M2, REF_N };

typedef struct {
  const char *name;
  int nbits, m, bias, expbits;   /* bit layout */
  int e4m3;                      /* no infinity; NaN is S.1111.111 only; max 448 */
  int prec, emin, emax;          /* MPFR parameters, derived from the layout */
} ref_fmt;

extern const ref_fmt ref_fmts[REF_N];

/* Kinds of a value. */
enum { REF_FINITE = 0, REF_INF = 1, REF_NAN = 2 };

/* Reads the bit pattern of format f field by field into x (x must have >= 64 bits). Returns the kind;
 * for NaN, *quiet receives whether the quiet bit is set (always 1 for e4m3). */
int ref_read_bits(mpfr_t x, int f, uint64_t bits, int *quiet);

/* Rounds x to nearest-even in format f, in one step, the MPFR way (precision, range, check_range,
 * subnormalize). r must have been initialised with precision ref_fmts[f].prec; the result keeps
 * its sign; overflow gives ±inf except for e4m3, where it leaves a value above 448. */
void ref_round(mpfr_t r, int f, const mpfr_t x);
void ref_round_d(mpfr_t r, int f, double x);

/* 1 when bits (produced by the code under test) is exactly the rounding of the finite or infinite
 * input whose rounded value in format f is r (r as from ref_round), e4m3 overflow mode sat/nan.
 * On mismatch writes a reason into why. */
int ref_bits_match(int f, uint64_t bits, const mpfr_t r, int e4m3_nan_on_overflow, char *why, size_t n);

/* 1 when bits is a quiet NaN of format f with the given sign. */
int ref_is_quiet_nan(int f, uint64_t bits, int neg);

#endif

/* Exhaustive driver over all 2^32 binary32 inputs: tested(x) against ref(block) bit for bit.
 * Splits the range over nthreads threads. Returns the number of mismatches; the first one found
 * (lowest input of the first thread that saw one) goes to *bad_in, *bad_got, *bad_want. */
typedef uint16_t (*ref_tested_fn)(float x);
typedef void (*ref_block_fn)(const float *x, uint16_t *out, int n);
uint64_t ref_exhaustive_f32(ref_tested_fn tested, ref_block_fn ref, int nthreads, uint32_t *bad_in,
                            uint16_t *bad_got, uint16_t *bad_want);
/* Threads for the exhaustive tests: ATTNCHECK_TEST_THREADS, default 2. */
int ref_test_threads(void);

/* Every binary32 midpoint between two adjacent finite values of format f (both signs, the
 * overflow midpoint included) and its two binary32 neighbours: tested(x) against MPFR, and the
 * midpoint itself must give the even neighbour. Returns mismatches; the first goes into msg. */
uint64_t ref_halfway_f32(int f, ref_tested_fn tested, char *msg, size_t n);
/* n random binary32 inputs from stream (seed, 7): half uniform bit patterns, half with the exponent
 * uniform in the format's range widened by 4 binades (NaN inputs checked for sign and quietness). */
uint64_t ref_sample_f32(int f, ref_tested_fn tested, uint64_t count, uint64_t seed, char *msg, size_t n);

/* Like ck_assert_msg without Check's per-assertion bookkeeping (a write per passing assertion
 * under CK_FORK), for loops over millions of values. */
#define REF_REQUIRE(expr, ...)          \
  do {                                  \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)
