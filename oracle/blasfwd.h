/* blasfwd.h: the forward's certified BLAS level 0 (blasfwd.c, blasrow.c, blasterms.c;
 * docs/numerics.md §12.3-§12.6). Internal to oracle/.
 *
 * oracle.c hands it row tiles (ac_bt_rows_per_tile consecutive selected rows of one batch and
 * head); it computes every element, the LSE and the budget terms of their rows from binary64
 * products over key tiles, decides each element where both ends of its proven enclosure round
 * alike in a format, and sends the rest of a row (elements, LSE) to the per-row levels (exact-case
 * test, double-double pass, MPFR) on exact scores; rows it cannot take at all (a non-finite q, no
 * visible key, a bound too large) it hands back whole. */
#ifndef AC_ORACLE_BLASFWD_H
#define AC_ORACLE_BLASFWD_H
#include "blastile.h"

/* The smallest problem the BLAS level takes by default (ac_bt_fwd_case_applies): keys and selected
 * rows per (batch, head), below which the per-row pass is as fast. */
#define AC_BT_MIN_KEYS 256
#define AC_BT_MIN_ROWS 32

/* 1 when the case takes the BLAS level (docs/numerics.md §12.6): o->blas >= 0, no variant feature
 * but windows, narrow dtypes without quantized tensors, what the binary64 pass of fast.c takes
 * (formats, scale) without binary64 among the formats, and, unless o->blas > 0, at least AC_BT_MIN_KEYS keys and AC_BT_MIN_ROWS
 * selected rows per (batch, head) on average (nsel selected rows). */
int ac_bt_fwd_case_applies(const ac_case *c, const ac_oracle_opts *o, uint32_t formats, int64_t nsel);

/* The row tiles of the nl selected rows list[] (ascending): up to ac_bt_rows_per_tile consecutive
 * entries of one batch and head each; tile k is list[t[2k] ..][0 .. t[2k + 1]); *n tiles. */
int64_t *ac_bt_fwd_tiles(const ac_problem *p, const int64_t *list, int64_t nl, int64_t *n);

/* A thread's buffers. */
typedef struct ac_bt_fwd ac_bt_fwd;
ac_bt_fwd *ac_bt_fwd_new(void);
void ac_bt_fwd_free(ac_bt_fwd *f);

/* Rows rows[0..nr) (global row numbers of one batch and head, ascending) of r through the BLAS
 * level, with w (its head set to the decoded head hd of their kv head, bh built from it); the rows
 * it leaves whole are written to left[] (nr entries at most) and counted in the return value;
 * the caller takes them through the per-row path. */
int64_t ac_bt_fwd_tile(ac_or_ws *w, ac_bt_fwd *f, const ac_bt_head *bh, const int64_t *rows, int64_t nr,
                       ac_oracle_result *r, ac_or_stats *st, int64_t *left);

/* blasterms.c: the budget sums of one row over kn keys of a tile (see there): w holds the weight rows
 * of ldw (w0 = A, A|t|, A|s|, A|c|Z, A|c|Zb, and with nf the F weights w5), V kn rows of dvp binary32
 * values, o the row's output in binary32 (dvp); acc[q * dvp + t] += R, D, S, S', G, Gb (q = 0..5)
 * and F (q = 6, with nf); init: acc = the sums (not +=). */
void ac_bt_terms_tile(const float *w, int64_t ldw, int64_t kn, const float *V, int64_t dvp, const float *o,
                      double *acc, int nf, int init);

#endif
