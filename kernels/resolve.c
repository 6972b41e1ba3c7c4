/* resolve.c: --kernel specs to kernels (built-in names, plugins, exec: commands). */
#include "config.h"
#include "harness.h"
#include "quant_view.h"
#include "variants.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "accuda.h"
#include "exec.h"
#include "exec_decl.h"
#include "plugin.h"
#include "suggest.h"

/* The CUDA list comes last: only a name that no CPU kernel has loads the CUDA module. */
const attncheck_kernel *ac_builtin_find(const char *name, int *flags)
{
  const attncheck_kernel *const *(*lists[4])(size_t *) = {ac_cpu_kernels, ac_mutant_kernels, ac_test_kernels,
                                                          ac_cuda_kernels};
  static const int kind[4] = {0, 1, 2, 0};
  for (int l = 0; l < 4; l++) {
    size_t n = 0;
    const attncheck_kernel *const *ks = lists[l](&n);
    for (size_t i = 0; ks && i < n; i++)
      if (ks[i] && ks[i]->name && !strcmp(ks[i]->name, name)) {
        if (flags) *flags = kind[l];
        return ks[i];
      }
  }
  return NULL;
}

/* The built-in kernel name nearest to name ("did you mean"), or NULL. */
static const char *nearest_builtin(const char *name)
{
  const attncheck_kernel *const *(*lists[4])(size_t *) = {ac_cpu_kernels, ac_mutant_kernels, ac_test_kernels,
                                                          ac_cuda_kernels};
  const char **names = NULL;
  size_t total = 0;
  for (int l = 0; l < 4; l++) {
    size_t n = 0;
    const attncheck_kernel *const *ks = lists[l](&n);
    names = ac_xrealloc(names, (total + n + 1) * sizeof *names);
    for (size_t i = 0; ks && i < n; i++)
      if (ks[i] && ks[i]->name) names[total++] = ks[i]->name;
  }
  const char *pick = ac_suggest(name, names, total);
  free(names);
  return pick;
}

/* A spec that reads as a command line rather than a plugin: it holds a space, or it names an
 * executable file that is not a shared object (no ".so" in its name). */
static int looks_like_command(const char *spec)
{
  struct stat st;
  if (strchr(spec, ' ')) return 1;
  return !strstr(spec, ".so") && stat(spec, &st) == 0 && S_ISREG(st.st_mode) && access(spec, X_OK) == 0;
}

#define AC_EXEC_HINT                                                                                                  \
  "; a command needs the prefix exec: (--kernel 'exec:CMD {in} {out}', one process per case) or exec-persistent: (a " \
  "worker)"

static void append(ac_kernel ***list, int *n, ac_kernel *k)
{
  *list = ac_xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
  (*list)[(*n)++] = k;
}

static int is_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Splits "PATH.so:NAME": the path is everything up to the last ':' that follows a ".so"
 * component, unless the whole spec is an existing file. */
static int split_plugin(const char *spec, char *path, size_t np, const char **name)
{
  *name = NULL;
  if (is_file(spec) && strlen(spec) < np) {
    snprintf(path, np, "%s", spec);
    return 1;
  }
  const char *so = NULL;
  for (const char *s = strstr(spec, ".so"); s; s = strstr(s + 1, ".so")) so = s;
  const char *colon = strrchr(spec, ':');
  if (so && colon && colon > so) {
    size_t l = (size_t)(colon - spec);
    if (l >= np) return 0;
    memcpy(path, spec, l);
    path[l] = 0;
    *name = colon + 1;
    return 1;
  }
  if (so || strchr(spec, '/')) {
    if (strlen(spec) >= np) return 0;
    snprintf(path, np, "%s", spec);
    return 1;
  }
  return 0;
}

const char *ac_kernel_spec_absolute(const char *spec, char *buf, size_t n)
{
  char path[4096], cwd[4096];
  const char *name = NULL;
  if (!spec || !strncmp(spec, "exec:", 5) || !strncmp(spec, "exec-persistent:", 16)) return spec;
  if (!strchr(spec, '/') && !strstr(spec, ".so")) return spec;   /* a built-in name */
  if (!split_plugin(spec, path, sizeof path, &name) || path[0] == '/' || !getcwd(cwd, sizeof cwd)) return spec;
  if (!is_file(path)) return spec; /* not a plugin: messages name it as given */
  const char *rel = path;
  while (rel[0] == '.' && rel[1] == '/') rel += 2;
  int len = snprintf(buf, n, "%s/%s%s%s", cwd, rel, name ? ":" : "", name ? name : "");
  return len > 0 && (size_t)len < n ? buf : spec;
}

int ac_kernel_resolve(const char *spec, ac_kernel ***list, int *n, ac_err *e)
{
  if (!spec || !*spec) return ac_err_set(e, "empty kernel name");
  if (!strncmp(spec, "exec:", 5) || !strncmp(spec, "exec-persistent:", 16)) {
    ac_kernel *k = ac_xcalloc(1, sizeof *k);
    if (ac_exec_resolve(spec, k, e)) {
      free(k);
      return -1;
    }
    append(list, n, k);
    return 0;
  }
  /* A spec with '/' or ".so" names a plugin: no built-in lookup (which would load the CUDA module). */
  int flags = 0;
  const attncheck_kernel *b = strchr(spec, '/') || strstr(spec, ".so") ? NULL : ac_builtin_find(spec, &flags);
  if (b) {
    ac_kernel *k = ac_xcalloc(1, sizeof *k);
    k->kind = AC_KIND_BUILTIN;
    snprintf(k->name, sizeof k->name, "%s", b->name);
    snprintf(k->origin, sizeof k->origin, "builtin");
    k->abi = b;
    k->precision = b->precision;
    k->is_mutant = flags == 1;
    k->is_testkernel = flags == 2;
    k->worker = ac_worker_new(k);
    append(list, n, k);
    return 0;
  }
  char path[4096];
  const char *name = NULL;
  if (split_plugin(spec, path, sizeof path, &name)) {
    if (name && !*name) return ac_err_set(e, "%s: empty kernel name after ':'", path);
    if (!is_file(path))
      return ac_err_set(e, "%s: no such plugin file%s", path, looks_like_command(spec) ? AC_EXEC_HINT : "");
    int before = *n;
    if (ac_plugin_load(path, name, list, n, e)) {
      size_t l = strlen(e->msg);
      if (!name && looks_like_command(path)) snprintf(e->msg + l, sizeof e->msg - l, "%s", AC_EXEC_HINT);
      return -1;
    }
    for (int i = before; i < *n; i++) (*list)[i]->worker = ac_worker_new((*list)[i]);
    return 0;
  }
  const char *nocuda = ac_cuda_built() ? ac_cuda_unavailable() : NULL;
  const char *near = looks_like_command(spec) ? NULL : nearest_builtin(spec);
  return ac_err_set(e,
                    "unknown kernel '%s' (not a built-in kernel, a PATH.so plugin or an exec: command; see 'attncheck "
                    "list')%s%s%s%s%s%s",
                    spec, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "",
                    looks_like_command(spec) ? AC_EXEC_HINT : "", nocuda ? "; the CUDA kernels are unavailable: " : "",
                    nocuda ? nocuda : "");
}

void ac_kernel_free(ac_kernel *k)
{
  if (!k) return;
  ac_worker_free(k->worker);   /* before the plugin's code goes away */
  k->worker = NULL;
  if (k->kind == AC_KIND_PLUGIN) ac_plugin_release(k);
  else if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) ac_exec_free(k);
  free(k);
}

const char *ac_kernel_unusable(const ac_kernel *k)
{
  return k->kind == AC_KIND_EXEC_PERSISTENT ? ac_exec_unusable(k) : NULL;
}

void ac_kernel_list_free(ac_kernel **list, int n)
{
  for (int i = 0; i < n; i++) ac_kernel_free(list[i]);
  free(list);
}

void ac_kernel_prepare(const ac_kernel *k, double timeout_s)
{
  if (k && k->kind == AC_KIND_EXEC_PERSISTENT) ac_exec_prepare(k, timeout_s);
}

uint32_t ac_kernel_caps(const ac_kernel *k)
{
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return 0;
  return k->abi && k->abi->abi_version >= 2 ? k->abi->caps : 0;
}

attncheck_backward_fn ac_kernel_backward(const ac_kernel *k)
{
  const attncheck_kernel *a = k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT ? NULL : k->abi;
  /* run_backward is read only when the struct reaches it (a version 1 or 2 plugin's ends before) */
  if (!a || a->abi_version < 3 || !(a->caps & ATTNCHECK_CAP_BACKWARD) || a->struct_size < ATTNCHECK_KERNEL_V3_SIZE)
    return NULL;
  return a->run_backward;
}

int ac_kernel_has_backward(const ac_kernel *k, double timeout_s)
{
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_has_backward(k, timeout_s);
  return ac_kernel_backward(k) != NULL;
}

uint32_t ac_kernel_backward_caps(const ac_kernel *k)
{
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_backward_caps(k);
  const attncheck_kernel *a = ac_kernel_backward(k) ? k->abi : NULL;
  if (!a) return 0;
  /* ABI 4 backward_caps when the struct reaches it; else the set ABI 3 handed to run_backward */
  if (a->abi_version >= 4 && a->struct_size >= ATTNCHECK_KERNEL_V4_SIZE) return a->backward_caps & a->caps;
  return a->caps & ATTNCHECK_BACKWARD_V3_FEATS;
}

/* The native kernel of k when it is of ABI 5 and its struct reaches the version 5 fields. */
static const attncheck_kernel *abi5(const ac_kernel *k)
{
  const attncheck_kernel *a = k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT ? NULL : k->abi;
  return a && a->abi_version >= 5 && a->struct_size >= ATTNCHECK_KERNEL_V5_SIZE ? a : NULL;
}

void ac_kernel_empty_rows(const ac_kernel *k, int *o, int *lse)
{
  *o = *lse = 0;
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) {
    ac_exec_declared_empty(k, o, lse);
    return;
  }
  const attncheck_kernel *a = abi5(k);
  if (a) *o = a->empty_rows, *lse = a->empty_lse;
}

attncheck_precision_fn ac_kernel_precision_of(const ac_kernel *k)
{
  const attncheck_kernel *a = abi5(k);
  return a ? a->precision_of : NULL;
}

int ac_kernel_run_may_refuse(const ac_kernel *k)
{
  const attncheck_kernel *a = k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT ? NULL : k->abi;
  return a && a->abi_version >= 5;
}

int ac_kernel_alibi_lse(const ac_kernel *k, int override)
{
  if (override != AC_ALIBI_LSE_DECLARED) return override;
  return k && (ac_kernel_declared_caps(k) & ATTNCHECK_CAP_ALIBI_LSE_FA2) ? AC_ALIBI_LSE_FA2 : AC_ALIBI_LSE_ABI;
}

uint32_t ac_kernel_declared_caps(const ac_kernel *k)
{
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_declared_caps(k);
  return ac_kernel_caps(k);
}

uint32_t ac_kernel_kv_formats(const ac_kernel *k, uint32_t *q_formats)
{
  uint32_t kv = 0, q = 0;
  if (k->kind == AC_KIND_EXEC_PERSISTENT) {
    kv = ac_exec_kv_formats(k, &q);
  } else if (k->kind == AC_KIND_BUILTIN) {
    const ac_quant_kernel *qk = ac_quant_kernel_of(k->abi);
    if (qk) kv = qk->kv_formats, q = qk->q_formats;
  } else if (k->kind == AC_KIND_PLUGIN && k->abi && k->abi->abi_version >= 5 &&
             k->abi->struct_size >= ATTNCHECK_KERNEL_V5Q_SIZE && k->abi->memory == ATTNCHECK_MEM_HOST) {
    kv = k->abi->kv_formats, q = k->abi->q_formats;   /* ABI 5's quantized formats (a host plugin) */
  }
  if (q_formats) *q_formats = q;
  return kv;
}

int ac_kernel_params_q_dtype(const ac_kernel *k)
{
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) {
    const ac_exec_decl *d = k->kind == AC_KIND_EXEC_PERSISTENT ? ac_exec_declaration(k) : NULL;
    return d && d->params_q_dtype;
  }
  return k->abi && k->abi->abi_version >= 2 && (k->abi->caps & ATTNCHECK_CAP_PARAMS_Q_DTYPE) != 0;
}

int ac_kernel_quant_only(const ac_kernel *k)
{
  const ac_quant_kernel *qk = k->kind == AC_KIND_BUILTIN ? ac_quant_kernel_of(k->abi) : NULL;
  if (qk) return qk->quant_only;
  /* a plugin's ATTNCHECK_CAP_QUANT_ONLY (ABI 5), a worker's "quant_only": with formats it takes */
  return (ac_kernel_declared_caps(k) & ATTNCHECK_CAP_QUANT_ONLY) && ac_kernel_kv_formats(k, NULL) != 0;
}

const char *ac_kernel_quant_refusal(const ac_kernel *k, const ac_problem *p, char *why, size_t n)
{
  if (!ac_problem_quantized(p)) {
    if (!ac_kernel_quant_only(k)) return NULL;
    snprintf(why, n, "the kernel reads quantized tensors only (gen --kv-format)");
    return why;
  }
  char fs[96];
  if (k->kind == AC_KIND_PLUGIN && k->abi && k->abi->memory == ATTNCHECK_MEM_CUDA) {
    snprintf(why, n, "quantized tensors do not reach CUDA kernels yet (host plugins get them through ABI 5's tensors.quant)");
    return why;
  }
  if (k->kind == AC_KIND_PLUGIN && !ac_kernel_kv_formats(k, NULL)) {
    snprintf(why, n, "the plugin declares no quantized format (ABI 5's kernel.kv_formats; a plugin built before them has "
                     "none)");
    return why;
  }
  if (k->kind == AC_KIND_EXEC) {
    snprintf(why, n, "one-shot exec kernels get no quantized tensors (an exec-persistent: worker declares kv_formats)");
    return why;
  }
  uint32_t q, kv = ac_kernel_kv_formats(k, &q);
  for (int i = 0; i < 3; i++) {
    int fmt = p->quant[i].fmt;
    uint32_t have = i == 0 ? q : kv;
    if (!fmt || (have >> fmt & 1u)) continue;
    if (have) snprintf(why, n, "the kernel does not declare %s for %c (it takes %s)", ac_qfmt_name(fmt), "qkv"[i],
                       ac_qfmt_list(have, fs, sizeof fs));
    else snprintf(why, n, "the kernel declares no quantized format for %c (the case's is %s)", "qkv"[i], ac_qfmt_name(fmt));
    return why;
  }
  return NULL;
}

static int kernel_supports(const ac_kernel *k, const ac_problem *p, char *why, size_t why_len)
{
  if (why_len) why[0] = 0;
  if (ac_kernel_quant_refusal(k, p, why, why_len)) return 0;
  /* exec workers declare their variants in the handshake (exec_decl.c) */
  if (k->kind == AC_KIND_EXEC || k->kind == AC_KIND_EXEC_PERSISTENT) return ac_exec_supports(k, p, why, why_len);
  uint32_t missing = p->f.used & ~ac_kernel_caps(k) & (ATTNCHECK_FEAT_ALL | ATTNCHECK_FEAT_LAYOUTS);
  if (missing) {
    char names[160];
    snprintf(why, why_len, "the kernel does not declare %s (ABI caps)", ac_feat_list(missing, names, sizeof names));
    return 0;
  }
  if (!k->abi) {
    snprintf(why, why_len, "kernel has no implementation");
    return 0;
  }
  if (k->abi->memory == ATTNCHECK_MEM_CUDA && !ac_cuda_built()) {
    snprintf(why, why_len, "CUDA support not built");
    return 0;
  }
  if (!k->abi->supports) return 1;
  attncheck_problem a;
  ac_problem_to_abi(p, &a);
  /* a plugin's code never runs in attncheck's own process */
  int r = k->kind == AC_KIND_PLUGIN ? ac_plugin_supports(k, &a, why, why_len) : k->abi->supports(&a, why, why_len);
  if (why_len) why[why_len - 1] = 0;
  if (!r && why_len && !why[0]) snprintf(why, why_len, "the kernel does not support this problem");
  return r != 0;
}

int ac_kernel_supports(const ac_kernel *k, const ac_problem *p, char *why, size_t why_len)
{
  int r = kernel_supports(k, p, why, why_len);
  ac_str_escape_inplace(why, why_len); /* a SKIP reason the kernel or worker wrote: text for every output */
  return r;
}
