/* journal.h: the campaign directory's lock and journal (internal to fuzz/engine/campaign.c).
 *
 * DIR/lock is held with flock(2) by the supervisor of the one campaign running in DIR and
 * names its pid; the kernel drops it when that process dies, so a lock left by a killed run
 * is simply taken. DIR/journal is append-only, one record a line:
 *   format=2             first line
 *   next=N               case numbers below N may have been taken (written, synced, before use)
 *   d K HASH FAMILY HOW  case number K is drawn (written before it is evaluated): HASH is the
 *                        ac_case_hash of the case, HOW "f" a fresh draw of FAMILY (a function of
 *                        the seed and K), "m P SIGMA" the mutation of case P with step SIGMA (a
 *                        hex float; the mutation's random stream is a function of the seed and
 *                        K), "s SEED SIGMA" the mutation of DIR/seeds/SEED.npz (a corpus case);
 *                        " t=T" after it (T >= 1): the draw's try T was kept, the T before it
 *                        refused by the kernel's supports() (each try's stream a function of
 *                        the seed, K and T; no " t=": try 0)
 *   c K FAMILY [j|s|x]   case number K was evaluated and everything it found is stored: j judged,
 *                        s SKIP, x neither (the tool failed, the worker died; none: older runs)
 *   f SIG KIND FAMILY    finding SIG is stored (after its directory was renamed into place)
 * A number below the last next= without a "c" line (a kill, a finding that could not be
 * stored) is evaluated again by the next run, drawn again from its "d" line and those of its
 * ancestors (the search's choices depend on every earlier case, so only the record makes the
 * same case again); a number without one was never drawn and takes a new draw. A journal
 * without format=2 (older campaigns) counts every number below next= as evaluated; readers
 * skip lines they do not know, so older attncheck versions read this journal too. */
#ifndef AC_FUZZ_JOURNAL_H
#define AC_FUZZ_JOURNAL_H
#include <stdint.h>
#include "fuzz.h"

/* ac_campaign_lock and ac_campaign_clean_tmp (fuzz.h) are in campdir.c. */

typedef struct {
  int64_t next;              /* the last next= (0 if none) */
  int64_t cases;             /* case numbers evaluated */
  int64_t *holes;            /* numbers below next never evaluated, ascending (malloc'd) */
  int64_t nholes;
  int64_t per_fam[64], per_fam_find[64];   /* by slot of the names given to ac_journal_load */
  int64_t findings, findings_fail;
  int64_t judged, skipped; /* "c" lines marked j and s; unmarked: cases of older runs */
  int64_t unmarked;
  int added;                 /* finding lines added for directories the journal lacked */
} ac_journal_state;

/* Reads DIR/journal (cutting a torn last line), adds an "f" line for every finding directory
 * it lacks, and sums it up; fam: the campaign's family names (n <= 64), pol: decides
 * findings_fail. *fd: the journal open for appending (close-on-exec). 0 or -1. */
int ac_journal_open(const char *dir, const char *const *fam, int nfam, const ac_policies *pol, ac_journal_state *st,
                    int *fd, ac_err *e);
void ac_journal_state_free(ac_journal_state *st);
/* Appends one line (one write); sync: fdatasync after it. 0 or -1 (errno set). */
int ac_journal_append(int fd, int sync, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The draw of one case, as its "d" line records it (fuzz/engine/redraw.c makes it again). */
typedef struct {
  int64_t k;
  uint64_t hash; /* ac_case_hash of the case drawn */
  char family[64];
  char how; /* 'f' fresh, 'm' mutation of case parent, 's' mutation of seed file seed */
  int64_t parent;
  uint64_t seed;
  double sigma;
  int attempt; /* the try kept (0: the first draw; t=T in the line) */
} ac_draw_rec;

/* The line of d (with its newline) into buf; its length, or -1 when it does not fit. */
int ac_draw_format(const ac_draw_rec *d, char *buf, size_t n);
/* Parses a "d" line; 0 or -1. */
int ac_draw_parse(const char *line, ac_draw_rec *d);
/* The records of the numbers want[0..n) and of all their ancestors, read from the end of
 * DIR/journal backwards (a parent's record precedes its children's; the last record of a number
 * counts): *out (malloc'd, sorted by k; numbers without a record are absent), *nout. 0 or -1. */
int ac_journal_draws(const char *dir, const int64_t *want, int64_t n, ac_draw_rec **out, int64_t *nout, ac_err *e);
/* The record of k in v[0..n) (sorted by k), NULL when absent. */
const ac_draw_rec *ac_draw_find(const ac_draw_rec *v, int64_t n, int64_t k);

#endif
