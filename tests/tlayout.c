/* tlayout: serving layouts in the core and the oracle (src/layout.c, src/casefile_layout.c,
 * oracle/layout.c; docs/layouts.md): varlen and paged cases round-trip through case files; bad
 * layouts (cu_seqlens decreasing or not matching the tensors, block-table entries out of range,
 * cache_seqlens beyond the pages, page_size 0) are refused with one line and exit 2; the oracle
 * answers each sequence as a dense case (against a binary64 reference that walks the layout
 * itself: zero lengths, causal per sequence, shuffled and shared pages, windows, sinks); and a
 * case that differs only in its pages reuses the cached per-sequence results. */
#include "config.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include "casefile.h"
#include "layout.h"
#include "oracle.h"
#include "rng.h"
#include "testutil.h"
#include "variants.h"

static const char *tmp_path(const char *name)
{
  static char buf[8][4096];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 4096, "%s/%s", ac_test_tmpdir(), name);
  return p;
}

/* A layout case: H 2, KVH 1, d 4, f32 normal values (stream 0 of seed). */
static void layout_case(ac_case *c, const ac_layout_spec *s, ac_mask mask, uint64_t seed)
{
  ac_err e;
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = AC_F32;
  p->mask = mask;
  p->heads = 2, p->kv_heads = 1, p->dk = 4, p->dv = 4;
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  ac_rng r;
  ac_rng_init(&r, seed, 12);
  ck_assert_msg(ac_layout_build(c, s, &r, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "%s", e.msg);
  ac_rng_init(&r, seed, 0);
  void *t[3] = {c->q, c->k, c->v};
  for (int x = 0; x < 3; x++) {
    size_t n = ac_case_bytes(c, "qkv"[x]) / 4;
    for (size_t i = 0; i < n; i++) ac_store_bits(AC_F32, t[x], i, ac_encode_f64(AC_F32, ac_rng_normal(&r)));
  }
  ck_assert_msg(ac_layout_validate(c, &e) == 0, "%s", e.msg);
}

static const int64_t vq[] = {3, 0, 5, 1, 2}, vk[] = {4, 2, 0, 7, 2};
static const int64_t pq[] = {1, 2, 1, 1, 3}, pk[] = {33, 5, 0, 16, 17};

/* Bias [H][total_q][max_tk] (f32, normal), boolean mask [1][total_q][max_tk] (7 in 10 visible)
 * and per-sequence ALiBi slopes [nseq][H] on layout case c. */
static void add_seq_variants(ac_case *c, uint64_t seed)
{
  ac_err e;
  ac_problem *p = &c->p;
  uint32_t lay = p->f.used;
  ac_features_plain(p);   /* as a case read back has them */
  p->f.used = lay | AC_FEAT_BIAS | AC_FEAT_BOOL_MASK | AC_FEAT_ALIBI;
  p->f.bias_dtype = AC_F32, p->f.bias_b = 1, p->f.bias_h = p->heads;
  p->f.mask_b = p->f.mask_h = 1;
  p->f.alibi_per_batch = 1;
  ck_assert_msg(ac_features_alloc(c, &e) == 0, "%s", e.msg);
  ac_rng r;
  ac_rng_init(&r, seed, 11);
  for (int64_t x = 0; x < p->heads * p->tq * p->l.max_tk; x++) ((float *)c->bias)[x] = (float)ac_rng_normal(&r);
  for (int64_t x = 0; x < p->tq * p->l.max_tk; x++) c->bool_mask[x] = ac_rng_uniform(&r) < 0.7;
  for (int64_t x = 0; x < p->l.nseq * p->heads; x++) c->alibi_slopes[x] = (float)(0.0625 * (double)(x + 1));
  ck_assert_msg(ac_layout_validate(c, &e) == 0, "%s", e.msg);
}

START_TEST(cases_round_trip)
{
  ac_layout_spec vs = {.kind = AC_FEAT_VARLEN, .nseq = 5, .tq = vq, .tk = vk};
  ac_layout_spec ps = {.kind = AC_FEAT_PAGED, .nseq = 5, .tq = pq, .tk = pk, .page_size = 16, .spare_pages = 2,
                       .extra_cols = 1, .shuffle = 1};
  const ac_layout_spec *specs[] = {&vs, &ps};
  for (int k = 0; k < 2; k++) {
    ac_case a, b;
    ac_err e;
    layout_case(&a, specs[k], AC_MASK_CAUSAL_BR, 5);
    add_seq_variants(&a, 6);
    const char *f = tmp_path("rt.npz");
    ck_assert_msg(ac_case_write(&a, f, &e) == 0, "%s", e.msg);
    ck_assert_msg(ac_case_read(&b, f, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(ac_case_hash(&a), ac_case_hash(&b));
    ck_assert_int_eq(b.p.l.nseq, 5);
    ck_assert_int_eq(b.p.l.max_tq, k ? 3 : 5);
    ck_assert_int_eq(b.p.l.max_tk, k ? 33 : 7);
    for (int64_t s = 0; s < 5; s++) {
      ck_assert_int_eq(ac_layout_tq(&b, s), specs[k]->tq[s]);
      ck_assert_int_eq(ac_layout_tk(&b, s), specs[k]->tk[s]);
    }
    ck_assert_int_eq(memcmp(a.q, b.q, ac_case_bytes(&a, 'q')), 0);
    /* bias [H][total_q][max_tk], mask [1][total_q][max_tk], slopes [nseq][H] */
    ck_assert_int_eq(b.p.f.bias_h, 2);
    ck_assert_uint_eq(ac_feat_tensor_bytes(&b.p, AC_FT_BIAS), (uint64_t)(2 * b.p.tq * b.p.l.max_tk * 4));
    ck_assert_uint_eq(ac_feat_tensor_bytes(&b.p, AC_FT_BOOL_MASK), (uint64_t)(b.p.tq * b.p.l.max_tk));
    ck_assert_int_eq(ac_feat_tensor_count(&b.p, AC_FT_SLOPES), 10);
    for (int t = AC_FT_BIAS; t <= AC_FT_SLOPES; t++)
      ck_assert_int_eq(memcmp(*ac_feat_tensor_slot(&a, (ac_feat_tensor)t), *ac_feat_tensor_slot(&b, (ac_feat_tensor)t),
                              (size_t)ac_feat_tensor_bytes(&a.p, (ac_feat_tensor)t)), 0);
    /* the layout enters the hash */
    a.lay->cu_q[1]++;
    ck_assert_uint_ne(ac_case_hash(&a), ac_case_hash(&b));
    ac_case_free(&a);
    ac_case_free(&b);
  }
}
END_TEST

/* The in-memory refusal (the writer validates the layout too). */
static void expect_refused(const char *what, const ac_case *good, void (*spoil)(ac_case *), const char *needle)
{
  ac_case c;
  ac_err e;
  ck_assert_int_eq(ac_case_copy(&c, good, &e), 0);
  spoil(&c);
  ck_assert_msg(ac_layout_validate(&c, &e) != 0, "%s: accepted", what);
  ck_assert_msg(strstr(e.msg, needle), "%s: said '%s'", what, e.msg);
  ck_assert_msg(ac_case_write(&c, tmp_path("bad.npz"), &e) != 0, "%s: written", what);
  ac_case_free(&c);
}

static void cu_decreasing(ac_case *c) { c->lay->cu_q[2] = c->lay->cu_q[1] - 1; }
static void cu_mismatch(ac_case *c) { c->lay->cu_k[c->p.l.nseq] -= 1; }
static void bt_range(ac_case *c) { c->lay->block_table[0] = (int32_t)c->p.l.num_pages; }
static void cs_beyond(ac_case *c) { c->lay->cache_seqlens[1] = (int32_t)(c->p.l.max_pages * c->p.l.page_size + 1); }
static void ps_zero(ac_case *c) { c->p.l.page_size = 0; }

START_TEST(bad_layouts_are_refused)
{
  ac_layout_spec vs = {.kind = AC_FEAT_VARLEN, .nseq = 5, .tq = vq, .tk = vk};
  ac_layout_spec ps = {.kind = AC_FEAT_PAGED, .nseq = 5, .tq = pq, .tk = pk, .page_size = 16};
  ac_case v, p;
  layout_case(&v, &vs, AC_MASK_NONE, 1);
  layout_case(&p, &ps, AC_MASK_NONE, 1);
  expect_refused("cu decreasing", &v, cu_decreasing, "cu_seqlens_q is not non-decreasing");
  expect_refused("cu mismatch", &v, cu_mismatch, "cu_seqlens_k ends at 14 but the tensors hold 15 tokens");
  expect_refused("block table", &p, bt_range, "block_table[0][0] = 7 is out of range [0, 7)");
  expect_refused("cache_seqlens", &p, cs_beyond, "cache_seqlens[1] = 49 is beyond the 3 pages of 16 slots given");
  expect_refused("page_size", &p, ps_zero, "page_size must be >= 1");
  ac_case_free(&v);
  ac_case_free(&p);
}
END_TEST

/* src with member name's bytes passed through patch, as dst (libzip, stored uncompressed). */
static void patch_member(const char *src, const char *dst, const char *name, void (*patch)(unsigned char *, size_t *, int),
                         int arg)
{
  int err = 0;
  unlink(dst);
  zip_t *in = zip_open(src, ZIP_RDONLY, &err), *out = zip_open(dst, ZIP_CREATE | ZIP_EXCL, &err);
  ck_assert(in && out);
  zip_int64_t cnt = zip_get_num_entries(in, 0);
  for (zip_int64_t i = 0; i < cnt; i++) {
    const char *mn = zip_get_name(in, (zip_uint64_t)i, 0);
    zip_source_t *s;
    if (!strcmp(mn, name)) {
      zip_stat_t st;
      ck_assert_int_eq(zip_stat_index(in, (zip_uint64_t)i, 0, &st), 0);
      size_t n = (size_t)st.size;
      unsigned char *b = ac_xmalloc(n + 64);
      zip_file_t *f = zip_fopen_index(in, (zip_uint64_t)i, 0);
      ck_assert_int_eq(zip_fread(f, b, n), (zip_int64_t)n);
      zip_fclose(f);
      patch(b, &n, arg);
      s = zip_source_buffer(out, b, n, 1);
    } else {
      s = zip_source_zip(out, in, (zip_uint64_t)i, 0, 0, -1);
    }
    zip_int64_t idx = zip_file_add(out, mn, s, 0);
    ck_assert_int_ge(idx, 0);
    zip_set_file_compression(out, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
  }
  ck_assert_int_eq(zip_close(out), 0);
  zip_discard(in);
}

/* int32 number arg counted from the end of an npy member := -1 - its value... set to a value
 * that breaks it: the last element + 100 (arg < 0: the element |arg| from the end := 0). */
static void set_last_i32(unsigned char *b, size_t *n, int arg)
{
  int32_t v;
  size_t off = *n - 4 * (size_t)(arg < 0 ? -arg : 1);
  memcpy(&v, b + off, 4);
  v = arg < 0 ? 0 : v + arg;
  memcpy(b + off, &v, 4);
}

static void page_size_zero(unsigned char *b, size_t *n, int arg)
{
  (void)arg;
  b[*n] = 0;
  char *s = strstr((char *)b, "\"page_size\":16");
  ck_assert_ptr_nonnull(s);
  memmove(s + 13, s + 14, *n - (size_t)((unsigned char *)s + 14 - b));
  s[12] = '0';
  *n -= 1;
}

START_TEST(bad_files_exit_2_with_one_line)
{
  char cmd[8192], out[4096];
  const char *bin = ac_test_attncheck(), *good = tmp_path("good.npz"), *bad = tmp_path("badf.npz");
  const struct { const char *gen, *member; void (*patch)(unsigned char *, size_t *, int); int arg; const char *needle; } t[] = {
    {"--seqlens-q 3,2,4", "cu_seqlens_q.npy", set_last_i32, -2, "cu_seqlens_q is not non-decreasing"},
    {"--seqlens-q 3,2,4", "cu_seqlens_k.npy", set_last_i32, 1, "cu_seqlens_k ends at 10 but the tensors hold 9 tokens"},
    {"--cache-seqlens 33,5 --page-size 16", "block_table.npy", set_last_i32, 7, "block_table[1][2] = 6 is out of range"},
    {"--cache-seqlens 33,5 --page-size 16", "cache_seqlens.npy", set_last_i32, 60, "cache_seqlens[1] = 65 is beyond the 3 pages"},
    {"--cache-seqlens 33,5 --page-size 16", "meta.json", page_size_zero, 0, "page_size must be >= 1 (got 0)"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s gen --out %s --dk 4 %s 2>&1", bin, good, t[i].gen);
    ck_assert_msg(ac_test_system(cmd, out, sizeof out) == 0, "%s", out);
    patch_member(good, bad, t[i].member, t[i].patch, t[i].arg);
    const char *cmds[] = {"info", "oracle --no-cache -q"};
    for (int c = 0; c < 2; c++) {
      snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", bin, cmds[c], bad);
      int rc = ac_test_system(cmd, out, sizeof out);
      ck_assert_msg(rc == 2, "%s %s: exit %d: %s", cmds[c], t[i].member, rc, out);
      ck_assert_msg(strstr(out, t[i].needle), "%s: %s", t[i].member, out);
      ck_assert_msg(strchr(out, '\n') == strrchr(out, '\n'), "%s: more than one line: %s", t[i].member, out);
    }
  }
  snprintf(cmd, sizeof cmd, "%s gen --out %s --cache-seqlens 3 --page-size 0 2>&1", bin, good);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  ck_assert_msg(strstr(out, "page_size must be >= 1") && strchr(out, '\n') == strrchr(out, '\n'), "%s", out);
  snprintf(cmd, sizeof cmd, "%s gen --out %s --seqlens-q 3,x 2>&1", bin, good);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
  snprintf(cmd, sizeof cmd, "%s gen --out %s --seqlens-q 3 --t 4 2>&1", bin, good);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 2);
}
END_TEST

/* The binary64 reference of carrier row (h, token t of sequence b), walking the layout by hand. */
static void reference_row(const ac_case *c, int64_t b, int64_t h, int64_t i, double *o)
{
  const ac_problem *p = &c->p;
  const int32_t *cq = c->lay->cu_q;
  int64_t tq = cq[b + 1] - cq[b], tk, kvh = h / (p->heads / p->kv_heads);
  tk = c->lay->cu_k ? c->lay->cu_k[b + 1] - c->lay->cu_k[b] : c->lay->cache_seqlens[b];
  double m = -INFINITY, sum = 0, *s = ac_xcalloc((size_t)tk + 1, sizeof *s);
  for (int64_t j = 0; j < tk; j++) {
    int64_t pos = c->lay->cu_k ? c->lay->cu_k[b] + j
                               : (int64_t)c->lay->block_table[b * p->l.max_pages + j / p->l.page_size] * p->l.page_size +
                                     j % p->l.page_size;
    int vis = p->mask == AC_MASK_CAUSAL ? j <= i : p->mask == AC_MASK_CAUSAL_BR ? j <= i + tk - tq : 1;
    if (p->f.used & AC_FEAT_WINDOW) {
      int64_t ctr = i + tk - tq;
      vis &= (p->f.win_left < 0 || j >= ctr - p->f.win_left) && (p->f.win_right < 0 || j <= ctr + p->f.win_right);
    }
    double d = 0;
    for (int64_t x = 0; x < p->dk; x++)
      d += ac_load(AC_F32, c->q, ac_qidx(p, 0, h, cq[b] + i, x)) * ac_load(AC_F32, c->k, ac_kidx(p, 0, kvh, pos, x));
    /* per sequence: slopes row b, bias and mask row cu_q[b] + i of [H][total_q][max_tk], column j */
    size_t cell = (size_t)((h * p->tq + cq[b] + i) * p->l.max_tk + j);
    if ((p->f.used & AC_FEAT_BOOL_MASK) && !c->bool_mask[p->f.mask_h > 1 ? cell : cell - (size_t)(h * p->tq * p->l.max_tk)])
      vis = 0;
    double sc = d * p->scale;
    if (p->f.used & AC_FEAT_ALIBI) sc -= c->alibi_slopes[b * p->heads + h] * fabs((double)(i + tk - tq - j));
    if (p->f.used & AC_FEAT_BIAS) sc += ((const float *)c->bias)[cell];
    s[j] = vis ? sc : -INFINITY;
    if (s[j] > m) m = s[j];
  }
  double sink = p->f.used & AC_FEAT_SINKS ? c->sinks[h] : -INFINITY;
  if (sink > m) m = sink;
  for (int64_t x = 0; x < p->dv; x++) o[x] = 0;
  if (m == -INFINITY) goto done;
  for (int64_t j = 0; j < tk; j++) {
    if (s[j] == -INFINITY) continue;
    int64_t pos = c->lay->cu_k ? c->lay->cu_k[b] + j
                               : (int64_t)c->lay->block_table[b * p->l.max_pages + j / p->l.page_size] * p->l.page_size +
                                     j % p->l.page_size;
    double w = exp(s[j] - m);
    sum += w;
    for (int64_t x = 0; x < p->dv; x++) o[x] += w * ac_load(AC_F32, c->v, ac_vidx(p, 0, kvh, pos, x));
  }
  if (sink > -INFINITY) sum += exp(sink - m);
  for (int64_t x = 0; x < p->dv; x++) o[x] /= sum;
done:
  free(s);
}

static void check_against_reference(const ac_case *c)
{
  ac_oracle_opts o;
  ac_oracle_result r;
  ac_err e;
  ac_oracle_opts_init(&o);
  o.threads = 2;
  ck_assert_msg(ac_oracle_run(c, &o, &r, &e) == 0, "%s", e.msg);
  const ac_problem *p = &c->p;
  ck_assert_int_eq(r.nrows, p->heads * p->tq);
  for (int64_t b = 0; b < p->l.nseq; b++)
    for (int64_t h = 0; h < p->heads; h++)
      for (int64_t i = 0; i < ac_layout_tq(c, b); i++) {
        double ref[16];
        reference_row(c, b, h, i, ref);
        int64_t X = h * p->tq + c->lay->cu_q[b] + i;
        ck_assert(r.rows[X].selected);
        for (int64_t x = 0; x < p->dv; x++) {
          double got = ac_oracle_elem_at(&r, X, x)->o;
          ck_assert_msg(fabs(got - ref[x]) <= 1e-12 * (1 + fabs(ref[x])), "seq %lld head %lld row %lld elem %lld: %.17g vs %.17g",
                        (long long)b, (long long)h, (long long)i, (long long)x, got, ref[x]);
        }
      }
  ac_oracle_result_free(&r);
}

START_TEST(oracle_per_sequence)
{
  setenv("ATTNCHECK_CACHE", "off", 1);
  ac_layout_spec vs = {.kind = AC_FEAT_VARLEN, .nseq = 5, .tq = vq, .tk = vk};
  ac_layout_spec ps = {.kind = AC_FEAT_PAGED, .nseq = 5, .tq = pq, .tk = pk, .page_size = 3, .spare_pages = 2,
                       .shared_pages = 0, .shuffle = 1};
  static const int64_t sq[] = {2, 1, 4}, sk[] = {9, 7, 12};
  ac_layout_spec ss = {.kind = AC_FEAT_PAGED, .nseq = 3, .tq = sq, .tk = sk, .page_size = 2, .shared_pages = 3, .shuffle = 1};
  const ac_layout_spec *specs[] = {&vs, &ps, &ss};
  const ac_mask masks[] = {AC_MASK_CAUSAL_BR, AC_MASK_CAUSAL, AC_MASK_NONE};
  ac_err e;
  for (int k = 0; k < 3; k++)
    for (int var = 0; var < 3; var++) {
      ac_case c;
      layout_case(&c, specs[k], masks[k], 7 + (uint64_t)k);
      if (var == 2) {   /* a bias per head, a boolean mask for all heads and ALiBi slopes, per sequence */
        add_seq_variants(&c, 3 + (uint64_t)k);
      } else if (var) {   /* a window and sinks, per sequence */
        c.p.f.used |= AC_FEAT_WINDOW | AC_FEAT_SINKS;
        c.p.f.win_left = 2, c.p.f.win_right = 0;
        ck_assert_msg(ac_features_alloc(&c, &e) == 0, "%s", e.msg);
        c.sinks[0] = 0.5f, c.sinks[1] = -1.25f;
      }
      check_against_reference(&c);
      ac_case_free(&c);
    }
}
END_TEST

static int count_files(const char *dir)
{
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  for (struct dirent *x; (x = readdir(d));) n += x->d_name[0] != '.';
  closedir(d);
  return n;
}

START_TEST(only_the_layout_changed_reuses_the_cache)
{
  const char *dir = tmp_path("cache-layout");
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  setenv("ATTNCHECK_CACHE", dir, 1);
  ac_layout_spec ps = {.kind = AC_FEAT_PAGED, .nseq = 5, .tq = pq, .tk = pk, .page_size = 4, .spare_pages = 1, .shuffle = 1};
  ac_case a, b;
  layout_case(&a, &ps, AC_MASK_CAUSAL_BR, 3);
  layout_case(&b, &ps, AC_MASK_CAUSAL_BR, 4);   /* other pages, other values ... */
  memcpy(b.q, a.q, ac_case_bytes(&a, 'q'));
  const ac_problem *p = &a.p;
  for (int64_t s = 0; s < p->l.nseq; s++)   /* ... then a's keys in b's pages */
    for (int64_t j = 0; j < ac_layout_tk(&a, s); j++)
      for (int64_t x = 0; x < p->dk; x++) {
        ((float *)b.k)[ac_kidx(p, 0, 0, ac_layout_key(&b, s, j), x)] = ((float *)a.k)[ac_kidx(p, 0, 0, ac_layout_key(&a, s, j), x)];
        ((float *)b.v)[ac_vidx(p, 0, 0, ac_layout_key(&b, s, j), x)] = ((float *)a.v)[ac_vidx(p, 0, 0, ac_layout_key(&a, s, j), x)];
      }
  ck_assert_uint_ne(ac_case_hash(&a), ac_case_hash(&b));
  ac_oracle_opts o;
  ac_oracle_result ra, rb;
  ac_err e;
  ac_oracle_opts_init(&o);
  ck_assert_msg(ac_oracle_run(&a, &o, &ra, &e) == 0, "%s", e.msg);
  int n = count_files(dir);
  ck_assert_int_eq(n, 5);   /* one dense case per sequence, none for the layout case */
  ck_assert_msg(ac_oracle_run(&b, &o, &rb, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(count_files(dir), n);
  ck_assert_int_eq(memcmp(ra.o_round[AC_F32], rb.o_round[AC_F32], (size_t)(ra.nrows * p->dv) * 8), 0);
  for (int64_t x = 0; x < ra.nrows; x++) ck_assert(ra.rows[x].lse_f32 == rb.rows[x].lse_f32 || isnan(ra.rows[x].lse_f32));
  ac_oracle_result_free(&ra);
  ac_oracle_result_free(&rb);
  ac_case_free(&a);
  ac_case_free(&b);
  setenv("ATTNCHECK_CACHE", "off", 1);
}
END_TEST

START_TEST(explain_names_a_sequence)
{
  char cmd[8192], out[16384];
  const char *bin = ac_test_attncheck(), *f = tmp_path("ex.npz"), *d = tmp_path("dense.npz");
  snprintf(cmd, sizeof cmd, "%s gen --out %s --dk 4 --seqlens-q 2,3 --seqlens-k 5,0 --mask causal-bottom-right >/dev/null && "
           "%s gen --out %s --dk 4 --t 3 >/dev/null", bin, f, bin, d);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  setenv("ATTNCHECK_CACHE", "off", 1);
  snprintf(cmd, sizeof cmd, "%s explain %s --seq 0 --row 1 2>&1", bin, f);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "sequence 0 of 2: 2 queries (packed tokens from 0), 5 keys") && strstr(out, "5 of 5 keys visible"), "%s", out);
  snprintf(cmd, sizeof cmd, "%s explain %s --seq 1 --row 2 2>&1", bin, f);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "0 keys (one zero key") && strstr(out, "no visible key"), "%s", out);
  const char *bad[][2] = {{f, "--row 0"}, {f, "--seq 2 --row 0"}, {f, "--seq 0 --row 2"}, {d, "--seq 0 --row 0"}};
  for (size_t i = 0; i < 4; i++) {
    snprintf(cmd, sizeof cmd, "%s explain %s %s 2>&1", bin, bad[i][0], bad[i][1]);
    int rc = ac_test_system(cmd, out, sizeof out);
    ck_assert_msg(rc == 2 && strchr(out, '\n') == strrchr(out, '\n'), "%s: exit %d: %s", bad[i][1], rc, out);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("layout");
  TCase *tc = tcase_create("layout");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, cases_round_trip);
  tcase_add_test(tc, bad_layouts_are_refused);
  tcase_add_test(tc, bad_files_exit_2_with_one_line);
  tcase_add_test(tc, oracle_per_sequence);
  tcase_add_test(tc, only_the_layout_changed_reuses_the_cache);
  tcase_add_test(tc, explain_names_a_sequence);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
