/* store_judge.h: the store of a quantize-on-store case (docs/quantized.md "Quantize-on-store"). */
#ifndef AC_STORE_JUDGE_H
#define AC_STORE_JUDGE_H
#include "compare.h"
#include "harness.h"

/* What run stored for each store tensor of c against the quantizer of its spec (c's codes and
 * scales), exactly: a STORE-FAIL in rep per tensor that differs, naming how many codes, scales and
 * zero points differ and the element whose value differs most. When one differs (*differs 1) and
 * over is not NULL, over is a copy of c whose store tensors are what the kernel stored (read tensors,
 * values decoded from them): its attention is judged over that (ac_case_free after). Nothing for another case or a run
 * that did not finish; -1 only for a tool error. */
int ac_store_judge(const ac_case *c, const ac_run_result *run, ac_report *rep, ac_case *over, int *differs, ac_err *e);

#endif
