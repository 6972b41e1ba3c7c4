/* tcasefile_variants: attention variants in case files (src/core/casefile_variants.c): every
 * feature round-trips bit for bit through meta.json and the NPZ members, and each malformed
 * variant (shapes that do not broadcast, a softcap that is not finite and > 0, windows below
 * -1, slopes of the wrong length, descales of the wrong shape, members without their feature,
 * mask values other than 0/1, per-tensor dtypes that are missing, unknown, wider than the compute
 * dtype or disagree with a member's descr, a dropout p outside [0, 1) or not binary32, a dropout seed
 * that is no decimal string, dropout fields without the feature) is refused with one line naming the
 * file and field.
 * Mixed dtypes round-trip with each of q, k, v and o stored in its own dtype. */
#include "config.h"
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include "casefile.h"
#include "rng.h"
#include "testutil.h"
#include "variants.h"
#include "vgen.h"

static const char *tmp_path(const char *name)
{
  static char buf[8][4096];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 4096, "%s/%s", ac_test_tmpdir(), name);
  return p;
}

/* A variant case with every tensor feature: B 2, H 2, KVH 1, tq 5, tk 7, d 4. */
static void variant_case(ac_case *c, ac_dtype t)
{
  ac_err e;
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = t;
  p->mask = AC_MASK_CAUSAL_BR;
  p->batch = 2, p->heads = 2, p->kv_heads = 1, p->tq = 5, p->tk = 7, p->dk = 4, p->dv = 4;
  p->scale_is_default = 1;
  p->scale = 0.5;
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "%s", e.msg);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 1);
  for (int64_t i = 0; i < 2 * 2 * 5 * 4; i++) ac_store_bits(t, c->q, (size_t)i, ac_encode_f64(t, ac_rng_normal(&r)));
  for (int64_t i = 0; i < 2 * 7 * 4; i++) {
    ac_store_bits(t, c->k, (size_t)i, ac_encode_f64(t, ac_rng_normal(&r)));
    ac_store_bits(t, c->v, (size_t)i, ac_encode_f64(t, ac_rng_normal(&r)));
  }
  ac_vspec v = {.used = AC_FEAT_WINDOW | AC_FEAT_SOFTCAP | AC_FEAT_ALIBI | AC_FEAT_BIAS | AC_FEAT_BOOL_MASK | AC_FEAT_SINKS |
                        AC_FEAT_DESCALE | AC_FEAT_DROPOUT,
                .dropout_p = 0.25, .dropout_seed = 0xfedcba9876543210u, .dropout_seed_set = 1,
                .win_left = 3, .win_right = 1, .win_top_left = 1, .softcap = 7.5, .alibi_max = 2, .alibi_per_batch = 1,
                .bias = AC_VB_NEGINF_BLOCKS, .bias_bcast_b = 1, .bias_dtype = AC_F16 + 1, .bmask = AC_VM_RANDOM,
                .mask_bcast_h = 1, .sinks = AC_VS_NORMAL, .descale = AC_VD_TINY};
  ck_assert_msg(ac_vspec_apply(c, &v, ac_test_seed(), &e) == 0, "%s", e.msg);
}

static const char *good_file(void)
{
  static char p[4096];
  if (!p[0]) {
    ac_case c;
    ac_err e;
    variant_case(&c, AC_BF16);
    snprintf(p, sizeof p, "%s", tmp_path("good-variants.npz"));
    ck_assert_msg(ac_case_write(&c, p, &e) == 0, "%s", e.msg);
    ac_case_free(&c);
  }
  return p;
}

START_TEST(every_feature_round_trips)
{
  ac_case a, b;
  ac_err e;
  variant_case(&a, AC_BF16);
  ck_assert_msg(ac_case_read(&b, good_file(), &e) == 0, "%s", e.msg);
  ck_assert_uint_eq(a.p.f.used, b.p.f.used);
  ck_assert_int_eq(b.p.f.win_left, 3);
  ck_assert_int_eq(b.p.f.win_right, 1);
  ck_assert_int_eq(b.p.f.win_top_left, 1);
  ck_assert(b.p.f.softcap == 7.5);
  ck_assert_int_eq(b.p.f.alibi_per_batch, 1);
  ck_assert_int_eq(b.p.f.bias_dtype, AC_F16);
  ck_assert_int_eq(b.p.f.bias_b, 1);
  ck_assert_int_eq(b.p.f.bias_h, 2);
  ck_assert_int_eq(b.p.f.mask_b, 2);
  ck_assert_int_eq(b.p.f.mask_h, 1);
  ck_assert(b.p.f.dropout_p == 0.25);
  ck_assert(b.p.f.dropout_seed == 0xfedcba9876543210u);   /* all 64 bits (a decimal string in meta.json) */
  for (int t = 0; t < AC_FT_N; t++) {
    int64_t shape[4];
    size_t es;
    int64_t n = ac_feat_tensor_count(&a.p, (ac_feat_tensor)t);
    ck_assert_int_gt(n, 0);
    ck_assert(ac_feat_tensor_shape(&a.p, (ac_feat_tensor)t, shape, &es));
    ck_assert_msg(!memcmp(*ac_feat_tensor_slot(&a, (ac_feat_tensor)t), *ac_feat_tensor_slot(&b, (ac_feat_tensor)t), (size_t)n * es),
                  "%s differs after the round trip", ac_feat_tensor_name((ac_feat_tensor)t));
  }
  ck_assert_uint_eq(ac_case_hash(&a), ac_case_hash(&b));
  /* the hash sees the variants: the same q, k, v without them hash differently */
  ac_case plain;
  ck_assert(ac_case_copy(&plain, &a, &e) == 0);
  ac_features_free(&plain);
  plain.p.f.used = 0;
  ck_assert_uint_ne(ac_case_hash(&plain), ac_case_hash(&a));
  ac_case_free(&plain);
  ac_case_free(&a);
  ac_case_free(&b);
}
END_TEST

/* A mixed-dtype case (compute dtype f32; q f32, k f16, v bf16, o f32 with a stored output) with
 * a window: each tensor is allocated, written and read back in its own dtype. */
static void mixed_case(ac_case *c)
{
  ac_err e;
  ac_case_init(c);
  ac_problem *p = &c->p;
  p->dtype = AC_F32;
  p->batch = 1, p->heads = 2, p->kv_heads = 1, p->tq = 3, p->tk = 5, p->dk = 4, p->dv = 2;
  p->scale_is_default = 1;
  p->scale = 0.5;
  const ac_dtype d[4] = {AC_F32, AC_F16, AC_BF16, AC_F32};
  ck_assert_msg(ac_features_set_dtypes(p, d, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_case_alloc(c, &e) == 0, "%s", e.msg);
  ac_rng r;
  ac_rng_init(&r, ac_test_seed(), 2);
  for (const char *x = "qkv"; *x; x++) {
    ac_dtype t = ac_tensor_dtype(p, *x);
    void *base = *x == 'q' ? c->q : *x == 'k' ? c->k : c->v;
    for (size_t i = 0; i < ac_case_bytes(c, *x) / ac_dtype_size(t); i++) ac_store_bits(t, base, i, ac_encode_f64(t, ac_rng_normal(&r)));
  }
  c->has_o = 1;
  c->o = ac_xcalloc(ac_case_bytes(c, 'o'), 1);
  for (size_t i = 0; i < 6 * 2; i++) ac_store_bits(AC_F32, c->o, i, ac_encode_f64(AC_F32, ac_rng_normal(&r)));
  ac_vspec v = {.used = AC_FEAT_WINDOW, .win_left = 1, .win_right = 0};
  ck_assert_msg(ac_vspec_apply(c, &v, ac_test_seed(), &e) == 0, "%s", e.msg);
  ck_assert_uint_eq(p->f.used, AC_FEAT_WINDOW | AC_FEAT_MIXED_DTYPES);
}

START_TEST(mixed_dtypes_round_trip)
{
  ac_case a, b;
  ac_err e;
  mixed_case(&a);
  ck_assert_uint_eq(ac_case_bytes(&a, 'q'), 2 * 3 * 4 * 4);
  ck_assert_uint_eq(ac_case_bytes(&a, 'k'), 5 * 4 * 2);
  ck_assert_uint_eq(ac_case_bytes(&a, 'v'), 5 * 2 * 2);
  const char *path = tmp_path("mixed.npz");
  ck_assert_msg(ac_case_write(&a, path, &e) == 0, "%s", e.msg);
  ck_assert_msg(ac_case_read(&b, path, &e) == 0, "%s", e.msg);
  ck_assert_uint_eq(b.p.f.used, a.p.f.used);
  ck_assert(b.p.f.qd == AC_F32 && b.p.f.kd == AC_F16 && b.p.f.vd == AC_BF16 && b.p.f.od == AC_F32);
  for (const char *x = "qkvo"; *x; x++) {
    const void *pa = *x == 'q' ? a.q : *x == 'k' ? a.k : *x == 'v' ? a.v : a.o;
    const void *pb = *x == 'q' ? b.q : *x == 'k' ? b.k : *x == 'v' ? b.v : b.o;
    ck_assert_msg(ac_case_bytes(&b, *x) == ac_case_bytes(&a, *x) && !memcmp(pa, pb, ac_case_bytes(&a, *x)), "%c differs", *x);
  }
  ck_assert_uint_eq(ac_case_hash(&a), ac_case_hash(&b));
  ac_case cp;
  ck_assert(ac_case_copy(&cp, &a, &e) == 0);
  ck_assert_uint_eq(ac_case_hash(&cp), ac_case_hash(&a));
  ac_case_free(&cp);
  ac_case_free(&b);
  ac_case_free(&a);
}
END_TEST

/* ---- malformed variants ---- */

static unsigned char *member_bytes(const char *zname, size_t *n)
{
  int err = 0;
  zip_t *za = zip_open(good_file(), ZIP_RDONLY, &err);
  ck_assert_ptr_nonnull(za);
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

/* The good file with member zname replaced by bytes (NULL: removed; a new name: added). */
static const char *with_member(const char *dst_name, const char *zname, const void *bytes, size_t n)
{
  const char *dst = tmp_path(dst_name);
  int err = 0, found = 0;
  unlink(dst);
  zip_t *in = zip_open(good_file(), ZIP_RDONLY, &err);
  zip_t *out = zip_open(dst, ZIP_CREATE | ZIP_EXCL, &err);
  ck_assert(in && out);
  zip_int64_t cnt = zip_get_num_entries(in, 0);
  for (zip_int64_t i = 0; i <= cnt; i++) {
    const char *name = i < cnt ? zip_get_name(in, (zip_uint64_t)i, 0) : zname;
    zip_source_t *s;
    if (i == cnt && found) break;
    if (!strcmp(name, zname)) {
      found = 1;
      if (!bytes) continue;
      void *copy = ac_xmalloc(n);
      memcpy(copy, bytes, n);
      s = zip_source_buffer(out, copy, n, 1);
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

/* An npy (version 1) of float32 zeros, or of the given bytes, with this descr and shape. */
static unsigned char *npy(const char *descr, int ndim, const int64_t *shape, size_t esize, const void *data, size_t *n)
{
  char dict[256], sh[96] = "";
  size_t k = 0, count = 1;
  for (int i = 0; i < ndim; i++) {
    k += (size_t)snprintf(sh + k, sizeof sh - k, "%lld,%s", (long long)shape[i], ndim > 1 && i < ndim - 1 ? " " : "");
    count *= (size_t)shape[i];
  }
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh);
  size_t hl = (size_t)dl + 1, total = 10 + hl;
  size_t pad = (64 - total % 64) % 64;
  hl += pad;
  *n = 10 + hl + count * esize;
  unsigned char *b = ac_xcalloc(*n, 1);
  memcpy(b, "\x93NUMPY\x01\x00", 8);
  b[8] = (unsigned char)(hl & 0xff), b[9] = (unsigned char)(hl >> 8);
  memcpy(b + 10, dict, (size_t)dl);
  memset(b + 10 + dl, ' ', pad);
  b[10 + hl - 1] = '\n';
  if (data) memcpy(b + 10 + hl, data, count * esize);
  return b;
}

static const char *with_array(const char *dst, const char *zname, const char *descr, int ndim, const int64_t *shape, size_t es)
{
  size_t n;
  unsigned char *b = npy(descr, ndim, shape, es, NULL, &n);
  char member[64];
  snprintf(member, sizeof member, "%s.npy", zname);
  const char *p = with_member(dst, member, b, n);
  free(b);
  return p;
}

/* meta.json's "variants" with key set to the JSON text value (NULL: removed). */
static const char *with_variant(const char *dst, const char *key, const char *value)
{
  size_t n;
  char *text = (char *)member_bytes("meta.json", &n);
  json_object *m = json_tokener_parse(text), *v;
  ck_assert(json_object_object_get_ex(m, "variants", &v));
  if (value) json_object_object_add(v, key, json_tokener_parse(value));
  else json_object_object_del(v, key);
  const char *s = json_object_to_json_string(m);
  const char *p = with_member(dst, "meta.json", s, strlen(s));
  json_object_put(m);
  free(text);
  return p;
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

START_TEST(malformed_variants_are_refused)
{
  const int64_t bias3[4] = {3, 2, 5, 7}, bias_t[4] = {1, 2, 5, 6}, slopes[2] = {2, 3}, desc[2] = {2, 2}, mask[4] = {2, 1, 5, 7};
  expect_refusal(with_array("b1.npz", "bias", "<f2", 4, bias3, 2), "does not broadcast");
  expect_refusal(with_array("b2.npz", "bias", "<f2", 4, bias_t, 2), "does not broadcast");
  expect_refusal(with_array("b3.npz", "bias", "<f4", 4, (const int64_t[]){1, 2, 5, 7}, 4), "member 'bias' has descr");
  expect_refusal(with_array("m1.npz", "mask", "|b1", 4, (const int64_t[]){2, 3, 5, 7}, 1), "does not broadcast");
  expect_refusal(with_array("s1.npz", "alibi_slopes", "<f4", 2, slopes, 4), "member 'alibi_slopes' has shape");
  expect_refusal(with_array("s2.npz", "alibi_slopes", "<f4", 1, (const int64_t[]){2}, 4), "member 'alibi_slopes' has shape");
  expect_refusal(with_array("k1.npz", "sinks", "<f4", 1, (const int64_t[]){3}, 4), "member 'sinks' has shape");
  expect_refusal(with_array("d1.npz", "descale_k", "<f4", 2, (const int64_t[]){2, 2}, 4), "member 'descale_k' has shape");
  (void)desc;
  expect_refusal(with_variant("c1.npz", "softcap", "\"0x0p+0\""), "softcap");
  expect_refusal(with_variant("c2.npz", "softcap", "-3"), "softcap");
  expect_refusal(with_variant("c3.npz", "softcap", "\"inf\""), "softcap");
  expect_refusal(with_variant("c4.npz", "softcap", NULL), "softcap");
  expect_refusal(with_variant("w1.npz", "window", "[-2, 0]"), "below -1");
  expect_refusal(with_variant("w2.npz", "window", "[1]"), "window");
  expect_refusal(with_variant("w3.npz", "window_align", "\"left\""), "window_align");
  expect_refusal(with_variant("f1.npz", "features", "[\"window\", \"softcap\", \"alibi\", \"bias\", \"bool_mask\", \"sinks\", \"descale\", \"mixed_dtypes\", \"dropout\"]"),
                 "variants.dtypes must be an object");
  expect_refusal(with_variant("f4.npz", "dtypes", "{\"q\": \"bf16\", \"k\": \"bf16\", \"v\": \"bf16\", \"o\": \"f32\"}"),
                 "variants.dtypes present but variants.features lacks mixed_dtypes");
  expect_refusal(with_variant("f2.npz", "features", "[\"windows\"]"), "unknown feature");
  expect_refusal(with_variant("f3.npz", "features", "[\"window\", \"softcap\"]"), "variants.features lacks");
  expect_refusal(with_variant("t1.npz", "bias_dtype", "\"f128\""), "bias_dtype");
  /* dropout: p outside [0, 1) or not a binary32 value, a seed that is no decimal string, a mask without its feature */
  expect_refusal(with_variant("p1.npz", "dropout_p", "\"0x1p+0\""), "p must be a binary32 value in [0, 1) (got 1)");
  expect_refusal(with_variant("p2.npz", "dropout_p", "\"0x1.0000000001p-2\""), "p must be a binary32 value");
  expect_refusal(with_variant("p3.npz", "dropout_seed", "-3"), "variants.dropout_seed must be a decimal string");
  expect_refusal(with_variant("p4.npz", "features", "[\"window\", \"softcap\", \"alibi\", \"bias\", \"bool_mask\", \"sinks\", \"descale\"]"),
                 "variants.dropout_p present but variants.features lacks dropout");
  expect_refusal(with_member("r1.npz", "sinks.npy", NULL, 0), "member 'sinks' is missing");
  /* a mask value other than 0 and 1 */
  uint8_t bad[2 * 5 * 7];
  memset(bad, 1, sizeof bad);
  bad[17] = 2;
  size_t n;
  unsigned char *b = npy("|u1", 4, mask, 1, bad, &n);
  expect_refusal(with_member("m2.npz", "mask.npy", b, n), "holds 2 at index 17");
  free(b);
}
END_TEST

START_TEST(gen_writes_every_variant_and_refuses_bad_values)
{
  char cmd[4096], out[8192];
  const char *bin = ac_test_attncheck(), *f = tmp_path("gen-variants.npz");
  snprintf(cmd, sizeof cmd,
           "%s gen --out %s --batch 2 --heads 2 --t 24 --dk 8 --window 4,0 --softcap 20 --alibi 1 --bias sentinel:-1e9 "
           "--bias-broadcast b --bool-mask banded --sinks dominant --descale tiny 2>&1 && %s info %s 2>&1",
           bin, f, bin, f);
  ck_assert_int_eq(ac_test_system(cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "variants   window,softcap,alibi,bias,bool_mask,sinks,descale; window (4, 0) bottom-right"), "%s", out);
  ck_assert_msg(strstr(out, "bias [1,2,24,24]"), "%s", out);
  const char *bad[] = {"--window -2,0", "--window 1", "--softcap 0", "--softcap -1", "--softcap inf", "--alibi -1",
                       "--bias nosuch", "--bool-mask nosuch", "--sinks nosuch", "--descale nosuch", "--bias-broadcast x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s gen --out %s %s 2>&1", bin, tmp_path("bad.npz"), bad[i]);
    int rc = ac_test_system(cmd, out, sizeof out);
    ck_assert_msg(rc == 2, "gen %s: exit %d (%s)", bad[i], rc, out);
    ck_assert_msg(strchr(out, '\n') == strrchr(out, '\n'), "gen %s: more than one line: %s", bad[i], out);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("casefile_variants");
  TCase *tc = tcase_create("variants");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_feature_round_trips);
  tcase_add_test(tc, mixed_dtypes_round_trip);
  tcase_add_test(tc, malformed_variants_are_refused);
  tcase_add_test(tc, gen_writes_every_variant_and_refuses_bad_values);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
