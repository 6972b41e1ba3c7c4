/* tcasefile: case files round trip bit for bit (every dtype, mask, layout, odd scales), the hash
 * follows the content, the worked examples are what the docs say, and every malformed-file class
 * is refused with one line naming the file. */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include "casefile.h"
#include "rng.h"
#include "testutil.h"

static const char *tmp_path(const char *name)
{
  static char buf[8][4096];
  static int k;
  char *b = buf[k++ % 8];
  snprintf(b, 4096, "%s/%s", ac_test_tmpdir(), name);
  return b;
}

static void bthd_strides(int64_t st[4], int64_t H, int64_t T, int64_t D, int64_t pad)
{
  st[3] = 1;
  st[1] = D + pad;
  st[2] = H * (D + pad);
  st[0] = T * H * (D + pad);
}

/* A case with random bit patterns (NaN and infinity patterns included: files carry bits, not values). */
static void make_case(ac_case *c, ac_dtype t, ac_mask m, int64_t B, int64_t H, int64_t KVH, int64_t tq,
                      int64_t tk, int64_t dk, int64_t dv, int strided, int with_o, ac_rng *r)
{
  ac_err e;
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = t;
  p->mask = m;
  p->batch = B;
  p->heads = H;
  p->kv_heads = KVH;
  p->tq = tq;
  p->tk = tk;
  p->dk = dk;
  p->dv = dv;
  p->scale_is_default = 1;
  p->scale = ac_problem_scale(p);
  if (strided) {
    bthd_strides(p->q_stride, H, tq, dk, 3);
    bthd_strides(p->k_stride, KVH, tk, dk, 1);
    bthd_strides(p->v_stride, KVH, tk, dv, 2);
    bthd_strides(p->o_stride, H, tq, dv, 5);
  }
  ck_assert_msg(ac_case_alloc(c, &e) == 0, AC_SEED_FMT "%s", AC_SEED_ARG, e.msg);
  size_t es = ac_dtype_size(t);
  size_t nq = ac_case_bytes(c, 'q') / es, nk = ac_case_bytes(c, 'k') / es, nv = ac_case_bytes(c, 'v') / es;
  uint64_t mask = es == 8 ? ~0ULL : (1ULL << (8 * es)) - 1;
  for (size_t i = 0; i < nq; i++) ac_store_bits(t, c->q, i, ac_rng_next(r) & mask);
  for (size_t i = 0; i < nk; i++) ac_store_bits(t, c->k, i, ac_rng_next(r) & mask);
  for (size_t i = 0; i < nv; i++) ac_store_bits(t, c->v, i, ac_rng_next(r) & mask);
  if (with_o) {
    c->has_o = c->has_lse = 1;
    size_t no = ac_case_bytes(c, 'o') / es, rows = (size_t)(B * H * tq);
    c->o = ac_xmalloc(no * es);
    c->lse = ac_xmalloc(rows * sizeof(float));
    for (size_t i = 0; i < no; i++) ac_store_bits(t, c->o, i, ac_rng_next(r) & mask);
    for (size_t i = 0; i < rows; i++) ac_store_bits(AC_F32, c->lse, i, ac_rng_next(r) & 0xffffffffu);
  }
  c->seed = ac_rng_next(r);
  c->case_index = (int64_t)ac_rng_below(r, 100000);
  snprintf(c->generator, sizeof c->generator, "test-family");
  c->params_json = ac_xstrdup("{\"a\":1,\"b\":[1,2],\"c\":\"x\"}");
}

static void assert_same(const ac_case *a, const ac_case *b, const char *what)
{
  const ac_problem *p = &a->p, *q = &b->p;
  ck_assert_msg(p->dtype == q->dtype && p->mask == q->mask && p->batch == q->batch && p->heads == q->heads &&
                    p->kv_heads == q->kv_heads && p->tq == q->tq && p->tk == q->tk && p->dk == q->dk &&
                    p->dv == q->dv,
                AC_SEED_FMT "%s: problem differs", AC_SEED_ARG, what);
  ck_assert_msg(p->scale_is_default == q->scale_is_default && memcmp(&p->scale, &q->scale, 8) == 0,
                AC_SEED_FMT "%s: scale %a (default %d) read back as %a (default %d)", AC_SEED_ARG, what, p->scale,
                p->scale_is_default, q->scale, q->scale_is_default);
  ac_problem pp = *p;
  int zero = 1;
  for (int i = 0; i < 4; i++) zero &= !pp.q_stride[i] && !pp.k_stride[i] && !pp.v_stride[i] && !pp.o_stride[i];
  if (zero) ac_problem_default_strides(&pp);
  for (int i = 0; i < 4; i++)
    ck_assert_msg(pp.q_stride[i] == q->q_stride[i] && pp.k_stride[i] == q->k_stride[i] &&
                      pp.v_stride[i] == q->v_stride[i] && pp.o_stride[i] == q->o_stride[i],
                  AC_SEED_FMT "%s: stride %d differs", AC_SEED_ARG, what, i);
  ck_assert(memcmp(a->q, b->q, ac_case_bytes(a, 'q')) == 0);
  ck_assert(memcmp(a->k, b->k, ac_case_bytes(a, 'k')) == 0);
  ck_assert(memcmp(a->v, b->v, ac_case_bytes(a, 'v')) == 0);
  ck_assert_int_eq(a->has_o, b->has_o);
  ck_assert_int_eq(a->has_lse, b->has_lse);
  if (a->has_o) ck_assert(memcmp(a->o, b->o, ac_case_bytes(a, 'o')) == 0);
  if (a->has_lse) ck_assert(memcmp(a->lse, b->lse, (size_t)(p->batch * p->heads * p->tq) * 4) == 0);
  ck_assert_uint_eq(a->seed, b->seed);
  ck_assert_int_eq(a->case_index, b->case_index);
  ck_assert_str_eq(a->generator, b->generator);
  ck_assert_str_eq(b->tool_version, PACKAGE_VERSION);
  json_object *ja = json_tokener_parse(a->params_json), *jb = json_tokener_parse(b->params_json);
  ck_assert_msg(json_object_equal(ja, jb), "%s: params %s read back as %s", what, a->params_json, b->params_json);
  json_object_put(ja);
  json_object_put(jb);
  ck_assert_uint_eq(ac_case_hash(a), ac_case_hash(b));
}

START_TEST(every_dtype_mask_layout_and_scale_round_trips_bit_for_bit)
{
  static const double scales[] = {-0.5, 0.0, -0.0, 0x1.6a09e667f3bcdp-1, 0x1.6a09e667f3bcep-1, 0x1p-1074,
                                  0x1.fffffffffffffp+1023, 3.0};
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 1);
  int n = 0;
  for (int t = 0; t < AC_NDTYPES; t++)
    for (int m = 0; m <= AC_MASK_CAUSAL_BR; m++)
      for (int variant = 0; variant < 3; variant++, n++) {
        ac_case c, d;
        ac_err e;
        int64_t kvh = variant == 1 ? 2 : 4;
        make_case(&c, (ac_dtype)t, (ac_mask)m, 1 + variant % 2, 4, kvh, 3 + variant, 5 - variant, 4 + variant,
                  3, variant != 0, variant == 2, &r);
        if (n % 4 != 0) {
          c.p.scale_is_default = 0;
          c.p.scale = scales[n % 8];
        }
        char what[96];
        snprintf(what, sizeof what, "%s/%s/variant %d", ac_dtype_name((ac_dtype)t), ac_mask_name((ac_mask)m),
                 variant);
        const char *p = tmp_path("rt.npz");
        ck_assert_msg(ac_case_write(&c, p, &e) == 0, AC_SEED_FMT "%s: %s", AC_SEED_ARG, what, e.msg);
        ck_assert_msg(ac_case_read(&d, p, &e) == 0, AC_SEED_FMT "%s: %s", AC_SEED_ARG, what, e.msg);
        assert_same(&c, &d, what);
        ac_case_free(&c);
        ac_case_free(&d);
      }
}
END_TEST

START_TEST(scale_is_stored_as_default_or_exact_hex)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 2);
  ac_case c, d;
  ac_err e;
  make_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 0, 0, &r);
  const char *p = tmp_path("scale.npz");
  /* Explicit scale equal to the default value is not "default": the flag survives. */
  c.p.scale_is_default = 0;
  c.p.scale = 0x1.6a09e667f3bcdp-1;
  ck_assert_int_eq(ac_case_write(&c, p, &e), 0);
  ck_assert_int_eq(ac_case_read(&d, p, &e), 0);
  ck_assert_int_eq(d.p.scale_is_default, 0);
  ck_assert_msg(d.p.scale == 0x1.6a09e667f3bcdp-1, "%a", d.p.scale);
  ac_case x = c;
  x.p.scale_is_default = 1;
  ck_assert_uint_ne(ac_case_hash(&c), ac_case_hash(&x));
  ac_case_free(&d);
  c.p.scale = -0.0;
  ck_assert_int_eq(ac_case_write(&c, p, &e), 0);
  ck_assert_int_eq(ac_case_read(&d, p, &e), 0);
  ck_assert_msg(d.p.scale == 0 && signbit(d.p.scale), "-0 read back as %a", d.p.scale);
  ac_case_free(&d);
  c.p.scale = NAN;
  ck_assert_int_eq(ac_case_write(&c, p, &e), -1);
  c.p.scale_is_default = 1;
  ck_assert_int_eq(ac_case_write(&c, p, &e), 0);
  ck_assert_int_eq(ac_case_read(&d, p, &e), 0);
  ck_assert_int_eq(d.p.scale_is_default, 1);
  ck_assert_msg(d.p.scale == 0x1.6a09e667f3bcdp-1, "default scale for dk 2 read as %a", d.p.scale);
  ac_case_free(&d);
  ac_case_free(&c);
}
END_TEST

START_TEST(hash_follows_content_not_provenance)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 3);
  ac_case c, d;
  ac_err e;
  make_case(&c, AC_BF16, AC_MASK_CAUSAL, 2, 2, 1, 3, 4, 4, 2, 0, 0, &r);
  uint64_t h = ac_case_hash(&c);
  ck_assert_int_eq(ac_case_copy(&d, &c, &e), 0);
  ck_assert_uint_eq(ac_case_hash(&d), h);
  d.seed ^= 1;
  d.case_index++;
  snprintf(d.generator, sizeof d.generator, "other");
  ck_assert_uint_eq(ac_case_hash(&d), h);
  ((uint16_t *)d.v)[5] ^= 1;
  ck_assert_uint_ne(ac_case_hash(&d), h);
  ((uint16_t *)d.v)[5] ^= 1;
  ck_assert_uint_eq(ac_case_hash(&d), h);
  d.p.mask = AC_MASK_CAUSAL_BR;
  ck_assert_uint_ne(ac_case_hash(&d), h);
  d.p.mask = AC_MASK_CAUSAL;
  ac_problem_default_strides(&d.p);
  ck_assert_uint_eq(ac_case_hash(&d), h);
  bthd_strides(d.p.q_stride, 2, 3, 4, 0);
  ck_assert_uint_ne(ac_case_hash(&d), h);
  ac_case_free(&d);
  ac_case_free(&c);
}
END_TEST

START_TEST(extra_members_are_written_and_ignored_by_the_case_reader)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 4);
  ac_case c, d;
  ac_err e;
  make_case(&c, AC_F16, AC_MASK_NONE, 1, 2, 2, 2, 3, 2, 2, 0, 1, &r);
  float oe[1 * 2 * 2 * 2] = {1, 2, 3, 4, 5, 6, 7, 8};
  ac_npz_member x[2];
  memset(x, 0, sizeof x);
  snprintf(x[0].name, sizeof x[0].name, "o_exact_f32");
  snprintf(x[0].descr, sizeof x[0].descr, "<f4");
  x[0].ndim = 4;
  x[0].shape[0] = 1, x[0].shape[1] = 2, x[0].shape[2] = 2, x[0].shape[3] = 2;
  x[0].data = oe;
  x[0].nbytes = sizeof oe;
  snprintf(x[1].name, sizeof x[1].name, "report.json");
  x[1].data = "{}";
  x[1].nbytes = 2;
  const char *p = tmp_path("extra.npz");
  ck_assert_msg(ac_case_write_ex(&c, p, x, 2, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_case_read(&d, p, &e) == 0, "%s", e.msg);
  assert_same(&c, &d, "extras");
  ac_case_free(&d);
  ac_npz *z = ac_npz_open(p, 1 << 20, &e);
  ck_assert_ptr_nonnull(z);
  ac_npz_member m;
  ck_assert_int_eq(ac_npz_read(z, "o_exact_f32", &m, &e), 0);
  ck_assert(m.ndim == 4 && !strcmp(m.descr, "<f4") && memcmp(m.data, oe, sizeof oe) == 0);
  ck_assert_int_eq(ac_npz_read(z, "report.json", &m, &e), 0);
  ck_assert(m.nbytes == 2 && !memcmp(m.data, "{}", 2));
  ac_npz_close_reader(z);
  snprintf(x[1].name, sizeof x[1].name, "lse");
  ck_assert_int_eq(ac_case_write_ex(&c, tmp_path("reserved.npz"), x, 2, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "reserved"));
  ac_case_free(&c);
}
END_TEST

START_TEST(failed_write_leaves_the_old_file)
{
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 5);
  ac_case c, d;
  ac_err e;
  make_case(&c, AC_F32, AC_MASK_NONE, 1, 1, 1, 2, 2, 2, 2, 0, 0, &r);
  const char *p = tmp_path("keep.npz");
  ck_assert_int_eq(ac_case_write(&c, p, &e), 0);
  uint64_t h = ac_case_hash(&c);
  c.p.scale_is_default = 0;
  c.p.scale = INFINITY;
  ck_assert_int_eq(ac_case_write(&c, p, &e), -1);
  ck_assert_int_eq(ac_case_read(&d, p, &e), 0);
  ck_assert_uint_eq(ac_case_hash(&d), h);
  ac_case_free(&d);
  ck_assert_int_eq(ac_case_write(&c, tmp_path("no/such/dir/x.npz"), &e), -1);
  ac_case_free(&c);
}
END_TEST

START_TEST(worked_examples_are_what_the_docs_say)
{
  ac_case c, d;
  ac_err e;
  ck_assert_int_eq(ac_case_example(&c, "tiny3", &e), 0);
  ck_assert(c.p.dtype == AC_F32 && c.p.mask == AC_MASK_CAUSAL && c.p.batch == 1 && c.p.heads == 1 &&
            c.p.tq == 3 && c.p.tk == 3 && c.p.dk == 2 && c.p.dv == 2 && c.p.scale_is_default);
  ck_assert_msg(ac_problem_scale(&c.p) == 0x1.6a09e667f3bcdp-1, "%a", ac_problem_scale(&c.p));
  static const float x[6] = {1, 0, 0, 1, 1, 1};
  ck_assert(!memcmp(c.q, x, sizeof x) && !memcmp(c.k, x, sizeof x) && !memcmp(c.v, x, sizeof x));
  ck_assert_str_eq(c.generator, "example:tiny3");
  const char *p = tmp_path("tiny3.npz");
  ck_assert_int_eq(ac_case_write(&c, p, &e), 0);
  ck_assert_int_eq(ac_case_read(&d, p, &e), 0);
  assert_same(&c, &d, "tiny3");
  ac_case_free(&c);
  ac_case_free(&d);

  ck_assert_int_eq(ac_case_example(&c, "andrea-120m", &e), 0);
  ck_assert(c.p.dtype == AC_F32 && c.p.mask == AC_MASK_CAUSAL && c.p.batch == 1 && c.p.heads == 12 &&
            c.p.kv_heads == 12 && c.p.tq == 1024 && c.p.tk == 1024 && c.p.dk == 64 && c.p.dv == 64);
  ck_assert_uint_eq(c.seed, 1);
  ac_rng r;
  ac_rng_init(&r, 1, 0);
  size_t n = 12 * 1024 * 64;
  const float *t[3] = {c.q, c.k, c.v};
  for (int i = 0; i < 3; i++)
    for (size_t j = 0; j < n; j++) {
      float want = (float)ac_rng_normal(&r);
      if (memcmp(&want, &t[i][j], 4) != 0)
        ck_abort_msg("andrea-120m tensor %d element %zu: %a, want %a", i, j, (double)t[i][j], (double)want);
    }
  ac_case_free(&c);
  ck_assert_int_eq(ac_case_example(&c, "nope", &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "nope"));
  const char *const *names = ac_case_example_names();
  ck_assert_str_eq(names[0], "tiny3");
  ck_assert_str_eq(names[1], "andrea-120m");
  ck_assert_ptr_null(names[2]);
}
END_TEST

/* ---- malformed files ---------------------------------------------------- */

static const char *good_file(void)
{
  static char p[4096];
  if (!p[0]) {
    ac_rng r;
    ac_rng_init(&r, ac_test_seed(), 6);
    ac_case c;
    ac_err e;
    make_case(&c, AC_F32, AC_MASK_CAUSAL, 1, 2, 1, 3, 3, 2, 2, 0, 1, &r);
    snprintf(p, sizeof p, "%s", tmp_path("good.npz"));
    ck_assert_msg(ac_case_write(&c, p, &e) == 0, "%s", e.msg);
    ac_case_free(&c);
  }
  return p;
}

static unsigned char *slurp(const char *path, size_t *n)
{
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = ac_xmalloc((size_t)len + 1);
  ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return b;
}

static void spit(const char *path, const void *b, size_t n)
{
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(b, 1, n, f), n);
  fclose(f);
}

/* Copy the good file to dst with member zname replaced by bytes (NULL: removed). */
static const char *with_member(const char *dst_name, const char *zname, const void *bytes, size_t n)
{
  const char *src = good_file(), *dst = tmp_path(dst_name);
  int err = 0;
  unlink(dst);
  zip_t *in = zip_open(src, ZIP_RDONLY, &err);
  zip_t *out = zip_open(dst, ZIP_CREATE | ZIP_EXCL, &err);
  ck_assert(in && out);
  zip_int64_t cnt = zip_get_num_entries(in, 0);
  for (zip_int64_t i = 0; i < cnt; i++) {
    const char *name = zip_get_name(in, (zip_uint64_t)i, 0);
    zip_source_t *s;
    if (!strcmp(name, zname)) {
      if (!bytes) continue;
      void *copy = n ? ac_xmalloc(n) : NULL;
      if (n) memcpy(copy, bytes, n);
      s = zip_source_buffer(out, copy, n, n != 0);
    } else {
      s = zip_source_zip(out, in, (zip_uint64_t)i, 0, 0, -1);
    }
    zip_int64_t idx = zip_file_add(out, name, s, 0);
    ck_assert_int_ge(idx, 0);
    zip_set_file_compression(out, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
  }
  ck_assert_int_eq(zip_close(out), 0);
  zip_discard(in);
  return dst;
}

static unsigned char *good_member(const char *zname, size_t *n)
{
  int err = 0;
  zip_t *za = zip_open(good_file(), ZIP_RDONLY, &err);
  zip_stat_t st;
  ck_assert_int_eq(zip_stat(za, zname, 0, &st), 0);
  unsigned char *b = ac_xmalloc(st.size + 1);
  zip_file_t *f = zip_fopen(za, zname, 0);
  ck_assert_int_eq(zip_fread(f, b, st.size), (zip_int64_t)st.size);
  zip_fclose(f);
  zip_discard(za);
  b[st.size] = 0;
  *n = st.size;
  return b;
}

static void expect_refusal(const char *path, const char *needle)
{
  ac_case c;
  ac_err e;
  e.msg[0] = 0;
  int rc = ac_case_read(&c, path, &e);
  if (rc == 0) ac_case_free(&c);
  ck_assert_msg(rc == -1, "%s was read, expected a refusal mentioning '%s'", path, needle);
  ck_assert_msg(strstr(e.msg, path) != NULL, "message does not name the file: %s", e.msg);
  ck_assert_msg(strstr(e.msg, needle) != NULL, "message '%s' lacks '%s'", e.msg, needle);
  ck_assert_msg(strchr(e.msg, '\n') == NULL, "message is not one line: %s", e.msg);
}

/* meta.json of the good file with key set to the JSON text value (NULL: removed). */
static const char *with_meta(const char *dst, const char *key, const char *value, int drop_strides)
{
  size_t n;
  char *text = (char *)good_member("meta.json", &n);
  json_object *m = json_tokener_parse(text);
  ck_assert_ptr_nonnull(m);
  if (value)
    json_object_object_add(m, key, json_tokener_parse(value));
  else
    json_object_object_del(m, key);
  if (drop_strides) json_object_object_del(m, "strides");
  const char *s = json_object_to_json_string(m);
  const char *p = with_member(dst, "meta.json", s, strlen(s));
  json_object_put(m);
  free(text);
  return p;
}

START_TEST(meta_json_errors_are_refused)
{
  static const struct { const char *key, *value; int drop; const char *needle; } t[] = {
    {"schema", "2", 0, "schema 2"},
    {"schema", NULL, 0, "lacks \"schema\""},
    {"dtype", "\"f128\"", 0, "unknown dtype"},
    {"dtype", "\"f64\"", 0, "descr '<f4'"},
    {"mask", "\"sliding\"", 0, "unknown mask"},
    {"batch", "0", 0, "batch must be >= 1"},
    {"heads", "-3", 0, "heads must be >= 1"},
    {"dk", "\"2\"", 0, "not an integer"},
    {"dk", "2.5", 0, "not an integer"},
    {"batch", "1099511627776", 1, "memory cap"},
    {"tq", "4611686018427387904", 1, "overflow"},
    {"tq", "4", 1, "has shape [1,2,3,2], meta.json implies [1,2,4,2]"},
    {"kv_heads", "3", 1, "multiple"},
    {"scale", "\"0.5\"", 0, "hex float"},
    {"scale", "\"inf\"", 0, "hex float"},
    {"scale", "\"0x1p+5000\"", 0, "hex float"},
    {"scale", "\"0x1.00000000000008p+0\"", 0, "more significant bits than binary64 holds (it would round to 0x1p+0"},
    {"scale", "\"-0x1.6a09e667f3bcc9p-1\"", 0, "more significant bits than binary64 holds"},
    {"scale", "\"0x1.8p-1074\"", 0, "more significant bits than binary64 holds (it would round to 0x0.0000000000002p-1022"},
    {"scale", "\"0x1p-1075\"", 0, "underflows to 0"},
    {"scale", "\"-0x1p-99999999999\"", 0, "underflows to 0"},
    {"scale", "\"0x1p0\\n\"", 0, "hex float"},
    {"scale", "0.5", 0, "not a string"},
    {"strides", "{\"q\":[12,6,-2,1],\"k\":[6,6,2,1],\"v\":[6,6,2,1],\"o\":[12,6,2,1]}", 0, "negative"},
    {"strides", "{\"q\":[12,6,2]}", 0, "array of 4 integers"},
    {"strides", "{\"q\":[1,1,1,1],\"k\":[6,6,2,1],\"v\":[6,6,2,1],\"o\":[12,6,2,1]}", 0, "overlap"},
    {"strides", "{\"q\":[12,4611686018427387904,2,1],\"k\":[6,6,2,1],\"v\":[6,6,2,1],\"o\":[12,6,2,1]}", 0,
     "memory cap"},
    {"params", "[1]", 0, "params"},
    {"seed", "-1", 0, "seed"},
  };
  char name[64];
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    snprintf(name, sizeof name, "meta%zu.npz", i);
    expect_refusal(with_meta(name, t[i].key, t[i].value, t[i].drop), t[i].needle);
  }
  static const struct { const char *text, *needle; } raw[] = {
    {"{\"schema\": 1, \"dtype\": ", "not valid JSON"},
    {"[1, 2, 3]", "not a JSON object"},
    {"", "not valid JSON"},
    {"{\"schema\": 1} x", "meta.json"},
    {"{\"schema\": 1,}", "not valid JSON"},
  };
  for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
    snprintf(name, sizeof name, "raw%zu.npz", i);
    expect_refusal(with_member(name, "meta.json", raw[i].text, strlen(raw[i].text)), raw[i].needle);
  }
  size_t big = (1 << 20) + 10;
  char *b = ac_xmalloc(big);
  memset(b, ' ', big);
  b[0] = '{';
  b[big - 1] = '}';
  expect_refusal(with_member("bigmeta.npz", "meta.json", b, big), "exceeds");
  free(b);
}
END_TEST

/* q.npy of the good file with its header dict replaced (data kept), as npy version ver. */
static const char *with_q_header(const char *dst, const char *dict, int ver, size_t extra_pad, long data_delta)
{
  size_t n;
  unsigned char *q = good_member("q.npy", &n);
  size_t hlen = q[8] | (size_t)q[9] << 8, data = n - 10 - hlen;
  size_t pre = ver == 1 ? 10 : 12, dl = strlen(dict);
  size_t h = dl + extra_pad + 1;
  size_t total = pre + h + data;
  unsigned char *b = ac_xmalloc(total + 16);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (unsigned char)ver;
  b[7] = 0;
  if (ver == 1) {
    b[8] = (unsigned char)h;
    b[9] = (unsigned char)(h >> 8);
  } else {
    for (int i = 0; i < 4; i++) b[8 + i] = (unsigned char)(h >> (8 * i));
  }
  memcpy(b + pre, dict, dl);
  memset(b + pre + dl, ' ', extra_pad);
  b[pre + h - 1] = '\n';
  memcpy(b + pre + h, q + 10 + hlen, data);
  const char *p = with_member(dst, "q.npy", b, (size_t)((long)total + data_delta));
  free(b);
  free(q);
  return p;
}

START_TEST(npy_member_errors_are_refused)
{
  const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3, 2), }";
  /* The rebuilt member itself is accepted: the harness is sound. */
  {
    ac_case c;
    ac_err e;
    const char *p = with_q_header("npyok.npz", ok, 1, 3, 0);
    ck_assert_msg(ac_case_read(&c, p, &e) == 0, "%s", e.msg);
    ac_case_free(&c);
    p = with_q_header("npyv2.npz", ok, 2, 0, 0);
    ck_assert_msg(ac_case_read(&c, p, &e) == 0, "%s", e.msg);
    ac_case_free(&c);
  }
  {
    /* the same bytes labelled Fortran order (numpy.save of a transposed array): read in C order */
    ac_case a, f;
    ac_err e;
    ck_assert(ac_case_read(&a, with_q_header("corder.npz", ok, 1, 0, 0), &e) == 0);
    const char *p = with_q_header("fortran.npz", "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2, 3, 2), }",
                                  1, 0, 0);
    ck_assert_msg(ac_case_read(&f, p, &e) == 0, "%s", e.msg);
    for (int h = 0; h < 2; h++)
      for (int t = 0; t < 3; t++)
        for (int d = 0; d < 2; d++)   /* Fortran strides of (1, 2, 3, 2): 1, 1, 2, 6 */
          ck_assert(ac_load(AC_F32, f.q, (size_t)(h * 6 + t * 2 + d)) == ac_load(AC_F32, a.q, (size_t)(h + 2 * t + 6 * d)));
    ac_case_free(&a);
    ac_case_free(&f);
  }
  expect_refusal(with_q_header("long.npz", ok, 2, 20000, 0), "npy header too long");
  expect_refusal(with_q_header("bigend.npz", "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2, 3, 2), }",
                               1, 0, 0),
                 "descr '>f4'");
  expect_refusal(with_q_header("shape.npz", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2, 3), }",
                               1, 0, 0),
                 "has shape [1,2,2,3]");
  expect_refusal(with_q_header("ndim.npz", "{'descr': '<f4', 'fortran_order': False, 'shape': (12,), }", 1, 0, 0),
                 "has shape [12]");
  expect_refusal(with_q_header("short.npz", ok, 1, 0, -4), "data bytes");
  expect_refusal(with_q_header("longdata.npz", ok, 1, 0, +4), "data bytes");
  expect_refusal(with_q_header("key.npz", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3, 2), 'x': 1}",
                               1, 0, 0),
                 "unknown npy header key");
  expect_refusal(with_q_header("nokey.npz", "{'descr': '<f4', 'shape': (1, 2, 3, 2)}", 1, 0, 0), "lacks");
  expect_refusal(with_q_header("huge.npz", "{'descr': '<f4', 'fortran_order': False, 'shape': "
                                           "(99999999999, 99999999999, 99999999999, 2), }",
                               1, 0, 0),
                 "overflow");
  expect_refusal(with_q_header("garbage.npz", "{descr: <f4}", 1, 0, 0), "malformed");
  expect_refusal(with_q_header("ver.npz", ok, 9, 0, 0), "npy version");
  expect_refusal(with_member("magic.npz", "q.npy", "\x93NUMPX\x01\x00\x00\x00", 10), "bad magic");
  expect_refusal(with_member("tiny.npz", "q.npy", "\x93NU", 3), "bad magic");
  expect_refusal(with_member("noq.npz", "q.npy", NULL, 0), "member 'q' missing");
  expect_refusal(with_member("nov.npz", "v.npy", NULL, 0), "member 'v' missing");
  expect_refusal(with_member("nometa.npz", "meta.json", NULL, 0), "member 'meta.json' missing");
  size_t n;
  unsigned char *lse = good_member("lse.npy", &n);
  expect_refusal(with_member("lsetype.npz", "o.npy", lse, n), "member 'o'");
  free(lse);
}
END_TEST

START_TEST(file_level_errors_are_refused)
{
  const char *p = tmp_path("text.npz");
  spit(p, "hello, world\n", 13);
  expect_refusal(p, "not a zip");
  p = tmp_path("empty.npz");
  spit(p, "", 0);
  expect_refusal(p, "not a zip");
  expect_refusal(tmp_path("does-not-exist.npz"), "No such file");
  expect_refusal(ac_test_tmpdir(), "not a regular file");
  p = tmp_path("fifo.npz");
  ck_assert_int_eq(mkfifo(p, 0600), 0);
  expect_refusal(p, "not a regular file");
  size_t n;
  unsigned char *b = slurp(good_file(), &n);
  b[1] = 'X';
  p = tmp_path("magic.npz");
  spit(p, b, n);
  expect_refusal(p, "bad magic");
  free(b);
  /* A data byte of q flipped without fixing the CRC. */
  b = slurp(good_file(), &n);
  unsigned char *at = memmem(b, n, "\x93NUMPY", 6);
  ck_assert_ptr_nonnull(at);
  size_t hlen = at[8] | (size_t)at[9] << 8;
  at[10 + hlen + 1] ^= 0x40;
  p = tmp_path("crc.npz");
  spit(p, b, n);
  expect_refusal(p, "CRC");
  free(b);
  /* Over the memory cap. */
  ac_set_mem_cap(64);
  expect_refusal(good_file(), "memory cap");
  ac_set_mem_cap(8ULL << 30);
}
END_TEST

START_TEST(every_truncation_is_refused_cleanly)
{
  size_t n;
  unsigned char *b = slurp(good_file(), &n);
  const char *p = tmp_path("trunc.npz");
  for (size_t k = 0; k < n; k += 7) {
    spit(p, b, k);
    ac_case c;
    ac_err e;
    e.msg[0] = 0;
    ck_assert_msg(ac_case_read(&c, p, &e) == -1, "prefix of %zu bytes (of %zu) was read", k, n);
    ck_assert_msg(strstr(e.msg, p) && !strchr(e.msg, '\n'), "prefix %zu: %s", k, e.msg);
  }
  free(b);
}
END_TEST

/* Flipping any byte either is refused with one line naming the file, or leaves the content intact
 * (the byte was zip metadata outside every checksum: a time stamp, a version field). */
START_TEST(every_byte_flip_is_refused_or_harmless)
{
  size_t n;
  unsigned char *b = slurp(good_file(), &n);
  ac_case g;
  ac_err e;
  ck_assert_int_eq(ac_case_read(&g, good_file(), &e), 0);
  uint64_t h = ac_case_hash(&g);
  const char *p = tmp_path("flip.npz");
  int refused = 0;
  for (size_t k = 0; k < n; k++) {
    b[k] ^= 0x5a;
    ac_case c;
    e.msg[0] = 0;
    if (ac_case_read_buffer(&c, b, n, p, &e) == 0) {
      ck_assert_msg(ac_case_hash(&c) == h && c.has_o == g.has_o && c.has_lse == g.has_lse &&
                        memcmp(c.lse, g.lse, 6 * 4) == 0 && memcmp(c.o, g.o, ac_case_bytes(&g, 'o')) == 0,
                    "flipping byte %zu changed the content without a refusal", k);
      ac_case_free(&c);
    } else {
      ck_assert_msg(strstr(e.msg, p) && !strchr(e.msg, '\n'), "byte %zu: %s", k, e.msg);
      refused++;
    }
    b[k] ^= 0x5a;
  }
  ck_assert_int_gt(refused, (int)(n / 2));
  ac_case_free(&g);
  free(b);
}
END_TEST

int main(void)
{
  const char *dir = ac_test_tmpdir();   /* one folder shared by the forked tests, removed at the end */
  Suite *s = suite_create("casefile");
  TCase *tc = tcase_create("casefile");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_dtype_mask_layout_and_scale_round_trips_bit_for_bit);
  tcase_add_test(tc, scale_is_stored_as_default_or_exact_hex);
  tcase_add_test(tc, hash_follows_content_not_provenance);
  tcase_add_test(tc, extra_members_are_written_and_ignored_by_the_case_reader);
  tcase_add_test(tc, failed_write_leaves_the_old_file);
  tcase_add_test(tc, worked_examples_are_what_the_docs_say);
  tcase_add_test(tc, meta_json_errors_are_refused);
  tcase_add_test(tc, npy_member_errors_are_refused);
  tcase_add_test(tc, file_level_errors_are_refused);
  tcase_add_test(tc, every_truncation_is_refused_cleanly);
  tcase_add_test(tc, every_byte_flip_is_refused_or_harmless);
  suite_add_tcase(s, tc);
  int rc = ac_test_run(s);
  if (rc == 0) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  return rc;
}
