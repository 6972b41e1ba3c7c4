/* casefile.c: a case and its NPZ file (q, k, v, optional o and lse, meta.json schema 1). Each
 * of q, k, v and o is stored in its own dtype (ac_tensor_dtype: p.dtype unless mixed_dtypes). */
#include "config.h"
#include "casefile.h"
#include "variants.h"
#include "casefile_variants.h"
#include "casefile_layout.h"
#include "casefile_quant.h"
#include "layout.h"
#include "quant.h"
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_MAX_BYTES (1 << 20)

void ac_case_init(ac_case *c)
{
  memset(c, 0, sizeof *c);
  c->p.dtype = AC_F32;
  c->case_index = -1;
  snprintf(c->generator, sizeof c->generator, "external");
  snprintf(c->tool_version, sizeof c->tool_version, "%s", PACKAGE_VERSION);
}

/* Dense sizes of every tensor with overflow checks, and the total (o and lse included when asked)
 * against cap. Independent of the layout checks in ac_problem_validate, so that nothing is
 * allocated from unchecked numbers. */
typedef struct {
  int64_t q, k, v, o, rows;   /* elements */
  int64_t total_bytes;
} case_sizes;

static int sizes_of(const ac_problem *p, int with_o, int with_lse, uint64_t cap, case_sizes *s,
                    const char *path, ac_err *e)
{
  const struct { const char *name; int64_t v; } dims[] = {
    {"batch", p->batch}, {"heads", p->heads}, {"kv_heads", p->kv_heads}, {"tq", p->tq},
    {"tk", p->tk}, {"dk", p->dk}, {"dv", p->dv},
  };
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    if (dims[i].v < 1) return ac_err_set(e, "%s: %s must be >= 1 (got %lld)", path, dims[i].name, (long long)dims[i].v);
  if ((unsigned)p->dtype >= AC_NDTYPES) return ac_err_set(e, "%s: unknown dtype %d", path, (int)p->dtype);
  if (p->heads % p->kv_heads != 0)
    return ac_err_set(e, "%s: heads %lld is not a multiple of kv_heads %lld", path, (long long)p->heads,
                      (long long)p->kv_heads);
  const char *xs = "qkvo";
  for (int i = 0; i < 4; i++)
    if ((unsigned)ac_tensor_dtype(p, xs[i]) >= AC_NDTYPES)
      return ac_err_set(e, "%s: unknown dtype %d for %c", path, (int)ac_tensor_dtype(p, xs[i]), xs[i]);
  int64_t bh, bkh, t, total = 0;
  if (ac_mul_overflow_i64(p->batch, p->heads, &bh) || ac_mul_overflow_i64(p->batch, p->kv_heads, &bkh) ||
      ac_mul_overflow_i64(bh, p->tq, &s->rows) || ac_mul_overflow_i64(s->rows, p->dk, &s->q) ||
      ac_mul_overflow_i64(s->rows, p->dv, &s->o) || ac_mul_overflow_i64(bkh, p->tk, &t) ||
      ac_mul_overflow_i64(t, p->dk, &s->k) || ac_mul_overflow_i64(t, p->dv, &s->v))
    goto overflow;
  int64_t parts[5] = {s->q, s->k, s->v, with_o ? s->o : 0, 0};
  for (int i = 0; i < 4; i++) {
    int64_t b, es = (int64_t)ac_dtype_size(ac_tensor_dtype(p, xs[i]));
    if (ac_mul_overflow_i64(parts[i], es, &b) || ac_add_overflow_i64(total, b, &total)) goto overflow;
  }
  if (with_lse) {
    int64_t b;
    if (ac_mul_overflow_i64(s->rows, 4, &b) || ac_add_overflow_i64(total, b, &total)) goto overflow;
  }
  if ((uint64_t)total > cap)
    return ac_err_set(e, "%s: tensors need %lld bytes, more than the memory cap of %llu bytes", path,
                      (long long)total, (unsigned long long)cap);
  s->total_bytes = total;
  return 0;
overflow:
  return ac_err_set(e, "%s: tensor sizes overflow 64 bits", path);
}

static int strides_zero(const ac_problem *p)
{
  for (int i = 0; i < 4; i++)
    if (p->q_stride[i] || p->k_stride[i] || p->v_stride[i] || p->o_stride[i]) return 0;
  return 1;
}

size_t ac_case_bytes(const ac_case *c, char tensor)
{
  case_sizes s;
  if (sizes_of(&c->p, 0, 0, UINT64_MAX, &s, "", NULL) != 0) return 0;
  size_t es = ac_dtype_size(ac_tensor_dtype(&c->p, tensor));
  switch (tensor) {
  case 'q': return (size_t)s.q * es;
  case 'k': return (size_t)s.k * es;
  case 'v': return (size_t)s.v * es;
  case 'o': return (size_t)s.o * es;
  default: return 0;
  }
}

/* The strided span a kernel will be given must itself be a sane allocation. */
static int check_span(const char *name, const int64_t st[4], int64_t B, int64_t H, int64_t T, int64_t D,
                      size_t es, uint64_t cap, const char *path, ac_err *e)
{
  const int64_t dim[4] = {B, H, T, D};
  int64_t span = 1;
  for (int i = 0; i < 4; i++) {
    int64_t t;
    if (st[i] < 0) return ac_err_set(e, "%s: %s stride %d is negative (%lld)", path, name, i, (long long)st[i]);
    if (ac_mul_overflow_i64(dim[i] - 1, st[i], &t) || ac_add_overflow_i64(span, t, &span))
      return ac_err_set(e, "%s: %s strides overflow 64 bits", path, name);
  }
  if ((uint64_t)span > cap / es)
    return ac_err_set(e, "%s: %s strides span %lld elements, more than the memory cap allows", path, name,
                      (long long)span);
  return 0;
}

/* Sizes, then the full problem validation (strides, scale) with a file-naming message. */
static int validate(const ac_problem *p, int with_o, int with_lse, case_sizes *s, const char *path, ac_err *e)
{
  if (sizes_of(p, with_o, with_lse, ac_mem_cap(), s, path, e) != 0) return -1;
  ac_err pe;
  pe.msg[0] = 0;
  ac_problem q = *p;
  if (strides_zero(&q)) ac_problem_default_strides(&q);
  uint64_t cap = ac_mem_cap();
#define ES(x) ac_dtype_size(ac_tensor_dtype(&q, x))
  if (check_span("q", q.q_stride, q.batch, q.heads, q.tq, q.dk, ES('q'), cap, path, e) != 0 ||
      check_span("k", q.k_stride, q.batch, q.kv_heads, q.tk, q.dk, ES('k'), cap, path, e) != 0 ||
      check_span("v", q.v_stride, q.batch, q.kv_heads, q.tk, q.dv, ES('v'), cap, path, e) != 0 ||
      check_span("o", q.o_stride, q.batch, q.heads, q.tq, q.dv, ES('o'), cap, path, e) != 0)
    return -1;
#undef ES
  if (ac_problem_validate(&q, ac_mem_cap(), &pe) != 0) return ac_err_set(e, "%s: %s", path, pe.msg);
  return 0;
}

int ac_case_alloc(ac_case *c, ac_err *e)
{
  case_sizes s;
  if (validate(&c->p, 0, 0, &s, "case", e) != 0) return -1;
  free(c->q);
  free(c->k);
  free(c->v);
  c->q = ac_xcalloc((size_t)s.q, ac_dtype_size(ac_tensor_dtype(&c->p, 'q')));
  c->k = ac_xcalloc((size_t)s.k, ac_dtype_size(ac_tensor_dtype(&c->p, 'k')));
  c->v = ac_xcalloc((size_t)s.v, ac_dtype_size(ac_tensor_dtype(&c->p, 'v')));
  ac_quant_free(c);
  return ac_quant_alloc(c, e);   /* zero codes and scales: values 0, as the dense arrays hold */
}

void ac_case_free(ac_case *c)
{
  if (!c) return;
  free(c->q);
  free(c->k);
  free(c->v);
  free(c->o);
  free(c->lse);
  free(c->dout);
  free(c->params_json);
  ac_features_free(c);
  ac_layout_free(c);
  ac_quant_free(c);
  c->q = c->k = c->v = c->o = NULL;
  c->lse = NULL;
  c->dout = NULL;
  c->params_json = NULL;
  c->has_o = c->has_lse = 0;
}

static void *dup_bytes(const void *p, size_t n)
{
  if (!p) return NULL;
  void *d = ac_xmalloc(n);
  memcpy(d, p, n);
  return d;
}

int ac_case_copy(ac_case *dst, const ac_case *src, ac_err *e)
{
  case_sizes s;
  if (sizes_of(&src->p, src->has_o, src->has_lse, UINT64_MAX, &s, "case", e) != 0) return -1;
  *dst = *src;
  dst->q = dup_bytes(src->q, ac_case_bytes(src, 'q'));
  dst->k = dup_bytes(src->k, ac_case_bytes(src, 'k'));
  dst->v = dup_bytes(src->v, ac_case_bytes(src, 'v'));
  dst->o = src->has_o ? dup_bytes(src->o, ac_case_bytes(src, 'o')) : NULL;
  dst->lse = src->has_lse ? dup_bytes(src->lse, (size_t)s.rows * sizeof(float)) : NULL;
  dst->dout = dup_bytes(src->dout, ac_case_bytes(src, 'o'));
  dst->params_json = src->params_json ? ac_xstrdup(src->params_json) : NULL;
  ac_features_copy(dst, src);
  ac_layout_copy(dst, src);
  ac_quant_copy(dst, src);
  return 0;
}

void ac_case_copy_origin(ac_case *dst, const ac_case *src)
{
  dst->seed = src->seed;
  dst->case_index = src->case_index;
  memcpy(dst->generator, src->generator, sizeof dst->generator);
  dst->params_json = src->params_json ? ac_xstrdup(src->params_json) : NULL;
}

/* ---- hash ----------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

typedef struct { uint64_t h, n; } hasher;

static void hash_word(hasher *s, uint64_t w)
{
  s->h = mix64(s->h ^ mix64(w + 0x9e3779b97f4a7c15ULL * ++s->n));
}

static void hash_bytes(hasher *s, const void *data, size_t n)
{
  const unsigned char *p = data;
  hash_word(s, n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    hash_word(s, w);
  }
  uint64_t w = 0;
  for (size_t j = 0; i + j < n; j++) w |= (uint64_t)p[i + j] << (8 * j);
  hash_word(s, w);
}

static void hash_word_v(void *s, uint64_t w) { hash_word(s, w); }
static void hash_bytes_v(void *s, const void *d, size_t n) { hash_bytes(s, d, n); }

uint64_t ac_case_hash(const ac_case *c)
{
  hasher s = {0x6174746e63686b31ULL, 0};
  ac_problem p = c->p;
  if (strides_zero(&p)) ac_problem_default_strides(&p);
  int64_t fields[] = {p.dtype, p.mask, p.batch, p.heads, p.kv_heads, p.tq, p.tk, p.dk, p.dv, p.scale_is_default};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) hash_word(&s, (uint64_t)fields[i]);
  uint64_t sb = 0;
  if (!p.scale_is_default) memcpy(&sb, &p.scale, 8);
  hash_word(&s, sb);
  for (int i = 0; i < 4; i++) {
    hash_word(&s, (uint64_t)p.q_stride[i]);
    hash_word(&s, (uint64_t)p.k_stride[i]);
    hash_word(&s, (uint64_t)p.v_stride[i]);
    hash_word(&s, (uint64_t)p.o_stride[i]);
  }
  case_sizes z;
  if (sizes_of(&c->p, 0, 0, UINT64_MAX, &z, "", NULL) == 0) {
    if (c->q) hash_bytes(&s, c->q, (size_t)z.q * ac_dtype_size(ac_tensor_dtype(&p, 'q')));
    if (c->k) hash_bytes(&s, c->k, (size_t)z.k * ac_dtype_size(ac_tensor_dtype(&p, 'k')));
    if (c->v) hash_bytes(&s, c->v, (size_t)z.v * ac_dtype_size(ac_tensor_dtype(&p, 'v')));
  }
  if (p.f.used) {   /* plain cases keep the hash they always had */
    const ac_features *f = &p.f;
    uint64_t cap;
    memcpy(&cap, &f->softcap, 8);
    const int64_t ff[] = {f->used, f->qd, f->kd, f->vd, f->od, f->win_top_left, f->win_left, f->win_right,
                          f->alibi_per_batch, f->bias_dtype, f->bias_b, f->bias_h, f->mask_b, f->mask_h};
    for (size_t i = 0; i < sizeof ff / sizeof ff[0]; i++) hash_word(&s, (uint64_t)ff[i]);
    hash_word(&s, cap);
    if (f->used & AC_FEAT_DROPOUT) {
      uint64_t dp;
      memcpy(&dp, &f->dropout_p, 8);
      hash_word(&s, dp);
      hash_word(&s, f->dropout_seed);
    }
    for (int t = 0; t < AC_FT_N; t++) {
      uint64_t b = ac_feat_tensor_bytes(&p, (ac_feat_tensor)t);
      const void *data = *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t);
      if (b && b != UINT64_MAX && data) hash_bytes(&s, data, (size_t)b);
    }
  }
  if (c->lay) hash_word(&s, ac_layout_hash(c));
  ac_quant_hash(c, hash_word_v, hash_bytes_v, &s);   /* nothing for a case without quantized tensors */
  return s.h;
}

/* ---- write ---------------------------------------------------------------- */

static json_object *stride_array(const int64_t st[4])
{
  json_object *a = json_object_new_array();
  for (int i = 0; i < 4; i++) json_object_array_add(a, json_object_new_int64(st[i]));
  return a;
}

static int reserved(const char *name)
{
  static const char *const r[] = {"q", "k", "v", "o", "lse", "do", "meta.json"};
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
    if (!strcmp(name, r[i])) return 1;
  return ac_variants_member_name(name) || ac_layout_member_name(name) || ac_quant_member_name(name);
}

int ac_case_write_ex(const ac_case *c, const char *path, const ac_npz_member *extra, int nextra, ac_err *e)
{
  case_sizes s;
  if (validate(&c->p, c->has_o, c->has_lse, &s, path, e) != 0) return -1;
  if (!c->q || !c->k || !c->v) return ac_err_set(e, "%s: case has no q/k/v tensors", path);
  ac_err le;
  if ((c->lay || (c->p.f.used & AC_FEAT_LAYOUTS)) && ac_layout_validate(c, &le) != 0)
    return ac_err_set(e, "%s: %s", path, le.msg);
  if ((c->has_o && !c->o) || (c->has_lse && !c->lse)) return ac_err_set(e, "%s: o/lse flagged but missing", path);
  ac_problem p = c->p;
  if (strides_zero(&p)) ac_problem_default_strides(&p);
  if (!p.scale_is_default && !isfinite(p.scale)) return ac_err_set(e, "%s: scale is not finite", path);

  json_object *params = NULL;
  if (c->params_json && *c->params_json) {
    params = json_tokener_parse(c->params_json);
    if (!params || !json_object_is_type(params, json_type_object)) {
      json_object_put(params);
      return ac_err_set(e, "%s: generator params are not a JSON object", path);
    }
  } else {
    params = json_object_new_object();
  }
  json_object *m = json_object_new_object();
  json_object_object_add(m, "schema", json_object_new_int(1));
  json_object_object_add(m, "dtype", json_object_new_string(ac_dtype_name(p.dtype)));
  json_object_object_add(m, "mask", json_object_new_string(ac_mask_name(p.mask)));
  json_object_object_add(m, "batch", json_object_new_int64(p.batch));
  json_object_object_add(m, "heads", json_object_new_int64(p.heads));
  json_object_object_add(m, "kv_heads", json_object_new_int64(p.kv_heads));
  json_object_object_add(m, "tq", json_object_new_int64(p.tq));
  json_object_object_add(m, "tk", json_object_new_int64(p.tk));
  json_object_object_add(m, "dk", json_object_new_int64(p.dk));
  json_object_object_add(m, "dv", json_object_new_int64(p.dv));
  json_object *st = json_object_new_object();
  json_object_object_add(st, "q", stride_array(p.q_stride));
  json_object_object_add(st, "k", stride_array(p.k_stride));
  json_object_object_add(st, "v", stride_array(p.v_stride));
  json_object_object_add(st, "o", stride_array(p.o_stride));
  json_object_object_add(m, "strides", st);
  char sc[64];
  if (p.scale_is_default)
    snprintf(sc, sizeof sc, "default");
  else
    snprintf(sc, sizeof sc, "%a", p.scale);
  json_object_object_add(m, "scale", json_object_new_string(sc));
  json_object_object_add(m, "seed", json_object_new_uint64(c->seed));
  json_object_object_add(m, "case_index", json_object_new_int64(c->case_index));
  json_object_object_add(m, "generator", json_object_new_string(c->generator[0] ? c->generator : "external"));
  json_object_object_add(m, "params", params);
  json_object_object_add(m, "tool_version", json_object_new_string(PACKAGE_VERSION));
  ac_variants_meta_write(m, &p);
  ac_layout_meta_write(m, c);
  ac_quant_meta_write(m, &p);
  const char *text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
  char *meta = ac_xstrdup(text);
  json_object_put(m);

#define DESCR(x) ac_dtype_get(ac_tensor_dtype(&p, x))->npy
  int64_t qs[4] = {p.batch, p.heads, p.tq, p.dk}, ks[4] = {p.batch, p.kv_heads, p.tk, p.dk};
  int64_t vs[4] = {p.batch, p.kv_heads, p.tk, p.dv}, os[4] = {p.batch, p.heads, p.tq, p.dv};
  int rc = -1;
  ac_npz_writer *w = ac_npz_create(path, e);
  if (!w) goto done;
  /* a quantized tensor is stored as its codes and scales (ac_quant_members_write), never its values */
  if ((!ac_tensor_quantized(&p, 'q') && ac_npz_add_array(w, "q", DESCR('q'), 4, qs, c->q, ac_case_bytes(c, 'q'), e) != 0) ||
      (!ac_tensor_quantized(&p, 'k') && ac_npz_add_array(w, "k", DESCR('k'), 4, ks, c->k, ac_case_bytes(c, 'k'), e) != 0) ||
      (!ac_tensor_quantized(&p, 'v') && ac_npz_add_array(w, "v", DESCR('v'), 4, vs, c->v, ac_case_bytes(c, 'v'), e) != 0))
    goto abort;
  if (c->has_o && ac_npz_add_array(w, "o", DESCR('o'), 4, os, c->o, ac_case_bytes(c, 'o'), e) != 0) goto abort;
  if (c->dout && ac_npz_add_array(w, "do", DESCR('o'), 4, os, c->dout, ac_case_bytes(c, 'o'), e) != 0) goto abort;
#undef DESCR
  if (c->has_lse && ac_npz_add_array(w, "lse", "<f4", 3, os, c->lse, (size_t)s.rows * 4, e) != 0) goto abort;
  if (ac_variants_members_write(w, c, e) != 0 || ac_layout_members_write(w, c, e) != 0 ||
      ac_quant_members_write(w, c, e) != 0)
    goto abort;
  for (int i = 0; i < nextra; i++) {
    const ac_npz_member *x = &extra[i];
    if (reserved(x->name)) {
      ac_err_set(e, "%s: extra member name '%s' is reserved", path, x->name);
      goto abort;
    }
    int r = x->descr[0] ? ac_npz_add_array(w, x->name, x->descr, x->ndim, x->shape, x->data, x->nbytes, e)
                        : ac_npz_add_bytes(w, x->name, x->data, x->nbytes, e);
    if (r != 0) goto abort;
  }
  if (ac_npz_add_bytes(w, "meta.json", meta, strlen(meta), e) != 0) goto abort;
  rc = ac_npz_close(w, e);
  goto done;
abort:
  ac_npz_abort(w);
done:
  free(meta);
  return rc;
}

int ac_case_write(const ac_case *c, const char *path, ac_err *e)
{
  return ac_case_write_ex(c, path, NULL, 0, e);
}

/* ---- read ----------------------------------------------------------------- */

/* Header of an npy member: descr and shape must be exactly what meta.json implies. */
static int check_member(ac_npz *z, const char *name, const char *descr, int ndim, const int64_t *shape,
                        const char *field, ac_err *e)
{
  ac_npz_member m;
  if (ac_npz_read_header(z, name, &m, e) != 0) return -1;
  const char *path = ac_npz_path(z);
  if (strcmp(m.descr, descr) != 0)
    return ac_err_set(e, "%s: member '%s' has descr '%s', meta.json's %s needs '%s'", path, name, m.descr, field, descr);
  int same = m.ndim == ndim;
  for (int i = 0; same && i < ndim; i++) same = m.shape[i] == shape[i];
  if (!same) {
    char a[160], b[160];
    size_t la = 0, lb = 0;
    for (int i = 0; i < m.ndim; i++)
      la += (size_t)snprintf(a + la, sizeof a - la, "%s%lld", i ? "," : "", (long long)m.shape[i]);
    for (int i = 0; i < ndim; i++)
      lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (m.ndim == 0) a[0] = 0;
    return ac_err_set(e, "%s: member '%s' has shape [%s], meta.json implies [%s]", path, name, a, b);
  }
  return 0;
}

static int read_from(ac_case *c, ac_npz *z, ac_err *e)
{
  const char *path = ac_npz_path(z);
  ac_case_init(c);
  c->tool_version[0] = 0;
  if (!ac_npz_has(z, "meta.json")) return ac_err_set(e, "%s: member 'meta.json' missing", path);
  int64_t msz = ac_npz_member_size(z, "meta.json");
  if (msz > META_MAX_BYTES)
    return ac_err_set(e, "%s: meta.json of %lld bytes exceeds %d", path, (long long)msz, META_MAX_BYTES);
  ac_npz_member mm;
  if (ac_npz_read(z, "meta.json", &mm, e) != 0) return -1;
  if (ac_case_meta_read(c, mm.data, mm.nbytes, path, e) != 0) goto fail;
  const char *need[] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++)
    if (!ac_tensor_quantized(&c->p, need[i][0]) && !ac_npz_has(z, need[i])) {
      ac_err_set(e, "%s: member '%s' missing", path, need[i]);
      goto fail;
    }
  c->has_o = ac_npz_has(z, "o");
  c->has_lse = ac_npz_has(z, "lse");
  case_sizes s;
  if (validate(&c->p, c->has_o, c->has_lse, &s, path, e) != 0) goto fail;
  const ac_problem *p = &c->p;
  const int mixed = (p->f.used & AC_FEAT_MIXED_DTYPES) != 0;
#define DESCR(x) ac_dtype_get(ac_tensor_dtype(p, x))->npy
#define FIELD(x) (mixed ? "variants.dtypes." x : "dtype")
  int64_t qs[4] = {p->batch, p->heads, p->tq, p->dk}, ks[4] = {p->batch, p->kv_heads, p->tk, p->dk};
  int64_t vs[4] = {p->batch, p->kv_heads, p->tk, p->dv}, os[4] = {p->batch, p->heads, p->tq, p->dv};
#define DENSE(x) !ac_tensor_quantized(p, x) &&
  if ((DENSE('q') check_member(z, "q", DESCR('q'), 4, qs, FIELD("q"), e) != 0) ||
      (DENSE('k') check_member(z, "k", DESCR('k'), 4, ks, FIELD("k"), e) != 0) ||
      (DENSE('v') check_member(z, "v", DESCR('v'), 4, vs, FIELD("v"), e) != 0) ||
      (c->has_o && check_member(z, "o", DESCR('o'), 4, os, FIELD("o"), e) != 0) ||
      (c->has_lse && check_member(z, "lse", "<f4", 3, os, "lse", e) != 0) ||
      (ac_npz_has(z, "do") && check_member(z, "do", DESCR('o'), 4, os, FIELD("o"), e) != 0))
    goto fail;
#undef DESCR
#undef FIELD
  /* Every size above is now checked against meta.json and the cap; allocate and read. */
  size_t qb = ac_case_bytes(c, 'q'), kb = ac_case_bytes(c, 'k'), vb = ac_case_bytes(c, 'v'), ob = ac_case_bytes(c, 'o');
  if (ac_quant_members_read(z, c, e) != 0) goto fail;   /* codes, scales and the values they hold */
  if ((DENSE('q') (c->q = ac_xmalloc(qb), ac_npz_read_into(z, "q", c->q, qb, e) != 0)) ||
      (DENSE('k') (c->k = ac_xmalloc(kb), ac_npz_read_into(z, "k", c->k, kb, e) != 0)) ||
      (DENSE('v') (c->v = ac_xmalloc(vb), ac_npz_read_into(z, "v", c->v, vb, e) != 0)))
    goto fail;
#undef DENSE
  if (c->has_o) {
    c->o = ac_xmalloc(ob);
    if (ac_npz_read_into(z, "o", c->o, ob, e) != 0) goto fail;
  }
  if (ac_npz_has(z, "do")) {
    c->dout = ac_xmalloc(ob);
    if (ac_npz_read_into(z, "do", c->dout, ob, e) != 0) goto fail;
  }
  if (c->has_lse) {
    c->lse = ac_xmalloc((size_t)s.rows * sizeof(float));
    if (ac_npz_read_into(z, "lse", c->lse, (size_t)s.rows * sizeof(float), e) != 0) goto fail;
  }
  /* the layout first: a layout case's bias and boolean mask rows are max_tk long */
  if (ac_layout_members_read(z, c, e) != 0 || ac_variants_members_read(z, c, e) != 0) goto fail;
  return 0;
fail:
  ac_case_free(c);
  return -1;
}

int ac_case_read(ac_case *c, const char *path, ac_err *e)
{
  memset(c, 0, sizeof *c);
  ac_npz *z = ac_npz_open(path, ac_mem_cap(), e);
  if (!z) return -1;
  int rc = read_from(c, z, e);
  ac_npz_close_reader(z);
  return rc;
}

int ac_case_read_fd(ac_case *c, int fd, const char *label, ac_err *e)
{
  memset(c, 0, sizeof *c);
  ac_npz *z = ac_npz_open_fd(fd, label, ac_mem_cap(), e);
  if (!z) return -1;
  int rc = read_from(c, z, e);
  ac_npz_close_reader(z);
  return rc;
}

int ac_case_read_buffer(ac_case *c, const void *data, size_t n, const char *name, ac_err *e)
{
  memset(c, 0, sizeof *c);
  ac_npz *z = ac_npz_open_buffer(data, n, name, ac_mem_cap(), e);
  if (!z) return -1;
  int rc = read_from(c, z, e);
  ac_npz_close_reader(z);
  return rc;
}
