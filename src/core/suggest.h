/* suggest.h: "did you mean": the known name nearest to a misspelt one. */
#ifndef AC_SUGGEST_H
#define AC_SUGGEST_H
#include <stddef.h>

/* The optimal-string-alignment distance of a and b, ignoring ASCII case: insertions, deletions,
 * substitutions and swaps of two adjacent characters count one each. */
size_t ac_edit_distance(const char *a, const char *b);
/* The first of names[0..n) nearest to word, when its distance is at most max(2, strlen(word)/3)
 * and it differs from word; else NULL (also for a word over 256 characters). */
const char *ac_suggest(const char *word, const char *const *names, size_t n);

#endif
