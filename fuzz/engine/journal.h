/* journal.h: the campaign directory's lock and journal (internal to fuzz/engine/campaign.c).
 *
 * DIR/lock is held with flock(2) by the supervisor of the one campaign running in DIR and
 * names its pid; the kernel drops it when that process dies, so a lock left by a killed run
 * is simply taken. DIR/journal is append-only, one record a line:
 *   format=2             first line
 *   next=N               case numbers below N may have been taken (written, synced, before use)
 *   c K FAMILY           case number K was evaluated and everything it found is stored
 *   f SIG KIND FAMILY    finding SIG is stored (after its directory was renamed into place)
 * A number below the last next= without a "c" line (a kill, a finding that could not be
 * stored) is evaluated again by the next run. A journal without format=2 (older campaigns)
 * counts every number below next= as evaluated. */
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

#endif
