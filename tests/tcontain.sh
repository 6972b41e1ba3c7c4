#!/bin/sh
# tcontain.sh: what a kernel or an exec worker does outside its outputs never hangs or ends
# attncheck, never reaches its stdout, and nothing it starts outlives its case: a worker that
# closes stdin/stdout and keeps running (CRASH at once; a campaign stops non-zero), one that
# cannot start, grandchildren that sleep (exec:, exec-persistent:, plugin), supports() that
# crashes or hangs, run() that prints to stdout, a 5 KB error line, 'ok ' with a trailing
# space, and case directories left by a killed process.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so=$top/tests/.libs/tplugin_misbehave.so
ek=$top/tests/tharness_execkernel
[ -f "$so" ] || { echo "test plugin not built: $so"; exit 99; }
[ -x "$ek" ] || { echo "exec helper not built: $ek"; exit 99; }
tmp=$(mktemp -d /tmp/attncheck-tcontain-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }

# gone PIDFILE: the process named in it has ended (or is a zombie) within 5 s
gone() {
  [ -s "$1" ] || fail "no pid file $1"
  p=$(cat "$1")
  i=0
  while [ $i -lt 50 ]; do
    kill -0 "$p" 2>/dev/null || return 0
    st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
    [ "$st" = Z ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  kill -9 "$p" 2>/dev/null
  return 1
}
# within T0 SECONDS: at most SECONDS have passed since T0
within() { [ $(($(date +%s) - $1)) -le "$2" ]; }

"$bin" gen --out "$tmp/c.npz" --dtype f32 --mask none --t 8 --dk 8 --seed 3 > /dev/null || fail "gen"

# 1. a worker that closes stdin and stdout and keeps running: CRASH at once, killed
cat > "$tmp/closer.sh" <<'EOF'
echo $$ > "$1"
exec sleep 30 <&- >&-
EOF
t0=$(date +%s)
out=$("$bin" check --timeout 2 --kernel "exec-persistent:exec sh $tmp/closer.sh $tmp/pid1" "$tmp/c.npz" 2>&1)
rc=$?
within "$t0" 15 || fail "closer: check --timeout 2 took $(($(date +%s) - t0)) s"
[ $rc -eq 1 ] || { echo "$out"; fail "closer: exit $rc, expected 1"; }
echo "$out" | grep -q 'CRASH (worker closed its stdin/stdout but kept running' || { echo "$out"; fail "closer: not a CRASH"; }
gone "$tmp/pid1" || fail "closer: the worker survived check"
echo "ok: closing worker is a CRASH in $(($(date +%s) - t0)) s and is gone"

# 2. ... and a campaign on it says so and stops non-zero; so does one whose worker cannot start
t0=$(date +%s)
"$bin" fuzz --kernel "exec-persistent:exec sh $tmp/closer.sh $tmp/pid2" --cases 50 --timeout 2 --out "$tmp/f1" \
  --families normal --no-minimize --no-live > "$tmp/f1.out" 2> "$tmp/f1.err"
rc=$?
within "$t0" 30 || fail "closer campaign took $(($(date +%s) - t0)) s"
[ $rc -ne 0 ] || { cat "$tmp/f1.out" "$tmp/f1.err"; fail "closer campaign: exit 0"; }
grep -q 'before answering a request.*campaign stopped' "$tmp/f1.err" || { cat "$tmp/f1.err"; fail "closer campaign: no reason given"; }
gone "$tmp/pid2" || fail "closer campaign: the worker survived"
"$bin" fuzz --kernel "exec-persistent:$tmp/no-such-worker" --cases 50 --out "$tmp/f2" --families normal \
  --no-minimize --no-live > "$tmp/f2.out" 2> "$tmp/f2.err"
rc=$?
[ $rc -ne 0 ] || { cat "$tmp/f2.out" "$tmp/f2.err"; fail "missing worker: exit 0"; }
grep -q 'status 127.*campaign stopped' "$tmp/f2.err" || { cat "$tmp/f2.err"; fail "missing worker: no reason given"; }
echo "ok: campaigns on a closing and a missing worker stop with exit $rc"

# 3. grandchildren that sleep holding stdout/stderr: gone with their case, $(...) returns at once
cat > "$tmp/forker.sh" <<EOF
sleep 60 &
echo \$! > "\$1"
while read in out; do "$ek" ok "\$in" "\$out" && echo ok || echo "error helper failed"; done
EOF
t0=$(date +%s)
out=$("$bin" check --kernel "exec-persistent:sh $tmp/forker.sh $tmp/pid3" "$tmp/c.npz" 2>&1) || { echo "$out"; fail "forking worker: non-zero exit"; }
within "$t0" 15 || fail "forking worker: \$(check) took $(($(date +%s) - t0)) s"
gone "$tmp/pid3" || fail "forking worker: its grandchild survived"
t0=$(date +%s)
out=$("$bin" check --kernel "exec:sleep 60 & echo \$! > $tmp/pid4; exec $ek ok {in} {out}" "$tmp/c.npz" 2>&1) || { echo "$out"; fail "forking exec: non-zero exit"; }
within "$t0" 15 || fail "forking exec: \$(check) took $(($(date +%s) - t0)) s"
gone "$tmp/pid4" || fail "forking exec: its grandchild survived"
t0=$(date +%s)
out=$(TCONTAIN_PIDFILE=$tmp/pid5 "$bin" check --kernel "$so:fork-run" "$tmp/c.npz" 2>&1) || { echo "$out"; fail "forking plugin: non-zero exit"; }
within "$t0" 15 || fail "forking plugin: \$(check) took $(($(date +%s) - t0)) s"
echo "$out" | grep -q '^PASS' || { echo "$out"; fail "forking plugin: not PASS"; }
gone "$tmp/pid5" || fail "forking plugin: its grandchild survived"
echo "ok: sleeping grandchildren of exec-persistent:, exec: and a plugin are gone"

# ... also when attncheck is killed while the workers are busy or hold grandchildren
cat > "$tmp/busy.sh" <<'EOF'
while read in out; do sleep 100 & echo $! > "$1"; wait; done
EOF
TCONTAIN_PIDFILE=$tmp/pid6 "$bin" check --timeout 60 --kernel "$so:fork-run" --kernel "exec-persistent:sh $tmp/busy.sh $tmp/pid7" \
  "$tmp/c.npz" > /dev/null 2>&1 &
ac=$!
i=0
while [ ! -s "$tmp/pid7" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $ac
wait $ac
gone "$tmp/pid6" || fail "killed attncheck: the plugin worker's grandchild survived"
gone "$tmp/pid7" || fail "killed attncheck: the busy exec worker's child survived"
echo "ok: a killed attncheck takes its busy workers and their children with it"

# 4. supports() that crashes or hangs: the case's verdict, attncheck and its --json intact
"$bin" check --kernel "$so:segv-supports" --json "$tmp/s.json" "$tmp/c.npz" > "$tmp/s.out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/s.out"; fail "segv in supports(): exit $rc, expected 1"; }
grep -q 'CRASH.*killed by SIGSEGV.*in supports()' "$tmp/s.out" || { cat "$tmp/s.out"; fail "segv in supports(): no CRASH"; }
grep -q '"CRASH"' "$tmp/s.json" || { cat "$tmp/s.json"; fail "segv in supports(): --json lacks the CRASH"; }
t0=$(date +%s)
"$bin" check --timeout 2 --kernel "$so:hang-supports" "$tmp/c.npz" "$tmp/c.npz" > "$tmp/h.out" 2>&1
rc=$?
within "$t0" 15 || fail "hang in supports(): took $(($(date +%s) - t0)) s"
[ $rc -eq 1 ] || { cat "$tmp/h.out"; fail "hang in supports(): exit $rc, expected 1"; }
[ "$(grep -c 'TIMEOUT.*time limit of 2 s (killed in supports())' "$tmp/h.out")" -eq 2 ] ||
  { cat "$tmp/h.out"; fail "hang in supports(): not two TIMEOUTs"; }
"$bin" list --kernel "$so:segv-supports" > "$tmp/l.out" 2>&1 || { cat "$tmp/l.out"; fail "list on segv-supports"; }
echo "ok: supports() crashing or hanging is CRASH / TIMEOUT ($(($(date +%s) - t0)) s for two cases)"

# 5. run() printing to stdout: on stderr, never in attncheck's stdout
"$bin" check --kernel "$so:printf-run" "$tmp/c.npz" "$tmp/c.npz" > "$tmp/p.out" 2> "$tmp/p.err" || fail "printf-run: non-zero exit"
grep -q PLUGIN "$tmp/p.out" && { cat "$tmp/p.out"; fail "printf-run: plugin output in attncheck's stdout"; }
[ "$(grep -c '^PASS' "$tmp/p.out")" -eq 2 ] || { cat "$tmp/p.out"; fail "printf-run: not two PASS lines"; }
grep -q 'PLUGIN-STDOUT from run()' "$tmp/p.err" || { cat "$tmp/p.err"; fail "printf-run: output not on stderr"; }
echo "ok: a plugin's stdout goes to stderr"

# 6. the protocol: an error line of 5 KB and 'ok ' with a trailing space
cat > "$tmp/long.sh" <<'EOF'
long=$(head -c 5000 /dev/zero | tr '\0' x)
while read in out; do echo "error $long"; done
EOF
t0=$(date +%s)
"$bin" check --timeout 10 --kernel "exec-persistent:sh $tmp/long.sh" "$tmp/c.npz" "$tmp/c.npz" > "$tmp/e.out" 2>&1
within "$t0" 8 || { cat "$tmp/e.out"; fail "5 KB error line: took $(($(date +%s) - t0)) s"; }
[ "$(grep -c 'worker: xxxxxxxxxx' "$tmp/e.out")" -eq 2 ] || { cat "$tmp/e.out"; fail "5 KB error line: not understood twice"; }
grep -q TIMEOUT "$tmp/e.out" && { cat "$tmp/e.out"; fail "5 KB error line: TIMEOUT"; }
cat > "$tmp/space.sh" <<EOF
while read in out; do "$ek" ok "\$in" "\$out"; printf 'ok \r\n'; done
EOF
"$bin" check --timeout 10 --kernel "exec-persistent:sh $tmp/space.sh" "$tmp/c.npz" > "$tmp/o.out" 2>&1 || { cat "$tmp/o.out"; fail "'ok ': non-zero exit"; }
grep -q '^PASS' "$tmp/o.out" || { cat "$tmp/o.out"; fail "'ok ': not PASS"; }
echo "ok: 5 KB error lines and 'ok ' are understood"

# 7. case directories of a process that no longer exists are removed on the next start
mkdir "$tmp/t"
sh -c 'exit 0' &
dead=$!
wait $dead
mkdir "$tmp/t/attncheck-exec-$dead-AbCdEf" "$tmp/t/attncheck-worker-$dead-AbCdEf" "$tmp/t/attncheck-exec-$$-AbCdEf"
: > "$tmp/t/attncheck-exec-$dead-AbCdEf/in.npz"
: > "$tmp/t/attncheck-worker-$dead-AbCdEf/stderr"
TMPDIR=$tmp/t "$bin" check --kernel "exec:$ek ok {in} {out}" "$tmp/c.npz" > "$tmp/d.out" 2>&1 || { cat "$tmp/d.out"; fail "stale dirs: non-zero exit"; }
[ -d "$tmp/t/attncheck-exec-$dead-AbCdEf" ] && fail "stale exec directory of pid $dead left"
[ -d "$tmp/t/attncheck-worker-$dead-AbCdEf" ] && fail "stale worker directory of pid $dead left"
[ -d "$tmp/t/attncheck-exec-$$-AbCdEf" ] || fail "the directory of a live process was removed"
[ "$(ls "$tmp/t" | wc -l)" -eq 1 ] || { ls "$tmp/t"; fail "check left a directory"; }
echo "ok: stale case directories removed"
exit 0
