#!/bin/sh
# tfuzz_shard.sh: --shard I/N draws from disjoint case spaces with seed hash(S, I); merge unions
# the findings by signature, re-runs each reproducer once (reproduced_on_merge), sums the case
# counts, and exits 1 when a merged fail-policy finding reproduced.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-tshard-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
for i in 0 1; do
  "$bin" fuzz --kernel mutant-causal-top-left --shard $i/2 --cases 24 --seed "$seed" --out "$tmp/s$i" --log-cases \
    --no-minimize --families tq_ne_tk,small_int,masked_rows --no-live --quiet > "$tmp/s$i.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$tmp/s$i.txt"; fail "shard $i: exit $rc, expected 1"; }
  grep -q "^shard=$i/2\$" "$tmp/s$i/stats" || fail "shard $i: stats do not name the shard"
  sed -n 's/.*"event":"case","case":\([0-9]*\).*/\1/p' "$tmp/s$i/log.jsonl" > "$tmp/c$i"
  [ "$(wc -l < "$tmp/c$i")" -eq 24 ] || fail "shard $i ran $(wc -l < "$tmp/c$i") cases, expected 24"
  awk -v i=$i '$1 % 2 != i { exit 1 }' "$tmp/c$i" || fail "shard $i: a case number outside its space"
done
"$bin" merge "$tmp/s0" "$tmp/s1" -o "$tmp/m" > "$tmp/m.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/m.txt"; fail "merge: exit $rc, expected 1"; }
sigs=$( (ls "$tmp/s0/findings"; ls "$tmp/s1/findings") | grep -v '^\.' | sort -u)
msigs=$(ls "$tmp/m/findings" | grep -v '^\.' | sort)
[ "$sigs" = "$msigs" ] || fail "merged findings differ from the union of the shards"
for s in $msigs; do
  grep -q '"reproduced_on_merge":true' "$tmp/m/findings/$s/report.json" || fail "$s: not reproduced on merge"
  [ -x "$tmp/m/findings/$s/repro.sh" ] || fail "$s: repro.sh not executable after merge"
done
grep -q '^cases=48$' "$tmp/m/stats" || fail "merged stats do not sum the cases"
[ -s "$tmp/m/report.html" ] || fail "no merged report.html"
# merging again adds nothing
"$bin" merge "$tmp/s0" -o "$tmp/m" --no-rerun > "$tmp/m2.txt" 2>&1
grep -q ' 0 new findings' "$tmp/m2.txt" || { cat "$tmp/m2.txt"; fail "second merge added findings"; }
grep -q '^cases=48$' "$tmp/m/stats" || fail "a second merge of the same shard counted its cases twice"
echo "ok: 2 shards x 24 cases, $(echo "$msigs" | wc -l) findings merged and reproduced"
exit 0
