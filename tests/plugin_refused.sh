#!/bin/sh
# plugin_refused.sh: a plugin with the wrong ABI, without the symbol, or with a malformed list
# (absurd count, a name used twice, a control character in a name, an unknown precision class,
# ATTNCHECK_CAP_BACKWARD without run_backward, backward_caps outside caps)
# makes the command exit 2 with one line on stderr naming the file.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
libs=${abs_top_builddir:-.}/tests/.libs
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
for v in tplugin_badabi tplugin_small tplugin_nosym tplugin_empty \
    tplugin_malformed:count tplugin_malformed:dup tplugin_malformed:ctrl tplugin_malformed:precision \
    tplugin_malformed:backward tplugin_malformed:bwdcaps; do
  p=${v%%:*}
  defect=${v#"$p"}; defect=${defect#:}
  [ -f "$libs/$p.so" ] || { echo "not built: $libs/$p.so"; exit 99; }
  AC_TPLUGIN_DEFECT=$defect "$bin" list --kernel "$libs/$p.so" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if grep -q "not implemented yet" "$tmp/err"; then
    echo "SKIP: attncheck list is not implemented yet"
    exit 77
  fi
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $v: exit $rc, expected 2"; cat "$tmp/err"; fail=1
  elif [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: $v: stderr is not one line:"; cat "$tmp/err"; fail=1
  elif ! grep -q "$libs/$p.so" "$tmp/err"; then
    echo "FAIL: $v: the message does not name the file:"; cat "$tmp/err"; fail=1
  else
    echo "ok: $v refused: $(cat "$tmp/err")"
  fi
done
# An unknown precision class stops check at load (2), not per case (3).
ATTNCHECK_CACHE=off AC_TPLUGIN_DEFECT=precision "$bin" check --kernel "$libs/tplugin_malformed.so" example:tiny3 \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ]; then
  echo "FAIL: check with an unknown precision class: exit $rc, expected 2 before any case:"; cat "$tmp/out" "$tmp/err"
  fail=1
else
  echo "ok: check refused the plugin at load: $(cat "$tmp/err")"
fi
exit $fail
