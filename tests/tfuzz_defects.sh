#!/bin/sh
# tfuzz_defects.sh: one defect, one line (docs/fuzzing.md "Distinct defects"). Two shards of a
# small campaign on mutant-no-rescale-sum store several findings of one mechanism; the minimizer
# records each one's mechanism in report.json; the summary at the end of a campaign and after
# `merge` lists the distinct defects first, each with its count, fewer than the findings, every
# finding naming its defect; the merged report.html has the same defects table.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d /tmp/attncheck-defects-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
for i in 0 1; do
  "$bin" fuzz --kernel mutant-no-rescale-sum --families normal,late_max,tile_edge --cases 16 --shard $i/2 \
    --minimize-time 1 --no-live --out "$tmp/s$i" > "$tmp/s$i.txt" 2>&1
  [ $? -eq 1 ] || { cat "$tmp/s$i.txt"; fail "shard $i: expected exit 1"; }
  grep -q '^defect 1: FAIL ' "$tmp/s$i.txt" || { cat "$tmp/s$i.txt"; fail "shard $i: no defects listed"; }
done
for r in "$tmp"/s*/findings/*/report.json; do
  if grep -q '"minimized":true' "$r"; then grep -q '"mechanism":{' "$r" || fail "$r: minimized without a mechanism"; fi
done
"$bin" merge "$tmp/s0" "$tmp/s1" -o "$tmp/m" > "$tmp/m.txt" 2>&1
line=$(grep '^findings in ' "$tmp/m.txt")
nf=$(echo "$line" | sed 's/.*: \([0-9]*\) (.*/\1/')
nd=$(echo "$line" | sed 's/.*, \([0-9]*\) distinct defects\{0,1\} (grouped by mechanism)$/\1/')
case "$nf$nd" in *[!0-9]*|'') fail "merge summary: $line";; esac
[ "$nd" -ge 1 ] && [ "$nd" -lt "$nf" ] || fail "merge: $nf findings in $nd defects: $line"
[ "$(grep -c '^defect [0-9]*: ' "$tmp/m.txt")" -eq "$nd" ] || fail "merge: not $nd defect lines"
sum=$(grep '^defect [0-9]*: ' "$tmp/m.txt" | sed 's/.* x\([0-9]*\) .*/\1/' | awk '{s += $1} END {print s}')
[ "$sum" -eq "$nf" ] || fail "merge: the defects count $sum findings, not $nf"
first=$(grep -n '^defect 1: ' "$tmp/m.txt" | cut -d: -f1)
one=$(grep -n '^  1\. ' "$tmp/m.txt" | cut -d: -f1)
[ "$first" -lt "$one" ] || fail "merge: the defects are not listed before the findings"
[ "$(grep -c ' defect=[0-9]*$' "$tmp/m.txt")" -eq "$nf" ] || fail "merge: a finding line without its defect"
grep -q "Distinct defects ($nd)" "$tmp/m/report.html" || fail "report.html: no table of $nd defects"
echo "ok: $nf findings in $nd defects after merge"
