/* tplugin_malformed.c: a plugin whose list is malformed in the way $AC_TPLUGIN_DEFECT names:
 * count (an absurd count), dup (two kernels with one name), ctrl (a newline in a name),
 * precision (an unknown precision class), backward (ATTNCHECK_CAP_BACKWARD with a struct that ends
 * before run_backward), bwdcaps (backward_caps naming a feature outside caps). Every variant must be
 * refused at load. */
#include <stdlib.h>
#include <string.h>
#include "attncheck_kernel.h"

static int run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)
{
  (void)p, (void)t, (void)err, (void)n;
  return 0;
}

#define AC_TK(name, prec) {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), name, "malformed", prec, \
                           ATTNCHECK_MEM_HOST, 0, NULL, run, {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL}
static const attncheck_kernel ok = AC_TK("malformed-ok", "fp32");
static const attncheck_kernel again = AC_TK("malformed-ok", NULL);
static const attncheck_kernel ctrl = AC_TK("malformed\nline", NULL);
static const attncheck_kernel prec = AC_TK("malformed-prec", "fp33-fa9");
static const attncheck_kernel bwd = {ATTNCHECK_ABI_VERSION, ATTNCHECK_KERNEL_V1_SIZE, "malformed-bwd", "malformed", NULL,
                                     ATTNCHECK_MEM_HOST, ATTNCHECK_CAP_BACKWARD, NULL, run, {NULL, NULL, NULL, NULL}, NULL, 0, 0,
                                     0, 0, NULL, 0, 0, NULL};
static int bwd_run(const attncheck_problem *p, const attncheck_tensors *t, const attncheck_grad_tensors *g, char *err,
                   size_t n)
{
  (void)g;
  return run(p, t, err, n);
}
static const attncheck_kernel bwdcaps = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), "malformed-bwdcaps", "malformed",
                                         NULL, ATTNCHECK_MEM_HOST, ATTNCHECK_FEAT_WINDOW | ATTNCHECK_CAP_BACKWARD, NULL,
                                         run, {NULL, NULL, NULL, NULL}, bwd_run,
                                         ATTNCHECK_FEAT_WINDOW | ATTNCHECK_FEAT_SOFTCAP, 0, 0, 0, NULL, 0, 0, NULL};

const attncheck_kernel *const *attncheck_plugin_kernels(size_t *count)
{
  static const attncheck_kernel *const one[] = {&ok}, *const dup[] = {&ok, &again}, *const bad_name[] = {&ok, &ctrl},
                                       *const bad_prec[] = {&ok, &prec}, *const bad_bwd[] = {&ok, &bwd},
                                       *const bad_bwdcaps[] = {&ok, &bwdcaps};
  const char *d = getenv("AC_TPLUGIN_DEFECT");
  d = d ? d : "";
  *count = 2;
  if (!strcmp(d, "count")) {
    *count = (size_t)1 << 40;
    return one;
  }
  if (!strcmp(d, "dup")) return dup;
  if (!strcmp(d, "ctrl")) return bad_name;
  if (!strcmp(d, "precision")) return bad_prec;
  if (!strcmp(d, "backward")) return bad_bwd;
  if (!strcmp(d, "bwdcaps")) return bad_bwdcaps;
  *count = 1;
  return one;
}
