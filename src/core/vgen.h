/* vgen.h: generators of attention-variant inputs (docs/variants.md), shared by the suite and
 * the fuzzer's variant families. A variant spec names the features and a value pattern for
 * each variant tensor; ac_vspec_apply turns a plain case (shape and q/k/v already generated)
 * into a variant case, deterministically from a seed. */
#ifndef AC_VGEN_H
#define AC_VGEN_H
#include <stdint.h>
#include "casefile.h"

/* bias patterns */
enum {
  AC_VB_NORMAL = 0,    /* N(0, bias_scale^2) */
  AC_VB_NEGINF_BLOCKS, /* N(0,1) with 16x16 blocks of -inf (about a quarter of them) */
  AC_VB_NEGINF_ROWS,   /* N(0,1), every fifth row of each (b, h) wholly -inf (rows emptied by the bias) */
  AC_VB_SENTINEL,      /* 0 where visible, the finite sentinel (bias_scale, e.g. -1e4, -65504, -1e9,
                          -FLT_MAX) on a random third of the keys: a mask written as a large finite value */
  AC_VB_NAN_MASKED,    /* N(0,1) on keys the mask leaves visible, NaN on keys it hides (never visible) */
  AC_VB_SLOPE          /* a smooth ramp bias_scale * (j - i) / tk: a learned relative-position bias */
};
/* boolean mask patterns */
enum {
  AC_VM_RANDOM = 0,    /* each key visible with probability 0.7 */
  AC_VM_BANDED,        /* visible iff |i - j| <= 8 (a band that tiles cut at every edge) */
  AC_VM_EMPTY_MIDDLE,  /* random, and the middle third of the rows of each (b, h) fully masked */
  AC_VM_SPARSE         /* probability 0.05: many rows with one or no visible key */
};
/* sink patterns */
enum {
  AC_VS_NORMAL = 0, AC_VS_DOMINANT, AC_VS_VANISHING,
  AC_VS_LEVEL          /* at the LSE of the head's last query row (its scale q.k scores over the keys
                          it sees, other variants left out) + U(-3, 3): a weight of 5 % to 95 %
                          whatever T, where every sink-accounting slip shows */
};
/* descale patterns */
enum { AC_VD_NORMAL = 0, AC_VD_TINY, AC_VD_HUGE };

typedef struct ac_vspec_s {
  uint32_t used;                 /* AC_FEAT_... (MIXED_DTYPES is not generated here: ac_features_set_dtypes) */
  int64_t win_left, win_right;   /* AC_FEAT_WINDOW */
  int win_top_left;
  double softcap;                /* AC_FEAT_SOFTCAP */
  int alibi_per_batch;           /* AC_FEAT_ALIBI */
  double alibi_max;              /* slopes m_h = alibi_max * 2^(-8 h / H) (ALiBi's geometric slopes, scaled) */
  int bias;                      /* AC_VB_... */
  double bias_scale;             /* sigma, sentinel value or ramp height */
  int bias_bcast_b, bias_bcast_h;   /* 1: stored with extent 1 (broadcast) */
  int bias_dtype;                /* ac_dtype + 1 of the bias tensor; 0: the case's dtype */
  int bmask;                     /* AC_VM_... */
  int mask_bcast_b, mask_bcast_h;
  int sinks;                     /* AC_VS_... */
  int descale;                   /* AC_VD_... */
  double dropout_p;              /* AC_FEAT_DROPOUT (binary32, [0, 1)): the mask from ac_dropout_fill */
  uint64_t dropout_seed;         /* its seed when dropout_seed_set, else the case's seed */
  int dropout_seed_set;
} ac_vspec;

/* Sets c->p.f from v, allocates and fills the variant tensors (streams 11.. of seed; q, k, v
 * untouched except that DESCALE leaves them as they are: the descales are the only change).
 * The case's per-tensor dtypes (mixed_dtypes, ac_features_set_dtypes) and layout are kept
 * (a layout case's bias and boolean mask are drawn per sequence, ALiBi slopes per sequence).
 * -1 with a message when the result would not validate (e.g. a window below -1). */
int ac_vspec_apply(ac_case *c, const ac_vspec *v, uint64_t seed, ac_err *e);
/* A short name for case names: "win16,0", "cap30", "alibi", "bias-neginf", "mask-band", "sink-dom", ... */
void ac_vspec_name(const ac_vspec *v, char *buf, size_t n);

#endif
