/* owner: exec backend */
/* exec.c: a kernel that is a command. attncheck writes the case to IN (an NPZ file), runs
 * the command through /bin/sh with {in} and {out} replaced by the quoted paths, under the
 * time limit, and reads members o (and lse when present) from OUT. exec-persistent:COMMAND
 * (a worker that speaks a line protocol) is in exec_worker.c.
 * Case files live in TMPDIR/attncheck-{exec,worker}-PID-XXXXXX; the first use in a process
 * removes such directories of processes that no longer exist. */
#include "config.h"
#include "exec.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "child.h"
#include "exec_decl.h"
#include "exec_priv.h"
#include "npz.h"

int ac_exec_resolve(const char *spec, ac_kernel *k, ac_err *e)
{
  memset(k, 0, sizeof *k);
  const char *cmd;
  if (!strncmp(spec, "exec-persistent:", 16)) {
    cmd = spec + 16;
    while (*cmd == ' ') cmd++;
    if (!*cmd) return ac_err_set(e, "kernel '%s': empty command", spec);
    k->kind = AC_KIND_EXEC_PERSISTENT;
    exec_priv *pv = ac_xcalloc(1, sizeof *pv);
    pv->command = ac_xstrdup(cmd);
    pv->fd = -1;
    ac_exec_decl_init(&pv->decl);
    k->precision = pv->decl.precision;   /* "" until the worker declares classes */
    k->priv = pv;
    snprintf(k->name, sizeof k->name, "exec-persistent:%s", cmd);
    if (strlen(cmd) + 16 >= sizeof k->name) memcpy(k->name + sizeof k->name - 4, "...", 4);
    snprintf(k->origin, sizeof k->origin, "%s", cmd);
    return 0;
  } else if (!strncmp(spec, "exec:", 5)) {
    cmd = spec + 5;
    k->kind = AC_KIND_EXEC;
  } else {
    return ac_err_set(e, "kernel '%s': not an exec: spec", spec);
  }
  while (*cmd == ' ') cmd++;
  if (!*cmd) return ac_err_set(e, "kernel '%s': empty command", spec);
  if (!strstr(cmd, "{in}") || !strstr(cmd, "{out}"))
    return ac_err_set(e, "kernel '%s': the command must contain {in} and {out} (the case and output NPZ paths)", spec);
  exec_priv *pv = ac_xcalloc(1, sizeof *pv);
  pv->command = ac_xstrdup(cmd);
  k->priv = pv;
  snprintf(k->name, sizeof k->name, "exec:%s", cmd);
  if (strlen(cmd) + 5 >= sizeof k->name) memcpy(k->name + sizeof k->name - 4, "...", 4);
  snprintf(k->origin, sizeof k->origin, "%s", cmd);
  return 0;
}

void ac_exec_free(ac_kernel *k)
{
  exec_priv *pv = k->priv;
  if (!pv) return;
  if (k->kind == AC_KIND_EXEC_PERSISTENT) {
    ac_exec_worker_stop(pv, 0);
    if (pv->dir[0]) ac_exec_remove_dir(pv->dir);
  }
  free(pv->command);
  free(pv);
  k->priv = NULL;
}

const char *ac_exec_unusable(const ac_kernel *k)
{
  const exec_priv *pv = k->priv;
  return pv && k->kind == AC_KIND_EXEC_PERSISTENT && pv->unusable[0] ? pv->unusable : NULL;
}

/* Single-quote s for /bin/sh. */
static void append_quoted(char **buf, size_t *len, size_t *cap, const char *s)
{
  size_t need = *len + 4 * strlen(s) + 3;
  if (need + 1 > *cap) {
    *cap = 2 * need + 64;
    *buf = ac_xrealloc(*buf, *cap);
  }
  char *o = *buf + *len;
  *o++ = '\'';
  for (; *s; s++) {
    if (*s == '\'') {
      memcpy(o, "'\\''", 4);
      o += 4;
    } else {
      *o++ = *s;
    }
  }
  *o++ = '\'';
  *o = 0;
  *len = (size_t)(o - *buf);
}

static char *substitute(const char *tmpl, const char *in, const char *out)
{
  size_t cap = strlen(tmpl) + 64, len = 0;
  char *buf = ac_xmalloc(cap);
  buf[0] = 0;
  for (const char *s = tmpl; *s;) {
    if (!strncmp(s, "{in}", 4)) {
      append_quoted(&buf, &len, &cap, in);
      s += 4;
    } else if (!strncmp(s, "{out}", 5)) {
      append_quoted(&buf, &len, &cap, out);
      s += 5;
    } else {
      if (len + 2 > cap) {
        cap *= 2;
        buf = ac_xrealloc(buf, cap);
      }
      buf[len++] = *s++;
      buf[len] = 0;
    }
  }
  return buf;
}

void ac_exec_shell(const char *command, const char *errpath)
{
  int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    dup2(fd, 2);
    close(fd);
  }
  ac_child_guard();
  execl("/bin/sh", "sh", "-c", command, (char *)NULL);
  _exit(127);
}

typedef struct {
  const char *command;
  const char *errpath;
} sh_arg;

static int run_sh(void *arg)
{
  sh_arg *a = arg;
  /* The command's stdout joins our stderr (our stdout may be a TAP stream); its stderr
   * goes to a file whose last line explains a failure. */
  dup2(2, 1);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) {
    dup2(devnull, 0);
    close(devnull);
  }
  ac_exec_shell(a->command, a->errpath);
}

void ac_exec_last_line(const char *path, char *out, size_t n)
{
  out[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    size_t l = strlen(line);
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = 0;
    if (l) snprintf(out, n, "%s", line);
  }
  fclose(f);
}

/* Member "precision": the class of the path the command took for this case, as uint8 bytes
 * (numpy: np.frombuffer(name.encode(), np.uint8)); an "ok class=NAME" answer comes first.
 * -1 with r a KERNEL_ERROR when the member is not such bytes. */
static int read_class(ac_npz *z, const char *path, ac_run_result *r)
{
  ac_npz_member m;
  ac_err e;
  int ok = ac_npz_read(z, "precision", &m, &e) == 0 && !strcmp(m.descr, "|u1") && m.ndim == 1 && m.nbytes > 0 &&
           m.nbytes < sizeof r->precision;
  for (size_t i = 0; ok && i < m.nbytes; i++)
    ok = ((const unsigned char *)m.data)[i] > 0x20 && ((const unsigned char *)m.data)[i] < 0x7f;
  if (!ok) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg,
             "%.200s: member 'precision' must be the bytes of a class name (uint8, 1 to %zu of them)", path,
             sizeof r->precision - 1);
    return -1;
  }
  if (!r->precision[0]) snprintf(r->precision, sizeof r->precision, "%.*s", (int)m.nbytes, (const char *)m.data);
  return 0;
}

void ac_exec_read_outputs(const char *path, const ac_case *c, const ac_counts *cn, const ac_run_opts *o, ac_run_result *r)
{
  ac_err e;
  const ac_problem *p = &c->p;
  const ac_dtype_info *di = ac_dtype_get(ac_tensor_dtype(p, 'o'));
  ac_npz *z = ac_npz_open(path, ac_mem_cap(), &e);
  if (!z) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg, "command output unreadable: %.400s", e.msg);
    return;
  }
  ac_npz_member m;
  if (!ac_npz_has(z, "o") || ac_npz_read(z, "o", &m, &e)) {
    r->status = AC_RUN_KERNEL_ERROR;
    snprintf(r->msg, sizeof r->msg, "%.200s: no readable member 'o'%s%.250s", path, ac_npz_has(z, "o") ? ": " : "",
             ac_npz_has(z, "o") ? e.msg : "");
    ac_npz_close_reader(z);
    return;
  }
  int64_t want[4] = {p->batch, p->heads, p->tq, p->dv};
  int shape_ok = m.ndim == 4;
  for (int i = 0; shape_ok && i < 4; i++) shape_ok = m.shape[i] == want[i];
  size_t ob = (size_t)cn->o * (size_t)di->bytes;
  if (strcmp(m.descr, di->npy) || !shape_ok || m.nbytes != ob) {
    r->status = AC_RUN_KERNEL_ERROR;
    char got[200];
    snprintf(r->msg, sizeof r->msg,
             "output 'o' must be %s with shape [%lld,%lld,%lld,%lld] (dtype %s), got %s of shape %s", di->npy,
             (long long)want[0], (long long)want[1], (long long)want[2], (long long)want[3], di->name,
             m.descr[0] ? m.descr : "a non-array member", ac_npz_shape_str(&m, got, sizeof got));
    ac_npz_close_reader(z);
    return;
  }
  r->o = ac_xmalloc(ob ? ob : 1);
  memcpy(r->o, m.data, ob);
  r->o_count = cn->o;
  if (o->want_lse && ac_npz_has(z, "lse")) {
    if (ac_npz_read(z, "lse", &m, &e)) {
      r->status = AC_RUN_KERNEL_ERROR;
      snprintf(r->msg, sizeof r->msg, "%.200s: member 'lse' unreadable: %.250s", path, e.msg);
      ac_npz_close_reader(z);
      return;
    }
    int lok = m.ndim == 3 && m.shape[0] == p->batch && m.shape[1] == p->heads && m.shape[2] == p->tq;
    int f4 = !strcmp(m.descr, "<f4"), f8 = !strcmp(m.descr, "<f8");
    if (!lok || !(f4 || f8) || m.nbytes != (size_t)cn->rows * (f4 ? 4 : 8)) {
      r->status = AC_RUN_KERNEL_ERROR;
      char got[200];
      snprintf(r->msg, sizeof r->msg,
               "output 'lse' must be <f4 (or <f8) with shape [%lld,%lld,%lld], got %s of shape %s", (long long)p->batch,
               (long long)p->heads, (long long)p->tq, m.descr[0] ? m.descr : "a non-array member",
               ac_npz_shape_str(&m, got, sizeof got));
      ac_npz_close_reader(z);
      return;
    }
    r->lse = ac_xmalloc((size_t)cn->rows * sizeof(float));
    if (f4) {
      memcpy(r->lse, m.data, (size_t)cn->rows * 4);
    } else {
      for (int64_t i = 0; i < cn->rows; i++) {
        double d;
        memcpy(&d, (const char *)m.data + 8 * i, 8);
        r->lse[i] = (float)d;
      }
    }
    r->lse_count = cn->rows;
  }
  if (ac_npz_has(z, "precision") && read_class(z, path, r)) {
    ac_npz_close_reader(z);
    return;
  }
  ac_npz_close_reader(z);
  r->status = AC_RUN_OK;
}

uint32_t ac_exec_kv_formats(const ac_kernel *k, uint32_t *q)
{
  const exec_priv *pv = k->priv;
  int ok = pv && k->kind == AC_KIND_EXEC_PERSISTENT && pv->decl.state == AC_DECL_OK;
  if (q) *q = ok ? pv->decl.q_formats : 0;
  return ok ? pv->decl.kv_formats : 0;
}

uint32_t ac_exec_declared_caps(const ac_kernel *k)
{
  const exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT || pv->decl.state != AC_DECL_OK) return 0;
  return (pv->decl.variants & AC_FEAT_ALL) | (pv->decl.writes_lse == 0 ? ATTNCHECK_CAP_NO_LSE : 0u) |
         (pv->decl.alibi_lse_fa2 ? ATTNCHECK_CAP_ALIBI_LSE_FA2 : 0u) |
         (pv->decl.quant_only ? ATTNCHECK_CAP_QUANT_ONLY : 0u);
}

void ac_exec_declared_empty(const ac_kernel *k, int *o, int *lse)
{
  const exec_priv *pv = k->priv;
  *o = *lse = 0;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT || pv->decl.state != AC_DECL_OK) return;
  *o = pv->decl.empty_rows;
  *lse = pv->decl.empty_lse;
}

const ac_exec_decl *ac_exec_declaration(const ac_kernel *k)
{
  const exec_priv *pv = k->priv;
  if (!pv || k->kind != AC_KIND_EXEC_PERSISTENT || pv->decl.state != AC_DECL_OK) return NULL;
  return &pv->decl;
}

int ac_exec_supports(const ac_kernel *k, const ac_problem *p, char *why, size_t n)
{
  exec_priv *pv = k->priv;
  if (n) why[0] = 0;
  if (k->kind != AC_KIND_EXEC_PERSISTENT && p->f.used) {
    /* only a declared worker can say it reads the variant members */
    snprintf(why, n, "one-shot exec kernels get no attention variants (an exec-persistent: worker declares them)");
    return 0;
  }
  return !pv || k->kind != AC_KIND_EXEC_PERSISTENT || ac_exec_decl_supports(&pv->decl, p, why, n);
}

int ac_exec_run(const ac_kernel *k, const ac_case *c, const ac_run_opts *o, ac_run_result *r, ac_err *e)
{
  exec_priv *pv = k->priv;
  ac_run_opts defaults;
  if (!o) {
    ac_run_opts_init(&defaults);
    o = &defaults;
  }
  memset(r, 0, sizeof *r);
  r->guard_ok = 1;
  r->dtype = ac_tensor_dtype(&c->p, 'o');
  if (!pv || (k->kind != AC_KIND_EXEC && k->kind != AC_KIND_EXEC_PERSISTENT)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "kernel '%s' is not a usable exec: kernel", k->name);
    return ac_err_set(e, "%s", r->msg);
  }
  ac_counts cn;
  ac_err pe;
  if (ac_problem_counts(&c->p, &cn, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", pe.msg);
    return ac_err_set(e, "%s", pe.msg);
  }
  if (k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_persistent_run(k, c, &cn, o, r, e);
  char dir[512], in[600], out[600], errp[600];
  if (ac_exec_make_dir("exec", dir, sizeof dir, &pe)) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%.500s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  snprintf(in, sizeof in, "%s/in.npz", dir);
  snprintf(out, sizeof out, "%s/out.npz", dir);
  snprintf(errp, sizeof errp, "%s/stderr", dir);
  if (ac_case_write(c, in, &pe)) {
    ac_exec_remove_dir(dir);
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "cannot write the case for the command: %.400s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  char *cmd = substitute(pv->command, in, out);
  sh_arg a = {cmd, errp};
  ac_child_outcome oc;
  int rc = ac_child_run(run_sh, &a, o->timeout_s, 1, &oc, &pe);
  free(cmd);
  if (rc) {
    ac_exec_remove_dir(dir);
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", pe.msg);
    return ac_err_set(e, "%s", r->msg);
  }
  r->kernel_ms = oc.wall_s * 1e3;
  char tail[400];
  ac_exec_last_line(errp, tail, sizeof tail);
  if (oc.timed_out) {
    r->status = AC_RUN_TIMEOUT;
    snprintf(r->msg, sizeof r->msg, "command gave no result within the time limit of %g s (killed)", o->timeout_s);
  } else if (oc.sig) {
    r->status = AC_RUN_CRASH;
    r->sig = oc.sig;
    snprintf(r->msg, sizeof r->msg, "command killed by %s%s%s", ac_signal_name(oc.sig), tail[0] ? ": " : "", tail);
  } else if (oc.code != 0) {
    /* The shell reports a signal of its command as 128+N. */
    if (oc.code > 128 && oc.code < 128 + 65) {
      r->status = AC_RUN_CRASH;
      r->sig = oc.code - 128;
      snprintf(r->msg, sizeof r->msg, "command killed by %s%s%s", ac_signal_name(r->sig), tail[0] ? ": " : "", tail);
    } else if (oc.code == 77) {
      /* the automake SKIP status: the command refuses the case */
      r->status = AC_RUN_UNSUPPORTED;
      const char *why = !strncmp(tail, "unsupported:", 12) ? tail + 12 + (tail[12] == ' ') : tail;
      snprintf(r->msg, sizeof r->msg, "command: %s", why[0] ? why : "refused the case (exit status 77)");
    } else {
      /* the shell's 126 and 127: the command is not executable or not found */
      r->status = AC_RUN_KERNEL_ERROR;
      r->not_started = oc.code == 126 || oc.code == 127;
      snprintf(r->msg, sizeof r->msg, "%scommand exited with status %d%s%s", r->not_started ? AC_RUN_NOT_STARTED : "",
               oc.code, tail[0] ? ": " : "", tail);
    }
  } else {
    ac_exec_read_outputs(out, c, &cn, o, r);
  }
  ac_exec_remove_dir(dir);
  return 0;
}
