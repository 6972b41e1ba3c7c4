/* tgrad_ref.h: the backward pass of plain attention by brute force, written from the formula of
 * docs/backward.md with plain MPFR at a huge precision (round to nearest everywhere, no exact
 * reasoning), for the tests of the backward oracle (tests/tgrad.c). */
#ifndef AC_TGRAD_REF_H
#define AC_TGRAD_REF_H
#include <mpfr.h>
#include "casefile.h"

/* dq[batch*heads*tq*dk], dk[batch*kv_heads*tk*dk], dv[batch*kv_heads*tk*dv], each element
 * initialised by the caller; set at precision prec plus what the largest score gap cancels.
 * dsink[heads] (with sinks, else NULL): dσ_h = -Σ_{b,i} P_i,sink D_i. dout dense [B][H][tq][dv] in p.dtype; every
 * value finite. */
void gref_backward(const ac_case *c, const void *dout, mpfr_prec_t prec, mpfr_t *dq, mpfr_t *dk, mpfr_t *dv,
                   mpfr_t *dsink);

#endif
