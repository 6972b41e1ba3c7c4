/* quant_pack.c: codes packed two or four to a byte (quant.h AC_QPACK_), as a case file and a kernel
 * hold them; attncheck keeps one code per byte inside. Rows of D codes (D a multiple of the codes a
 * byte takes) start on a byte. */
#include "config.h"
#include "quant.h"
#include <string.h>

void ac_qpack(const ac_qspec *q, const uint8_t *codes, int64_t n, uint8_t *out)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  int per = ac_qspec_per_byte(q);
  if (per == 1 || !f) {
    memcpy(out, codes, (size_t)n);
    return;
  }
  int bits = f->bits;
  memset(out, 0, (size_t)(n / per));
  for (int64_t x = 0; x < n; x++) {
    int64_t at = x % per;
    int sh = (int)(q->pack == AC_QPACK_HIGH_FIRST ? (per - 1 - at) * bits : at * bits);
    out[x / per] |= (uint8_t)((codes[x] & ((1u << bits) - 1)) << sh);
  }
}

void ac_qunpack(const ac_qspec *q, const uint8_t *packed, int64_t n, uint8_t *codes)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  int per = ac_qspec_per_byte(q);
  if (per == 1 || !f) {
    memcpy(codes, packed, (size_t)n);
    return;
  }
  for (int64_t x = 0; x < n; x++) codes[x] = ac_qpacked_code(q->pack, f->bits, packed, x);
}
