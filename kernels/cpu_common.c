/* cpu_common.c: problem checks, block sizes and scratch shared by the built-in CPU kernels. */
#include "config.h"
#include "cpu_common.h"
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int ac_cpu_supports(const attncheck_problem *p, int dt, int f32_scale, char *why, size_t why_len)
{
  if (p->struct_size < sizeof(attncheck_problem)) {
    snprintf(why, why_len, "problem struct of %u bytes, this kernel needs %zu", (unsigned)p->struct_size,
             sizeof(attncheck_problem));
    return 0;
  }
  if (p->dtype != dt) {
    snprintf(why, why_len, "takes %s tensors only, not %s", ac_dtype_name((ac_dtype)dt),
             ac_dtype_name((ac_dtype)p->dtype));
    return 0;
  }
  if (p->mask < ATTNCHECK_MASK_NONE || p->mask > ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT) {
    snprintf(why, why_len, "unknown mask %d", (int)p->mask);
    return 0;
  }
  if (p->batch < 0 || p->heads < 1 || p->kv_heads < 1 || p->tq < 0 || p->tk < 0 || p->dk < 0 || p->dv < 0) {
    snprintf(why, why_len, "negative or zero size (batch %lld, heads %lld, kv_heads %lld, tq %lld, tk %lld, dk %lld, dv %lld)",
             (long long)p->batch, (long long)p->heads, (long long)p->kv_heads, (long long)p->tq, (long long)p->tk,
             (long long)p->dk, (long long)p->dv);
    return 0;
  }
  if (p->heads % p->kv_heads != 0) {
    snprintf(why, why_len, "heads %lld not a multiple of kv_heads %lld", (long long)p->heads, (long long)p->kv_heads);
    return 0;
  }
  if (!isfinite(p->scale) || (f32_scale && fabs(p->scale) > FLT_MAX)) {
    snprintf(why, why_len, "scale %a is not a finite %s", p->scale, f32_scale ? "binary32" : "binary64");
    return 0;
  }
  return 1;
}

int ac_cpu_env_block(const char *name, int64_t def, int64_t *out, char *err, size_t err_len)
{
  const char *s = getenv(name);
  *out = def;
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < 1 || v > 65536) {
    snprintf(err, err_len, "%s=%s: want an integer in [1, 65536]", name, s);
    return -1;
  }
  *out = v;
  return 0;
}

void *ac_cpu_scratch(int64_t n, size_t sz)
{
  if (n < 1) n = 1;
  if ((uint64_t)n > SIZE_MAX / sz) return NULL;
  return calloc((size_t)n, sz);
}

static float fp8_values[2][256];
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

static void fp8_init(void)
{
  for (int i = 0; i < 256; i++) {
    fp8_values[0][i] = (float)ac_decode(AC_E4M3, (uint64_t)i);   /* exact: at most 4 significant bits */
    fp8_values[1][i] = (float)ac_decode(AC_E5M2, (uint64_t)i);
  }
}

float ac_cpu_fp8_value(int dt, uint8_t bits)
{
  pthread_once(&fp8_once, fp8_init);
  return fp8_values[dt == ATTNCHECK_E5M2][bits];
}
