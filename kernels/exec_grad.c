/* owner: exec backend */
/* exec_grad.c: the backward of an exec-persistent worker that declares one ("backward": true,
 * exec_decl.h). attncheck writes the case with the forward's o and lse (the exact forward's, as
 * plugins get them: ac_grad_forward_inputs) and do (dO) to IN, sends "backward IN OUT", and
 * reads dq, dk, dv (and dsinks with sinks) from OUT (grad_npz.h); the request has the forward's
 * guards (exec_worker.c: time limit, a worker that ends is a CRASH, "error ..." answers). */
#include "config.h"
#include "exec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exec_decl.h"
#include "exec_priv.h"
#include "variants.h"
#include "grad_npz.h"

int ac_exec_has_backward(const ac_kernel *k, double timeout_s)
{
  exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT) return 0;
  if (pv->decl.state == AC_DECL_UNKNOWN && !pv->unusable[0]) {
    /* read the declaration; whoever runs cases (maybe a forked process) starts its own worker */
    ac_exec_prepare(k, timeout_s);
    ac_exec_worker_stop(pv, 0);
  }
  return pv->decl.state == AC_DECL_OK && pv->decl.backward;
}

uint32_t ac_exec_backward_caps(const ac_kernel *k)
{
  const exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT || pv->decl.state != AC_DECL_OK || !pv->decl.backward) return 0;
  return pv->decl.backward_feats;
}

const char *ac_exec_backward_refusal(const ac_kernel *k, const ac_case *c)
{
  const exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT)
    return "one-shot exec kernels have no backward (an exec-persistent: worker declares one)";
  /* not read yet: the run reads it and asks again; a bad declaration: the run's ERROR */
  if (pv->decl.state == AC_DECL_UNKNOWN || pv->decl.state == AC_DECL_BAD) return NULL;
  static _Thread_local char why[300];
  const char *who = pv->decl.name[0] ? pv->decl.name : "the worker";
  uint32_t missing = c->p.f.used & ~ac_exec_backward_caps(k) & AC_FEAT_KNOWN;
  char names[120];
  if (pv->decl.state != AC_DECL_OK || !pv->decl.backward)
    snprintf(why, sizeof why, "%.128s declares no backward (\"backward\" in its declaration)", who);
  else if (missing)
    snprintf(why, sizeof why, "%.128s's backward does not take %s (\"backward\" in its declaration)", who,
             ac_feat_list(missing, names, sizeof names));
  else
    return NULL;
  return why;
}

static void take_status(const ac_run_result *rr, ac_grad_run_result *r)
{
  r->status = rr->status;
  r->sig = rr->sig;
  r->kernel_ms = rr->kernel_ms;
  snprintf(r->msg, sizeof r->msg, "%s", rr->msg);
}

/* The request's input: the case with o, lse and do. */
static int write_input(const ac_case *c, const void *o, const float *lse, const char *path, ac_err *e)
{
  ac_case w = *c;   /* a shallow copy: nothing of it is freed */
  w.has_o = w.has_lse = 1;
  w.o = (void *)o;
  w.lse = (float *)lse;
  return ac_case_write(&w, path, e);
}

int ac_exec_run_backward(const ac_kernel *k, const ac_case *c, const void *o, const float *lse, const ac_run_opts *opts,
                         ac_grad_run_result *r, ac_err *e)
{
  exec_priv *pv = k->priv;
  ac_run_result rr;
  memset(&rr, 0, sizeof rr);
  const char *why = ac_exec_backward_refusal(k, c);
  if (!why && ac_exec_worker_begin(pv, opts->timeout_s, &rr, e)) {
    take_status(&rr, r);
    return -1;
  }
  if (why || (why = ac_exec_backward_refusal(k, c))) {   /* again once the declaration is read */
    r->status = AC_RUN_UNSUPPORTED;
    snprintf(r->msg, sizeof r->msg, "%s", why);
    return 0;
  }
  if (ac_exec_decl_admit(&pv->decl, &c->p, &rr)) {   /* a bad declaration: HARNESS_ERROR */
    take_status(&rr, r);
    return rr.status == AC_RUN_HARNESS_ERROR ? ac_err_set(e, "%s", r->msg) : 0;
  }
  char in[700], out[700], req[1500];
  ac_err pe;
  pv->seq++;
  snprintf(in, sizeof in, "%s/in-%lld.npz", pv->dir, (long long)pv->seq);
  snprintf(out, sizeof out, "%s/out-%lld.npz", pv->dir, (long long)pv->seq);
  if (write_input(c, o, lse, in, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "cannot write the case for the worker: %.400s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  unlink(out);
  snprintf(req, sizeof req, "backward %s %s\n", in, out);
  if (ac_exec_worker_request(pv, req, opts->timeout_s, &rr)) {
    if (ac_grad_npz_read(out, c, 1, r, &pe)) {
      rr.status = AC_RUN_KERNEL_ERROR;
      snprintf(rr.msg, sizeof rr.msg, "worker's backward output: %.480s", pe.msg);
    } else {
      rr.status = AC_RUN_OK;
    }
  }
  take_status(&rr, r);
  unlink(in);
  unlink(out);
  return 0;
}
