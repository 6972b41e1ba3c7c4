/* tplugin_alibi.c: a plugin that sees only the ABI header, whose LSE follows FlashAttention-2's causal
 * ALiBi convention and says so with ATTNCHECK_CAP_ALIBI_LSE_FA2 (tests/tcmd_alibi_lse.sh):
 *   alibi-fa2   binary64 three-pass attention of f32 tensors, ALiBi as +m j under a causal mask
 *               (-m |i + tk - tq - j| without one), LSE = m + ln l of those scores;
 *   alibi-abi   the same kernel without the bit: attncheck judges its LSE by the ABI's rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "attncheck_kernel.h"

static int supports(const attncheck_problem *p, char *why, size_t n)
{
  if (p->dtype != ATTNCHECK_F32 || (p->features & ~(uint32_t)ATTNCHECK_FEAT_ALIBI)) {
    snprintf(why, n, "f32 with ALiBi at most");
    return 0;
  }
  return 1;
}

static double at(const float *x, const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d)
{
  return (double)x[b * s[0] + h * s[1] + i * s[2] + d * s[3]];
}

static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  double *s = malloc(sizeof *s * (size_t)(p->tk + 1));
  if (!s) {
    snprintf(err, n, "out of memory");
    return 1;
  }
  const int causal = p->mask != ATTNCHECK_MASK_NONE, alibi = (p->features & ATTNCHECK_FEAT_ALIBI) != 0;
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->heads; h++) {
      const int64_t kh = h / (p->heads / p->kv_heads);
      const double m = alibi ? t->alibi_slopes[p->alibi_per_batch ? b * p->heads + h : h] : 0;
      for (int64_t i = 0; i < p->tq; i++) {
        const int64_t last = p->mask == ATTNCHECK_MASK_CAUSAL ? i : p->mask ? i + p->tk - p->tq : p->tk - 1;
        double mx = -INFINITY, l = 0;
        for (int64_t j = 0; j <= last && j < p->tk; j++) {
          double d = 0;
          for (int64_t x = 0; x < p->dk; x++) d += at(t->q, p->q_stride, b, h, i, x) * at(t->k, p->k_stride, b, kh, j, x);
          s[j] = d * p->scale + (causal ? m * (double)j : -m * fabs((double)(i + p->tk - p->tq - j)));
          if (s[j] > mx) mx = s[j];
        }
        for (int64_t j = 0; j <= last && j < p->tk; j++) l += exp(s[j] - mx);
        for (int64_t e = 0; e < p->dv; e++) {
          double a = 0;
          for (int64_t j = 0; j <= last && j < p->tk; j++) a += exp(s[j] - mx) * at(t->v, p->v_stride, b, kh, j, e);
          ((float *)t->o)[b * p->o_stride[0] + h * p->o_stride[1] + i * p->o_stride[2] + e * p->o_stride[3]] =
            l > 0 ? (float)(a / l) : 0.0f;
        }
        if (t->lse) t->lse[(b * p->heads + h) * p->tq + i] = l > 0 ? (float)(mx + log(l)) : -INFINITY;
      }
    }
  free(s);
  return 0;
}

static const attncheck_kernel fa2 = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "alibi-fa2",
                                     "FlashAttention-2's causal ALiBi, declared", "fp32", ATTNCHECK_MEM_HOST,
                                     ATTNCHECK_FEAT_ALIBI | ATTNCHECK_CAP_ALIBI_LSE_FA2, supports, run,
                                     {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};
static const attncheck_kernel abi = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "alibi-abi",
                                     "FlashAttention-2's causal ALiBi, undeclared", "fp32", ATTNCHECK_MEM_HOST,
                                     ATTNCHECK_FEAT_ALIBI, supports, run, {NULL, NULL, NULL, NULL}, NULL, 0, 0,
                                     0, 0, NULL, 0, 0, NULL};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const list[] = {&fa2, &abi};
  *count = 2;
  return list;
}
