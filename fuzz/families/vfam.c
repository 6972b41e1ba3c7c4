/* vfam.c: what the variant families share: the plain case under the variant (shape, Q, K, V
 * from the value distributions and score patterns every family uses), the variant itself from
 * src/core/vgen.c, and its record in the case's params. */
#include "config.h"
#include "fuzz.h"
#include "variants.h"
#include "vgen.h"

void ac_vfam_clamp_pairs(ac_problem *p, const ac_gen_limits *l)
{
  int64_t cap = l->max_elems > 0 ? l->max_elems : ((int64_t)1 << 22);
  while ((double)p->batch * (double)p->heads * (double)p->tq * (double)p->tk > (double)cap) {
    if (p->tq > 1 && p->tq >= p->tk / 4) p->tq = (p->tq + 1) / 2;
    else if (p->tk > 1) p->tk = (p->tk + 1) / 2;
    else if (p->batch > 1) p->batch = 1;
    else { p->heads = 1; p->kv_heads = 1; }
  }
}

int ac_vfam_values(ac_case *c, ac_rng *r, ac_params *pb, ac_err *e)
{
  ac_problem *p = &c->p;
  if (ac_gen_alloc(c, e)) return -1;
  if (ac_rng_below(r, 3) == 0) {
    static const int pats[] = {AC_PAT_NORMAL, AC_PAT_TIES, AC_PAT_LARGE_V, AC_PAT_LATE, AC_PAT_CREEP, AC_PAT_DOMINANT,
                               AC_PAT_SENTINEL_BAND, AC_PAT_SENTINEL_MASKED};
    int pat = pats[ac_rng_below(r, sizeof pats / sizeof pats[0])];
    if (pat == AC_PAT_SENTINEL_MASKED && !ac_pat_has_masked(p)) pat = AC_PAT_SENTINEL_BAND;
    return ac_pat_apply(c, r, pat, ac_draw_block(r, 4, 7, p->tk), pb);
  }
  ac_valdist d;
  ac_draw_valdist(r, p->dtype, &d);
  ac_params_valdist(pb, "qkv", &d);
  ac_fill_qkv(c, r, &d, &d, &d);
  return 0;
}

ac_dtype ac_vfam_bias_dtype(ac_rng *r, const ac_gen_limits *l, ac_dtype case_dtype)
{
  uint32_t ok = (l->dtypes ? l->dtypes : 1u << AC_F32) &
                ((1u << AC_F64) | (1u << AC_F32) | (1u << AC_F16) | (1u << AC_BF16));
  if (!ok || ac_rng_below(r, 2)) return ok & (1u << case_dtype) || !ok ? case_dtype : (ac_dtype)__builtin_ctz(ok);
  ac_gen_limits only = *l;
  only.dtypes = ok;
  return ac_draw_dtype(r, &only);
}

static void params_vspec(ac_params *pb, const ac_vspec *v)
{
  char name[160], feats[160];
  ac_vspec_name(v, name, sizeof name);
  ac_params_str(pb, "variant", name);
  ac_params_str(pb, "features", ac_feat_list(v->used, feats, sizeof feats));
  if (v->used & AC_FEAT_WINDOW) {
    ac_params_int(pb, "win_left", v->win_left);
    ac_params_int(pb, "win_right", v->win_right);
    ac_params_str(pb, "win_align", v->win_top_left ? "top-left" : "bottom-right");
  }
  if (v->used & AC_FEAT_SOFTCAP) ac_params_dbl(pb, "softcap", v->softcap);
  if (v->used & AC_FEAT_ALIBI) {
    ac_params_dbl(pb, "alibi_max", v->alibi_max);
    ac_params_int(pb, "alibi_per_batch", v->alibi_per_batch);
  }
  if (v->used & AC_FEAT_BIAS) {
    ac_params_int(pb, "bias_pattern", v->bias);
    ac_params_dbl(pb, "bias_scale", v->bias_scale);
    ac_params_int(pb, "bias_bcast_b", v->bias_bcast_b);
    ac_params_int(pb, "bias_bcast_h", v->bias_bcast_h);
  }
  if (v->used & AC_FEAT_BOOL_MASK) {
    ac_params_int(pb, "bmask_pattern", v->bmask);
    ac_params_int(pb, "mask_bcast_b", v->mask_bcast_b);
    ac_params_int(pb, "mask_bcast_h", v->mask_bcast_h);
  }
  if (v->used & AC_FEAT_SINKS) ac_params_int(pb, "sinks_pattern", v->sinks);
  if (v->used & AC_FEAT_DESCALE) ac_params_int(pb, "descale_pattern", v->descale);
  if (v->used & AC_FEAT_DROPOUT) ac_params_dbl(pb, "dropout_p", v->dropout_p);
}

int ac_vfam_apply(ac_case *c, ac_rng *r, const ac_vspec *v, ac_params *pb, ac_err *e)
{
  if (ac_vspec_apply(c, v, ac_rng_next(r), e)) return -1;
  if ((v->used & AC_FEAT_BIAS) && v->bias_dtype > 0)
    ac_params_str(pb, "bias_dtype", ac_dtype_name((ac_dtype)(v->bias_dtype - 1)));
  params_vspec(pb, v);
  return ac_problem_validate(&c->p, ac_mem_cap(), e);
}
