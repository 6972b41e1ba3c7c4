/* verdict.c: verdict kinds and policies. */
#include "config.h"
#include "verdict.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[AC_V_NKINDS] = {
  "FAIL", "SUSPECT", "GUARD", "UNWRITTEN", "CRASH", "TIMEOUT",
  "NONDETERMINISTIC", "MASKED-LEAK", "OUT-OF-DOMAIN", "SKIP", "ERROR", "METAMORPHIC", "WEAK-CLASS",
  "OUT-OF-SEQUENCE", "GRAD-FAIL", "GRAD-METAMORPHIC",
};

const char *ac_verdict_name(ac_verdict_kind k)
{
  return (unsigned)k < AC_V_NKINDS ? names[k] : "?";
}

int ac_verdict_parse(const char *s, ac_verdict_kind *out)
{
  char buf[32];
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof buf) return -1;
  for (size_t i = 0; i <= n; i++) buf[i] = s[i] == '_' ? '-' : (char)toupper((unsigned char)s[i]);
  for (int k = 0; k < AC_V_NKINDS; k++)
    if (!strcmp(buf, names[k])) {
      *out = (ac_verdict_kind)k;
      return 0;
    }
  if (!strcmp(buf, "OOD")) { *out = AC_V_OUT_OF_DOMAIN; return 0; }
  if (!strcmp(buf, "NONDET")) { *out = AC_V_NONDETERMINISTIC; return 0; }
  return -1;
}

const char *ac_policy_name(ac_policy p)
{
  switch (p) {
  case AC_POLICY_FAIL: return "fail";
  case AC_POLICY_WARN: return "warn";
  case AC_POLICY_IGNORE: return "ignore";
  default: return "-";
  }
}

void ac_policies_init(ac_policies *p)
{
  for (int k = 0; k < AC_V_NKINDS; k++) p->p[k] = AC_POLICY_FAIL;
  p->p[AC_V_SUSPECT] = AC_POLICY_WARN;
  p->p[AC_V_NONDETERMINISTIC] = AC_POLICY_WARN;
  p->p[AC_V_MASKED_LEAK] = AC_POLICY_WARN;
  p->p[AC_V_WEAK_CLASS] = AC_POLICY_WARN;
  p->p[AC_V_OUT_OF_DOMAIN] = AC_POLICY_IGNORE;
  p->p[AC_V_SKIP] = AC_POLICY_NONE;
  p->p[AC_V_ERROR] = AC_POLICY_NONE;
}

int ac_policies_set(ac_policies *p, const char *spec, ac_err *e)
{
  const char *eq = strchr(spec, '=');
  if (!eq) return ac_err_set(e, "bad --policy '%s': expected KIND=fail|warn|ignore", spec);
  char kind[32];
  size_t n = (size_t)(eq - spec);
  if (n == 0 || n >= sizeof kind) return ac_err_set(e, "bad --policy '%s': unknown verdict kind", spec);
  memcpy(kind, spec, n);
  kind[n] = 0;
  ac_verdict_kind k;
  if (ac_verdict_parse(kind, &k) < 0) return ac_err_set(e, "bad --policy '%s': unknown verdict kind '%s'", spec, kind);
  if (k == AC_V_SKIP || k == AC_V_ERROR)
    return ac_err_set(e, "bad --policy '%s': %s takes no policy", spec, names[k]);
  const char *v = eq + 1;
  if (!strcmp(v, "fail")) p->p[k] = AC_POLICY_FAIL;
  else if (!strcmp(v, "warn")) p->p[k] = AC_POLICY_WARN;
  else if (!strcmp(v, "ignore")) p->p[k] = AC_POLICY_IGNORE;
  else return ac_err_set(e, "bad --policy '%s': expected fail, warn or ignore", spec);
  return 0;
}

int ac_policies_set_list(ac_policies *p, const char *list, ac_err *e)
{
  char *dup = ac_xstrdup(list), *save = NULL;
  int rc = 0;
  for (char *t = strtok_r(dup, ";", &save); t && rc == 0; t = strtok_r(NULL, ";", &save))
    if (ac_policies_set(p, t, e) < 0 && e) rc = -1;
  free(dup);
  return rc;
}

ac_status ac_status_of(const ac_policies *p, uint32_t kinds)
{
  int warn = 0;
  for (int k = 0; k < AC_V_NKINDS; k++) {
    if (!(kinds & (1u << k))) continue;
    if (p->p[k] == AC_POLICY_FAIL) return AC_STATUS_FAIL;
    if (p->p[k] == AC_POLICY_WARN) warn = 1;
  }
  if (kinds & (1u << AC_V_ERROR)) return AC_STATUS_ERROR;
  if (warn) return AC_STATUS_WARN;
  if (kinds & (1u << AC_V_SKIP)) return AC_STATUS_SKIP;
  return AC_STATUS_PASS;
}

const char *ac_status_name(ac_status s)
{
  static const char *const n[] = {"PASS", "WARN", "FAIL", "SKIP", "ERROR"};
  return (unsigned)s < 5 ? n[s] : "?";
}

void ac_exit_add(ac_exit *x, const ac_policies *p, uint32_t kinds)
{
  for (int k = 0; k < AC_V_NKINDS; k++)
    if ((kinds & (1u << k)) && p->p[k] == AC_POLICY_FAIL) x->any_fail = 1;
  if (kinds & (1u << AC_V_ERROR)) x->any_error = 1;
}

int ac_exit_code(const ac_exit *x)
{
  if (x->any_fail) return AC_EXIT_FAIL;
  if (x->any_error) return AC_EXIT_INTERNAL;
  return AC_EXIT_OK;
}
