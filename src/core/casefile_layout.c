/* casefile_layout.c: serving layouts in a case file (casefile_layout.h). */
#include "config.h"
#include "casefile_layout.h"
#include <stdio.h>
#include <string.h>
#include "layout.h"

static const char *const members[] = {"cu_seqlens_q", "cu_seqlens_k", "block_table", "cache_seqlens"};
enum { M_CUQ, M_CUK, M_BT, M_CS, M_N };

int ac_layout_member_name(const char *name)
{
  for (int i = 0; i < M_N; i++)
    if (!strcmp(name, members[i])) return 1;
  return 0;
}

void ac_layout_meta_write(json_object *meta, const ac_case *c)
{
  if (!c->lay) return;
  const ac_problem *p = &c->p;
  json_object *l = json_object_new_object();
  int paged = (p->f.used & AC_FEAT_PAGED) != 0;
  json_object_object_add(l, "kind", json_object_new_string(paged ? "paged" : "varlen"));
  json_object_object_add(l, "sequences", json_object_new_int64(p->l.nseq));
  if (paged) {
    json_object_object_add(l, "page_size", json_object_new_int64(p->l.page_size));
    json_object_object_add(l, "num_pages", json_object_new_int64(p->l.num_pages));
    json_object_object_add(l, "max_pages", json_object_new_int64(p->l.max_pages));
  }
  json_object_object_add(meta, "layout", l);
}

static int get_int(json_object *v, const char *key, int64_t lo, int64_t *out, const char *path, ac_err *e)
{
  json_object *x;
  if (!json_object_object_get_ex(v, key, &x) || !json_object_is_type(x, json_type_int))
    return ac_err_set(e, "%s: meta.json layout.%s must be an integer", path, key);
  *out = json_object_get_int64(x);
  if (*out < lo || *out > INT32_MAX)
    return ac_err_set(e, "%s: meta.json layout.%s must be in [%lld, %d] (got %lld)", path, key, (long long)lo,
                      (int)INT32_MAX, (long long)*out);
  return 0;
}

int ac_layout_meta_read(json_object *v, ac_case *c, const char *path, ac_err *e)
{
  json_object *k;
  if (!json_object_is_type(v, json_type_object))
    return ac_err_set(e, "%s: meta.json \"layout\" is not an object", path);
  const char *kind = json_object_object_get_ex(v, "kind", &k) && json_object_is_type(k, json_type_string)
                       ? json_object_get_string(k) : "";
  int paged = !strcmp(kind, "paged");
  if (!paged && strcmp(kind, "varlen") != 0)
    return ac_err_set(e, "%s: meta.json layout.kind must be \"varlen\" or \"paged\" (got '%.40s')", path, kind);
  int64_t n, ps = 0, np = 0, mp = 0;
  if (get_int(v, "sequences", 1, &n, path, e) != 0) return -1;
  if (paged && (get_int(v, "page_size", 0, &ps, path, e) != 0 || get_int(v, "num_pages", 1, &np, path, e) != 0 ||
                get_int(v, "max_pages", 1, &mp, path, e) != 0))
    return -1;
  if (paged && ps == 0) return ac_err_set(e, "%s: meta.json layout.page_size must be >= 1 (got 0)", path);
  if ((uint64_t)n * (uint64_t)(mp + 2) * 4 > ac_mem_cap())
    return ac_err_set(e, "%s: layout arrays exceed the memory cap", path);
  ac_layout_alloc(c, paged ? AC_FEAT_PAGED : AC_FEAT_VARLEN, n, ps, mp);
  c->p.l.num_pages = np;
  return 0;
}

/* Shape of member i for the case; ndim 0 when the case has no such member. */
static int member_shape(const ac_case *c, int i, int64_t shape[2])
{
  int paged = (c->p.f.used & AC_FEAT_PAGED) != 0;
  int64_t n = c->p.l.nseq;
  switch (i) {
  case M_CUQ: shape[0] = n + 1; return 1;
  case M_CUK: shape[0] = n + 1; return paged ? 0 : 1;
  case M_BT: shape[0] = n, shape[1] = c->p.l.max_pages; return paged ? 2 : 0;
  default: shape[0] = n; return paged ? 1 : 0;
  }
}

static int32_t *member_data(const ac_case *c, int i)
{
  int32_t *const d[] = {c->lay->cu_q, c->lay->cu_k, c->lay->block_table, c->lay->cache_seqlens};
  return d[i];
}

int ac_layout_members_write(ac_npz_writer *w, const ac_case *c, ac_err *e)
{
  if (!c->lay) return 0;
  for (int i = 0; i < M_N; i++) {
    int64_t shape[2];
    int nd = member_shape(c, i, shape);
    if (!nd) continue;
    size_t nb = (size_t)shape[0] * (size_t)(nd == 2 ? shape[1] : 1) * 4;
    if (ac_npz_add_array(w, members[i], "<i4", nd, shape, member_data(c, i), nb, e) != 0) return -1;
  }
  return 0;
}

int ac_layout_members_read(ac_npz *z, ac_case *c, ac_err *e)
{
  const char *path = ac_npz_path(z);
  for (int i = 0; i < M_N; i++) {
    int64_t shape[2];
    int nd = c->lay ? member_shape(c, i, shape) : 0, has = ac_npz_has(z, members[i]);
    if (has && !nd)
      return ac_err_set(e, "%s: member '%s' present but meta.json's layout does not use it", path, members[i]);
    if (!has && nd) return ac_err_set(e, "%s: meta.json's layout needs member '%s', which is missing", path, members[i]);
    if (!nd) continue;
    ac_npz_member m;
    if (ac_npz_read_header(z, members[i], &m, e) != 0) return -1;
    if (strcmp(m.descr, "<i4") != 0)
      return ac_err_set(e, "%s: member '%s' has descr '%s', needs '<i4'", path, members[i], m.descr);
    if (m.ndim != nd || m.shape[0] != shape[0] || (nd == 2 && m.shape[1] != shape[1]))
      return ac_err_set(e, "%s: member '%s' does not have the shape meta.json's layout implies ([%lld%s])", path,
                        members[i], (long long)shape[0], nd == 2 ? ", max_pages" : "");
    size_t nb = (size_t)shape[0] * (size_t)(nd == 2 ? shape[1] : 1) * 4;
    if (ac_npz_read_into(z, members[i], member_data(c, i), nb, e) != 0) return -1;
  }
  if (!c->lay) return 0;
  ac_err le;
  if (ac_layout_validate(c, &le) != 0) return ac_err_set(e, "%s: %s", path, le.msg);
  ac_layout_finish(c);
  return 0;
}
