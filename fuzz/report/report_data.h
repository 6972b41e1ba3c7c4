/* report_data.h: what the HTML report of a campaign directory draws, read from the directory
 * alone: stats, log.jsonl (case and finding events) and findings/<sig>/report.json. */
#ifndef AC_REPORT_DATA_H
#define AC_REPORT_DATA_H
#include <json-c/json.h>
#include <stdint.h>
#include "fuzz.h"

#define AC_RD_MAXFAM 64
#define AC_RD_STATS_MAX (1u << 20) /* the largest stats file read */

typedef struct {
  double t, err_e, err_w;
  int64_t cs;            /* case number (-1: unknown) */
  int fam;               /* index into ac_rdata.fam */
  uint32_t kinds;        /* verdict kinds of the case */
} ac_rd_point;

typedef struct {
  double t;
  int kind;              /* ac_verdict_kind */
  char sig[256];         /* the finding's signature ("" when the log does not say) */
} ac_rd_event;

typedef struct {
  char sig[256];
  json_object *js;       /* report.json */
  int sev;
  double err_w;
  int defect;            /* its group (groups.h): its defect, or its mechanism without one; from 0 in rank order */
  int defect_id;         /* the defect its report.json records (0: none) */
  int pending;           /* 1: none yet, its minimization pending (groups.h) */
} ac_rd_finding;

typedef struct {
  char fam[AC_RD_MAXFAM][64];
  int nfam;
  int64_t fam_cases[AC_RD_MAXFAM];   /* from stats (family.NAME), else counted from points */
  ac_rd_point *p;
  int np;
  int from_cases;                    /* 1: points are every logged case; 0: the findings only */
  ac_rd_event *ev;                   /* finding events, by time */
  int nev;
  ac_rd_finding *f;                  /* ranked by severity (fail policy first), then err/W */
  int nf;
  int ndefects;                      /* groups of the findings: their defects, and mechanisms of those without */
  ac_defect_list dl;                 /* the defects the findings record (engine/defects.c) */
  int nunconf;                       /* those of them not confirmed (ac_defect_confirmed): listed, not counted */
  int npending, npend_groups;        /* findings a stopped campaign left pending, and their groups: not counted */
  double *defect_t;                  /* [ndefects]: when each group's first finding was found */
  char *stats;                       /* the stats file text, or NULL */
  char kernel[256];
  char link_base[4300];              /* prefix of links to the findings' files ("" or "DIR/") */
  int64_t cases;
  double kappa;
} ac_rdata;

/* Reads dir. 0, or -1 with a message when dir is not a campaign directory. */
int ac_rdata_load(const char *dir, ac_rdata *d, char *msg, size_t n);
void ac_rdata_free(ac_rdata *d);
/* Index of a family name (a "+mut" suffix ignored), added when new; -1 when full. */
int ac_rdata_family(ac_rdata *d, const char *name);
/* A JSON number that may be stored as a string ("nan", "inf"). */
double ac_rd_num(json_object *v);
double ac_rd_get(json_object *o, const char *key, double dflt);
const char *ac_rd_str(json_object *o, const char *key);

#endif
