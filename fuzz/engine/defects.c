/* defects.c: the defects of a campaign directory (docs/fuzzing.md "Defects"). Each finding is
 * assigned to one when it has been minimized: its fingerprint from judging its case again
 * (defect.c), then the first defect of the same kernel and fingerprint whose own case, judged
 * again, fails the same way takes it, else the first one sharing its trigger whose case and its
 * own both pass without it; else it opens a new one. The assignment is the finding's
 * report.json "defect" member (its id, fingerprint and the case that shows it); DIR/defects.json
 * (defects_index.c), updated with each assignment, is the index the next one reads. */
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

int ac_defects_confirmed(const ac_defect_list *l, int *nfail)
{
  int n = 0;
  *nfail = 0;
  for (int i = 0; i < l->n; i++)
    if (ac_defect_confirmed(&l->v[i])) n++, *nfail += l->v[i].fail;
  return n;
}

int ac_defects_note(ac_defect_list *l, const char *sig, json_object *js)
{
  json_object *dj;
  if (!json_object_object_get_ex(js, "defect", &dj) || !json_object_is_type(dj, json_type_object)) return -1;
  int id = (int)jint(dj, "id", 0);
  ac_defect_fp fp;
  if (id <= 0 || ac_defect_fp_parse(dj, &fp)) return -1;
  ac_defect_info *d = find_id(l, id);
  const int over = ac_defect_over_parse(dj);   /* of a defect whose wrong value and overflow joined */
  if (d && over && ac_fmode_o_overflows(&d->fp.mode) && ac_fmode_o_wrong(&fp.mode)) {
    /* a wrong value that overflows is told by its wrong value, its best case one that shows it */
    d->fp.mode = fp.mode;
    d->rep_derived = 1;
  } else if (d && d->fp.mode.kind == AC_V_SUSPECT && fp.mode.kind == AC_V_FAIL) {   /* told by its strongest finding */
    const ac_fmode was = d->fp.mode;
    d->fp.mode = fp.mode;
    for (int q = 0; q < AC_NQTY; q++)
      if (!d->fp.mode.why[q]) d->fp.mode.why[q] = was.why[q];
  } else if (d && d->fp.mode.kind == fp.mode.kind) {   /* the defect fails in every way its findings of its kind do */
    for (int q = 0; q < AC_NQTY; q++)
      if (!d->fp.mode.why[q]) d->fp.mode.why[q] = fp.mode.why[q];
  }
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
  if (over) d->overflowed = 1;
  if (!strcmp(jstr(js, "policy"), "fail")) d->fail = 1;
  add_family(d, jstr(js, "family"));
  json_object *v;
  double t = json_object_object_get_ex(js, "found_after_s", &v) ? json_object_get_double(v) : 0;
  if (d->first_s < 0 || t < d->first_s) d->first_s = t;
  int64_t el = jint(dj, "elements", INT64_MAX);
  const char *file = jstr(dj, "case");
  if (strcmp(file, "minimized.npz") && strcmp(file, "case.npz")) file = "case.npz";
  /* the best case fails in the defect's own way: a finding whose failure is derived (through another
   * check, through its finite or smaller-V case, joined by a trigger, or the overflow of a wrong value)
   * only where no other is */
  const int derived = fp.attached >= 0 || fp.finite || fp.smaller_v || ac_defect_trigger_parse(dj) != 0 ||
                      (d->overflowed && ac_fmode_o_overflows(&fp.mode) && ac_fmode_o_wrong(&d->fp.mode));
  if (d->rep_elems < 0 || derived < d->rep_derived ||
      (derived == d->rep_derived && (el < d->rep_elems || (el == d->rep_elems && strcmp(sig, d->rep) < 0)))) {
    d->rep_derived = derived;
    d->rep_elems = el;
    snprintf(d->rep, sizeof d->rep, "%s", sig);
    snprintf(d->rep_file, sizeof d->rep_file, "%s", file);
    ac_verdict_parse(jstr(js, "kind"), &d->rep_kind);
    snprintf(d->rep_size, sizeof d->rep_size, "%s", jstr(dj, "size"));
  }
  return 0;
}

static int read_one(void *arg, ac_finding_dir *f)
{
  ac_defect_list *l = arg;
  if (ac_defects_note(l, f->sig, f->report)) l->unassigned++;
  return 0;
}

static int cmp_id(const void *a, const void *b)
{
  return ((const ac_defect_info *)a)->id - ((const ac_defect_info *)b)->id;
}

int ac_defects_read(const char *dir, ac_defect_list *l, ac_err *e)
{
  memset(l, 0, sizeof *l);
  if (ac_findings_each(dir, NULL, "defects", read_one, l, e) < 0) return -1;
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

/* Whether defect d's own case, judged again on x, fails as fp says (trig 0, over 0), or passes without
 * the features trig, or (over) overflows as fp's o does with V near the top of its range
 * (ac_defect_overflows; remembered per process for the defect, its case, trig and over: a campaign's
 * worker judges each defect's case once for each). */
static int defect_case_check(const char *dir, const ac_defect_info *d, const ac_defect_fp *fp, uint32_t trig, int over,
                             const ac_eval_ctx *x, ac_defect_env *env, int *evals)
{
  for (int i = 0; i < env->ncache; i++)
    if (env->cache[i].id == d->id && env->cache[i].trig == trig && env->cache[i].over == over &&
        !strcmp(env->cache[i].rep, d->rep))
      return env->cache[i].ok;
  char fdir[4400];
  snprintf(fdir, sizeof fdir, "%s/findings/%s", dir, d->rep);
  ac_case c;
  ac_err e;
  int ok = 0, n = 0;
  if (read_case(fdir, d->rep_file, &c, &e) == 0) {
    ok = over   ? ac_defect_overflows(x, &c, &fp->mode, &n)
         : trig ? ac_defect_gone_without(x, &c, d->rep_kind, NULL, trig, &n)
                : ac_defect_shows(x, &c, d->rep_kind, fp);
    ac_case_free(&c);
  }
  if (evals) *evals += n;
  if (env->ncache == AC_DEFECT_CACHE) env->ncache = 0;   /* a full cache starts again */
  env->cache[env->ncache].id = d->id;
  env->cache[env->ncache].trig = trig;
  env->cache[env->ncache].over = over;
  snprintf(env->cache[env->ncache].rep, sizeof env->cache[0].rep, "%s", d->rep);
  env->cache[env->ncache++].ok = ok;
  return ok;
}

/* Whether a finding whose fingerprint is fp, its case red (judged as fp's kind), is defect d's by the
 * trigger t they share (ac_defect_trigger): both cases no longer fail so without it. The finding's
 * side is remembered in mine (trig, answer: at most 8). */
typedef struct {
  uint32_t trig[8];
  int ok[8], n, evals;
  int over;                       /* -1: not judged; else whether its case (a wrong value) overflows */
} trig_memo;
static int shares_trigger(const char *dir, const ac_defect_info *d, const ac_defect_fp *fp, uint32_t t, const ac_case *red,
                          const ac_eval_ctx *x, ac_defect_env *env, trig_memo *mine)
{
  if (!t || !red) return 0;
  int i = 0;
  while (i < mine->n && mine->trig[i] != t) i++;
  if (i == mine->n) {
    if (i == 8) return 0;
    mine->trig[i] = t;
    mine->ok[i] = ac_defect_gone_without(x, red, (ac_verdict_kind)fp->mode.kind, &fp->mode, t, &mine->evals);
    mine->n++;
  }
  return mine->ok[i] && defect_case_check(dir, d, fp, t, 0, x, env, &mine->evals);
}

/* Whether a finding whose fingerprint is fp, its case red, is defect d's as one wrong value of o that
 * overflows (ac_defect_overflow_pair: pair 1, d's failure is the wrong value; 2, the finding's): that
 * failure's case, with V near the top of its range, overflows as the other's o does. */
static int overflows_alike(const char *dir, const ac_defect_info *d, const ac_defect_fp *fp, int pair, const ac_case *red,
                           const ac_eval_ctx *x, ac_defect_env *env, trig_memo *mine)
{
  if (pair == 1) return defect_case_check(dir, d, fp, 0, 1, x, env, &mine->evals);
  if (!red) return 0;
  if (mine->over < 0) mine->over = ac_defect_overflows(x, red, &d->fp.mode, &mine->evals);
  return mine->over;
}

/* Whether defect d's own case, judged again on x, fails as fp says. */
static int confirmed(const char *dir, const ac_defect_info *d, const ac_defect_fp *fp, const ac_eval_ctx *x,
                     ac_defect_env *env)
{
  return defect_case_check(dir, d, fp, 0, 0, x, env, NULL);
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

/* The defects of dir: its index, else (none, or unreadable) from the findings, the index written. */
static int load(const char *dir, ac_defect_list *l, ac_err *e)
{
  if (ac_defects_index_read(dir, l) == 0) return 0;
  if (ac_defects_read(dir, l, e)) return -1;
  return ac_defects_index_write(dir, l, e);
}

/* report.json's "defect": the fingerprint, the id, the file that shows it (red: the reduced case,
 * NULL when the finding was not judged again: its recorded size), how it joined. */
static json_object *defect_json(const ac_defect_fp *fp, int id, const char *file, const ac_case *red, json_object *r,
                                int joined, int judged, uint32_t trig, int over, int overflowed)
{
  json_object *o = ac_defect_fp_json(fp);
  json_object_object_add(o, "id", json_object_new_int(id));
  json_object_object_add(o, "case", json_object_new_string(file));
  char size[200];
  if (red) {
    ac_case_size_str(red, size, sizeof size);
    json_object_object_add(o, "elements", json_object_new_int64(ac_case_elems(red)));
  } else {
    snprintf(size, sizeof size, "%s", jstr(r, "minimized_size")[0] ? jstr(r, "minimized_size") : jstr(r, "size"));
  }
  json_object_object_add(o, "size", json_object_new_string(size));
  json_object_object_add(o, "joined", json_object_new_string(!joined ? "a new defect"
                                                              : trig && judged ? "its case and the defect's no longer fail so without the features one needs"
                                                              : trig ? "the same recorded trigger (not judged again)"
                                                              : over && judged ? "the wrong value of o, with V near the top of its range, overflows as the other o does"
                                                              : over ? "the same recorded overflow (not judged again)"
                                                              : judged ? "its case and the defect's fail the same way when judged again"
                                                                       : "the same recorded fingerprint (not judged again)"));
  if (trig) {
    json_object *ta = json_object_new_array();
    for (uint32_t bit = 1; bit; bit <<= 1)
      if (trig & bit) json_object_array_add(ta, json_object_new_string(ac_defect_feature_name(bit)));
    json_object_object_add(o, "trigger", ta);
  }
  /* in a defect of a wrong value and its overflow (merge --no-rerun assigns it after their join) */
  if (over || overflowed) json_object_object_add(o, "overflow_of_value", json_object_new_boolean(1));
  return o;
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
  const uint32_t rec_trig = recorded ? ac_defect_trigger_parse(env->recorded) : 0;
  const int rec_over = recorded && ac_defect_over_parse(env->recorded);
  if (!x && !recorded) {
    memset(&fp, 0, sizeof fp);
    fp.attached = fp.dtype_only = -1;
    fp.mode.kind = (int)k;
  }
  char key[700];   /* a case that does not fail again, or a finding without a fingerprint, joins none */
  ac_defect_key(&fp, key, sizeof key);
  const char *kernel = jstr(r, "kernel_spec");
  int id = 0, rc = 0;
  trig_memo mine = {.n = 0, .over = -1};
  for (int round = 0; round < 8 && !id && rc == 0; round++) {
    ac_defect_list l;
    if (load(dir, &l, e)) {
      rc = -1;
      break;
    }
    int seen = 0, choice = 0, over = 0, overflowed = 0;
    uint32_t trig = 0;
    for (int i = 0; i < l.n && !choice; i++) {
      const ac_defect_info *d = &l.v[i];
      if (!ac_defect_same(&d->fp, &fp) || strcmp(d->kernel, kernel)) continue;
      seen = d->id > seen ? d->id : seen;
      if (!x || confirmed(dir, d, &fp, x, env)) choice = d->id, overflowed = d->overflowed;
    }
    /* else the first defect whose trigger it shares: both cases no longer fail so without it (not
     * judged again: the trigger by which it joined in its shard) */
    for (int i = 0; i < l.n && !choice && (x || rec_trig); i++) {
      const ac_defect_info *d = &l.v[i];
      const uint32_t t = ac_defect_trigger(&d->fp, &fp);
      if (strcmp(d->kernel, kernel) || !t || (!x && t != rec_trig)) continue;
      seen = d->id > seen ? d->id : seen;
      if (!x || shares_trigger(dir, d, &fp, t, have_red ? &red : NULL, x, env, &mine)) choice = d->id, trig = t;
    }
    /* else the first defect that is its wrong value of o overflowing, or its overflow's wrong value */
    for (int i = 0; i < l.n && !choice && (x || rec_over); i++) {
      const ac_defect_info *d = &l.v[i];
      const int pair = ac_defect_overflow_pair(&d->fp, &fp);
      if (strcmp(d->kernel, kernel) || !pair) continue;
      seen = d->id > seen ? d->id : seen;
      if (!x || overflows_alike(dir, d, &fp, pair, have_red ? &red : NULL, x, env, &mine)) choice = d->id, over = 1;
    }
    ac_defects_free(&l);
    if (env->lock) env->lock(env->arg);
    if (load(dir, &l, e) == 0) {
      int max = 0, newer = 0;
      for (int i = 0; i < l.n; i++) {
        max = l.v[i].id > max ? l.v[i].id : max;
        if (l.v[i].id > seen && !strcmp(l.v[i].kernel, kernel) &&
            (ac_defect_same(&l.v[i].fp, &fp) || ((x || rec_trig) && ac_defect_trigger(&l.v[i].fp, &fp)) ||
             ((x || rec_over) && ac_defect_overflow_pair(&l.v[i].fp, &fp))))
          newer = 1;
      }
      if (choice || !newer) {   /* else another process opened one meanwhile: look again */
        id = choice ? choice : max + 1;
        res->is_new = !choice;
        json_object_object_add(r, "defect", defect_json(&fp, id, file, have_red ? &red : NULL, r, choice, x != NULL, trig, over, overflowed));
        /* the index first: a process killed between the two writes leaves an id taken, never given twice */
        ac_defects_note(&l, sig, r);
        if (l.unassigned > 0) l.unassigned--;
        const char *t = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY);
        snprintf(p, sizeof p, "%s/report.json", fdir);
        rc = ac_defects_index_write(dir, &l, e) || ac_write_file_atomic(p, t, strlen(t), e) ? -1 : 0;
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
  res->reproduced = fp.reproduced;
  res->kind = fp.mode.kind;
  res->evals = fp.evals + mine.evals;
  snprintf(res->key, sizeof res->key, "%s", key);
  return rc;
}
