/* ggml_tool.c: the helper of tests/tquant_gguf.sh. Reads IN.npz written by tests/quant/gguf_ref.py
 * (member x, float32 [n, 32]; for each format gguf quantizes, FMT_bytes, ggml's blocks of x, and
 * FMT_deq, gguf's float32 dequantization of them), and checks for every such format that this
 * tree's reference quantizer gives the same bytes and that its reading of gguf's bytes (codes,
 * scale, min) is gguf's: exact formats equal gguf's values, q4_1 and q5_1 equal them once d q + m
 * is evaluated in binary32 as gguf does. Then writes OUT.npz: our_FMT_bytes and our_FMT_values
 * (binary64, exact) of x for every ggml format, which gguf_ref.py dequantizes in turn. Prints one
 * line per format; exit 0 when everything agreed, 1 otherwise, 2 on bad input. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npz.h"
#include "quant.h"

static const int fmts[] = {AC_QF_Q8_0, AC_QF_Q4_0, AC_QF_Q4_1, AC_QF_Q5_0, AC_QF_Q5_1, AC_QF_IQ4_NL, AC_QF_MXFP4};
#define NF (int)(sizeof fmts / sizeof fmts[0])

static double scale_of(int fmt, uint16_t d) { return fmt == AC_QF_MXFP4 ? ac_qscale_value(AC_QSD_E8M0, d) : ac_qscale_value(AC_QSD_F16, d); }

/* Our blocks of n rows of 32 values x into out (n * bytes), and their exact values. */
static void ours(int fmt, const float *x, int64_t n, uint8_t *out, double *val)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  for (int64_t r = 0; r < n; r++) {
    uint8_t c[32];
    uint64_t s, a;
    ac_qref_group(fmt, x + 32 * r, 32, c, &s, &a, 0);
    ac_qggml_pack(fmt, c, (uint16_t)s, (uint16_t)a, out + r * f->ggml_bytes);
    double sv = scale_of(fmt, (uint16_t)s), av = f->aux == AC_QAUX_MIN ? ac_qscale_value(AC_QSD_F16, a) : 0;
    for (int j = 0; j < 32; j++) val[32 * r + j] = ac_qvalue(fmt, c[j], sv, av);
  }
}

/* gguf's bytes read by us against gguf's own dequantization. */
static int64_t reading_mismatches(int fmt, const uint8_t *bytes, const float *deq, int64_t n)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  int64_t bad = 0;
  for (int64_t r = 0; r < n; r++) {
    uint8_t c[32];
    uint16_t d, m;
    ac_qggml_unpack(fmt, bytes + r * f->ggml_bytes, c, &d, &m);
    double sv = scale_of(fmt, d), mv = ac_qscale_value(AC_QSD_F16, m);
    for (int j = 0; j < 32; j++) {
      float want = deq[32 * r + j], got;
      if (f->aux == AC_QAUX_MIN) got = (float)((float)sv * (float)ac_qcode_value(fmt, c[j])) + (float)mv;
      else got = (float)ac_qvalue(fmt, c[j], sv, 0);
      bad += memcmp(&got, &want, 4) != 0 && !(isnan(got) && isnan(want));
    }
  }
  return bad;
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: ggml_tool IN.npz OUT.npz\n");
    return 2;
  }
  ac_err e;
  ac_npz *z = ac_npz_open(argv[1], 1ull << 30, &e);
  ac_npz_member mx;
  if (!z || ac_npz_read(z, "x", &mx, &e) || strcmp(mx.descr, "<f4") || mx.ndim != 2 || mx.shape[1] != 32) {
    fprintf(stderr, "ggml_tool: %s: no member x float32 [n, 32]\n", argv[1]);
    return 2;
  }
  int64_t n = mx.shape[0];
  const float *x = mx.data;
  ac_npz_writer *w = ac_npz_create(argv[2], &e);
  if (!w) return 2;
  int fail = 0;
  for (int k = 0; k < NF; k++) {
    const ac_qfmt_info *f = ac_qfmt_get(fmts[k]);
    uint8_t *mine = malloc((size_t)(n * f->ggml_bytes));
    double *val = malloc((size_t)n * 32 * sizeof *val);
    ours(fmts[k], x, n, mine, val);
    char name[64], dname[64];
    snprintf(name, sizeof name, "%s_bytes", f->name);
    snprintf(dname, sizeof dname, "%s_deq", f->name);
    if (ac_npz_has(z, name)) {
      ac_npz_member mb, md;
      if (ac_npz_read(z, name, &mb, &e) || mb.nbytes != (size_t)(n * f->ggml_bytes) || ac_npz_read(z, dname, &md, &e) ||
          md.nbytes != (size_t)n * 32 * 4) {
        fprintf(stderr, "ggml_tool: %s: bad %s or %s\n", argv[1], name, dname);
        return 2;
      }
      int64_t diff = 0;
      for (int64_t i = 0; i < n * f->ggml_bytes; i++) diff += mine[i] != ((const uint8_t *)mb.data)[i];
      int64_t rd = reading_mismatches(fmts[k], mb.data, md.data, n);
      printf("%s: %lld blocks, quantizer bytes differing %lld, values read from gguf's bytes differing %lld\n", f->name,
             (long long)n, (long long)diff, (long long)rd);
      fail |= diff != 0 || rd != 0;
    } else {
      printf("%s: %lld blocks, no gguf quantizer: our blocks go back for gguf to read\n", f->name, (long long)n);
    }
    const int64_t bs[2] = {n, f->ggml_bytes}, vs[2] = {n, 32};
    snprintf(name, sizeof name, "our_%s_bytes", f->name);
    snprintf(dname, sizeof dname, "our_%s_values", f->name);
    if (ac_npz_add_array(w, name, "|u1", 2, bs, mine, (size_t)(n * f->ggml_bytes), &e) ||
        ac_npz_add_array(w, dname, "<f8", 2, vs, val, (size_t)n * 32 * 8, &e))
      return 2;
    free(mine);
    free(val);
  }
  if (ac_npz_close(w, &e)) return 2;
  ac_npz_close_reader(z);
  return fail;
}
