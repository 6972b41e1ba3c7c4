#!/bin/sh
# tcontain_escape.sh: nothing a kernel starts outlives its case, not even a process that leaves
# the kernel's session and process group (setsid) and forks again, so that its child is an
# orphan: a plugin (in its persistent worker, and hanging until the time limit), a one-shot
# exec: command and an exec-persistent: worker do that on every case. Each case fails when the
# escaped process of the case before is still alive, and once attncheck has ended no process
# carrying the run's marker in its environment is left (/proc/PID/environ).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so=$top/tests/.libs/tplugin_misbehave.so
ek=$top/tests/tharness_execkernel
[ -f "$so" ] || { echo "test plugin not built: $so"; exit 99; }
[ -x "$ek" ] || { echo "exec helper not built: $ek"; exit 99; }
[ -r /proc/self/environ ] || { echo "no /proc: SKIP"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-tescape-XXXXXX) || exit 99
mark="tcontain-escape-$$-$(date +%s)"
# the processes whose environment holds the marker (attncheck passes its environment on)
marked() { grep -lsa "TCONTAIN_MARK=$mark" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||' | tr '\n' ' '; }
trap 'for p in $(marked); do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
# none_left WHAT: within 3 s no marked process is left (killed zombies have no environment)
none_left() {
  i=0
  while [ $i -lt 30 ]; do
    s=$(marked)
    [ -z "$s" ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  for p in $s; do
    printf '  left: pid %s ppid %s: %s\n' "$p" "$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)" \
      "$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)"
    kill -9 "$p" 2>/dev/null
  done
  fail "$1: escaped processes outlived attncheck"
}
# run ARGS: attncheck with the marker; its output in $out (through a file: an escaped process
# holding a pipe would keep $(...) waiting), its exit status in $rc
run() {
  TCONTAIN_MARK=$mark TCONTAIN_ESCAPE_PIDFILE=$tmp/pid "$bin" "$@" > "$tmp/out" 2>&1
  rc=$?
  out=$(cat "$tmp/out")
}

"$bin" gen --out "$tmp/a.npz" --dtype f32 --mask none --t 8 --dk 8 --seed 3 > /dev/null || fail "gen"
"$bin" gen --out "$tmp/b.npz" --dtype f32 --mask none --t 9 --dk 4 --seed 4 > /dev/null || fail "gen"

# 1. a plugin, three cases in its persistent worker: each escape is gone before the next case
rm -f "$tmp/pid"
run check --kernel "$so:setsid-run" "$tmp/a.npz" "$tmp/b.npz" "$tmp/a.npz"
[ "$(echo "$out" | grep -c '^PASS')" -eq 3 ] && [ $rc -eq 0 ] || { echo "$out"; fail "plugin: not 3 PASS (exit $rc)"; }
none_left "plugin"
echo "ok: a plugin's escaped grandchildren end with their cases"

# 2. ... also when the plugin hangs after its escape and is killed at the time limit
rm -f "$tmp/pid"
run check --timeout 1 --kernel "$so:setsid-hang" "$tmp/a.npz" "$tmp/b.npz"
[ "$(echo "$out" | grep -c '^FAIL.*TIMEOUT')" -eq 2 ] || { echo "$out"; fail "hanging plugin: not 2 TIMEOUTs"; }
echo "$out" | grep -q 'still running' && { echo "$out"; fail "hanging plugin: an escape outlived its case"; }
none_left "hanging plugin"
echo "ok: so do those of a plugin killed at the time limit"

# 3. a one-shot exec: command
rm -f "$tmp/pid"
run check --kernel "exec:$ek escape {in} {out}" "$tmp/a.npz" "$tmp/b.npz" "$tmp/a.npz"
[ "$(echo "$out" | grep -c '^PASS')" -eq 3 ] && [ $rc -eq 0 ] || { echo "$out"; fail "exec: not 3 PASS (exit $rc)"; }
none_left "exec:"
echo "ok: a one-shot command's escaped grandchildren end with their cases"

# 4. an exec-persistent: worker whose helper escapes on every request; the worker lives on
cat > "$tmp/worker.sh" <<EOF
while read in out; do "$ek" escape "\$in" "\$out" && echo ok || echo "error helper failed"; done
EOF
rm -f "$tmp/pid"
run check --kernel "exec-persistent:sh $tmp/worker.sh" "$tmp/a.npz" "$tmp/b.npz" "$tmp/a.npz"
[ "$(echo "$out" | grep -c '^PASS')" -eq 3 ] && [ $rc -eq 0 ] || { echo "$out"; fail "exec-persistent: not 3 PASS (exit $rc)"; }
none_left "exec-persistent:"
echo "ok: an exec worker's escaped grandchildren end with their cases"

# 5. campaigns on the plugin and on the exec worker
rm -f "$tmp/pid"
run fuzz --kernel "$so:setsid-run" --cases 8 --families normal --dtypes f32 --out "$tmp/f1" --no-minimize --no-live
grep -q 'still running' "$tmp/f1/log.jsonl" "$tmp/out" && { echo "$out"; fail "campaign on the plugin: an escape outlived its case"; }
none_left "campaign on the plugin"
run fuzz --kernel "exec-persistent:sh $tmp/worker.sh" --cases 6 --families normal --dtypes f32 --out "$tmp/f2" \
  --no-minimize --no-live
none_left "campaign on the exec worker"
echo "ok: campaigns leave no escaped process"
exit 0
