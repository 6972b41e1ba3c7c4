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

/* The group sizes along d, token groups and float dtypes a spec of the extended description draws. */
static const int64_t groups[] = {16, 32, 64, 128}, tgroups[] = {2, 4, 16, 32, 128};
static const ac_qsdtype floats[] = {AC_QSD_F16, AC_QSD_BF16, AC_QSD_F32};

/* With the kernel's AC_FEAT_QUANT_LAYOUT (layout 1): group and tile scales on int and fp8 formats, per
 * channel over token groups (dense cases: dense 1), scale and zero-point dtypes, packed codes; each
 * now and then. 0 when no group size divides dk and dv. */
static int extend(ac_rng *r, int64_t dk, int64_t dv, int dense, ac_qspec *q)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  int var = !strcmp(f->kind, "int") || !strcmp(f->kind, "fp8");
  if (var && q->gran == AC_QG_BLOCK) {
    int64_t cand[4];
    int nc = 0;
    for (int k = 0; k < 4; k++)
      if (dk % groups[k] == 0 && dv % groups[k] == 0) cand[nc++] = groups[k];
    if (!nc) return 0;
    q->block = cand[ac_rng_below(r, (uint64_t)nc)];
    if (dense && ac_rng_below(r, 2) == 0) q->tgroup = tgroups[ac_rng_below(r, 5)];   /* a 2-D tile */
  }
  if (var && q->gran == AC_QG_CHANNEL && dense && ac_rng_below(r, 2)) q->tgroup = tgroups[1 + ac_rng_below(r, 4)];
  if (var && ac_rng_below(r, 3) == 0) q->sdtype = (int32_t)floats[ac_rng_below(r, 3)] + 1;
  if (f->aux == AC_QAUX_ZERO && ac_rng_below(r, 3) == 0) q->zdtype = (int32_t)floats[ac_rng_below(r, 3)] + 1;
  if (f->bits && !f->ggml_bytes && ac_rng_below(r, 2)) q->pack = ac_rng_below(r, 2) ? AC_QPACK_LOW_FIRST : AC_QPACK_HIGH_FIRST;
  if (f->bits && f->ggml_bytes && ac_rng_below(r, 4) == 0) q->pack = AC_QPACK_LOW_FIRST + (int)ac_rng_below(r, 2);
  return 1;
}

/* A format of mask that takes head dims dk and dv (0: none) and a granularity it takes: the first ABI 5
 * description, or with the kernel's AC_FEAT_QUANT_LAYOUT the extended one (extend above); for a
 * kernel that stores (store 1) a quantizer it declares that the spec takes. */
static int pick_spec(ac_rng *r, const ac_gen_limits *l, uint32_t mask, int64_t dk, int64_t dv, int dense, int store,
                     ac_qspec *q)
{
  const int ext = (l->features & AC_FEAT_QUANT_LAYOUT) != 0;
  int cand[AC_QF_N], n = 0;
  for (int f = 1; f < AC_QF_N; f++) {
    const ac_qfmt_info *fi = ac_qfmt_get(f);
    if ((mask >> f & 1u) && (!fi->block || (dk % fi->block == 0 && dv % fi->block == 0)) &&
        (ext || (f != AC_QF_INT2 && f != AC_QF_UINT8)))
      cand[n++] = f;
  }
  for (int tries = 0; n && tries < 8; tries++) {
    int f = cand[ac_rng_below(r, (uint64_t)n)], grans[AC_QG_N], ng = 0;
    const ac_qfmt_info *fi = ac_qfmt_get(f);
    for (int g = 0; g < AC_QG_N; g++)
      if ((fi->grans >> g & 1u) && (ext || g != AC_QG_BLOCK || fi->block)) grans[ng++] = g;
    memset(q, 0, sizeof *q);
    q->fmt = f;
    q->gran = grans[ac_rng_below(r, (uint64_t)ng)];
    if (ext && !fi->block && (fi->grans >> AC_QG_BLOCK & 1u) && ac_rng_below(r, 3) == 0) q->gran = AC_QG_BLOCK;   /* groups */
    q->block = q->gran == AC_QG_BLOCK ? fi->block : 0;
    if (ext && !extend(r, dk, dv, dense, q)) continue;
    ac_err e;
    if (store) {   /* a quantizer of the kernel's that this spec takes */
      int start = (int)ac_rng_below(r, (uint64_t)l->nstore), ok = 0;
      for (int j = 0; j < l->nstore && !ok; j++)
        ok = (q->store = l->store_q[(start + j) % l->nstore], ac_qspec_check(q, 'k', dk, &e) == 0);
      if (!ok) continue;
    }
    if (ac_qspec_check(q, 'k', dk, &e) == 0 && ac_qspec_check(q, 'v', dv, &e) == 0) return f;
  }
  return 0;
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
  if (l->q_formats && !q->store && ac_rng_below(r, 3) == 0 &&
      pick_spec(r, l, l->q_formats, c->p.dk, c->p.dk, !(c->p.f.used & AC_FEAT_LAYOUTS), 0, &qq) &&
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
  /* a kernel that quantizes its own cache: a store case (always for one that only stores) */
  const int store = (l->features & AC_FEAT_QUANT_STORE) && l->nstore && (l->store_only || ac_rng_below(&r, 2));
  if (!pick_spec(&r, l, l->kv_formats, c->p.dk, c->p.dv, !(c->p.f.used & AC_FEAT_LAYOUTS), store, &q)) return;
  static const int finite[] = {AC_QADV_OUTLIER, AC_QADV_ZERO_BLOCKS, AC_QADV_SCALE_SUBNORMAL, AC_QADV_TIES,
                               AC_QADV_ASYM,    AC_QADV_FAR_OUTLIER, AC_QADV_OFFSET},
                   nonfin[] = {AC_QADV_SCALE_OVERFLOW, AC_QADV_NAN};
  int pat = AC_QADV_NONE;
  if (ac_rng_below(&r, 4) == 0)
    pat = !l->no_nonfinite && !store && ac_rng_below(&r, 6) == 0 ? nonfin[ac_rng_below(&r, 2)] : finite[ac_rng_below(&r, 7)];
  if (ac_qstore_rule(q.store) == AC_QSR_GIVEN && ac_rng_below(&r, 3) == 0) pat = AC_QADV_GIVEN_SMALL;
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
  const int store = (l->features & AC_FEAT_QUANT_STORE) && l->nstore && (l->store_only || ac_rng_below(r, 2));
  if (!pick_spec(r, l, fm, 32, 32, 1, store, &q) && !pick_spec(r, l, fm, 16, 16, 1, store, &q))
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
  static const int pats[] = {AC_QADV_OUTLIER, AC_QADV_ZERO_BLOCKS, AC_QADV_SCALE_SUBNORMAL, AC_QADV_TIES,
                             AC_QADV_ASYM,    AC_QADV_FAR_OUTLIER, AC_QADV_OFFSET,          AC_QADV_GIVEN_SMALL};
  return quant_case(c, r, l, pb, pats, 8, e);
}

AC_FAMILY_DECL(quant_nonfinite)
{
  static const int pats[] = {AC_QADV_SCALE_OVERFLOW, AC_QADV_NAN}, fin[] = {AC_QADV_SCALE_SUBNORMAL};
  /* a campaign without non-finite values: subnormal scales, the edge below the overflow */
  return l->no_nonfinite ? quant_case(c, r, l, pb, fin, 1, e) : quant_case(c, r, l, pb, pats, 2, e);
}
