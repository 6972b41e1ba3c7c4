/* fuzz_case_reader.c: libFuzzer target for the strict case reader.
 * Built with -DAC_FUZZ_REPLAY it is a check program instead: it replays every file of
 * fuzz/corpus/case_reader (or the files named on the command line) through the reader.
 * Corpus naming: ok-* must read, bad-* must be refused with a one-line message naming the
 * file; anything else (fuzzer finds, crash reproducers) must merely not crash.
 * Inputs that start with "ACU1" are unpacked cases: members meta.json, q.npy, k.npy, v.npy, o.npy,
 * lse.npy in that order, separated by SEP (an empty part leaves the member out), packed here
 * into a valid zip so that mutations reach the npy and JSON parsers past the zip checksums. */
#include "config.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include "casefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small enough that a forged shape cannot make ASan's allocator give up before the reader does. */
#define FUZZ_MEM_CAP (64u << 20)

#define UNPACKED_MAGIC "ACU1"
#define SEP "\xff\xfe|\n"

/* Packs an unpacked input into a zip at path; -1 if libzip refuses (not a reader finding). */
static int pack(const uint8_t *data, size_t size, const char *path)
{
  static const char *const names[] = {"meta.json", "q.npy", "k.npy", "v.npy", "o.npy", "lse.npy"};
  int err = 0;
  zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!za) return -1;
  const uint8_t *p = data + 4, *end = data + size;
  int added = 0;
  for (int i = 0; i < 6 && p <= end; i++) {
    const uint8_t *q = memmem(p, (size_t)(end - p), SEP, 4);
    const uint8_t *stop = q ? q : end;
    if (stop > p) {
      zip_source_t *src = zip_source_buffer(za, p, (zip_uint64_t)(stop - p), 0);
      zip_int64_t idx = src ? zip_file_add(za, names[i], src, 0) : -1;
      if (idx < 0) {
        zip_source_free(src);
        zip_discard(za);
        return -1;
      }
      zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
      added++;
    }
    if (!q) break;
    p = q + 4;
  }
  if (!added || zip_close(za) != 0) {
    zip_discard(za);
    return -1;
  }
  return 0;
}

static const char *unpacked_path(void)
{
  static char path[256];
  if (!path[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_case_reader.%ld.npz", t && *t ? t : "/tmp", (long)getpid());
  }
  return path;
}

/* Reads one input as the fuzzer sees it; *name says what messages must name. 1 when the input
 * could not even be packed. */
static int read_input(const uint8_t *data, size_t size, ac_case *c, ac_err *e, const char **name)
{
  if (size >= 4 && memcmp(data, UNPACKED_MAGIC, 4) == 0) {
    const char *path = unpacked_path();
    *name = path;
    if (pack(data, size, path) != 0) return 1;
    int rc = ac_case_read(c, path, e);
    unlink(path);
    return rc;
  }
  *name = "fuzz-input";
  return ac_case_read_buffer(c, data, size, *name, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int init;
  if (!init) {
    ac_set_mem_cap(FUZZ_MEM_CAP);
    init = 1;
  }
  ac_case c;
  ac_err e;
  const char *name;
  if (read_input(data, size, &c, &e, &name) == 0) {
    (void)ac_case_hash(&c);
    ac_case d;
    if (ac_case_copy(&d, &c, &e) == 0) ac_case_free(&d);
    ac_case_free(&c);
  }
  return 0;
}

#ifdef AC_FUZZ_REPLAY
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_one(const char *path, const char *base)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return -1;
  }
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = ac_xmalloc(cap);
  size_t r;
  while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) buf = ac_xrealloc(buf, cap *= 2);
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n);

  ac_case c;
  ac_err e;
  e.msg[0] = 0;
  const char *name;
  int rc = read_input(buf, n, &c, &e, &name);
  if (rc == 0) ac_case_free(&c);
  free(buf);
  int bad = 0;
  if (rc == 1) {
    /* Nothing to read (no member at all): only the named seeds must pack. */
    if (!strncmp(base, "ok-", 3) || !strncmp(base, "bad-", 4)) {
      fprintf(stderr, "FAIL %s: unpacked input could not be packed\n", path);
      bad = 1;
    }
    return bad ? -1 : 0;
  }
  if (strcmp(name, "fuzz-input") == 0) {
    /* The file reader must agree with the buffer reader, and name the real file. */
    int rc2 = ac_case_read(&c, path, &e);
    if (rc2 == 0) ac_case_free(&c);
    if (rc2 != rc) {
      fprintf(stderr, "FAIL %s: the file reader says %d, the buffer reader %d\n", path, rc2, rc);
      bad = 1;
    }
    name = path;
  }
  if (!strncmp(base, "ok-", 3) && rc != 0) {
    fprintf(stderr, "FAIL %s: expected to read, got: %s\n", path, e.msg);
    bad = 1;
  }
  if (!strncmp(base, "bad-", 4)) {
    if (rc == 0) {
      fprintf(stderr, "FAIL %s: expected a refusal, it read\n", path);
      bad = 1;
    } else if (!strstr(e.msg, name) || strchr(e.msg, '\n') || !e.msg[0]) {
      fprintf(stderr, "FAIL %s: message is not one line naming the file: '%s'\n", path, e.msg);
      bad = 1;
    }
  }
  if (rc != 0 && strchr(e.msg, '\n')) {
    fprintf(stderr, "FAIL %s: multi-line message '%s'\n", path, e.msg);
    bad = 1;
  }
  return bad ? -1 : 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
  ac_set_mem_cap(FUZZ_MEM_CAP);
  int failed = 0, total = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      const char *base = strrchr(argv[i], '/');
      failed += replay_one(argv[i], base ? base + 1 : argv[i]) != 0;
      total++;
    }
  } else {
    const char *srcdir = getenv("srcdir");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/case_reader", srcdir ? srcdir : ".");
    DIR *d = opendir(dir);
    if (!d) {
      fprintf(stderr, "%s: cannot open the corpus folder\n", dir);
      return 99;
    }
    char **names = NULL;
    size_t nn = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (de->d_name[0] == '.') continue;
      names = ac_xrealloc(names, (nn + 1) * sizeof *names);
      names[nn++] = ac_xstrdup(de->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, by_name);
    for (size_t i = 0; i < nn; i++) {
      char path[8192];
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      struct stat st;
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        failed += replay_one(path, names[i]) != 0;
        total++;
      }
      free(names[i]);
    }
    free(names);
    if (total == 0) {
      fprintf(stderr, "%s: empty corpus\n", dir);
      return 99;
    }
  }
  printf("replayed %d corpus files, %d failed\n", total, failed);
  return failed ? 1 : 0;
}
#endif
