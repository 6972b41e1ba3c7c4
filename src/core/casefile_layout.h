/* casefile_layout.h: serving layouts in a case file (docs/layouts.md "Case files").
 * meta.json gains a "layout" object (only in layout cases):
 *   {"kind": "varlen" | "paged", "sequences": N, "page_size": PS, "num_pages": NP, "max_pages": MP}
 * (the page fields for paged cases only), and the NPZ gains int32 members cu_seqlens_q <i4 [N+1],
 * then cu_seqlens_k <i4 [N+1] (varlen), or block_table <i4 [N, MP] and cache_seqlens <i4 [N]
 * (paged). q, k, v (and o, lse) keep their carrier shapes [1, H, tq, d] (layout.h). */
#ifndef AC_CASEFILE_LAYOUT_H
#define AC_CASEFILE_LAYOUT_H
#include <json-c/json.h>
#include "casefile.h"
#include "npz.h"

/* 1 when name is a layout member ("cu_seqlens_q", ...). */
int ac_layout_member_name(const char *name);
/* Adds "layout" to meta for a layout case (nothing for a dense one). */
void ac_layout_meta_write(json_object *meta, const ac_case *c);
/* Reads meta.json's "layout" value into c (p.f.used's bit, p.l, the arrays allocated); -1 with
 * "PATH: meta.json layout...". */
int ac_layout_meta_read(json_object *v, ac_case *c, const char *path, ac_err *e);
int ac_layout_members_write(ac_npz_writer *w, const ac_case *c, ac_err *e);
/* Reads the layout members (a member without "layout" in meta.json, or one missing, is one
 * line), then checks the layout (ac_layout_validate). */
int ac_layout_members_read(ac_npz *z, ac_case *c, ac_err *e);

#endif
