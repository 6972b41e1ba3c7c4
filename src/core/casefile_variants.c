/* casefile_variants.c: the attention variants in a case file (casefile_variants.h). */
#include "config.h"
#include "casefile_variants.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "variants.h"

int ac_variants_member_name(const char *name)
{
  for (int t = 0; t < AC_FT_N; t++)
    if (!strcmp(name, ac_feat_tensor_name((ac_feat_tensor)t))) return 1;
  return 0;
}

void ac_variants_meta_write(json_object *meta, const ac_problem *p)
{
  const ac_features *f = &p->f;
  if (!(f->used & (AC_FEAT_ALL | AC_FEAT_DROPOUT))) return;   /* layouts alone: no "variants" */
  json_object *v = json_object_new_object(), *fl = json_object_new_array();
  for (uint32_t b = 1; b & AC_FEAT_ALL; b <<= 1)
    if (f->used & b) json_object_array_add(fl, json_object_new_string(ac_feat_name(b)));
  if (f->used & AC_FEAT_DROPOUT) {
    char buf[64];
    json_object_array_add(fl, json_object_new_string(ac_feat_name(AC_FEAT_DROPOUT)));
    snprintf(buf, sizeof buf, "%a", f->dropout_p);
    json_object_object_add(v, "dropout_p", json_object_new_string(buf));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)f->dropout_seed);
    json_object_object_add(v, "dropout_seed", json_object_new_string(buf));
  }
  json_object_object_add(v, "features", fl);
  if (f->used & AC_FEAT_WINDOW) {
    json_object *w = json_object_new_array();
    json_object_array_add(w, json_object_new_int64(f->win_left));
    json_object_array_add(w, json_object_new_int64(f->win_right));
    json_object_object_add(v, "window", w);
    json_object_object_add(v, "window_align", json_object_new_string(f->win_top_left ? "top-left" : "bottom-right"));
  }
  if (f->used & AC_FEAT_SOFTCAP) {
    char buf[64];
    snprintf(buf, sizeof buf, "%a", f->softcap);
    json_object_object_add(v, "softcap", json_object_new_string(buf));
  }
  if (f->used & AC_FEAT_ALIBI) json_object_object_add(v, "alibi_per_batch", json_object_new_boolean(f->alibi_per_batch));
  if (f->used & AC_FEAT_BIAS) json_object_object_add(v, "bias_dtype", json_object_new_string(ac_dtype_name(f->bias_dtype)));
  if (f->used & AC_FEAT_MIXED_DTYPES) {
    json_object *d = json_object_new_object();
    const ac_dtype dt[4] = {f->qd, f->kd, f->vd, f->od};
    for (int i = 0; i < 4; i++) json_object_object_add(d, (const char *[]){"q", "k", "v", "o"}[i], json_object_new_string(ac_dtype_name(dt[i])));
    json_object_object_add(v, "dtypes", d);
  }
  json_object_object_add(meta, "variants", v);
}

static int read_features(json_object *v, ac_features *f, const char *path, ac_err *e)
{
  json_object *fl;
  if (!json_object_object_get_ex(v, "features", &fl) || !json_object_is_type(fl, json_type_array))
    return ac_err_set(e, "%s: meta.json variants.features must be an array of names", path);
  for (size_t i = 0; i < json_object_array_length(fl); i++) {
    json_object *x = json_object_array_get_idx(fl, i);
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    uint32_t bit = !strcmp(s, ac_feat_name(AC_FEAT_DROPOUT)) ? AC_FEAT_DROPOUT : 0;
    for (uint32_t b = 1; b & AC_FEAT_ALL; b <<= 1)
      if (!strcmp(s, ac_feat_name(b))) bit = b;
    if (!bit) return ac_err_set(e, "%s: meta.json variants.features: unknown feature '%.40s'", path, s);
    f->used |= bit;
  }
  return 0;
}

static int read_window(json_object *v, ac_features *f, const char *path, ac_err *e)
{
  json_object *w, *a;
  if (!json_object_object_get_ex(v, "window", &w) || !json_object_is_type(w, json_type_array) || json_object_array_length(w) != 2 ||
      !json_object_is_type(json_object_array_get_idx(w, 0), json_type_int) ||
      !json_object_is_type(json_object_array_get_idx(w, 1), json_type_int))
    return ac_err_set(e, "%s: meta.json variants.window must be [LEFT, RIGHT] (integers, -1 = unbounded)", path);
  f->win_left = json_object_get_int64(json_object_array_get_idx(w, 0));
  f->win_right = json_object_get_int64(json_object_array_get_idx(w, 1));
  if (f->win_left < -1 || f->win_right < -1)
    return ac_err_set(e, "%s: meta.json variants.window [%lld, %lld]: values below -1", path, (long long)f->win_left,
                      (long long)f->win_right);
  if (json_object_object_get_ex(v, "window_align", &a)) {
    const char *s = json_object_is_type(a, json_type_string) ? json_object_get_string(a) : "";
    if (!strcmp(s, "top-left")) f->win_top_left = 1;
    else if (strcmp(s, "bottom-right"))
      return ac_err_set(e, "%s: meta.json variants.window_align must be \"bottom-right\" or \"top-left\"", path);
  }
  return 0;
}

static int read_softcap(json_object *v, ac_features *f, const char *path, ac_err *e)
{
  json_object *c;
  if (!json_object_object_get_ex(v, "softcap", &c)) return ac_err_set(e, "%s: meta.json variants lacks \"softcap\"", path);
  if (json_object_is_type(c, json_type_string)) {
    ac_err se;
    if (ac_scale_parse_hex(json_object_get_string(c), &f->softcap, &se))
      return ac_err_set(e, "%s: meta.json variants.softcap: %s", path, se.msg);
  } else if (json_object_is_type(c, json_type_double) || json_object_is_type(c, json_type_int)) {
    f->softcap = json_object_get_double(c);
  } else {
    return ac_err_set(e, "%s: meta.json variants.softcap must be a number or a hex-float string", path);
  }
  if (!(isfinite(f->softcap) && f->softcap > 0))
    return ac_err_set(e, "%s: meta.json variants.softcap %g: must be finite and > 0", path, f->softcap);
  return 0;
}

/* variants.dropout_p (a hex-float string of a binary32 value in [0, 1)) and variants.dropout_seed (a
 * decimal string of a 64-bit unsigned integer): present exactly with dropout (docs/dropout.md). */
static int read_dropout(json_object *v, ac_features *f, const char *path, ac_err *e)
{
  json_object *x, *y;
  int hp = json_object_object_get_ex(v, "dropout_p", &x), hs = json_object_object_get_ex(v, "dropout_seed", &y);
  if (!(f->used & AC_FEAT_DROPOUT)) {
    if (hp || hs) return ac_err_set(e, "%s: meta.json variants.dropout_%s present but variants.features lacks dropout", path, hp ? "p" : "seed");
    return 0;
  }
  ac_err se;
  if (!hp || !json_object_is_type(x, json_type_string))
    return ac_err_set(e, "%s: meta.json variants.dropout_p must be a hex-float string with dropout", path);
  if (ac_scale_parse_hex(json_object_get_string(x), &f->dropout_p, &se))
    return ac_err_set(e, "%s: meta.json variants.dropout_p: %s", path, se.msg);
  if (ac_dropout_p_check(f->dropout_p, &se)) return ac_err_set(e, "%s: meta.json variants.%s", path, se.msg);
  const char *s = hs && json_object_is_type(y, json_type_string) ? json_object_get_string(y) : NULL;
  char *end = NULL;
  errno = 0;
  unsigned long long seed = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
  if (!s || !end || *end || errno)
    return ac_err_set(e, "%s: meta.json variants.dropout_seed must be a decimal string of an unsigned 64-bit integer", path);
  f->dropout_seed = (uint64_t)seed;
  return 0;
}

/* variants.dtypes {"q": NAME, "k": NAME, "v": NAME, "o": NAME}: present exactly with mixed_dtypes. */
static int read_dtypes(json_object *v, ac_problem *p, const char *path, ac_err *e)
{
  ac_features *f = &p->f;
  json_object *d, *x;
  int has = json_object_object_get_ex(v, "dtypes", &d);
  if (!(f->used & AC_FEAT_MIXED_DTYPES)) {
    if (has) return ac_err_set(e, "%s: meta.json variants.dtypes present but variants.features lacks mixed_dtypes", path);
    return 0;
  }
  if (!has || !json_object_is_type(d, json_type_object))
    return ac_err_set(e, "%s: meta.json variants.dtypes must be an object {\"q\", \"k\", \"v\", \"o\": dtype names} with mixed_dtypes", path);
  ac_dtype *dst[4] = {&f->qd, &f->kd, &f->vd, &f->od};
  static const char *const keys[4] = {"q", "k", "v", "o"};
  for (int i = 0; i < 4; i++) {
    if (!json_object_object_get_ex(d, keys[i], &x))
      return ac_err_set(e, "%s: meta.json variants.dtypes lacks \"%s\"", path, keys[i]);
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    if (ac_dtype_parse(s, dst[i])) return ac_err_set(e, "%s: meta.json variants.dtypes.%s: unknown dtype '%.40s'", path, keys[i], s);
  }
  if (json_object_object_length(d) != 4)
    return ac_err_set(e, "%s: meta.json variants.dtypes has keys other than q, k, v and o", path);
  ac_err de;
  if (ac_features_dtypes_check(p, &de)) return ac_err_set(e, "%s: meta.json %s", path, de.msg);
  return 0;
}

int ac_variants_meta_read(json_object *v, ac_case *c, const char *path, ac_err *e)
{
  ac_features_plain(&c->p);
  json_object *x;
  if (!json_object_is_type(v, json_type_object)) return ac_err_set(e, "%s: meta.json \"variants\" is not an object", path);
  ac_features *f = &c->p.f;
  if (read_features(v, f, path, e)) return -1;
  if ((f->used & AC_FEAT_WINDOW) && read_window(v, f, path, e)) return -1;
  if ((f->used & AC_FEAT_SOFTCAP) && read_softcap(v, f, path, e)) return -1;
  if (read_dropout(v, f, path, e)) return -1;
  if (read_dtypes(v, &c->p, path, e)) return -1;
  if (json_object_object_get_ex(v, "alibi_per_batch", &x)) {
    if (!json_object_is_type(x, json_type_boolean))
      return ac_err_set(e, "%s: meta.json variants.alibi_per_batch must be true or false", path);
    f->alibi_per_batch = json_object_get_boolean(x);
  }
  if (json_object_object_get_ex(v, "bias_dtype", &x)) {
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    if (ac_dtype_parse(s, &f->bias_dtype)) return ac_err_set(e, "%s: meta.json variants.bias_dtype: unknown dtype '%.40s'", path, s);
  }
  return 0;
}

int ac_variants_members_write(ac_npz_writer *w, const ac_case *c, ac_err *e)
{
  const ac_problem *p = &c->p;
  for (int t = 0; t < AC_FT_N; t++) {
    int64_t shape[4];
    size_t es;
    int nd = ac_feat_tensor_shape(p, (ac_feat_tensor)t, shape, &es);
    if (!nd) continue;
    const void *data = *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t);
    if (!data) return ac_err_set(e, "case uses %s but has no %s tensor", ac_feat_name(ac_feat_tensor_bit((ac_feat_tensor)t)),
                                 ac_feat_tensor_name((ac_feat_tensor)t));
    const char *descr = t == AC_FT_BIAS ? ac_dtype_get(p->f.bias_dtype)->npy
                        : t == AC_FT_BOOL_MASK || t == AC_FT_DROPOUT_MASK ? "|b1" : "<f4";
    size_t n = (size_t)ac_feat_tensor_bytes(p, (ac_feat_tensor)t);
    if (ac_npz_add_array(w, ac_feat_tensor_name((ac_feat_tensor)t), descr, nd, shape, data, n, e)) return -1;
  }
  return 0;
}

static void shape_str(const int64_t *s, int nd, char *buf, size_t n)
{
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < nd && k < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)s[i]);
}

/* Checks one member's header; for bias and mask the broadcast extents come from its shape. */
static int check_variant_member(ac_npz *z, ac_case *c, ac_feat_tensor t, ac_err *e)
{
  const char *path = ac_npz_path(z), *name = ac_feat_tensor_name(t);
  ac_problem *p = &c->p;
  ac_npz_member m;
  if (ac_npz_read_header(z, name, &m, e)) return -1;
  int grid = t == AC_FT_BIAS || t == AC_FT_BOOL_MASK;
  if (grid) {
    int ok = m.ndim == 4 && (m.shape[0] == 1 || m.shape[0] == p->batch) && (m.shape[1] == 1 || m.shape[1] == p->heads) &&
             m.shape[2] == p->tq && m.shape[3] == ac_bias_cols(p);   /* a layout's: max_tk */
    if (!ok) {
      char a[160];
      shape_str(m.shape, m.ndim, a, sizeof a);
      return ac_err_set(e, "%s: member '%s' has shape [%s], which does not broadcast to [%lld, %lld, %lld, %lld] (extents 1 or B, 1 or H, tq, %s)",
                        path, name, a, (long long)p->batch, (long long)p->heads, (long long)p->tq, (long long)ac_bias_cols(p),
                        c->lay ? "max_tk" : "tk");
    }
    if (t == AC_FT_BIAS) p->f.bias_b = m.shape[0], p->f.bias_h = m.shape[1];
    else p->f.mask_b = m.shape[0], p->f.mask_h = m.shape[1];
  }
  int64_t shape[4];
  size_t es;
  int nd = ac_feat_tensor_shape(p, t, shape, &es);
  const char *descr = t == AC_FT_BIAS ? ac_dtype_get(p->f.bias_dtype)->npy : "<f4";
  int bytes = t == AC_FT_BOOL_MASK || t == AC_FT_DROPOUT_MASK;
  if (bytes ? strcmp(m.descr, "|b1") && strcmp(m.descr, "|u1") : strcmp(m.descr, descr) != 0)
    return ac_err_set(e, "%s: member '%s' has descr '%s', needs '%s'", path, name, m.descr, bytes ? "|b1 or |u1" : descr);
  int same = m.ndim == nd;
  for (int i = 0; same && i < nd; i++) same = m.shape[i] == shape[i];
  if (!same) {
    char a[160], b[160];
    shape_str(m.shape, m.ndim, a, sizeof a);
    shape_str(shape, nd, b, sizeof b);
    return ac_err_set(e, "%s: member '%s' has shape [%s], needs [%s]", path, name, a, b);
  }
  return 0;
}

int ac_variants_members_read(ac_npz *z, ac_case *c, ac_err *e)
{
  const char *path = ac_npz_path(z);
  ac_problem *p = &c->p;
  for (int t = 0; t < AC_FT_N; t++) {
    const char *name = ac_feat_tensor_name((ac_feat_tensor)t);
    uint32_t bit = ac_feat_tensor_bit((ac_feat_tensor)t);
    int has = ac_npz_has(z, name);
    if (has && !(p->f.used & bit))
      return ac_err_set(e, "%s: member '%s' present but meta.json's variants.features lacks %s", path, name, ac_feat_name(bit));
    if (!has && (p->f.used & bit)) return ac_err_set(e, "%s: variants.features has %s but member '%s' is missing", path, ac_feat_name(bit), name);
    if (has && check_variant_member(z, c, (ac_feat_tensor)t, e)) return -1;
  }
  ac_err ve;
  if (ac_features_validate(p, &ve)) return ac_err_set(e, "%s: %s", path, ve.msg);
  uint64_t need = ac_features_bytes(p);
  if (need > ac_mem_cap())
    return ac_err_set(e, "%s: variant tensors need %llu bytes, more than the memory cap of %llu bytes (ATTNCHECK_MEM_CAP)", path,
                      (unsigned long long)need, (unsigned long long)ac_mem_cap());
  if (ac_features_alloc(c, &ve)) return ac_err_set(e, "%s: %s", path, ve.msg);
  for (int t = 0; t < AC_FT_N; t++) {
    uint64_t b = ac_feat_tensor_bytes(p, (ac_feat_tensor)t);   /* checked against the cap above */
    if (!b) continue;
    void *dst = *ac_feat_tensor_slot(c, (ac_feat_tensor)t);
    if (ac_npz_read_into(z, ac_feat_tensor_name((ac_feat_tensor)t), dst, (size_t)b, e)) return -1;
  }
  const uint8_t *bytes[2] = {c->bool_mask, c->dropout_mask};
  const ac_feat_tensor which[2] = {AC_FT_BOOL_MASK, AC_FT_DROPOUT_MASK};
  for (int x = 0; x < 2; x++)
    for (int64_t i = 0; bytes[x] && i < ac_feat_tensor_count(p, which[x]); i++)
      if (bytes[x][i] > 1)
        return ac_err_set(e, "%s: member '%s' holds %u at index %lld (only 0 and 1)", path, ac_feat_tensor_name(which[x]),
                          bytes[x][i], (long long)i);
  return 0;
}
