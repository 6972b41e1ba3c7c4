/* owner: exec backend */
/* grad_npz.h: the gradients of a case read from an NPZ file (an exec worker's backward answer,
 * attncheck compare --grad): members dq [B,H,tq,dk], dk [B,KVH,tk,dk], dv [B,KVH,tk,dv] in the
 * case dtype (numpy descr of the dtype table: bf16 as <u2, fp8 as |u1 bit patterns) and, with
 * sinks, dsinks [H] float32 (<f4). */
#ifndef AC_GRAD_NPZ_H
#define AC_GRAD_NPZ_H
#include "casefile.h"
#include "harness.h"

/* Fills r->g, r->count (and r->dsinks when the case has sinks and the file the member; a
 * missing dsinks is an error only with need_dsinks) and sets r->status OK. -1 with one line
 * naming the file and the member when one is missing, unreadable, or of another dtype or shape
 * (r then holds nothing). */
int ac_grad_npz_read(const char *path, const ac_case *c, int need_dsinks, ac_grad_run_result *r, ac_err *e);

#endif
