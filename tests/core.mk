# tests/core.mk: tests of this layer.
AC_CORE_TESTS = tests/tdtype_f16 tests/tdtype_bf16 tests/tdtype tests/trng tests/tproblem tests/tassert
check_PROGRAMS += $(AC_CORE_TESTS)
TESTS += $(AC_CORE_TESTS)
