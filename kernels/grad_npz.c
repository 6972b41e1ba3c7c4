/* owner: exec backend */
/* grad_npz.c: gradients from an NPZ file (grad_npz.h). */
#include "config.h"
#include "grad_npz.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npz.h"

/* One member into a fresh buffer: descr and shape (ndim dims) must match. */
static int read_member(ac_npz *z, const char *path, const char *name, const char *descr, const char *dname, int ndim,
                       const int64_t *shape, void **dst, ac_err *e)
{
  ac_npz_member m;
  if (!ac_npz_has(z, name)) return ac_err_set(e, "%s: no member '%s'", path, name);
  if (ac_npz_read(z, name, &m, e)) return -1;
  int ok = m.ndim == ndim && !strcmp(m.descr, descr);
  size_t n = 1;
  for (int i = 0; i < ndim; i++) {
    ok = ok && m.shape[i] == shape[i];
    n *= (size_t)shape[i];
  }
  if (!ok) {
    char want[128] = "", got[128] = "";
    for (int i = 0; i < ndim; i++)
      snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "", (long long)shape[i]);
    for (int i = 0; i < m.ndim && i < 8; i++)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "", (long long)m.shape[i]);
    return ac_err_set(e, "%s: member '%s' must be %s ('%s') of shape [%s], got '%s' of shape [%s]", path, name, dname,
                      descr, want, m.descr[0] ? m.descr : "a non-array member", got);
  }
  *dst = ac_xmalloc(m.nbytes ? m.nbytes : 1);
  memcpy(*dst, m.data, m.nbytes);
  return 0;
}

int ac_grad_npz_read(const char *path, const ac_case *c, int need_dsinks, ac_grad_run_result *r, ac_err *e)
{
  const ac_problem *p = &c->p;
  const ac_dtype_info *di = ac_dtype_get(p->dtype);
  const int64_t shape[3][4] = {{p->batch, p->heads, p->tq, p->dk},
                               {p->batch, p->kv_heads, p->tk, p->dk},
                               {p->batch, p->kv_heads, p->tk, p->dv}};
  static const char *const names[3] = {"dq", "dk", "dv"};
  ac_npz *z = ac_npz_open(path, ac_mem_cap(), e);
  if (!z) return -1;
  int rc = 0;
  for (int t = 0; t < 3 && !rc; t++) {
    rc = read_member(z, path, names[t], di->npy, di->name, 4, shape[t], &r->g[t], e);
    r->count[t] = shape[t][0] * shape[t][1] * shape[t][2] * shape[t][3];
  }
  int sinks = (p->f.used & AC_FEAT_SINKS) != 0;
  if (!rc && sinks && (need_dsinks || ac_npz_has(z, "dsinks"))) {
    int64_t hs[1] = {p->heads};
    void *d = NULL;
    rc = read_member(z, path, "dsinks", "<f4", "f32", 1, hs, &d, e);
    r->dsinks = d;
    r->count[3] = p->heads;
  }
  ac_npz_close_reader(z);
  if (rc) {
    ac_grad_run_result_free(r);
    memset(r->count, 0, sizeof r->count);
    return -1;
  }
  r->dtype = p->dtype;
  r->status = AC_RUN_OK;
  return 0;
}
