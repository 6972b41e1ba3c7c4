/* owner: exec backend */
/* exec_decl.c: parsing and use of an exec-persistent worker's declaration (exec_decl.h). */
#include "config.h"
#include "exec_decl.h"
#include "precision.h"
#include "variants.h"
#include "quant.h"
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const feature_names[AC_XF_N] = AC_EXEC_FEATURE_NAMES;

void ac_exec_decl_init(ac_exec_decl *d)
{
  memset(d, 0, sizeof *d);
  d->state = AC_DECL_UNKNOWN;
  d->dtypes = d->masks = d->features = ~0u;
  d->writes_lse = -1;
}

static int bad(ac_exec_decl *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(ac_exec_decl *d, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->error, sizeof d->error, fmt, ap);
  va_end(ap);
  d->state = AC_DECL_BAD;
  return -1;
}

/* An array of names to a bit set: kind 0 dtypes, 1 masks, 2 features. */
static int name_set(ac_exec_decl *d, json_object *arr, const char *field, int kind, uint32_t *out)
{
  if (!json_object_is_type(arr, json_type_array)) return bad(d, "'%s' must be an array of names", field);
  *out = 0;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *v = json_object_array_get_idx(arr, i);
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    int bit = -1;
    ac_dtype t;
    ac_mask m;
    if (s && kind == 0 && ac_dtype_parse(s, &t) == 0) bit = (int)t;
    if (s && kind == 1 && ac_mask_parse(s, &m) == 0) bit = (int)m;
    for (int f = 0; s && kind == 2 && f < AC_XF_N; f++)
      if (!strcmp(s, feature_names[f])) bit = f;
    uint32_t variant = 0;   /* an attention variant or a serving layout (ABI 2 and 3 feature names) */
    for (uint32_t b = 1; bit < 0 && s && kind == 2 && (b & (AC_FEAT_ALL | AC_FEAT_LAYOUTS)); b <<= 1)
      if (!strcmp(s, ac_feat_name(b))) variant = b;
    if (variant) {
      d->variants |= variant;
      continue;
    }
    if (bit < 0) return bad(d, "'%s': unknown name '%s'", field, s ? s : "(not a string)");
    *out |= 1u << bit;
  }
  return 0;
}

/* "backward": true (the declared variants among window, bool_mask, alibi, bias and sinks, the set
 * true has always meant; softcap and varlen only when named), false, or the names of the
 * declared variants its backward takes. After "features". */
static int backward_set(ac_exec_decl *d, json_object *v)
{
  if (json_object_is_type(v, json_type_boolean)) {
    d->backward = json_object_get_boolean(v);
    d->backward_feats = d->backward ? d->variants & ATTNCHECK_BACKWARD_V3_FEATS : 0u;
    return 0;
  }
  if (!json_object_is_type(v, json_type_array)) return bad(d, "'backward' must be true, false or an array of feature names");
  d->backward = 1;
  d->backward_feats = 0;
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    json_object *x = json_object_array_get_idx(v, i);
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
    uint32_t bit = 0;
    for (uint32_t b = 1; !bit && s && (b & (AC_FEAT_ALL | AC_FEAT_LAYOUTS)); b <<= 1)
      if (!strcmp(s, ac_feat_name(b))) bit = b;
    if (!bit) return bad(d, "'backward': unknown feature '%s'", s ? s : "(not a string)");
    if (!(d->variants & bit)) return bad(d, "'backward': feature '%s' is not among the declared 'features'", s);
    d->backward_feats |= bit;
  }
  return 0;
}

/* "kv_formats" / "q_formats": an array of quantized format names (quant.h). */
static int format_set(ac_exec_decl *d, json_object *v, const char *field, uint32_t *out)
{
  if (!json_object_is_type(v, json_type_array)) return bad(d, "'%s' must be an array of format names", field);
  *out = 0;
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    json_object *x = json_object_array_get_idx(v, i);
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
    int fmt;
    if (!s || ac_qfmt_parse(s, &fmt)) return bad(d, "'%s': unknown format '%s'", field, s ? s : "(not a string)");
    *out |= 1u << fmt;
  }
  return 0;
}

/* "precision": one class for every dtype, or {"DTYPE": "CLASS", ...}, each class a preset's name
 * or a class string ("q=f16,pv=f16"); kept as a precision spec ("CLASS" or "DTYPE=CLASS,..."),
 * resolved per case. */
static int precision_spec(ac_exec_decl *d, json_object *v)
{
  size_t len = 0;
  const ac_precision *cls;
  ac_err e;
  d->precision[0] = 0;
  if (json_object_is_type(v, json_type_string)) {
    const char *s = json_object_get_string(v);
    if (strlen(s) >= sizeof d->precision) return bad(d, "'precision': class too long");
    if (ac_precision_lookup(s, &cls, &e) < 0) return bad(d, "'precision': %s", e.msg);
    snprintf(d->precision, sizeof d->precision, "%s", s);
    return 0;
  }
  if (!json_object_is_type(v, json_type_object)) return bad(d, "'precision' must be a class or {\"DTYPE\": \"CLASS\"}");
  json_object_object_foreach(v, key, val) {
    ac_dtype t;
    const char *c = json_object_is_type(val, json_type_string) ? json_object_get_string(val) : "";
    if (ac_dtype_parse(key, &t)) return bad(d, "'precision': unknown dtype '%s'", key);
    if (!*c) return bad(d, "'precision': bad class name for %s", key);
    if (ac_precision_lookup(c, &cls, &e) < 0) return bad(d, "'precision' of %s: %s", key, e.msg);
    int w = snprintf(d->precision + len, sizeof d->precision - len, "%s%s=%s", len ? "," : "", ac_dtype_name(t), c);
    if (w < 0 || (size_t)w >= sizeof d->precision - len) return bad(d, "'precision': too long");
    len += (size_t)w;
  }
  return 0;
}

/* "empty_rows": "zero" | "nan" | "mean-v"; "empty_lse": "-inf" | "+inf" | "nan". */
static int empty_conv(ac_exec_decl *d, json_object *j)
{
  static const char *const on[] = {"zero", "nan", "mean-v"}, *const ln[] = {"-inf", "+inf", "nan"};
  json_object *v;
  if (json_object_object_get_ex(j, "empty_rows", &v)) {
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    for (int i = 0; i < 3; i++)
      if (!strcmp(s, on[i])) d->empty_rows = i + 1;
    if (!d->empty_rows) return bad(d, "'empty_rows' must be \"zero\", \"nan\" or \"mean-v\"");
  }
  if (json_object_object_get_ex(j, "empty_lse", &v)) {
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    for (int i = 0; i < 3; i++)
      if (!strcmp(s, ln[i])) d->empty_lse = i + 1;
    if (!d->empty_lse) return bad(d, "'empty_lse' must be \"-inf\", \"+inf\" or \"nan\"");
  }
  return 0;
}

/* "env": the names of environment variables the worker reads ([A-Za-z_][A-Za-z0-9_]*). */
static int env_names(ac_exec_decl *d, json_object *v)
{
  if (!json_object_is_type(v, json_type_array)) return bad(d, "'env' must be an array of variable names");
  if (json_object_array_length(v) > AC_EXEC_MAX_ENV) return bad(d, "'env': more than %d names", AC_EXEC_MAX_ENV);
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    json_object *x = json_object_array_get_idx(v, i);
    const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
    int ok =
        (s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && strlen(s) < AC_EXEC_ENV_NAME;
    for (const char *c = s; ok && *c; c++)
      ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
    if (!ok) return bad(d, "'env': '%.64s' is not a variable name", s);
    snprintf(d->env[d->nenv++], AC_EXEC_ENV_NAME, "%s", s);
  }
  return 0;
}

/* "note": one line, escaped as every text a worker sends (ac_str_escape). */
static void note_text(ac_exec_decl *d, json_object *v)
{
  snprintf(d->note, sizeof d->note, "%s", json_object_get_string(v));
  ac_str_escape_inplace(d->note, sizeof d->note);
}

void ac_exec_decl_parse(ac_exec_decl *d, const char *text)
{
  ac_exec_decl_init(d);
  json_object *j = json_tokener_parse(text), *v;
  if (!j || !json_object_is_type(j, json_type_object)) {
    bad(d, "the declaration is not a JSON object: %.200s", text);
    json_object_put(j);
    return;
  }
  int rc = 0;
  if (json_object_object_get_ex(j, "name", &v)) snprintf(d->name, sizeof d->name, "%s", json_object_get_string(v));
  if (!rc && json_object_object_get_ex(j, "dtypes", &v)) rc = name_set(d, v, "dtypes", 0, &d->dtypes);
  if (!rc && json_object_object_get_ex(j, "masks", &v)) rc = name_set(d, v, "masks", 1, &d->masks);
  if (!rc && json_object_object_get_ex(j, "features", &v)) rc = name_set(d, v, "features", 2, &d->features);
  if (!rc && json_object_object_get_ex(j, "precision", &v) && !json_object_is_type(v, json_type_null)) rc = precision_spec(d, v);
  if (!rc && json_object_object_get_ex(j, "writes_lse", &v)) {
    if (json_object_is_type(v, json_type_boolean)) d->writes_lse = json_object_get_boolean(v);
    else rc = bad(d, "'writes_lse' must be true or false");
  }
  if (!rc && json_object_object_get_ex(j, "alibi_lse", &v)) {
    const char *a = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    if (!strcmp(a, "fa2") || !strcmp(a, "abi")) d->alibi_lse_fa2 = !strcmp(a, "fa2");
    else rc = bad(d, "'alibi_lse' must be \"abi\" or \"fa2\"");
  }
  if (!rc && json_object_object_get_ex(j, "backward", &v)) rc = backward_set(d, v);
  if (!rc && json_object_object_get_ex(j, "kv_formats", &v)) rc = format_set(d, v, "kv_formats", &d->kv_formats);
  if (!rc && json_object_object_get_ex(j, "q_formats", &v)) rc = format_set(d, v, "q_formats", &d->q_formats);
  if (!rc && json_object_object_get_ex(j, "quant_only", &v)) {
    if (!json_object_is_type(v, json_type_boolean)) rc = bad(d, "'quant_only' must be true or false");
    else if ((d->quant_only = json_object_get_boolean(v)) && !d->kv_formats)
      rc = bad(d, "'quant_only' without 'kv_formats': no case could reach the worker");
  }
  if (!rc) rc = empty_conv(d, j);
  if (!rc && json_object_object_get_ex(j, "params_dtype", &v)) {
    const char *a = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    if (!strcmp(a, "q") || !strcmp(a, "stored")) d->params_q_dtype = !strcmp(a, "q");
    else rc = bad(d, "'params_dtype' must be \"q\" or \"stored\"");
  }
  if (!rc && json_object_object_get_ex(j, "env", &v)) rc = env_names(d, v);
  if (!rc && json_object_object_get_ex(j, "note", &v) && json_object_is_type(v, json_type_string)) note_text(d, v);
  json_object_put(j);
  if (!rc) d->state = AC_DECL_OK;
}

int ac_exec_decl_answer(ac_exec_decl *d, const char *line)
{
  size_t tl = strlen(AC_EXEC_DECL_TAG);
  if (!strncmp(line, AC_EXEC_DECL_TAG, tl) && line[tl] == ' ') {
    const char *s = line + tl + 1;
    char *end;
    long ver = strtol(s, &end, 10);
    if (end == s || ver != 1 || *end != ' ') {
      ac_exec_decl_init(d);
      bad(d, "the worker answered with protocol version '%.20s'; attncheck speaks version 1", s);
      return 1;
    }
    ac_exec_decl_parse(d, end + 1);
    return 1;
  }
  if (!strncmp(line, "ok", 2) || !strncmp(line, "error", 5)) {
    d->state = AC_DECL_NONE;   /* a worker that took the hello for a request */
    return 1;
  }
  return 0;
}

int ac_exec_decl_supports(const ac_exec_decl *d, const ac_problem *p, char *why, size_t n)
{
  if (n) why[0] = 0;
  const char *who = d->name[0] ? d->name : "the worker";
  uint32_t var = p->f.used & ~(d->state == AC_DECL_OK ? d->variants : 0u);
  if (var) {
    char names[160];
    snprintf(why, n, "%s does not declare feature %s", who, ac_feat_list(var, names, sizeof names));
    return 0;
  }
  for (int i = 0; i < 3; i++) {   /* quantized tensors: the formats it names (docs/quantized.md) */
    int fmt = p->quant[i].fmt;
    uint32_t have = d->state != AC_DECL_OK ? 0u : i == 0 ? d->q_formats : d->kv_formats;
    if (fmt && !(have >> fmt & 1u)) {
      snprintf(why, n, "%s does not declare %s for %c (\"%s\")", who, ac_qfmt_name(fmt), "qkv"[i], i ? "kv_formats" : "q_formats");
      return 0;
    }
  }
  if (d->state != AC_DECL_OK) return 1;
  uint32_t need = 0;
  if (p->kv_heads != p->heads) need |= 1u << AC_XF_GQA;
  if (p->dv != p->dk) need |= 1u << AC_XF_DV_NE_DK;
  if (p->tq != p->tk) need |= 1u << AC_XF_TQ_NE_TK;
  if (!p->scale_is_default) need |= 1u << AC_XF_SCALE;
  /* with mixed_dtypes each tensor's dtype must be declared too */
  ac_dtype undeclared = p->dtype;
  char tensor = 0;
  for (const char *x = "qkvo"; *x && !tensor && (d->dtypes >> p->dtype & 1u); x++)   /* quantized: kv_formats */
    if (!ac_tensor_quantized(p, *x) && !(d->dtypes >> ac_tensor_dtype(p, *x) & 1u)) undeclared = ac_tensor_dtype(p, *x), tensor = *x;
  if (!(d->dtypes >> undeclared & 1u))
    snprintf(why, n, "%s does not declare dtype %s%s", who, ac_dtype_name(undeclared),
             tensor == 'q' ? " (of q)" : tensor == 'k' ? " (of k)" : tensor == 'v' ? " (of v)" : tensor == 'o' ? " (of o)" : "");
  else if (!(d->masks >> p->mask & 1u)) snprintf(why, n, "%s does not declare mask %s", who, ac_mask_name(p->mask));
  else if (need & ~d->features) {
    int f = 0;
    while (!((need & ~d->features) >> f & 1u)) f++;
    snprintf(why, n, "%s does not declare feature %s", who, feature_names[f]);
  } else {
    return 1;
  }
  return 0;
}

int ac_exec_decl_admit(const ac_exec_decl *d, const ac_problem *p, ac_run_result *r)
{
  if (d->state == AC_DECL_BAD) {
    r->status = AC_RUN_HARNESS_ERROR;
    snprintf(r->msg, sizeof r->msg, "unusable worker declaration: %s", d->error);
    return -1;
  }
  if (ac_exec_decl_supports(d, p, r->msg, sizeof r->msg)) return 0;
  r->status = AC_RUN_UNSUPPORTED;
  return -1;
}

void ac_exec_decl_error(const char *line, ac_run_result *r)
{
  const char *m = line[5] ? line + 6 : "error";
  while (*m == ' ') m++;
  if (!strncmp(m, "unsupported", 11) && (m[11] == ':' || m[11] == ' ' || !m[11])) {
    m += 11;
    while (*m == ':' || *m == ' ') m++;
    r->status = AC_RUN_UNSUPPORTED;
    snprintf(r->msg, sizeof r->msg, "worker: %.480s", *m ? m : "refused the case");
    return;
  }
  r->status = AC_RUN_KERNEL_ERROR;
  snprintf(r->msg, sizeof r->msg, "worker: %.480s", m);
}

void ac_exec_decl_outputs(const ac_exec_decl *d, const ac_run_opts *o, int64_t rows, ac_run_result *r)
{
  if (d->state != AC_DECL_OK || r->status != AC_RUN_OK) return;
  if (d->writes_lse == 0 && r->lse) {
    free(r->lse);
    r->lse = NULL;
    r->lse_count = 0;
  } else if (d->writes_lse == 1 && o->want_lse && !r->lse) {
    r->n_lse_unwritten = rows;
  }
}
