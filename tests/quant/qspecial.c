/* qspecial.c: special scale values of the quantized formats (qspecial.h). */
#include "config.h"
#include "dtype.h"
#include "qspecial.h"

uint64_t ac_test_qspecial_scale(ac_qsdtype t, int k)
{
  static const uint64_t f16[] = {0, 1, 0x7bff, 0x7c00, 0x7e00}, f32[] = {0, 1, 0x7f7fffff, 0x7f800000, 0x7fc00000};
  static const uint64_t e4m3[] = {0, 1, 0x7e, 0x7f, 0xff}, e8m0[] = {0, 1, 254, 255, 255};
  return t == AC_QSD_F16 ? f16[k] : t == AC_QSD_F32 ? f32[k] : t == AC_QSD_E4M3 ? e4m3[k] : e8m0[k];
}

void ac_test_qset_scale(const ac_qfmt_info *f, ac_qdata *t, int64_t s, uint64_t bits)
{
  if (f->sdtype == AC_QSD_F16) ac_store_bits(AC_F16, t->scales, (size_t)s, bits);
  else if (f->sdtype == AC_QSD_F32) ac_store_bits(AC_F32, t->scales, (size_t)s, bits);
  else ((uint8_t *)t->scales)[s] = (uint8_t)bits;
}

ac_qdata *ac_test_qtensor(ac_case *c, char x, const ac_qspec **q, const ac_qfmt_info **f, int64_t *ns, int64_t *n)
{
  int i = ac_qslot(x);
  int64_t d[4];
  ac_qdims(&c->p, x, d);
  *q = &c->p.quant[i];
  *f = ac_qfmt_get((*q)->fmt);
  *ns = ac_qscale_count(*q, d);
  *n = d[0] * d[1] * d[2] * d[3];
  return &c->quant->t[i];
}

void ac_test_qcodes_random(ac_case *c, char x, ac_rng *r)
{
  const ac_qspec *q;
  const ac_qfmt_info *f;
  int64_t ns, n;
  ac_qdata *t = ac_test_qtensor(c, x, &q, &f, &ns, &n);
  for (int64_t e = 0; e < n; e++) t->codes[e] = (uint8_t)ac_rng_below(r, f->code_signed ? 256 : (uint64_t)f->code_max + 1);
}

void ac_test_qcodes_nan(ac_case *c, char x, ac_rng *r)
{
  const ac_qspec *q;
  const ac_qfmt_info *f;
  int64_t ns, n;
  ac_qdata *t = ac_test_qtensor(c, x, &q, &f, &ns, &n);
  if (f->code_max != 255 || f->code_signed) return;   /* fp8 only */
  for (int64_t e = 0; e < n; e++)
    if (!ac_rng_below(r, 16)) t->codes[e] = q->fmt == AC_QF_E4M3FNUZ ? 0x80 : q->fmt == AC_QF_E5M2 ? 0x7d : 0x7f;
}
