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

static void self_exe(char *buf, size_t n)
{
  ssize_t r = readlink("/proc/self/exe", buf, n - 1);
  if (r <= 0) snprintf(buf, n, "attncheck");
  else buf[r] = 0;
}

/* A variable name of the "env" record: [A-Za-z_][A-Za-z0-9_]*, shorter than 64. */
static int env_name_ok(const char *s)
{
  int ok = (s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && strlen(s) < 64;
  for (const char *c = s; ok && *c; c++)
    ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
  return ok;
}

/* The environment lines of repro.sh from report.json's "env" ({NAME: value or null}): export
 * NAME='value' (quoted for the shell) or unset NAME; names that are not variable names are left
 * out. Appended to buf (n bytes); -1 when they do not fit. */
static int env_lines(json_object *r, char *buf, size_t n)
{
  json_object *env;
  size_t len = strlen(buf);
  if (!r || !json_object_object_get_ex(r, "env", &env) || !json_object_is_type(env, json_type_object)) return 0;
  json_object_object_foreach(env, key, val)
  {
    char q[8300];
    if (!env_name_ok(key)) continue;
    int w;
    if (json_object_is_type(val, json_type_string)) {
      if (!ac_shquote(json_object_get_string(val), q, sizeof q)) return -1;
      w = snprintf(buf + len, n - len, "export %s=%s\n", key, q);
    } else {
      w = snprintf(buf + len, n - len, "unset %s\n", key);
    }
    if (w < 0 || (size_t)w >= n - len) return -1;
    len += (size_t)w;
  }
  return 0;
}

int ac_finding_repro_text(const char *sig, const char *report_json, char *sh, size_t n, ac_err *e)
{
  char exe[2048], qexe[8300], spec[2048] = "", qspec[8300], envs[16384] = "";
  self_exe(exe, sizeof exe);
  json_object *r = json_tokener_parse(report_json), *v;
  if (r && json_object_object_get_ex(r, "kernel_spec", &v))
    snprintf(spec, sizeof spec, "%s", json_object_get_string(v));
  int env_rc = env_lines(r, envs, sizeof envs);
  if (r) json_object_put(r);
  if (env_rc || !ac_shquote(exe, qexe, sizeof qexe) || !ac_shquote(spec, qspec, sizeof qspec))
    return ac_err_set(e, "%s: kernel spec, environment or program path too long for repro.sh", sig);
  int w = snprintf(sh, n,
                   "#!/bin/sh\n"
                   "# Reproduces finding %s: runs the kernel on the stored case (the minimized one when\n"
                   "# present) and judges it. ATTNCHECK overrides the binary; extra arguments go to replay\n"
                   "# (a --kernel among them replaces the one below).%s\n"
                   "%s"
                   "d=$(dirname \"$0\")\n"
                   "exe=%s\n"
                   "exec \"${ATTNCHECK:-$exe}\" replay \"$d\" --kernel %s \"$@\"\n",
                   sig,
                   envs[0] ? "\n# The environment the kernel ran in (the variables its worker declares it reads):" : "",
                   envs, qexe, qspec);
  if (w < 0 || (size_t)w >= n) return ac_err_set(e, "%s: repro.sh too long", sig);
  return 0;
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
  char sh[40000];
  if (ac_finding_repro_text(sig, report_json, sh, sizeof sh, e)) goto fail;
  snprintf(p, sizeof p, "%s/repro.sh", tmp);
  if (ac_write_file_atomic(p, sh, strlen(sh), e)) goto fail;
  chmod(p, 0755);
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

int ac_finding_kernel(const char *fdir, const char *override, int trust, char *spec, size_t n, ac_err *e)
{
  if (override) {
    snprintf(spec, n, "%s", override);
    return 0;
  }
  char p[4096], rec[2048] = "", q[8300];
  snprintf(p, sizeof p, "%s/report.json", fdir);
  json_object *r = json_object_from_file(p), *v;
  if (!r) return ac_err_set(e, "%s: cannot read (is this a findings/<signature> directory?)", p);
  if (json_object_object_get_ex(r, "kernel_spec", &v)) snprintf(rec, sizeof rec, "%s", json_object_get_string(v));
  json_object_put(r);
  if (!rec[0]) return ac_err_set(e, "%s: no kernel recorded; give --kernel K", p);
  if (!ac_shquote(rec, q, sizeof q)) snprintf(q, sizeof q, "(too long)");
  int is_exec = !strncmp(rec, "exec:", 5) || !strncmp(rec, "exec-persistent:", 16);
  if (is_exec && !trust)
    return ac_err_set(e, "%s records the command kernel %s: it is not run unless --trust-recorded-kernel is given (or give --kernel K)",
                      p, q);
  if (!is_exec && !ac_builtin_find(rec, NULL))
    return ac_err_set(e, "%s records the plugin %s: it is not loaded unless given again (--kernel %s)", p, q, q);
  snprintf(spec, n, "%s", rec);
  return 0;
}

int ac_replay_finding(const char *fdir, const char *kernel_override, int trust, const char *precision, FILE *out,
                      uint32_t *kinds_out, ac_err *e)
{
  char p[4096];
  snprintf(p, sizeof p, "%s/report.json", fdir);
  char *txt = ac_read_text(p);
  if (!txt) return ac_err_set(e, "%s: cannot read (is this a findings/<signature> directory?)", p);
  json_object *js = json_tokener_parse(txt);
  free(txt);
  if (!js) return ac_err_set(e, "%s: not valid JSON", p);
  json_object *v;
  char spec[2048] = "", kind[64] = "", prec[512] = "", pol[1024] = "", empty[32] = "";
  if (json_object_object_get_ex(js, "kind", &v)) snprintf(kind, sizeof kind, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "precision_override", &v)) snprintf(prec, sizeof prec, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "policies", &v)) snprintf(pol, sizeof pol, "%s", json_object_get_string(v));
  if (json_object_object_get_ex(js, "empty_rows", &v)) snprintf(empty, sizeof empty, "%s", json_object_get_string(v));
  double timeout = 0;
  if (json_object_object_get_ex(js, "timeout_s", &v)) timeout = json_object_get_double(v);
  json_object_put(js);
  if (precision) snprintf(prec, sizeof prec, "%s", precision);
  if (ac_finding_kernel(fdir, kernel_override, trust, spec, sizeof spec, e)) return -1;
  ac_kernel **list = NULL;
  int nk = 0;
  if (ac_kernel_resolve(spec, &list, &nk, e)) return -1;
  if (nk != 1) {
    ac_kernel_list_free(list, nk);
    return ac_err_set(e, "kernel '%s' names %d kernels; give PATH.so:NAME", spec, nk);
  }
  ac_eval_ctx x;
  ac_eval_ctx_init(&x, list[0], spec);
  x.precision = prec[0] ? prec : NULL;
  if (timeout > 0) x.run.timeout_s = timeout;
  if (empty[0]) ac_empty_parse(empty, &x.cmp.empty);
  if (pol[0]) {
    char *dup = ac_xstrdup(pol), *save = NULL;
    for (char *t = strtok_r(dup, ";", &save); t; t = strtok_r(NULL, ";", &save)) ac_policies_set(&x.pol, t, NULL);
    free(dup);
  }
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
    if (access(p, R_OK) != 0) continue;
    ac_case c;
    if (ac_case_read(&c, p, e)) {
      ac_kernel_list_free(list, nk);
      return -1;
    }
    ac_eval ev;
    ac_err ee;
    ac_eval_case(&x, &c, repeat, &ev, &ee);
    ac_eval_print(out, p, &c, &ev);
    all |= ev.kinds;
    if (ev.any_fail) rc = 1;
    ac_case_free(&c);
  }
  if (have_want)
    fprintf(out, "%s: %s %s\n", fdir, ac_verdict_name(want), (all & (1u << want)) ? "reproduced" : "NOT reproduced");
  if (kinds_out) *kinds_out = all;
  ac_kernel_list_free(list, nk);
  return rc;
}
