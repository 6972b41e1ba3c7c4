#!/bin/sh
# plugin_refused.sh: a plugin with the wrong ABI or without the symbol makes the command
# exit 2 with one line on stderr naming the file.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
libs=${abs_top_builddir:-.}/tests/.libs
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
for p in tplugin_badabi tplugin_small tplugin_nosym tplugin_empty; do
  [ -f "$libs/$p.so" ] || { echo "not built: $libs/$p.so"; exit 99; }
  "$bin" list --kernel "$libs/$p.so" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if grep -q "not implemented yet" "$tmp/err"; then
    echo "SKIP: attncheck list is not implemented yet"
    exit 77
  fi
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $p.so: exit $rc, expected 2"; cat "$tmp/err"; fail=1
  elif ! grep -q "$libs/$p.so" "$tmp/err"; then
    echo "FAIL: $p.so: the message does not name the file:"; cat "$tmp/err"; fail=1
  else
    echo "ok: $p.so refused: $(cat "$tmp/err")"
  fi
done
exit $fail
