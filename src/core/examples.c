/* examples.c: the worked examples, regenerated exactly on demand. */
#include "config.h"
#include "casefile.h"
#include "rng.h"
#include <stdio.h>
#include <string.h>

static const char *const names[] = {"tiny3", "andrea-120m", NULL};

const char *const *ac_case_example_names(void) { return names; }

static void set_shape(ac_case *c, ac_dtype t, ac_mask m, int64_t B, int64_t H, int64_t KVH, int64_t tq,
                      int64_t tk, int64_t dk, int64_t dv)
{
  ac_problem *p = &c->p;
  p->dtype = t;
  p->mask = m;
  p->batch = B;
  p->heads = H;
  p->kv_heads = KVH;
  p->tq = tq;
  p->tk = tk;
  p->dk = dk;
  p->dv = dv;
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
}

/* tiny3: Q = K = V = [[1,0],[0,1],[1,1]], causal, scale 1/sqrt(2). Row 2 sees all three keys with
 * raw scores [1, 1, 2]. */
static int tiny3(ac_case *c, ac_err *e)
{
  set_shape(c, AC_F32, AC_MASK_CAUSAL, 1, 1, 1, 3, 3, 2, 2);
  if (ac_case_alloc(c, e) != 0) return -1;
  static const float x[6] = {1, 0, 0, 1, 1, 1};
  memcpy(c->q, x, sizeof x);
  memcpy(c->k, x, sizeof x);
  memcpy(c->v, x, sizeof x);
  c->params_json = ac_xstrdup("{\"values\":\"Q = K = V = [[1,0],[0,1],[1,1]]\"}");
  return 0;
}

/* andrea-120m: one attention layer of a 120M-parameter GPT (12 heads of 64, T = 1024), values
 * normal(0, 1) from seed 1, stream 0, drawn for q, k, v in that order and rounded to fp32. */
static int andrea(ac_case *c, ac_err *e)
{
  set_shape(c, AC_F32, AC_MASK_CAUSAL, 1, 12, 12, 1024, 1024, 64, 64);
  if (ac_case_alloc(c, e) != 0) return -1;
  c->seed = 1;
  ac_rng r;
  ac_rng_init(&r, c->seed, 0);
  void *t[3] = {c->q, c->k, c->v};
  size_t n = (size_t)(12 * 1024 * 64);
  for (int i = 0; i < 3; i++)
    for (size_t j = 0; j < n; j++) ac_store_bits(AC_F32, t[i], j, ac_encode_f64(AC_F32, ac_rng_normal(&r)));
  c->params_json = ac_xstrdup("{\"dist\":\"normal\",\"mean\":0,\"sigma\":1,\"stream\":0,\"order\":\"q,k,v\"}");
  return 0;
}

int ac_case_example(ac_case *c, const char *name, ac_err *e)
{
  ac_case_init(c);
  int rc;
  if (!strcmp(name, "tiny3"))
    rc = tiny3(c, e);
  else if (!strcmp(name, "andrea-120m"))
    rc = andrea(c, e);
  else
    return ac_err_set(e, "unknown example '%s' (known: tiny3, andrea-120m)", name);
  if (rc != 0) {
    ac_case_free(c);
    return -1;
  }
  snprintf(c->generator, sizeof c->generator, "example:%s", name);
  return 0;
}
