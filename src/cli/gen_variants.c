/* gen_variants.c: the attention-variant options of `attncheck gen` (docs/variants.md, docs/dropout.md)
 * into a variant spec (vgen.h). */
#include "config.h"
#include "gen_variants.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dropout.h"

int ac_gen_parse_double(const char *s, double *out)
{
  char *end;
  if (!s || !*s) return -1;
  double v = strtod(s, &end);
  if (*end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* An index into names (a NULL-terminated list), or -1. */
static int name_index(const char *const *names, const char *s)
{
  for (int i = 0; names[i]; i++)
    if (!strcmp(names[i], s)) return i;
  return -1;
}

/* "b", "h" or "bh": which extents are broadcast. */
static int parse_bcast(const char *a, int *b, int *h)
{
  *b = !strcmp(a, "b") || !strcmp(a, "bh");
  *h = !strcmp(a, "h") || !strcmp(a, "bh");
  return *b || *h ? 0 : -1;
}

/* "PATTERN" or "PATTERN:VALUE" for --bias. */
static int parse_bias(const char *a, ac_vspec *v)
{
  static const char *const names[] = {"normal", "neginf-blocks", "neginf-rows", "sentinel", "nan-masked", "ramp", NULL};
  char name[32];
  const char *colon = strchr(a, ':');
  size_t n = colon ? (size_t)(colon - a) : strlen(a);
  if (n >= sizeof name) return -1;
  memcpy(name, a, n);
  name[n] = 0;
  int k = name_index(names, name);
  if (k < 0) return -1;
  v->bias = k;
  v->bias_scale = k == AC_VB_SENTINEL ? -1e4 : k == AC_VB_SLOPE ? 4 : 1;
  if (colon && (ac_gen_parse_double(colon + 1, &v->bias_scale) || (k == AC_VB_NORMAL && v->bias_scale < 0))) return -1;
  v->used |= AC_FEAT_BIAS;
  return 0;
}

int ac_gen_variant_option(ac_vspec *v, const char *name, const char *a)
{
  static const char *const masks[] = {"random", "banded", "empty-middle", "sparse", NULL};
  static const char *const sinks[] = {"normal", "dominant", "vanishing", "level", NULL};
  static const char *const descales[] = {"normal", "tiny", "huge", NULL};
  int k;
  char tail;
  long long l, r;
  ac_err e;
  if (!strcmp(name, "window")) {
    if (sscanf(a, "%lld,%lld%c", &l, &r, &tail) != 2 || l < -1 || r < -1) return 1;
    v->win_left = l, v->win_right = r, v->used |= AC_FEAT_WINDOW;
    return 0;
  }
  if (!strcmp(name, "window-align")) {
    if (strcmp(a, "top-left") && strcmp(a, "bottom-right")) return 1;
    v->win_top_left = !strcmp(a, "top-left");
    return 0;
  }
  if (!strcmp(name, "softcap")) {
    v->used |= AC_FEAT_SOFTCAP;
    return ac_gen_parse_double(a, &v->softcap) || !(v->softcap > 0);
  }
  if (!strcmp(name, "alibi")) {
    v->used |= AC_FEAT_ALIBI;
    return ac_gen_parse_double(a, &v->alibi_max) || v->alibi_max < 0;
  }
  if (!strcmp(name, "alibi-per-batch")) return v->alibi_per_batch = 1, 0;
  if (!strcmp(name, "bias")) return parse_bias(a, v) != 0;
  if (!strcmp(name, "bias-dtype")) {
    ac_dtype t;
    if (ac_dtype_parse(a, &t)) return 1;
    v->bias_dtype = (int)t + 1;
    return 0;
  }
  if (!strcmp(name, "bias-broadcast")) return parse_bcast(a, &v->bias_bcast_b, &v->bias_bcast_h) != 0;
  if (!strcmp(name, "mask-broadcast")) return parse_bcast(a, &v->mask_bcast_b, &v->mask_bcast_h) != 0;
  if (!strcmp(name, "bool-mask")) {
    if ((k = name_index(masks, a)) < 0) return 1;
    v->bmask = k, v->used |= AC_FEAT_BOOL_MASK;
    return 0;
  }
  if (!strcmp(name, "sinks")) {
    if ((k = name_index(sinks, a)) < 0) return 1;
    v->sinks = k, v->used |= AC_FEAT_SINKS;
    return 0;
  }
  if (!strcmp(name, "descale")) {
    if ((k = name_index(descales, a)) < 0) return 1;
    v->descale = k, v->used |= AC_FEAT_DESCALE;
    return 0;
  }
  if (!strcmp(name, "dropout")) {
    v->used |= AC_FEAT_DROPOUT;
    return ac_dropout_parse(a, &v->dropout_p, &e) != 0;
  }
  if (!strcmp(name, "dropout-seed")) return v->dropout_seed_set = 1, ac_parse_u64(a, &v->dropout_seed) != 0;
  return 1;
}
