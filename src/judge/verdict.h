/* verdict.h: verdict kinds, their policies and the exit code they lead to (DESIGN.md "Verdicts"). */
#ifndef AC_VERDICT_H
#define AC_VERDICT_H
#include <stdint.h>
#include "util.h"

typedef enum {
  AC_V_FAIL = 0,
  AC_V_SUSPECT,
  AC_V_GUARD,
  AC_V_UNWRITTEN,
  AC_V_CRASH,
  AC_V_TIMEOUT,
  AC_V_NONDETERMINISTIC,
  AC_V_MASKED_LEAK,
  AC_V_OUT_OF_DOMAIN,
  AC_V_SKIP,
  AC_V_ERROR,
  AC_V_METAMORPHIC,   /* fuzzer: a transformed case disagrees beyond twice the class bound (no oracle) */
  AC_V_WEAK_CLASS,    /* within the declared class's bound (or out of its domain) but beyond the dtype's standard class */
  AC_V_OUT_OF_SEQUENCE, /* serving layouts: a sequence read memory it does not own (docs/layouts.md) */
  AC_V_GRAD_FAIL,     /* fuzzer: the kernel's backward (dQ, dK, dV) fails the grad judge (docs/backward.md) */
  AC_V_GRAD_METAMORPHIC, /* fuzzer: the backward on dO scaled by 2^k or on permuted keys disagrees with the
                            original run beyond what a correct kernel allows (no oracle; docs/backward.md) */
  AC_V_NKINDS
} ac_verdict_kind;

typedef enum { AC_POLICY_FAIL = 0, AC_POLICY_WARN = 1, AC_POLICY_IGNORE = 2, AC_POLICY_NONE = 3 } ac_policy;

typedef struct { ac_policy p[AC_V_NKINDS]; } ac_policies;

/* "FAIL", "SUSPECT", ..., "OUT-OF-DOMAIN". */
const char *ac_verdict_name(ac_verdict_kind k);
/* Accepts the names above in any case, '_' for '-'. -1 if unknown. */
int ac_verdict_parse(const char *s, ac_verdict_kind *out);
const char *ac_policy_name(ac_policy p);
/* Defaults: FAIL GUARD UNWRITTEN CRASH TIMEOUT fail; SUSPECT NONDETERMINISTIC MASKED-LEAK warn;
 * METAMORPHIC fail; OUT-OF-SEQUENCE fail; GRAD-FAIL fail; GRAD-METAMORPHIC fail; WEAK-CLASS warn; OUT-OF-DOMAIN ignore (reported); SKIP and ERROR have none. */
void ac_policies_init(ac_policies *p);
/* "KIND=fail|warn|ignore"; -1 with a message otherwise (SKIP and ERROR take no policy). */
int ac_policies_set(ac_policies *p, const char *spec, ac_err *e);
/* Each of the ';'-separated specs of list in turn (a campaign's recorded policies); -1 with a
 * message at the first bad one (those before it are set; e NULL: the bad ones are skipped). */
int ac_policies_set_list(ac_policies *p, const char *list, ac_err *e);

/* Overall status of a set of verdict kinds (bitmask of 1u << kind). */
typedef enum { AC_STATUS_PASS = 0, AC_STATUS_WARN, AC_STATUS_FAIL, AC_STATUS_SKIP, AC_STATUS_ERROR } ac_status;
ac_status ac_status_of(const ac_policies *p, uint32_t kinds);
const char *ac_status_name(ac_status s);

/* Exit code accumulator: 1 if any fail-policy verdict, else 3 if any ERROR, else 0. */
typedef struct { int any_fail, any_error; } ac_exit;
void ac_exit_add(ac_exit *x, const ac_policies *p, uint32_t kinds);
int ac_exit_code(const ac_exit *x);

#endif
