/* finding.c: a finding on disk: findings/<sig>/{case.npz, report.json, repro.sh} written into a
 * temporary directory and renamed into place at once; minimized.npz beside it later; replay. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"

static void rm_tree(const char *dir)
{
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static void fsync_dir(const char *dir)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

int ac_finding_store(const char *dir, const char *sig, const ac_case *c, const char *report_json, ac_err *e)
{
  char fdir[4096], final[4096], tmp[4096];
  if (snprintf(fdir, sizeof fdir, "%s/findings", dir) >= (int)sizeof fdir - 300) return ac_err_set(e, "%s: path too long", dir);
  if (ac_mkdir_p(fdir, e)) return -1;
  if (snprintf(final, sizeof final, "%s/%s", fdir, sig) >= (int)sizeof final) return ac_err_set(e, "%s: path too long", dir);
  struct stat st;
  if (stat(final, &st) == 0) return 0;
  if (snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld", fdir, sig, (long)getpid()) >= (int)sizeof tmp)
    return ac_err_set(e, "%s: path too long", dir);
  rm_tree(tmp);
  if (mkdir(tmp, 0755)) return ac_err_set(e, "%s: mkdir: %s", tmp, strerror(errno));
  char p[4200];
  snprintf(p, sizeof p, "%s/case.npz", tmp);
  if (ac_case_write(c, p, e)) goto fail;
  snprintf(p, sizeof p, "%s/report.json", tmp);
  if (ac_write_file_atomic(p, report_json, strlen(report_json), e)) goto fail;
  {
    json_object *r = json_tokener_parse(report_json);
    int repro_rc = ac_finding_write_repro(tmp, sig, r, e);
    if (r) json_object_put(r);
    if (repro_rc) goto fail;
  }
  fsync_dir(tmp);
  if (rename(tmp, final) != 0) {
    int err = errno;
    rm_tree(tmp);
    if (err == EEXIST || err == ENOTEMPTY) return 0;
    return ac_err_set(e, "%s: rename: %s", final, strerror(err));
  }
  fsync_dir(fdir);
  return 1;
fail:
  rm_tree(tmp);
  return -1;
}

int ac_finding_kernel_of(json_object *r, const char *label, const char *override, int trust, char *spec, size_t n,
                         ac_err *e)
{
  if (override) {
    snprintf(spec, n, "%s", override);
    return 0;
  }
  char rec[2048] = "", q[8300], *qe;
  json_object *v;
  /* an exec command's program as the campaign resolved it, else the spec as given */
  if ((json_object_object_get_ex(r, "kernel_spec_resolved", &v) || json_object_object_get_ex(r, "kernel_spec", &v)) &&
      json_object_is_type(v, json_type_string))
    snprintf(rec, sizeof rec, "%s", json_object_get_string(v));
  if (!rec[0]) return ac_err_set(e, "%s: no kernel recorded; give --kernel K", label);
  if (!ac_shquote(rec, q, sizeof q)) snprintf(q, sizeof q, "(too long)");
  qe = ac_str_escape_dup(q); /* quoted for the shell, and one line whatever it holds */
  int is_exec = !strncmp(rec, "exec:", 5) || !strncmp(rec, "exec-persistent:", 16), rc = 0;
  if (is_exec && !trust)
    rc = ac_err_set(
        e,
        "%s records the command kernel %s: it is not run unless --trust-recorded-kernel is given (or give --kernel K)",
        label, qe);
  else if (!is_exec && !ac_builtin_find(rec, NULL))
    rc = ac_err_set(e, "%s records the plugin %s: it is not loaded unless given again (--kernel %s)", label, qe, qe);
  else
    snprintf(spec, n, "%s", rec);
  free(qe);
  return rc;
}

/* fdir/report.json read as data and parsed: a JSON object, or NULL with e. */
static json_object *read_report(const char *fdir, ac_err *e)
{
  char *txt = ac_data_read(fdir, "report.json", AC_FINDING_JSON_MAX, NULL, e);
  if (!txt) {
    char m[sizeof e->msg];
    snprintf(m, sizeof m, "%s", e->msg);
    ac_err_set(e, "%s (is this a findings/<signature> directory?)", m);
    return NULL;
  }
  json_object *js = json_tokener_parse(txt);
  free(txt);
  if (!js || !json_object_is_type(js, json_type_object)) {
    json_object_put(js);
    ac_err_set(e, "%s/report.json: not a JSON object", fdir);
    return NULL;
  }
  return js;
}

int ac_finding_kernel(const char *fdir, const char *override, int trust, char *spec, size_t n, ac_err *e)
{
  if (override) return ac_finding_kernel_of(NULL, fdir, override, trust, spec, n, e);
  json_object *r = read_report(fdir, e);
  if (!r) return -1;
  char label[4200];
  snprintf(label, sizeof label, "%s/report.json", fdir);
  int rc = ac_finding_kernel_of(r, label, NULL, trust, spec, n, e);
  json_object_put(r);
  return rc;
}

int ac_finding_eval_ctx(json_object *js, const char *label, const ac_replay_opts *ro, ac_finding_ctx *fc, ac_err *e)
{
  static const ac_replay_opts none;
  if (!ro) ro = &none;
  memset(fc, 0, sizeof *fc);
  json_object *v;
  char pol[1024] = "", empty[32] = "", eover[32] = "", alibi[16] = "";
  if (json_object_object_get_ex(js, "precision_override", &v)) snprintf(fc->prec, sizeof fc->prec, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "policies", &v)) snprintf(pol, sizeof pol, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "empty_rows", &v)) snprintf(empty, sizeof empty, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "empty_rows_override", &v))
    snprintf(eover, sizeof eover, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "alibi_lse_override", &v)) snprintf(alibi, sizeof alibi, "%s", json_object_get_string(v));
  double timeout = 0;
  if (json_object_object_get_ex(js, "timeout_s", &v)) timeout = json_object_get_double(v);
  if (ro->precision) snprintf(fc->prec, sizeof fc->prec, "%s", ro->precision);
  if (ro->empty_rows) snprintf(eover, sizeof eover, "%s", ro->empty_rows);
  if (ro->timeout_s > 0) timeout = ro->timeout_s;
  if (ac_finding_kernel_of(js, label, ro->kernel, ro->trust, fc->spec, sizeof fc->spec, e)) return -1;
  ac_kernel **list = NULL;
  int nk = 0;
  if (ac_kernel_resolve(fc->spec, &list, &nk, e)) return -1;
  if (nk != 1) {
    ac_kernel_list_free(list, nk);
    return ac_err_set(e, "kernel '%s' names %d kernels; give PATH.so:NAME", fc->spec, nk);
  }
  fc->kernel = list[0];
  free(list);
  ac_eval_ctx *x = &fc->x;
  ac_eval_ctx_init(x, fc->kernel, fc->spec);
  x->precision = fc->prec[0] ? fc->prec : NULL;
  if (timeout > 0) x->run.timeout_s = timeout;
  /* the empty-row convention: replay's --empty-rows, else the campaign's --empty-rows, both over the
   * kernel's declaration; else the campaign's default, which a declaration overrides (as it did there) */
  if (empty[0]) ac_empty_parse(empty, &x->cmp.empty);
  if (eover[0]) x->cmp.empty_set = ac_empty_parse(eover, &x->cmp.empty) == 0;
  if (alibi[0]) ac_alibi_lse_parse(alibi, &x->run.alibi_lse);   /* the campaign's --alibi-lse */
  ac_policies_set_list(&x->pol, pol, NULL);                      /* the campaign's, then replay's */
  if (ro->policies) ac_policies_set_list(&x->pol, ro->policies, NULL);
  return 0;
}

void ac_finding_ctx_free(ac_finding_ctx *fc)
{
  ac_kernel_free(fc->kernel);
  fc->kernel = NULL;
}

int ac_replay_finding(const char *fdir, const ac_replay_opts *ro, FILE *out, uint32_t *kinds_out, ac_err *e)
{
  char p[4096], kind[64] = "";
  json_object *js = read_report(fdir, e), *v;
  if (!js) return -1;
  if (json_object_object_get_ex(js, "kind", &v)) snprintf(kind, sizeof kind, "%s", json_object_get_string(v));
  snprintf(p, sizeof p, "%s/report.json", fdir);
  ac_finding_ctx fc;
  int krc = ac_finding_eval_ctx(js, p, ro, &fc, e);
  json_object_put(js);
  if (krc) return -1;
  ac_eval_ctx x = fc.x;
  ac_verdict_kind want = AC_V_FAIL;
  int have_want = ac_verdict_parse(kind, &want) == 0;
  if (have_want && (want == AC_V_METAMORPHIC || want == AC_V_GRAD_METAMORPHIC)) x.metamorphic = AC_META_ALWAYS;
  /* a race shows only now and then: up to 32 more runs of the case */
  int repeat = have_want && want == AC_V_NONDETERMINISTIC ? 32 : 0;
  int rc = 0;
  uint32_t all = 0;
  const char *names[2] = {"minimized.npz", "case.npz"};
  for (int k = 0; k < 2; k++) {
    snprintf(p, sizeof p, "%s/%s", fdir, names[k]);
    struct stat st;
    if (lstat(p, &st) != 0 && errno == ENOENT) continue;
    ac_err de;
    int fd = ac_data_open(fdir, names[k], ac_mem_cap(), &de); /* data: no link followed, no FIFO */
    if (fd < 0) {
      fprintf(stderr, "attncheck: skipped %s\n", de.msg);
      continue;
    }
    ac_case c;
    if (ac_case_read_fd(&c, fd, p, e)) {
      ac_finding_ctx_free(&fc);
      return -1;
    }
    ac_eval ev;
    ac_err ee;
    ac_eval_case(&x, &c, repeat, &ev, &ee);
    if (ev.not_started[0]) {   /* nothing ran: neither reproduced nor not */
      ac_case_free(&c);
      ac_finding_ctx_free(&fc);
      return ac_err_set(e, "%s", ev.not_started);
    }
    ac_eval_print(out, p, &c, &ev);
    all |= ev.kinds;
    if (ev.any_fail) rc = 1;
    ac_case_free(&c);
  }
  if (have_want) {
    char *q = ac_str_escape_dup(fdir);
    fprintf(out, "%s: %s %s\n", q, ac_verdict_name(want), (all & (1u << want)) ? "reproduced" : "NOT reproduced");
    free(q);
  }
  if (kinds_out) *kinds_out = all;
  ac_finding_ctx_free(&fc);
  return rc;
}
