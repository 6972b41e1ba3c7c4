/* process.c: test kernels whose process dies or never returns (CRASH, TIMEOUT). */
#include "config.h"
#include "testkernels.h"
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static int *volatile nowhere = NULL;

static int run_crash(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  *nowhere = 1;   /* a real invalid access: SIGSEGV */
  raise(SIGSEGV);
  return 0;
}

static int run_abort(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  abort();
}

static int run_hang(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  volatile uint64_t spin = 0;
  for (;;) spin++;
  return 0;
}

static int run_exit(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  _exit(3);
}

/* Crashes only on problems with dk == 3: a defect that some cases reach and others do not. */
static int run_crash_dk3(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  if (p->dk == 3) *nowhere = 3;
  return ac_tk_reference(p, t, 0, err, n);
}

#define TK(var, nm, desc, fn) \
  const attncheck_kernel var = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), nm, desc, NULL, \
                                ATTNCHECK_MEM_HOST, 0, ac_tk_supports_all, fn, {NULL, NULL, NULL, NULL}, \
                                NULL, 0, 0, 0, 0, NULL, 0, 0, NULL}

TK(ac_tk_crash, "test-crash", "test kernel: dereferences a null pointer (CRASH, SIGSEGV)", run_crash);
TK(ac_tk_abort, "test-abort", "test kernel: calls abort() (CRASH, SIGABRT)", run_abort);
TK(ac_tk_hang, "test-hang", "test kernel: loops forever (TIMEOUT)", run_hang);
TK(ac_tk_exit, "test-exit", "test kernel: exits its process with status 3 (CRASH)", run_exit);
TK(ac_tk_crash_dk3, "test-crash-dk3", "test kernel: correct, but dereferences a null pointer when dk == 3 (CRASH on some cases)",
   run_crash_dk3);
