/* groups.h: findings grouped into distinct defects by their mechanism (docs/fuzzing.md "Distinct
 * defects"): the verdict kind, the worst element's tensor and reason, its row's position class
 * and the (minimized) case's shape class. A layer over findings/<sig>/report.json: the finding
 * directories stay as they are. */
#ifndef AC_GROUPS_H
#define AC_GROUPS_H
#include <json-c/json.h>

typedef struct {
  char kind[32];   /* FAIL, METAMORPHIC, OUT-OF-SEQUENCE, ... */
  char what[64];   /* "lse value", "o non-finite", ... ("" for kinds without a worst element) */
  char row[16];    /* first, last, tile-edge, interior, none */
  char shape[400]; /* ac_mechanism_shape of the minimized case (else of the case as found) */
} ac_mech;

/* The mechanism of one finding from its report.json: the "mechanism" the minimizer recorded;
 * for a finding without it (not minimized, or stored by an older version) the worst element,
 * position and (minimized) size the report holds. */
void ac_mech_of(json_object *report, ac_mech *m);
/* "lse value, row first, f32 none tq1 tk65-128" (the kind left out). */
void ac_mech_desc(const ac_mech *m, char *buf, size_t n);
/* Groups m[0..n) (ranked: the most severe first) into defects: group[i] the defect of finding i,
 * numbered in the order of their first finding. Returns the number of defects. */
int ac_mech_group(const ac_mech *m, int n, int *group);

#endif
