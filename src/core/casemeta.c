/* casemeta.c: reading meta.json (schema 1) of a case file, field by field through one table. */
#include "config.h"
#include "casefile.h"
#include "casefile_variants.h"
#include "casefile_layout.h"
#include "casefile_quant.h"
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct meta_field meta_field;
/* Reads the present value v of field f into dst (the field's place in c); -1 with a message. */
typedef int (*meta_reader)(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e);

struct meta_field {
  const char *key;
  int required;
  meta_reader read;
  size_t offset, size;   /* of the destination in ac_case */
  int (*parse)(const char *name, void *dst);   /* read_name: the name parser */
};

static int int_value(const meta_field *f, json_object *v, int64_t *out, const char *path, ac_err *e)
{
  if (!json_object_is_type(v, json_type_int))
    return ac_err_set(e, "%s: meta.json \"%s\" is not an integer", path, f->key);
  *out = json_object_get_int64(v);
  return 0;
}

static int str_value(const meta_field *f, json_object *v, const char **out, const char *path, ac_err *e)
{
  if (!json_object_is_type(v, json_type_string))
    return ac_err_set(e, "%s: meta.json \"%s\" is not a string", path, f->key);
  *out = json_object_get_string(v);
  if (strlen(*out) != (size_t)json_object_get_string_len(v))
    return ac_err_set(e, "%s: meta.json \"%s\" holds a NUL byte", path, f->key);
  return 0;
}

/* The schema number: this version reads 1. */
static int read_schema(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)dst, (void)c;
  int64_t schema = 0;
  if (int_value(f, v, &schema, path, e) != 0) return -1;
  if (schema != 1)
    return ac_err_set(e, "%s: meta.json schema %lld is not supported (this version reads schema 1)", path,
                      (long long)schema);
  return 0;
}

/* A name (dtype, mask) that f->parse turns into its value. */
static int read_name(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)c;
  const char *s;
  if (str_value(f, v, &s, path, e) != 0) return -1;
  if (f->parse(s, dst) != 0) return ac_err_set(e, "%s: unknown %s '%.40s'", path, f->key, s);
  return 0;
}

static int parse_dtype(const char *name, void *dst)
{
  ac_dtype d;
  if (ac_dtype_parse(name, &d) != 0) return -1;
  *(ac_dtype *)dst = d;
  return 0;
}

static int parse_mask(const char *name, void *dst)
{
  return ac_mask_parse(name, dst);
}

/* A dimension: an integer >= 1. */
static int read_dim(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)c;
  int64_t *d = dst;
  if (int_value(f, v, d, path, e) != 0) return -1;
  if (*d < 1) return ac_err_set(e, "%s: %s must be >= 1 (got %lld)", path, f->key, (long long)*d);
  return 0;
}

/* An index: an integer >= -1 (-1: none). */
static int read_index(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)c;
  int64_t *d = dst;
  if (int_value(f, v, d, path, e) != 0) return -1;
  if (*d < -1) return ac_err_set(e, "%s: meta.json \"%s\" %lld is negative", path, f->key, (long long)*d);
  return 0;
}

/* A non-negative integer of up to 64 bits. */
static int read_u64(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)c;
  if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
    return ac_err_set(e, "%s: meta.json \"%s\" is not a non-negative integer", path, f->key);
  *(uint64_t *)dst = json_object_get_uint64(v);
  return 0;
}

/* A string into a char array of f->size bytes (cut to fit). */
static int read_text(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)c;
  const char *s;
  if (str_value(f, v, &s, path, e) != 0) return -1;
  snprintf(dst, f->size, "%s", s);
  return 0;
}

/* A JSON object, kept as its text (a char * the case owns). */
static int read_object(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)c;
  if (!json_object_is_type(v, json_type_object))
    return ac_err_set(e, "%s: meta.json \"%s\" is not an object", path, f->key);
  *(char **)dst = ac_xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  return 0;
}

/* The element strides of q, k, v and o: an object of four arrays of 4 integers. */
static int read_strides(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)dst;
  if (!json_object_is_type(v, json_type_object))
    return ac_err_set(e, "%s: meta.json \"%s\" is not an object", path, f->key);
  struct { const char *key; int64_t *dst; } sts[] = {
    {"q", c->p.q_stride}, {"k", c->p.k_stride}, {"v", c->p.v_stride}, {"o", c->p.o_stride}};
  for (int i = 0; i < 4; i++) {
    json_object *a;
    int ok = json_object_object_get_ex(v, sts[i].key, &a) && json_object_is_type(a, json_type_array) &&
             json_object_array_length(a) == 4;
    for (int j = 0; ok && j < 4; j++) {
      json_object *x = json_object_array_get_idx(a, (size_t)j);
      ok = json_object_is_type(x, json_type_int);
      if (ok) sts[i].dst[j] = json_object_get_int64(x);
    }
    if (!ok) return ac_err_set(e, "%s: meta.json %s.%s must be an array of 4 integers", path, f->key, sts[i].key);
  }
  return 0;
}

/* The scale: "default" (1/sqrt(dk), so after dk) or a hex float. */
static int read_scale(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)dst;
  const char *s;
  if (str_value(f, v, &s, path, e) != 0) return -1;
  if (!strcmp(s, "default")) {
    c->p.scale_is_default = 1;
    c->p.scale = ac_problem_scale(&c->p);
    return 0;
  }
  ac_err se;
  if (ac_scale_parse_hex(s, &c->p.scale, &se) != 0) return ac_err_set(e, "%s: %s", path, se.msg);
  return 0;
}

/* The attention variants (casefile_variants.h). */
static int read_variants(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)f, (void)dst;
  return ac_variants_meta_read(v, c, path, e);
}

/* The serving layout (casefile_layout.h). */
static int read_layout(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)f, (void)dst;
  return ac_layout_meta_read(v, c, path, e);
}

/* The quantized tensors (casefile_quant.h). */
static int read_quant(const meta_field *f, json_object *v, void *dst, ac_case *c, const char *path, ac_err *e)
{
  (void)f, (void)dst;
  return ac_quant_meta_read(v, c, path, e);
}

#define AT(member) offsetof(ac_case, member), sizeof(((ac_case *)0)->member)

/* The fields in the order they are checked (the first problem is the one reported). */
static const meta_field fields[] = {
  {"schema", 1, read_schema, 0, 0, NULL},
  {"dtype", 1, read_name, AT(p.dtype), parse_dtype},
  {"mask", 1, read_name, AT(p.mask), parse_mask},
  {"batch", 1, read_dim, AT(p.batch), NULL},
  {"heads", 1, read_dim, AT(p.heads), NULL},
  {"kv_heads", 1, read_dim, AT(p.kv_heads), NULL},
  {"tq", 1, read_dim, AT(p.tq), NULL},
  {"tk", 1, read_dim, AT(p.tk), NULL},
  {"dk", 1, read_dim, AT(p.dk), NULL},
  {"dv", 1, read_dim, AT(p.dv), NULL},
  {"strides", 0, read_strides, 0, 0, NULL},
  {"scale", 1, read_scale, 0, 0, NULL},
  {"seed", 0, read_u64, AT(seed), NULL},
  {"case_index", 0, read_index, AT(case_index), NULL},
  {"generator", 0, read_text, AT(generator), NULL},
  {"tool_version", 0, read_text, AT(tool_version), NULL},
  {"params", 0, read_object, AT(params_json), NULL},
  {"variants", 0, read_variants, 0, 0, NULL},
  {"layout", 0, read_layout, 0, 0, NULL},
  {"quant", 0, read_quant, 0, 0, NULL},
};

/* text as one JSON object and nothing after it but white space; NULL with a message. */
static json_object *meta_object(const char *text, size_t n, const char *path, ac_err *e)
{
  json_tokener *tok = json_tokener_new();
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  json_object *m = json_tokener_parse_ex(tok, text, (int)n);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (!m || jerr != json_tokener_success) {
    ac_err_set(e, "%s: meta.json is not valid JSON: %s", path,
               jerr == json_tokener_success || jerr == json_tokener_continue ? "unexpected end of data"
                                                                             : json_tokener_error_desc(jerr));
  } else {
    while (end < n && (text[end] == ' ' || text[end] == '\n' || text[end] == '\t' || text[end] == '\r')) end++;
    if (end != n) ac_err_set(e, "%s: meta.json has trailing bytes after the JSON object", path);
    else if (!json_object_is_type(m, json_type_object)) ac_err_set(e, "%s: meta.json is not a JSON object", path);
    else return m;
  }
  json_object_put(m);
  return NULL;
}

int ac_case_meta_read(ac_case *c, const char *text, size_t n, const char *path, ac_err *e)
{
  json_object *m = meta_object(text, n, path, e);
  if (!m) return -1;
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < sizeof fields / sizeof fields[0]; i++) {
    const meta_field *f = &fields[i];
    json_object *v;
    if (!json_object_object_get_ex(m, f->key, &v)) {
      if (f->required) rc = ac_err_set(e, "%s: meta.json lacks \"%s\"", path, f->key);
      continue;
    }
    rc = f->read(f, v, (char *)c + f->offset, c, path, e);
  }
  json_object_put(m);
  return rc;
}
