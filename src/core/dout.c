/* dout.c: the upstream gradient dO of a case, drawn from a named pattern (dout.h). */
#include "config.h"
#include "dout.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"
#include "rng.h"

static const char *const patterns[] = {"normal", "zero-rows", "huge", "tiny", "zeros", "cancel", NULL};

const char *const *ac_dout_patterns(void) { return patterns; }

/* The pattern's index and, for normal:SIGMA, its sigma; -1 when unknown. */
static int parse_pattern(const char *s, double *sigma)
{
  *sigma = 1.0;
  if (!strncmp(s, "normal:", 7)) {
    char *end;
    double v = strtod(s + 7, &end);
    if (!s[7] || *end || !isfinite(v) || v < 0) return -1;
    *sigma = v;
    return 0;
  }
  for (int i = 0; patterns[i]; i++)
    if (!strcmp(s, patterns[i])) return i;
  return -1;
}

/* x minus its components along the nk orthonormal rows of basis. */
static void project_out(double *x, const double *basis, int64_t nk, int64_t dv)
{
  for (int64_t k = 0; k < nk; k++) {
    double dot = 0;
    for (int64_t t = 0; t < dv; t++) dot += x[t] * basis[k * dv + t];
    for (int64_t t = 0; t < dv; t++) x[t] -= dot * basis[k * dv + t];
  }
}

/* cancel for head h of batch b, keys [j0, j0 + nkeys) and queries [i0, i0 + nq): a normal vector
 * with its components along V_j - V_j0 (the first min(nkeys, dv) keys, Gram-Schmidt in
 * binary64) removed, plus 4 w/|w|, w = V_j0 without those components (so that dO_i·V_j0 is not
 * small): dO_i·V_j is then (nearly) the same for those keys, so dP_j - D cancels (exactly in
 * real arithmetic when nkeys <= dv, up to the rounding of dO to its dtype). basis, g and w are
 * scratch of dv * dv, dv and dv. */
static void cancel_head(ac_case *c, ac_rng *r, int64_t b, int64_t h, int64_t j0, int64_t nkeys, int64_t i0, int64_t nq,
                        double *basis, double *g, double *w)
{
  const ac_problem *p = &c->p;
  const ac_dtype od = ac_tensor_dtype(p, 'o'), vd = ac_tensor_dtype(p, 'v');
  const int64_t nb = nkeys < p->dv ? nkeys : p->dv, dv = p->dv, kvh = h / (p->heads / p->kv_heads);
  int64_t nk = 0;
  for (int64_t j = 1; j < nb; j++) {   /* an orthonormal basis of the span of V_j - V_j0 */
    double *u = basis + nk * dv, len = 0;
    for (int64_t t = 0; t < dv; t++)
      u[t] = ac_load(vd, c->v, ac_vidx(p, b, kvh, j0 + j, t)) - ac_load(vd, c->v, ac_vidx(p, b, kvh, j0, t));
    project_out(u, basis, nk, dv);
    for (int64_t t = 0; t < dv; t++) len += u[t] * u[t];
    if (len > 1e-20) {
      for (int64_t t = 0; t < dv; t++) u[t] /= sqrt(len);
      nk++;
    }
  }
  /* w: V_j0 without its components along the basis (w·(V_j - V_j0) = 0, w·V_j0 = |w|^2) */
  for (int64_t t = 0; t < dv; t++) w[t] = nkeys > 0 ? ac_load(vd, c->v, ac_vidx(p, b, kvh, j0, t)) : 0.0;
  project_out(w, basis, nk, dv);
  double wl = 0;
  for (int64_t t = 0; t < dv; t++) wl += w[t] * w[t];
  wl = wl > 0 ? 4 / sqrt(wl) : 0;
  for (int64_t i = i0; i < i0 + nq; i++) {
    for (int64_t t = 0; t < dv; t++) g[t] = ac_rng_normal(r);
    project_out(g, basis, nk, dv);
    for (int64_t t = 0; t < dv; t++) ac_store_bits(od, c->dout, ac_oidx(p, b, h, i, t), ac_encode_f64(od, g[t] + wl * w[t]));
  }
}

/* cancel: per (batch, head), or per (sequence, head) of a varlen case, over its keys. */
static void cancel_fill(ac_case *c, ac_rng *r)
{
  const ac_problem *p = &c->p;
  const int64_t dv = p->dv;
  double *basis = ac_xcalloc((size_t)(dv * dv) + 1, sizeof *basis), *g = ac_xcalloc((size_t)dv + 1, sizeof *g);
  double *w = ac_xcalloc((size_t)dv + 1, sizeof *w);
  const int64_t nseq = c->lay ? p->l.nseq : p->batch;
  for (int64_t s = 0; s < nseq; s++)
    for (int64_t h = 0; h < p->heads; h++) {
      if (c->lay)
        cancel_head(c, r, 0, h, c->lay->cu_k[s], c->lay->cu_k[s + 1] - c->lay->cu_k[s], c->lay->cu_q[s],
                    c->lay->cu_q[s + 1] - c->lay->cu_q[s], basis, g, w);
      else
        cancel_head(c, r, s, h, 0, p->tk, 0, p->tq, basis, g, w);
    }
  free(w);
  free(basis);
  free(g);
}

int ac_dout_generate(ac_case *c, const char *pattern, uint64_t seed, ac_err *e)
{
  double sigma;
  int kind = parse_pattern(pattern, &sigma);
  if (kind < 0)
    return ac_err_set(e, "unknown dO pattern '%s' (normal[:SIGMA], zero-rows, huge, tiny, zeros, cancel)", pattern);
  if (c->p.f.used & AC_FEAT_PAGED)   /* a paged KV cache is an inference layout: no backward */
    return ac_err_set(e, "a dO for a paged case is not supported (the backward takes varlen batches; a paged KV "
                         "cache is an inference layout)");
  const ac_problem *p = &c->p;
  ac_dtype t = ac_tensor_dtype(p, 'o');
  const ac_dtype_info *di = ac_dtype_get(t);
  if (kind == 2) sigma = ldexp(1.0, ilogb(di->max_finite) / 2);
  if (kind == 3) sigma = ldexp(1.0, di->ieee_emin / 2);
  size_t n = ac_case_bytes(c, 'o') / ac_dtype_size(t);
  free(c->dout);
  c->dout = ac_xmalloc(n ? n * ac_dtype_size(t) : 1);
  ac_rng r;
  ac_rng_init(&r, seed, 13);
  if (kind == 5) {
    cancel_fill(c, &r);
    return 0;
  }
  for (size_t x = 0; x < n; x++) {
    double g = kind == 4 ? 0.0 : sigma * ac_rng_normal(&r);
    if (kind == 1 && (x / (size_t)p->dv) % 2 == 1) g = 0.0;
    ac_store_bits(t, c->dout, x, ac_encode_f64(t, g));
  }
  return 0;
}
