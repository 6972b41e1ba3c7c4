/* campaign_findings.c: a campaign's findings: report.json built from an evaluation, stored once
 * per signature and recorded in the journal, then minimized beside the original case. */
#include "config.h"
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "campaign.h"
#include "dout.h"
#include "exec.h"
#include "exec_decl.h"
#include "grad_judge.h"

static json_object *jd(double v)
{
  if (isfinite(v)) return json_object_new_double(v);
  return json_object_new_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* The element's position (b, h, i, d) as four members of o. */
/* x under key as an exact hex-float string and under key_decimal as a JSON number. */
static void add_hex_dec(json_object *o, const char *key, double x)
{
  char buf[64], dk[64];
  snprintf(buf, sizeof buf, "%a", x);
  json_object_object_add(o, key, json_object_new_string(buf));
  snprintf(dk, sizeof dk, "%s_decimal", key);
  json_object_object_add(o, dk, jd(x));
}

static void add_position(json_object *o, int64_t b, int64_t h, int64_t i, int64_t d)
{
  json_object_object_add(o, "b", json_object_new_int64(b));
  json_object_object_add(o, "h", json_object_new_int64(h));
  json_object_object_add(o, "i", json_object_new_int64(i));
  json_object_object_add(o, "d", json_object_new_int64(d));
}

/* Two values compared at one element: {what: name, position, ka: a, kb: b} (hex and decimal). */
static json_object *compared_at(const char *what, const char *name, int64_t b, int64_t h, int64_t i, int64_t d,
                                const char *ka, double a, const char *kb, double bv)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, what, json_object_new_string(name));
  add_position(o, b, h, i, d);
  add_hex_dec(o, ka, a);
  add_hex_dec(o, kb, bv);
  return o;
}

/* "env": the environment variables the kernel's worker declares it reads, with their values in
 * this process (the worker's environment), null when unset; repro.sh sets them again. */
static void add_env(ctx_t *c, json_object *r)
{
  const ac_exec_decl *d = c->kernel->kind == AC_KIND_EXEC_PERSISTENT ? ac_exec_declaration(c->kernel) : NULL;
  if (!d || !d->nenv) return;
  json_object *env = json_object_new_object();
  for (int i = 0; i < d->nenv; i++) {
    const char *v = getenv(d->env[i]);
    json_object_object_add(env, d->env[i], v ? json_object_new_string(v) : NULL);
  }
  json_object_object_add(r, "env", env);
}

static json_object *build_report(ctx_t *c, const ac_case *cs, const ac_eval *ev, ac_verdict_kind k, const char *family,
                                 const char *pos, const char *sig, int64_t gk, const char *label)
{
  json_object *r = json_object_new_object();
  char size[200], buf[64];
  ac_case_size_str(cs, size, sizeof size);
  json_object_object_add(r, "signature", json_object_new_string(sig));
  json_object_object_add(r, "kernel", json_object_new_string(c->kname));
  json_object_object_add(r, "kernel_spec", json_object_new_string(c->o->kernel_spec));
  char rs[4096];   /* an exec command's program as this campaign resolved it (PATH, directory): repro.sh runs it */
  if (ac_exec_spec_resolved(c->o->kernel_spec, rs, sizeof rs))
    json_object_object_add(r, "kernel_spec_resolved", json_object_new_string(rs));
  json_object_object_add(r, "kind", json_object_new_string(ac_verdict_name(k)));
  json_object_object_add(r, "policy", json_object_new_string(ac_policy_name(c->x.pol.p[k])));
  json_object_object_add(r, "family", json_object_new_string(family));
  json_object_object_add(r, "position", json_object_new_string(pos));
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->seed_eff);
  json_object_object_add(r, "seed", json_object_new_string(buf));
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)c->o->seed);
  json_object_object_add(r, "campaign_seed", json_object_new_string(buf));
  snprintf(buf, sizeof buf, "%d/%d", c->o->shard_i, c->o->shard_n);
  json_object_object_add(r, "shard", json_object_new_string(buf));
  json_object_object_add(r, "case_index", json_object_new_int64(gk));
  json_object_object_add(r, "generator", json_object_new_string(cs->generator));
  if (cs->params_json) {
    json_object *pj = json_tokener_parse(cs->params_json);
    if (pj) json_object_object_add(r, "params", pj);
  }
  json_object_object_add(r, "found_after_s", json_object_new_double(ac_now() - c->t0));
  json_object_object_add(r, "err_w", jd(ev->max_err_w));
  json_object_object_add(r, "err_e", jd(ev->max_err_e));
  json_object_object_add(r, "rows", json_object_new_string(ac_report_rows(&ev->rep, buf, sizeof buf)));
  json_object_object_add(r, "label_rows", json_object_new_string(label));
  json_object_object_add(r, "mismatch", json_object_new_string(ac_report_mismatch(&ev->rep, buf, sizeof buf) ? buf : ""));
  json_object_object_add(r, "max_ulps", jd(ev->rep.max_ulps));
  json_object_object_add(r, "nmse", jd(ev->rep.nmse));
  json_object_object_add(r, "n_fail", json_object_new_int64(ev->rep.n_fail));
  json_object_object_add(r, "n_suspect", json_object_new_int64(ev->rep.n_suspect));
  json_object_object_add(r, "budget", json_object_new_string(ev->rep.budget_desc));
  json_object_object_add(r, "precision", json_object_new_string(ev->rep.prec_name ? ev->rep.prec_name : ""));
  json_object_object_add(r, "precision_source", json_object_new_string(ev->rep.prec_source ? ev->rep.prec_source : ""));
  json_object_object_add(r, "note", json_object_new_string(ev->rep.note));
  const ac_worst_elem *w = ac_report_worst(&ev->rep);
  if (w->valid) {
    json_object *wo = compared_at("tensor", w->is_lse ? "lse" : "o", w->b, w->h, w->i, w->d, "exact", w->exact, "kernel", w->kernel);
    json_object_object_add(wo, "ulps", jd(w->ulps));
    json_object_object_add(wo, "err_w", jd(w->err_w));
    json_object_object_add(wo, "err_e", jd(w->err_e));
    json_object_object_add(r, "worst", wo);
  }
  ac_eval_row_json(ev, r);
  if (k == AC_V_METAMORPHIC && ev->meta.checked) {
    const ac_meta_result *m = &ev->meta;
    json_object *mo = compared_at("transformation", m->transform, m->b, m->h, m->i, m->d, "kernel", m->a, "kernel_transformed", m->t);
    json_object_object_add(mo, "diff", jd(m->diff));
    json_object_object_add(mo, "tolerance", jd(m->tol));
    json_object_object_add(mo, "n_compared", json_object_new_int64(m->n_compared));
    json_object_object_add(mo, "n_disagree", json_object_new_int64(m->n_bad));
    json_object_object_add(r, "metamorphic", mo);
  }
  if (k == AC_V_GRAD_METAMORPHIC && ev->gmeta.checked) {
    const ac_gmeta_result *m = &ev->gmeta;
    json_object *mo = json_object_new_object();
    json_object_object_add(mo, "transformation", json_object_new_string(m->transform));
    json_object_object_add(mo, "bit_for_bit", json_object_new_boolean(m->exact));
    json_object_object_add(mo, "tensor", json_object_new_string(m->tensor == 3 ? "dsinks" : ac_grad_tensor_name(m->tensor)));
    json_object_object_add(mo, "x", json_object_new_int64(m->x));
    json_object_object_add(mo, "t", json_object_new_int64(m->t));
    add_hex_dec(mo, "kernel", m->a);
    add_hex_dec(mo, "kernel_transformed", m->b);
    json_object_object_add(mo, "diff", jd(m->diff));
    json_object_object_add(mo, "tolerance", jd(m->tol));
    json_object_object_add(mo, "n_compared", json_object_new_int64(m->n_compared));
    json_object_object_add(mo, "n_disagree", json_object_new_int64(m->n_bad));
    json_object_object_add(r, "grad_metamorphic", mo);
  }
  json_object_object_add(r, "size", json_object_new_string(size));
  json_object_object_add(r, "elements", json_object_new_int64(ac_case_elems(cs)));
  json_object_object_add(r, "minimized", json_object_new_boolean(0));
  json_object_object_add(r, "minimize_state", json_object_new_string(c->o->minimize ? "pending" : "off"));
  if (c->o->precision) json_object_object_add(r, "precision_override", json_object_new_string(c->o->precision));
  if (c->o->alibi_lse) json_object_object_add(r, "alibi_lse_override", json_object_new_string(c->o->alibi_lse));
  json_object_object_add(r, "policies", json_object_new_string(c->o->policies));
  json_object_object_add(r, "empty_rows", json_object_new_string(ac_empty_name(c->x.cmp.empty)));
  if (c->x.cmp.empty_set)   /* --empty-rows given: replay overrides the kernel's declaration with it too */
    json_object_object_add(r, "empty_rows_override", json_object_new_string(ac_empty_name(c->x.cmp.empty)));
  json_object_object_add(r, "timeout_s", json_object_new_double(c->x.run.timeout_s));
  json_object_object_add(r, "tool_version", json_object_new_string(PACKAGE_VERSION));
  add_env(c, r);
  /* one shell command that reproduces the finding exactly: every word quoted */
  char fdir[4400], qdir[9000], qspec[9000], rbuf[18100];
  snprintf(fdir, sizeof fdir, "%s/findings/%s", c->o->out_dir, sig);
  if (ac_shquote(fdir, qdir, sizeof qdir) && ac_shquote(c->o->kernel_spec, qspec, sizeof qspec)) {
    snprintf(rbuf, sizeof rbuf, "attncheck replay %s --kernel %s", qdir, qspec);
    json_object_object_add(r, "repro", json_object_new_string(rbuf));
  }
  return r;
}

#define MINIMIZE_ALL_ROWS_WORK 16777216.0   /* multiply-adds of the oracle (a few tens of ms) */

typedef struct {
  ctx_t *c;
  ac_verdict_kind kind;
  int learnt;
  ac_fmode mode;                  /* the finding's failure mode, learnt on the first call (its own case) */
} holds_ctx;

/* The minimized case keeps the finding's kind and every quantity failing as it did (fmode.c). */
static int holds(const ac_case *cs, void *arg)
{
  holds_ctx *h = arg;
  ac_eval ev;
  ac_err e;
  ac_eval_ctx x = h->c->x;
  /* a shrunk case may fall outside the 1 in 8 */
  if (h->kind == AC_V_METAMORPHIC || h->kind == AC_V_GRAD_METAMORPHIC) x.metamorphic = AC_META_ALWAYS;
  /* every row where that costs little: a row sample drawn from the case's hash would tell a shrunk
   * case's failure mode from other rows than the case's */
  if (ac_case_oracle_work(cs) <= MINIMIZE_ALL_ROWS_WORK) x.rows_all = 1;
  ac_eval_case(&x, cs, h->kind == AC_V_NONDETERMINISTIC, &ev, &e);
  if (!h->learnt && (ev.kinds & (1u << h->kind))) ac_fmode_of(&ev, h->kind, &h->mode), h->learnt = 1;
  return h->learnt && ac_fmode_covers(&ev, &h->mode);
}

int ac_cp_minimize_case(ctx_t *c, const ac_case *cs, ac_verdict_kind kind, const int64_t hint[4], ac_case *mn,
                        int *evals)
{
  holds_ctx hc = {c, kind, 0, {0}};
  ac_min_opts mo = {.max_evals = c->o->min_evals, .max_seconds = c->o->min_seconds};   /* ac_minimize: 200 when 0 */
  ac_err e;
  int rc = ac_minimize(cs, hint[0], hint[1], hint[2], hint[3], holds, &hc, &mo, mn, &e);
  *evals = mo.evals;
  return rc;
}

/* minimized.npz beside finding sig's case, and the minimization's facts in its report.json (r). */
static void store_minimized(ctx_t *c, const char *sig, json_object *r, const ac_case *cs, const ac_case *mn, int evals,
                            double seconds)
{
  char p[4400];
  ac_err e;
  snprintf(p, sizeof p, "%s/findings/%s/minimized.npz", c->o->out_dir, sig);
  if (ac_case_write(mn, p, &e)) return;
  char size[200];
  ac_case_size_str(mn, size, sizeof size);
  json_object_object_add(r, "minimized", json_object_new_boolean(1));
  json_object_object_add(r, "minimize_state", json_object_new_string("done"));
  json_object_object_add(r, "minimized_size", json_object_new_string(size));
  json_object_object_add(r, "minimized_elements", json_object_new_int64(ac_case_elems(mn)));
  json_object_object_add(r, "minimize_evals", json_object_new_int(evals));
  json_object_object_add(r, "minimize_s", json_object_new_double(seconds));
  const char *txt = json_str(r);
  snprintf(p, sizeof p, "%s/findings/%s/report.json", c->o->out_dir, sig);
  ac_write_file_atomic(p, txt, strlen(txt), &e);
  json_object *ev = ac_cp_event(c, "minimized");
  ac_cp_jstr(ev, "sig", sig);
  ac_cp_jint(ev, "elements", ac_case_elems(cs));
  ac_cp_jint(ev, "minimized_elements", ac_case_elems(mn));
  ac_cp_jint(ev, "evals", evals);
  ac_cp_emit(c, ev);
}

/* Minimize the finding in fdir (case.npz + report.json) and store minimized.npz beside it. */
void ac_cp_minimize_finding(ctx_t *c, const char *sig)
{
  char fdir[4096], p[4200];
  snprintf(fdir, sizeof fdir, "%s/findings/%s", c->o->out_dir, sig);
  snprintf(p, sizeof p, "%s/report.json", fdir);
  json_object *r = json_object_from_file(p);
  if (!r) return;
  json_object *v;
  ac_verdict_kind kind = AC_V_FAIL;
  if (json_object_object_get_ex(r, "kind", &v)) ac_verdict_parse(json_object_get_string(v), &kind);
  int64_t hb = 0, hh = 0, hi = -1, hd = 0;
  json_object *w;
  if (json_object_object_get_ex(r, "worst", &w)) {
    if (json_object_object_get_ex(w, "b", &v)) hb = json_object_get_int64(v);
    if (json_object_object_get_ex(w, "h", &v)) hh = json_object_get_int64(v);
    if (json_object_object_get_ex(w, "i", &v)) hi = json_object_get_int64(v);
    if (json_object_object_get_ex(w, "d", &v)) hd = json_object_get_int64(v);
  }
  ac_case cs, mn;
  ac_err e;
  snprintf(p, sizeof p, "%s/case.npz", fdir);
  if (ac_case_read(&cs, p, &e)) {
    json_object_put(r);
    return;
  }
  const int64_t hint[4] = {hb, hh, hi, hd};
  int evals = 0;
  double t = ac_now();
  if (ac_cp_minimize_case(c, &cs, kind, hint, &mn, &evals) == 0) {
    store_minimized(c, sig, r, &cs, &mn, evals, ac_now() - t);
    ac_case_free(&mn);
  }
  ac_case_free(&cs);
  json_object_put(r);
  ac_cp_assign_defect(c, sig, NULL);
}

static void defect_lock(void *arg)
{
  shm_t *sh = arg;
  if (pthread_mutex_lock(&sh->defect_mu) == EOWNERDEAD) pthread_mutex_consistent(&sh->defect_mu);
}

static void defect_unlock(void *arg) { pthread_mutex_unlock(&((shm_t *)arg)->defect_mu); }

void ac_cp_assign_defect(ctx_t *c, const char *sig, const ac_defect_fp *known)
{
  if (!c->denv) {
    c->denv = ac_xcalloc(1, sizeof *c->denv);
    c->denv->lock = defect_lock, c->denv->unlock = defect_unlock, c->denv->arg = c->sh;
  }
  ac_defect_result res;
  ac_err e;
  double t = ac_now();
  c->denv->recorded = known ? ac_defect_fp_json(known) : NULL;
  int rc = ac_defect_assign(c->o->out_dir, sig, known ? NULL : &c->x, c->denv, &res, &e);
  json_object_put(c->denv->recorded);
  c->denv->recorded = NULL;
  if (rc) {
    ac_cp_log_error(c, "defect", sig, -1, e.msg);
    return;
  }
  if (res.is_new && res.reproduced) {   /* a defect that did not fail again is listed, not counted */
    ac_cp_lock(c->sh);
    c->sh->defects++;
    c->sh->defects_fail += c->x.pol.p[res.kind] == AC_POLICY_FAIL;
    pthread_mutex_unlock(&c->sh->mu);
  }
  json_object *ev = ac_cp_event(c, "defect");
  ac_cp_jstr(ev, "sig", sig);
  ac_cp_jint(ev, "defect", res.id);
  json_object_object_add(ev, "new", json_object_new_boolean(res.is_new));
  ac_cp_jstr(ev, "key", res.key);
  ac_cp_jint(ev, "judgements", res.evals);
  ac_cp_jnum(ev, "seconds", "%.3f", ac_now() - t);
  ac_cp_emit(c, ev);
}

/* A backward finding's case carries the dO it was judged with (member "do"), so that `check --grad`
 * and the minimizer see the same dO: 1 with that copy in out, 0 when cs is stored as it is. */
static int with_dout(const ac_case *cs, ac_verdict_kind k, ac_case *out)
{
  ac_err e;
  if ((k != AC_V_GRAD_FAIL && k != AC_V_GRAD_METAMORPHIC) || cs->dout || ac_case_copy(out, cs, &e)) return 0;
  if (ac_dout_generate(out, ac_eval_grad_pattern(cs), ac_case_hash(cs), &e) == 0) return 1;
  ac_case_free(out);
  return 0;
}

/* For tests: ATTNCHECK_TEST_STORE_FAIL_AT=N makes storing a finding of case number N or later fail
 * as on a full disk (tests/tfuzz_store_fail.sh; a disk that fills up is tfuzz_fulldisk.sh). */
static int injected_store_failure(int64_t gk, ac_err *e)
{
  const char *s = getenv("ATTNCHECK_TEST_STORE_FAIL_AT");
  char *end;
  long long n = s && *s ? strtoll(s, &end, 10) : -1;
  if (n < 0 || *end || gk < n) return 0;
  ac_err_set(e, "ATTNCHECK_TEST_STORE_FAIL_AT=%lld: No space left on device", n);
  return 1;
}

const char *ac_cp_signature(ctx_t *c, const ac_case *lc, const ac_eval *ev, int k, const char *family, char *sig,
                            size_t n)
{
  const char *pos =
      ac_row_position(k == AC_V_FAIL || k == AC_V_SUSPECT || k == AC_V_MASKED_LEAK || k == AC_V_WEAK_CLASS ? ev->worst_i
                      : k == AC_V_METAMORPHIC                                                              ? ev->meta.i
                                                                                                           : -1,
                      lc->p.tq);
  int exec = c->kernel->kind == AC_KIND_EXEC || c->kernel->kind == AC_KIND_EXEC_PERSISTENT;
  ac_signature(exec ? c->o->kernel_spec : c->kname, (ac_verdict_kind)k, family, pos, sig, n);
  return pos;
}

/* The findings of case cs with evaluation ev of lc (cs itself, or its minimized form whose label on
 * all rows ev is: rl->have_mn). */
static int record(ctx_t *c, const ac_case *cs, const ac_case *lc, const ac_eval *ev, const ac_relabel *rl,
                  const char *family, int64_t gk)
{
  for (int k = 0; k < AC_V_NKINDS; k++) {
    if (!(ev->kept & (1u << k))) continue;
    /* a case that FAILs is not also a SUSPECT finding: the same elements, a weaker claim */
    if (k == AC_V_SUSPECT && (ev->kept & (1u << AC_V_FAIL))) continue;
    char sig[256], p[4400];
    const char *pos = ac_cp_signature(c, lc, ev, k, family, sig, sizeof sig);
    snprintf(p, sizeof p, "%s/findings/%s", c->o->out_dir, sig);
    struct stat st;
    if (stat(p, &st) == 0) {
      ac_cp_lock(c->sh);
      c->sh->repeats++;
      pthread_mutex_unlock(&c->sh->mu);
      continue;
    }
    json_object *r = build_report(c, cs, ev, (ac_verdict_kind)k, family, pos, sig, gk, rl->label);
    ac_err e;
    ac_case wd;
    const ac_case *stored = with_dout(cs, (ac_verdict_kind)k, &wd) ? &wd : cs;
    int st_rc = injected_store_failure(gk, &e) ? -1 : ac_finding_store(c->o->out_dir, sig, stored, json_str(r), &e);
    if (stored == &wd) ac_case_free(&wd);
    if (st_rc > 0 && rl->have_mn) store_minimized(c, sig, r, cs, &rl->mn, rl->evals, rl->min_s);
    json_object_put(r);
    if (st_rc < 0) {
      ac_cp_log_error(c, "store finding", sig, gk, e.msg);
      c->sh->storage_error = 1;
      ac_cp_stop(c, "cannot store finding %s of case %lld: %s: campaign stopped; free space and --resume to store it",
                sig, (long long)gk, e.msg);
      return -1;
    }
    if (st_rc == 0) continue;
    if (ac_journal_append(c->journal_fd, 0, "f %s %s %s\n", sig, ac_verdict_name((ac_verdict_kind)k), family)) {
      ac_cp_journal_failed(c, errno);
      return -1;
    }
    int fail = c->x.pol.p[k] == AC_POLICY_FAIL;
    ac_cp_lock(c->sh);
    c->sh->findings++;
    if (fail) {
      c->sh->findings_fail++;
      c->sh->any_fail = 1;
      if (c->o->stop_on_fail) c->sh->stop = 1;
    }
    snprintf(c->sh->last_finding, sizeof c->sh->last_finding, "%s", sig);
    c->sh->last_finding_at = ac_now() - c->t0;
    for (int i = 0; i < c->nfam; i++) {
      int nf;
      const ac_family *fams = ac_families(&nf);
      if (!strcmp(fams[c->fam[i]].name, family)) c->sh->per_fam_find[i]++;
    }
    pthread_mutex_unlock(&c->sh->mu);
    json_object *le = ac_cp_event(c, "finding");
    ac_cp_jstr(le, "sig", sig);
    ac_cp_jstr(le, "kind", ac_verdict_name((ac_verdict_kind)k));
    ac_cp_jint(le, "case", gk);
    ac_cp_jnum(le, "err_w", "%.6g", ev->err_w);
    ac_cp_jnum(le, "err_e", "%.6g", ev->score);
    ac_cp_emit(c, le);
    if (c->o->minimize && !rl->have_mn) {
      ac_cp_minimize_finding(c, sig);
    } else if (rl->have_mn) {
      ac_cp_assign_defect(c, sig, NULL);
    } else {   /* not minimized: the case's own evaluation, nothing judged again */
      ac_defect_fp fp;
      ac_defect_fp_of_eval(lc, ev, (ac_verdict_kind)k, &fp);
      ac_cp_assign_defect(c, sig, &fp);
    }
  }
  return 0;
}

int ac_cp_record_findings(ctx_t *c, const ac_case *cs, const ac_eval *ev, const char *family, int64_t gk)
{
  ac_relabel rl;
  const ac_eval *lev = ac_cp_relabel(c, cs, ev, family, &rl); /* labels from the whole case */
  int rc = record(c, cs, rl.have_mn ? &rl.mn : cs, lev, &rl, family, gk);
  ac_relabel_free(&rl);
  return rc;
}

/* One finding of a directory read as data: its name when it has no defect and is not waiting for
 * its minimization. */
typedef struct {
  int w, jobs, idx;
  char (*names)[256];
  int n, cap;
} pending_ctx;

static int pending_one(void *arg, ac_finding_dir *f)
{
  pending_ctx *pc = arg;
  json_object *v;
  if (pc->idx++ % pc->jobs != pc->w || json_object_object_get_ex(f->report, "defect", &v)) return 0;
  if (json_object_object_get_ex(f->report, "minimize_state", &v) && !strcmp(json_object_get_string(v), "pending"))
    return 0;
  if (pc->n == pc->cap) pc->names = ac_xrealloc(pc->names, sizeof *pc->names * (size_t)(pc->cap = pc->cap ? 2 * pc->cap : 8));
  snprintf(pc->names[pc->n++], 256, "%s", f->sig);
  return 0;
}

void ac_cp_pending_defects(ctx_t *c, int w)
{
  pending_ctx pc = {w, c->o->jobs, 0, NULL, 0, 0};
  ac_err e;
  ac_findings_each(c->o->out_dir, NULL, "fuzz", pending_one, &pc, &e);
  for (int i = 0; i < pc.n && !c->sh->stop; i++) ac_cp_assign_defect(c, pc.names[i], NULL);
  free(pc.names);
}
