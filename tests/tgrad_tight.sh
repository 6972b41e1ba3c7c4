#!/bin/sh
# tgrad_tight.sh: the backward budget is tight (docs/backward.md §6). mutant-bwd-lse-bf16 is
# flash-bwd-bf16 with one step a precision lower (P recomputed from the LSE rounded to bf16, as
# a kernel keeping its LSE in the input dtype): on the suite's bf16 backward cases its largest
# err/W is a small multiple of 1 (1.5 to 50) and it FAILs, while the correct bf16 backward
# kernels stay below 1 on the same cases (their largest err/W is printed).
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tgrad-tight-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cases=""
for c in $("$bin" suite --list --kernel flash-bwd-bf16 | grep -e '^bf16-grad-'); do cases="$cases --case $c"; done
test -n "$cases" || { echo "no bf16 backward case in the suite"; exit 99; }

# largest err/W over the grad lines of a suite run (dq, dk, dv of every case), and their FAIL count
run() {
  k=$1 want=$2
  # shellcheck disable=SC2086
  "$bin" suite --kernel "$k" $cases > "$tmp/$k.out" 2>&1
  rc=$?
  test "$rc" = "$want" || { fail "$k: exit $rc, expected $want"; sed 's/^/  | /' "$tmp/$k.out"; }
  grep ' grad dq err/W=' "$tmp/$k.out" | tr ' ' '\n' | sed -n 's/^err\/W=//p' | sort -g | tail -n 1 > "$tmp/$k.max"
  grep -c '^FAIL .* grad dq ' "$tmp/$k.out" > "$tmp/$k.nfail"
}

run mutant-bwd-lse-bf16 1
m=$(cat "$tmp/mutant-bwd-lse-bf16.max")
nf=$(cat "$tmp/mutant-bwd-lse-bf16.nfail")
test -n "$m" || fail "mutant-bwd-lse-bf16: no grad line"
test "$nf" -ge 1 || fail "mutant-bwd-lse-bf16: no FAIL"
awk -v m="$m" 'BEGIN { exit !(m >= 1.5 && m <= 50) }' || fail "mutant-bwd-lse-bf16: largest err/W $m outside [1.5, 50]"
echo "mutant-bwd-lse-bf16: largest err/W $m, FAIL on $nf case(s)"

for k in naive-bwd-bf16 flash-bwd-bf16; do
  run "$k" 0
  c=$(cat "$tmp/$k.max")
  awk -v c="$c" 'BEGIN { exit !(c != "" && c < 1) }' || fail "$k: largest err/W '$c', expected < 1"
  echo "$k: largest err/W $c on the same cases"
done

if test $fails -ne 0; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
