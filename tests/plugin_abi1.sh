#!/bin/sh
# plugin_abi1.sh: a plugin built against the version 1 ABI header still loads and passes
# `suite ci` (cases that use ABI 2 features are SKIP for it), and the current header is
# C99 -pedantic clean and includable from C++.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
src=$(cd "${srcdir:-.}" && pwd) || exit 99
so="$top/tests/abi1/.libs/myplugin_v1.so"
[ -f "$so" ] || { echo "ABI 1 plugin not built: $so"; exit 99; }
lst=$("$bin" list --kernel "$so" 2>&1) || { echo "$lst"; echo "FAIL: list --kernel of the ABI 1 plugin"; exit 1; }
echo "$lst" | grep -q myplugin-naive-f32 || { echo "$lst"; echo "FAIL: the ABI 1 plugin's kernel is not listed"; exit 1; }
out=$("$bin" suite --kernel "$so" --suite ci -q 2>&1)
rc=$?
echo "$out" | tail -n 5
[ $rc -eq 0 ] || { echo "FAIL: suite ci on the ABI 1 plugin exited $rc"; exit 1; }
echo "$out" | grep -q "suite ci: myplugin-naive-f32: [1-9][0-9]* pass, 0 warn, 0 fail" || { echo "FAIL: suite ci summary"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-abi-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
printf '#include "attncheck_kernel.h"\nint main(void) { return (int)ATTNCHECK_PROBLEM_V2_SIZE == 0; }\n' > "$tmp/h.c"
if command -v cc >/dev/null 2>&1; then
  cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$src/kernels" -c "$tmp/h.c" -o "$tmp/h.o" || { echo "FAIL: header not C99 -pedantic clean"; exit 1; }
fi
if command -v c++ >/dev/null 2>&1; then
  cp "$tmp/h.c" "$tmp/h.cc"
  c++ -pedantic -Wall -Wextra -Werror -I"$src/kernels" -c "$tmp/h.cc" -o "$tmp/h2.o" || { echo "FAIL: header not C++-includable"; exit 1; }
fi
echo "ok: ABI 1 plugin loads and passes suite ci; header C99/C++ clean"
exit 0
