/* findings_dir.c: a findings directory as data. Whoever wrote it (a shard of another machine, a
 * colleague's campaign), what merge, replay, report and the summary read of it is checked first:
 * no link followed at any level, only regular files of the names and sizes a finding has, a
 * report.json that is a JSON object; what is refused is named, one line per entry. repro.sh is
 * never read: it is written from report.json (ac_finding_write_repro). */
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

int ac_finding_name_ok(const char *name)
{
  size_t n = strlen(name);
  if (n == 0 || n >= 256 || name[0] == '.') return 0;
  for (const char *c = name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
          *c == '-' || *c == '+'))
      return 0;
  return 1;
}

int ac_case_file_check(int fd, const char *label, ac_err *e)
{
  unsigned char b[4];
  ssize_t got = pread(fd, b, sizeof b, 0);
  if (got != 4 || b[0] != 'P' || b[1] != 'K' || !((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6)))
    return ac_err_set(e, "%s: not a case file (no zip header)", label);
  return 0;
}

/* name under f's directory: a regular file within the memory cap that starts as a zip does. */
static int case_file_ok(const ac_finding_dir *f, const char *name, ac_err *e)
{
  char label[4700];
  snprintf(label, sizeof label, "%s/%s", f->path, name);
  int fd = ac_data_openat(f->dirfd, name, label, ac_mem_cap(), e);
  if (fd < 0) return -1;
  int rc = ac_case_file_check(fd, label, e);
  close(fd);
  return rc;
}

/* report.json of f: a JSON object whose signature, when it names one, is the directory's name. */
static int read_report(ac_finding_dir *f, ac_err *e)
{
  char label[4700];
  snprintf(label, sizeof label, "%s/report.json", f->path);
  struct stat st;
  if (fstatat(f->dirfd, "report.json", &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
    return ac_err_set(e, "%s: no report.json (not a finding)", f->path);
  int fd = ac_data_openat(f->dirfd, "report.json", label, AC_FINDING_JSON_MAX, e);
  if (fd < 0) return -1;
  size_t n;
  char *txt = ac_data_read_fd(fd, AC_FINDING_JSON_MAX, &n, label, e);
  close(fd);
  if (!txt) return -1;
  enum json_tokener_error je;
  json_object *r = json_tokener_parse_verbose(txt, &je), *v;
  free(txt);
  if (!r || !json_object_is_type(r, json_type_object)) {
    json_object_put(r);
    return ac_err_set(e, "%s: not a JSON object", label);
  }
  const char *bad = NULL;
  if (json_object_object_get_ex(r, "signature", &v) &&
      (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), f->sig)))
    bad = "its signature is not the directory's name";
  else if (json_object_object_get_ex(r, "kernel_spec", &v) && !json_object_is_type(v, json_type_string))
    bad = "kernel_spec is not a string";
  else if (json_object_object_get_ex(r, "kernel_spec_resolved", &v) && !json_object_is_type(v, json_type_string))
    bad = "kernel_spec_resolved is not a string";
  else if (json_object_object_get_ex(r, "kind", &v) && !json_object_is_type(v, json_type_string))
    bad = "kind is not a string";
  if (bad) {
    json_object_put(r);
    return ac_err_set(e, "%s: %s", label, bad);
  }
  f->report = r;
  return 0;
}

int ac_finding_dir_open(int findings_fd, const char *findings_path, const char *name, ac_finding_dir *f, ac_err *e)
{
  memset(f, 0, sizeof *f);
  f->dirfd = -1;
  snprintf(f->path, sizeof f->path, "%s/%s", findings_path, name);
  ac_str_escape_inplace(f->path, sizeof f->path); /* for messages: one line whatever the names hold */
  if (!ac_finding_name_ok(name))
    return ac_err_set(e, "%s: not a finding's name (letters, digits, '.', '_', '+' and '-')", f->path);
  snprintf(f->sig, sizeof f->sig, "%s", name);
  f->dirfd = ac_data_dir_openat(findings_fd, name, f->path, e);
  if (f->dirfd < 0 || read_report(f, e)) goto fail;
  if (case_file_ok(f, "case.npz", e)) goto fail;
  struct stat st;
  if (fstatat(f->dirfd, "minimized.npz", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    ac_err me;
    f->has_min = case_file_ok(f, "minimized.npz", &me) == 0;
    if (!f->has_min) snprintf(f->min_why, sizeof f->min_why, "%s", me.msg);
  }
  return 0;
fail:
  ac_finding_dir_close(f);
  return -1;
}

void ac_finding_dir_close(ac_finding_dir *f)
{
  if (f->dirfd >= 0) close(f->dirfd);
  f->dirfd = -1;
  if (f->report) json_object_put(f->report);
  f->report = NULL;
}

int ac_findings_open(const char *dir, ac_err *e)
{
  int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the directory as named */
  if (root < 0) return ac_err_set(e, "%s: %s", dir, strerror(errno));
  char label[4200];
  snprintf(label, sizeof label, "%s/findings", dir);
  ac_err de;
  int fd = ac_data_dir_openat(root, "findings", label, &de);
  close(root);
  if (fd < 0) return ac_err_set(e, "%s: not a campaign directory (%s)", dir, de.msg);
  return fd;
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory fd (not "." and ".."), sorted; NULL when it cannot be read. */
char **ac_dir_names(int fd, int *n)
{
  *n = 0;
  int dup_fd = dup(fd);
  DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  if (!d) {
    if (dup_fd >= 0) close(dup_fd);
    return NULL;
  }
  rewinddir(d);
  int cap = 16;
  char **v = ac_xmalloc(sizeof *v * (size_t)cap);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    if (*n == cap) v = ac_xrealloc(v, sizeof *v * (size_t)(cap *= 2));
    v[(*n)++] = ac_xstrdup(de->d_name);
  }
  closedir(d);
  qsort(v, (size_t)*n, sizeof *v, cmp_name);
  return v;
}

void ac_dir_names_free(char **v, int n)
{
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

int ac_findings_each(const char *dir, FILE *warn, const char *who, int (*fn)(void *ctx, ac_finding_dir *f), void *ctx,
                     ac_err *e)
{
  int fd = ac_findings_open(dir, e);
  if (fd < 0) return -1;
  char fpath[4200];
  snprintf(fpath, sizeof fpath, "%s/findings", dir);
  int n, rc = 0;
  char **names = ac_dir_names(fd, &n);
  for (int i = 0; rc == 0 && i < n; i++) {
    if (names[i][0] == '.') continue; /* temporaries of a campaign or a merge at work */
    ac_finding_dir f;
    ac_err why;
    if (ac_finding_dir_open(fd, fpath, names[i], &f, &why)) {
      if (warn) fprintf(warn, "attncheck %s: skipped %s\n", who, why.msg);
      continue;
    }
    rc = fn(ctx, &f);
    ac_finding_dir_close(&f);
  }
  ac_dir_names_free(names, n);
  close(fd);
  return rc;
}

void ac_finding_dir_extras(const ac_finding_dir *f, FILE *warn, const char *who)
{
  static const char *const known[] = {"case.npz", "minimized.npz", "report.json", "repro.sh"};
  int n;
  char **names = ac_dir_names(f->dirfd, &n);
  for (int i = 0; i < n; i++) {
    int k = 0;
    while (k < 4 && strcmp(names[i], known[k])) k++;
    char *q = ac_str_escape_dup(names[i]);
    if (k == 4) fprintf(warn, "attncheck %s: skipped %s/%s: not a file a finding holds\n", who, f->path, q);
    free(q);
  }
  if (f->min_why[0]) fprintf(warn, "attncheck %s: skipped %s\n", who, f->min_why);
  ac_dir_names_free(names, n);
}

/* A variable name of the "env" record: [A-Za-z_][A-Za-z0-9_]*, shorter than 64, and not ATTNCHECK
 * (repro.sh's own override of the binary). */
static int env_name_ok(const char *s)
{
  int ok = (s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && strlen(s) < 64 &&
           strcmp(s, "ATTNCHECK") != 0;
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

int ac_finding_write_repro(const char *fdir, const char *sig, json_object *report, ac_err *e)
{
  char exe[2048], qexe[8300], qspec[8300], p[4200], envs[16384] = "";
  json_object *v;
  /* an exec command as the campaign resolved it (its program's absolute path), else as given */
  const char *spec = report && (json_object_object_get_ex(report, "kernel_spec_resolved", &v) ||
                                json_object_object_get_ex(report, "kernel_spec", &v))
                         ? json_object_get_string(v)
                         : "";
  ac_self_exe(exe, sizeof exe);
  if (!ac_finding_name_ok(sig)) return ac_err_set(e, "%s: not a finding's name", fdir);
  if (!ac_shquote(spec ? spec : "", qspec, sizeof qspec) || !ac_shquote(exe, qexe, sizeof qexe) ||
      env_lines(report, envs, sizeof envs))
    return ac_err_set(e, "%s: kernel spec, environment or program path too long for repro.sh", sig);
  size_t cap = strlen(qexe) + strlen(qspec) + strlen(envs) + 1024;
  char *sh = ac_xmalloc(cap);
  /* every word quoted: the kernel string of a report.json someone else wrote runs only as replay's
   * --kernel, its environment only as the values of the variables it names */
  snprintf(sh, cap,
           "#!/bin/sh\n"
           "# Reproduces finding %s: runs the kernel on the stored case (the minimized one when\n"
           "# present) and judges it. ATTNCHECK overrides the binary; extra arguments go to replay\n"
           "# (a --kernel among them replaces the one below); a command kernel's program is the one\n"
           "# the campaign ran, by its absolute path.%s\n"
           "%s"
           "d=$(dirname \"$0\")\n"
           "exe=%s\n"
           "exec \"${ATTNCHECK:-$exe}\" replay \"$d\" --kernel %s \"$@\"\n",
           sig, envs[0] ? "\n# The environment the kernel ran in (the variables its worker declares it reads):" : "",
           envs, qexe, qspec);
  snprintf(p, sizeof p, "%s/repro.sh", fdir);
  int rc = ac_write_file_atomic(p, sh, strlen(sh), e);
  free(sh);
  if (rc == 0) chmod(p, 0755);
  return rc;
}
