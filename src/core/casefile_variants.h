/* casefile_variants.h: the attention variants in a case file (docs/variants.md "Case files").
 * meta.json gains a "variants" object (only in variant cases):
 *   {"features": ["window", "softcap", "alibi", "bias", "bool_mask", "sinks", "descale"],
 *    "window": [LEFT, RIGHT], "window_align": "bottom-right" | "top-left",
 *    "softcap": "HEX-FLOAT" (or a JSON number), "alibi_per_batch": true | false,
 *    "bias_dtype": "f32" (default: the case's dtype)}
 * and the NPZ gains members: bias [1|B, 1|H, tq, tk] (bias_dtype), mask [1|B, 1|H, tq, tk]
 * (|b1 or |u1, values 0/1, 1 = visible), alibi_slopes <f4 [H] or [B, H], sinks <f4 [H],
 * descale_q / descale_k / descale_v <f4 [B, KVH]. A tensor feature needs its member and a
 * member needs its feature; every mismatch is one line naming the file and the field. */
#ifndef AC_CASEFILE_VARIANTS_H
#define AC_CASEFILE_VARIANTS_H
#include <json-c/json.h>
#include "casefile.h"
#include "npz.h"

/* 1 when name is the member of a variant tensor ("bias", "mask", ...). */
int ac_variants_member_name(const char *name);
/* Adds "variants" to meta for a variant case (nothing for a plain one). */
void ac_variants_meta_write(json_object *meta, const ac_problem *p);
/* Reads the value of meta.json's "variants" into c->p.f (after the dtype was read); -1 with
 * "PATH: meta.json variants...". A case without "variants" is plain (ac_case_init's zeros). */
int ac_variants_meta_read(json_object *variants, ac_case *c, const char *path, ac_err *e);
/* Writes the variant members of c. */
int ac_variants_members_write(ac_npz_writer *w, const ac_case *c, ac_err *e);
/* Checks every variant member against meta.json (shapes set the broadcast extents), the sizes
 * against the memory cap, then reads them. */
int ac_variants_members_read(ac_npz *z, ac_case *c, ac_err *e);

#endif
