#!/bin/sh
# plugin_abi4.sh: a plugin built against the frozen version 4 header (tests/abi4, before ABI 5)
# still loads and is judged PASS, and a non-zero return of its run() whose message begins
# "unsupported:" is what it was in ABI 4, a kernel error (FAIL): only an ABI 5 kernel refuses a
# case from run(). Its struct ends before the ABI 5 fields, which are never read.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so="$top/tests/abi4/.libs/myplugin_v4.so"
[ -f "$so" ] || { echo "ABI 4 plugin not built: $so"; exit 99; }
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
lst=$("$bin" list --kernel "$so" 2>&1) || { echo "$lst"; fail "list --kernel of the ABI 4 plugin"; }
echo "$lst"
echo "$lst" | grep -q "myplugin-v4-f32  *fp32" || fail "the ABI 4 kernel is not listed"
echo "$lst" | grep -q "empty rows\|class per problem" && fail "ABI 5 declarations read from an ABI 4 plugin"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-abi4-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" gen -o "$tmp/s.npz" --heads 2 --t 6 --dk 8 --mask causal --seed 4 >/dev/null || exit 99
"$bin" gen -o "$tmp/l.npz" --heads 2 --kv-heads 1 --tq 12 --tk 20 --dk 8 --mask causal-bottom-right --seed 4 >/dev/null || exit 99
out=$("$bin" check --kernel "$so:myplugin-v4-f32" "$tmp/s.npz" "$tmp/l.npz" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^PASS')" -eq 2 ] || fail "the ABI 4 kernel is not PASS (exit $rc)"
out=$("$bin" check --kernel "$so:myplugin-v4-refusing" "$tmp/s.npz" "$tmp/l.npz" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "an ABI 4 run() error is not a failure (exit $rc)"
echo "$out" | grep -q "^PASS .*s.npz" || fail "the small case of the refusing kernel is not PASS"
echo "$out" | grep -q "^FAIL .*l.npz FAIL (kernel returned an error: unsupported: more than 8 keys)" ||
  fail "an ABI 4 run() answering 'unsupported:' is not a kernel error"
echo "ok: ABI 4 plugin loads, passes, and keeps ABI 4's reading of run() errors"
exit 0
