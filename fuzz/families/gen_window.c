/* gen_window.c: family "window": sliding windows whose widths sit at the edges kernels cut:
 * 0, 1, a tile - 1, a tile, a tile + 1, wider than T, and unbounded on either side, in both
 * alignments (bottom-right as FlashAttention, top-left), over lengths of a few tiles and
 * tq != tk. */
#include "config.h"
#include "fuzz.h"
#include "vgen.h"

static int64_t width(ac_rng *r, int64_t tile, int64_t t)
{
  switch (ac_rng_below(r, 8)) {
  case 0: return 0;
  case 1: return 1;
  case 2: return tile - 1;
  case 3: return tile;
  case 4: return tile + 1;
  case 5: return t + ac_rng_range(r, 0, 3);   /* wider than the sequence: every key */
  case 6: return -1;                          /* unbounded */
  default: return ac_rng_range(r, 2, t > 2 ? t : 2);
  }
}

AC_FAMILY_DECL(window)
{
  static const int64_t tiles[] = {16, 32, 64, 128};
  ac_problem *p = &c->p;
  ac_draw_shape(r, l, p);
  int64_t tile = tiles[ac_rng_below(r, 4)];
  int64_t cap = l->max_t < 600 ? l->max_t : 600;
  if (ac_rng_below(r, 2)) {
    p->tk = tile * ac_rng_range(r, 1, 4) + ac_rng_range(r, -1, 1);
    p->tq = ac_rng_below(r, 3) ? p->tk : ac_draw_tile_len(r, cap);
  }
  if (p->tk > cap) p->tk = cap;
  if (p->tq > cap) p->tq = cap;
  ac_clamp_shape(p, l);
  ac_vspec v = {0};
  v.used = AC_FEAT_WINDOW;
  int64_t t = p->tk > p->tq ? p->tk : p->tq;
  v.win_left = width(r, tile, t);
  /* mostly a causal-like window (right 0), else any width on the right too */
  v.win_right = ac_rng_below(r, 2) ? 0 : width(r, tile, t);
  v.win_top_left = ac_rng_below(r, 3) == 0;
  ac_params_int(pb, "tile", tile);
  if (ac_vfam_values(c, r, pb, e)) return -1;
  return ac_vfam_apply(c, r, &v, pb, e);
}
