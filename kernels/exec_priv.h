/* owner: exec backend */
/* exec_priv.h: what the one-shot command (exec.c) and the persistent worker (exec_worker.c)
 * share. Internal to kernels/. */
#ifndef AC_EXEC_PRIV_H
#define AC_EXEC_PRIV_H
#include <sys/types.h>
#include "exec_decl.h"
#include "harness.h"

typedef struct {
  char *command;   /* the template with {in} / {out}; for exec-persistent the worker command */
  /* exec-persistent worker state */
  pid_t pid;       /* 0: not running */
  int fd;          /* our end of the socketpair joined to the worker's stdin and stdout */
  char dir[512];   /* temporary directory for the case files and the worker's stderr */
  char buf[4096];  /* bytes read from the worker, not yet a full line */
  size_t nbuf;
  int discard;     /* dropping the rest of an over-long line */
  int answered;    /* the running worker has answered a request */
  int dead;        /* workers in a row that ended before answering */
  char unusable[480];   /* why no worker can serve (then every run is a HARNESS_ERROR) */
  int not_started;      /* unusable because it could not be started (the shell's 126 or 127) */
  int64_t seq;
  ac_exec_decl decl;   /* the worker's declaration (exec-persistent) */
} exec_priv;

#define AC_EXEC_MAX_DEAD 3

/* In a forked child: stderr to errpath (truncated), then /bin/sh -c command; exit status
 * 127 when it cannot be run. */
_Noreturn void ac_exec_shell(const char *command, const char *errpath);
/* Last non-empty line of a small text file, for error messages. */
void ac_exec_last_line(const char *path, char *out, size_t n);
/* Reads o (and lse) from the output file into r; KERNEL_ERROR with a message otherwise. */
void ac_exec_read_outputs(const char *path, const ac_case *c, const ac_counts *cn, const ac_run_opts *o,
                          ac_run_result *r);
/* Ends the worker and its process group: hard kills it at once, otherwise EOF on its stdin
 * first and up to a second to exit. */
void ac_exec_worker_stop(exec_priv *pv, int hard);
/* A running worker for a request (started, and asked to declare itself the first time, when
 * there is none): 0, or -1 with r a HARNESS_ERROR when no worker can serve (ac_exec_unusable). */
int ac_exec_worker_begin(exec_priv *pv, double timeout_s, ac_run_result *r, ac_err *e);
/* Sends the request line req (ending in a newline) and waits for the answer within timeout_s:
 * 1 on "ok" (r->kernel_ms set); 0 with r a CRASH (the worker ended), TIMEOUT (killed) or the
 * status of an "error" answer (ac_exec_decl_error). */
int ac_exec_worker_request(exec_priv *pv, const char *req, double timeout_s, ac_run_result *r);
/* ac_exec_run for an exec-persistent kernel (r already reset, cn the case's counts). */
int ac_exec_persistent_run(const ac_kernel *k, const ac_case *c, const ac_counts *cn, const ac_run_opts *o,
                           ac_run_result *r, ac_err *e);

#endif
