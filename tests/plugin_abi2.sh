#!/bin/sh
# plugin_abi2.sh: a plugin built against the version 2 ABI header (tests/abi2, before ABI 3's
# serving layouts) still loads and passes `suite ci`, and is never handed a varlen or paged case
# (SKIP, naming the layout it does not declare).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so="$top/tests/abi2/.libs/myplugin_v2.so"
[ -f "$so" ] || { echo "ABI 2 plugin not built: $so"; exit 99; }
export ATTNCHECK_CACHE=off
lst=$("$bin" list --kernel "$so" 2>&1) || { echo "$lst"; echo "FAIL: list --kernel of the ABI 2 plugin"; exit 1; }
echo "$lst" | grep -q myplugin-naive-f32 || { echo "$lst"; echo "FAIL: the ABI 2 plugin's kernel is not listed"; exit 1; }
out=$("$bin" suite --kernel "$so:myplugin-naive-f32" --suite ci -q 2>&1)
rc=$?
echo "$out" | tail -n 3
[ $rc -eq 0 ] || { echo "FAIL: suite ci on the ABI 2 plugin exited $rc"; exit 1; }
echo "$out" | grep -q "suite ci: myplugin-naive-f32: [1-9][0-9]* pass, 0 warn, 0 fail" || { echo "FAIL: suite ci summary"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-abi2-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" gen --out "$tmp/v.npz" --seqlens-q 3,0,2 --dk 8 >/dev/null || { echo "FAIL: gen varlen"; exit 1; }
"$bin" gen --out "$tmp/p.npz" --cache-seqlens 20,3 --page-size 16 --dk 8 >/dev/null || { echo "FAIL: gen paged"; exit 1; }
for f in v p; do
  out=$("$bin" check --kernel "$so:myplugin-naive-f32" "$tmp/$f.npz" 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 0 ] || { echo "FAIL: check of a layout case on the ABI 2 plugin exited $rc"; exit 1; }
  echo "$out" | grep -q "^SKIP .*does not declare \(varlen\|paged\)" || { echo "FAIL: layout case not SKIP"; exit 1; }
done
echo "ok: ABI 2 plugin loads, passes suite ci, and SKIPs layout cases"
exit 0
