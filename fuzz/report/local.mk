# fuzz/report/: a campaign's findings as text and as report.html (see README.md).
fuzz_libac_fuzz_la_SOURCES += \
	fuzz/report/summary.c \
	fuzz/report/groups.h \
	fuzz/report/groups.c \
	fuzz/report/plot.h \
	fuzz/report/plot.c \
	fuzz/report/report_data.h \
	fuzz/report/report_data.c \
	fuzz/report/report_html.h \
	fuzz/report/report_html.c \
	fuzz/report/report_row.c
