/* tharness_util.h: cases and kernels for the harness tests. */
#ifndef AC_THARNESS_UTIL_H
#define AC_THARNESS_UTIL_H
#include <math.h>
#include <string.h>
#include "config.h"
#include "casefile.h"
#include "harness.h"
#include "rng.h"
#include "testutil.h"

/* Under AddressSanitizer an invalid access is reported by the sanitizer, which then exits
 * with status 1: the run is still a CRASH, without the signal. */
static inline int th_sanitized(void) { return strcmp(AC_BUILD_SANITIZERS, "yes") == 0; }

/* A case with normal inputs (seeded by the test seed and `stream`). */
static inline void th_case(ac_case *c, ac_dtype t, ac_mask m, int64_t B, int64_t H, int64_t KVH, int64_t tq, int64_t tk,
                           int64_t dk, int64_t dv, uint64_t stream)
{
  memset(c, 0, sizeof *c);
  c->p.dtype = t;
  c->p.mask = m;
  c->p.batch = B;
  c->p.heads = H;
  c->p.kv_heads = KVH;
  c->p.tq = tq;
  c->p.tk = tk;
  c->p.dk = dk;
  c->p.dv = dv;
  c->p.scale_is_default = 1;
  c->case_index = -1;
  ac_err e;
  ck_assert_msg(ac_case_alloc(c, &e) == 0, AC_SEED_FMT "ac_case_alloc: %s", AC_SEED_ARG, e.msg);
  ac_counts n;
  ck_assert(ac_problem_counts(&c->p, &n, &e) == 0);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), stream);
  for (int64_t i = 0; i < n.q; i++) ac_store_bits(t, c->q, (size_t)i, ac_encode_f64(t, ac_rng_normal(&r)));
  for (int64_t i = 0; i < n.k; i++) ac_store_bits(t, c->k, (size_t)i, ac_encode_f64(t, ac_rng_normal(&r)));
  for (int64_t i = 0; i < n.v; i++) ac_store_bits(t, c->v, (size_t)i, ac_encode_f64(t, ac_rng_normal(&r)));
  c->seed = ac_test_seed();
}

/* Resolve one kernel by spec; fails the test otherwise. */
static inline ac_kernel *th_kernel(const char *spec)
{
  ac_kernel **list = NULL;
  int n = 0;
  ac_err e;
  ck_assert_msg(ac_kernel_resolve(spec, &list, &n, &e) == 0, "resolve %s: %s", spec, e.msg);
  ck_assert_int_eq(n, 1);
  ac_kernel *k = list[0];
  free(list);
  return k;
}

#endif
