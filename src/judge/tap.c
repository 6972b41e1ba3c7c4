/* tap.c: TAP and JUnit writers. */
#include "config.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>

void ac_test_log_add(ac_test_log *l, const char *name, ac_status st, const char *summary, const char *detail,
                     double seconds)
{
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = ac_xrealloc(l->v, sizeof *l->v * (size_t)l->cap);
  }
  ac_test_record *r = &l->v[l->n++];
  r->name = ac_xstrdup(name);
  r->status = st;
  r->summary = ac_xstrdup(summary ? summary : "");
  r->detail = ac_xstrdup(detail ? detail : "");
  r->seconds = seconds;
}

void ac_test_log_free(ac_test_log *l)
{
  for (int i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].summary);
    free(l->v[i].detail);
  }
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* One line without newlines and without '#' (a TAP directive marker). */
static void tap_text(FILE *f, const char *s)
{
  for (; *s; s++) fputc(*s == '\n' || *s == '#' ? ' ' : *s, f);
}

static void tap_comment(FILE *f, const char *text)
{
  const char *s = text;
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    fprintf(f, "# %.*s\n", (int)n, s);
    s += n;
    if (*s) s++;
  }
}

void ac_tap_write(FILE *f, const ac_test_log *l)
{
  int skipped = 0;
  for (int i = 0; i < l->n; i++) skipped += l->v[i].status == AC_STATUS_SKIP;
  if (l->n == 0 || skipped == l->n) {
    fprintf(f, "1..0 # SKIP ");
    tap_text(f, l->n ? (l->v[0].detail[0] ? l->v[0].detail : l->v[0].summary) : "no cases");
    fputc('\n', f);
    return;
  }
  fprintf(f, "TAP version 13\n1..%d\n", l->n);
  for (int i = 0; i < l->n; i++) {
    const ac_test_record *r = &l->v[i];
    int bad = r->status == AC_STATUS_FAIL || r->status == AC_STATUS_ERROR;
    fprintf(f, "%s %d - ", bad ? "not ok" : "ok", i + 1);
    tap_text(f, r->name);
    if (r->status == AC_STATUS_SKIP) {
      fprintf(f, " # SKIP ");
      tap_text(f, r->detail[0] ? r->detail : r->summary);
      fputc('\n', f);
      continue;
    }
    fputc('\n', f);
    tap_comment(f, r->summary);
    if (r->detail[0]) tap_comment(f, r->detail);
  }
}

static void xml_text(FILE *f, const char *s)
{
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default:
      if (c < 0x20 && c != '\n' && c != '\t') fputc(' ', f);
      else fputc(c, f);
    }
  }
}

void ac_junit_write(FILE *f, const char *suite, const ac_test_log *l)
{
  int nf = 0, ne = 0, ns = 0;
  double t = 0;
  for (int i = 0; i < l->n; i++) {
    nf += l->v[i].status == AC_STATUS_FAIL;
    ne += l->v[i].status == AC_STATUS_ERROR;
    ns += l->v[i].status == AC_STATUS_SKIP;
    t += l->v[i].seconds;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
  fprintf(f, "  <testsuite name=\"");
  xml_text(f, suite);
  fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n", l->n, nf, ne, ns, t);
  for (int i = 0; i < l->n; i++) {
    const ac_test_record *r = &l->v[i];
    fprintf(f, "    <testcase classname=\"");
    xml_text(f, suite);
    fprintf(f, "\" name=\"");
    xml_text(f, r->name);
    fprintf(f, "\" time=\"%.3f\"", r->seconds);
    const char *tag = r->status == AC_STATUS_FAIL ? "failure" : r->status == AC_STATUS_ERROR ? "error"
                      : r->status == AC_STATUS_SKIP ? "skipped" : NULL;
    if (!tag && !r->detail[0]) {
      fprintf(f, "/>\n");
      continue;
    }
    fprintf(f, ">\n");
    if (tag) {
      fprintf(f, "      <%s message=\"", tag);
      xml_text(f, r->summary);
      fprintf(f, "\">");
      xml_text(f, r->detail);
      fprintf(f, "</%s>\n", tag);
    } else {
      fprintf(f, "      <system-out>");
      xml_text(f, r->summary);
      fputc('\n', f);
      xml_text(f, r->detail);
      fprintf(f, "</system-out>\n");
    }
    fprintf(f, "    </testcase>\n");
  }
  fprintf(f, "  </testsuite>\n</testsuites>\n");
}
