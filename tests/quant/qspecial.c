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
