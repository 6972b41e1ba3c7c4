# tests/report.mk: the HTML reports (campaign report.html, suite --html): page structure without
# a browser, and screenshots in headless Chromium (SKIP without it). png_check is their helper.
check_PROGRAMS += tests/png_check
tests_png_check_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
tests_png_check_LDADD = $(ZLIB_LIBS)
AC_REPORT_SH = tests/treport_page.sh tests/treport_html.sh
TESTS += $(AC_REPORT_SH)
dist_noinst_SCRIPTS += $(AC_REPORT_SH)
# tsuite_html: the suite page's row labels (long case names drawn from the left, cut at the right).
check_PROGRAMS += tests/tsuite_html
TESTS += tests/tsuite_html
tests_tsuite_html_SOURCES = tests/tsuite_html.c src/cli/suite_html.c
# treport_defects: findings in their defects, one line each first in the summary and report.html,
# findings without one grouped by mechanism; defects.json rebuilt and read back.
check_PROGRAMS += tests/treport_defects
TESTS += tests/treport_defects
