/* explain_variants.c: attncheck explain for a case with attention variants (docs/variants.md):
 * every stage of one row per key (dot product, scaled, capped, +ALiBi, +bias, visibility), the
 * sink, the weights with the sink, the output and LSE, from the ABI's formula in MPFR, beside
 * the oracle's correctly rounded values. */
#include "config.h"
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "explain_variants.h"
#include "variants.h"

#define XPREC 256

/* The value the formula uses: the stored value in its tensor's dtype, times its descale. */
static double xval(const ac_case *c, char x, size_t idx, int64_t b, int64_t kvh)
{
  const ac_problem *p = &c->p;
  ac_dtype dt = ac_tensor_dtype(p, x);
  double d = ac_load(dt, x == 'q' ? c->q : x == 'k' ? c->k : c->v, idx);
  if ((p->f.used & AC_FEAT_DESCALE) && c->descale[0])
    d *= c->descale[x == 'q' ? 0 : x == 'k' ? 1 : 2][b * p->kv_heads + kvh];
  return d;
}

static void print_features(const ac_case *c, int64_t b, int64_t h)
{
  const ac_problem *p = &c->p;
  const ac_features *f = &p->f;
  char list[160];
  printf("variants: %s\n", ac_feat_list(f->used, list, sizeof list));
  if (f->used & AC_FEAT_WINDOW)
    printf("  window: left %lld, right %lld (-1 unbounded), %s aligned\n", (long long)f->win_left,
           (long long)f->win_right, f->win_top_left ? "top-left" : "bottom-right");
  if (f->used & AC_FEAT_SOFTCAP) printf("  softcap: %.17g (%a)\n", f->softcap, f->softcap);
  if (f->used & AC_FEAT_ALIBI)
    printf("  ALiBi slope of this head: %.9g (%a)\n", ac_features_slope(c, b, h), ac_features_slope(c, b, h));
  if (f->used & AC_FEAT_BIAS) printf("  bias: %s\n", ac_dtype_name(f->bias_dtype));
  if (f->used & AC_FEAT_MIXED_DTYPES)
    printf("  dtypes: q %s, k %s, v %s (decoded exactly), o %s (rounded into it); compute dtype %s\n", ac_dtype_name(f->qd),
           ac_dtype_name(f->kd), ac_dtype_name(f->vd), ac_dtype_name(f->od), ac_dtype_name(p->dtype));
  if (f->used & AC_FEAT_SINKS) printf("  sink of this head: sigma = %.9g (%a)\n", (double)c->sinks[h], (double)c->sinks[h]);
}

/* Row (b, h, i) of c: the stages of every key into s[j] (s[tk] the sink), visibility into vis;
 * returns the number of visible keys. */
static int64_t key_stages(const ac_case *c, int64_t b, int64_t h, int64_t i, mpfr_t *s, uint8_t *vis)
{
  const ac_problem *p = &c->p;
  const ac_features *f = &p->f;
  int64_t kvh = ac_kv_head(p, h), tk = p->tk, nvis = 0;
  mpfr_t sc, x, y;
  mpfr_inits2(XPREC, sc, x, y, (mpfr_ptr)0);
  if (p->scale_is_default) {
    mpfr_set_si(sc, (long)p->dk, MPFR_RNDN);
    mpfr_rec_sqrt(sc, sc, MPFR_RNDN);
  } else {
    mpfr_set_d(sc, p->scale, MPFR_RNDN);
  }
  printf("\n1. per key: dot d_j = q·k_j, scaled c·d_j, capped, + ALiBi, + bias = s_j, visible\n");
  printf("   %-5s %-16s %-16s %-16s %-16s %-16s %s\n", "j", "dot", "scaled", "capped", "+alibi", "+bias", "visible");
  for (int64_t j = 0; j < tk; j++) {
    mpfr_set_zero(x, 1);
    for (int64_t t = 0; t < p->dk; t++) {
      mpfr_set_d(y, xval(c, 'q', ac_qidx(p, b, h, i, t), b, kvh), MPFR_RNDN);
      mpfr_mul_d(y, y, xval(c, 'k', ac_kidx(p, b, kvh, j, t), b, kvh), MPFR_RNDN);
      mpfr_add(x, x, y, MPFR_RNDN);
    }
    mpfr_printf("   %-5lld %-16.9Rg", (long long)j, x);
    mpfr_mul(s[j], x, sc, MPFR_RNDN);
    mpfr_printf(" %-16.9Rg", s[j]);
    if (f->used & AC_FEAT_SOFTCAP) {
      mpfr_div_d(s[j], s[j], f->softcap, MPFR_RNDN);
      mpfr_tanh(s[j], s[j], MPFR_RNDN);
      mpfr_mul_d(s[j], s[j], f->softcap, MPFR_RNDN);
      mpfr_printf(" %-16.9Rg", s[j]);
    } else {
      printf(" %-16s", "-");
    }
    if (f->used & AC_FEAT_ALIBI) {
      mpfr_set_d(x, ac_features_slope(c, b, h), MPFR_RNDN);
      mpfr_mul_si(x, x, (long)ac_alibi_dist(p, i, j), MPFR_RNDN);
      mpfr_sub(s[j], s[j], x, MPFR_RNDN);
      mpfr_printf(" %-16.9Rg", s[j]);
    } else {
      printf(" %-16s", "-");
    }
    if ((f->used & AC_FEAT_BIAS) && c->bias) {
      mpfr_add_d(s[j], s[j], ac_load(f->bias_dtype, c->bias, ac_biasidx(p, b, h, i, j)), MPFR_RNDN);
      mpfr_printf(" %-16.9Rg", s[j]);
    } else {
      printf(" %-16s", "-");
    }
    vis[j] = (uint8_t)ac_features_visible(c, b, h, i, j);
    nvis += vis[j];
    const char *why = vis[j] ? "yes" : !ac_visible(p, i, j) ? "no (mask)" : !ac_in_window(p, i, j) ? "no (window)" : "no (bool mask)";
    printf(" %s\n", why);
  }
  mpfr_clears(sc, x, y, (mpfr_ptr)0);
  return nvis;
}

/* Weights (the sink's among them), outputs beside the oracle's rounding, LSE; s[j] becomes
 * the weight of key j. Returns 3 when the oracle left a value unresolved, else 0. */
static int weights_outputs(const ac_case *c, int64_t b, int64_t h, int64_t i, mpfr_t *s, const uint8_t *vis, int sink,
                           mpfr_srcptr m, const ac_oracle_result *r)
{
  const ac_problem *p = &c->p;
  int64_t kvh = ac_kv_head(p, h), tk = p->tk, grow = (int64_t)ac_rowidx(p, b, h, i);
  int rc = 0;
  mpfr_t x, y, L;
  mpfr_inits2(XPREC, x, y, L, (mpfr_ptr)0);
  mpfr_printf("\n2. row maximum m = %.20Rg\n3. weights w_j = exp(s_j - m)\n", m);
  mpfr_set_zero(L, 1);
  for (int64_t j = 0; j <= tk; j++) {
    if (j < tk ? !vis[j] : !sink) continue;
    mpfr_sub(s[j], s[j], m, MPFR_RNDN);
    mpfr_exp(s[j], s[j], MPFR_RNDN);
    mpfr_add(L, L, s[j], MPFR_RNDN);
    if (j < tk) mpfr_printf("   j=%-4lld %.20Rg\n", (long long)j, s[j]);
    else mpfr_printf("   sink   %.20Rg\n", s[j]);
  }
  mpfr_printf("   L = %.20Rg%s\n4. output o_t = Σ_j w_j V_jt / L\n", L, sink ? " (the sink included)" : "");
  ac_dtype od = ac_tensor_dtype(p, 'o');
  printf("   %-5s %-28s %-26s %s\n", "t", "exact (20 digits)", ac_dtype_name(od), "decided");
  for (int64_t t = 0; t < p->dv; t++) {
    mpfr_set_zero(x, 1);
    for (int64_t j = 0; j < tk; j++) {
      if (!vis[j]) continue;
      mpfr_mul_d(y, s[j], xval(c, 'v', ac_vidx(p, b, kvh, j, t), b, kvh), MPFR_RNDN);
      mpfr_add(x, x, y, MPFR_RNDN);
    }
    mpfr_div(x, x, L, MPFR_RNDN);
    const ac_oracle_elem *el = ac_oracle_elem_at(r, grow, t);
    uint64_t bd = r->o_round[od][ac_oracle_slot(r, grow) * p->dv + t];
    char hx[32], col[48];
    snprintf(col, sizeof col, "%.9g (%s)", ac_decode(od, bd), ac_bits_hex(od, bd, hx, sizeof hx));
    const char *how = !(el->accept & AC_ACCEPT_VALUE) ? "non-finite input"
                      : el->how == AC_HOW_EXACT ? "exact case" : el->how == AC_HOW_ROUNDED ? "Ziv" : "UNRESOLVED";
    if (el->how == AC_HOW_UNRESOLVED) rc = 3;
    mpfr_printf("   %-5lld %-28.20Rg %-26s %s\n", (long long)t, x, col, how);
  }
  mpfr_log(x, L, MPFR_RNDN);
  mpfr_add(x, x, m, MPFR_RNDN);
  mpfr_printf("\n5. LSE = m + ln L = %.20Rg; binary32 %a\n", x, (double)r->rows[grow].lse_f32);
  if (r->rows[grow].lse_how == AC_HOW_UNRESOLVED) rc = 3;
  if (r->rows[grow].alibi_shift != 0) {   /* docs/variants.md "ALiBi and the LSE" */
    printf("   FlashAttention-2's causal ALiBi (+m j): LSE + m (i + tk - tq) = LSE + %.17g; binary32 %a\n",
           r->rows[grow].alibi_shift, (double)r->rows[grow].lse_alt_f32);
    if (r->rows[grow].lse_alt_how == AC_HOW_UNRESOLVED) rc = 3;
  }
  mpfr_clears(x, y, L, (mpfr_ptr)0);
  return rc;
}

int ac_explain_variants(const ac_case *c, int64_t b, int64_t h, int64_t i, const ac_oracle_result *r)
{
  const ac_problem *p = &c->p;
  int64_t tk = p->tk, grow = (int64_t)ac_rowidx(p, b, h, i);
  int rc = 0, sink = (p->f.used & AC_FEAT_SINKS) && c->sinks;
  mpfr_printf("case: %s, mask %s, batch %lld, heads %lld (kv heads %lld), tq %lld, tk %lld, dk %lld, dv %lld; scale %s\n",
              ac_dtype_name(p->dtype), ac_mask_name(p->mask), (long long)p->batch, (long long)p->heads,
              (long long)p->kv_heads, (long long)p->tq, (long long)tk, (long long)p->dk, (long long)p->dv,
              p->scale_is_default ? "1/sqrt(dk) (default)" : "stored");
  printf("row: batch %lld, head %lld (kv head %lld), query i = %lld\n", (long long)b, (long long)h,
         (long long)ac_kv_head(p, h), (long long)i);
  print_features(c, b, h);
  mpfr_t m, *s = ac_xmalloc((size_t)(tk + 1) * sizeof *s);
  mpfr_init2(m, XPREC);
  for (int64_t j = 0; j <= tk; j++) mpfr_init2(s[j], XPREC);
  uint8_t *vis = ac_xcalloc((size_t)tk, 1);
  int64_t nvis = key_stages(c, b, h, i, s, vis);
  if (sink) mpfr_set_d(s[tk], (double)c->sinks[h], MPFR_RNDN);
  printf("   %lld of %lld keys visible%s\n", (long long)nvis, (long long)tk, sink ? ", and the sink (score sigma, value 0)" : "");
  int nan = 0, any = 0;
  for (int64_t j = 0; j <= tk; j++) {
    if (j < tk ? !vis[j] : !sink) continue;
    nan |= mpfr_nan_p(s[j]) != 0;
    if (mpfr_nan_p(s[j])) continue;
    if (!any || mpfr_greater_p(s[j], m)) mpfr_set(m, s[j], MPFR_RNDN);
    any = 1;
  }
  if (!nvis && !sink) {
    printf("\nno visible key and no sink: the output row is 0 and LSE = -inf (empty-row convention)\n");
  } else if (nan || !mpfr_number_p(m)) {
    printf("\nthe row's scores are not all finite (NaN or ±inf): the rule table decides (docs/numerics.md §5);"
           " accepted outcomes per element below\n");
    for (int64_t t = 0; t < p->dv; t++)
      printf("   t=%-4lld accept 0x%x\n", (long long)t, ac_oracle_elem_at(r, grow, t)->accept);
  } else {
    rc = weights_outputs(c, b, h, i, s, vis, sink, m, r);
  }
  for (int64_t j = 0; j <= tk; j++) mpfr_clear(s[j]);
  free(s);
  free(vis);
  mpfr_clear(m);
  return rc;
}
