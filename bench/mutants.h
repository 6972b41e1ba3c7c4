/* mutants.h: what bench/mutants.c and bench/mutants_defects.c share. */
#ifndef AC_BENCH_MUTANTS_H
#define AC_BENCH_MUTANTS_H
#include <stddef.h>
#include <stdint.h>
#include "fuzz.h"
#include "harness.h"

#define MAXM 96
#define MAXS 16

/* Case number (1-based) of the first finding of a campaign directory with policy fail (want_fail)
 * or not, and its found_after_s in *t (when t is not NULL); -1 when there is none. */
int64_t bm_first_case(const char *dir, int want_fail, double *t);
/* o for a quiet campaign of mutant into dir with seed 1000 + s, the find-rate table's policies
 * (MASKED-LEAK and WEAK-CLASS fail) and a 20-s kernel timeout; run it with stdout to /dev/null. */
void bm_campaign_opts(ac_campaign_opts *o, const char *mutant, const char *dir, int s);
void bm_campaign_run(ac_campaign_opts *o);
/* task(t, arg) for t = 0 .. ntask-1, each in a forked child (results through shared memory), at most
 * njobs at a time; returns when all have ended. */
void bm_pool(int ntask, int njobs, void (*task)(int t, void *arg), void *arg);
/* Removes dir and everything under it. */
void bm_rm_rf(const char *dir);
/* Median over seeds (-1 = not found counts as infinity); -1 when the median is not found. */
int64_t bm_median(const int64_t *v, int n);
/* Median of the seeds' times (-1: not found, counted as infinity), -1 when the median is not
 * found; the per-seed list into per. */
double bm_median_time(const double *v, int n, char *per, size_t len);
/* "-" for -1, else the number. */
void bm_fmt_med(char *buf, size_t n, int64_t m);
/* 1 when name is one of the comma-separated list's entries. */
int bm_in_list(const char *list, const char *name);

/* --defects: for every mutant of sel and nseeds seeds, a campaign that runs its whole time_s (or
 * cap cases), minimizing its findings; the defects it reports per seed, and the first FAIL's case
 * number and time, printed per mutant; jobs campaigns at a time; tmpdir holds them. */
int bm_defects(const attncheck_kernel *const *sel, int ns, int nseeds, double time_s, int64_t cap, int jobs,
               const char *tmpdir);

#endif
