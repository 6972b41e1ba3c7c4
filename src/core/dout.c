/* dout.c: the upstream gradient dO of a case, drawn from a named pattern (dout.h). */
#include "config.h"
#include "dout.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"

static const char *const patterns[] = {"normal", "zero-rows", "huge", "tiny", "zeros", NULL};

const char *const *ac_dout_patterns(void) { return patterns; }

/* The pattern's index and, for normal:SIGMA, its sigma; -1 when unknown. */
static int parse_pattern(const char *s, double *sigma)
{
  *sigma = 1.0;
  if (!strncmp(s, "normal:", 7)) {
    char *end;
    double v = strtod(s + 7, &end);
    if (!s[7] || *end || !isfinite(v) || v < 0) return -1;
    *sigma = v;
    return 0;
  }
  for (int i = 0; patterns[i]; i++)
    if (!strcmp(s, patterns[i])) return i;
  return -1;
}

int ac_dout_generate(ac_case *c, const char *pattern, uint64_t seed, ac_err *e)
{
  double sigma;
  int kind = parse_pattern(pattern, &sigma);
  if (kind < 0) return ac_err_set(e, "unknown dO pattern '%s' (normal[:SIGMA], zero-rows, huge, tiny, zeros)", pattern);
  if (c->lay) return ac_err_set(e, "a dO for a case with a serving layout is not supported");
  const ac_problem *p = &c->p;
  ac_dtype t = ac_tensor_dtype(p, 'o');
  const ac_dtype_info *di = ac_dtype_get(t);
  if (kind == 2) sigma = ldexp(1.0, ilogb(di->max_finite) / 2);
  if (kind == 3) sigma = ldexp(1.0, di->ieee_emin / 2);
  size_t n = ac_case_bytes(c, 'o') / ac_dtype_size(t);
  free(c->dout);
  c->dout = ac_xmalloc(n ? n * ac_dtype_size(t) : 1);
  ac_rng r;
  ac_rng_init(&r, seed, 13);
  for (size_t x = 0; x < n; x++) {
    double g = kind == 4 ? 0.0 : sigma * ac_rng_normal(&r);
    if (kind == 1 && (x / (size_t)p->dv) % 2 == 1) g = 0.0;
    ac_store_bits(t, c->dout, x, ac_encode_f64(t, g));
  }
  return 0;
}
