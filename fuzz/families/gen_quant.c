/* gen_quant.c: quantized K and V (docs/quantized.md) for kernels that declare formats: the step every
 * family's case goes through (ac_fuzz_quantize), and the families of block-level adversaries,
 * "quant_blocks" (finite) and "quant_nonfinite" (inf and NaN scales, fp8 NaN codes). The formats,
 * granularities and adversaries come from src/core/quant*.c. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "fuzz.h"
#include "quant.h"

#define QUANT_STREAM 0x7175616e74ull

int ac_gen_quant_usable(const ac_gen_limits *l) { return l->kv_formats != 0; }

/* A format of mask that takes head dims dk and dv (0: none), and a granularity it takes. */
static int pick_spec(ac_rng *r, uint32_t mask, int64_t dk, int64_t dv, ac_qspec *q)
{
  int cand[AC_QF_N], n = 0;
  for (int f = 1; f < AC_QF_N; f++) {
    const ac_qfmt_info *fi = ac_qfmt_get(f);
    if ((mask >> f & 1u) && (!fi->block || (dk % fi->block == 0 && dv % fi->block == 0))) cand[n++] = f;
  }
  if (!n) return 0;
  int f = cand[ac_rng_below(r, (uint64_t)n)], grans[AC_QG_N], ng = 0;
  const ac_qfmt_info *fi = ac_qfmt_get(f);
  for (int g = 0; g < AC_QG_N; g++)
    if (fi->grans >> g & 1u) grans[ng++] = g;
  q->fmt = f;
  q->gran = grans[ac_rng_below(r, (uint64_t)ng)];
  q->block = q->gran == AC_QG_BLOCK ? fi->block : 0;
  return f;
}

static int takes_quant(const ac_problem *p)
{
  for (int i = 0; i < 4; i++)
    if (p->q_stride[i] || p->k_stride[i] || p->v_stride[i]) return 0;
  return !(p->f.used & (AC_FEAT_MIXED_DTYPES | AC_FEAT_DESCALE)) && !ac_problem_quantized(p);
}

/* K and V by q with adversary pat on K (on V too, half the time); Q by a q format now and then. */
static int quantize(ac_case *c, ac_rng *r, const ac_gen_limits *l, const ac_qspec *q, int pat, ac_params *pb, ac_err *e)
{
  int vpat = ac_rng_below(r, 2) ? pat : AC_QADV_NONE;
  if (ac_quant_adversary(c, 'k', q, pat, r, e) || ac_quant_adversary(c, 'v', q, vpat, r, e)) return -1;
  char buf[64];
  ac_params_str(pb, "quant_kv", ac_qspec_str(q, buf, sizeof buf));
  if (pat) ac_params_str(pb, "quant_adv_k", ac_qadv_name(pat));
  if (vpat) ac_params_str(pb, "quant_adv_v", ac_qadv_name(vpat));
  ac_qspec qq;
  if (l->q_formats && ac_rng_below(r, 3) == 0 && pick_spec(r, l->q_formats, c->p.dk, c->p.dk, &qq) &&
      ac_quant_apply(c, 'q', &qq, e) == 0)
    ac_params_str(pb, "quant_q", ac_qspec_str(&qq, buf, sizeof buf));
  return 0;
}

void ac_fuzz_quantize(ac_case *c, uint64_t seed, int64_t index, const ac_gen_limits *l, ac_params *pb)
{
  if (!l->kv_formats || !takes_quant(&c->p)) return;
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, QUANT_STREAM), (uint64_t)index);
  if (!l->quant_only && ac_rng_below(&r, 2)) return;   /* half the cases stay plain */
  ac_qspec q;
  if (!pick_spec(&r, l->kv_formats, c->p.dk, c->p.dv, &q)) return;
  static const int finite[] = {AC_QADV_OUTLIER, AC_QADV_ZERO_BLOCKS, AC_QADV_SCALE_SUBNORMAL, AC_QADV_TIES, AC_QADV_ASYM},
                   nonfin[] = {AC_QADV_SCALE_OVERFLOW, AC_QADV_NAN};
  int pat = AC_QADV_NONE;
  if (ac_rng_below(&r, 4) == 0)
    pat = !l->no_nonfinite && ac_rng_below(&r, 6) == 0 ? nonfin[ac_rng_below(&r, 2)] : finite[ac_rng_below(&r, 5)];
  ac_err e;
  quantize(c, &r, l, &q, pat, pb, &e);   /* a case it cannot quantize stays as it is */
}

/* A shape whose head dims take a format of the kernel's (multiples of the block), values N(0, s). */
static int quant_case(ac_case *c, ac_rng *r, const ac_gen_limits *l, ac_params *pb, const int *pats, int npat, ac_err *e)
{
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  ac_qspec q;
  int64_t dmax = l->max_d > 0 ? l->max_d : 512;
  /* the kernel's formats; every format for limits that name none (a test, gen) */
  uint32_t fm = l->kv_formats ? l->kv_formats : ((1u << AC_QF_N) - 2);
  if (!pick_spec(r, fm, 32, 32, &q) && !pick_spec(r, fm, 16, 16, &q))
    return ac_err_set(e, "quant: no format of the kernel's takes a head dim of 16 or 32");
  int64_t blk = q.block ? q.block : 8, m = dmax / blk > 1 ? dmax / blk : 1;
  p->dk = blk * (1 + (int64_t)ac_rng_below(r, (uint64_t)(m < 4 ? m : 4)));
  p->dv = ac_rng_below(r, 4) ? p->dk : blk * (1 + (int64_t)ac_rng_below(r, (uint64_t)(m < 4 ? m : 4)));
  if (!p->scale_is_default) p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  ac_clamp_shape(p, l);
  if (ac_gen_alloc(c, e)) return -1;
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  ac_params_valdist(pb, "qkv", &d);
  return quantize(c, r, l, &q, pats[ac_rng_below(r, (uint64_t)npat)], pb, e);
}

AC_FAMILY_DECL(quant_blocks)
{
  static const int pats[] = {AC_QADV_OUTLIER, AC_QADV_ZERO_BLOCKS, AC_QADV_SCALE_SUBNORMAL, AC_QADV_TIES, AC_QADV_ASYM};
  return quant_case(c, r, l, pb, pats, 5, e);
}

AC_FAMILY_DECL(quant_nonfinite)
{
  static const int pats[] = {AC_QADV_SCALE_OVERFLOW, AC_QADV_NAN}, fin[] = {AC_QADV_SCALE_SUBNORMAL};
  /* a campaign without non-finite values: subnormal scales, the edge below the overflow */
  return l->no_nonfinite ? quant_case(c, r, l, pb, fin, 1, e) : quant_case(c, r, l, pb, pats, 2, e);
}
