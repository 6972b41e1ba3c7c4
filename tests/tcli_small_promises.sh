#!/bin/sh
# tcli_small_promises.sh: small promises of the README kept. A stats.tmp.PID.N (and any other
# temporary) that a killed run left is removed by the next run of that directory; `check` over
# ATTNCHECK_MEM_CAP is bad input (one line, exit 2) as in `oracle`; an exec-persistent worker
# that closes its stdout but keeps running is a TIMEOUT after --timeout, as the README says;
# `compare` names the whole expected and received shape of a wrong o or lse.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
tmp=$(mktemp -d /tmp/attncheck-tpromise-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. temporaries of a dead process, ac_write_file_atomic's NAME.tmp.PID.N included
"$bin" fuzz --kernel naive-f32 --cases 2 --families normal --out "$tmp/c" --no-minimize --no-live --quiet || fail "campaign: exit $?"
sh -c 'exit 0' &
wait $!
dead=$!
for f in stats.tmp.$dead.3 campaign.json.tmp.$dead.0 findings/x.tmp.$dead corpus/y.npz.tmp.$dead.12; do : > "$tmp/c/$f"; done
: > "$tmp/c/stats.tmp.$$.1"   # a live process's: kept
"$bin" fuzz --resume --out "$tmp/c" --cases 3 --no-live --quiet || fail "resume: exit $?"
left=$(cd "$tmp/c" && ls stats.tmp.* campaign.json.tmp.* findings/*.tmp.* corpus/*.tmp.* 2> /dev/null)
[ "$left" = "stats.tmp.$$.1" ] || fail "temporaries left after the next run: $left"
echo "ok: the temporaries of a killed run (stats.tmp.PID.N too) are removed by the next run"

# 2. check over the memory cap: exit 2, one line, like oracle
"$bin" gen -o "$tmp/c.npz" --dtype f32 --t 64 --dk 16 --seed 1 > /dev/null || fail "gen"
for cmd in oracle check; do
  set -- "$tmp/c.npz"
  [ $cmd = check ] && set -- --kernel naive-f32 "$tmp/c.npz"
  ATTNCHECK_MEM_CAP=100k "$bin" $cmd "$@" > "$tmp/m.out" 2> "$tmp/m.err"
  rc=$?
  [ $rc -eq 2 ] || { cat "$tmp/m.out" "$tmp/m.err"; fail "$cmd over the memory cap: exit $rc, expected 2"; }
  [ "$(wc -l < "$tmp/m.err")" -eq 1 ] && grep -q 'more than the memory cap of 102400 bytes' "$tmp/m.err" ||
    { cat "$tmp/m.err"; fail "$cmd: not one line naming the cap"; }
  [ ! -s "$tmp/m.out" ] || { cat "$tmp/m.out"; fail "$cmd printed a verdict over the memory cap"; }
done
ATTNCHECK_MEM_CAP=100k "$bin" check --kernel naive-f32 --rows 0,63 "$tmp/c.npz" > /dev/null || fail "check --rows under the cap"
echo "ok: check over ATTNCHECK_MEM_CAP exits 2 with one line, as oracle does; --rows brings it under"

# 3. a worker that closes its stdout and keeps running: TIMEOUT after --timeout (README)
cat > "$tmp/closes.sh" <<'EOF'
#!/bin/sh
exec 1>&-
while read a b; do :; done
EOF
chmod +x "$tmp/closes.sh"
t0=$(date +%s)
"$bin" check --kernel "exec-persistent:$tmp/closes.sh" --timeout 1 example:tiny3 > "$tmp/w.txt" 2>&1
rc=$?
t1=$(date +%s)
[ $rc -eq 1 ] && grep -q '^FAIL .* TIMEOUT (worker gave no answer within the time limit of 1 s' "$tmp/w.txt" ||
  { cat "$tmp/w.txt"; fail "a worker that closes its stdout: exit $rc, not a TIMEOUT"; }
[ $((t1 - t0)) -lt 10 ] || fail "the worker that closes its stdout took $((t1 - t0)) s"
grep -q 'one that closes$' "$src/README.md" && grep -q '^its stdout (or stdin) but keeps running is a TIMEOUT after `--timeout`' "$src/README.md" ||
  fail "README does not say that a worker closing its stdout is a TIMEOUT"
echo "ok: a worker that closes its stdout is a TIMEOUT after --timeout, as the README says"

# 4. compare names the whole shapes
helper=$top/tests/tharness_execkernel
"$bin" gen -o "$tmp/s.npz" --dtype f32 --tq 2 --tk 3 --dk 2 --seed 2 > /dev/null || fail "gen"
"$helper" badshape "$tmp/s.npz" "$tmp/bad-o.npz" || fail "helper badshape"
"$helper" badlse "$tmp/s.npz" "$tmp/bad-lse.npz" || fail "helper badlse"
"$bin" compare "$tmp/s.npz" "$tmp/bad-o.npz" > /dev/null 2> "$tmp/o.err"
[ $? -eq 2 ] && grep -q 'o must have shape \[1,1,2,2\], got shape \[1,1,1,4\]' "$tmp/o.err" || { cat "$tmp/o.err"; fail "compare: o's shapes"; }
"$bin" compare "$tmp/s.npz" "$tmp/bad-lse.npz" > /dev/null 2> "$tmp/l.err"
[ $? -eq 2 ] && grep -q "lse must be float32 ('<f4') of shape \[1,1,2\], got '<f4' of shape \[1,2\]" "$tmp/l.err" ||
  { cat "$tmp/l.err"; fail "compare: lse's shapes"; }
echo "ok: compare names the expected and received shapes of o and lse"
exit 0
