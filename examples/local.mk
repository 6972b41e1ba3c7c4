# examples/: the plugin example and the Python exec: kernel.
# The example plugin, built by make check as a module that sees only the ABI header.
check_LTLIBRARIES += examples/plugin/myplugin.la
examples_plugin_myplugin_la_SOURCES = examples/plugin/myplugin.c
examples_plugin_myplugin_la_CPPFLAGS = -I$(top_srcdir)/kernels
examples_plugin_myplugin_la_CFLAGS = $(AM_CFLAGS)
examples_plugin_myplugin_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
examples_plugin_myplugin_la_LIBADD = -lm
EXTRA_DIST += examples/plugin/README.md
