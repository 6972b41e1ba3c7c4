/* tnpz: the .npy/.npz layer: headers as numpy writes them, round trips, two-step reads, refusals. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include "npz.h"
#include "testutil.h"

static char path_buf[4096];
static const char *tmp_path(const char *name)
{
  snprintf(path_buf, sizeof path_buf, "%s/%s", ac_test_tmpdir(), name);
  return path_buf;
}

/* The raw bytes of one zip member, read with libzip directly (independent of ac_npz). */
static unsigned char *raw_member(const char *path, const char *name, size_t *n)
{
  int err = 0;
  zip_t *za = zip_open(path, ZIP_RDONLY, &err);
  ck_assert_msg(za != NULL, "zip_open %s", path);
  zip_stat_t st;
  ck_assert_int_eq(zip_stat(za, name, 0, &st), 0);
  ck_assert_int_eq(st.comp_method, ZIP_CM_STORE);
  unsigned char *b = malloc(st.size + 1);
  zip_file_t *f = zip_fopen(za, name, 0);
  ck_assert_int_eq(zip_fread(f, b, st.size), (zip_int64_t)st.size);
  zip_fclose(f);
  zip_discard(za);
  *n = st.size;
  return b;
}

START_TEST(npy_header_is_numpy_v1_padded_to_64)
{
  ac_err e;
  const char *p = tmp_path("hdr.npz");
  ac_npz_writer *w = ac_npz_create(p, &e);
  ck_assert_msg(w != NULL, "%s", e.msg);
  float a[6] = {1, 2, 3, 4, 5, 6};
  int64_t sh2[2] = {2, 3}, sh1[1] = {6};
  ck_assert_int_eq(ac_npz_add_array(w, "a", "<f4", 2, sh2, a, sizeof a, &e), 0);
  ck_assert_int_eq(ac_npz_add_array(w, "b", "<f4", 1, sh1, a, sizeof a, &e), 0);
  ck_assert_int_eq(ac_npz_add_array(w, "s", "<f4", 0, NULL, a, 4, &e), 0);
  ck_assert_int_eq(ac_npz_close(w, &e), 0);
  static const struct { const char *member, *dict; } want[] = {
    {"a.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
    {"b.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }"},
    {"s.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }"},
  };
  for (int i = 0; i < 3; i++) {
    size_t n;
    unsigned char *b = raw_member(p, want[i].member, &n);
    ck_assert(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0);
    size_t hlen = b[8] | (size_t)b[9] << 8;
    ck_assert_uint_eq((10 + hlen) % 64, 0);
    ck_assert_int_eq(b[10 + hlen - 1], '\n');
    size_t dl = strlen(want[i].dict);
    ck_assert_msg(memcmp(b + 10, want[i].dict, dl) == 0, "%s header '%.*s'", want[i].member, (int)dl, b + 10);
    for (size_t j = 10 + dl; j < 10 + hlen - 1; j++) ck_assert_int_eq(b[j], ' ');
    free(b);
  }
}
END_TEST

START_TEST(arrays_and_raw_members_round_trip)
{
  ac_err e;
  const char *p = tmp_path("rt.npz");
  ac_npz_writer *w = ac_npz_create(p, &e);
  ck_assert_msg(w != NULL, "%s", e.msg);
  uint16_t h[2 * 3 * 4];
  for (int i = 0; i < 24; i++) h[i] = (uint16_t)(0x3c00 + i * 0x111);
  uint8_t u[5] = {0, 0x7f, 0x80, 0xff, 1};
  double d[1] = {-0x1.23456789abcdfp-1000};
  int64_t s3[3] = {2, 3, 4}, s1[1] = {5}, s11[2] = {1, 1};
  ck_assert_int_eq(ac_npz_add_array(w, "h", "<u2", 3, s3, h, sizeof h, &e), 0);
  ck_assert_int_eq(ac_npz_add_array(w, "u", "|u1", 1, s1, u, sizeof u, &e), 0);
  ck_assert_int_eq(ac_npz_add_array(w, "d", "<f8", 2, s11, d, sizeof d, &e), 0);
  ck_assert_int_eq(ac_npz_add_bytes(w, "note.txt", "hello", 5, &e), 0);
  ck_assert_int_eq(ac_npz_close(w, &e), 0);

  ac_npz *z = ac_npz_open(p, 1 << 20, &e);
  ck_assert_msg(z != NULL, "%s", e.msg);
  ck_assert_int_eq(ac_npz_count(z), 4);
  ck_assert(ac_npz_has(z, "h") && ac_npz_has(z, "u") && ac_npz_has(z, "d") && ac_npz_has(z, "note.txt"));
  ck_assert(!ac_npz_has(z, "h.npy") && !ac_npz_has(z, "x"));
  ac_npz_member m;
  ck_assert_int_eq(ac_npz_read(z, "h", &m, &e), 0);
  ck_assert_str_eq(m.descr, "<u2");
  ck_assert_int_eq(m.ndim, 3);
  ck_assert(m.shape[0] == 2 && m.shape[1] == 3 && m.shape[2] == 4);
  ck_assert_uint_eq(m.nbytes, sizeof h);
  ck_assert(memcmp(m.data, h, sizeof h) == 0);
  ck_assert_int_eq(ac_npz_read(z, "u", &m, &e), 0);
  ck_assert_str_eq(m.descr, "|u1");
  ck_assert(m.ndim == 1 && m.shape[0] == 5 && memcmp(m.data, u, 5) == 0);
  ck_assert_int_eq(ac_npz_read(z, "d", &m, &e), 0);
  double got;
  memcpy(&got, m.data, 8);
  ck_assert_msg(got == d[0], "got %a want %a", got, d[0]);
  ck_assert_int_eq(ac_npz_read(z, "note.txt", &m, &e), 0);
  ck_assert(m.descr[0] == 0 && m.nbytes == 5 && memcmp(m.data, "hello", 5) == 0);

  /* Two-step read into a caller buffer. */
  ac_npz_member hm;
  ck_assert_int_eq(ac_npz_read_header(z, "h", &hm, &e), 0);
  ck_assert(hm.data == NULL && hm.nbytes == sizeof h);
  ck_assert_int_eq((ac_npz_member_size(z, "h") - (int64_t)sizeof h) % 64, 0);
  ck_assert_int_gt(ac_npz_member_size(z, "h"), (int64_t)sizeof h);
  ck_assert_int_eq(ac_npz_member_size(z, "nothing"), -1);
  uint16_t back[24];
  ck_assert_int_eq(ac_npz_read_into(z, "h", back, sizeof back, &e), 0);
  ck_assert(memcmp(back, h, sizeof h) == 0);
  ck_assert_int_eq(ac_npz_read_into(z, "h", back, sizeof back - 2, &e), -1);
  ck_assert_ptr_nonnull(strstr(e.msg, "expected"));
  ck_assert_int_eq(ac_npz_read(z, "missing", &m, &e), -1);
  ck_assert_msg(strstr(e.msg, p) && strstr(e.msg, "missing"), "%s", e.msg);
  ac_npz_close_reader(z);
}
END_TEST

START_TEST(writer_refuses_bad_input_and_leaves_no_file)
{
  ac_err e;
  const char *p = tmp_path("bad.npz");
  ac_npz_writer *w = ac_npz_create(p, &e);
  ck_assert_msg(w != NULL, "%s", e.msg);
  float a[4] = {0};
  int64_t s[1] = {4}, s5[1] = {5};
  ck_assert_int_eq(ac_npz_add_array(w, "a", "<f4", 1, s5, a, sizeof a, &e), -1);
  ck_assert_int_eq(ac_npz_add_array(w, "a", "xf4", 1, s, a, sizeof a, &e), -1);
  ck_assert_int_eq(ac_npz_add_array(w, "../a", "<f4", 1, s, a, sizeof a, &e), -1);
  ck_assert_int_eq(ac_npz_add_bytes(w, "x.npy", a, 4, &e), -1);
  ck_assert_int_eq(ac_npz_add_array(w, "a", "<f4", 1, s, a, sizeof a, &e), 0);
  ck_assert_int_eq(ac_npz_add_array(w, "a", "<f4", 1, s, a, sizeof a, &e), -1);
  ac_npz_abort(w);
  FILE *f = fopen(p, "rb");
  ck_assert_ptr_null(f);
  /* An empty archive is refused at close. */
  w = ac_npz_create(p, &e);
  ck_assert_int_eq(ac_npz_close(w, &e), -1);
  ck_assert_ptr_null(fopen(p, "rb"));
}
END_TEST

START_TEST(reader_refuses_members_over_the_cap_before_reading)
{
  ac_err e;
  const char *p = tmp_path("cap.npz");
  ac_npz_writer *w = ac_npz_create(p, &e);
  static float big[4096];
  int64_t s[1] = {4096};
  ck_assert_int_eq(ac_npz_add_array(w, "big", "<f4", 1, s, big, sizeof big, &e), 0);
  ck_assert_int_eq(ac_npz_close(w, &e), 0);
  ck_assert_ptr_null(ac_npz_open(p, 1000, &e));
  ck_assert_msg(strstr(e.msg, "memory cap") && strstr(e.msg, p), "%s", e.msg);
  ac_npz *z = ac_npz_open(p, 1 << 20, &e);
  ck_assert_ptr_nonnull(z);
  ac_npz_close_reader(z);
}
END_TEST

START_TEST(buffer_reader_matches_file_reader)
{
  ac_err e;
  const char *p = tmp_path("buf.npz");
  ac_npz_writer *w = ac_npz_create(p, &e);
  int32_t x[3] = {7, -8, 9};
  int64_t s[1] = {3};
  ck_assert_int_eq(ac_npz_add_array(w, "x", "<i4", 1, s, x, sizeof x, &e), 0);
  ck_assert_int_eq(ac_npz_close(w, &e), 0);
  FILE *f = fopen(p, "rb");
  static unsigned char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ac_npz *z = ac_npz_open_buffer(buf, n, "mem", 1 << 20, &e);
  ck_assert_msg(z != NULL, "%s", e.msg);
  ac_npz_member m;
  ck_assert_int_eq(ac_npz_read(z, "x", &m, &e), 0);
  ck_assert(memcmp(m.data, x, sizeof x) == 0);
  ac_npz_close_reader(z);
  ck_assert_ptr_null(ac_npz_open_buffer("PK", 2, "short", 1 << 20, &e));
  ck_assert_msg(strstr(e.msg, "short") && strstr(e.msg, "not a zip"), "%s", e.msg);
}
END_TEST

int main(void)
{
  const char *dir = ac_test_tmpdir();   /* one folder shared by the forked tests, removed at the end */
  Suite *s = suite_create("npz");
  TCase *tc = tcase_create("npz");
  tcase_add_test(tc, npy_header_is_numpy_v1_padded_to_64);
  tcase_add_test(tc, arrays_and_raw_members_round_trip);
  tcase_add_test(tc, writer_refuses_bad_input_and_leaves_no_file);
  tcase_add_test(tc, reader_refuses_members_over_the_cap_before_reading);
  tcase_add_test(tc, buffer_reader_matches_file_reader);
  suite_add_tcase(s, tc);
  int rc = ac_test_run(s);
  if (rc == 0) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  return rc;
}
