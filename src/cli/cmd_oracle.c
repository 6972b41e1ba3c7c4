/* cmd_oracle.c: attncheck oracle — the exact output and LSE of a case, into an NPZ. */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "casefile.h"
#include "commands.h"
#include "npz.h"
#include "oracle.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck oracle CASE [-o OUT.npz] [OPTIONS]\n\n"
          "Computes the exact attention output of CASE: every element correctly rounded into the\n"
          "case dtype (and the formats asked for), LSE correctly rounded to binary32, a binary64\n"
          "value with a proven error bound, and the budget terms. Prints a summary.\n\n"
          "  -o, --out FILE      write the case plus o_exact_<format>, lse_exact_f32 (lse_exact_f64),\n"
          "                      o_approx/o_err, lse_approx/lse_err, budget_* and row_* members\n"
          "  --rows SPEC         all (default), a list of global rows '0,5,10-20' (row = (b*H + h)*tq + i),\n"
          "                      or edges+K: first/last rows, rows i%%16 in {0,15}, K random rows\n"
          "  --rows-seed S       seed of the K random rows (default 0)\n"
          "  --threads N         worker threads (default: all cores); results do not depend on N\n"
          "  --formats LIST      extra output formats, e.g. f64,f16,bf16 (the case dtype is always included)\n"
          "  --lse-f64           also round LSE correctly to binary64\n"
          "  --prec-cap BITS     precision cap of the Ziv loop (default 65536)\n"
          "  --mem-cap SIZE      refuse a case, or a row selection, whose oracle needs more than SIZE\n"
          "                      bytes with the inputs (default 8G, ATTNCHECK_MEM_CAP)\n"
          "  --no-cache          neither read nor write the oracle cache ($ATTNCHECK_CACHE,\n"
          "                      default ~/.cache/attncheck/oracle; ATTNCHECK_CACHE=off disables it)\n"
          "  -q, --quiet         no summary\n"
          "  --help\n\n"
          "exit: 0 done; 2 bad usage, unreadable case, non-finite scale or over the memory cap; 3 out\n"
          "of memory, or an element or LSE the oracle could not decide under the precision cap (an\n"
          "oracle error, never a kernel's).\n");
}

enum { O_ROWS = 256, O_ROWSSEED, O_THREADS, O_FORMATS, O_LSE64, O_CAP, O_NOCACHE, O_MEMCAP, O_HELP };
static const struct option lopts[] = {
  {"out", required_argument, 0, 'o'},          {"rows", required_argument, 0, O_ROWS},
  {"rows-seed", required_argument, 0, O_ROWSSEED}, {"threads", required_argument, 0, O_THREADS},
  {"formats", required_argument, 0, O_FORMATS}, {"lse-f64", no_argument, 0, O_LSE64},
  {"prec-cap", required_argument, 0, O_CAP},    {"no-cache", no_argument, 0, O_NOCACHE},
  {"quiet", no_argument, 0, 'q'},               {"help", no_argument, 0, O_HELP},
  {"mem-cap", required_argument, 0, O_MEMCAP},
  {0, 0, 0, 0},
};

static int parse_formats(const char *s, uint32_t *out)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  *out = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    ac_dtype t;
    if (ac_dtype_parse(tok, &t)) return -1;
    *out |= 1u << t;
  }
  return 0;
}

typedef struct {
  ac_npz_member *m;
  int n, cap;
} members;

static void *add(members *ms, const char *name, const char *descr, int ndim, const int64_t *shape, size_t esize)
{
  if (ms->n == ms->cap) {
    ms->cap = ms->cap ? 2 * ms->cap : 32;
    ms->m = ac_xrealloc(ms->m, (size_t)ms->cap * sizeof *ms->m);
  }
  ac_npz_member *m = &ms->m[ms->n++];
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", name);
  snprintf(m->descr, sizeof m->descr, "%s", descr);
  m->ndim = ndim;
  size_t n = esize;
  for (int d = 0; d < ndim; d++) {
    m->shape[d] = shape[d];
    n *= (size_t)shape[d];
  }
  m->nbytes = n;
  void *data = ac_xcalloc(n ? n : 1, 1);
  m->data = data;
  return data;
}

/* Bytes of the members write_out allocates (every row of the case, selected or not). */
static double out_bytes(const ac_oracle_result *r, int lse64)
{
  double per_elem = 8 * 7 + 2 + 8.0 * r->nmu, per_row = 4 + (lse64 ? 8 : 0) + 8 * 8 + 3;
  for (int f = 0; f < AC_NDTYPES; f++)
    if (r->o_round[f]) per_elem += ac_dtype_get((ac_dtype)f)->bytes;
  return (double)r->nrows * ((double)r->p.dv * per_elem + per_row);
}

static int write_out(const char *path, const ac_case *c, const ac_oracle_result *r, int lse64, ac_err *e)
{
  const ac_problem *p = &c->p;
  members ms = {0};
  int64_t sh[5] = {p->batch, p->heads, p->tq, p->dv, r->nmu}, nr = r->nrows, ne = nr * p->dv;
  double need = out_bytes(r, lse64) + 2.0 * (double)(ac_case_bytes(c, 'q') + ac_case_bytes(c, 'k') + ac_case_bytes(c, 'v'));
  if (need > (double)ac_mem_cap())
    return ac_err_set(e, "%s: the output file needs about %.0f bytes in memory, more than the memory cap of %llu bytes",
                      path, need, (unsigned long long)ac_mem_cap());
  for (int f = 0; f < AC_NDTYPES; f++) {
    if (!r->o_round[f]) continue;
    const ac_dtype_info *di = ac_dtype_get((ac_dtype)f);
    char name[64];
    snprintf(name, sizeof name, "o_exact_%s", di->name);
    void *d = add(&ms, name, di->npy, 4, sh, (size_t)di->bytes);
    for (int64_t x = 0; x < ne; x++) {
      int64_t s = ac_oracle_slot(r, x / p->dv);   /* rows not selected: 0 */
      if (s >= 0) ac_store_bits((ac_dtype)f, d, (size_t)x, r->o_round[f][s * p->dv + x % p->dv]);
    }
  }
  double *oa = add(&ms, "o_approx", "<f8", 4, sh, 8), *oe = add(&ms, "o_err", "<f8", 4, sh, 8);
  uint8_t *how = add(&ms, "o_how", "|u1", 4, sh, 1), *acc = add(&ms, "o_accept", "|u1", 4, sh, 1);
  double *bt[5];
  static const char *const bn[5] = {"budget_R", "budget_D", "budget_S", "budget_Sp", "budget_G"};
  for (int k = 0; k < 5; k++) bt[k] = add(&ms, bn[k], "<f8", 4, sh, 8);
  double *bf = add(&ms, "budget_F", "<f8", 5, sh, 8);
  int64_t nmu = r->nmu;
  double *mu = add(&ms, "budget_mu", "<f8", 1, &nmu, 8);
  for (int q = 0; q < r->nmu; q++) mu[q] = r->mu[q];
  for (int64_t x = 0; x < ne; x++) {
    int64_t s = ac_oracle_slot(r, x / p->dv);
    if (s < 0) { oa[x] = NAN; how[x] = AC_HOW_NOT_SELECTED; continue; }   /* rows not selected: o NaN, how 3, the rest 0 */
    const ac_oracle_elem *el = &r->elems[s * p->dv + x % p->dv];
    oa[x] = el->o; oe[x] = el->o_err; how[x] = el->how; acc[x] = el->accept;
    bt[0][x] = el->R; bt[1][x] = el->D; bt[2][x] = el->S; bt[3][x] = el->Sp; bt[4][x] = el->G;
    for (int q = 0; q < r->nmu; q++) bf[x * r->nmu + q] = el->F[q];
  }
  float *l32 = add(&ms, "lse_exact_f32", "<f4", 3, sh, 4);
  double *l64 = lse64 ? add(&ms, "lse_exact_f64", "<f8", 3, sh, 8) : NULL;
  double *la = add(&ms, "lse_approx", "<f8", 3, sh, 8), *le = add(&ms, "lse_err", "<f8", 3, sh, 8);
  uint8_t *lh = add(&ms, "lse_how", "|u1", 3, sh, 1), *lac = add(&ms, "lse_accept", "|u1", 3, sh, 1);
  uint8_t *sel = add(&ms, "row_selected", "|u1", 3, sh, 1);
  int64_t *vis = add(&ms, "row_visible", "<i8", 3, sh, 8);
  double *rm = add(&ms, "row_m", "<f8", 3, sh, 8), *rs = add(&ms, "row_max_abs_s", "<f8", 3, sh, 8);
  double *rz = add(&ms, "row_max_abs_z", "<f8", 3, sh, 8), *rcz = add(&ms, "row_lse_cZ", "<f8", 3, sh, 8);
  double *rls = add(&ms, "row_lse_s", "<f8", 3, sh, 8);
  for (int64_t x = 0; x < nr; x++) {
    const ac_oracle_row *w = &r->rows[x];
    l32[x] = w->lse_f32;
    if (l64) l64[x] = w->lse_f64;
    la[x] = w->lse; le[x] = w->lse_err; lh[x] = w->lse_how; lac[x] = w->lse_accept; sel[x] = w->selected;
    vis[x] = w->visible; rm[x] = w->m; rs[x] = w->max_abs_s; rz[x] = w->max_abs_z;
    rcz[x] = w->lse_cZ; rls[x] = w->lse_s;
  }
  int rc = ac_case_write_ex(c, path, ms.m, ms.n, e);
  for (int k = 0; k < ms.n; k++) free((void *)ms.m[k].data);
  free(ms.m);
  return rc;
}

/* The summary printed for one oracle run or the chunks of one. */
typedef struct {
  int64_t rows_done, nrows, n_exact, n_rounded, n_fallback, n_unresolved;
  long max_prec;
  double seconds;
  int hits, runs;
} summary;

static void add_summary(summary *s, const ac_oracle_result *r, int hit)
{
  s->rows_done += r->rows_done;
  s->nrows = r->nrows;
  s->n_exact += r->n_exact;
  s->n_rounded += r->n_rounded;
  s->n_fallback += r->n_fallback;
  s->n_unresolved += r->n_unresolved;
  if (r->max_prec > s->max_prec) s->max_prec = r->max_prec;
  s->seconds += r->seconds;
  s->hits += hit;
  s->runs++;
}

/* One oracle run (cache first); -1 with a message. */
static int run_one(const ac_case *c, const ac_oracle_opts *o, const char *dir, ac_oracle_result *r, int *hit, ac_err *e)
{
  *hit = dir && ac_oracle_cache_load(dir, c, o, r) == 0;
  if (*hit) return 0;
  if (ac_oracle_run(c, o, r, e)) return -1;
  if (dir) ac_oracle_cache_store(dir, c, o, r);
  return 0;
}

/* Rows per chunk when the selection is judged chunk by chunk. */
#define ORACLE_CHUNK_ROWS 256

/* Without -o only the summary is kept, so a selection whose stored elements would outweigh
 * the case's inputs is computed in chunks of rows, each summarized and freed: the memory is
 * the inputs plus one chunk (bench/oracle_mem). 1 when it ran chunked (s filled), 0 when the
 * selection is small enough for one run, -1 with a message. */
static int run_chunked(const ac_case *c, const ac_oracle_opts *o, const char *dir, summary *s, ac_err *e)
{
  const ac_problem *p = &c->p;
  int64_t nrows = p->batch * p->heads * p->tq, nl = 0;
  uint8_t *sel = ac_xmalloc((size_t)nrows);
  if (ac_oracle_select_rows(p, o->rows, o->rows_seed, sel, e)) {
    free(sel);
    return -1;
  }
  for (int64_t x = 0; x < nrows; x++) nl += sel[x];
  double inputs = (double)(ac_case_bytes(c, 'q') + ac_case_bytes(c, 'k') + ac_case_bytes(c, 'v'));
  if (nl <= ORACLE_CHUNK_ROWS || (double)nl * (double)p->dv * (double)sizeof(ac_oracle_elem) <= inputs) {
    free(sel);
    return 0;
  }
  memset(s, 0, sizeof *s);
  /* A chunk holds as many rows' elements as the inputs weigh (at least ORACLE_CHUNK_ROWS rows), in
   * whole heads when it holds one: every run decodes the heads it visits again. */
  int64_t chunk = (int64_t)(inputs / ((double)p->dv * (double)sizeof(ac_oracle_elem)));
  if (chunk < ORACLE_CHUNK_ROWS) chunk = ORACLE_CHUNK_ROWS;
  if (chunk >= p->tq) chunk -= chunk % p->tq;
  size_t cap = (size_t)chunk * 24 + 16;
  char *list = ac_xmalloc(cap);
  int64_t x = 0;
  int rc = 1;
  while (rc == 1 && x < nrows) {
    size_t len = 0;
    int64_t taken = 0;
    for (; x < nrows && taken < chunk; x++) {
      if (!sel[x]) continue;
      int64_t y = x;   /* a run of selected rows as one range */
      while (y + 1 < nrows && sel[y + 1] && taken + (y + 1 - x) < chunk) y++;
      len += (size_t)snprintf(list + len, cap - len, "%s%lld-%lld", len ? "," : "", (long long)x, (long long)y);
      taken += y - x + 1;
      x = y;
    }
    if (!taken) break;
    ac_oracle_opts oc = *o;
    oc.rows = list;
    ac_oracle_result r;
    int hit;
    if (run_one(c, &oc, dir, &r, &hit, e)) rc = -1;
    else add_summary(s, &r, hit);
    if (rc == 1) ac_oracle_result_free(&r);
  }
  free(list);
  free(sel);
  return rc;
}

int ac_cmd_oracle(int argc, char **argv)
{
  const char *cmd = "oracle", *out = NULL;
  ac_oracle_opts o;
  ac_oracle_opts_init(&o);
  int quiet = 0, cache = 1;
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, ":ho:q", lopts)) != -1) {
    const char *a = optarg;
    int64_t v;
    switch (ch) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case 'o': out = a; break;
    case 'q': quiet = 1; break;
    case O_ROWS: o.rows = a; break;
    case O_ROWSSEED:
      if (ac_parse_u64(a, &o.rows_seed)) return ac_cmd_usage_error(cmd, "bad --rows-seed '%s'", a);
      break;
    case O_THREADS:
      if (ac_parse_i64(a, &v) || v < 1 || v > 4096) return ac_cmd_usage_error(cmd, "bad --threads '%s'", a);
      o.threads = (int)v;
      break;
    case O_FORMATS:
      if (parse_formats(a, &o.formats)) return ac_cmd_usage_error(cmd, "bad --formats '%s'", a);
      break;
    case O_LSE64: o.lse_f64 = 1; break;
    case O_CAP:
      if (ac_parse_i64(a, &v) || v < 128 || v > (1L << 30)) return ac_cmd_usage_error(cmd, "bad --prec-cap '%s' (128 .. 2^30)", a);
      o.prec_cap = (long)v;
      break;
    case O_NOCACHE:
      cache = 0;
      ac_oracle_cache_disable();   /* also the per-sequence results of layout cases */
      break;
    case O_MEMCAP: {
      uint64_t cap;
      if (ac_parse_size(a, &cap) || cap == 0) return ac_cmd_usage_error(cmd, "bad value '%s' for --mem-cap", a);
      ac_set_mem_cap(cap);
      break;
    }
    default: return ac_cmd_getopt_error(cmd, ch, argv);
    }
  }
  if (optind >= argc) return ac_cmd_usage_error(cmd, "no case file given");
  if (optind + 1 < argc) return ac_cmd_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
  const char *path = argv[optind];
  ac_case c;
  ac_err e;
  if (ac_case_read(&c, path, &e)) {
    ac_cmd_error(cmd, "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  if (!c.p.scale_is_default && !isfinite(c.p.scale)) {
    ac_cmd_error(cmd, "%s: the scale %a is not finite", path, c.p.scale);
    ac_case_free(&c);
    return AC_EXIT_USAGE;
  }
  const char *dir = cache ? ac_oracle_cache_dir() : NULL;
  ac_oracle_result r;
  memset(&r, 0, sizeof r);
  summary s;
  int chunked = out ? 0 : run_chunked(&c, &o, dir, &s, &e), hit = 0;
  if (chunked == 0) {
    if (run_one(&c, &o, dir, &r, &hit, &e) == 0) {
      memset(&s, 0, sizeof s);
      add_summary(&s, &r, hit);
    } else {
      chunked = -1;
    }
  }
  if (chunked < 0) {
    ac_cmd_error(cmd, "%s: %s", path, e.msg);
    ac_case_free(&c);
    return AC_EXIT_USAGE;
  }
  int rc = AC_EXIT_OK;
  if (out && write_out(out, &c, &r, o.lse_f64, &e)) {
    ac_cmd_error(cmd, "%s", e.msg);
    rc = AC_EXIT_USAGE;
  }
  if (!quiet) {
    int64_t ne = s.rows_done * c.p.dv;
    printf("oracle: %s: %lld of %lld rows, %lld elements (%s, %s)\n", path, (long long)s.rows_done,
           (long long)s.nrows, (long long)ne, ac_dtype_name(c.p.dtype), ac_mask_name(c.p.mask));
    printf("  exact %lld, rounded by Ziv %lld (%lld past the first level), unresolved %lld\n",
           (long long)s.n_exact, (long long)s.n_rounded, (long long)s.n_fallback, (long long)s.n_unresolved);
    printf("  largest precision %ld bits; %.3f s%s\n", s.max_prec, s.seconds,
           s.hits == s.runs ? " (from the cache)" : s.hits ? " (partly from the cache)" : "");
    if (out && rc == 0) printf("  written: %s\n", out);
  }
  if (rc == AC_EXIT_OK && s.n_unresolved) {
    ac_cmd_error(cmd, "%s: %lld values unresolved under the precision cap (%ld bits): oracle error", path,
                 (long long)s.n_unresolved, o.prec_cap);
    rc = AC_EXIT_INTERNAL;
  }
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  return rc;
}
