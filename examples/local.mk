# examples/: the plugin example (the Python exec workers are in python/attncheck/worker).
# The example plugin, built by make check as a module that sees only the ABI header.
check_LTLIBRARIES += examples/plugin/myplugin.la
examples_plugin_myplugin_la_SOURCES = examples/plugin/myplugin.c
examples_plugin_myplugin_la_CPPFLAGS = -I$(top_builddir)/include
examples_plugin_myplugin_la_CFLAGS = $(AM_CFLAGS)
examples_plugin_myplugin_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
examples_plugin_myplugin_la_LIBADD = -lm
EXTRA_DIST += examples/plugin/README.md
# The example includes <attncheck/kernel.h> as an installed plugin does; in the build tree
# that path is a copy of kernels/attncheck_kernel.h.
include/attncheck/kernel.h: $(top_srcdir)/kernels/attncheck_kernel.h
	$(MKDIR_P) include/attncheck
	cp $(top_srcdir)/kernels/attncheck_kernel.h $@
BUILT_SOURCES += include/attncheck/kernel.h
CLEANFILES += include/attncheck/kernel.h
