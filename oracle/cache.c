/* cache.c: oracle results on disk, keyed by everything a result depends on.
 *
 * One binary file per key, DIR/<key>.acor, host byte order (attncheck requires a
 * little-endian host):
 *   header   magic, CACHE_VERSION, struct sizes, the 32-byte key, shape, statistics
 *   payload  rows[nrows], then for the stored (selected) rows elems[nstored*dv] and the
 *            rounded outputs per format
 *   sum      SHA-256 of header and payload (32 bytes)
 * The key is the SHA-256 (nettle) of the cache version, the problem (dtype, mask, shape,
 * scale, strides; for a variant case every field of its features), the bytes of q, k and v (and
 * of the variant tensors), and the options that change the result (formats,
 * LSE binary64, precision cap, row selection and its seed, mu thresholds, no_fast); the file
 * name is its first 128 bits. A loaded entry counts only when its size, header, key and sum
 * all match; anything else (a flipped bit, a truncated file, the payload of another case or
 * scale spliced in) is a miss: the result is recomputed, one warning per process says so,
 * and the store that follows replaces the entry. SHA-256 detects any accidental corruption
 * and splicing with certainty short of a hash collision, not forgery (whoever can write the
 * directory can write a sum too: the directory must be private, below); entries are written
 * atomically (temporary file, fsync, rename) and never read through a symbolic link. A result with unresolved elements is not stored: it says
 * what this oracle could not decide, and a later oracle may decide it. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nettle/sha2.h>
#include "oracle.h"
#include "variants.h"

#define CACHE_MAGIC "ACORACL2"
/* The cache format version: bump it whenever a field of the result or its meaning changes.
 * 2: ac_oracle_row.max_cZ, rule table on IEEE score classes; 3: qk_l1; 4: SHA-256 key and
 * sum, elements of the selected rows only; 5: ac_oracle_elem.M (the convex-hull term);
 * 6: AC_HOW_NOT_SELECTED, binary64 rounding by the double-double pass; 7: results with unresolved
 * elements are no longer stored (entries of 6 may hold some); 8: the LSE of FlashAttention-2's causal
 * ALiBi convention (ac_oracle_row.alibi_shift, lse_alt*); 9: the block terms of Q rounded to blocks
 * (ac_oracle_elem.Gb, ac_oracle_row.lse_cZb, max_cZb). */
#define CACHE_VERSION 9u

typedef struct {
  char magic[8];
  uint32_t version, sz_row, sz_elem, formats;
  uint8_t key[SHA256_DIGEST_SIZE];
  int64_t nrows, nstored, dv, rows_done, n_exact, n_rounded, n_unresolved, n_fallback;
  int32_t nmu, lse_f64;
  int64_t max_prec;
  double mu[AC_ORACLE_NMU];
  double seconds;
} cache_hdr;

static void put_u64(struct sha256_ctx *h, uint64_t v) { sha256_update(h, sizeof v, (const uint8_t *)&v); }

static void put_str(struct sha256_ctx *h, const char *s)
{
  put_u64(h, strlen(s));
  sha256_update(h, strlen(s), (const uint8_t *)s);
}

static void put_bytes(struct sha256_ctx *h, const void *p, size_t n)
{
  put_u64(h, n);
  if (p && n) sha256_update(h, n, p);
}

/* Every field of a variant problem and the bytes of every variant tensor (docs/variants.md). */
static void put_variants(struct sha256_ctx *h, const ac_case *c)
{
  const ac_features *f = &c->p.f;
  uint64_t cap;
  memcpy(&cap, &f->softcap, sizeof cap);
  const int64_t v[] = {f->used, f->qd, f->kd, f->vd, f->od, f->win_top_left, f->win_left, f->win_right,
                       f->alibi_per_batch, f->bias_dtype, f->bias_b, f->bias_h, f->mask_b, f->mask_h};
  put_str(h, "variants");
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) put_u64(h, (uint64_t)v[i]);
  put_u64(h, cap);
  if (f->used & AC_FEAT_DROPOUT) {   /* the mask comes below, with the variant tensors */
    uint64_t dp;
    memcpy(&dp, &f->dropout_p, sizeof dp);
    put_str(h, "dropout");
    put_u64(h, dp);
  }
  for (int t = 0; t < AC_FT_N; t++) {
    if (t == AC_FT_DROPOUT_MASK && !(f->used & AC_FEAT_DROPOUT)) continue;   /* the keys of other cases stay */
    int64_t shape[4];
    size_t es = 0;
    int64_t n = ac_feat_tensor_count(&c->p, (ac_feat_tensor)t);
    const void *data = *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t);
    if (n <= 0 || !data || !ac_feat_tensor_shape(&c->p, (ac_feat_tensor)t, shape, &es)) { put_u64(h, 0); continue; }
    put_bytes(h, data, (size_t)n * es);
  }
}

static void cache_key(const ac_case *c, const ac_oracle_opts *o, uint8_t key[SHA256_DIGEST_SIZE])
{
  struct sha256_ctx h;
  sha256_init(&h);
  put_str(&h, CACHE_MAGIC);
  put_u64(&h, CACHE_VERSION);
  put_u64(&h, sizeof(ac_oracle_row));
  put_u64(&h, sizeof(ac_oracle_elem));
  const ac_problem *p = &c->p;
  const int64_t f[] = {p->dtype, p->mask, p->batch, p->heads, p->kv_heads, p->tq, p->tk, p->dk, p->dv,
                       p->scale_is_default};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) put_u64(&h, (uint64_t)f[i]);
  uint64_t sb = 0;
  if (!p->scale_is_default) memcpy(&sb, &p->scale, sizeof sb);
  put_u64(&h, sb);
  for (int i = 0; i < 4; i++) {
    put_u64(&h, (uint64_t)p->q_stride[i]);
    put_u64(&h, (uint64_t)p->k_stride[i]);
    put_u64(&h, (uint64_t)p->v_stride[i]);
  }
  put_bytes(&h, c->q, c->q ? ac_case_bytes(c, 'q') : 0);
  put_bytes(&h, c->k, c->k ? ac_case_bytes(c, 'k') : 0);
  put_bytes(&h, c->v, c->v ? ac_case_bytes(c, 'v') : 0);
  if (p->f.used) put_variants(&h, c);   /* plain cases keep their key */
  put_u64(&h, (o->formats | (1u << p->dtype)) & ((1u << AC_NDTYPES) - 1));
  put_u64(&h, (uint64_t)o->lse_f64);
  put_u64(&h, (uint64_t)(o->prec_cap > 0 ? o->prec_cap : 1L << 16));
  put_str(&h, o->rows && *o->rows ? o->rows : "all");
  put_u64(&h, o->rows_seed);
  put_u64(&h, (uint64_t)o->nmu);
  for (int q = 0; q < o->nmu && q < AC_ORACLE_NMU; q++) {
    uint64_t b;
    memcpy(&b, &o->mu[q], sizeof b);
    put_u64(&h, b);
  }
  put_u64(&h, (uint64_t)o->no_fast);
  sha256_digest(&h, SHA256_DIGEST_SIZE, key);
}

/* ---- the cache directory: whose it is ---------------------------------------------------- *
 * The sum of an entry detects damage, not forgery: whoever can write the directory can change a
 * payload and compute its sum again. So the cache is used only in a directory that is the user's
 * own (owned by the effective user, not writable by group or others, not a symbolic link),
 * created with mode 0700, unless ATTNCHECK_CACHE_SHARED=1 says it is shared on purpose (a
 * symbolic link is refused even then); any other directory is not used, said once per process. */

static atomic_int cache_disabled, refusal_said;

void ac_oracle_cache_disable(void) { atomic_store(&cache_disabled, 1); }

static int cache_shared(void)
{
  const char *s = getenv("ATTNCHECK_CACHE_SHARED");
  return s && !strcmp(s, "1");
}

/* Why dir may not hold the cache; NULL when it may (also when it does not exist yet). */
static const char *untrusted(const char *dir)
{
  struct stat st;
  if (lstat(dir, &st) != 0) return errno == ENOENT ? NULL : "cannot be examined";
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "is not a directory";
  if (cache_shared()) return NULL;
  if (st.st_uid != geteuid()) return "is owned by another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "is writable by its group or others";
  return NULL;
}

static const char *refused(const char *dir, const char *why)
{
  if (!atomic_exchange(&refusal_said, 1))
    fprintf(stderr, "attncheck: warning: oracle cache %s %s: not used (a private directory is; "
                    "ATTNCHECK_CACHE_SHARED=1 uses a shared one)\n", dir, why);
  return NULL;
}

const char *ac_oracle_cache_dir(void)
{
  static _Thread_local char buf[4096];
  if (atomic_load(&cache_disabled)) return NULL;
  const char *env = getenv("ATTNCHECK_CACHE");
  if (env) {
    if (!*env || !strcmp(env, "off") || !strcmp(env, "0")) return NULL;
    snprintf(buf, sizeof buf, "%s", env);
  } else {
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    snprintf(buf, sizeof buf, "%s/.cache/attncheck/oracle", home);
  }
  const char *why = untrusted(buf);
  return why ? refused(buf, why) : buf;
}

/* dir and its missing parents, created with mode 0700 (0777 less the umask when shared); 0 when
 * dir is then one the cache may use. */
static int cache_mkdir(const char *dir)
{
  char b[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof b) return -1;
  memcpy(b, dir, n + 1);
  mode_t mode = cache_shared() ? 0777 : 0700;
  for (size_t i = 1; i <= n; i++) {
    if (b[i] != '/' && b[i] != 0) continue;
    char c = b[i];
    b[i] = 0;
    if (mkdir(b, mode) != 0 && errno != EEXIST) return -1;
    b[i] = c;
  }
  const char *why = untrusted(dir);
  if (why) refused(dir, why);
  return why ? -1 : 0;
}

static void cache_path(char *buf, size_t n, const char *dir, const uint8_t *key)
{
  char hex[33];
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
  snprintf(buf, n, "%s/%s.acor", dir, hex);
}

/* The payload arrays of r in file order; returns their number. */
static int payload_parts(const ac_oracle_result *r, void *ptr[2 + AC_NDTYPES], size_t len[2 + AC_NDTYPES])
{
  size_t ne = (size_t)ac_oracle_nstored(r) * (size_t)r->p.dv;
  int n = 0;
  ptr[n] = r->rows; len[n++] = (size_t)r->nrows * sizeof *r->rows;
  ptr[n] = r->elems; len[n++] = ne * sizeof *r->elems;
  for (int f = 0; f < AC_NDTYPES; f++)
    if (r->o_round[f]) { ptr[n] = r->o_round[f]; len[n++] = ne * sizeof(uint64_t); }
  return n;
}

int ac_oracle_cache_store(const char *dir, const ac_case *c, const ac_oracle_opts *o, const ac_oracle_result *r)
{
  if (!dir || c->lay || r->n_unresolved) return -1;   /* layout cases: per sequence (oracle/layout.c) */
  ac_err e;
  if (cache_mkdir(dir)) return -1;
  cache_hdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, CACHE_MAGIC, 8);
  h.version = CACHE_VERSION;
  h.sz_row = sizeof(ac_oracle_row);
  h.sz_elem = sizeof(ac_oracle_elem);
  cache_key(c, o, h.key);
  h.formats = r->formats;
  h.nrows = r->nrows;
  h.nstored = ac_oracle_nstored(r);
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
  void *ptr[2 + AC_NDTYPES];
  size_t len[2 + AC_NDTYPES], n = sizeof h + SHA256_DIGEST_SIZE;
  int np = payload_parts(r, ptr, len);
  for (int k = 0; k < np; k++) n += len[k];
  char *buf = malloc(n), *q = buf;
  if (!buf) return -1;   /* the cache is optional */
  struct sha256_ctx s;
  sha256_init(&s);
  memcpy(q, &h, sizeof h);
  q += sizeof h;
  for (int k = 0; k < np; k++) { memcpy(q, ptr[k], len[k]); q += len[k]; }
  sha256_update(&s, (size_t)(q - buf), (const uint8_t *)buf);
  sha256_digest(&s, SHA256_DIGEST_SIZE, (uint8_t *)q);
  char path[4200];
  cache_path(path, sizeof path, dir, h.key);
  int rc = ac_write_file_atomic(path, buf, n, &e);
  free(buf);
  return rc;
}

static atomic_int warned;

/* A present entry that cannot be used: a miss, said once per process. */
static int bad_entry(const char *path, const char *why)
{
  if (!atomic_exchange(&warned, 1))
    fprintf(stderr, "attncheck: warning: oracle cache entry %s %s; recomputing (further such warnings are not shown)\n",
            path, why);
  return -1;
}

/* Reads n bytes into dst and into the running sum. */
static int read_sum(FILE *f, void *dst, size_t n, struct sha256_ctx *s)
{
  if (n && fread(dst, 1, n, f) != n) return -1;
  sha256_update(s, n, dst);
  return 0;
}

static int load_entry(FILE *f, const char *path, const ac_case *c, const uint8_t *key, ac_oracle_result *r)
{
  uint8_t want[SHA256_DIGEST_SIZE], got[SHA256_DIGEST_SIZE];
  struct sha256_ctx s;
  sha256_init(&s);
  cache_hdr h;
  struct stat st;
  int64_t nrows = c->p.batch * c->p.heads * c->p.tq;
  if (fstat(fileno(f), &st) || read_sum(f, &h, sizeof h, &s)) return bad_entry(path, "is truncated");
  if (memcmp(h.magic, CACHE_MAGIC, 8) || h.version != CACHE_VERSION || h.sz_row != sizeof(ac_oracle_row) ||
      h.sz_elem != sizeof(ac_oracle_elem))
    return bad_entry(path, "has another format");
  if (memcmp(h.key, key, SHA256_DIGEST_SIZE) || h.nrows != nrows || h.dv != c->p.dv || h.nstored < 0 || h.nstored > nrows ||
      h.nmu < 0 || h.nmu > AC_ORACLE_NMU || (h.formats & ~((1u << AC_NDTYPES) - 1)))
    return bad_entry(path, "does not match its key");
  /* the sizes the header declares must be the file's before anything is allocated */
  uint64_t ne = (uint64_t)h.nstored * (uint64_t)h.dv, nf = (uint64_t)__builtin_popcount(h.formats);
  uint64_t size = sizeof h + (uint64_t)nrows * sizeof(ac_oracle_row) + ne * (sizeof(ac_oracle_elem) + 8 * nf) +
                  SHA256_DIGEST_SIZE;
  if ((uint64_t)st.st_size != size) return bad_entry(path, "has the wrong size");
  r->p = c->p;
  r->nrows = nrows;
  r->formats = h.formats;
  r->rows = ac_xmalloc((size_t)nrows * sizeof *r->rows);
  r->elems = ac_xmalloc((size_t)ne * sizeof *r->elems);
  for (int k = 0; k < AC_NDTYPES; k++)
    if (h.formats & (1u << k)) r->o_round[k] = ac_xmalloc((size_t)ne * sizeof(uint64_t));
  if (h.nstored < nrows) {
    r->slot = ac_xmalloc((size_t)nrows * sizeof *r->slot);
    r->nsel = h.nstored;
  }
  void *ptr[2 + AC_NDTYPES];
  size_t len[2 + AC_NDTYPES];
  int np = payload_parts(r, ptr, len);
  for (int k = 0; k < np; k++)
    if (read_sum(f, ptr[k], len[k], &s)) return bad_entry(path, "is truncated");
  sha256_digest(&s, SHA256_DIGEST_SIZE, want);
  if (fread(got, 1, sizeof got, f) != sizeof got || memcmp(got, want, sizeof got))
    return bad_entry(path, "fails its checksum");
  /* the slots follow the selected rows in row order (ac_oracle_run) */
  int64_t k = 0;
  for (int64_t x = 0; x < nrows; x++) {
    int64_t sl = r->rows[x].selected ? k++ : -1;
    if (r->slot) r->slot[x] = sl;
  }
  if (k != h.nstored || k != h.rows_done) return bad_entry(path, "does not match its key");
  r->nmu = h.nmu;
  memcpy(r->mu, h.mu, sizeof r->mu);
  r->rows_done = h.rows_done;
  r->n_exact = h.n_exact;
  r->n_rounded = h.n_rounded;
  r->n_unresolved = h.n_unresolved;
  r->n_fallback = h.n_fallback;
  r->max_prec = (long)h.max_prec;
  r->seconds = h.seconds;
  return 0;
}

int ac_oracle_cache_load(const char *dir, const ac_case *c, const ac_oracle_opts *o, ac_oracle_result *r)
{
  if (!dir || c->lay) return -1;   /* layout cases: per sequence (oracle/layout.c) */
  uint8_t key[SHA256_DIGEST_SIZE];
  cache_key(c, o, key);
  char path[4200];
  cache_path(path, sizeof path, dir, key);
  memset(r, 0, sizeof *r);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);   /* a link in the cache is not followed */
  if (fd < 0) return errno == ELOOP ? bad_entry(path, "is a symbolic link") : -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return bad_entry(path, "is not a regular file");
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return -1;
  }
  int rc = load_entry(f, path, c, key, r);
  fclose(f);
  if (rc) ac_oracle_result_free(r);
  return rc;
}
