/* api_ctx.c: libattncheck's contexts: options by the command's names, and the last error. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api_int.h"

int attncheck_api_version(void)
{
  return ATTNCHECK_API_VERSION;
}

const char *attncheck_version(void)
{
  return PACKAGE_VERSION;
}

attncheck_ctx *attncheck_ctx_new(void)
{
  attncheck_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return NULL;
  ac_judge_args_init(&ctx->a);
  return ctx;
}

attncheck_ctx *ac_api_ctx_from_args(const ac_judge_args *a)
{
  attncheck_ctx *ctx = attncheck_ctx_new();
  if (ctx) ctx->a = *a;
  return ctx;
}

void attncheck_ctx_free(attncheck_ctx *ctx)
{
  if (!ctx) return;
  for (int i = 0; i < ctx->nvals; i++) free(ctx->vals[i]);
  free(ctx->name);
  free(ctx->casename);
  free(ctx->repro);
  free(ctx);
}

const char *attncheck_ctx_error(const attncheck_ctx *ctx)
{
  return ctx ? ctx->err : "no context";
}

int ac_api_fail(attncheck_ctx *ctx, const char *fmt, ...)
{
  if (!ctx) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
  va_end(ap);
  return -1;
}

static int set_label(char **slot, const char *v)
{
  char *s = v ? strdup(v) : NULL;
  if (v && !s) return -1;
  free(*slot);
  *slot = s;
  return 0;
}

/* Options that only make sense for a kernel run, which the library does not make. */
static int run_only(const char *name)
{
  return !strcmp(name, "timeout") || !strcmp(name, "repeat") || !strcmp(name, "no-lse") || !strcmp(name, "in-process");
}

int attncheck_ctx_set(attncheck_ctx *ctx, const char *option, const char *value)
{
  if (!ctx) return -1;
  ctx->err[0] = 0;
  if (!option) return ac_api_fail(ctx, "no option name");
  if (!strcmp(option, "name")) return set_label(&ctx->name, value) < 0 ? ac_api_fail(ctx, "out of memory") : 0;
  if (!strcmp(option, "case")) return set_label(&ctx->casename, value) < 0 ? ac_api_fail(ctx, "out of memory") : 0;
  if (!strcmp(option, "repro")) return set_label(&ctx->repro, value) < 0 ? ac_api_fail(ctx, "out of memory") : 0;
  int ch = ac_judge_args_code(option);
  if (!ch || run_only(option)) return ac_api_fail(ctx, "unknown option '%s'", option);
  if (!strcmp(option, "rows") && !value) {
    ctx->a.j.rows = NULL;
    return 0;
  }
  if (!strcmp(option, "no-cache")) value = "";
  if (!value) return ac_api_fail(ctx, "option '%s' needs a value", option);
  if (ctx->nvals == AC_API_MAX_VALUES) return ac_api_fail(ctx, "too many options set on one context");
  char *v = strdup(value);
  if (!v) return ac_api_fail(ctx, "out of memory");
  ac_err e;
  int rc = ac_judge_args_apply(&ctx->a, ch, v, &e);
  if (rc <= 0) {
    free(v);
    return ac_api_fail(ctx, "%s: %s", option, rc < 0 ? e.msg : "not an option");
  }
  ctx->vals[ctx->nvals++] = v;
  ac_judge_args_finish(&ctx->a, "library");
  return 0;
}

const char *attncheck_kind_name(int k)
{
  if (k < 0 || k >= AC_V_NKINDS) return NULL;
  return ac_verdict_name((ac_verdict_kind)k);
}

const char *attncheck_status_name(int status)
{
  if (status < ATTNCHECK_PASS || status > ATTNCHECK_ERROR) return "?";
  return ac_status_name((ac_status)status);
}
