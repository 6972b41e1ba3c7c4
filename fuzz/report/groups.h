/* groups.h: a directory's findings in their defects (docs/fuzzing.md "Defects"): the defect each
 * finding's report.json records (engine/defects.c); a finding without one (stored by an older
 * version, or not assigned yet) is grouped with the others of its mechanism instead: the verdict
 * kind, the worst element's tensor and reason, its row's position class and the (minimized) case's
 * shape class, as recorded, never judged again. The finding directories stay as they are. */
#ifndef AC_GROUPS_H
#define AC_GROUPS_H
#include <json-c/json.h>
#include <stdio.h>
#include "fuzz.h"

typedef struct {
  int defect;      /* the defect report.json records (> 0); 0: none, grouped by the mechanism below */
  char kind[32];   /* FAIL, METAMORPHIC, OUT-OF-SEQUENCE, ... */
  char what[64];   /* "lse value", "o non-finite", ... ("" for kinds without a worst element) */
  char row[16];    /* first, last, tile-edge, interior, none */
  char shape[400]; /* ac_mechanism_shape of the minimized case (else of the case as found) */
  int pending;     /* 1: no defect yet, its minimization pending (a campaign stopped first; --resume
                      finishes it): listed apart, not counted as a defect */
} ac_mech;

/* The defect or mechanism of one finding from its report.json: the "mechanism" an older minimizer
 * recorded, else the worst element, position and (minimized) size the report holds. */
void ac_mech_of(json_object *report, ac_mech *m);
/* "lse value, row first, f32 none tq1 tk65-128" (the kind left out). */
void ac_mech_desc(const ac_mech *m, char *buf, size_t n);
/* Groups m[0..n) (ranked: the most severe first): the findings of one recorded defect together,
 * the others by mechanism; group[i] the group of finding i, numbered in the order of their first
 * finding. Returns the number of groups. */
int ac_mech_group(const ac_mech *m, int n, int *group);
/* One defect in words for the summary and the report: "FAIL o value and the LSE value on 1 query x
 * 65 keys (dk 1, dv 1, f32); needs nothing else". */
void ac_defect_line(const ac_defect_info *d, char *buf, size_t n);
/* The defects of l ordered for reading: those with a fail-policy finding first, then by id
 * (order[0 .. l->n)). */
void ac_defects_order(const ac_defect_list *l, int *order);

#endif
