/* gradint.h: internals of the backward oracle (grad.c, gradrow.c; never included outside oracle/).
 *
 * One row at a time on the forward's workspace (scores.c, exactcase.c, ziv.c's weights): the exact
 * dP_ij = dO_i·V_j, the exact-zero tests of dS_ij and dQ_i (docs/backward.md §3), and one interval
 * pass at a working precision that encloses dQ_i and adds the row's terms of dK_j and dV_j into
 * the column accumulators of its (batch, kv head). */
#ifndef AC_GRADINT_H
#define AC_GRADINT_H
#include "oracle_int.h"
#include "grad.h"

enum { AC_GR_ROW_OK = 0, AC_GR_ROW_PBAD = 1, AC_GR_ROW_DBAD = 2 };

typedef struct {
  ac_or_ws w;               /* the forward's row workspace: head, q, exact scores, groups, weights */
  const void *dout;
  int cls;                  /* AC_GR_ROW_... of the loaded row */
  int64_t cap;              /* keys */
  int64_t *kidx, cap_kidx;  /* the loaded row's visible keys (their indices j), n of them */
  int off, offbad, crat;    /* ALiBi, bias or sinks (gradoff.c); the row's offsets undefined; c rational */
  int64_t sink;             /* the loaded row's sink key (K = 0, V = 0, score σ_h, kidx -1), or -1 */
  const uint8_t *dmask;     /* dropout: the loaded row's keep-mask by key index (its dropped keys' V is 0
                               in the row head, and they add nothing to dV); NULL without dropout */
  int exp_fine;             /* the extended pass takes e^t from ac_dd_exp on t to 64 bits (2^-62 of it)
                               instead of ac_fx_exp on t rounded to binary64 (2^-50) */
  int capped;               /* softcap (gradcap.c): s_j = cap tanh(c z_j / cap) + a_j */
  int zfree;                /* capped with scale 0: s_j = a_j, groups by a alone, f_j = 1 */
  double capv;              /* the softcap */
  mpfr_t cz;                /* gradcap.c: z_j exactly */
  mpfr_t *A, *E;            /* per visible key: exact a_j; E_j = cn z_j + cd a_j (rational c) */
  long double *aL;          /* a_j to 64 bits */
  double *sapx;             /* s_j in binary64 (the order of the groups for an irrational c) */
  int64_t cap_off, cap_e;
  mpfr_t *X;                /* exact dP_ij, then a_j = n_0 X_j - SX_0 (gradrow.c) */
  mpfr_t *SX;               /* exact Σ_{j∈g} X_j per group, then c_g = n_0 SX_g - n_g SX_0 (g >= 1) */
  uint8_t *zs;              /* dS_ij is exactly 0 */
  mpfr_t *Plo, *Phi;        /* P per group at the pass precision */
  mpfr_t *Slo, *Shi;        /* dS per key */
  mpfr_t *prod; mpfr_ptr *pp; int64_t cap_prod;
  double *od;               /* dO_i (dv) */
  uint8_t *odbad;           /* dO_i[t] not finite */
  int64_t *om; int32_t *oe; /* dO_i[t] = om 2^oe (dv) */
  uint8_t *dqz;             /* dk: dQ_i[t] is exactly 0 */
  double *kbuf, *vbuf;
  mpfr_t Dlo, Dhi, clo, chi, t0, t1;
} ac_gr_ws;

/* gradexact.c: the exact-zero tests past one key, for what the first pass leaves undecided */
typedef struct ac_gr_classes ac_gr_classes;
/* The column accumulators of one (batch, kv head): local column k of key j is map[j] (-1 none). */
typedef struct {
  const int64_t *map;
  const uint8_t *pend;      /* per local column: some element still pending */
  mpfr_t *klo, *khi;        /* ncols * dk: Σ_i dS_ij q_i (the scale applied at the end) */
  mpfr_t *vlo, *vhi;        /* ncols * dv: Σ_i P_ij dO_i */
  ac_gr_classes *classes;   /* the class sums of the pending columns, or NULL */
  mpfr_t *sglo, *sghi;      /* dσ_h of the row's head: Σ_i dS_i,sink, or NULL when not pending */
} ac_gr_cols;
/* Local column of visible key j of the loaded row (-1: none, or the sink). */
#define AC_GR_COL(g, cols, j) ((g)->kidx[j] < 0 ? -1 : (cols)->map[(g)->kidx[j]])

void ac_gr_ws_init(ac_gr_ws *g, const ac_case *cs, const void *dout, const ac_oracle_opts *fo, const ac_or_scale *sc,
                   long cap);
void ac_gr_ws_free(ac_gr_ws *g);
/* Loads row (b, h, i): its visible keys (mask, window, boolean mask) into kidx and w->head, q, dO,
 * the row class, and for a row whose P is defined the exact scores and groups, and with exact the
 * exact dP and the zero tests. Returns the number of visible keys (0: nothing loaded). */
int64_t ac_gr_row_load(ac_gr_ws *g, int64_t b, int64_t h, int64_t i, int exact);
/* One pass at precision p over the loaded row (n >= 1, class not PBAD): dQ_i into dqlo/dqhi (dk;
 * NULL: not wanted), the row's dK and dV terms into the pending columns of cols. */
void ac_gr_row_pass(ac_gr_ws *g, mpfr_prec_t p, mpfr_t *dqlo, mpfr_t *dqhi, ac_gr_cols *cols);
/* g->prod holds at least n numbers. */
void ac_gr_ensure_prod(ac_gr_ws *g, int64_t n);
/* gradoff.c: ALiBi, bias and sinks. 1 when the case's scores have offsets. */
int ac_gr_has_off(const ac_problem *p);
/* Exact offsets of the n visible keys kidx of row (b, h, i) into A and aL, dropping the keys with a
 * -inf bias (kidx compacted): returns the keys kept, or -1 when a bias is NaN or +inf or the
 * slope is not finite (P undefined). */
int64_t ac_gr_off_keys(ac_gr_ws *g, int64_t b, int64_t h, int64_t i, int64_t n);
/* The sink of head h as key n (after the n visible keys, whose offsets are in A): 1, or 0 when the
 * case has none or σ_h = -inf (weight 0); a NaN or +inf σ_h sets offbad. */
int ac_gr_sink_key(ac_gr_ws *g, int64_t h, int64_t n);
/* Groups of equal exact score of the loaded row (ord, gst, gof, ng of w), after its scores. */
void ac_gr_off_groups(ac_gr_ws *g);
/* P per group at precision p into Plo, Phi (Slo, Shi used as scratch). */
void ac_gr_off_weights(ac_gr_ws *g, mpfr_prec_t p);
/* gradcap.c: the softcap. 1 when the case has one. */
int ac_gr_has_cap(const ac_problem *p);
/* cap tanh(c z_j / cap) + a_j in binary64 (the order of the groups). */
double ac_gr_cap_approx(ac_gr_ws *g, int64_t j);
/* [lo, hi] (their precision) containing s_j - s_j0 = cap (tanh x_j - tanh x_j0) + (a_j - a_j0), from
 * the scale's interval [clo, chi]. */
void ac_gr_cap_diff(ac_gr_ws *g, int64_t j, int64_t j0, mpfr_srcptr clo, mpfr_srcptr chi, mpfr_t lo, mpfr_t hi);
/* 1 when keys j and k of the loaded row have the same f (|z_j| = |z_k|: sech² is even). */
int ac_gr_cap_same_f(ac_gr_ws *g, int64_t j, int64_t k);
/* [flo, fhi] at precision p containing f_j = 1 - tanh²(c z_j / cap) of key j of the loaded row. */
void ac_gr_cap_factor(ac_gr_ws *g, int64_t j, mpfr_prec_t p, mpfr_t flo, mpfr_t fhi);
/* dS_j of every capped key of the loaded row (Slo, Shi) times f_j, outward: dS w.r.t. the raw score. */
void ac_gr_cap_deriv(ac_gr_ws *g, mpfr_prec_t p);
/* [lo, hi] times the scale's interval [clo, chi] of the last pass, outward. */
void ac_gr_mul_scale(ac_gr_ws *g, mpfr_t lo, mpfr_t hi);

/* dQ_i[t] of the loaded row (class OK) by the exact tests of gradexact.c: when it is 0, or rational
 * and c rational, its exact value enclosed at precision p (a point when dyadic): 1; else 0. */
int ac_gr_dq_exact(ac_gr_ws *g, int64_t t, mpfr_prec_t p, mpfr_t lo, mpfr_t hi);
ac_gr_classes *ac_gr_classes_new(int64_t ncols, int64_t dk, int64_t dv);
void ac_gr_classes_free(ac_gr_classes *C);
/* Adds the loaded row (class not PBAD) into the classes of the pending columns it sees. */
void ac_gr_classes_add(ac_gr_ws *g, ac_gr_classes *C, const ac_gr_cols *cols);
/* The loaded row (class OK, with a sink) into the classes of dσ_h: C has a column per head, dk 1. */
void ac_gr_classes_add_sink(ac_gr_ws *g, ac_gr_classes *C, int64_t h);
/* The same for element t of local column k of dK ('k', the scale included), dV ('v') or, with
 * the classes of dσ, dσ_k ('s', t = 0). */
int ac_gr_classes_exact(const ac_gr_classes *C, const ac_or_scale *sc, int64_t k, char which, int64_t t,
                        mpfr_prec_t p, mpfr_t lo, mpfr_t hi);
/* The sign test of docs/backward.md §3.4 for element t of local column k of dV, whose enclosure holds
 * the one rounding breakpoint bp: dV_j[t] - bp = (Σ_classes V_0 / n_0 - bp) + Σ_classes Σ_{g>=1}
 * (n_0 V_g - n_g V_0) e^{t_g} / (n_0 D), the first part an exact rational, the second with every
 * term's weight at relative accuracy (a key at e^{-65504} as well as one at e^{-1}). 1 above bp, -1
 * below, 0 when precisions from p doubling up to cap do not decide it (or under a softcap). */
int ac_gr_classes_sign(const ac_gr_ws *g, const ac_gr_classes *C, int64_t k, int64_t t, mpfr_srcptr bp, mpfr_prec_t p,
                       long cap);

/* gradfast.c: the extended-precision first pass with a running error bound. Column sums of one
 * (batch, kv head). */
typedef struct {
  long double *sk, *ak, *ek;   /* ncols*dk: Σ_i dS_ij q_it, Σ |dS_ij q_it|, Σ eS_ij |q_it| */
  long double *sv, *av, *ev;   /* ncols*dv: Σ_i P_ij dO_it, Σ |P_ij dO_it|, Σ eP_ij |dO_it| */
  int64_t *m;                  /* ncols: rows added */
  long double *sg;             /* dσ of the row's head: Σ dS_sink, Σ |dS_sink|, Σ eS_sink; NULL: not pending */
  int64_t *sm;                 /* rows added to it */
} ac_gr_fcols;
void ac_gr_fcols_init(ac_gr_fcols *f, int64_t nc, int64_t dk, int64_t dv);
void ac_gr_fcols_free(ac_gr_fcols *f);
/* The loaded row (class OK, loaded without exact): dQ values and bounds into dq, edq (dk; dq NULL:
 * not wanted), its terms into the pending columns of fc. Returns 0, or 1 when the pass cannot
 * bound the row (nothing added). */
int ac_gr_fast_row(ac_gr_ws *g, double *dq, double *edq, const ac_gr_cols *cols, ac_gr_fcols *fc);
/* Value and bound of element t of local column k of dK ('k', d = dk) or dV ('v', d = dv). */
void ac_gr_fast_col(const ac_gr_fcols *fc, const ac_or_scale *sc, int64_t k, char which, int64_t t, int64_t d,
                    double *val, double *err);

/* grad.c, for gradlayout.c: a dense result tensor over n rows or columns (sel: the selected
 * ones), and the row and column selection of o over problem p. */
void ac_gr_tensor_init(ac_grad_tensor *T, int64_t n, int64_t d, const uint8_t *sel, uint32_t formats);
int ac_gr_select(const ac_problem *p, const ac_grad_opts *o, uint8_t *rs, uint8_t *cs, ac_err *e);
/* gradlayout.c: ac_grad_run of a varlen case, sequence by sequence. */
int ac_grad_run_layout(const ac_case *c, const void *dout, const ac_grad_opts *o, ac_grad_result *r, ac_err *e);

#endif
