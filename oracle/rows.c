/* rows.c: row selection for the oracle: all rows, an explicit list ("3,7,10-20" of global
 * row numbers r = (b*heads + h)*tq + i), or "edges+K": the first and last row of each
 * (batch, head), every row with i mod 16 in {0, 15} (tile edges), and K rows drawn from
 * the seeded stream (distinct when K < rows); and the memory the selection needs. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle_int.h"
#include "blasfwd.h"
#include "rng.h"

static int parse_list(const char *spec, int64_t nrows, uint8_t *sel, ac_err *e)
{
  const char *s = spec;
  while (*s) {
    char *end;
    long long a = strtoll(s, &end, 10), b;
    if (end == s || a < 0) return ac_err_set(e, "bad row list '%s'", spec);
    b = a;
    if (*end == '-') {
      s = end + 1;
      b = strtoll(s, &end, 10);
      if (end == s || b < a) return ac_err_set(e, "bad row range in '%s'", spec);
    }
    if (b >= nrows) return ac_err_set(e, "row %lld out of range (the case has %lld rows)", b, (long long)nrows);
    for (long long r = a; r <= b; r++) sel[r] = 1;
    s = end;
    if (*s == ',') s++;
    else if (*s) return ac_err_set(e, "bad row list '%s'", spec);
  }
  return 0;
}

int ac_oracle_select_rows(const ac_problem *p, const char *spec, uint64_t seed, uint8_t *sel, ac_err *e)
{
  int64_t nrows = p->batch * p->heads * p->tq;
  if (!spec || !*spec || !strcmp(spec, "all")) {
    memset(sel, 1, (size_t)nrows);
    return 0;
  }
  memset(sel, 0, (size_t)nrows);
  if (strncmp(spec, "edges", 5)) return parse_list(spec, nrows, sel, e);
  int64_t k = 0;
  if (spec[5] == '+') {
    if (ac_parse_i64(spec + 6, &k) || k < 0) return ac_err_set(e, "bad row spec '%s' (expected edges+K)", spec);
  } else if (spec[5]) {
    return ac_err_set(e, "bad row spec '%s' (expected edges+K)", spec);
  }
  for (int64_t bh = 0; bh < p->batch * p->heads; bh++)
    for (int64_t i = 0; i < p->tq; i++)
      if (i == 0 || i == p->tq - 1 || i % 16 == 0 || i % 16 == 15) sel[bh * p->tq + i] = 1;
  ac_rng r;
  ac_rng_init(&r, seed, 0x726f7773);
  int64_t chosen = 0, free_rows = 0;
  for (int64_t x = 0; x < nrows; x++) free_rows += !sel[x];
  if (k > free_rows) k = free_rows;
  while (chosen < k) {
    int64_t x = (int64_t)ac_rng_below(&r, (uint64_t)nrows);
    if (sel[x]) continue;
    sel[x] = 1;
    chosen++;
  }
  return 0;
}

double ac_oracle_mem_need(const ac_problem *p, uint32_t formats, int64_t nsel, long threads)
{
  double nrows = (double)p->batch * (double)p->heads * (double)p->tq, tk = (double)p->tk, dk = (double)p->dk, dv = (double)p->dv;
  double res = nrows * (double)(sizeof(ac_oracle_row) + sizeof(int64_t) + 2) +
               (double)nsel * dv * ((double)sizeof(ac_oracle_elem) + 8.0 * __builtin_popcount(formats));
  /* a decoded head: K and V as binary64 with significand and exponent for fp64, in binary32
   * for the narrow dtypes (fastdecode.c), V's class and the prefix sums of |V| (oracle_int.h,
   * ac_or_head) */
  double val = p->dtype == AC_F64 ? (double)(sizeof(int64_t) + sizeof(int32_t) + sizeof(double)) : (double)sizeof(float);
  double head = tk * dk * val + tk + (tk + 1) * dv * (val + (double)(1 + sizeof(ac_i128)));
  /* a thread's row workspace: exact scores, groups and weights per key, dk and dv scratch */
  double ws = tk * 256 + dk * 32 + dv * 64;
  /* variants: the row's own head of visible keys (and the sink), in binary64 with significand
   * and exponent, and per key the exact offsets (two MPFR numbers, a few hundred bits) */
  if (p->f.used) ws += (tk + 1) * ((dk + dv) * (double)(sizeof(int64_t) + sizeof(int32_t) + sizeof(double) + 1 +
                                                          sizeof(ac_i128)) + 256);
  /* the BLAS level (blasfwd.h): a head's K and V in binary64 and binary32 and its block sums; a
   * thread's row tile of scores, weights and binary32 budget weights (44 bytes per row and key) */
  if (p->dtype != AC_F64 && !(p->f.used & ~(uint32_t)AC_FEAT_WINDOW) && !ac_problem_quantized(p) &&
      p->tk >= AC_BT_MIN_KEYS && (double)nsel >= (double)AC_BT_MIN_ROWS * (double)p->batch * (double)p->heads) {
    double rows = (double)ac_bt_rows_per_tile(p->tk);
    head += tk * (dk * 12 + dv * 12 + (dk / AC_ORACLE_QBLOCK + 1) * 8 + 16);
    ws += (rows < (double)nsel ? rows : (double)nsel) * (tk + 8) * 44 + tk * 64 + dv * 96;
  }
  double live = (double)p->batch * (double)p->kv_heads;
  if (live > (double)threads) live = (double)threads;
  return res + live * head + (double)threads * ws;
}
