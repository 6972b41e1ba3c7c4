#!/bin/sh
# treport_page.sh: the HTML reports without a browser. report.html of a campaign (written by fuzz,
# rebuilt by attncheck report, written by merge) holds every plot, a worst-row pair per finding
# with a worst_row in its report.json, links to each finding's files, no <script>, no http(s)
# URL and no plot wider than the page; report -o writes elsewhere with absolute links; suite
# --html draws one grid per kernel; bad input exits 2 with one line.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-treport-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }

# page PAGE: self-contained, every svg at most 1200 px wide (the page width)
page() {
  grep -qi '<script' "$1" && fail "$1: has a <script>"
  grep -Eqi 'https?://' "$1" && fail "$1: has an http(s) URL"
  grep -o '<svg [^>]*width="[0-9]*"' "$1" | sed 's/.*width="\([0-9]*\)"/\1/' | awk '$1 > 1200 { exit 1 }' ||
    fail "$1: an svg wider than the page"
}
# plots PAGE: every campaign plot, and both row plots for each finding (up to 24) with a worst row
plots() {
  for id in plot-err-e plot-err-w plot-progress-time plot-progress-case plot-defects-time plot-findings-time plot-family-share; do
    grep -q "<svg id=\"$id\"" "$1" || fail "$1: plot $id missing"
  done
  n=0
  for d in "$2"/findings/*/; do
    grep -q '"worst_row"' "$d/report.json" && n=$((n + 1))
  done
  [ "$n" -ge 1 ] || fail "$2: no finding has a worst_row"
  [ "$n" -gt 24 ] && n=24
  for i in $(seq 1 "$n"); do
    grep -q "<svg id=\"row-weights-$i\"" "$1" || fail "$1: row-weights-$i missing"
    grep -q "<svg id=\"row-error-$i\"" "$1" || fail "$1: row-error-$i missing"
  done
  page "$1"
}

for i in 0 1; do
  "$bin" fuzz --kernel mutant-no-rescale-sum --shard $i/2 --cases 30 --seed "$seed" --out "$tmp/s$i" --log-cases \
    --no-minimize --families late_max,tile_edge,masked_rows,normal --max-t 300 --no-live --quiet > "$tmp/s$i.txt" 2>&1
  [ $? -eq 1 ] || { cat "$tmp/s$i.txt"; fail "shard $i: expected exit 1"; }
done
plots "$tmp/s0/report.html" "$tmp/s0"
grep -q '"event":"case".*"err_w":' "$tmp/s0/log.jsonl" || fail "case events without err_w"
# worst_row: three arrays of one length, the worst element's column inside
sig=$(ls "$tmp/s0/findings" | head -1)
tr -d ' \n' < "$tmp/s0/findings/$sig/report.json" | grep -q '"worst_row":{"b":[0-9]*,"h":[0-9]*,"i":[0-9]*,"d0":[0-9]*,"exact":\[' ||
  fail "$sig: worst_row malformed"
for f in repro.sh case.npz report.json; do
  grep -q "href=\"findings/$sig/$f\"" "$tmp/s0/report.html" || fail "no link to $sig/$f"
done

# attncheck report rebuilds it; -o writes elsewhere with absolute links
rm "$tmp/s1/report.html"
"$bin" report "$tmp/s1" > "$tmp/r.txt" 2>&1 || { cat "$tmp/r.txt"; fail "report: exit $?"; }
plots "$tmp/s1/report.html" "$tmp/s1"
"$bin" report "$tmp/s1" -o "$tmp/elsewhere.html" > "$tmp/r.txt" 2>&1 || fail "report -o: exit $?"
grep -q "href=\"$(cd "$tmp/s1" && pwd -P)/findings/" "$tmp/elsewhere.html" || fail "report -o: links not absolute"

# merge: the merged report has the plots and the summed per-family counts
"$bin" merge "$tmp/s0" "$tmp/s1" -o "$tmp/m" --no-rerun > "$tmp/m.txt" 2>&1
plots "$tmp/m/report.html" "$tmp/m"
a=$(sed -n 's/^family.late_max=//p' "$tmp/s0/stats"); b=$(sed -n 's/^family.late_max=//p' "$tmp/s1/stats")
grep -q "^family.late_max=$((a + b))\$" "$tmp/m/stats" || fail "merged stats: family.late_max is not $a + $b"

# without case events: the plots come from the findings
grep -v '"event":"case"' "$tmp/s0/log.jsonl" > "$tmp/l" && mv "$tmp/l" "$tmp/s0/log.jsonl"
"$bin" report "$tmp/s0" > /dev/null 2>&1 || fail "report without case events: exit $?"
plots "$tmp/s0/report.html" "$tmp/s0"
grep -q -- '--log-cases' "$tmp/s0/report.html" || fail "report without case events does not say so"

# suite --html: a grid of cases x (kernel, dtype); the f16 column of the f32 kernels (all SKIP) left out
"$bin" suite --kernel flash-f32 --kernel mutant-no-rescale-sum --case f32-64x96-d32-none --case f32-1x1-d1-none \
  --case f16-1x1-d1-none --html "$tmp/suite.html" > "$tmp/su.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/su.txt"; fail "suite: expected exit 1 (the mutant fails)"; }
grep -q '<svg id="suite-grid-1"' "$tmp/suite.html" || fail "suite page: no grid"
for k in flash-f32 mutant-no-rescale-sum; do
  grep -q ">$k</text><text [^>]*>f32</text>" "$tmp/suite.html" || fail "suite page: no column for $k f32"
done
grep -q '>f16</text>' "$tmp/suite.html" && fail "suite page: a column in which every case was SKIP"
[ "$(grep -c '<rect [^>]*><title>' "$tmp/suite.html")" -eq 4 ] || fail "suite page: expected 2 cases x 2 columns"
grep -q 'fill="#e8646a"><title>f32-64x96-d32-none: FAIL' "$tmp/suite.html" || fail "suite page: the mutant's FAIL cell"
grep -q 'err/W' "$tmp/suite.html" || fail "suite page: no err/W"
page "$tmp/suite.html"

# bad input: exit 2, one line
"$bin" report "$tmp/nothing" > "$tmp/o.txt" 2> "$tmp/e.txt"
[ $? -eq 2 ] || fail "report on a missing directory: expected exit 2"
[ "$(wc -l < "$tmp/e.txt")" -eq 1 ] || fail "report on a missing directory: not one line on stderr"
"$bin" suite --kernel flash-f32 --case f32-1x1-d1-none --html /nonexistent/dir/x.html > /dev/null 2>&1
[ $? -eq 2 ] || fail "suite --html to an unwritable path: expected exit 2"
echo "ok"
