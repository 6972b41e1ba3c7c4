/* dropout.c: dropout's keep-masks (dropout.h, docs/dropout.md). */
#include "config.h"
#include "dropout.h"
#include <math.h>
#include <stdlib.h>
#include "rng.h"
#include "variants.h"

int ac_dropout_keep(uint64_t seed, uint64_t x, double p)
{
  double u = (double)(ac_hash2(seed, x) >> 11) * 0x1p-53;
  return u >= p;
}

void ac_dropout_fill(const ac_problem *p, uint8_t *mask)
{
  int64_t n = p->batch * p->heads * p->tq * p->tk;
  for (int64_t x = 0; x < n; x++) mask[x] = (uint8_t)ac_dropout_keep(p->f.dropout_seed, (uint64_t)x, p->f.dropout_p);
}

int ac_dropout_parse(const char *s, double *p, ac_err *e)
{
  char *end = NULL;
  double v = s ? strtod(s, &end) : NAN;
  if (!s || end == s || *end) return ac_err_set(e, "dropout: '%.40s' is not a number", s ? s : "");
  *p = (double)(float)v;
  return ac_dropout_p_check(*p, e);
}

double ac_dropout_inv_keep_up(double p)
{
  /* fl(1 - p) = q(1 + a), fl(1 / fl(1 - p)) = (1 + b) / (q (1 + a)), |a|, |b| <= 2^-53: within a factor
   * (1 - 2^-53) / (1 + 2^-53) >= 1 - 2^-51.9 of 1/q; times 1 + 2^-50 and rounded once more
   * (1 - 2^-53), at least (1 - 2^-51.9)(1 + 2^-50)(1 - 2^-53) > 1 times 1/q. */
  return 1.0 / (1.0 - p) * (1 + 0x1p-50);
}
