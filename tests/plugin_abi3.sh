#!/bin/sh
# plugin_abi3.sh: a plugin built against the version 3 ABI header (tests/abi3, before ABI 4's
# backward_caps) still loads, its backward is judged on the features ABI 3 handed to run_backward
# (a window: PASS), and a softcap case is never handed to it (SKIP naming softcap), although its
# forward declares softcap.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so="$top/tests/abi3/.libs/myplugin_v3.so"
[ -f "$so" ] || { echo "ABI 3 plugin not built: $so"; exit 99; }
export ATTNCHECK_CACHE=off
k="$so:myplugin-v3-bwd-f32"
lst=$("$bin" list --kernel "$so" 2>&1) || { echo "$lst"; echo "FAIL: list --kernel of the ABI 3 plugin"; exit 1; }
echo "$lst" | grep -q "myplugin-v3-bwd-f32.*backward" || { echo "$lst"; echo "FAIL: the ABI 3 plugin's backward is not listed"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-abi3-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" gen -o "$tmp/w.npz" --heads 2 --t 24 --dk 8 --dv 8 --mask causal --window 5,0 --grad normal --seed 4 >/dev/null ||
  { echo "FAIL: gen window"; exit 1; }
"$bin" gen -o "$tmp/s.npz" --heads 2 --t 24 --dk 8 --dv 8 --softcap 3 --grad normal --seed 4 >/dev/null ||
  { echo "FAIL: gen softcap"; exit 1; }
out=$("$bin" check --grad --kernel "$k" "$tmp/w.npz" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: check --grad of a window case on the ABI 3 plugin exited $rc"; exit 1; }
echo "$out" | grep -q "^PASS" || { echo "FAIL: the window case's backward is not PASS"; exit 1; }
out=$("$bin" check --grad --kernel "$k" "$tmp/s.npz" 2>&1)
rc=$?
echo "$out"
echo "$out" | grep -q "^SKIP .*backward does not take softcap" || { echo "FAIL: softcap backward not SKIP (rc $rc)"; exit 1; }
echo "ok: ABI 3 plugin loads, its backward is judged on a window and never handed softcap"
exit 0
