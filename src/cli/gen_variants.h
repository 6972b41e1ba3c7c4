/* gen_variants.h: the attention-variant options of `attncheck gen` (gen_variants.c). */
#ifndef AC_GEN_VARIANTS_H
#define AC_GEN_VARIANTS_H
#include "vgen.h"

/* A finite decimal (or hex float) into *out; -1 otherwise. */
int ac_gen_parse_double(const char *s, double *out);
/* Applies the variant option called name (window, window-align, softcap, alibi, alibi-per-batch, bias,
 * bias-dtype, bias-broadcast, bool-mask, mask-broadcast, sinks, descale, dropout, dropout-seed) with
 * value a to v; 1 when the value is bad or the name is none of them. */
int ac_gen_variant_option(ac_vspec *v, const char *name, const char *a);

#endif
