/* quant.h: quantized tensors (docs/quantized.md): the ggml block formats (q8_0, q4_0, q4_1, q5_0,
 * q5_1, iq4_nl), fp8 codes with a scale (e4m3fn, e4m3fnuz, e5m2), int8, uint8, int4 and int2 codes
 * with a scale and a zero point, and the 4-bit float formats NVFP4 and MXFP4.
 *
 * A quantized tensor of a case (p.quant[0..2] for q, k, v; problem.h) is held as codes, one byte
 * per element in the tensor's dense [B][H][T][D] order (whatever its packing in a case file or at
 * the kernel boundary, quant_pack.c), and scales (with, by format, mins, zero points or a tensor
 * scale) laid out by the granularity:
 *   block    [B][H][T'][D / block]  one scale per block of `block` consecutive elements along D
 *                                   (the ggml and fp4 formats' own block; a group of 2 to 4096 for
 *                                   int and fp8: "group:N"), over tgroup tokens (2-D tiles "tile:GxN")
 *   tensor   [1]                    one scale for the whole tensor
 *   head     [B][H]                 one per (batch, head)
 *   token    [B][H][T]              one per token and head
 *   channel  [B][H][D]              one per channel and head, over every token; [B][H][T'][D] over
 *                                   groups of tgroup tokens ("channel:G")
 * where T' = ceil(T / tgroup) (the last group may be partial). The value of an element is its
 * format's formula on its code and scales (d q, d (q - 8), d q + m, d table[q], fp8(q) s, (q - z) s,
 * e2m1(q) s t), a dyadic rational; binary64 holds it exactly (docs/quantized.md proves the widths)
 * except (q - z) s with a float zero point, which may need more bits: such a value is its binary64
 * rounding and the spec's `rounded` says so (the budgets charge it, docs/quantized.md). NaN and
 * infinite scales follow IEEE arithmetic of the formula (inf x 0 = NaN). The case's dense array of
 * such a tensor holds those values in binary64 (ac_tensor_dtype answers AC_F64), decoded from the
 * codes and never written to a case file.
 *
 * A quantize-on-store tensor (spec.store != 0, quant_store.c) is handed to the kernel as its plain
 * values (ac_quant.plain, in the case's dtype) with the format it must store them in; its codes
 * and scales are those the spec's quantizer gives those values, and its dense values theirs. */
#ifndef AC_QUANT_H
#define AC_QUANT_H
#include <stddef.h>
#include <stdint.h>
#include "casefile.h"
#include "rng.h"

/* Format numbers are part of the case file's meaning only through their names; keep them stable. */
typedef enum {
  AC_QF_NONE = 0,
  AC_QF_Q8_0, AC_QF_Q4_0, AC_QF_Q4_1, AC_QF_Q5_0, AC_QF_Q5_1, AC_QF_IQ4_NL,
  AC_QF_E4M3FN, AC_QF_E4M3FNUZ, AC_QF_E5M2,
  AC_QF_INT8, AC_QF_INT4,
  AC_QF_NVFP4, AC_QF_MXFP4,
  AC_QF_INT2, AC_QF_UINT8,
  AC_QF_N
} ac_qfmt;

typedef enum { AC_QG_BLOCK = 0, AC_QG_TENSOR, AC_QG_HEAD, AC_QG_TOKEN, AC_QG_CHANNEL, AC_QG_N } ac_qgran;

/* How scales, mins and zero points are stored: floats, the bit patterns of e4m3 and e8m0, or the
 * integer zero points of the int formats (int8 for int8, int4 and int2; uint8 for uint8). */
typedef enum { AC_QSD_F16 = 0, AC_QSD_F32, AC_QSD_E4M3, AC_QSD_E8M0, AC_QSD_BF16, AC_QSD_I8, AC_QSD_U8, AC_QSD_N } ac_qsdtype;
/* The second parameter of a format: none, a min per scale (q4_1, q5_1: f16), a zero point per scale
 * (int8, uint8, int4, int2: an integer, or a float of the spec's zero dtype), or one binary32 tensor
 * scale (NVFP4). */
typedef enum { AC_QAUX_NONE = 0, AC_QAUX_MIN, AC_QAUX_ZERO, AC_QAUX_TSCALE } ac_qaux;
/* Codes packed into bytes (int4, int2 and the e2m1 formats: two or four per byte), element d of a
 * row in byte d / per at bit (d % per) * bits counted from the low end (LOW_FIRST) or from the high
 * end (HIGH_FIRST: bit (per - 1 - d % per) * bits). NONE: one code per byte. Same numbers as the
 * ABI's ATTNCHECK_QPACK_. */
enum { AC_QPACK_NONE = 0, AC_QPACK_LOW_FIRST = 1, AC_QPACK_HIGH_FIRST = 2 };

typedef struct {
  const char *name;        /* "q8_0" ... */
  const char *kind;        /* "ggml", "fp8", "int", "fp4" */
  int code_signed;         /* codes are int8 (q8_0, int8) or uint8 */
  int code_max;            /* unsigned codes: the largest valid one (15, 31, 255) */
  int block;               /* block formats: elements per scale along D (32, 16); 0 for the others */
  uint32_t grans;          /* granularities it takes (1u << AC_QG_...) */
  ac_qgran gran;           /* the default one */
  ac_qsdtype sdtype;
  ac_qaux aux;
  int ggml_bytes;          /* bytes of one ggml block (the ggml formats), else 0 */
  int bits;                /* bits a code takes when packed (2, 4); 0: the format is never packed */
} ac_qfmt_info;

/* NULL for AC_QF_NONE and unknown numbers. */
const ac_qfmt_info *ac_qfmt_get(int fmt);
const char *ac_qfmt_name(int fmt);            /* "?" when unknown, "none" for AC_QF_NONE */
int ac_qfmt_parse(const char *s, int *fmt);   /* a format name (also "fp8_e4m3fn" ...); -1 if unknown */
const char *ac_qgran_name(int gran);
int ac_qgran_parse(const char *s, int *gran);
const char *ac_qsdtype_name(ac_qsdtype t);    /* "f16", "f32", "e4m3", "e8m0" */
const char *ac_qsdtype_npy(ac_qsdtype t);     /* "<f2", "<f4", "|u1", "|u1" */
size_t ac_qsdtype_size(ac_qsdtype t);
/* A comma list of format names to a bit mask (1u << fmt); -1 with the bad name in bad. */
int ac_qfmt_parse_list(const char *s, uint32_t *mask, char *bad, size_t n);
/* The names of the formats in mask, comma-separated ("" for none). */
const char *ac_qfmt_list(uint32_t mask, char *buf, size_t n);

/* "FMT[:GRANULARITY[:SIZE]][:scale=DT][:zero=DT][:packed=low|high][:store=QUANTIZER]" into q (the
 * format's default granularity and block when left out): GRANULARITY block, tensor, head, token,
 * channel, group:N (N elements along d per token: block granularity for the int and fp8 formats),
 * tile:GxN (G tokens by N elements), channel:G (per channel over groups of G tokens); scale= the
 * scales' dtype (f16, bf16, f32 for int and fp8), zero= the zero points' (i8 or u8 as the format's
 * integer, f16, bf16, f32 float); store= a quantize-on-store tensor's quantizer (quant_store.c). -1
 * with one line for an unknown part or one the format does not take. */
int ac_qspec_parse(const char *s, ac_qspec *q, ac_err *e);
/* "q4_0", "e4m3fn:token", "int4:group:64:scale=f16:zero=f16:packed=low": as ac_qspec_parse reads it. */
const char *ac_qspec_str(const ac_qspec *q, char *buf, size_t n);
/* The spec is usable for a tensor of head dim d (tensor 'q', 'k' or 'v' names it): a known format,
 * a granularity, block, token group, dtypes and packing it takes, d a multiple of the block (and of
 * the codes a byte packs). -1 with one line. */
int ac_qspec_check(const ac_qspec *q, char tensor, int64_t d, ac_err *e);
/* The dtypes of q's scales and of its mins or zero points (AC_QSD_N: none; NVFP4's tensor scale is
 * AC_QSD_F32), the format's unless the spec declares others. */
ac_qsdtype ac_qspec_sdtype(const ac_qspec *q);
ac_qsdtype ac_qspec_zdtype(const ac_qspec *q);
/* 1 when q needs more than the first ABI 5 description (attncheck_kernel.h): a group or tile on an
 * int or fp8 format, token groups, scale or zero dtypes other than the format's, packed codes, the
 * int2 and uint8 formats (ATTNCHECK_FEAT_QUANT_LAYOUT). */
int ac_qspec_extended(const ac_qspec *q);
/* q in its one form: dtypes equal to the format's own and a token group of 1 written as 0 (as a case
 * file reads them back). */
void ac_qspec_normalize(ac_qspec *q);
/* Codes per byte of q's packing (1 unpacked). */
int ac_qspec_per_byte(const ac_qspec *q);
/* The ATTNCHECK_FEAT_QUANT_ bits p's quantized tensors use (AC_FEAT_QUANT_STORE, AC_FEAT_QUANT_LAYOUT,
 * problem.h); 0 for a case without. */
uint32_t ac_quant_features(const ac_problem *p);

/* ---- exact values --------------------------------------------------------------------- */
/* The value of a stored scale, min or zero point (exact; e8m0 255 is NaN; i8, u8 integers). */
double ac_qscale_value(ac_qsdtype t, uint64_t bits);
/* Element i of an array of dtype t, as bits, and stored. */
uint64_t ac_qsd_load(ac_qsdtype t, const void *a, size_t i);
void ac_qsd_store(ac_qsdtype t, void *a, size_t i, uint64_t bits);
/* The binary64 value x rounded into t (nearest even; e4m3 saturating, e8m0 the exponent of the
 * largest power of two not above |x|, i8 and u8 clamped integers of rint). */
uint64_t ac_qsd_encode(ac_qsdtype t, double x);
/* The dtype whose bit pattern and NaN t shares (AC_F16, AC_BF16, AC_F32; AC_E4M3 for the bytes). */
ac_dtype ac_qsd_dtype(ac_qsdtype t);
/* The code's own number: q8_0 and int8 (int8_t)code, q4_0 code - 8, q5_0 code - 16, q4_1, q5_1
 * and int4 code, iq4_nl the table entry, fp8 the decoded value, NVFP4 and MXFP4 the e2m1 value. */
double ac_qcode_value(int fmt, uint8_t code);
/* The element's value from its code, its scale's value s and the second parameter a (a min, a
 * zero point, the tensor scale; ignored otherwise): exact in binary64. */
double ac_qvalue(int fmt, uint8_t code, double s, double a);
/* (code - z) s with a float zero point z: its binary64 rounding, *rounded set when that is not the
 * exact value (which may need more than 53 bits); IEEE arithmetic for non-finite z or s. */
double ac_qvalue_zero(int fmt, uint8_t code, double s, double z, int *rounded);
/* e4m3fnuz: bias 8, no infinity, NaN only at 0x80, largest 240. */
double ac_e4m3fnuz_decode(uint8_t code);
/* e2m1 (4 bits: sign, 2 exponent bits of bias 1, 1 mantissa bit): 0, 0.5, 1, 1.5, 2, 3, 4, 6. */
double ac_e2m1_decode(uint8_t code);
/* iq4_nl's table of 16 values (kvalues_iq4nl). */
extern const int8_t ac_iq4nl_table[16];

/* ---- geometry of a tensor of dims {B, H, T, D} ------------------------------------------ */
/* Elements of the scale array (and of the mins or zero points); 1 for the tensor scale of NVFP4. */
int64_t ac_qscale_count(const ac_qspec *q, const int64_t dims[4]);
/* Its shape as stored in a case file: ndim 1 to 4. */
void ac_qscale_shape(const ac_qspec *q, const int64_t dims[4], int64_t shape[4], int *ndim);
/* Tokens one scale covers along T (1 for block and token granularity without token groups; 0 for
 * every token: tensor, head, channel without groups), and the scale rows T' of a tensor of T tokens. */
static inline int64_t ac_qspec_tgroup(const ac_qspec *q)
{
  if (q->gran == AC_QG_BLOCK || q->gran == AC_QG_TOKEN) return q->tgroup > 1 ? q->tgroup : 1;
  return q->gran == AC_QG_CHANNEL && q->tgroup > 0 ? q->tgroup : 0;
}
static inline int64_t ac_qscale_rows(const ac_qspec *q, int64_t T)
{
  int64_t g = ac_qspec_tgroup(q);
  return g ? (T + g - 1) / g : 1;
}
/* The scale element of element (b, h, t, d). */
static inline int64_t ac_qscale_index(const ac_qspec *q, const int64_t dims[4], int64_t b, int64_t h, int64_t t,
                                      int64_t d)
{
  int64_t g = ac_qspec_tgroup(q), tr = g ? (dims[2] + g - 1) / g : 1, tt = g ? t / g : 0;
  switch (q->gran) {
  case AC_QG_BLOCK: return ((b * dims[1] + h) * tr + tt) * (dims[3] / q->block) + d / q->block;
  case AC_QG_HEAD: return b * dims[1] + h;
  case AC_QG_TOKEN: return (b * dims[1] + h) * dims[2] + t;
  case AC_QG_CHANNEL: return ((b * dims[1] + h) * tr + tt) * dims[3] + d;
  default: return 0;
  }
}

/* ---- the quantized tensors of a case --------------------------------------------------- */
typedef struct ac_qdata_s {
  uint8_t *codes;   /* one per element, dense [B][H][T][D] */
  void *scales;     /* ac_qscale_count elements of the spec's scale dtype */
  void *aux;        /* mins (f16) or zero points (the spec's zero dtype), as many as scales; the tensor
                       scale (one binary32) of NVFP4; NULL for formats without */
  void *plain;      /* a quantize-on-store tensor: its plain values in the case's dtype, dense (what the
                       kernel is handed); NULL otherwise */
} ac_qdata;
struct ac_quant {
  ac_qdata t[3];    /* q, k, v (all NULL for a tensor that is not quantized) */
};

/* 0, 1, 2 for 'q', 'k', 'v'; -1 otherwise. */
static inline int ac_qslot(char tensor) { return tensor == 'q' ? 0 : tensor == 'k' ? 1 : tensor == 'v' ? 2 : -1; }
/* The dims {B, H, T, D} of tensor x ('q', 'k', 'v') of p. */
void ac_qdims(const ac_problem *p, char x, int64_t dims[4]);
/* Bytes the codes, scales and aux of every quantized tensor of p take (0: none). */
uint64_t ac_quant_bytes(const ac_problem *p);
/* The quantization of p: each spec usable (ac_qspec_check) and nothing a quantized case does not
 * take (per-tensor dtypes, descales, strided layouts). -1 with one line; 0 without quantization. */
int ac_quant_validate_problem(const ac_problem *p, ac_err *e);

/* Allocates (zeroed) the codes, scales and aux of every tensor p.quant names that lacks them, and
 * its dense array of binary64 values (zeros). */
int ac_quant_alloc(ac_case *c, ac_err *e);
/* Zeroed arrays for what a kernel stores for tensor i of p (a quantize-on-store tensor: codes one a
 * byte, scales and zero points of its dtypes) in t; their sizes in bytes into n (n[2] 0: no aux). */
void ac_quant_stored_alloc(const ac_problem *p, int i, ac_qdata *t, size_t n[3]);
void ac_quant_free(ac_case *c);
/* Frees q's arrays and q (NULL: nothing). */
void ac_quant_data_free(struct ac_quant *q);
/* Deep copy (dst->quant overwritten, not freed). */
void ac_quant_copy(ac_case *dst, const ac_case *src);
/* Codes in range for their format (4- and 5-bit formats). -1 with one line naming the tensor, the
 * first bad code and its index. */
int ac_quant_check_codes(const ac_case *c, ac_err *e);
/* The dense values of tensor x (binary64) from its codes and scales. */
void ac_quant_decode(ac_case *c, char x);
/* Quantizes tensor x of c (its values as they are, in its dtype, each taken as the nearest binary32)
 * with the format's reference quantizer (docs/quantized.md), then sets p.quant and replaces the
 * tensor by its exact values. -1 with one line (ac_qspec_check, or a case that takes none). */
int ac_quant_apply(ac_case *c, char x, const ac_qspec *q, ac_err *e);
/* Tensor x quantized again by its format's reference quantizer from its values as they are (each
 * taken as the nearest binary32; after a mutation of them): 1 when x is quantized, 0 otherwise. */
int ac_quant_requantize(ac_case *c, char x);
/* One mutation of the codes and scales of a quantized tensor of c (a code to another valid one, a
 * group's codes shifted by one, a scale doubled or halved), values decoded again; desc names it.
 * Nothing (0) for a case without quantized tensors. */
int ac_quant_mutate(ac_case *c, ac_rng *r, char *desc, size_t nd);
/* Hash words of the quantization (spec, codes, scales); nothing for a case without. */
void ac_quant_hash(const ac_case *c, void (*word)(void *s, uint64_t w), void (*bytes)(void *s, const void *d, size_t n),
                   void *s);
/* A quantized tensor of dst from src's by index maps: element (b, h, t, d) of dst is element
 * (bmap[b], hmap[h], tmap[t], dmap[d]) of src (NULL maps: identity; an entry -1: no source, the
 * element keeps zero codes and scales, value 0). Block scales need dmap to keep
 * whole blocks in place; a channel window cut inside a block is refused (-1). dst->p holds the new
 * shape and src's spec; its values are decoded from the copied codes. */
typedef struct { const int64_t *b, *h, *t, *d; } ac_qmap;
int ac_quant_remap(const ac_case *src, ac_case *dst, char x, const ac_qmap *m, ac_err *e);
/* The same for every quantized tensor: q by (bq, hq, tq, dq), k and v by (bk, hk, tk, dk / dv). */
typedef struct { ac_qmap q, k, v; } ac_qmaps;
int ac_quant_remap_all(const ac_case *src, ac_case *dst, const ac_qmaps *m, ac_err *e);

/* The element indices (dense) of scale group s of a tensor of dims d, in storage order, into idx
 * (their number); at most ac_qgroup_max of them. */
int64_t ac_qgroup_of(const ac_qspec *q, const int64_t d[4], int64_t s, int64_t *idx);
int64_t ac_qgroup_max(const ac_qspec *q, const int64_t d[4]);

/* ---- block-level adversaries (quant_adv.c) ------------------------------------------------- */
enum {
  AC_QADV_NONE = 0,
  AC_QADV_OUTLIER,          /* one element 300x the group's largest: the rest of its block quantizes to 0 */
  AC_QADV_ZERO_BLOCKS,      /* whole groups of zeros: scale 0 */
  AC_QADV_SCALE_OVERFLOW,   /* groups scaled to 1e7: amax / 127 overflows f16 (ggml's d = inf) */
  AC_QADV_SCALE_SUBNORMAL,  /* groups scaled so that their scale is a subnormal of its dtype (mxfp4: exponent 0) */
  AC_QADV_TIES,             /* values at ties of the format's quantizers: half-away and half-even differ on every code */
  AC_QADV_ASYM,             /* +M then -M in a block: q4_0's range [-8 d, 7 d] clips -M to -7M/8 */
  AC_QADV_NAN,              /* a NaN scale (ggml, int, fp4) or NaN code (fp8) inside a group */
  AC_QADV_FAR_OUTLIER,      /* the rest of a group 2^-16 of its largest: a per-tensor fp8 scale leaves most codes subnormal */
  AC_QADV_GIVEN_SMALL,      /* a store tensor's given scales divided by 2 to 16: values past the largest code */
  AC_QADV_OFFSET,           /* a group shifted past 0 (all of one sign): min-max ranges without 0, zero points past the codes */
  AC_QADV_N
};
const char *ac_qadv_name(int pattern);
int ac_qadv_parse(const char *s, int *pattern);
/* Tensor x of c (not yet quantized) quantized by q with the pattern: values edited before the
 * reference quantizer (outlier, zero blocks, scale overflow and subnormal, ties, asymmetric range)
 * or codes and scales after it (NaN), in some of its groups drawn from r. -1 with one line. */
int ac_quant_adversary(ac_case *c, char x, const ac_qspec *q, int pattern, ac_rng *r, ac_err *e);
/* gen's quantized tensors: spec[0..2] (q, k, v; NULL: plain) parsed and applied, k and v with the
 * adversary named (NULL: none) drawn from seed. -1 with one line naming the option. */
int ac_quant_apply_specs(ac_case *c, const char *const spec[3], const char *adversary, uint64_t seed, ac_err *e);

/* ---- reference quantizers (quant_ref.c) -------------------------------------------------- */
/* Quantizes the n values x of one scale group (a block, token, channel, head or tensor) into codes,
 * the scale's bits and the aux's bits (min or zero point; for NVFP4 the block scale is computed
 * against *tscale, the tensor scale, which the caller computes first with ac_qref_nvfp4_tscale). */
void ac_qref_group(int fmt, const float *x, int64_t n, uint8_t *codes, uint64_t *scale, uint64_t *aux,
                   float tscale);
float ac_qref_nvfp4_tscale(const float *x, int64_t n);
/* The nearest e2m1 code of x (ties to even, saturating at 6). */
uint8_t ac_e2m1_encode(double x);
/* The nearest e4m3fnuz code (ties to even, saturating at 240; NaN to 0x80). */
uint8_t ac_e4m3fnuz_encode(double x);

/* ---- quantize-on-store (quant_store.c) ------------------------------------------------------ */
/* The quantizer of a tensor a kernel stores itself, packed into ac_qspec.store as
 * rule | round << 8 | arith << 16 | overflow << 24 (rule AC_QSR_NONE: not a store), named
 * "RULE-ROUND-ARITH-OVERFLOW" ("absmax-even-f32-sat"; "ggml" alone):
 *   rule      absmax: s = max|x| / the largest code (fp8 formats, int8 with zero point 0);
 *             minmax: s = (max - min) / (qmax - qmin) over the group, a zero point for min (int formats);
 *             given: the case's scales (and zero points) as they are (fp8 and int formats);
 *             ggml: ggml's quantize_row_*_ref of the format (the ggml formats; its own rounding);
 *   round     even (nearest, ties to even), away (ties away from zero), trunc (toward zero): x / s to a code;
 *   arith     f32: every step in binary32 as written (s, then x / s, then + z), the scale then rounded into
 *             its dtype; exact: every step exact, each stored quantity rounded once (nearest even);
 *   overflow  sat: beyond the largest code, the largest; nan: fp8's non-saturating conversion (NaN for
 *             e4m3fn and e4m3fnuz, inf for e5m2).
 * A scale that comes out 0 or non-finite is 1. */
enum { AC_QSR_NONE = 0, AC_QSR_ABSMAX, AC_QSR_MINMAX, AC_QSR_GIVEN, AC_QSR_GGML, AC_QSR_N };
enum { AC_QRD_EVEN = 0, AC_QRD_AWAY, AC_QRD_TRUNC, AC_QRD_N };
enum { AC_QAR_F32 = 0, AC_QAR_EXACT, AC_QAR_N };
enum { AC_QOV_SAT = 0, AC_QOV_NAN, AC_QOV_N };
typedef struct { int rule, round, arith, overflow; } ac_qstore;
static inline int ac_qstore_rule(int32_t v) { return v & 0xff; }
static inline void ac_qstore_unpack(int32_t v, ac_qstore *s)
{
  s->rule = v & 0xff, s->round = (v >> 8) & 0xff, s->arith = (v >> 16) & 0xff, s->overflow = (v >> 24) & 0xff;
}
static inline int32_t ac_qstore_pack(const ac_qstore *s)
{
  return (int32_t)((uint32_t)s->rule | (uint32_t)s->round << 8 | (uint32_t)s->arith << 16 | (uint32_t)s->overflow << 24);
}
/* "absmax-even-f32-sat" (round, arith, overflow default to even, f32, sat; any order) into *v. -1 with
 * one line for an unknown word. */
int ac_qstore_parse(const char *s, int32_t *v, ac_err *e);
const char *ac_qstore_str(int32_t v, char *buf, size_t n);
/* A comma list of quantizers into q (at most max); their number, or -1 with one line (e may be NULL). */
int ac_qstore_list_parse(const char *s, int32_t *q, int max, ac_err *e);
/* The quantizer fits q's format and granularity. -1 with one line. */
int ac_qstore_check(const ac_qspec *q, char tensor, ac_err *e);
/* The codes, scales and aux of one group of n plain values x (exact binary64 readings of the case's
 * dtype) by q's quantizer; for the rule given, *scale and *aux hold the given bits on entry. */
void ac_qstore_group(const ac_qspec *q, const double *x, int64_t n, uint8_t *codes, uint64_t *scale, uint64_t *aux);
/* Tensor x of c, a store tensor whose plain values (and, rule given, scales) are set: its codes and
 * scales by the quantizer, then its values decoded (quant_case.c). */
void ac_quant_store_derive(ac_case *c, char x);
/* Every store tensor's plain values are finite (its scales come from them): -1 with one line. */
int ac_quant_store_check(const ac_case *c, ac_err *e);

/* ---- packed codes (quant_pack.c) --------------------------------------------------------- */
/* The n codes of a tensor (rows of D codes, D a multiple of the codes a byte takes, so that a row
 * starts on a byte) packed as q says into out (n / per bytes), and back. */
void ac_qpack(const ac_qspec *q, const uint8_t *codes, int64_t n, uint8_t *out);
void ac_qunpack(const ac_qspec *q, const uint8_t *packed, int64_t n, uint8_t *codes);
/* Code d of a packed row (the bytes of one row of D codes). */
static inline uint8_t ac_qpacked_code(int pack, int bits, const uint8_t *row, int64_t d)
{
  int per = 8 / bits;
  int64_t at = d % per;
  int sh = (int)(pack == AC_QPACK_HIGH_FIRST ? (per - 1 - at) * bits : at * bits);
  return (uint8_t)((row[d / per] >> sh) & ((1u << bits) - 1));
}

/* ---- ggml's block layouts (quant_ggml.c) ------------------------------------------------- */
/* One block of 32 codes with its scale (f16 bits) and min (f16 bits, q4_1 and q5_1) packed into
 * ggml's bytes (ac_qfmt_info.ggml_bytes), and back. -1 for a format without a ggml layout. */
int ac_qggml_pack(int fmt, const uint8_t *codes, uint16_t d, uint16_t m, uint8_t *out);
int ac_qggml_unpack(int fmt, const uint8_t *in, uint8_t *codes, uint16_t *d, uint16_t *m);
/* Every block of tensor x of c, row after row ([B][H][T][D / 32] blocks): ggml's byte image of the
 * tensor, malloc'd, *n its bytes; NULL for a tensor that is not in a ggml format. */
uint8_t *ac_qggml_tensor(const ac_case *c, char x, size_t *n);

#endif
