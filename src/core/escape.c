/* escape.c: the one escaping of text that attncheck did not write itself (what kernels, exec
 * workers, case files and findings directories supply) before it reaches any output. */
#include "config.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

/* Length of the UTF-8 character at s (1 to 4) when it is well formed (no overlong form, no
 * surrogate, at most U+10FFFF), else 0; its code point in *cp. */
static size_t utf8_char(const unsigned char *s, unsigned *cp)
{
  unsigned c = s[0];
  size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
  if (!n) return 0;
  unsigned v = n == 1 ? c : c & (0x7fu >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = v << 6 | (s[i] & 0x3fu);
  }
  static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < min[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

/* The escaped form of one character (code point cp, its n bytes at s) into rep: NUL-terminated. */
static void escape_char(const unsigned char *s, size_t n, unsigned cp, char rep[16])
{
  static const char hex[] = "0123456789abcdef";
  if (n == 0) { /* a byte that is not UTF-8 */
    rep[0] = '\\', rep[1] = 'x', rep[2] = hex[s[0] >> 4], rep[3] = hex[s[0] & 15], rep[4] = 0;
  } else if (cp == '\n' || cp == '\r' || cp == '\t') {
    rep[0] = '\\', rep[1] = cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't', rep[2] = 0;
  } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) { /* C0, DEL, C1 (ESC and CSI among them) */
    rep[0] = '\\', rep[1] = 'x', rep[2] = hex[(cp >> 4) & 15], rep[3] = hex[cp & 15], rep[4] = 0;
  } else if (cp == 0x2028 || cp == 0x2029) { /* line and paragraph separators: line breaks to some readers */
    memcpy(rep, cp == 0x2028 ? "\\u2028" : "\\u2029", 7);
  } else {
    memcpy(rep, s, n);
    rep[n] = 0;
  }
}

const char *ac_str_escape(const char *s, char *out, size_t n)
{
  size_t o = 0;
  if (!n) return out;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
    unsigned cp = 0;
    size_t len = utf8_char(p, &cp);
    char rep[16];
    escape_char(p, len, cp, rep);
    size_t rl = strlen(rep);
    if (o + rl >= n) break; /* cut between characters, never inside one or inside an escape */
    memcpy(out + o, rep, rl);
    o += rl;
    p += len ? len : 1;
  }
  out[o] = 0;
  return out;
}

char *ac_str_escape_dup(const char *s)
{
  size_t n = 6 * strlen(s ? s : "") + 1; /* \u2028 (6 bytes) for 3, \xhh (4) for 1: at most 4 per byte */
  char *out = ac_xmalloc(n);
  ac_str_escape(s, out, n);
  return out;
}

void ac_str_escape_inplace(char *s, size_t n)
{
  if (!n) return;
  int clean = 1;
  for (const unsigned char *p = (const unsigned char *)s; *p && clean; p++) clean = *p >= 0x20 && *p < 0x7f;
  if (clean) return; /* plain printable ASCII: nothing to do (the usual case) */
  char *t = ac_str_escape_dup(s);
  ac_str_escape(t, s, n); /* t is escaped already: this only cuts it to n, between characters */
  free(t);
}
