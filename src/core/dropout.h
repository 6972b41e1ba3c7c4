/* dropout.h: dropout's keep-masks (docs/dropout.md): the reference mask generator, the drop
 * probability p as text, and the factor 1 / (1 - p). */
#ifndef AC_DROPOUT_H
#define AC_DROPOUT_H
#include <stdint.h>
#include "problem.h"

/* 1 when element x (the dense index [B][H][tq][tk]) of the mask of seed is kept: u >= p with u the
 * top 53 bits of ac_hash2(seed, x) times 2^-53, so each element is kept with probability within
 * 2^-53 of 1 - p, independently of the others as far as the hash goes. The built-in dropout
 * kernels and `attncheck gen --dropout` draw their masks with it. */
int ac_dropout_keep(uint64_t seed, uint64_t x, double p);
/* The mask of problem p (f.dropout_p, f.dropout_seed) into mask[B * H * tq * tk]. */
void ac_dropout_fill(const ac_problem *p, uint8_t *mask);
/* A drop probability from text (decimal or hex float), rounded to the nearest binary32 as
 * FlashAttention takes a Python float; -1 with one line unless it lands in [0, 1). */
int ac_dropout_parse(const char *s, double *p, ac_err *e);
/* An upper bound of 1 / (1 - p) within 2^-49 of it (p a binary32 value in [0, 1)): the factor of the
 * budget terms of dropout. */
double ac_dropout_inv_keep_up(double p);

#endif
