/* harness_layout.c: serving layouts at the kernel boundary (docs/layouts.md, ABI 3). */
#include "config.h"
#include "harness_priv.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"
#include "quant.h"

/* [token][heads][d] packed strides in the ABI's [batch][head][t][d] order (batch unused). */
static void packed(int64_t heads, int64_t d, int64_t st[4])
{
  st[0] = 0;
  st[1] = d;
  st[2] = heads * d;
  st[3] = 1;
}

void ac_layout_problem_to_abi(const ac_problem *p, attncheck_problem *a)
{
  a->batch = p->l.nseq;
  a->tq = p->l.max_tq;
  a->tk = p->l.max_tk;
  a->total_q = p->tq;
  a->total_k = p->tk;
  packed(p->heads, p->dk, a->q_stride);
  packed(p->heads, p->dv, a->o_stride);
  packed(p->kv_heads, p->dk, a->k_stride);
  packed(p->kv_heads, p->dv, a->v_stride);
  if (p->f.used & AC_FEAT_PAGED) {
    a->page_size = p->l.page_size;
    a->num_pages = p->l.num_pages;
    a->max_pages = p->l.max_pages;
    a->k_stride[0] = p->l.page_size * p->kv_heads * p->dk;
    a->v_stride[0] = p->l.page_size * p->kv_heads * p->dv;
  }
}

/* ---- memory a sequence does not own (docs/layouts.md "Harness") ---- */

/* A quiet NaN of dtype t whose payload names token tok of q (isq) or of k and v: binary32 and
 * binary64 keep 21 bits of token and the tensor bit; narrower dtypes take their one NaN. */
static uint64_t token_nan(ac_dtype t, int64_t tok, int isq)
{
  uint64_t pl = (uint64_t)(tok + 1) & 0x1fffff;
  if (t == AC_F32) return 0x7fc00000u | ((uint64_t)isq << 21) | pl;
  if (t == AC_F64) return 0x7ff8000000000000ULL | ((uint64_t)isq << 40) | pl;
  return ac_nan_bits(t);
}

/* The token (and *isq) a NaN of token_nan names; -1 when it names none (another NaN, a dtype
 * without room, a case with more tokens than the payload holds). */
static int64_t token_of_nan(ac_dtype t, uint64_t bits, int64_t ntok, int *isq)
{
  uint64_t pl;
  if (t == AC_F32 && (bits & 0x7fc00000u) == 0x7fc00000u) {
    pl = bits & 0x1fffff;
    *isq = (bits >> 21) & 1;
  } else if (t == AC_F64 && (bits & 0x7ff8000000000000ULL) == 0x7ff8000000000000ULL) {
    pl = bits & 0x1fffff;
    *isq = (bits >> 40) & 1;
  } else {
    return -1;
  }
  if (pl == 0 || ntok >= 0x1fffff || (int64_t)pl > ntok) return -1;
  return (int64_t)pl - 1;
}

/* Owners of the carrier's key tokens (q: isq): bit 1 an even sequence, bit 2 an odd one. */
static uint8_t *owners(const ac_case *c, int isq)
{
  const ac_problem *p = &c->p;
  int64_t T = isq ? p->tq : p->tk;
  uint8_t *own = ac_xcalloc((size_t)T, 1);
  for (int64_t b = 0; b < p->l.nseq; b++) {
    uint8_t bit = (uint8_t)(1u << (b & 1));
    if (isq)
      for (int64_t t = c->lay->cu_q[b]; t < c->lay->cu_q[b + 1]; t++) own[t] |= bit;
    else
      for (int64_t j = 0; j < ac_layout_tk(c, b); j++) own[ac_layout_key(c, b, j)] |= bit;
  }
  return own;
}

void *ac_hx_layout_data(const ac_case *c, char tensor, int fill)
{
  const ac_problem *p = &c->p;
  int isq = tensor == 'q';
  if (fill == AC_LFILL_FINITE || (fill == AC_LFILL_UNOWNED && isq)) return NULL;
  if (ac_tensor_quantized(p, tensor)) return NULL;   /* its codes and scales hold the fill (ac_hx_layout_quant) */
  uint8_t keep = fill == AC_LFILL_EVEN ? 1 : fill == AC_LFILL_ODD ? 2 : 3;
  uint8_t *own = owners(c, isq);
  int64_t T = isq ? p->tq : p->tk, H = isq ? p->heads : p->kv_heads, D = tensor == 'v' ? p->dv : p->dk;
  const void *src = tensor == 'q' ? c->q : tensor == 'k' ? c->k : c->v;
  size_t es = ac_dtype_size(p->dtype);
  void *d = ac_xmalloc((size_t)(H * T * D) * es);
  memcpy(d, src, (size_t)(H * T * D) * es);
  for (int64_t t = 0; t < T; t++) {
    if (own[t] & keep) continue;
    uint64_t nan = token_nan(p->dtype, t, isq);
    for (int64_t h = 0; h < H; h++)
      for (int64_t x = 0; x < D; x++) ac_store_bits(p->dtype, d, (size_t)((h * T + t) * D + x), nan);
  }
  free(own);
  return d;
}

/* The NaN of a scale dtype, and the NaN code of an fp8 format (0: its codes have none). */
static uint64_t scale_nan(ac_qsdtype t) { return t == AC_QSD_E4M3 ? 0x7f : t == AC_QSD_E8M0 ? 0xff : ac_nan_bits(ac_qsd_dtype(t)); }
static int code_nan(int fmt) { return fmt == AC_QF_E4M3FN ? 0x7f : fmt == AC_QF_E4M3FNUZ ? 0x80 : fmt == AC_QF_E5M2 ? 0x7e : 0; }

/* Quantized tensor i of out: NaN scales (block and token granularity: one per token) and NaN codes
 * (fp8) at the tokens own does not mark with keep; its values decoded again. */
static void quant_fill(ac_case *out, int i, const uint8_t *own, uint8_t keep)
{
  const ac_problem *p = &out->p;
  const ac_qspec *q = &p->quant[i];
  ac_qdata *t = &out->quant->t[i];
  int64_t d[4];
  ac_qdims(p, "qkv"[i], d);
  int per_token = q->gran == AC_QG_BLOCK || q->gran == AC_QG_TOKEN, cn = code_nan(q->fmt);
  const ac_qsdtype sd = ac_qspec_sdtype(q);
  size_t ss = ac_qsdtype_size(sd);
  uint64_t sn = scale_nan(sd);
  for (int64_t tok = 0; tok < d[2]; tok++) {
    if (own[tok] & keep) continue;
    for (int64_t h = 0; h < d[1]; h++)
      for (int64_t x = 0; x < d[3]; x++) {
        if (cn) t->codes[(h * d[2] + tok) * d[3] + x] = (uint8_t)cn;
        if (per_token) memcpy((char *)t->scales + (size_t)ac_qscale_index(q, d, 0, h, tok, x) * ss, &sn, ss);
      }
  }
  ac_quant_decode(out, "qkv"[i]);
}

int ac_hx_layout_quant(const ac_case *c, int fill, ac_case *out)
{
  ac_err e;
  if (!c->lay || !ac_problem_quantized(&c->p) || fill == AC_LFILL_FINITE || ac_case_copy(out, c, &e)) return 0;
  uint8_t keep = fill == AC_LFILL_EVEN ? 1 : fill == AC_LFILL_ODD ? 2 : 3;
  for (int i = 0; i < 3; i++) {
    if (!c->p.quant[i].fmt || (fill == AC_LFILL_UNOWNED && i == 0)) continue;   /* as ac_hx_layout_data */
    uint8_t *own = owners(c, i == 0);
    quant_fill(out, i, own, keep);
    free(own);
  }
  return 1;
}

int ac_hx_layout_filled(const ac_case *c, int fill, ac_case *out)
{
  if (!c->lay) return 0;
  void *d[3];
  int any = 0;
  for (int t = 0; t < 3; t++) any |= (d[t] = ac_hx_layout_data(c, "qkv"[t], fill)) != NULL;
  ac_err e;
  if (ac_hx_layout_quant(c, fill, out)) any = 1;   /* a filled copy already */
  else if (!any || ac_case_copy(out, c, &e) != 0) {
    for (int t = 0; t < 3; t++) free(d[t]);
    return 0;
  }
  void **slot[3] = {&out->q, &out->k, &out->v};
  for (int t = 0; t < 3; t++)
    if (d[t]) {
      free(*slot[t]);
      *slot[t] = d[t];
    }
  return 1;
}

/* First NaN of carrier row x (o elements, then the LSE), its bits in *bits; 0 when none. */
static int row_nan(const ac_case *c, const ac_run_result *r, int64_t x, uint64_t *bits)
{
  const ac_problem *p = &c->p;
  for (int64_t t = 0; r->o && t < p->dv; t++) {
    uint64_t b = ac_load_bits(p->dtype, r->o, (size_t)(x * p->dv + t));
    if (isnan(ac_decode(p->dtype, b))) {
      *bits = b;
      return 1;
    }
  }
  if (r->lse && isnan(r->lse[x])) {
    *bits = 0;
    return 1;
  }
  return 0;
}

/* The message for carrier row x of sequence b, whose NaN has these bits. */
static void name_read(const ac_case *c, int64_t x, uint64_t bits, char *msg, size_t n)
{
  const ac_problem *p = &c->p;
  int64_t t = x % p->tq, h = x / p->tq, b = ac_layout_seq_of_row(c, t);
  int isq = 0;
  int len = snprintf(msg, n, "sequence %lld (head %lld, query %lld) read ", (long long)b, (long long)h,
                     (long long)(t - c->lay->cu_q[b]));
  int64_t tok = token_of_nan(p->dtype, bits, p->tk > p->tq ? p->tk : p->tq, &isq);
  size_t k = len > 0 && (size_t)len < n ? (size_t)len : n;
  if (tok < 0 || (isq && tok >= p->tq) || (!isq && tok >= p->tk))
    snprintf(msg + k, n - k, "memory it does not own (a NaN placed there reached its output)");
  else if (isq)
    snprintf(msg + k, n - k, "query token %lld of sequence %lld, not its own", (long long)tok,
             (long long)ac_layout_seq_of_row(c, tok));
  else if (p->f.used & AC_FEAT_PAGED)
    snprintf(msg + k, n - k, "page %lld slot %lld, which it does not own", (long long)(tok / p->l.page_size),
             (long long)(tok % p->l.page_size));
  else
    snprintf(msg + k, n - k, "key token %lld, which it does not own", (long long)tok);
}

/* One extra run of c with the layout fill; 1 when it produced an output like r's. */
static int fill_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, int fill, const ac_run_result *r,
                    ac_run_result *out)
{
  ac_run_opts o2 = *opts;
  o2.layout_fill = fill;
  ac_err e;
  memset(out, 0, sizeof *out);
  return ac_hx_run_once(k, c, &o2, out, &e) == 0 && out->status == AC_RUN_OK && out->o && out->o_count == r->o_count;
}

void ac_hx_layout_isolate(const ac_kernel *k, const ac_case *c, const ac_run_opts *opts, ac_run_result *r)
{
  const ac_problem *p = &c->p;
  ac_run_result runs[3];   /* isolation of the even and the odd sequences, then the finite run */
  int ok[3] = {0, 0, 0};
  memset(runs, 0, sizeof runs);
  ok[0] = fill_run(k, c, opts, AC_LFILL_EVEN, r, &runs[0]);
  if (p->l.nseq > 1) ok[1] = fill_run(k, c, opts, AC_LFILL_ODD, r, &runs[1]);
  int64_t nrows = p->heads * p->tq, suspect = 0;
  uint64_t bits;
  for (int64_t x = 0; x < nrows && !suspect; x++) {
    int64_t par = ac_layout_seq_of_row(c, x % p->tq) & 1;
    suspect = row_nan(c, r, x, &bits) || (ok[par] && row_nan(c, &runs[par], x, &bits));
  }
  /* a NaN somewhere: the run with finite values everywhere tells a read from the kernel's own NaN */
  if (suspect) ok[2] = fill_run(k, c, opts, AC_LFILL_FINITE, r, &runs[2]);
  for (int64_t x = 0; ok[2] && x < nrows; x++) {
    int64_t par = ac_layout_seq_of_row(c, x % p->tq) & 1;
    if (row_nan(c, &runs[2], x, &bits)) continue;   /* NaN with every foreign value finite: not a read of them */
    if (!row_nan(c, r, x, &bits) && !(ok[par] && row_nan(c, &runs[par], x, &bits))) continue;
    if (r->n_oos++ == 0) name_read(c, x, bits, r->oos_msg, sizeof r->oos_msg);
  }
  for (int i = 0; i < 3; i++) ac_run_result_free(&runs[i]);
}
