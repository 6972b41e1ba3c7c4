/* defects_merge.c: the defects of a merged directory (attncheck merge). Each finding the merge
 * brought in without a defect of its own there takes one by the rule of a campaign (defects.c):
 * its case judged again on its recorded kernel (or the merge's --kernel), so that shards of one
 * campaign unite their defects and two defects never become one because a shard said so; without
 * re-runs, by the fingerprint its shard recorded ("shard_defect") and the trigger by which it joined
 * there, not judged again. Findings that joined by a trigger or as an overflow are assigned last. */
#include "config.h"
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

typedef struct {
  char sig[256];
  char *ident;                    /* what its judgement depends on: kernel, precision, policies, ... */
  json_object *recorded;          /* the shard's fingerprint, or NULL */
} pending;

typedef struct {
  pending *v;
  int n, cap;
  const char *override;
} collect_ctx;

static const char *str(json_object *o, const char *k)
{
  json_object *v;
  return json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : "";
}

static int collect(void *arg, ac_finding_dir *f)
{
  collect_ctx *cc = arg;
  json_object *v, *js = f->report;
  if (json_object_object_get_ex(js, "defect", &v)) return 0;
  if (cc->n == cc->cap) cc->v = ac_xrealloc(cc->v, sizeof *cc->v * (size_t)(cc->cap = cc->cap ? 2 * cc->cap : 16));
  pending *p = &cc->v[cc->n++];
  snprintf(p->sig, sizeof p->sig, "%s", f->sig);
  size_t n = 64 + strlen(str(js, "kernel_spec")) + strlen(str(js, "precision_override")) + strlen(str(js, "policies")) +
             strlen(str(js, "empty_rows")) + strlen(str(js, "alibi_lse_override")) + (cc->override ? strlen(cc->override) : 0);
  p->ident = ac_xmalloc(n);
  snprintf(p->ident, n, "%s\n%s\n%s\n%s\n%s\n%g", cc->override ? cc->override : str(js, "kernel_spec"),
           str(js, "precision_override"), str(js, "policies"), str(js, "empty_rows"), str(js, "alibi_lse_override"),
           json_object_object_get_ex(js, "timeout_s", &v) ? json_object_get_double(v) : 0.0);
  p->recorded = json_object_object_get_ex(js, "shard_defect", &v) ? json_object_get(v) : NULL;
  return 0;
}

int ac_defects_assign_all(const char *dir, const char *kernel_override, int trust, int rerun, int *nassigned, ac_err *e)
{
  collect_ctx cc = {NULL, 0, 0, kernel_override};
  const ac_replay_opts ro = {.kernel = kernel_override, .trust = trust};
  *nassigned = 0;
  if (ac_defects_rebuild(dir, NULL, e) || ac_findings_each(dir, NULL, "merge", collect, &cc, e) < 0) return -1;
  ac_defect_env *env = ac_xcalloc(1, sizeof *env);
  ac_finding_ctx fc;
  int have = 0, failed = 0;
  const char *have_ident = NULL;
  /* the findings that joined their shard's defect by a trigger after the others: the defect they
   * joined is there first */
  for (int k = 0; k < 2 * cc.n; k++) {
    pending *p = &cc.v[k % cc.n];
    if ((k < cc.n) != !(ac_defect_trigger_parse(p->recorded) || ac_defect_over_parse(p->recorded))) continue;
    ac_err fe;
    if (rerun && (!have || strcmp(have_ident, p->ident))) {   /* one kernel for the findings that share it */
      if (have) ac_finding_ctx_free(&fc);
      have = 0;
      char fdir[4400], label[4500];
      snprintf(fdir, sizeof fdir, "%s/findings/%s", dir, p->sig);
      snprintf(label, sizeof label, "%s/report.json", fdir);
      char *txt = ac_data_read(fdir, "report.json", AC_FINDING_JSON_MAX, NULL, &fe);
      json_object *js = txt ? json_tokener_parse(txt) : NULL;
      free(txt);
      have = js && ac_finding_eval_ctx(js, label, &ro, &fc, &fe) == 0;
      json_object_put(js);
      if (!have) {   /* left without a defect; the first such failure is said */
        if (!failed++) *e = fe;
        continue;
      }
      have_ident = p->ident;
    }
    env->recorded = p->recorded;
    ac_defect_result res;
    if (ac_defect_assign(dir, p->sig, rerun ? &fc.x : NULL, env, &res, &fe) == 0)
      ++*nassigned;
    else if (!failed++)
      *e = fe;
  }
  if (have) ac_finding_ctx_free(&fc);
  for (int i = 0; i < cc.n; i++) {
    free(cc.v[i].ident);
    json_object_put(cc.v[i].recorded);
  }
  free(cc.v);
  free(env);
  return failed ? -1 : 0;
}
