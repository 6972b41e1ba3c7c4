/* suggest.c: "did you mean" by edit distance (unknown kernel names, options, commands). */
#include "config.h"
#include "suggest.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#define AC_SUGGEST_MAX_LEN 256

static size_t min3(size_t a, size_t b, size_t c)
{
  size_t m = a < b ? a : b;
  return m < c ? m : c;
}

static int same(char x, char y)
{
  return tolower((unsigned char)x) == tolower((unsigned char)y);
}

size_t ac_edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  /* three rows of the (la+1) x (lb+1) table: the one before the last, the last, this one */
  size_t *block = ac_xcalloc(3 * (lb + 1), sizeof *block), *pp = block, *p = pp + lb + 1, *c = p + lb + 1;
  for (size_t j = 0; j <= lb; j++) p[j] = j;
  for (size_t i = 1; i <= la; i++) {
    c[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      c[j] = min3(p[j] + 1, c[j - 1] + 1, p[j - 1] + cost);
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) && pp[j - 2] + 1 < c[j])
        c[j] = pp[j - 2] + 1;
    }
    size_t *t = pp;
    pp = p, p = c, c = t;
  }
  size_t d = p[lb];
  free(block);
  return d;
}

const char *ac_suggest(const char *word, const char *const *names, size_t n)
{
  size_t lw = strlen(word);
  if (!lw || lw > AC_SUGGEST_MAX_LEN) return NULL;
  size_t limit = lw / 3 > 2 ? lw / 3 : 2, best = limit + 1;
  const char *pick = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!names[i] || strlen(names[i]) > AC_SUGGEST_MAX_LEN) continue;
    size_t d = ac_edit_distance(word, names[i]);
    if (d < best && strcmp(word, names[i])) best = d, pick = names[i];
  }
  return pick;
}
