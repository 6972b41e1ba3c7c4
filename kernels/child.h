/* child.h: run a function in a forked child with a time limit; the parent always carries on. */
#ifndef AC_CHILD_H
#define AC_CHILD_H
#include "util.h"

typedef struct {
  int exited;        /* 1: the child called _exit / returned; code holds its status */
  int code;
  int sig;           /* killed by this signal (0 if none) */
  int timed_out;     /* 1: killed by us at the time limit */
  double wall_s;
} ac_child_outcome;

/* Forks; the child resets the fatal signals to their defaults, disables core files and
 * calls fn(arg), then _exit(return value). new_group: the child leads its own process
 * group and the whole group is killed on timeout (for commands that spawn others).
 * timeout_s <= 0: no limit. The child is always reaped. -1 only when fork fails. */
int ac_child_run(int (*fn)(void *arg), void *arg, double timeout_s, int new_group,
                 ac_child_outcome *out, ac_err *e);

/* What every child does first: fatal signals back to their defaults, signals unblocked,
 * no core files; new_group: lead a new process group. */
void ac_child_setup(int new_group);

/* Shared anonymous memory created before fork (MAP_SHARED|MAP_ANONYMOUS), zeroed. NULL on failure. */
void *ac_shared_alloc(size_t n, ac_err *e);
void ac_shared_free(void *p, size_t n);

#endif
