/* store_judge.c: the store of a quantize-on-store case (docs/quantized.md "Quantize-on-store"): what
 * the kernel stored for each store tensor against what the quantizer of its spec gives the plain
 * values, exactly (codes, scales and zero points bit for bit): STORE-FAIL naming the counts and the
 * worst element; and the case over what the kernel stored, whose attention the oracle then judges. */
#include "config.h"
#include "store_judge.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "quant.h"

typedef struct {
  int64_t codes, scales, aux;   /* differing elements */
  int64_t worst;                /* element (dense index) of the largest value difference, -1 none */
  double worst_steps;           /* that difference in units of its expected scale (inf: a NaN on one side) */
} store_diff;

/* The value of element x of a quantized tensor whose arrays are t (scale group s). */
static double value_of(const ac_qspec *q, const ac_qdata *t, int64_t x, int64_t s)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  double sv = ac_qscale_value(sd, ac_qsd_load(sd, t->scales, (size_t)s));
  double a = f->aux == AC_QAUX_NONE ? 0 : ac_qscale_value(zd, ac_qsd_load(zd, t->aux, f->aux == AC_QAUX_TSCALE ? 0 : (size_t)s));
  int rounded = 0;
  if (f->aux == AC_QAUX_ZERO && zd != AC_QSD_I8 && zd != AC_QSD_U8) return ac_qvalue_zero(q->fmt, t->codes[x], sv, a, &rounded);
  return ac_qvalue(q->fmt, t->codes[x], sv, a);
}

static store_diff diff_of(const ac_case *c, int i, const ac_qdata *got)
{
  const ac_qspec *q = &c->p.quant[i];
  const ac_qdata *want = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, "qkv"[i], d);
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  const int64_t ns = ac_qscale_count(q, d);
  const size_t ss = ac_qsdtype_size(sd), as = zd == AC_QSD_N ? 0 : ac_qsdtype_size(zd);
  store_diff r = {0, 0, 0, -1, 0};
  uint8_t *bad_group = calloc((size_t)ns + 1, 1);
  for (int64_t s = 0; s < ns; s++) {
    int bs = memcmp((const char *)got->scales + s * (int64_t)ss, (const char *)want->scales + s * (int64_t)ss, ss) != 0;
    int ba = as && memcmp((const char *)got->aux + s * (int64_t)as, (const char *)want->aux + s * (int64_t)as, as) != 0;
    r.scales += bs, r.aux += ba;
    if (bad_group) bad_group[s] = (uint8_t)(bs || ba);
  }
  for (int64_t b = 0, x = 0; b < d[0]; b++)
    for (int64_t h = 0; h < d[1]; h++)
      for (int64_t t = 0; t < d[2]; t++)
        for (int64_t e = 0; e < d[3]; e++, x++) {
          int64_t s = ac_qscale_index(q, d, b, h, t, e);
          int bc = got->codes[x] != want->codes[x];
          r.codes += bc;
          if (!bc && !(bad_group && bad_group[s])) continue;
          double vw = value_of(q, want, x, s), vg = value_of(q, got, x, s);
          double step = fabs(ac_qscale_value(sd, ac_qsd_load(sd, want->scales, (size_t)s)));
          double diff = isnan(vw) != isnan(vg) || isinf(vg) != isinf(vw) ? INFINITY : fabs(vg - vw) / (step > 0 ? step : 1);
          if (isnan(diff)) diff = 0;
          if (r.worst < 0 || diff > r.worst_steps) r.worst = x, r.worst_steps = diff;
        }
  free(bad_group);
  return r;
}

/* "k[0,1,5,17] code 0x3c (value 0.875) where 0x3b (0.8125) is declared, scale 0x3d8f5c29 where ..." */
static void describe_worst(const ac_case *c, int i, const ac_qdata *got, int64_t x, char *buf, size_t n)
{
  const ac_qspec *q = &c->p.quant[i];
  const ac_qdata *want = &c->quant->t[i];
  int64_t d[4];
  ac_qdims(&c->p, "qkv"[i], d);
  int64_t e = x % d[3], t = x / d[3] % d[2], h = x / d[3] / d[2] % d[1], b = x / d[3] / d[2] / d[1];
  int64_t s = ac_qscale_index(q, d, b, h, t, e);
  const ac_qsdtype sd = ac_qspec_sdtype(q), zd = ac_qspec_zdtype(q);
  size_t l = (size_t)snprintf(buf, n, "%c[%lld,%lld,%lld,%lld] code 0x%02x (value %.9g) where 0x%02x (%.9g) is its quantizer's",
                              "qkv"[i], (long long)b, (long long)h, (long long)t, (long long)e, got->codes[x],
                              value_of(q, got, x, s), want->codes[x], value_of(q, want, x, s));
  uint64_t gs = ac_qsd_load(sd, got->scales, (size_t)s), ws = ac_qsd_load(sd, want->scales, (size_t)s);
  if (gs != ws && l < n)
    l += (size_t)snprintf(buf + l, n - l, "; its scale %.9g (bits 0x%llx) where %.9g (0x%llx)", ac_qscale_value(sd, gs),
                          (unsigned long long)gs, ac_qscale_value(sd, ws), (unsigned long long)ws);
  if (zd != AC_QSD_N && ac_qfmt_get(q->fmt)->aux == AC_QAUX_ZERO && l < n) {
    uint64_t gz = ac_qsd_load(zd, got->aux, (size_t)s), wz = ac_qsd_load(zd, want->aux, (size_t)s);
    if (gz != wz)
      snprintf(buf + l, n - l, "; its zero point %.9g where %.9g", ac_qscale_value(zd, gz), ac_qscale_value(zd, wz));
  }
}

int ac_store_judge(const ac_case *c, const ac_run_result *run, ac_report *rep, ac_case *over, int *differs, ac_err *e)
{
  *differs = 0;
  if (!(ac_quant_features(&c->p) & AC_FEAT_QUANT_STORE) || run->status != AC_RUN_OK) return 0;
  if (!run->stored) return ac_err_set(e, "a quantize-on-store run without what it stored");
  for (int i = 0; i < 3; i++) {
    const ac_qspec *q = &c->p.quant[i];
    if (!q->fmt || !q->store) continue;
    const ac_qdata *got = &run->stored->t[i];
    store_diff r = diff_of(c, i, got);
    if (!r.codes && !r.scales && !r.aux) continue;
    int64_t d[4];
    ac_qdims(&c->p, "qkv"[i], d);
    char spec[128], worst[400] = "", aux[64] = "";
    if (r.worst >= 0) describe_worst(c, i, got, r.worst, worst, sizeof worst);
    if (ac_qfmt_get(q->fmt)->aux == AC_QAUX_ZERO || ac_qfmt_get(q->fmt)->aux == AC_QAUX_MIN)
      snprintf(aux, sizeof aux, ", %lld %s", (long long)r.aux, ac_qfmt_get(q->fmt)->aux == AC_QAUX_ZERO ? "zero points" : "mins");
    ac_report_add(rep, AC_V_STORE_FAIL,
                  "store %c (%s): %lld of %lld codes, %lld of %lld scales%s differ from its quantizer's; worst %s "
                  "(%.3g of its scale off)",
                  "qkv"[i], ac_qspec_str(q, spec, sizeof spec), (long long)r.codes, (long long)(d[0] * d[1] * d[2] * d[3]),
                  (long long)r.scales, (long long)ac_qscale_count(q, d), aux, worst, r.worst_steps);
    *differs = 1;
  }
  if (!*differs || !over) return 0;
  /* the case over what the kernel stored: its quantized tensors as read ones (their specs without the
   * quantizer), values decoded from the stored arrays */
  if (ac_case_copy(over, c, e)) return -1;
  for (int i = 0; i < 3; i++) {
    ac_qspec *q = &over->p.quant[i];
    if (!q->fmt || !q->store) continue;
    int64_t d[4];
    ac_qdims(&c->p, "qkv"[i], d);
    int64_t ns = ac_qscale_count(q, d);
    const ac_qsdtype zd = ac_qspec_zdtype(q);
    ac_qdata *t = &over->quant->t[i];
    const ac_qdata *got = &run->stored->t[i];
    memcpy(t->codes, got->codes, (size_t)(d[0] * d[1] * d[2] * d[3]));
    memcpy(t->scales, got->scales, (size_t)ns * ac_qsdtype_size(ac_qspec_sdtype(q)));
    if (zd != AC_QSD_N && t->aux && got->aux) memcpy(t->aux, got->aux, (size_t)ns * ac_qsdtype_size(zd));
    free(t->plain);
    t->plain = NULL;
    q->store = 0;
    ac_quant_decode(over, "qkv"[i]);
  }
  return 0;
}
