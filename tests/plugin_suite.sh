#!/bin/sh
# plugin_suite.sh: the example plugin passes `attncheck suite --suite ci` through the plugin path,
# variant cases included: both of its kernels declare window, softcap, ALiBi, bias, boolean mask
# and sinks (not descales: SKIP); myplugin-nolse-f32 declares ATTNCHECK_CAP_NO_LSE (o judged only).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
dir=${abs_top_builddir:-.}/examples/plugin
[ -f "$dir/.libs/myplugin.so" ] || { echo "example plugin not built: $dir/.libs/myplugin.so"; exit 99; }
cd "$dir" || exit 99
fail() { echo "$out"; echo "FAIL: $*"; exit 1; }
# list --kernel PLUGIN lists the plugin's kernels with their caps, not the built-ins.
out=$("$bin" list --kernel .libs/myplugin.so 2>&1) || fail "list --kernel"
caps="features window,softcap,alibi,bias,bool_mask,sinks"
echo "$out" | grep -A1 '^  myplugin-naive-f32 ' | grep -q "; $caps\$" || fail "list: myplugin-naive-f32 and its caps"
echo "$out" | grep -A1 '^  myplugin-nolse-f32 ' | grep -q "; $caps; no LSE\$" || fail "list: myplugin-nolse-f32 and its caps"
if echo "$out" | grep -q "built-in kernels\|flash-f32"; then fail "list --kernel also lists built-ins"; fi
out=$("$bin" suite --verbose --kernel .libs/myplugin.so --suite ci 2>&1)
rc=$?
echo "$out" | grep '^suite '
[ $rc -eq 0 ] || fail "suite ci exits $rc"
for k in myplugin-naive-f32 myplugin-nolse-f32; do
  n=$(echo "$out" | grep -c "^PASS  $k f32-.*-\(win\|cap\|alibi\|bias\|bmask\|sink\)") || :
  [ "$n" -ge 25 ] || fail "$k: $n variant cases PASS"
  echo "$out" | grep -q "^SKIP  $k f32-.*-descale SKIP (unsupported: the kernel does not declare descale" || fail "$k: descale not SKIP"
done
echo "$out" | grep -q '^PASS  myplugin-naive-f32 .*-sink .* lse_err/W=' || fail "myplugin-naive-f32: LSE not judged"
if echo "$out" | grep -q '^PASS  myplugin-nolse-f32 .*lse_err'; then fail "myplugin-nolse-f32: LSE judged"; fi
echo "$out" | grep -q '^suite ci: myplugin-nolse-f32: [1-9][0-9]* pass, 0 warn, 0 fail' || fail "myplugin-nolse-f32 suite"
exit 0
