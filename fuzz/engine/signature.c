/* signature.c: a finding's identity: kernel, verdict kind, family, and where in the sequence
 * the worst row lies (first, last, tile edge, interior). */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "fuzz.h"

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
  case AC_V_NONDETERMINISTIC: return 5;
  case AC_V_MASKED_LEAK: return 6;
  case AC_V_SUSPECT: return 7;
  case AC_V_WEAK_CLASS: return 7;
  case AC_V_OUT_OF_DOMAIN: return 8;
  default: return 9;
  }
}
