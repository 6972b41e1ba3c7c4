/* judge_dropout.c: a dropout case is judged against the kernel's own keep-mask (docs/dropout.md):
 * the case a run is compared with is a copy of the case holding the mask the run returned, and its
 * oracle is that copy's. */
#include "config.h"
#include "judge.h"
#include <stdio.h>
#include <string.h>
#include "variants.h"

int ac_judge_dropout_case(const ac_case *c, const ac_run_result *run, ac_case *out, ac_err *e)
{
  if (!(c->p.f.used & AC_FEAT_DROPOUT) || run->status != AC_RUN_OK) return 0;
  int64_t n = ac_feat_tensor_count(&c->p, AC_FT_DROPOUT_MASK);
  if (!run->dropout_mask || run->mask_count != n) return ac_err_set(e, "the run returned no dropout mask");
  if (run->n_mask_unwritten)
    return ac_err_set(e, "%lld dropout mask elements neither 0 nor 1", (long long)run->n_mask_unwritten);
  if (ac_case_copy(out, c, e) < 0) return ac_err_set(e, "cannot copy the case for the kernel's dropout mask: %s", e->msg);
  memcpy(out->dropout_mask, run->dropout_mask, (size_t)n);
  return 1;
}

int ac_judge_dropout_same(const ac_case *c, const ac_case *dc)
{
  return c->dropout_mask && !memcmp(c->dropout_mask, dc->dropout_mask, (size_t)ac_feat_tensor_count(&c->p, AC_FT_DROPOUT_MASK));
}

const ac_case *ac_judged_case(const ac_judged *j, const ac_case *c)
{
  return j->has_dcase ? &j->dcase : c;
}

int ac_judge_dropout_forward(const ac_kernel *k, const ac_case *c, const ac_run_opts *ro, ac_case *out,
                             ac_grad_run_result *grun, ac_err *e)
{
  ac_run_result fr;
  memset(&fr, 0, sizeof fr);
  if (ac_harness_run(k, c, ro, &fr, e) < 0 && fr.status == AC_RUN_HARNESS_ERROR) {
    ac_run_result_free(&fr);
    return -1;
  }
  int rc = ac_judge_dropout_case(c, &fr, out, e);
  if (rc <= 0) {   /* the forward did not finish, or left its mask unwritten: the backward's result says so */
    grun->status = fr.status == AC_RUN_OK ? AC_RUN_KERNEL_ERROR : fr.status;
    grun->sig = fr.sig;
    grun->dtype = c->p.dtype;
    if (fr.status != AC_RUN_OK) snprintf(grun->msg, sizeof grun->msg, "the forward (its dropout mask): %.470s", fr.msg);
    else snprintf(grun->msg, sizeof grun->msg, "the forward left %lld dropout mask elements neither 0 nor 1",
                  (long long)fr.n_mask_unwritten);
    rc = 0;
  }
  ac_run_result_free(&fr);
  return rc;
}
