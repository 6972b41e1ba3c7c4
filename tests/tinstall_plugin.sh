#!/bin/sh
# tinstall_plugin: `make install` into a DESTDIR, then the example plugin builds with the
# README's compile line (pkg-config finds <attncheck/kernel.h>) and the installed attncheck
# (which finds the installed libattncheck through its run path) loads it; a program using
# <attncheck/attncheck.h> builds with pkg-config --cflags --libs and runs.
set -u
top=${abs_top_builddir:-.}
src=$(cd "${srcdir:-.}" && pwd) || exit 99
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "SKIP: no cc"; exit 77; }
dest=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-inst-XXXXXX") || exit 99
trap 'rm -rf "$dest"' EXIT
# The installed tree has a folder of its own: the prefix (under distcheck, a path in the build
# tree) must not meet the plugin's work folder.
inst="$dest/inst"
# A make of its own, not the jobserver of the make running this test.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top" install DESTDIR="$inst" >"$dest/install.log" 2>&1; then
  tail -n 20 "$dest/install.log"; echo "FAIL: make install DESTDIR=$inst"; exit 1
fi
pc=$(find "$inst" -name attncheck.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: attncheck.pc was not installed"; exit 1; }
bin=$(find "$inst" -path '*/bin/attncheck' | head -n 1)
[ -x "$bin" ] || { echo "FAIL: attncheck was not installed"; exit 1; }
mkdir "$dest/work" && cp "$src/examples/plugin/myplugin.c" "$dest/work/" && cd "$dest/work" || exit 99
# The README's line, verbatim; the DESTDIR is reached through pkg-config's own variables.
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$inst"
cc -shared -fPIC -O2 $(pkg-config --cflags attncheck) myplugin.c -o myplugin.so || { echo "FAIL: the README's compile line"; exit 1; }
out=$("$bin" list --kernel ./myplugin.so 2>&1) || { echo "$out"; echo "FAIL: installed attncheck cannot list the plugin"; exit 1; }
echo "$out" | grep -q myplugin-naive-f32 || { echo "$out"; echo "FAIL: the plugin kernel is not listed"; exit 1; }
# A client of the installed libattncheck: <attncheck/attncheck.h> and pkg-config --libs.
cat > client.c <<'EOF2'
#include <attncheck/attncheck.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
  attncheck_ctx *ctx = attncheck_ctx_new();
  if (!ctx || attncheck_api_version() != ATTNCHECK_API_VERSION || attncheck_ctx_set(ctx, "precision", "fp32") ||
      attncheck_ctx_set(ctx, "nonsense", "1") != -1 || !strstr(attncheck_ctx_error(ctx), "nonsense"))
    return 1;
  printf("libattncheck %s, API %d\n", attncheck_version(), attncheck_api_version());
  attncheck_ctx_free(ctx);
  return 0;
}
EOF2
cc $(pkg-config --cflags attncheck) client.c -o client $(pkg-config --libs attncheck) || { echo "FAIL: a client of libattncheck does not build"; exit 1; }
libdir=$(dirname "$(find "$inst" -name 'libattncheck.so.0' | head -n 1)")
LD_LIBRARY_PATH=$libdir ./client || { echo "FAIL: the client of the installed libattncheck"; exit 1; }
echo "ok: installed tree, pkg-config --cflags attncheck = $(pkg-config --cflags attncheck)"
exit 0
