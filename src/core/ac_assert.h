/* ac_assert.h: internal assertions, used by every layer.
 *
 *   AC_ASSERT(cond, "what must hold")   an invariant: an index bound, an exactness claim
 *   AC_EXACT(call, "why it is exact")   an operation (an mpfr_* call) whose ternary value
 *                                       must be 0; the call always runs
 *
 * In a build configured with --enable-assert (config.h defines AC_ENABLE_ASSERT) a false
 * claim prints "file:line: assertion failed: claim (expression)" on stderr and aborts.
 * Otherwise AC_ASSERT compiles to nothing: its condition is type-checked, never evaluated.
 * Like <assert.h> the macros follow AC_ENABLE_ASSERT at each inclusion (the unit test
 * includes the header once with it and once without). */
#include <stdio.h>
#include <stdlib.h>

#undef AC_ASSERT
#undef AC_EXACT
#ifdef AC_ENABLE_ASSERT
#define AC_ASSERT(cond, claim)                                                                                    \
  ((cond) ? (void)0                                                                                              \
          : (fprintf(stderr, "%s:%d: assertion failed: %s (%s)\n", __FILE__, __LINE__, claim, #cond), abort()))
#define AC_EXACT(call, claim)                                                                                     \
  ((call) == 0 ? (void)0                                                                                         \
               : (fprintf(stderr, "%s:%d: assertion failed: %s (%s is inexact)\n", __FILE__, __LINE__, claim,   \
                          #call),                                                                                \
                  abort()))
#else
#define AC_ASSERT(cond, claim) ((void)sizeof((cond) ? 1 : 0))
#define AC_EXACT(call, claim) ((void)(call))
#endif
