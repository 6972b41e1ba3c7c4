#!/bin/sh
# tfuzz_interrupt.sh: Ctrl-C ends a campaign with exit 130 and the line naming --resume; SIGTERM
# with 143. Signals go to the whole process group, as a terminal's Ctrl-C does. Nothing stored is
# lost, the journal stays consistent with the stats and the finding directories, and --resume
# finishes the campaign (every case number evaluated once).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
tmp=$(mktemp -d /tmp/attncheck-tint-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v setsid > /dev/null 2>&1 || { echo "SKIP: no setsid"; exit 77; }

for sig in INT TERM; do
  dir=$tmp/c-$sig
  setsid "$bin" fuzz --kernel mutant-no-rescale-sum --cases 100000 --max-elems 65536 --minimize-evals 20 --out "$dir" \
    --no-live > "$tmp/$sig.txt" 2> "$tmp/$sig.err" &
  pid=$!
  # wait for 20 evaluated cases and a finding
  i=0
  while [ $i -lt 300 ]; do
    n=$(grep -c '^c ' "$dir/journal" 2> /dev/null)
    [ "${n:-0}" -ge 20 ] && [ -n "$(ls "$dir/findings" 2> /dev/null)" ] && break
    sleep 0.1
    i=$((i + 1))
  done
  [ $i -lt 300 ] || { kill -KILL -$pid; fail "$sig: the campaign did not get going"; }
  kill -$sig -$pid
  wait $pid
  rc=$?
  case $sig in INT) want=130 ;; *) want=143 ;; esac
  [ $rc -eq $want ] || { cat "$tmp/$sig.err"; fail "SIG$sig: exit $rc, expected $want"; }
  grep -q "stopped by SIG$sig after [0-9]* cases; .*--resume --out $dir\$" "$tmp/$sig.err" ||
    { cat "$tmp/$sig.err"; fail "SIG$sig: no line naming --resume"; }
  grep -q '^state=interrupted$' "$dir/stats" || fail "SIG$sig: stats state"
  sh "$src/tests/journal_stats.sh" "$dir" || fail "SIG$sig: stats differ from the journal"
  ls "$dir/findings" | grep -v '^\.' | sort > "$tmp/before"
  total=$(sed -n 's/^cases=//p' "$dir/stats")
  "$bin" fuzz --resume --out "$dir" --cases $((total + 10)) --no-live --quiet > "$tmp/$sig-res.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$tmp/$sig-res.txt"; fail "SIG$sig: resume: exit $rc, expected 1"; }
  ls "$dir/findings" | grep -v '^\.' | sort > "$tmp/after"
  [ -z "$(comm -23 "$tmp/before" "$tmp/after")" ] || fail "SIG$sig: a finding was lost"
  [ "$(grep -c '^c ' "$dir/journal")" -eq $((total + 10)) ] || fail "SIG$sig: case numbers evaluated more or less than once"
  sh "$src/tests/journal_stats.sh" "$dir" || fail "SIG$sig: after the resume, stats differ from the journal"
  echo "ok: SIG$sig: exit $want after $total cases, the --resume line, nothing lost, resumed to $((total + 10))"
done
exit 0
