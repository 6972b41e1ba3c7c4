#!/bin/sh
# tcalibrate_grad.sh: bench/calibrate --grad (docs/backward.md §5) on a few cases: every correct
# backward kernel gets a row with no FAIL, SUSPECT or ERR, the per-dtype lines count cases,
# skipped and unresolved elements; --write-case writes a case with dO (and its variant) that
# `check --grad` passes on the same kernel; bad options exit 2.
top=${abs_top_builddir:-.}
cal=$top/bench/calibrate
bin=${ATTNCHECK_BIN:-$top/attncheck}
if ! test -x "$cal" || ! test -x "$bin"; then echo "bench/calibrate or attncheck not found under $top"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tcalgrad-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$cal" --grad --seed 3 --cases 6 > "$tmp/out" 2>&1
rc=$?
test $rc = 0 || { fail "calibrate --grad: exit $rc"; cat "$tmp/out"; }
for k in naive-bwd-f32 flash-bwd-f32 naive-bwd-bf16 flash-bwd-bf16; do
  # kernel class cases err/W(3) err/E(3) kcrit(2) excess FAIL SUSP ERR skip var
  awk -v k="$k" '$1 == k && $3 + $16 >= 9 && $4 < 1 && $13 == 0 && $14 == 0 && $15 == 0 { ok = 1 } END { exit !ok }' "$tmp/out" ||
    fail "no clean row for $k: $(grep "^$k " "$tmp/out")"
done
grep -q '^# f32: 9 cases (3 with variants), skipped: [0-9]* refused by the exact backward.*unresolved$' "$tmp/out" ||
  fail "no f32 count line: $(grep '^# f32' "$tmp/out")"
grep -q '^# bf16: 9 cases' "$tmp/out" || fail "no bf16 count line"

# a case of the run written back, with its dO and its variant: the correct kernel passes it
seed=$(awk '/worst cases/ { w = 1; next } w && $2 == "flash-bwd-bf16" { for (i = 1; i <= NF; i++) if ($i == "seed") { print $(i + 1); exit } }' "$tmp/out")
test -n "$seed" || fail "no seed in the worst-case lines"
"$cal" --grad --write-case bf16 "$seed" "$tmp/c.npz" > "$tmp/w" 2>&1 || fail "--write-case: $(cat "$tmp/w")"
grep -q ' dO [a-z-]*' "$tmp/w" || fail "--write-case does not name the dO pattern: $(cat "$tmp/w")"
"$bin" check --grad --kernel flash-bwd-bf16 "$tmp/c.npz" > "$tmp/chk" 2>&1 || fail "check --grad on the written case: $(cat "$tmp/chk")"
"$cal" --grad --write-case f32 4 "$tmp/v.npz" --variant > "$tmp/w" 2>&1 || fail "--write-case --variant: $(cat "$tmp/w")"
grep -q ' +' "$tmp/w" || fail "the variant case names no variant: $(cat "$tmp/w")"
"$bin" info "$tmp/v.npz" | grep -q '^  do ' || fail "the written case has no dO"

"$cal" --grad --dtypes f32,nosuch > "$tmp/out" 2>&1
test $? = 2 || fail "--dtypes with an unknown name: expected exit 2"
"$cal" --grad --write-case f32 x "$tmp/x.npz" > "$tmp/out" 2>&1
test $? = 2 || fail "--write-case with a bad seed: expected exit 2"
test -e "$tmp/x.npz" && fail "a case was written for a bad seed"

if test $fails -ne 0; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
