/* signature.c: a finding's identity: kernel, verdict kind, family, and where in the sequence
 * the worst row lies (first, last, tile edge, interior); and the parts of its mechanism that
 * group findings into distinct defects (the minimized case's shape class, the worst element's
 * tensor and reason). */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "fuzz.h"
#include "variants.h"

const char *ac_row_position(int64_t i, int64_t tq)
{
  if (i < 0) return "none";
  if (i == 0) return "first";
  if (i == tq - 1) return "last";
  if (i % 16 == 0 || (i + 1) % 16 == 0) return "tile-edge";
  return "interior";
}

static void clean(const char *s, char *out, size_t n)
{
  size_t o = 0;
  for (; *s && o + 1 < n; s++) {
    char ch = *s;
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
    out[o++] = ok ? ch : '_';
  }
  out[o] = 0;
}

/* FNV-1a over the whole string, folded to 32 bits. */
static uint32_t spec_hash(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (uint32_t)(h ^ (h >> 32));
}

void ac_signature(const char *kernel, ac_verdict_kind k, const char *family, const char *pos, char *out, size_t n)
{
  char kb[64], fb[64];
  if (!strncmp(kernel, "exec:", 5) || !strncmp(kernel, "exec-persistent:", 16)) {
    /* a command line: its first characters to read, a hash of all of it to tell commands apart */
    int pers = kernel[4] == '-';
    const char *cmd = kernel + (pers ? 16 : 5);
    char head[29];
    while (*cmd == ' ') cmd++;
    clean(cmd, head, sizeof head);
    snprintf(kb, sizeof kb, "%s_%s-%08x", pers ? "execp" : "exec", head, (unsigned)spec_hash(kernel));
  } else {
    /* a plugin path: keep the last path component's first characters */
    const char *sl = strrchr(kernel, '/');
    clean(sl ? sl + 1 : kernel, kb, 41);
  }
  clean(family, fb, sizeof fb);
  snprintf(out, n, "%s__%s__%s__%s", kb, ac_verdict_name(k), fb, pos);
}

int ac_verdict_severity(ac_verdict_kind k)
{
  switch (k) {
  case AC_V_CRASH: return 0;
  case AC_V_GUARD: return 1;
  case AC_V_OUT_OF_SEQUENCE: return 1;
  case AC_V_TIMEOUT: return 2;
  case AC_V_UNWRITTEN: return 3;
  case AC_V_FAIL: return 4;
  case AC_V_METAMORPHIC: return 4;
  case AC_V_GRAD_FAIL: return 4;
  case AC_V_GRAD_METAMORPHIC: return 4;
  case AC_V_DROPOUT_MASK: return 4;
  case AC_V_STORE_FAIL: return 4;
  case AC_V_NONDETERMINISTIC: return 5;
  case AC_V_MASKED_LEAK: return 6;
  case AC_V_SUSPECT: return 7;
  case AC_V_WEAK_CLASS: return 7;
  case AC_V_OUT_OF_DOMAIN: return 8;
  default: return 9;
  }
}

/* ---- mechanisms: what tells distinct defects apart (docs/fuzzing.md "Distinct defects") ---- */

/* A length: itself up to 2, else the bracket (2^k, 2^(k+1)] it lies in ("65-128"). */
static void len_class(int64_t n, char *buf, size_t sz)
{
  if (n <= 2) {
    snprintf(buf, sz, "%lld", (long long)n);
    return;
  }
  int64_t hi = 4;
  while (hi < n) hi *= 2;
  snprintf(buf, sz, "%lld-%lld", (long long)(hi / 2 + 1), (long long)hi);
}

void ac_mechanism_shape_fmt(const char *dtype, const char *mask, int64_t batch, int64_t heads, int64_t kv_heads,
                            int64_t tq, int64_t tk, const char *layout, const char *features, char *buf, size_t n)
{
  char a[48], b[48];
  if (tq == 1 && !strcmp(mask, "causal-bottom-right")) mask = "none"; /* one row sees every key either way */
  len_class(tq, a, sizeof a);
  len_class(tk, b, sizeof b);
  const char *hs = heads != kv_heads ? " gqa" : heads > 1 ? " heads" : "", *sp = layout && *layout ? " " : "";
  snprintf(buf, n, "%s %s%s%s tq%s tk%s%s%s%s%s", dtype, mask, sp, layout ? layout : "", a, b, batch > 1 ? " batches" : "",
           hs, features && *features ? " +" : "", features ? features : "");
}

void ac_mechanism_shape(const ac_case *c, char *buf, size_t n)
{
  const ac_problem *p = &c->p;
  char lay[96] = "", feats[160] = "";
  uint32_t f = p->f.used & ~(uint32_t)AC_FEAT_LAYOUTS;
  if (f) ac_feat_list(f, feats, sizeof feats);
  int64_t tq = p->tq, tk = p->tk;
  if (c->lay) {
    char sq[48];
    len_class(p->l.nseq, sq, sizeof sq);
    if (p->f.used & AC_FEAT_PAGED)
      snprintf(lay, sizeof lay, "paged seqs%s page%lld", sq, (long long)p->l.page_size);
    else
      snprintf(lay, sizeof lay, "varlen seqs%s", sq);
    tq = p->l.max_tq, tk = p->l.max_tk;
  }
  ac_mechanism_shape_fmt(ac_dtype_name(p->dtype), ac_mask_name(p->mask), p->batch, p->heads, p->kv_heads, tq, tk, lay,
                         feats, buf, n);
}

const char *ac_why_name(int why)
{
  switch (why) {
  case AC_WHY_VALUE: return "value";
  case AC_WHY_NONFINITE: return "non-finite";
  case AC_WHY_FINITE: return "finite-for-non-finite";
  case AC_WHY_WRONG_NONFINITE: return "wrong-non-finite";
  case AC_WHY_EMPTY: return "empty-row";
  default: return "";
  }
}
