#!/bin/sh
# tcli_grad_varlen: the backward of varlen batches from the outside (docs/backward.md §7): gen
# --grad writes a packed dO and info shows it; check --grad passes flash-varlen-f32 and -bf16
# (exit 0), fails mutant-varlen-bwd-cu-k naming the sequence, head and query or key of the worst
# packed row or column (text and JSON), skips a backward without varlen (exit 2); explain --grad
# --seq S shows a sequence's row; the suite's varlen backward cases pass the correct kernels and
# fail the mutant; paged cases get no backward.
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tgradvl-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
  code=$1; what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if test "$rc" != "$code"; then
    fail "$what: exit $rc, expected $code ($*)"; sed 's/^/  | /' "$tmp/out" "$tmp/err"
  fi
}

lens="--seqlens-q 3,0,5,1,17 --seqlens-k 4,2,0,7,20 --heads 4 --kv-heads 2 --dk 16 --grad normal --seed 5"
expect 0 "gen --grad varlen f32" -- "$bin" gen -o "$tmp/v.npz" $lens --mask causal-br
grep -q '^  dO: normal' "$tmp/out" || fail "gen does not report dO"
expect 0 "info" -- "$bin" info "$tmp/v.npz"
grep -q '^  do   \[1,4,26,16\]' "$tmp/out" || fail "info does not show the packed do: $(cat "$tmp/out")"
expect 0 "gen --grad varlen bf16" -- "$bin" gen -o "$tmp/b.npz" $lens --dtype bf16 --mask none --window 4,0 --sinks normal \
  --alibi 1 --alibi-per-batch

expect 0 "check --grad flash-varlen-f32" -- "$bin" check --grad --kernel flash-varlen-f32 "$tmp/v.npz"
grep -q '^PASS flash-varlen-f32 .* grad dq err/W=.* bad=0/1664 dk err/W=.* bad=0/1056 dv err/W=.* bad=0/1056 f32' "$tmp/out" ||
  fail "flash-varlen-f32: $(cat "$tmp/out")"
expect 0 "check --grad flash-varlen-bf16" -- "$bin" check --grad --kernel flash-varlen-bf16 "$tmp/b.npz"
grep -q '^PASS flash-varlen-bf16 .* grad .* bf16 budget=bf16-fa2' "$tmp/out" || fail "flash-varlen-bf16: $(cat "$tmp/out")"
expect 1 "check --grad varlen mutant" -- "$bin" check --grad --kernel mutant-varlen-bwd-cu-k --json "$tmp/m.json" "$tmp/v.npz"
grep -q '^  dq worst: row [0-9]* (sequence [0-9]*, head [0-9]*, query [0-9]*) element' "$tmp/out" ||
  fail "mutant: no sequence of the worst row: $(cat "$tmp/out")"
grep -q '^  dk worst: column [0-9]* (sequence [0-9]*, kv head [0-9]*, key [0-9]*) element' "$tmp/out" ||
  fail "mutant: no sequence of the worst column"
grep -q '"sequence": [0-9]*, "head": [0-9]*, "query": [0-9]*' "$tmp/m.json" || fail "JSON lacks the worst row's sequence"
expect 0 "check --grad without varlen in backward_caps" -- "$bin" check --grad --kernel flash-bwd-f32 "$tmp/v.npz"
grep -q "^SKIP flash-bwd-f32 .*backward does not take varlen" "$tmp/out" || fail "no SKIP: $(cat "$tmp/out")"

expect 0 "explain --grad --seq" -- "$bin" explain --grad --seq 4 --row 3 --head 1 "$tmp/v.npz"
grep -q '^sequence 4 of 5: 17 queries' "$tmp/out" && grep -q '^  dQ_i: ' "$tmp/out" || fail "explain: $(cat "$tmp/out")"
expect 2 "explain --grad without --seq" -- "$bin" explain --grad --row 0 "$tmp/v.npz"

for c in $("$bin" suite --list --kernel flash-varlen-f32 | grep -e '-grad-varlen-'); do cases="${cases:-} --case $c"; done
test -n "${cases:-}" || fail "suite --list has no varlen backward cases"
for k in flash-varlen-f32 flash-varlen-bf16; do
  # shellcheck disable=SC2086
  expect 0 "suite varlen backward cases on $k" -- "$bin" suite --kernel $k $cases
  test "$(grep -c "^PASS $k [a-z0-9]*-grad-varlen-" "$tmp/out")" -eq 2 || fail "$k: $(cat "$tmp/out")"
done
# shellcheck disable=SC2086
expect 1 "suite varlen backward cases on the mutant" -- "$bin" suite --kernel mutant-varlen-bwd-cu-k -q $cases
grep -q "^FAIL mutant-varlen-bwd-cu-k f32-grad-varlen-" "$tmp/out" || fail "mutant not exposed: $(cat "$tmp/out")"

# paged caches: no dO, no backward
expect 2 "gen --grad paged" -- "$bin" gen -o "$tmp/p.npz" --cache-seqlens 5,9 --page-size 4 --grad normal
test -e "$tmp/p.npz" && fail "a paged case with dO was written"

if test $fails -ne 0; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
