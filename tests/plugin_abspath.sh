#!/bin/sh
# plugin_abspath.sh: a plugin given by a relative path is recorded with its absolute path
# (check's reproducer, fuzz's campaign.json and findings), so that it works from any directory.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=${abs_top_builddir:-.}/examples/plugin
[ -f "$dir/.libs/myplugin.so" ] || { echo "example plugin not built: $dir/.libs/myplugin.so"; exit 99; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$dir" || exit 99
abs=$(cd .libs && pwd)/myplugin.so
export ATTNCHECK_CACHE=off
"$bin" check --kernel ./.libs/myplugin.so:myplugin-naive-f32 example:tiny3 --json "$tmp/r.json" >/dev/null 2>&1 ||
  { echo "FAIL: check with the plugin"; exit 1; }
grep -q "\"reproduce\":\"attncheck check --kernel $abs:myplugin-naive-f32 " "$tmp/r.json" ||
  { cat "$tmp/r.json"; echo "FAIL: check's reproducer lacks the absolute plugin path $abs"; exit 1; }
"$bin" fuzz --kernel .libs/myplugin.so:myplugin-naive-f32 --cases 2 --out "$tmp/camp" --quiet >/dev/null 2>&1 ||
  { echo "FAIL: fuzz with the plugin"; exit 1; }
sed 's|\\/|/|g' "$tmp/camp/campaign.json" | grep -q "\"kernel_spec\": *\"$abs:myplugin-naive-f32\"" ||
  { cat "$tmp/camp/campaign.json"; echo "FAIL: campaign.json lacks the absolute plugin path $abs"; exit 1; }
# built-in names and exec: commands stay as typed
"$bin" check --kernel naive-f32 example:tiny3 --json "$tmp/b.json" >/dev/null 2>&1
grep -q '"reproduce":"attncheck check --kernel naive-f32 ' "$tmp/b.json" || { cat "$tmp/b.json"; echo "FAIL: built-in spec changed"; exit 1; }
echo "ok: $abs"
