/* casefile_quant.c: quantized tensors in a case file (casefile_quant.h). */
#include "config.h"
#include "casefile_quant.h"
#include <stdio.h>
#include <string.h>
#include "quant.h"
#include <stdlib.h>

static const char *const suffixes[] = {"_codes", "_scales", "_mins", "_zeros", "_tensor_scale", ""};
enum { S_CODES, S_SCALES, S_MINS, S_ZEROS, S_TSCALE, S_PLAIN, S_N };

int ac_quant_member_name(const char *name)
{
  if (!name || (name[0] != 'q' && name[0] != 'k' && name[0] != 'v')) return 0;
  for (int i = 0; i < S_PLAIN; i++)
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
    const ac_qspec *qs = &p->quant[i];
    json_object_object_add(t, "format", json_object_new_string(f->name));
    json_object_object_add(t, "granularity", json_object_new_string(ac_qgran_name(qs->gran)));
    json_object_object_add(t, "block", json_object_new_int64(qs->block));
    if (qs->tgroup) json_object_object_add(t, "token_group", json_object_new_int64(qs->tgroup));
    json_object_object_add(t, "scale_dtype", json_object_new_string(ac_qsdtype_name(ac_qspec_sdtype(qs))));
    if (f->aux == AC_QAUX_ZERO && qs->zdtype)
      json_object_object_add(t, "zero_dtype", json_object_new_string(ac_qsdtype_name(ac_qspec_zdtype(qs))));
    if (qs->pack)
      json_object_object_add(t, "packing", json_object_new_string(qs->pack == AC_QPACK_HIGH_FIRST ? "high" : "low"));
    if (qs->store) {
      char st[64];
      json_object_object_add(t, "store", json_object_new_string(ac_qstore_str(qs->store, st, sizeof st)));
    }
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

/* A dtype name of scales (or zero points) into *v as the spec holds it (AC_QSD_ + 1). */
static int sd_field(json_object *t, const char *key, int zero, int32_t *v, const char *path, char x, ac_err *e)
{
  const char *s = str_of(t, key);
  if (!s) return 0;
  for (int k = 0; k < AC_QSD_N; k++)
    if (!strcmp(s, ac_qsdtype_name((ac_qsdtype)k)) && (zero || k < AC_QSD_I8)) return *v = k + 1, 0;
  return ac_err_set(e, "%s: meta.json quant.%c.%s: unknown dtype '%.20s'", path, x, key, s);
}

static int read_tensor(json_object *t, char x, ac_qspec *q, const char *path, ac_err *e)
{
  if (!json_object_is_type(t, json_type_object))
    return ac_err_set(e, "%s: meta.json quant.%c is not an object", path, x);
  const char *fs = str_of(t, "format"), *gs = str_of(t, "granularity"), *pk = str_of(t, "packing"), *st = str_of(t, "store");
  int fmt, gran;
  if (!fs || ac_qfmt_parse(fs, &fmt))
    return ac_err_set(e, "%s: meta.json quant.%c.format: unknown format '%.40s'", path, x, fs ? fs : "(missing)");
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  gran = (int)f->gran;
  if (gs && ac_qgran_parse(gs, &gran))
    return ac_err_set(e, "%s: meta.json quant.%c.granularity: unknown granularity '%.40s'", path, x, gs);
  json_object *b;
  memset(q, 0, sizeof *q);
  q->block = gran == AC_QG_BLOCK ? f->block : 0;
  static const char *const ints[] = {"block", "token_group"};
  for (int k = 0; k < 2; k++)
    if (json_object_object_get_ex(t, ints[k], &b)) {
      if (!json_object_is_type(b, json_type_int))
        return ac_err_set(e, "%s: meta.json quant.%c.%s is not an integer", path, x, ints[k]);
      *(k ? &q->tgroup : &q->block) = json_object_get_int64(b);
    }
  if (sd_field(t, "scale_dtype", 0, &q->sdtype, path, x, e) || sd_field(t, "zero_dtype", 1, &q->zdtype, path, x, e))
    return -1;
  q->fmt = fmt;   /* the format's own dtypes: as if not declared */
  ac_qspec_normalize(q);
  if (pk && strcmp(pk, "low") && strcmp(pk, "high"))
    return ac_err_set(e, "%s: meta.json quant.%c.packing '%.20s': low or high", path, x, pk);
  q->pack = !pk ? AC_QPACK_NONE : !strcmp(pk, "low") ? AC_QPACK_LOW_FIRST : AC_QPACK_HIGH_FIRST;
  ac_err se;
  if (st && ac_qstore_parse(st, &q->store, &se)) return ac_err_set(e, "%s: meta.json quant.%c.store: %s", path, x, se.msg);
  json_object_object_foreach(t, key, val) {
    (void)val;
    static const char *const known[] = {"format", "granularity", "block", "token_group", "scale_dtype", "zero_dtype",
                                        "packing", "store"};
    int ok = 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) ok |= !strcmp(key, known[k]);
    if (!ok) return ac_err_set(e, "%s: meta.json quant.%c: unknown field '%.40s'", path, x, key);
  }
  q->fmt = fmt;
  q->gran = gran;
  if (ac_qspec_check(q, 0, 0, &se)) return ac_err_set(e, "%s: meta.json quant.%c: %s", path, x, se.msg);
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

static void member_name(char *buf, size_t n, char x, int s)
{
  if (s == S_PLAIN) snprintf(buf, n, "%c", x);
  else snprintf(buf, n, "%c%s", x, suffixes[s]);
}

/* descr, ndim and shape of member s of tensor x. */
static void member_shape(const ac_problem *p, char x, int s, const char **descr, int *ndim, int64_t shape[4])
{
  const ac_qspec *q = &p->quant[ac_qslot(x)];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  int64_t d[4];
  ac_qdims(p, x, d);
  if (s == S_CODES || s == S_PLAIN) {   /* packed codes: the last axis holds D / per bytes */
    *descr = s == S_PLAIN ? ac_dtype_get(p->dtype)->npy : f->code_signed ? "|i1" : "|u1";
    *ndim = 4;
    memcpy(shape, d, sizeof d);
    if (s == S_CODES) shape[3] = d[3] / ac_qspec_per_byte(q);
    return;
  }
  if (s == S_TSCALE) {
    *descr = "<f4";
    *ndim = 1;
    shape[0] = 1;
    return;
  }
  ac_qscale_shape(q, d, shape, ndim);
  *descr = ac_qsdtype_npy(s == S_SCALES ? ac_qspec_sdtype(q) : ac_qspec_zdtype(q));
}

static size_t member_bytes(const char *descr, int ndim, const int64_t *shape)
{
  size_t n = (size_t)(descr[2] - '0');
  for (int k = 0; k < ndim; k++) n *= (size_t)shape[k];
  return n;
}

static void *member_data(const ac_qdata *t, int s)
{
  return s == S_CODES ? (void *)t->codes : s == S_SCALES ? t->scales : s == S_PLAIN ? t->plain : t->aux;
}

/* Member k (0 codes, 1 scales, 2 the format's aux, 3 a store tensor's plain values) of quantized
 * tensor i of p. */
typedef struct {
  int s; /* S_... */
  char name[32];
  const char *descr;
  int ndim;
  int64_t shape[4];
  size_t bytes;
} qmember;

/* 0 with *m filled; -1 when tensor i is not quantized or has no member k. A case file holds a store
 * tensor's plain values (and its given scales and zero points, rule given) in place of its codes;
 * stored: the members of what a kernel stored (codes, scales, aux). */
static int member_at(const ac_problem *p, int i, int k, int stored, qmember *m)
{
  const ac_qspec *q = &p->quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) return -1;
  const int ms[4] = {S_CODES, S_SCALES, aux_member(f), S_PLAIN};
  int store = q->store && !stored, given = ac_qstore_rule(q->store) == AC_QSR_GIVEN;
  if (ms[k] == S_N || (k == 3 && !store) || (store && (k == 0 || (!given && k < 3)))) return -1;
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
    for (int k = 0; k < 4; k++) {
      if (member_at(&c->p, i, k, 0, &m)) continue;
      const void *data = member_data(&c->quant->t[i], m.s);
      uint8_t *packed = NULL;
      if (m.s == S_CODES && c->p.quant[i].pack) {
        packed = ac_xmalloc(m.bytes + 1);
        ac_qpack(&c->p.quant[i], c->quant->t[i].codes, (int64_t)m.bytes * ac_qspec_per_byte(&c->p.quant[i]), packed);
        data = packed;
      }
      int rc = ac_npz_add_array(w, m.name, m.descr, m.ndim, m.shape, data, m.bytes, e);
      free(packed);
      if (rc) return -1;
    }
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
  const ac_qspec *q = &p->quant[ac_qslot(x)];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  char name[32];
  if (f && !q->store && ac_npz_has(z, (const char[]){x, 0}))
    return ac_err_set(e, "%s: member '%c' beside a quantized %c (its values are those of %c_codes and %c_scales)", path, x, x,
                      x, x);
  for (int s = 0; s < S_PLAIN; s++) {
    member_name(name, sizeof name, x, s);
    qmember m;
    int want = 0;
    for (int k = 0; k < 4; k++) want |= !member_at(p, ac_qslot(x), k, 0, &m) && m.s == s;
    if (!want && ac_npz_has(z, name))
      return ac_err_set(e, "%s: member '%s' %s", path, name,
                        !f ? "without a quantized tensor in meta.json's quant"
                        : q->store ? "beside a quantize-on-store tensor (the kernel stores its codes)"
                                   : "does not belong to its format");
  }
  return 0;
}

/* Reads member m of tensor i into t (codes unpacked). */
static int read_member(ac_npz *z, const ac_problem *p, int i, const qmember *m, ac_qdata *t, ac_err *e)
{
  if (m->s != S_CODES || !p->quant[i].pack) return ac_npz_read_into(z, m->name, member_data(t, m->s), m->bytes, e);
  uint8_t *packed = ac_xmalloc(m->bytes + 1);
  int rc = ac_npz_read_into(z, m->name, packed, m->bytes, e);
  if (!rc) ac_qunpack(&p->quant[i], packed, (int64_t)m->bytes * ac_qspec_per_byte(&p->quant[i]), t->codes);
  free(packed);
  return rc;
}

int ac_quant_members_read(ac_npz *z, ac_case *c, ac_err *e)
{
  const char *path = ac_npz_path(z);
  for (int i = 0; i < 3; i++)
    if (refuse_strays(z, &c->p, "qkv"[i], e)) return -1;
  if (!ac_problem_quantized(&c->p)) return 0;
  qmember m;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) {
      if (member_at(&c->p, i, k, 0, &m)) continue;
      if (!ac_npz_has(z, m.name)) return ac_err_set(e, "%s: member '%s' missing (meta.json quant.%c)", path, m.name, "qkv"[i]);
      if (check_header(z, m.name, m.descr, m.ndim, m.shape, e)) return -1;
    }
  ac_err qe;
  if (ac_quant_alloc(c, &qe)) return ac_err_set(e, "%s: %s", path, qe.msg);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++)
      if (!member_at(&c->p, i, k, 0, &m) && read_member(z, &c->p, i, &m, &c->quant->t[i], e)) return -1;
  if (ac_quant_check_codes(c, &qe) || ac_quant_store_check(c, &qe)) return ac_err_set(e, "%s: %s", path, qe.msg);
  for (int i = 0; i < 3; i++) {
    if (c->p.quant[i].store) ac_quant_store_derive(c, "qkv"[i]);
    else if (c->p.quant[i].fmt) ac_quant_decode(c, "qkv"[i]);
  }
  return 0;
}

int ac_quant_stored_read(ac_npz *z, const ac_problem *p, char x, struct ac_qdata_s *t, ac_err *e)
{
  int i = ac_qslot(x);
  qmember m;
  for (int k = 0; k < 3; k++) {
    if (member_at(p, i, k, 1, &m)) continue;
    if (!ac_npz_has(z, m.name)) return ac_err_set(e, "member '%s' missing (the codes the kernel stored)", m.name);
    if (check_header(z, m.name, m.descr, m.ndim, m.shape, e) || read_member(z, p, i, &m, t, e)) return -1;
  }
  return 0;
}
