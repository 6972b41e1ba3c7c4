/* grad_meta.c: test kernels for the backward's metamorphic checks (fuzz/engine/metamorphic_grad.c),
 * each flash-bwd-f32 with one defect that the grad judge alone does not see on typical cases or
 * that only the order of the keys shows:
 *   test-bwd-dout-clamp  dO clamped to |dO| <= 16 before the backward: not linear in dO, yet
 *                        exact wherever |dO| stays below 16 (every dO pattern of the fuzzer but
 *                        huge), so it passes the grad judge there;
 *   test-bwd-key-order   dK and dV of the keys in the second half (j >= tk/2) times 1 + 2^-8:
 *                        what a key gets depends on where it stands (unmasked problems only,
 *                        where every key may trade places with every other). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "testkernels.h"
#include "../cpu_backward.h"

#define CLAMP 16.0f

static int fwd_supports(const attncheck_problem *p, char *why, size_t n) { return ac_cpu_flash_f32.supports(p, why, n); }
static int fwd_supports_unmasked(const attncheck_problem *p, char *why, size_t n)
{
  if (p->mask != ATTNCHECK_MASK_NONE) {
    snprintf(why, n, "causal masks are not supported");
    return 0;
  }
  return fwd_supports(p, why, n);
}
static int fwd_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  return ac_cpu_flash_f32.run(p, t, err, n);
}

static int bwd_clamp(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err,
                     size_t n)
{
  const ac_cpu_bwd_cfg cfg = {ATTNCHECK_F32, 1, 0u};
  if (!g || !g->dout) return ac_cpu_backward(&cfg, p, t, g, err, n);
  float *d = malloc(sizeof(float) * (size_t)(p->batch * p->heads * p->tq * p->dv + 1));
  if (!d) {
    snprintf(err, n, "out of memory");
    return -1;
  }
  attncheck_grad_tensors c = *g;
  const int64_t s[4] = {p->heads * p->tq * p->dv, p->tq * p->dv, p->dv, 1};
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < p->tq; i++)
        for (int64_t e = 0; e < p->dv; e++) {
          float v = ac_cpu_load_f32(ATTNCHECK_F32, g->dout, ac_cpu_off(g->do_stride, b, h, i, e));
          d[ac_cpu_off(s, b, h, i, e)] = v > CLAMP ? CLAMP : v < -CLAMP ? -CLAMP : v;
        }
  c.dout = d;
  for (int x = 0; x < 4; x++) c.do_stride[x] = s[x];
  int rc = ac_cpu_backward(&cfg, p, t, &c, err, n);
  free(d);
  return rc;
}

static int bwd_key_order(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g,
                         char *err, size_t n)
{
  const ac_cpu_bwd_cfg cfg = {ATTNCHECK_F32, 1, 0u};
  int rc = ac_cpu_backward(&cfg, p, t, g, err, n);
  if (rc) return rc;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t j = p->tk / 2; j < p->tk; j++) {
        for (int64_t x = 0; x < p->dk; x++) {
          int64_t o = ac_cpu_off(g->dk_stride, b, h, j, x);
          ac_cpu_store_f32(ATTNCHECK_F32, g->dk, o, ac_cpu_load_f32(ATTNCHECK_F32, g->dk, o) * (1.0f + 0x1p-8f));
        }
        for (int64_t x = 0; x < p->dv; x++) {
          int64_t o = ac_cpu_off(g->dv_stride, b, h, j, x);
          ac_cpu_store_f32(ATTNCHECK_F32, g->dv, o, ac_cpu_load_f32(ATTNCHECK_F32, g->dv, o) * (1.0f + 0x1p-8f));
        }
      }
  return 0;
}

const attncheck_kernel ac_tk_bwd_dout_clamp = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-bwd-dout-clamp",
  "test kernel: flash-bwd-f32 with dO clamped to |dO| <= 16 (not linear in dO: GRAD-METAMORPHIC)", "fp32",
  ATTNCHECK_MEM_HOST, AC_BWD_CAPS | ATTNCHECK_CAP_BACKWARD, fwd_supports, fwd_run, {NULL, NULL, NULL, NULL}, bwd_clamp,
  AC_BWD_CAPS, 0, 0, 0, NULL, 0, 0, NULL};

const attncheck_kernel ac_tk_bwd_key_order = {
  ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "test-bwd-key-order",
  "test kernel: flash-bwd-f32 whose dK, dV of the second half of the keys are off by 2^-8 (GRAD-METAMORPHIC)", "fp32",
  ATTNCHECK_MEM_HOST, AC_BWD_CAPS | ATTNCHECK_CAP_BACKWARD, fwd_supports_unmasked, fwd_run, {NULL, NULL, NULL, NULL},
  bwd_key_order, AC_BWD_CAPS, 0, 0, 0, NULL, 0, 0, NULL};
