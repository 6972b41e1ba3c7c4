/* precision.h: precision classes (docs/numerics.md §6). A class is a set of parts, each a stage
 * of an attention kernel's arithmetic (the rounding of Q, K and V on input, the score
 * accumulator, the storage of S and P, exp and its accuracy, the P·V and row-sum accumulators,
 * the LSE formula, subnormals), written as a class string "q=f16,qk=f32,pv=f16,l=f32" (every
 * part has a default); the unit roundoffs below, from which the budgets W (worst case) and E
 * (typical) follow term by term, are derived from the parts. The named classes are presets:
 * a name and the parts it stands for. Every place that takes a class takes a name or a string
 * (ac_precision_lookup); a string whose parts are a preset's is that preset. */
#ifndef AC_PRECISION_H
#define AC_PRECISION_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "dtype.h"
#include "util.h"

/* The parts of a class, in the order of its canonical string. */
enum {
  AC_PART_Q,
  AC_PART_K,
  AC_PART_V,
  AC_PART_SQK,
  AC_PART_QK,
  AC_PART_S,
  AC_PART_SM,
  AC_PART_EXP,
  AC_PART_EU,
  AC_PART_LSE,
  AC_PART_P,
  AC_PART_PV,
  AC_PART_L,
  AC_PART_RS,
  AC_PART_SUB,
  AC_PART_FOLD,
  AC_PART_DQ,
  AC_NPARTS
};
/* Values of the format parts: a dtype (ac_dtype), AC_PF_NONE, AC_PF_Q8 (q8_0 blocks), AC_PF_Q81 (q8_1
 * blocks: q8_0's with a block sum in f16), with AC_PF_TRUNC or'ed in for a truncating accumulator
 * (tensor cores). */
enum { AC_PF_NONE = -1, AC_PF_Q8 = 8, AC_PF_Q81 = 9, AC_PF_TRUNC = 16 };
enum { AC_SUB_IEEE = 0, AC_SUB_FTZ = 1, AC_SUB_DAZ = 2 };
typedef struct {
  int16_t v[AC_NPARTS];
} ac_prec_parts;

/* q8_0 (ggml's QK8_0): blocks of 32 values along d_k, one f16 scale d = max|x|/127 per block,
 * codes round(x/d) in [-127, 127]. */
#define AC_Q8_BLOCK 32

typedef struct {
  const char *name; /* a preset's name, else the class's canonical string */
  const char *description;
  double u_qk;          /* Q·Kᵀ accumulation */
  int qk_trunc;         /* truncating accumulation (tensor cores): 2u per step */
  double u_S;           /* storage of raw scores (0: never stored narrow) */
  double u_s;           /* score arithmetic (scale, subtract max, exp argument) */
  double u_e;           /* exp */
  double u_p;           /* storage of P before P·V (0: kept in the accumulation format) */
  double u_a;           /* P·V accumulation (and the row sum's when it is the same format, u_l) */
  int acc_trunc;        /* truncating accumulation for P·V */
  int64_t acc_block;    /* 0: sequential sum over T keys; b > 0: blocks of b keys, then a sum of the blocks */
  int64_t nr_tile;      /* online rescales n_r = ceil(T / nr_tile); 0: none (three-pass softmax) */
  double mu;            /* smallest P kept (P·V); below it P may be lost (F term) */
  double mu_sum;        /* smallest term the row sum keeps (LSE) */
  ac_dtype range;       /* the format whose range bounds scores (OUT-OF-DOMAIN rules 1-3) */
  double eta_qk;        /* underflow floor of QK^T accumulation and score storage: half the smallest
                           subnormal spacing of that format (binary32 2^-150, fp16 2^-25, bf16 2^-134) */
  double eta_a;         /* the same for the P.V accumulation format */
  ac_dtype score_store; /* format raw scores are stored in when narrower than range (AC_F64: not narrower) */
  ac_dtype scaled_in;   /* input format a kernel may round Q and K to after scaling them (each by sqrt|c|,
                           or Q by c) before Q·Kᵀ, as PyTorch's math path does: its unit roundoff and
                           underflow apply to every scaled element (AC_F64: scaled in binary32 or wider,
                           inside u_qk and eta_qk) */
  /* parts beyond the fields above (docs/numerics.md §7.17): 0 in every preset of the first table */
  ac_prec_parts parts;
  double eta_in; /* underflow of a scaled element of scaled_in (half its smallest spacing) */
  double u_l;    /* row-sum accumulation */
  int l_trunc;
  ac_dtype sum_range;               /* the format whose range bounds the partial P.V sums and row sums (rules 4-5) */
  double u_lse;                     /* the LSE formula's rounding unit (ln: u of the softmax format; log2: 1.5 u) */
  int rs_acc;                       /* the online rescale rounds in the accumulators' formats (n_r more roundings) */
  double u_qin, u_kin, u_vin;       /* Q, K, V rounded on input (relative; 0: not rounded) */
  double eta_qin, eta_kin, eta_vin; /* their underflow (absolute, per element) */
  int q8;                           /* Q rounded to q8_0 blocks (a per-block absolute error, docs/numerics.md §7.18) */
  int sub;                          /* AC_SUB_...: subnormal results flushed (FTZ), inputs too (DAZ) */
  double daz_qk, daz_v;             /* DAZ: largest input flushed to 0 in the score and P·V formats (0 without) */
  double u_fold; /* quantized tensors' scales folded into the softmax scale and the output (fold=f32: one
                    rounding each of scale·q_scale and ·k_scale, one of o'·v_scale; 0: not folded) */
  int q81;       /* Q in q8_1 blocks (q8 set too): the block sums of a q4_1 or q5_1 K's min term
                    (docs/numerics.md §7.18) */
  double u_dq;   /* quantized tensors dequantized in this format from code, scale and zero point (or min):
                    2u relative and 4u max|z s| absolute per element (dq=f32, docs/numerics.md §7.17); 0: not */
} ac_precision;

/* The presets, in listing order. */
const ac_precision *ac_precision_table(size_t *n);
/* A preset name or a class string (ac_precision_lookup); NULL if it is neither. */
const ac_precision *ac_precision_find(const char *name);
/* The class a name or class string stands for: a preset (by name, or a string with a preset's
 * parts), else the class built from the string, kept for the life of the process (the same
 * pointer for the same parts). A string is PART=VALUE,... (ac_precision_parts_help) optionally
 * after a preset name it starts from ("fp32,q=f16"). -1 with a one-line message naming the
 * unknown part or value. */
int ac_precision_lookup(const char *cls, const ac_precision **out, ac_err *e);
/* The canonical string of c: every part, in order, no spaces (a preset's parts too). */
void ac_precision_string(const ac_precision *c, char *buf, size_t n);
/* The default class of a dtype (fp64, fp32, fp16-fa2, bf16-fa2, e4m3-fa3, e5m2-fa3). */
const ac_precision *ac_precision_default(ac_dtype t);
/* The class that applies: override (--precision) if set, else the kernel's declared class, else
 * the dtype's default. Both may be a precision spec: entries separated by commas, each a class
 * (a name or class string) or DTYPE=class; an entry naming t wins over a bare class, a spec that
 * names neither leaves t to the next source. A part PART=VALUE continues the entry before it:
 * "f16=fp16-fa2,p=none,bf16=bf16-fa2" (ac_precision_spec_entry). -1 with a message naming the
 * unknown class or part. */
int ac_precision_resolve(const char *override_name, const char *declared, ac_dtype t,
                         const ac_precision **out, ac_err *e);
/* The class string spec gives dtype t into name ("" when spec names neither t nor a bare class);
 * 1 when it names t itself (a DTYPE= entry), 2 a bare class, 0 neither. */
int ac_precision_spec_entry(const char *spec, ac_dtype t, char *name, size_t n);
/* spec with every class named as ac_precision_lookup names it (a preset's name; a built class's
 * canonical string) and every dtype by its canonical name: the same text for a preset's name and
 * its string (reproducers). -1 (spec copied) when a class does not resolve or buf is too small. */
int ac_precision_spec_canonical(const char *spec, char *buf, size_t n);
/* 1 when spec (NULL allowed) has an entry for dtype t: DTYPE=CLASS naming t, or a bare class. */
int ac_precision_spec_names(const char *spec, ac_dtype t);
/* 0 when spec is a usable precision spec (every class, part and dtype known, at most one bare
 * class); -1 with a one-line message otherwise. */
int ac_precision_spec_check(const char *spec, ac_err *e);

/* Parts: parse a class string (after an optional preset name) into parts, -1 with a message;
 * format parts into the canonical string; derive a class's fields from its parts. */
int ac_prec_parts_parse(const char *s, ac_prec_parts *out, ac_err *e);
void ac_prec_parts_format(const ac_prec_parts *p, char *buf, size_t n);
void ac_prec_parts_derive(const ac_prec_parts *p, ac_precision *c);
/* The defaults (fp32's parts). */
void ac_prec_parts_default(ac_prec_parts *p);
/* The part names and values, one line each, for `list --precision` and usage errors. */
void ac_precision_parts_help(FILE *f);
/* The first part of c the backward budget (budget_grad.c) does not model, as "PART=VALUE" in
 * buf; 0 when it models every part (every preset), 1 otherwise. */
int ac_precision_grad_unmodelled(const ac_precision *c, char *buf, size_t n);

/* Number of online rescales and summation length for a row of T visible keys. */
int64_t ac_precision_nr(const ac_precision *c, int64_t T);
int64_t ac_precision_tacc(const ac_precision *c, int64_t T);

/* The mu thresholds the oracle is asked for (the same for every class, so that the oracle
 * cache is shared); index of a class's mu / mu_sum in that list. */
int ac_precision_mu_list(double *mu, int max);
int ac_precision_mu_index(double mu);

/* `attncheck list --precision`: the stage roundoffs of every preset, and the presets' parts. */
void ac_precision_print(FILE *f);
/* `attncheck list --precision CLASS`: its canonical string on the first line, then the budget
 * terms its parts imply. */
void ac_precision_print_class(FILE *f, const ac_precision *c);

#endif
