/* defects.c: the defects of a campaign directory (docs/fuzzing.md "Defects"). Each finding is
 * assigned to one when it has been minimized: its fingerprint from judging its case again
 * (defect.c), then the first defect of the same kernel and fingerprint whose own case, judged
 * again, fails the same way takes it; else it opens a new one. The assignment is the finding's
 * report.json "defect" member (its id, fingerprint and the case that shows it); DIR/defects.json,
 * rewritten after each assignment, is the index: each defect with its findings, families and its
 * best (smallest) case and repro.sh. */
#include "config.h"
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"

static const char *jstr(json_object *o, const char *k)
{
  json_object *v;
  return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                               : "";
}

static int64_t jint(json_object *o, const char *k, int64_t dflt)
{
  json_object *v;
  return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
                                                                                            : dflt;
}

/* ---- reading: the defects the findings of a directory record -------------------------------- */

typedef struct {
  ac_defect_list *l;
} read_ctx;

static ac_defect_info *find_id(ac_defect_list *l, int id)
{
  for (int i = 0; i < l->n; i++)
    if (l->v[i].id == id) return &l->v[i];
  return NULL;
}

static void add_family(ac_defect_info *d, const char *fam)
{
  char f[64];
  snprintf(f, sizeof f, "%s", fam);
  f[strcspn(f, "+")] = 0;   /* a mutation's family is its parent's */
  for (const char *s = d->families; *s;) {
    size_t n = strcspn(s, ",");
    if (n == strlen(f) && !strncmp(s, f, n)) return;
    s += n + (s[n] == ',');
  }
  size_t at = strlen(d->families);
  if (at + strlen(f) + 2 < sizeof d->families) snprintf(d->families + at, sizeof d->families - at, "%s%s", at ? "," : "", f);
  d->nfam++;
}

static int read_one(void *arg, ac_finding_dir *f)
{
  read_ctx *rc = arg;
  ac_defect_list *l = rc->l;
  json_object *js = f->report, *dj;
  if (!json_object_object_get_ex(js, "defect", &dj) || !json_object_is_type(dj, json_type_object)) {
    l->unassigned++;
    return 0;
  }
  int id = (int)jint(dj, "id", 0);
  ac_defect_fp fp;
  if (id <= 0 || ac_defect_fp_parse(dj, &fp)) {
    l->unassigned++;
    return 0;
  }
  ac_defect_info *d = find_id(l, id);
  if (d)   /* the defect fails in every way its findings do */
    for (int q = 0; q < AC_NQTY; q++)
      if (!d->fp.mode.why[q]) d->fp.mode.why[q] = fp.mode.why[q];
  if (!d) {
    if (l->n == l->cap) l->v = ac_xrealloc(l->v, sizeof *l->v * (size_t)(l->cap = l->cap ? 2 * l->cap : 16));
    d = &l->v[l->n++];
    memset(d, 0, sizeof *d);
    d->id = id;
    d->fp = fp;
    d->first_s = -1;
    d->rep_elems = -1;
    snprintf(d->kernel, sizeof d->kernel, "%s", jstr(js, "kernel_spec"));
  }
  d->nfind++;
  if (!strcmp(jstr(js, "policy"), "fail")) d->fail = 1;
  add_family(d, jstr(js, "family"));
  json_object *v;
  double t = json_object_object_get_ex(js, "found_after_s", &v) ? json_object_get_double(v) : 0;
  if (d->first_s < 0 || t < d->first_s) d->first_s = t;
  int64_t el = jint(dj, "elements", INT64_MAX);
  const char *file = jstr(dj, "case");
  if (strcmp(file, "minimized.npz") && strcmp(file, "case.npz")) file = "case.npz";
  if (d->rep_elems < 0 || el < d->rep_elems || (el == d->rep_elems && strcmp(f->sig, d->rep) < 0)) {
    d->rep_elems = el;
    snprintf(d->rep, sizeof d->rep, "%s", f->sig);
    snprintf(d->rep_file, sizeof d->rep_file, "%s", file);
    ac_verdict_parse(jstr(js, "kind"), &d->rep_kind);
    snprintf(d->rep_size, sizeof d->rep_size, "%s", jstr(dj, "size"));
  }
  return 0;
}

static int cmp_id(const void *a, const void *b)
{
  return ((const ac_defect_info *)a)->id - ((const ac_defect_info *)b)->id;
}

int ac_defects_read(const char *dir, ac_defect_list *l, ac_err *e)
{
  memset(l, 0, sizeof *l);
  read_ctx rc = {l};
  if (ac_findings_each(dir, NULL, "defects", read_one, &rc, e) < 0) return -1;
  if (l->n > 1) qsort(l->v, (size_t)l->n, sizeof *l->v, cmp_id);
  return 0;
}

void ac_defects_free(ac_defect_list *l)
{
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* ---- words --------------------------------------------------------------------------------- */

void ac_defect_words(const ac_defect_fp *fp, const char *size, char *buf, size_t n)
{
  static const char *const qn[AC_NQTY] = {"o", "the LSE", "dQ", "dK", "dV", "dsinks"};
  size_t at = 0;
  int nq = 0, last = -1;
  for (int q = 0; q < AC_NQTY; q++)
    if (fp->mode.why[q]) nq++, last = q;
  for (int q = 0, i = 0; q < AC_NQTY && at < n; q++)
    if (fp->mode.why[q])
      at += (size_t)snprintf(buf + at, n - at, "%s%s %s", i++ ? (q == last ? " and " : ", ") : "", qn[q],
                             ac_why_name(fp->mode.why[q] - 1));
  if (!nq && at < n) at += (size_t)snprintf(buf + at, n - at, "%s", fp->mode.kind == AC_V_METAMORPHIC ? "two runs disagree" : "the run");
  long long b, h, kvh, tq, tk, dk, dv;
  char dt[32], mask[40];
  if (at < n && sscanf(size, "B%lld H%lld/%lld tq%lld tk%lld dk%lld dv%lld %31s %39s", &b, &h, &kvh, &tq, &tk, &dk, &dv, dt,
                       mask) == 9)
    at += (size_t)snprintf(buf + at, n - at, " on %lld quer%s x %lld key%s (dk %lld, dv %lld, %s)", tq, tq == 1 ? "y" : "ies",
                           tk, tk == 1 ? "" : "s", dk, dv, dt);
  else if (at < n && *size)
    at += (size_t)snprintf(buf + at, n - at, " on %s", size);
  if (at < n) at += (size_t)snprintf(buf + at, n - at, "; needs ");
  int nf = 0;
  for (uint32_t bit = 1; bit && at < n; bit <<= 1)
    if (fp->feats & bit) at += (size_t)snprintf(buf + at, n - at, "%s%s", nf++ ? ", " : "", ac_defect_feature_name(bit));
  if (!nf && at < n) at += (size_t)snprintf(buf + at, n - at, "%s", fp->checked ? "nothing else" : "(not checked)");
  if (fp->dtype_only >= 0 && at < n)
    at += (size_t)snprintf(buf + at, n - at, "; only in %s", ac_dtype_name((ac_dtype)fp->dtype_only));
  if (!fp->reproduced && at < n) snprintf(buf + at, n - at, "; did not fail again when judged again");
}

/* ---- the index ------------------------------------------------------------------------------- */

int ac_defects_write_index(const char *dir, ac_err *e)
{
  ac_defect_list l;
  if (ac_defects_read(dir, &l, e)) return -1;
  json_object *root = json_object_new_object(), *arr = json_object_new_array();
  json_object_object_add(root, "schema", json_object_new_int(1));
  for (int i = 0; i < l.n; i++) {
    const ac_defect_info *d = &l.v[i];
    json_object *o = json_object_new_object(), *fams = json_object_new_array();
    char p[600], words[1200];
    json_object_object_add(o, "id", json_object_new_int(d->id));
    char key[700];
    ac_defect_key(&d->fp, key, sizeof key);
    json_object_object_add(o, "key", json_object_new_string(key));
    json_object_object_add(o, "kind", json_object_new_string(ac_verdict_name((ac_verdict_kind)d->fp.mode.kind)));
    json_object_object_add(o, "policy", json_object_new_string(d->fail ? "fail" : "warn"));
    ac_defect_words(&d->fp, d->rep_size, words, sizeof words);
    json_object_object_add(o, "description", json_object_new_string(words));
    json_object_object_add(o, "findings", json_object_new_int(d->nfind));
    for (const char *s = d->families; *s;) {
      size_t n = strcspn(s, ",");
      json_object_array_add(fams, json_object_new_string_len(s, (int)n));
      s += n + (s[n] == ',');
    }
    json_object_object_add(o, "families", fams);
    json_object_object_add(o, "finding", json_object_new_string(d->rep));
    snprintf(p, sizeof p, "findings/%s/%s", d->rep, d->rep_file);
    json_object_object_add(o, "case", json_object_new_string(p));
    json_object_object_add(o, "size", json_object_new_string(d->rep_size));
    snprintf(p, sizeof p, "findings/%s/repro.sh", d->rep);
    json_object_object_add(o, "repro", json_object_new_string(p));
    json_object_object_add(o, "first_found_s", json_object_new_double(d->first_s));
    json_object_array_add(arr, o);
  }
  json_object_object_add(root, "defects", arr);
  json_object_object_add(root, "unassigned_findings", json_object_new_int(l.unassigned));
  const char *t = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
  char path[4200];
  snprintf(path, sizeof path, "%s/defects.json", dir);
  int rc = ac_write_file_atomic(path, t, strlen(t), e);
  json_object_put(root);
  ac_defects_free(&l);
  return rc;
}

/* ---- assigning a finding --------------------------------------------------------------------- */

/* A case file of finding directory fdir, read as data. */
static int read_case(const char *fdir, const char *name, ac_case *c, ac_err *e)
{
  char label[4400];
  snprintf(label, sizeof label, "%s/%s", fdir, name);
  int fd = ac_data_open(fdir, name, ac_mem_cap(), e);
  if (fd < 0) return -1;
  return ac_case_read_fd(c, fd, label, e);
}

/* Whether defect d's own case, judged again on x, fails as fp says (remembered per process for
 * the defect and its case: a campaign's worker judges each defect's case once). */
static int confirmed(const char *dir, const ac_defect_info *d, const ac_defect_fp *fp, const ac_eval_ctx *x,
                     ac_defect_env *env)
{
  for (int i = 0; i < env->ncache; i++)
    if (env->cache[i].id == d->id && !strcmp(env->cache[i].rep, d->rep)) return env->cache[i].ok;
  char fdir[4400];
  snprintf(fdir, sizeof fdir, "%s/findings/%s", dir, d->rep);
  ac_case c;
  ac_err e;
  int ok = 0;
  if (read_case(fdir, d->rep_file, &c, &e) == 0) {
    ok = ac_defect_shows(x, &c, d->rep_kind, fp);
    ac_case_free(&c);
  }
  if (env->ncache == AC_DEFECT_CACHE) env->ncache = 0;   /* a full cache starts again */
  env->cache[env->ncache].id = d->id;
  snprintf(env->cache[env->ncache].rep, sizeof env->cache[0].rep, "%s", d->rep);
  env->cache[env->ncache++].ok = ok;
  return ok;
}

/* The reduced case as the finding's minimized.npz (it fails as the finding does, with less), and its
 * size in report r. */
static void store_reduced(const char *fdir, json_object *r, const ac_case *red)
{
  char p[4500], tmp[4600], size[200];
  ac_err e;
  snprintf(p, sizeof p, "%s/minimized.npz", fdir);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
  if (ac_case_write(red, tmp, &e) || rename(tmp, p)) {
    unlink(tmp);
    return;
  }
  ac_case_size_str(red, size, sizeof size);
  json_object_object_add(r, "minimized", json_object_new_boolean(1));
  json_object_object_add(r, "minimized_size", json_object_new_string(size));
  json_object_object_add(r, "minimized_elements", json_object_new_int64(ac_case_elems(red)));
}

static int same_case(const ac_case *a, const ac_case *b)
{
  return ac_case_hash(a) == ac_case_hash(b) && !memcmp(&a->p, &b->p, sizeof a->p);
}

int ac_defect_assign(const char *dir, const char *sig, const ac_eval_ctx *x, ac_defect_env *env, ac_defect_result *res,
                     ac_err *e)
{
  char fdir[4400], p[4500];
  memset(res, 0, sizeof *res);
  snprintf(fdir, sizeof fdir, "%s/findings/%s", dir, sig);
  char *txt = ac_data_read(fdir, "report.json", AC_FINDING_JSON_MAX, NULL, e);
  if (!txt) return -1;
  json_object *r = json_tokener_parse(txt), *dj;
  free(txt);
  if (!r || !json_object_is_type(r, json_type_object)) {
    json_object_put(r);
    return ac_err_set(e, "%s/report.json: not a JSON object", fdir);
  }
  if (json_object_object_get_ex(r, "defect", &dj) && jint(dj, "id", 0) > 0) {   /* assigned already */
    res->id = (int)jint(dj, "id", 0);
    json_object_put(r);
    return 0;
  }
  ac_verdict_kind k = AC_V_FAIL;
  ac_verdict_parse(jstr(r, "kind"), &k);
  const char *file = "case.npz";
  struct stat st;
  snprintf(p, sizeof p, "%s/minimized.npz", fdir);
  if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) file = "minimized.npz";
  ac_defect_fp fp;
  ac_case cs, red;
  int have_red = 0;
  if (x) {   /* the fingerprint from judging the case again */
    if (read_case(fdir, file, &cs, e)) {
      json_object_put(r);
      return -1;
    }
    int rc = ac_defect_fingerprint(x, &cs, k, &fp, &red, e);
    have_red = rc == 0;
    if (rc == 0 && fp.reproduced && fp.attached < 0 && !same_case(&cs, &red)) {
      store_reduced(fdir, r, &red);
      file = "minimized.npz";
    }
    ac_case_free(&cs);
    if (rc) {
      json_object_put(r);
      return -1;
    }
  }
  int recorded = !x && env->recorded && ac_defect_fp_parse(env->recorded, &fp) == 0;   /* not judged again */
  if (!x && !recorded) {
    memset(&fp, 0, sizeof fp);
    fp.attached = fp.dtype_only = -1;
    fp.mode.kind = (int)k;
  }
  char key[700];   /* a case that does not fail again, or a finding without a fingerprint, joins none */
  ac_defect_key(&fp, key, sizeof key);
  const char *kernel = jstr(r, "kernel_spec");
  int id = 0, rc = 0;
  for (int round = 0; round < 8 && !id && rc == 0; round++) {
    ac_defect_list l;
    if (ac_defects_read(dir, &l, e)) {
      rc = -1;
      break;
    }
    int seen = 0, choice = 0;
    for (int i = 0; i < l.n && !choice; i++) {
      const ac_defect_info *d = &l.v[i];
      if (!ac_defect_same(&d->fp, &fp) || strcmp(d->kernel, kernel)) continue;
      seen = d->id > seen ? d->id : seen;
      if (!x || confirmed(dir, d, &fp, x, env)) choice = d->id;
    }
    ac_defects_free(&l);
    if (env->lock) env->lock(env->arg);
    if (ac_defects_read(dir, &l, e) == 0) {
      int max = 0, newer = 0;
      for (int i = 0; i < l.n; i++) {
        max = l.v[i].id > max ? l.v[i].id : max;
        if (l.v[i].id > seen && ac_defect_same(&l.v[i].fp, &fp) && !strcmp(l.v[i].kernel, kernel)) newer = 1;
      }
      if (choice || !newer) {   /* else another process opened one meanwhile: look again */
        id = choice ? choice : max + 1;
        res->is_new = !choice;
        json_object *o = ac_defect_fp_json(&fp);
        json_object_object_add(o, "id", json_object_new_int(id));
        json_object_object_add(o, "case", json_object_new_string(file));
        if (have_red) {
          char size[200];
          ac_case_size_str(&red, size, sizeof size);
          json_object_object_add(o, "size", json_object_new_string(size));
          json_object_object_add(o, "elements", json_object_new_int64(ac_case_elems(&red)));
        } else {
          json_object_object_add(o, "size", json_object_new_string(jstr(r, "minimized_size")[0] ? jstr(r, "minimized_size") : jstr(r, "size")));
        }
        json_object_object_add(o, "joined", json_object_new_string(choice ? (x ? "its case and the defect's fail the same way when judged again" : "the same recorded fingerprint (not judged again)") : "a new defect"));
        json_object_object_add(r, "defect", o);
        const char *t = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY);
        snprintf(p, sizeof p, "%s/report.json", fdir);
        rc = ac_write_file_atomic(p, t, strlen(t), e);
        if (rc == 0) rc = ac_defects_write_index(dir, e);
      }
      ac_defects_free(&l);
    } else {
      rc = -1;
    }
    if (env->unlock) env->unlock(env->arg);
  }
  if (have_red) ac_case_free(&red);
  json_object_put(r);
  res->id = id;
  res->kind = fp.mode.kind;
  res->evals = fp.evals;
  snprintf(res->key, sizeof res->key, "%s", key);
  return rc;
}
