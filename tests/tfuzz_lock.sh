#!/bin/sh
# tfuzz_lock.sh: one campaign per directory. While a campaign runs, a second fuzz on its
# directory, fresh or --resume (or a merge into it), exits 2 with one line naming the holder's
# pid; after kill -9 the lock is taken over at once, the temporaries of the killed run are
# removed, no case number is evaluated twice, and stats say what the journal says; so they do
# after a campaign worker is killed and restarted.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-tlock-XXXXXX) || exit 99
trap 'kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
dir=$tmp/camp
pid=
"$bin" fuzz --kernel mutant-causal-off-by-one --cases 100000 --seed "$seed" --out "$dir" --families normal,small_int,ties \
  --no-minimize --no-live --quiet > "$tmp/run1.txt" 2>&1 &
pid=$!
i=0
# cases in a journal: grep -c prints 0 (and exits 1) on a journal without such lines, so no
# "|| echo 0", which made "0 0" and ended the wait at once
journaled() { n=$(grep -c '^c ' "$1/journal" 2>/dev/null); echo "${n:-0}"; }
while [ $i -lt 600 ] && [ "$(journaled "$dir")" -lt 10 ]; do sleep 0.1; i=$((i + 1)); done
[ $i -lt 600 ] || fail "the first campaign made no progress"

# 1. a second campaign on the same directory is refused, fresh or resumed
for args in "--kernel flash-f32 --cases 5" "--resume --cases 5"; do
  "$bin" fuzz $args --out "$dir" --no-live --quiet > "$tmp/second.txt" 2> "$tmp/second.err"
  rc=$?
  [ $rc -eq 2 ] || { cat "$tmp/second.err"; fail "second campaign ($args): exit $rc, expected 2"; }
  [ "$(wc -l < "$tmp/second.err")" -eq 1 ] || { cat "$tmp/second.err"; fail "second campaign: not one line"; }
  grep -q "pid $pid" "$tmp/second.err" || { cat "$tmp/second.err"; fail "second campaign: the holder's pid $pid is not named"; }
done
echo "ok: $(cat "$tmp/second.err")"
# ... and so is a merge into it
mkdir -p "$tmp/empty/findings"
"$bin" merge "$tmp/empty" -o "$dir" --no-rerun > "$tmp/merge.txt" 2> "$tmp/merge.err"
rc=$?
[ $rc -eq 2 ] && grep -q "pid $pid" "$tmp/merge.err" || { cat "$tmp/merge.err"; fail "merge into a running campaign: exit $rc"; }

# 2. temporaries of a dead process (a finding directory and a stats file being written)
dead=$(sh -c 'echo $$')
mkdir "$dir/findings/.tmp-x__FAIL__normal__first-$dead"
: > "$dir/findings/.tmp-x__FAIL__normal__first-$dead/case.npz"
: > "$dir/stats.tmp.$dead"

# 3. kill -9: the next --resume takes the lock over at once
kill -9 $pid
wait $pid 2>/dev/null
next=$(sed -n 's/^next=//p' "$dir/journal" | tail -n 1)
target=$((next + 30))
"$bin" fuzz --resume --out "$dir" --cases $target --no-live --quiet > "$tmp/run2.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/run2.txt"; fail "resume after kill -9: exit $rc, expected 1"; }
grep -q "\"event\":\"lock-taken-over\",\"from_pid\":$pid" "$dir/log.jsonl" || fail "no lock-taken-over event naming $pid"
[ -e "$dir/findings/.tmp-x__FAIL__normal__first-$dead" ] && fail "temporary finding directory of a dead process left"
[ -e "$dir/stats.tmp.$dead" ] && fail "temporary stats file of a dead process left"
grep -q "^cases=$target\$" "$dir/stats" || fail "stats: cases is not $target after the resume ($(grep '^cases=' "$dir/stats"))"
sh "$src/tests/journal_stats.sh" "$dir" || fail "stats differ from the journal"
echo "ok: killed, resumed to $target cases; stats equal the journal"

# 4. a campaign worker killed on its own: its case is spent, it is restarted, the stats still
# equal the journal at the end
dir2=$tmp/camp2
"$bin" fuzz --kernel mutant-causal-off-by-one --cases 150 --jobs 2 --seed "$seed" --out "$dir2" \
  --families normal,small_int,ties --no-minimize --no-live --quiet > "$tmp/run3.txt" 2>&1 &
pid=$!
i=0
while [ $i -lt 600 ] && [ "$(journaled "$dir2")" -lt 10 ]; do sleep 0.1; i=$((i + 1)); done
w=$(ps -eo pid=,ppid= | awk -v p=$pid '$2 == p { print $1; exit }')
[ -n "$w" ] || fail "no campaign worker found"
kill -9 "$w"
wait $pid
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/run3.txt"; fail "campaign with a killed worker: exit $rc, expected 1 (fail findings)"; }
grep -q '"event":"worker-died"' "$dir2/log.jsonl" || fail "no worker-died event"
grep -q '^cases=150$' "$dir2/stats" || fail "campaign with a killed worker: not 150 cases"
sh "$src/tests/journal_stats.sh" "$dir2" || fail "campaign with a killed worker: stats differ from the journal"
[ -s "$dir2/lock" ] && fail "the lock file keeps a pid after the campaign ended"
echo "ok: a killed worker was restarted; 150 cases, stats equal the journal"
exit 0
