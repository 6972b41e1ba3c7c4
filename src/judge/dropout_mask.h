/* dropout_mask.h: the DROPOUT-MASK verdict, a kernel's dropout keep-mask judged by itself: the kept
 * fraction within a binomial bound for p, and no structure a broken generator leaves (the same mask
 * for every head or batch, repeating rows, a power-of-two stride along the rows or the keys), each
 * test with a proven false-alarm probability, 1e-9 per case in all (dropout_mask.c, docs/dropout.md). */
#ifndef AC_DROPOUT_MASK_H
#define AC_DROPOUT_MASK_H
#include <stdint.h>
#include "casefile.h"
#include "compare.h"

typedef struct {
  int64_t visible, kept;   /* the judged entries (positions the rows see) and the kept ones */
  double lo, hi;           /* the kept counts a correct generator stays within */
  int tests;               /* tests run (those with at least one entry or pair) */
  int failed;              /* tests that fired */
  char msg[256];           /* the first one that fired */
  char fired[256];         /* the names of all that fired, comma-separated ("kept fraction", "heads (h, h+1)", ...) */
} ac_dropout_verdict;

/* The verdict on mask ([B][H][tq][tk], 0 or 1) for case c (its p, mask, window, boolean mask). */
void ac_dropout_mask_judge(const ac_case *c, const uint8_t *mask, ac_dropout_verdict *v);
/* The verdict on case c's own mask (c->dropout_mask: the kernel's, once judge.c put it there) into rep:
 * its statistics, and DROPOUT-MASK when a test fires. Nothing for a case without dropout. */
void ac_dropout_mask_report(const ac_case *c, ac_report *rep);

#endif
