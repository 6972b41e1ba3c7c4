#!/bin/sh
# plugin_readme.sh: the README's plugin ("As a plugin (C)": the ```c block and the cc line) builds
# from this build tree, which was not installed, through PKG_CONFIG_PATH and
# attncheck-uninstalled.pc, without a warning under -Wall -Wextra -Werror; attncheck loads it as
# an ABI 5 plugin and judges it PASS (and SKIP on a dtype it refuses).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
src=$(cd "${srcdir:-.}" && pwd) || exit 99
fail() { echo "FAIL: $*"; exit 1; }
command -v pkg-config >/dev/null 2>&1 || { echo "no pkg-config"; exit 77; }
cc=cc
command -v cc >/dev/null 2>&1 || cc=gcc
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler"; exit 77; }
[ -f "$top/attncheck-uninstalled.pc" ] || fail "$top/attncheck-uninstalled.pc was not made by configure"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-readme-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
# the first ```c block after the heading, and the cc line after it
awk '/^### As a plugin \(C\)/ {s = 1} s == 1 && /^```c$/ {s = 2; next} s == 2 && /^```$/ {exit} s == 2 {print}' \
  "$src/README.md" > "$tmp/myplugin.c"
grep -q attncheck_plugin_kernels "$tmp/myplugin.c" || fail "no plugin block in README.md"
line=$(awk '/^### As a plugin \(C\)/ {s = 1} s == 1 && /^    cc .*pkg-config/ {print; exit}' "$src/README.md" | sed 's/^    //')
[ -n "$line" ] || fail "no cc line in README.md"
flags=$(PKG_CONFIG_PATH="$top" pkg-config --cflags attncheck) || fail "pkg-config --cflags attncheck with PKG_CONFIG_PATH=$top"
echo "pkg-config --cflags attncheck: $flags"
case "$flags" in *"/include"*) ;; *) fail "the flags name no include directory: $flags" ;; esac
# the README's own line, with the compiler found here and -Werror
line=$(echo "$line" | sed "s/^cc /$cc -Werror /")
echo "$line"
(cd "$tmp" && PKG_CONFIG_PATH="$top" sh -c "$line") > "$tmp/cc.txt" 2>&1 || { cat "$tmp/cc.txt"; fail "the README's plugin does not build"; }
[ -s "$tmp/cc.txt" ] && { cat "$tmp/cc.txt"; fail "the compiler said something"; }
so="$tmp/myplugin.so"
lst=$("$bin" list --kernel "$so" 2>&1) || { echo "$lst"; fail "list --kernel"; }
echo "$lst" | grep -q "my-kernel  *fp32" || { echo "$lst"; fail "my-kernel not listed with its class"; }
"$bin" gen -o "$tmp/a.npz" --heads 4 --kv-heads 2 --tq 37 --tk 70 --dk 24 --dv 16 --mask causal-bottom-right --seed 5 >/dev/null || exit 99
"$bin" gen -o "$tmp/b.npz" --t 40 --dk 64 --mask causal --scale -0.3 --seed 6 >/dev/null || exit 99
"$bin" gen -o "$tmp/c.npz" --dtype f16 --t 8 --dk 8 --seed 7 >/dev/null || exit 99
out=$("$bin" check --kernel "$so" "$tmp/a.npz" "$tmp/b.npz" "$tmp/c.npz" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "check of the README's plugin exited $rc"
[ "$(echo "$out" | grep -c '^PASS  my-kernel')" -eq 2 ] || fail "the README's plugin is not PASS on the f32 cases"
echo "$out" | grep -q "^SKIP  my-kernel .*f32 with dv <= 1024 only" || fail "the f16 case is not SKIP with the plugin's reason"
echo "ok: the README's plugin builds from the build tree without warnings and passes"
exit 0
