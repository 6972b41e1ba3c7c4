/* child.h: run a function in a forked child with a time limit; the parent always carries on. */
#ifndef AC_CHILD_H
#define AC_CHILD_H
#include <sys/types.h>
#include "util.h"

typedef struct {
  int exited;        /* 1: the child called _exit / returned; code holds its status */
  int code;
  int sig;           /* killed by this signal (0 if none) */
  int timed_out;     /* 1: killed by us at the time limit */
  double wall_s;
} ac_child_outcome;

/* Forks; the child resets the fatal signals to their defaults, disables core files and
 * calls fn(arg), then _exit(return value). new_group: the child leads its own session and
 * process group, and the whole group is killed when the child ends or times out, so that
 * nothing it started outlives it.
 * timeout_s <= 0: no limit. The child is always reaped. -1 only when fork fails. */
int ac_child_run(int (*fn)(void *arg), void *arg, double timeout_s, int new_group,
                 ac_child_outcome *out, ac_err *e);

/* What every child does first: fatal signals back to their defaults, signals unblocked,
 * no core files; new_group: lead a new session and process group (setsid), whose members
 * are all killed when the thread that forked it ends (Linux: SIGHUP as parent-death signal). */
void ac_child_setup(int new_group);

/* For a new_group child about to exec: forks; the child returns and execs, the parent stays
 * behind as a guard that holds none of its files, waits for it and ends as it ended (same
 * exit status or signal), so that the group is still killed when attncheck ends, even when
 * what is exec'd replaces the SIGHUP handler of ac_child_setup. */
void ac_child_guard(void);

/* 1 once child pid has ended, without reaping it (a zombie keeps its pid and group id taken). */
int ac_child_ended(pid_t pid);

/* Ends child pid: waits up to grace_s for it to end by itself, then kills it; group: also
 * kills its process group (before the reap, while the group id is still its own). Reaps it
 * and stores its wait status, then the strays it left (ac_child_reap_strays). Returns 1 when
 * it had ended by itself, 0 when it was killed. */
int ac_child_end(pid_t pid, int group, double grace_s, int *status);

/* Shared anonymous memory created before fork (MAP_SHARED|MAP_ANONYMOUS), zeroed. NULL on failure. */
void *ac_shared_alloc(size_t n, ac_err *e);
void ac_shared_free(void *p, size_t n);

/* Children and what they leave (reaper.c). A process that forks children through
 * ac_child_fork becomes a child subreaper (Linux): descendants that lose their parent become
 * its children. ac_child_fork registers the child (the registry of a forked copy starts empty);
 * every child a process that runs cases forks must come from it, or ac_child_reap_strays kills
 * it. ac_child_forget: a registered child was reaped. ac_child_reap_strays: kills and reaps
 * every child that is not registered, and the children they leave, until none is left (at most
 * a few seconds for one that SIGKILL cannot end); the number killed. ac_child_subreaper: this
 * process becomes a subreaper without forking (a persistent worker, whose every child is a
 * kernel's). Without PR_SET_CHILD_SUBREAPER only the process groups are killed. */
pid_t ac_child_fork(void);
void ac_child_forget(pid_t pid);
int ac_child_reap_strays(void);
void ac_child_subreaper(void);

#endif
