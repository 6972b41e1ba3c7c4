/* casefile_quant.h: quantized tensors in a case file (docs/quantized.md "Case files").
 * meta.json gains "quant": {"k": {"format": "q4_0", "granularity": "block", "block": 32,
 * "scale_dtype": "f16"}, "v": {...}} for each quantized tensor, whose dense member (q, k or v) is
 * then absent; the NPZ holds instead, for tensor X:
 *   X_codes        |u1 (|i1 for q8_0 and int8) [B, H, T, D]: one code per element
 *   X_scales       the scale dtype (<f2, <f4, |u1 for e4m3 and e8m0 bit patterns), shape by granularity
 *   X_mins         <f2, as X_scales (q4_1, q5_1)
 *   X_zeros        |i1, as X_scales (int8, int4)
 *   X_tensor_scale <f4 [1] (nvfp4)
 *   X              a quantize-on-store tensor's plain values (the case's dtype) in place of the
 *                  members above, beside its given X_scales (and X_zeros) for the rule given
 * with "token_group", "zero_dtype", "packing" ("low", "high") and "store" (the quantizer) in meta.json
 * where the spec has them; packed codes hold D / per bytes along the last axis. Every mismatch (a
 * missing or extra member, a wrong descr or shape, a code out of range, a format, granularity, block,
 * dtype or packing the tensor cannot take) is one line naming the file. */
#ifndef AC_CASEFILE_QUANT_H
#define AC_CASEFILE_QUANT_H
#include <json-c/json.h>
#include "casefile.h"
#include "npz.h"

/* 1 when name is a member of a quantized tensor (q_codes, k_scales, ...). */
int ac_quant_member_name(const char *name);
/* Adds "quant" to meta (nothing for a case without quantized tensors). */
void ac_quant_meta_write(json_object *meta, const ac_problem *p);
/* Reads meta.json's "quant" into c->p.quant; -1 with "PATH: meta.json quant...". */
int ac_quant_meta_read(json_object *v, ac_case *c, const char *path, ac_err *e);
/* Writes the members of c's quantized tensors. */
int ac_quant_members_write(ac_npz_writer *w, const ac_case *c, ac_err *e);
/* Checks and reads them (c->p validated first), checks the codes, decodes the values. A quantized
 * tensor's dense member must be absent, and a member of an unquantized one is refused. */
int ac_quant_members_read(ac_npz *z, ac_case *c, ac_err *e);
/* What a kernel stored for store tensor x of p (an exec worker's output: X_codes, X_scales and the
 * aux member, as a case file holds a quantized tensor of that spec) into t's allocated arrays (codes
 * unpacked). -1 with one line (no file name). */
struct ac_qdata_s;
int ac_quant_stored_read(ac_npz *z, const ac_problem *p, char x, struct ac_qdata_s *t, ac_err *e);

#endif
