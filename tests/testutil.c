/* testutil.c: helpers shared by the Check tests. */
#include "config.h"
#include "testutil.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t ac_test_seed(void)
{
  const char *s = getenv("ATTNCHECK_TEST_SEED");
  if (s && *s) return strtoull(s, NULL, 0);
  return 20261129ULL;
}

int ac_test_expensive(void)
{
  const char *s = getenv("ATTNCHECK_TEST_EXPENSIVE");
  return s && *s && strcmp(s, "0") != 0;
}

int ac_test_run(Suite *s)
{
  SRunner *sr = srunner_create(s);
  fprintf(stderr, "test seed: %llu (ATTNCHECK_TEST_SEED overrides)\n", (unsigned long long)ac_test_seed());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}

const char *ac_test_data(const char *name)
{
  static char buf[4096];
  const char *srcdir = getenv("srcdir");
  if (!srcdir) srcdir = ".";
  snprintf(buf, sizeof buf, "%s/tests/data/%s", srcdir, name);
  return buf;
}

const char *ac_test_tmpdir(void)
{
  static char buf[256];
  if (!buf[0]) {
    snprintf(buf, sizeof buf, "/tmp/attncheck-test-XXXXXX");
    if (!mkdtemp(buf)) {
      perror("mkdtemp");
      abort();
    }
  }
  return buf;
}

const char *ac_test_attncheck(void)
{
  static char buf[4096];
  const char *b = getenv("ATTNCHECK_BIN");
  if (b && *b) return b;
  const char *top = getenv("abs_top_builddir");
  snprintf(buf, sizeof buf, "%s/attncheck", top ? top : ".");
  return buf;
}

int ac_test_system(const char *cmd, char *out, size_t out_len)
{
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  size_t n = 0;
  char tmp[4096];
  size_t r;
  while ((r = fread(tmp, 1, sizeof tmp, f)) > 0) {
    if (out && n + 1 < out_len) {
      size_t c = r < out_len - 1 - n ? r : out_len - 1 - n;
      memcpy(out + n, tmp, c);
      n += c;
    }
  }
  if (out && out_len) out[n] = 0;
  int st = pclose(f);
  if (st == -1) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
