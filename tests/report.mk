# tests/report.mk: the HTML reports (campaign report.html, suite --html): page structure without
# a browser, and screenshots in headless Chromium (SKIP without it).
check_PROGRAMS += tests/png_check
tests_png_check_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
tests_png_check_LDADD = $(ZLIB_LIBS)
TESTS += tests/treport_page.sh tests/treport_html.sh
dist_noinst_SCRIPTS += tests/treport_page.sh tests/treport_html.sh
