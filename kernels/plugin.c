/* plugin.c: the plugin loader (dlopen, one symbol, ABI checks), and the kernels' supports()
 * asked in a forked probe whose answers are cached. */
#include "config.h"
#include "plugin.h"
#include "precision.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness_priv.h"
#include "quant.h"

#define PROBE_CACHE 64

/* What a probe child writes back. */
typedef struct {
  int32_t done, yes;
  char why[256];
} probe_area;

typedef struct {
  attncheck_problem p;
  int yes;
  char why[256];
} probe_entry;

/* k->priv of a plugin kernel. */
typedef struct {
  void *dl;
  probe_entry cache[PROBE_CACHE];
  int n, next;
  char broken[300];   /* why probes stopped: supports() crashed or hung in one */
} plugin_priv;

typedef const attncheck_kernel *const *(*plugin_fn)(size_t *count);

/* struct_size of the first version of attncheck_kernel (version 2 kept it; version 3 appends
 * run_backward, which a version 3 plugin without ATTNCHECK_CAP_BACKWARD may leave out). */
#define AC_KERNEL_V1_SIZE ((size_t)ATTNCHECK_KERNEL_V1_SIZE)
/* More kernels than this in one plugin is a corrupt count, not a plugin. */
#define AC_PLUGIN_MAX_KERNELS 4096

static void *open_plugin(const char *path, ac_err *e)
{
  /* A bare file name means the file in the current directory, not a library search. */
  char buf[4096];
  const char *p = path;
  if (!strchr(path, '/')) {
    snprintf(buf, sizeof buf, "./%s", path);
    p = buf;
  }
  dlerror();
  void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *d = dlerror();
    ac_err_set(e, "%s: cannot load plugin: %s", path, d ? d : "unknown error");
  }
  return h;
}

/* Checks one entry of the plugin's list. */
static int check_kernel(const char *path, size_t i, const attncheck_kernel *k, ac_err *e)
{
  if (!k) return ac_err_set(e, "%s: kernel %zu of the plugin is NULL", path, i);
  if (k->abi_version < 1 || k->abi_version > ATTNCHECK_ABI_VERSION)
    return ac_err_set(e, "%s: kernel %zu has abi_version %u; this attncheck speaks abi_version 1 to %d", path, i,
                      (unsigned)k->abi_version, ATTNCHECK_ABI_VERSION);
  /* the layout bits exist from ABI 3 on */
  uint32_t known = ATTNCHECK_FEAT_ALL | (k->abi_version >= 3 ? ATTNCHECK_FEAT_LAYOUTS | ATTNCHECK_CAP_BACKWARD : 0u) |
                   ATTNCHECK_CAP_NO_LSE | ATTNCHECK_CAP_ALIBI_LSE_FA2 | /* the convention bit: any version with caps */
                   (k->abi_version >= 5 ? ATTNCHECK_CAP_QUANT_ONLY : 0u);
  if (k->abi_version >= 2 && (k->caps & ~known))
    return ac_err_set(e, "%s: kernel %zu declares unknown caps bits 0x%x", path, i, (unsigned)(k->caps & ~known));
  if (k->struct_size < AC_KERNEL_V1_SIZE)
    return ac_err_set(e, "%s: kernel %zu has struct_size %u, smaller than attncheck_kernel v1 (%zu): built against another header?",
                      path, i, (unsigned)k->struct_size, AC_KERNEL_V1_SIZE);
  if (!k->name || !k->name[0]) return ac_err_set(e, "%s: kernel %zu has no name", path, i);
  if (strlen(k->name) >= sizeof(((ac_kernel *)0)->name))
    return ac_err_set(e, "%s: kernel %zu has a name longer than %zu characters", path, i, sizeof(((ac_kernel *)0)->name) - 1);
  for (const unsigned char *c = (const unsigned char *)k->name; *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      return ac_err_set(e, "%s: kernel %zu has a control character (byte 0x%02x) in its name", path, i, *c);
  if (!k->run) return ac_err_set(e, "%s: kernel '%s' has no run function", path, k->name);
  if (k->abi_version >= 3 && (k->caps & ATTNCHECK_CAP_BACKWARD) &&
      (k->struct_size < ATTNCHECK_KERNEL_V3_SIZE || !k->run_backward))
    return ac_err_set(e, "%s: kernel '%s' declares ATTNCHECK_CAP_BACKWARD but has no run_backward (struct_size %u, needs %u)",
                      path, k->name, (unsigned)k->struct_size, (unsigned)ATTNCHECK_KERNEL_V3_SIZE);
  if (k->abi_version >= 4 && (k->caps & ATTNCHECK_CAP_BACKWARD) && k->struct_size >= ATTNCHECK_KERNEL_V4_SIZE &&
      (k->backward_caps & ~(k->caps & (ATTNCHECK_FEAT_ALL | ATTNCHECK_FEAT_LAYOUTS))))
    return ac_err_set(e, "%s: kernel '%s' declares backward_caps 0x%x outside its caps 0x%x", path, k->name,
                      (unsigned)k->backward_caps, (unsigned)(k->caps & (ATTNCHECK_FEAT_ALL | ATTNCHECK_FEAT_LAYOUTS)));
  if (k->abi_version >= 5 && k->struct_size >= ATTNCHECK_KERNEL_V5_SIZE &&
      (k->empty_rows < ATTNCHECK_EMPTY_UNDECLARED || k->empty_rows > ATTNCHECK_EMPTY_MEAN_V ||
       k->empty_lse < ATTNCHECK_EMPTY_LSE_UNDECLARED || k->empty_lse > ATTNCHECK_EMPTY_LSE_NAN))
    return ac_err_set(e, "%s: kernel '%s' declares unknown empty-row conventions (empty_rows %d, empty_lse %d)", path,
                      k->name, (int)k->empty_rows, (int)k->empty_lse);
  if (k->abi_version >= 5 && (k->caps & ATTNCHECK_CAP_QUANT_ONLY) &&
      (k->struct_size < ATTNCHECK_KERNEL_V5Q_SIZE || !k->kv_formats))
    return ac_err_set(e, "%s: kernel '%s' declares ATTNCHECK_CAP_QUANT_ONLY, no kv_formats (struct_size %u, needs %u)",
                      path, k->name, (unsigned)k->struct_size, (unsigned)ATTNCHECK_KERNEL_V5Q_SIZE);
  const uint32_t known_formats = ((1u << AC_QF_N) - 1) & ~1u;
  if (k->abi_version >= 5 && k->struct_size >= ATTNCHECK_KERNEL_V5Q_SIZE &&
      ((k->kv_formats | k->q_formats) & ~known_formats))
    return ac_err_set(e, "%s: kernel '%s' declares unknown quantized formats (kv_formats 0x%x, q_formats 0x%x)", path,
                      k->name, (unsigned)k->kv_formats, (unsigned)k->q_formats);
  if (k->memory != ATTNCHECK_MEM_HOST && k->memory != ATTNCHECK_MEM_CUDA)
    return ac_err_set(e, "%s: kernel '%s' has unknown memory kind %d", path, k->name, (int)k->memory);
  ac_err pe;
  if (k->precision && (strlen(k->precision) > 400 || ac_precision_spec_check(k->precision, &pe) < 0)) {
    int printable = strlen(k->precision) <= 64;
    for (const unsigned char *c = (const unsigned char *)k->precision; printable && *c; c++)
      printable = *c >= 0x20 && *c != 0x7f;
    return ac_err_set(e, "%s: kernel '%s' names an unknown precision class%s%s%s (see 'attncheck list --precision')",
                      path, k->name, printable ? " '" : "", printable ? k->precision : "", printable ? "'" : "");
  }
  return 0;
}

/* Every entry valid and every name used once. */
static int check_list(const char *path, const attncheck_kernel *const *ks, size_t count, ac_err *e)
{
  for (size_t i = 0; i < count; i++) {
    if (check_kernel(path, i, ks[i], e)) return -1;
    for (size_t j = 0; j < i; j++)
      if (!strcmp(ks[j]->name, ks[i]->name))
        return ac_err_set(e, "%s: kernels %zu and %zu are both named '%s'", path, j, i, ks[i]->name);
  }
  return 0;
}

static void append(ac_kernel ***list, int *n, ac_kernel *k)
{
  *list = ac_xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
  (*list)[(*n)++] = k;
}

int ac_plugin_load(const char *path, const char *name, ac_kernel ***list, int *n, ac_err *e)
{
  void *h = open_plugin(path, e);
  if (!h) return -1;
  plugin_fn fn;
  dlerror();
  *(void **)&fn = dlsym(h, "attncheck_plugin_kernels");
  if (!fn || dlerror()) {
    dlclose(h);
    return ac_err_set(e, "%s: not an attncheck plugin (no attncheck_plugin_kernels symbol)", path);
  }
  size_t count = 0;
  const attncheck_kernel *const *ks = fn(&count);
  if (!ks || count == 0) {
    dlclose(h);
    return ac_err_set(e, "%s: attncheck_plugin_kernels returned no kernels", path);
  }
  if (count > AC_PLUGIN_MAX_KERNELS) {
    dlclose(h);
    return ac_err_set(e, "%s: attncheck_plugin_kernels returned a count of %zu (at most %d kernels)", path, count,
                      AC_PLUGIN_MAX_KERNELS);
  }
  if (check_list(path, ks, count, e)) {
    dlclose(h);
    return -1;
  }
  int added = 0;
  for (size_t i = 0; i < count; i++) {
    if (name && strcmp(name, ks[i]->name)) continue;
    ac_kernel *k = ac_xcalloc(1, sizeof *k);
    k->kind = AC_KIND_PLUGIN;
    snprintf(k->name, sizeof k->name, "%s", ks[i]->name);
    snprintf(k->origin, sizeof k->origin, "%s", path);
    k->abi = ks[i];
    k->precision = ks[i]->precision;
    /* One reference on the handle per kernel, so that each can be freed on its own. */
    plugin_priv *pp = ac_xcalloc(1, sizeof *pp);
    pp->dl = added ? open_plugin(path, e) : h;
    k->priv = pp;
    append(list, n, k);
    added++;
  }
  if (!added) {
    char names[400] = "";
    for (size_t i = 0; i < count; i++) {
      size_t l = strlen(names);
      snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", ks[i]->name);
    }
    dlclose(h);
    return ac_err_set(e, "%s: no kernel named '%s' in the plugin (it has: %s)", path, name, names);
  }
  return 0;
}

void ac_plugin_release(ac_kernel *k)
{
  plugin_priv *pp = k->priv;
  if (pp && pp->dl) dlclose(pp->dl);
  free(pp);
  k->priv = NULL;
}

typedef struct {
  const attncheck_kernel *k;
  const attncheck_problem *p;
  probe_area *area;
} probe_arg;

static int probe_body(void *arg)
{
  probe_arg *a = arg;
  ac_hx_child_stdout();
  char why[sizeof a->area->why] = "";
  a->area->yes = a->k->supports(a->p, why, sizeof why) != 0;
  why[sizeof why - 1] = 0;
  memcpy(a->area->why, why, sizeof why);
  a->area->done = 1;
  fflush(stdout);
  return 0;
}

/* supports(p) in a fresh child: 0 with oc filled (oc->exited with yes and why when it
 * answered), -1 when no child could be made. */
static int probe_fork(const ac_kernel *k, const attncheck_problem *p, int *yes, char *why, size_t n, ac_child_outcome *oc)
{
  ac_err e;
  probe_area *area = ac_shared_alloc(sizeof *area, &e);
  probe_arg a = {k->abi, p, area};
  if (!area || ac_child_run(probe_body, &a, AC_PLUGIN_PROBE_TIMEOUT_S, 1, oc, &e)) {
    ac_shared_free(area, sizeof *area);
    return -1;
  }
  if (area->done) {
    *yes = area->yes;
    snprintf(why, n, "%s", area->why);
  }
  oc->exited = area->done && !oc->timed_out && !oc->sig;
  ac_shared_free(area, sizeof *area);
  return 0;
}

int ac_plugin_supports(const ac_kernel *k, const attncheck_problem *p, char *why, size_t n)
{
  plugin_priv *pp = k->priv;
  if (!pp || pp->broken[0]) {
    if (pp) snprintf(why, n, "%s", pp->broken);
    return 1;
  }
  for (int i = 0; i < pp->n; i++)
    if (!memcmp(&pp->cache[i].p, p, sizeof *p)) {
      snprintf(why, n, "%s", pp->cache[i].why);
      return pp->cache[i].yes;
    }
  /* In the kernel's persistent worker when it can be asked (no fork), else in a fresh child. */
  ac_child_outcome oc;
  int yes = 1;
  char w[sizeof pp->cache[0].why] = "";
  if ((!k->worker || ac_worker_supports(k->worker, p, AC_PLUGIN_PROBE_TIMEOUT_S, &yes, w, sizeof w, &oc)) &&
      probe_fork(k, p, &yes, w, sizeof w, &oc)) {
    snprintf(why, n, "supports() not asked: cannot start a process for it");
    return 1;   /* the run asks it in its child */
  }
  if (!oc.exited) {
    /* The run calls supports() again in its own child and reports CRASH or TIMEOUT. */
    if (oc.timed_out)
      snprintf(pp->broken, sizeof pp->broken, "supports() gave no answer within %g s in a probe", AC_PLUGIN_PROBE_TIMEOUT_S);
    else if (oc.sig)
      snprintf(pp->broken, sizeof pp->broken, "supports() was killed by %s in a probe", ac_signal_name(oc.sig));
    else
      snprintf(pp->broken, sizeof pp->broken, "supports() ended its process (status %d) in a probe", oc.code);
    snprintf(why, n, "%s", pp->broken);
    return 1;
  }
  probe_entry *en = &pp->cache[pp->next];
  pp->next = (pp->next + 1) % PROBE_CACHE;
  if (pp->n < PROBE_CACHE) pp->n++;
  en->p = *p;
  en->yes = yes;
  memcpy(en->why, w, sizeof en->why);
  snprintf(why, n, "%s", en->why);
  return yes;
}
