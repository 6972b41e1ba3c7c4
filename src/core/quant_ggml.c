/* quant_ggml.c: ggml's byte layouts of its block formats (ggml-common.h), 32 elements a block,
 * little-endian:
 *   q8_0   {f16 d; int8 qs[32]}                     34 bytes, x = d qs[j]
 *   q4_0   {f16 d; uint8 qs[16]}                    18 bytes, x_j = d ((qs[j] & 15) - 8), x_{j+16} = d ((qs[j] >> 4) - 8)
 *   q4_1   {f16 d, m; uint8 qs[16]}                 20 bytes, x = d q + m, nibbles as q4_0
 *   q5_0   {f16 d; uint8 qh[4]; uint8 qs[16]}       22 bytes, q = nibble | (bit j of qh) << 4, x = d (q - 16)
 *   q5_1   {f16 d, m; uint8 qh[4]; uint8 qs[16]}    24 bytes, x = d q + m
 *   iq4_nl {f16 d; uint8 qs[16]}                    18 bytes, x = d kvalues_iq4nl[nibble]
 *   mxfp4  {uint8 e; uint8 qs[16]}                  17 bytes, x = 2^(e - 127) e2m1(nibble)
 * where the low nibble of qs[j] is element j and the high one element j + 16, and bit j of the
 * 32-bit word qh is the fifth bit of element j. */
#include "config.h"
#include "quant.h"
#include <stdlib.h>
#include <string.h>

static int has_min(int fmt) { return fmt == AC_QF_Q4_1 || fmt == AC_QF_Q5_1; }
static int five_bits(int fmt) { return fmt == AC_QF_Q5_0 || fmt == AC_QF_Q5_1; }

int ac_qggml_pack(int fmt, const uint8_t *c, uint16_t d, uint16_t m, uint8_t *out)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  if (!f || !f->ggml_bytes) return -1;
  uint8_t *o = out;
  if (fmt == AC_QF_MXFP4) *o++ = (uint8_t)d;
  else o[0] = (uint8_t)d, o[1] = (uint8_t)(d >> 8), o += 2;
  if (has_min(fmt)) o[0] = (uint8_t)m, o[1] = (uint8_t)(m >> 8), o += 2;
  if (fmt == AC_QF_Q8_0) {
    memcpy(o, c, 32);
    return 0;
  }
  if (five_bits(fmt)) {
    uint32_t qh = 0;
    for (int j = 0; j < 32; j++) qh |= (uint32_t)((c[j] >> 4) & 1u) << j;
    for (int b = 0; b < 4; b++) o[b] = (uint8_t)(qh >> (8 * b));
    o += 4;
  }
  for (int j = 0; j < 16; j++) o[j] = (uint8_t)((c[j] & 15u) | (c[j + 16] & 15u) << 4);
  return 0;
}

int ac_qggml_unpack(int fmt, const uint8_t *in, uint8_t *c, uint16_t *d, uint16_t *m)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  if (!f || !f->ggml_bytes) return -1;
  const uint8_t *p = in;
  *m = 0;
  if (fmt == AC_QF_MXFP4) *d = *p++;
  else *d = (uint16_t)(p[0] | p[1] << 8), p += 2;
  if (has_min(fmt)) *m = (uint16_t)(p[0] | p[1] << 8), p += 2;
  if (fmt == AC_QF_Q8_0) {
    memcpy(c, p, 32);
    return 0;
  }
  uint32_t qh = 0;
  if (five_bits(fmt)) {
    qh = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    p += 4;
  }
  for (int j = 0; j < 16; j++) {
    c[j] = (uint8_t)((p[j] & 15u) | ((qh >> j) & 1u) << 4);
    c[j + 16] = (uint8_t)((p[j] >> 4) | ((qh >> (j + 16)) & 1u) << 4);
  }
  return 0;
}

uint8_t *ac_qggml_tensor(const ac_case *c, char x, size_t *n)
{
  int i = ac_qslot(x);
  if (i < 0 || !c->quant) return NULL;
  const ac_qspec *q = &c->p.quant[i];
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f || !f->ggml_bytes || q->gran != AC_QG_BLOCK || q->block != 32) return NULL;
  const ac_qdata *qd = &c->quant->t[i];
  int64_t dims[4];
  ac_qdims(&c->p, x, dims);
  int64_t rows = dims[0] * dims[1] * dims[2], nb = dims[3] / 32;
  *n = (size_t)(rows * nb * f->ggml_bytes);
  uint8_t *out = ac_xmalloc(*n ? *n : 1);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t b = 0; b < nb; b++) {
      int64_t s = r * nb + b;
      uint16_t d = f->sdtype == AC_QSD_F16 ? (uint16_t)ac_load_bits(AC_F16, qd->scales, (size_t)s)
                                           : ((const uint8_t *)qd->scales)[s];
      uint16_t m = has_min(q->fmt) ? (uint16_t)ac_load_bits(AC_F16, qd->aux, (size_t)s) : 0;
      ac_qggml_pack(q->fmt, qd->codes + (r * dims[3] + b * 32), d, m, out + (size_t)(s * f->ggml_bytes));
    }
  return out;
}
