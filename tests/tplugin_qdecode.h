/* tplugin_qdecode.h: the scale and code types the test plugins read, decoded from docs/quantized.md
 * and the header's text alone (binary16, e4m3fn), shared by tests/tplugin_quant.c and
 * tests/tplugin_quant_paged.c. */
#ifndef AC_TPLUGIN_QDECODE_H
#define AC_TPLUGIN_QDECODE_H
#include <math.h>
#include <stdint.h>

static inline double tq_f16(uint16_t h)
{
  int e = h >> 10 & 31, m = h & 1023;
  double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  if (e == 31) v = m ? NAN : INFINITY;
  return h >> 15 ? -v : v;
}

static inline double tq_e4m3fn(uint8_t c)
{
  int e = c >> 3 & 15, m = c & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
  return c >> 7 ? -v : v;
}
#endif
