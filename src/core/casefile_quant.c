/* casefile_quant.c: quantized tensors in a case file (casefile_quant.h). */
#include "config.h"
#include "casefile_quant.h"
#include <stdio.h>
#include <string.h>
#include "quant.h"

static const char *const suffixes[] = {"_codes", "_scales", "_mins", "_zeros", "_tensor_scale"};
enum { S_CODES, S_SCALES, S_MINS, S_ZEROS, S_TSCALE, S_N };

int ac_quant_member_name(const char *name)
{
  if (!name || (name[0] != 'q' && name[0] != 'k' && name[0] != 'v')) return 0;
  for (int i = 0; i < S_N; i++)
    if (!strcmp(name + 1, suffixes[i])) return 1;
  return 0;
}

/* The aux member of a format (S_N: none). */
static int aux_member(const ac_qfmt_info *f)
{
  return f->aux == AC_QAUX_MIN ? S_MINS : f->aux == AC_QAUX_ZERO ? S_ZEROS : f->aux == AC_QAUX_TSCALE ? S_TSCALE : S_N;
}

void ac_quant_meta_write(json_object *meta, const ac_problem *p)
{
  if (!ac_problem_quantized(p)) return;
  json_object *q = json_object_new_object();
  for (int i = 0; i < 3; i++) {
    const ac_qfmt_info *f = ac_qfmt_get(p->quant[i].fmt);
    if (!f) continue;
    json_object *t = json_object_new_object();
    json_object_object_add(t, "format", json_object_new_string(f->name));
    json_object_object_add(t, "granularity", json_object_new_string(ac_qgran_name(p->quant[i].gran)));
    json_object_object_add(t, "block", json_object_new_int64(p->quant[i].block));
    json_object_object_add(t, "scale_dtype", json_object_new_string(ac_qsdtype_name(f->sdtype)));
    json_object_object_add(q, (const char[]){"qkv"[i], 0}, t);
  }
  json_object_object_add(meta, "quant", q);
}

static const char *str_of(json_object *t, const char *key)
{
  json_object *x;
  if (!json_object_object_get_ex(t, key, &x) || !json_object_is_type(x, json_type_string)) return NULL;
  return json_object_get_string(x);
}

static int read_tensor(json_object *t, char x, ac_qspec *q, const char *path, ac_err *e)
{
  if (!json_object_is_type(t, json_type_object))
    return ac_err_set(e, "%s: meta.json quant.%c is not an object", path, x);
  const char *fs = str_of(t, "format"), *gs = str_of(t, "granularity"), *sd = str_of(t, "scale_dtype");
  int fmt, gran;
  if (!fs || ac_qfmt_parse(fs, &fmt))
    return ac_err_set(e, "%s: meta.json quant.%c.format: unknown format '%.40s'", path, x, fs ? fs : "(missing)");
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  gran = (int)f->gran;
  if (gs && ac_qgran_parse(gs, &gran))
    return ac_err_set(e, "%s: meta.json quant.%c.granularity: unknown granularity '%.40s'", path, x, gs);
  json_object *b;
  int64_t block = gran == AC_QG_BLOCK ? f->block : 0;
  if (json_object_object_get_ex(t, "block", &b)) {
    if (!json_object_is_type(b, json_type_int))
      return ac_err_set(e, "%s: meta.json quant.%c.block is not an integer", path, x);
    block = json_object_get_int64(b);
  }
  if (sd && strcmp(sd, ac_qsdtype_name(f->sdtype)))
    return ac_err_set(e, "%s: meta.json quant.%c.scale_dtype '%.20s': %s scales are %s", path, x, sd, f->name,
                      ac_qsdtype_name(f->sdtype));
  json_object_object_foreach(t, key, val) {
    (void)val;
    if (strcmp(key, "format") && strcmp(key, "granularity") && strcmp(key, "block") && strcmp(key, "scale_dtype"))
      return ac_err_set(e, "%s: meta.json quant.%c: unknown field '%.40s'", path, x, key);
  }
  q->fmt = fmt;
  q->gran = gran;
  q->block = block;
  return 0;
}

int ac_quant_meta_read(json_object *v, ac_case *c, const char *path, ac_err *e)
{
  if (!json_object_is_type(v, json_type_object)) return ac_err_set(e, "%s: meta.json \"quant\" is not an object", path);
  json_object_object_foreach(v, key, val) {
    int i = strlen(key) == 1 ? ac_qslot(key[0]) : -1;
    if (i < 0) return ac_err_set(e, "%s: meta.json quant: '%.40s' is not q, k or v", path, key);
    if (read_tensor(val, key[0], &c->p.quant[i], path, e)) return -1;
  }
  return 0;
}

static void member_name(char *buf, size_t n, char x, int s) { snprintf(buf, n, "%c%s", x, suffixes[s]); }

/* descr, ndim and shape of member s of tensor x. */
static void member_shape(const ac_problem *p, char x, int s, const char **descr, int *ndim, int64_t shape[4])
{
  const ac_qspec *q = &p->quant[ac_qslot(x)];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  int64_t d[4];
  ac_qdims(p, x, d);
  if (s == S_CODES) {
    *descr = f->code_signed ? "|i1" : "|u1";
    *ndim = 4;
    memcpy(shape, d, sizeof d);
    return;
  }
  if (s == S_TSCALE) {
    *descr = "<f4";
    *ndim = 1;
    shape[0] = 1;
    return;
  }
  ac_qscale_shape(q, d, shape, ndim);
  *descr = s == S_SCALES ? ac_qsdtype_npy(f->sdtype) : s == S_MINS ? "<f2" : "|i1";
}

static size_t member_bytes(const char *descr, int ndim, const int64_t *shape)
{
  size_t n = descr[1] == 'f' && descr[2] == '4' ? 4 : descr[2] == '2' ? 2 : 1;
  for (int k = 0; k < ndim; k++) n *= (size_t)shape[k];
  return n;
}

static void *member_data(const ac_qdata *t, int s)
{
  return s == S_CODES ? (void *)t->codes : s == S_SCALES ? t->scales : t->aux;
}

/* Member k (0 codes, 1 scales, 2 the format's aux) of quantized tensor i of p. */
typedef struct {
  int s; /* S_... */
  char name[32];
  const char *descr;
  int ndim;
  int64_t shape[4];
  size_t bytes;
} qmember;

/* 0 with *m filled; -1 when tensor i is not quantized or its format has no member k. */
static int member_at(const ac_problem *p, int i, int k, qmember *m)
{
  const ac_qfmt_info *f = ac_qfmt_get(p->quant[i].fmt);
  if (!f) return -1;
  const int ms[3] = {S_CODES, S_SCALES, aux_member(f)};
  if (ms[k] == S_N) return -1;
  m->s = ms[k];
  member_name(m->name, sizeof m->name, "qkv"[i], m->s);
  member_shape(p, "qkv"[i], m->s, &m->descr, &m->ndim, m->shape);
  m->bytes = member_bytes(m->descr, m->ndim, m->shape);
  return 0;
}

int ac_quant_members_write(ac_npz_writer *w, const ac_case *c, ac_err *e)
{
  if (!ac_problem_quantized(&c->p)) return 0;
  if (!c->quant) return ac_err_set(e, "quantized case without codes");
  qmember m;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++)
      if (!member_at(&c->p, i, k, &m) &&
          ac_npz_add_array(w, m.name, m.descr, m.ndim, m.shape, member_data(&c->quant->t[i], m.s), m.bytes, e))
        return -1;
  return 0;
}

static int check_header(ac_npz *z, const char *name, const char *descr, int ndim, const int64_t *shape, ac_err *e)
{
  const char *path = ac_npz_path(z);
  ac_npz_member m;
  if (ac_npz_read_header(z, name, &m, e)) return -1;
  if (strcmp(m.descr, descr))
    return ac_err_set(e, "%s: member '%s' has descr '%s', its format needs '%s'", path, name, m.descr, descr);
  int same = m.ndim == ndim;
  for (int k = 0; same && k < ndim; k++) same = m.shape[k] == shape[k];
  if (!same) {
    char a[96], b[96] = "[";
    ac_npz_shape_str(&m, a, sizeof a);
    for (int k = 0; k < ndim; k++) snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", k ? "," : "", (long long)shape[k]);
    snprintf(b + strlen(b), sizeof b - strlen(b), "]");
    return ac_err_set(e, "%s: member '%s' has shape %s, meta.json's quant implies %s", path, name, a, b);
  }
  return 0;
}

/* Members of tensor x a quantized case must not have (its dense member, others' suffixes). */
static int refuse_strays(ac_npz *z, const ac_problem *p, char x, ac_err *e)
{
  const char *path = ac_npz_path(z);
  const ac_qfmt_info *f = ac_qfmt_get(p->quant[ac_qslot(x)].fmt);
  char name[32];
  if (f && ac_npz_has(z, (const char[]){x, 0}))
    return ac_err_set(e, "%s: member '%c' beside a quantized %c (its values are those of %c_codes and %c_scales)", path, x, x,
                      x, x);
  for (int s = 0; s < S_N; s++) {
    member_name(name, sizeof name, x, s);
    int want = f && (s == S_CODES || s == S_SCALES || s == aux_member(f));
    if (!want && ac_npz_has(z, name))
      return ac_err_set(e, "%s: member '%s' %s", path, name,
                        f ? "does not belong to its format" : "without a quantized tensor in meta.json's quant");
  }
  return 0;
}

int ac_quant_members_read(ac_npz *z, ac_case *c, ac_err *e)
{
  const char *path = ac_npz_path(z);
  for (int i = 0; i < 3; i++)
    if (refuse_strays(z, &c->p, "qkv"[i], e)) return -1;
  if (!ac_problem_quantized(&c->p)) return 0;
  qmember m;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) {
      if (member_at(&c->p, i, k, &m)) continue;
      if (!ac_npz_has(z, m.name)) return ac_err_set(e, "%s: member '%s' missing (meta.json quant.%c)", path, m.name, "qkv"[i]);
      if (check_header(z, m.name, m.descr, m.ndim, m.shape, e)) return -1;
    }
  ac_err qe;
  if (ac_quant_alloc(c, &qe)) return ac_err_set(e, "%s: %s", path, qe.msg);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++)
      if (!member_at(&c->p, i, k, &m) && ac_npz_read_into(z, m.name, member_data(&c->quant->t[i], m.s), m.bytes, e))
        return -1;
  if (ac_quant_check_codes(c, &qe)) return ac_err_set(e, "%s: %s", path, qe.msg);
  for (int i = 0; i < 3; i++)
    if (c->p.quant[i].fmt) ac_quant_decode(c, "qkv"[i]);
  return 0;
}
