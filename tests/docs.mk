# tests/docs.mk: the READMEs' command blocks run as written (tests/treadme.sh, the README doc test;
# its header says how blocks are found, annotated and rewritten), and the doc test fails on
# made-up READMEs whose commands cannot run (treadme_selftest.sh); quickstart.sh check names the
# line that enables the browser test where chromium is absent (tquickstart.sh).
AC_DOCS_SH = tests/treadme.sh tests/treadme_selftest.sh tests/tquickstart.sh
TESTS += $(AC_DOCS_SH)
dist_noinst_SCRIPTS += $(AC_DOCS_SH)
