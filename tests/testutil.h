/* testutil.h: the small shared helper library of the Check tests.
 * Seed: fixed default, ATTNCHECK_TEST_SEED overrides; printed in every failure message
 * through AC_SEED_MSG. Expensive tests run only when ATTNCHECK_TEST_EXPENSIVE=1. */
#ifndef AC_TESTUTIL_H
#define AC_TESTUTIL_H
#include <check.h>
#include <stdint.h>
#include <stdio.h>

uint64_t ac_test_seed(void);
int ac_test_expensive(void);
/* Run a suite with the usual runner: returns the exit code for automake (0 / 1). */
int ac_test_run(Suite *s);
/* Path of a test data file (srcdir/tests/data/NAME). */
const char *ac_test_data(const char *name);
/* A fresh temporary directory for this process (removed by the caller or left in /tmp). */
const char *ac_test_tmpdir(void);
/* Path of the built attncheck binary (builddir). */
const char *ac_test_attncheck(void);
/* Run a shell command, return its exit status (or -1). Output captured into out (may be NULL). */
int ac_test_system(const char *cmd, char *out, size_t out_len);

#define AC_SEED_FMT "[seed %llu] "
#define AC_SEED_ARG (unsigned long long)ac_test_seed()

#endif
