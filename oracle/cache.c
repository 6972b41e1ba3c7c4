/* cache.c: oracle results on disk, keyed by the case hash and the options that change them.
 * One binary file per key, DIR/<key>.acor: a header (magic, version, struct sizes, the key
 * fields, shape) then the rows, the elements and the rounded outputs per format, host byte
 * order (attncheck requires a little-endian host). Written atomically; anything that does
 * not match exactly is a miss. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "oracle.h"
#include "rng.h"

#define CACHE_MAGIC "ACORACL1"
#define CACHE_VERSION 5u   /* 2: ac_oracle_row.max_cZ, rule table on IEEE score classes; 3: qk_l1;
                              4: ac_oracle_elem.M; 5: AC_HOW_NOT_SELECTED */

typedef struct {
  char magic[8];
  uint32_t version, sz_row, sz_elem, formats;
  uint64_t key, case_hash;
  int64_t nrows, dv, rows_done, n_exact, n_rounded, n_unresolved, n_fallback;
  int32_t nmu, lse_f64;
  int64_t max_prec;
  double mu[AC_ORACLE_NMU];
  double seconds;
} cache_hdr;

static uint64_t hash_str(uint64_t h, const char *s)
{
  for (; s && *s; s++) h = ac_hash2(h, (uint64_t)(unsigned char)*s);
  return ac_hash2(h, 0xff);
}

static uint64_t cache_key(const ac_case *c, const ac_oracle_opts *o, uint64_t *chash)
{
  uint64_t ch = ac_case_hash(c), h = ac_hash2(ch, CACHE_VERSION);
  uint32_t formats = (o->formats | (1u << c->p.dtype)) & ((1u << AC_NDTYPES) - 1);
  h = ac_hash2(h, formats);
  h = ac_hash2(h, (uint64_t)o->lse_f64);
  h = ac_hash2(h, (uint64_t)(o->prec_cap > 0 ? o->prec_cap : 1L << 16));
  h = hash_str(h, o->rows ? o->rows : "all");
  h = ac_hash2(h, o->rows_seed);
  h = ac_hash2(h, (uint64_t)o->nmu);
  for (int q = 0; q < o->nmu && q < AC_ORACLE_NMU; q++) {
    uint64_t b;
    memcpy(&b, &o->mu[q], sizeof b);
    h = ac_hash2(h, b);
  }
  *chash = ch;
  return h;
}

const char *ac_oracle_cache_dir(void)
{
  static _Thread_local char buf[4096];
  const char *env = getenv("ATTNCHECK_CACHE");
  if (env) {
    if (!*env || !strcmp(env, "off") || !strcmp(env, "0")) return NULL;
    snprintf(buf, sizeof buf, "%s", env);
    return buf;
  }
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  snprintf(buf, sizeof buf, "%s/.cache/attncheck/oracle", home);
  return buf;
}

static void cache_path(char *buf, size_t n, const char *dir, uint64_t key)
{
  snprintf(buf, n, "%s/%016llx.acor", dir, (unsigned long long)key);
}

int ac_oracle_cache_store(const char *dir, const ac_case *c, const ac_oracle_opts *o, const ac_oracle_result *r)
{
  if (!dir) return -1;
  ac_err e;
  if (ac_mkdir_p(dir, &e)) return -1;
  cache_hdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, CACHE_MAGIC, 8);
  h.version = CACHE_VERSION;
  h.sz_row = sizeof(ac_oracle_row);
  h.sz_elem = sizeof(ac_oracle_elem);
  h.key = cache_key(c, o, &h.case_hash);
  h.formats = r->formats;
  h.nrows = r->nrows;
  h.dv = r->p.dv;
  h.rows_done = r->rows_done;
  h.n_exact = r->n_exact;
  h.n_rounded = r->n_rounded;
  h.n_unresolved = r->n_unresolved;
  h.n_fallback = r->n_fallback;
  h.nmu = r->nmu;
  h.lse_f64 = o->lse_f64;
  h.max_prec = r->max_prec;
  memcpy(h.mu, r->mu, sizeof h.mu);
  h.seconds = r->seconds;
  size_t ne = (size_t)(r->nrows * r->p.dv), nf = 0;
  for (int f = 0; f < AC_NDTYPES; f++) nf += r->o_round[f] != NULL;
  size_t n = sizeof h + (size_t)r->nrows * sizeof *r->rows + ne * sizeof *r->elems + nf * ne * sizeof(uint64_t);
  char *buf = ac_xmalloc(n), *q = buf;
  memcpy(q, &h, sizeof h); q += sizeof h;
  memcpy(q, r->rows, (size_t)r->nrows * sizeof *r->rows); q += (size_t)r->nrows * sizeof *r->rows;
  memcpy(q, r->elems, ne * sizeof *r->elems); q += ne * sizeof *r->elems;
  for (int f = 0; f < AC_NDTYPES; f++)
    if (r->o_round[f]) { memcpy(q, r->o_round[f], ne * sizeof(uint64_t)); q += ne * sizeof(uint64_t); }
  char path[4200];
  cache_path(path, sizeof path, dir, h.key);
  int rc = ac_write_file_atomic(path, buf, n, &e);
  free(buf);
  return rc;
}

int ac_oracle_cache_load(const char *dir, const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r)
{
  if (!dir) return -1;
  uint64_t ch, key = cache_key(c, o, &ch);
  char path[4200];
  cache_path(path, sizeof path, dir, key);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  cache_hdr h;
  int rc = -1;
  memset(r, 0, sizeof *r);
  if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CACHE_MAGIC, 8) || h.version != CACHE_VERSION ||
      h.sz_row != sizeof(ac_oracle_row) || h.sz_elem != sizeof(ac_oracle_elem) || h.key != key ||
      h.case_hash != ch || h.nrows != c->p.batch * c->p.heads * c->p.tq || h.dv != c->p.dv ||
      h.nmu < 0 || h.nmu > AC_ORACLE_NMU)
    goto out;
  r->p = c->p;
  r->nrows = h.nrows;
  r->formats = h.formats;
  size_t ne = (size_t)(h.nrows * h.dv);
  r->rows = ac_xmalloc((size_t)h.nrows * sizeof *r->rows);
  r->elems = ac_xmalloc(ne * sizeof *r->elems);
  if (fread(r->rows, sizeof *r->rows, (size_t)h.nrows, f) != (size_t)h.nrows) goto bad;
  if (fread(r->elems, sizeof *r->elems, ne, f) != ne) goto bad;
  for (int k = 0; k < AC_NDTYPES; k++)
    if (h.formats & (1u << k)) {
      r->o_round[k] = ac_xmalloc(ne * sizeof(uint64_t));
      if (fread(r->o_round[k], sizeof(uint64_t), ne, f) != ne) goto bad;
    }
  r->nmu = h.nmu;
  memcpy(r->mu, h.mu, sizeof r->mu);
  r->rows_done = h.rows_done;
  r->n_exact = h.n_exact;
  r->n_rounded = h.n_rounded;
  r->n_unresolved = h.n_unresolved;
  r->n_fallback = h.n_fallback;
  r->max_prec = (long)h.max_prec;
  r->seconds = h.seconds;
  rc = 0;
  goto out;
bad:
  ac_oracle_result_free(r);
out:
  fclose(f);
  return rc;
}
