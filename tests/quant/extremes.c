/* extremes.c: the helper of tests/tquant_extremes.sh and tests/tasan_extremes.sh. Writes into DIR one
 * case file per quantized format, granularity and kind of extreme scale, every value a format can
 * hold at the edges of its scales:
 *   sub    every scale the smallest subnormal of its type (f16 2^-24, f32 2^-149, e4m3 2^-9; e8m0
 *          its smallest exponent 0, 2^-127; nvfp4's tensor scale 2^-149 too): values far below
 *          binary32's range (fp8 2^-159, int 2^-149 .. 2^-142, nvfp4 2^-159);
 *   max    every scale the largest finite of its type (e8m0 254): scores far beyond any dtype;
 *   edge   each scale drawn from {0, smallest subnormal, largest finite, inf, NaN} (e8m0 255 is
 *          NaN), mins and zero points at their extremes, fp8 NaN codes;
 *   mixed  normal values quantized by the reference quantizer, then a quarter of the scales set
 *          to the smallest subnormal (tiny groups beside ordinary ones).
 * Codes are drawn over the format's whole range (mixed: the quantizer's). q is f32 (for the fp8
 * formats, which the reference kernel takes for Q, quantized in the same format and kind one case in
 * two); K and V are quantized. Shapes: batch 2, heads 2 on 1 kv head, tq 5, tk 7, dk = dv = 32,
 * causal. Names: FMT-GRAN-KIND.npz. Prints the count; exit 0, 2 on bad usage or a file it cannot
 * write. `extremes --ref NAME` prints the reference kernel of NAME's format (FMT-..., FMT:G). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "casefile.h"
#include "dtype.h"
#include "quant.h"
#include "rng.h"
#include "qspecial.h"

enum { K_SUB, K_MAX, K_EDGE, K_MIXED, K_N };
static const char *const kind_names[K_N] = {"sub", "max", "edge", "mixed"};

/* Codes over the whole range, the scales (mins, zero points, tensor scale) by kind; values decoded. */
static void set_extremes(ac_case *c, char x, int kind, ac_rng *r)
{
  const ac_qspec *q;
  const ac_qfmt_info *f;
  int64_t ns, n;
  ac_qdata *t = ac_test_qtensor(c, x, &q, &f, &ns, &n);
  if (kind != K_MIXED) ac_test_qcodes_random(c, x, r);
  for (int64_t s = 0; s < ns; s++) {
    int k = kind == K_SUB    ? (f->sdtype == AC_QSD_E8M0 ? 0 : 1)
            : kind == K_MAX  ? 2
            : kind == K_EDGE ? (int)ac_rng_below(r, 5)
            : ac_rng_below(r, 4) ? -1
                                 : 1;   /* mixed: a quarter of the groups tiny */
    if (k >= 0) ac_test_qset_scale(f, t, s, ac_test_qspecial_scale(f->sdtype, k));
    if (kind != K_EDGE) continue;
    if (f->aux == AC_QAUX_MIN)
      ac_store_bits(AC_F16, t->aux, (size_t)s, ac_test_qspecial_scale(AC_QSD_F16, (int)ac_rng_below(r, 5)));
    if (f->aux == AC_QAUX_ZERO) ((int8_t *)t->aux)[s] = ac_rng_below(r, 2) ? -128 : 127;
  }
  if (f->aux == AC_QAUX_TSCALE && kind != K_MIXED)
    ac_store_bits(AC_F32, t->aux, 0,
                  ac_test_qspecial_scale(AC_QSD_F32, kind == K_SUB ? 1 : kind == K_MAX ? 2 : (int)ac_rng_below(r, 5)));
  if (kind == K_EDGE) ac_test_qcodes_nan(c, x, r);
  ac_quant_decode(c, x);
}

static int write_one(const char *dir, int fmt, int gran, int kind, ac_rng *r)
{
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  ac_case c;
  ac_err e;
  ac_case_init(&c);
  c.p = (ac_problem){.dtype = AC_F32, .mask = AC_MASK_CAUSAL, .batch = 2, .heads = 2, .kv_heads = 1, .tq = 5, .tk = 7,
                     .dk = 32, .dv = 32, .scale_is_default = 1, .scale = 1 / sqrt(32.0)};
  if (ac_case_alloc(&c, &e)) return fprintf(stderr, "extremes: %s\n", e.msg), -1;
  ac_counts cn;
  ac_problem_counts(&c.p, &cn, &e);
  float *qkv[3] = {c.q, c.k, c.v};
  int64_t cnt[3] = {cn.q, cn.k, cn.v};
  for (int i = 0; i < 3; i++)
    for (int64_t x = 0; x < cnt[i]; x++) qkv[i][x] = (float)ac_rng_normal(r);
  ac_qspec q = {fmt, gran, gran == AC_QG_BLOCK ? f->block : 0};
  int with_q = !strcmp(f->kind, "fp8") && ac_rng_below(r, 2); /* the reference kernels take fp8 Q only */
  for (int i = 0; i < 3; i++) {
    if (i == 0 && !with_q) continue;
    if (ac_quant_apply(&c, "qkv"[i], &q, &e)) return fprintf(stderr, "extremes: %s\n", e.msg), -1;
    set_extremes(&c, "qkv"[i], kind, r);
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/%s-%s-%s.npz", dir, f->name, ac_qgran_name(gran), kind_names[kind]);
  snprintf(c.generator, sizeof c.generator, "extremes");
  int rc = ac_case_write(&c, path, &e);
  if (rc) fprintf(stderr, "extremes: %s\n", e.msg);
  ac_case_free(&c);
  return rc;
}

/* The built-in reference kernel of a format (docs/quantized.md "Reference kernels"). */
static const char *ref_kernel(const ac_qfmt_info *f)
{
  return !strcmp(f->kind, "ggml") ? "ggml-ref-f32" : !strcmp(f->kind, "fp8") ? "fp8kv-ref-f32"
         : !strcmp(f->kind, "int")                 ? "intkv-ref-f32"
                                                   : "fp4kv-ref-f32";
}

int main(int argc, char **argv)
{
  if (argc == 3 && !strcmp(argv[1], "--ref")) {   /* --ref NAME: the kernel of NAME's format (FMT-... or FMT:G) */
    char name[64];
    int fmt;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(argv[2], "-:"), argv[2]);
    if (ac_qfmt_parse(name, &fmt)) return fprintf(stderr, "extremes: no format in '%s'\n", argv[2]), 2;
    printf("%s\n", ref_kernel(ac_qfmt_get(fmt)));
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: extremes DIR | extremes --ref FMT[-...]\n");
    return 2;
  }
  ac_rng r;
  ac_rng_init(&r, 20260834, 0);
  int n = 0;
  for (int fmt = 1; fmt < AC_QF_N; fmt++)
    for (int gran = 0; gran < AC_QG_N; gran++) {
      if (!(ac_qfmt_get(fmt)->grans >> gran & 1u)) continue;
      for (int kind = 0; kind < K_N; kind++, n++)
        if (write_one(argv[1], fmt, gran, kind, &r)) return 2;
    }
  printf("%d cases in %s\n", n, argv[1]);
  return 0;
}
