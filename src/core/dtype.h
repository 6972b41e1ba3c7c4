/* dtype.h: the element formats and exact conversions between them.
 * Every encoder rounds to nearest, ties to even, in one step (no double rounding);
 * every decoder is exact. Values are bit patterns in uint64_t (low bits used). */
#ifndef AC_DTYPE_H
#define AC_DTYPE_H
#include <stddef.h>
#include <stdint.h>

/* Same numbering as the ABI's ATTNCHECK_F64 ... */
typedef enum { AC_F64 = 0, AC_F32 = 1, AC_F16 = 2, AC_BF16 = 3, AC_E4M3 = 4, AC_E5M2 = 5, AC_NDTYPES = 6 } ac_dtype;

/* e4m3 has no infinity: values that overflow either saturate to ±448 or become NaN. */
typedef enum { AC_E4M3_SATURATE = 0, AC_E4M3_NAN = 1 } ac_e4m3_overflow;

typedef struct {
  const char *name;   /* "f64", "f32", "f16", "bf16", "e4m3", "e5m2" */
  const char *npy;    /* numpy descr used in NPZ files: "<f8", "<f4", "<f2", "<u2", "|u1", "|u1" */
  int bytes;          /* storage size */
  int prec;           /* significand bits including the implicit one */
  int mpfr_emin, mpfr_emax; /* MPFR exponent range for correct rounding (docs/numerics.md §4.5) */
  int ieee_emin;      /* minimum normal exponent, for ulps */
  double max_finite;  /* largest finite value */
  double u;           /* unit roundoff 2^-prec */
} ac_dtype_info;

const ac_dtype_info *ac_dtype_get(ac_dtype t);
const char *ac_dtype_name(ac_dtype t);
/* Accepts the names above and aliases (fp32, float32, fp16, half, float16, bfloat16, fp8e4m3, ...). -1 if unknown. */
int ac_dtype_parse(const char *s, ac_dtype *out);
/* A comma list of dtype names to a bit mask (1u << dtype). -1 for an unknown name (copied
 * into bad) or an empty list (bad empty). */
int ac_dtype_parse_list(const char *s, uint32_t *mask, char *bad, size_t n);
size_t ac_dtype_size(ac_dtype t);
/* 1 when every finite value of narrow is a value of wide (significand bits, largest finite
 * value and smallest subnormal all within wide's): a conversion from narrow to wide is exact. */
int ac_dtype_within(ac_dtype narrow, ac_dtype wide);

/* Exact decode of a stored element. */
double ac_decode(ac_dtype t, uint64_t bits);
/* Load element i of a dense array of dtype t. */
uint64_t ac_load_bits(ac_dtype t, const void *base, size_t i);
void ac_store_bits(ac_dtype t, void *base, size_t i, uint64_t bits);
static inline double ac_load(ac_dtype t, const void *base, size_t i) { return ac_decode(t, ac_load_bits(t, base, i)); }

/* Round-to-nearest-even encoders. */
uint16_t ac_f16_from_f32(float x);
uint16_t ac_bf16_from_f32(float x);
uint16_t ac_f16_from_f64(double x);
uint16_t ac_bf16_from_f64(double x);
uint8_t ac_e4m3_from_f64(double x, ac_e4m3_overflow ov);
uint8_t ac_e5m2_from_f64(double x);
float ac_f16_to_f32(uint16_t h);
float ac_bf16_to_f32(uint16_t h);
/* Generic: encode a binary64 value into dtype t (e4m3 saturates). */
uint64_t ac_encode_f64(ac_dtype t, double x);
uint64_t ac_encode_f64_ov(ac_dtype t, double x, ac_e4m3_overflow ov);

/* Classification of a stored value. */
int ac_bits_isnan(ac_dtype t, uint64_t bits);
int ac_bits_isinf(ac_dtype t, uint64_t bits);
int ac_bits_issubnormal(ac_dtype t, uint64_t bits);
int ac_bits_iszero(ac_dtype t, uint64_t bits);

/* ulp of x in format t (docs/numerics.md §9): 2^(max(e, emin) - p + 1). */
double ac_ulp(ac_dtype t, double x);

/* Hex rendering of a stored value: "0x3c00" etc. buf >= 24 bytes. */
const char *ac_bits_hex(ac_dtype t, uint64_t bits, char *buf, size_t n);

#endif
