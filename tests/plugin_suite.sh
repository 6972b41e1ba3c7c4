#!/bin/sh
# plugin_suite.sh: the example plugin passes `attncheck suite --suite ci` through the plugin path.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
dir=${abs_top_builddir:-.}/examples/plugin
[ -f "$dir/.libs/myplugin.so" ] || { echo "example plugin not built: $dir/.libs/myplugin.so"; exit 99; }
cd "$dir" || exit 99
out=$("$bin" suite --kernel .libs/myplugin.so --suite ci 2>&1)
rc=$?
echo "$out" | tail -n 40
if echo "$out" | grep -q "not implemented yet"; then
  echo "SKIP: attncheck suite is not implemented yet"
  exit 77
fi
exit $rc
