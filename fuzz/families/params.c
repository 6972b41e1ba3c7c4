/* params.c: the JSON object that records a generator's knobs (exact: doubles as hex floats). */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

void ac_params_init(ac_params *pb)
{
  pb->cap = 256;
  pb->buf = ac_xmalloc(pb->cap);
  pb->buf[0] = '{';
  pb->buf[1] = 0;
  pb->len = 1;
}

static void put(ac_params *pb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(ac_params *pb, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(pb->buf + pb->len, pb->cap - pb->len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < pb->cap - pb->len) {
      pb->len += (size_t)n;
      return;
    }
    pb->cap = pb->cap * 2 + (size_t)(n > 0 ? n : 0);
    pb->buf = ac_xrealloc(pb->buf, pb->cap);
  }
}

static void key(ac_params *pb, const char *k)
{
  put(pb, "%s\"%s\":", pb->len > 1 ? "," : "", k);
}

void ac_params_int(ac_params *pb, const char *k, int64_t v)
{
  key(pb, k);
  put(pb, "%lld", (long long)v);
}

void ac_params_dbl(ac_params *pb, const char *k, double v)
{
  key(pb, k);
  put(pb, "\"%a\"", v);
}

void ac_params_str(ac_params *pb, const char *k, const char *v)
{
  key(pb, k);
  put(pb, "\"");
  for (const char *s = v; *s; s++) {
    if (*s == '"' || *s == '\\') put(pb, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) put(pb, "\\u%04x", (unsigned)(unsigned char)*s);
    else put(pb, "%c", *s);
  }
  put(pb, "\"");
}

char *ac_params_finish(ac_params *pb)
{
  put(pb, "}");
  char *s = pb->buf;
  pb->buf = NULL;
  pb->len = pb->cap = 0;
  return s;
}

void ac_params_free(ac_params *pb)
{
  free(pb->buf);
  pb->buf = NULL;
  pb->len = pb->cap = 0;
}
