#!/bin/sh
# tfuzz_resume.sh: kill -9 in the middle of a campaign loses no finding and repeats no case
# number: the supervisor is killed with SIGKILL (its workers die with it), --resume continues
# from the journal, every finding written before the kill is still complete, and the case
# numbers logged by both runs are distinct.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-tresume-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
dir=$tmp/camp
"$bin" fuzz --kernel mutant-causal-off-by-one --cases 100000 --jobs 2 --seed "$seed" --out "$dir" --log-cases \
  --minimize-evals 30 --no-live --quiet > "$tmp/run1.txt" 2>&1 &
pid=$!
# wait for some cases and at least one finding, then kill -9
i=0
while [ $i -lt 900 ]; do
  n=$(grep -c '"event":"case"' "$dir/log.jsonl" 2>/dev/null)
  n=${n:-0}
  f=$(ls "$dir/findings" 2>/dev/null | grep -vc '^\.' || true)
  [ "$n" -ge 30 ] && [ "$f" -ge 1 ] && break
  sleep 0.1
  i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
sleep 0.5
[ "$n" -ge 30 ] || fail "campaign made too little progress before the kill ($n cases)"
# no worker survives its supervisor
if ps -eo pid,ppid,args | awk -v p=$pid '$2 == p' | grep -q attncheck; then fail "workers survived kill -9 of the supervisor"; fi
before=$(ls "$dir/findings" | grep -v '^\.' | sort)
[ -n "$before" ] || fail "no finding before the kill"
next=$(sed -n 's/^next=//p' "$dir/journal" | tail -n 1)
[ -n "$next" ] || fail "no journal"
target=$((next + 40))
"$bin" fuzz --resume --out "$dir" --cases "$target" --log-cases --minimize-evals 30 --no-live --quiet > "$tmp/run2.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/run2.txt"; fail "resumed campaign: exit $rc, expected 1 (findings with policy fail)"; }
grep -q '"event":"resume"' "$dir/log.jsonl" || fail "no resume event"
for s in $before; do
  for f in case.npz report.json repro.sh; do [ -s "$dir/findings/$s/$f" ] || fail "finding $s lost $f"; done
done
ls "$dir/findings" | grep -q '^\.tmp' && ls "$dir/findings" | grep '^\.tmp' | while read t; do
  # a temporary directory of the killed run may remain; it is never a finding
  [ -d "$dir/findings/$t" ] || fail "odd entry $t"
done
# every case number at most once
sed -n 's/.*"event":"case","case":\([0-9]*\).*/\1/p' "$dir/log.jsonl" | sort -n > "$tmp/cases"
total=$(wc -l < "$tmp/cases")
uniq=$(sort -un "$tmp/cases" | wc -l)
[ "$total" -eq "$uniq" ] || fail "case numbers repeated: $total logged, $uniq distinct"
last=$(tail -n 1 "$tmp/cases")
[ "$last" -lt "$target" ] || fail "case number $last beyond --cases $target"
after=$(grep -c . "$tmp/cases")
[ "$after" -gt "$n" ] || fail "the resumed run ran no case"
grep -q "^next_case=$target\$" "$dir/stats" || fail "stats: next_case is not $target"
echo "ok: killed after $n cases with $(echo "$before" | wc -l) findings; resumed to $target; $total distinct case numbers"
exit 0
