#!/bin/sh
# tcli_grad: the backward from the outside (docs/backward.md): gen --grad writes dO and info shows
# it; check --grad passes the correct backward kernels (exit 0), fails a backward mutant (exit 1,
# worst element, reproducer, JSON per tensor), skips a kernel without a backward (exit 2), refuses
# a case without dO and a bad dO pattern (exit 2); explain --grad shows one row's backward; suite runs the backward cases only for kernels
# that declare a backward, and exposes each backward mutant; softcap cases as well (gen --softcap --grad).
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tgrad-XXXXXX") || exit 99
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

expect 0 "gen --grad" -- "$bin" gen -o "$tmp/g.npz" --heads 4 --kv-heads 2 --t 40 --dk 16 --dv 8 --mask causal --grad normal --seed 3
grep -q '^  dO: normal' "$tmp/out" || fail "gen does not report dO"
expect 0 "info" -- "$bin" info "$tmp/g.npz"
grep -q '^  do   \[1,4,40,8\]' "$tmp/out" || fail "info does not show do"
expect 0 "gen without --grad" -- "$bin" gen -o "$tmp/n.npz" --t 8 --dk 8
expect 0 "info without do" -- "$bin" info "$tmp/n.npz"
grep -q '^  do ' "$tmp/out" && fail "info shows a do the case lacks"
expect 2 "gen --grad bad pattern" -- "$bin" gen -o "$tmp/x.npz" --grad cauchy
grep -q "unknown dO pattern 'cauchy'" "$tmp/err" || fail "no message for a bad dO pattern"
test -e "$tmp/x.npz" && fail "a case was written for a bad dO pattern"
expect 0 "gen --grad with a varlen layout" -- "$bin" gen -o "$tmp/x.npz" --seqlens-q 3,4 --grad normal
expect 2 "gen --grad with a paged layout" -- "$bin" gen -o "$tmp/x.npz" --cache-seqlens 5,9 --page-size 4 --grad normal
grep -q 'paged' "$tmp/err" || fail "no message for a paged case's dO"

for k in naive-bwd-f32 flash-bwd-f32; do
  expect 0 "check --grad $k" -- "$bin" check --grad --kernel $k --json "$tmp/$k.json" "$tmp/g.npz"
  grep -q "^PASS $k .* grad dq err/W=.* bad=0/2560 dk err/W=.* bad=0/1280 dv err/W=.* bad=0/640 f32 budget=fp32" "$tmp/out" ||
    fail "check --grad $k: $(cat "$tmp/out")"
  grep -q '"mode": "grad"' "$tmp/$k.json" || fail "$k: no grad entry in the JSON report"
done
expect 1 "check --grad mutant" -- "$bin" check --grad --kernel mutant-bwd-dk-no-scale --json "$tmp/m.json" "$tmp/g.npz"
grep -q '^FAIL mutant-bwd-dk-no-scale .* dk err/W=[0-9.e+]* bad=1280/1280' "$tmp/out" || fail "mutant: $(cat "$tmp/out")"
grep -q '^  dk worst: column [0-9]* element [0-9]*: got' "$tmp/out" || fail "no worst element of dk"
grep -q '^  reproduce: attncheck check --grad --kernel mutant-bwd-dk-no-scale' "$tmp/out" || fail "no reproducer"
grep -q '"dk": {"checked": 1280, "failed": 1280' "$tmp/m.json" || fail "JSON lacks dk's counts: $(cat "$tmp/m.json")"
expect 0 "check --grad without a backward (SKIP, as a forward SKIP)" -- "$bin" check --grad --kernel naive-f32 "$tmp/g.npz"
grep -q '^SKIP naive-f32 .* declares no backward' "$tmp/out" || fail "no SKIP for a kernel without a backward"
expect 2 "check --grad without dO" -- "$bin" check --grad --kernel flash-bwd-f32 "$tmp/n.npz"
grep -q 'has no dO' "$tmp/err" || fail "no message for a case without dO"
# softcap: the correct backward passes, the one without the cap's derivative fails, explain shows f_j
expect 0 "gen --grad --softcap" -- "$bin" gen -o "$tmp/s.npz" --heads 2 --kv-heads 1 --t 24 --dk 16 --dv 8 --mask causal \
  --softcap 1.5 --grad normal --seed 3
for k in naive-bwd-f32 flash-bwd-f32; do
  expect 0 "check --grad $k softcap" -- "$bin" check --grad --kernel $k "$tmp/s.npz"
  grep -q "^PASS $k .* grad dq err/W=.* bad=0/768 " "$tmp/out" || fail "check --grad $k softcap: $(cat "$tmp/out")"
done
expect 1 "check --grad mutant-bwd-softcap-noderiv" -- "$bin" check --grad --kernel mutant-bwd-softcap-noderiv "$tmp/s.npz"
grep -q '^FAIL mutant-bwd-softcap-noderiv .* dq err/W=[0-9.e+]* bad=[1-9]' "$tmp/out" || fail "noderiv: $(cat "$tmp/out")"
expect 0 "explain --grad softcap" -- "$bin" explain --grad --row 3 "$tmp/s.npz"
grep -q 'f_j = 1 - tanh^2' "$tmp/out" || fail "explain --grad softcap: no derivative factor: $(cat "$tmp/out")"

# explain --grad: the stages of one row and the exact dQ_i, dK_j, dV_j of its visible keys
expect 0 "gen small" -- "$bin" gen -o "$tmp/x.npz" --t 4 --dk 2 --dv 3 --mask causal --grad normal
expect 0 "explain --grad" -- "$bin" explain --grad --row 2 "$tmp/x.npz"
grep -q '^  dQ_i: ' "$tmp/out" && grep -q '^  dV_2: ' "$tmp/out" && ! grep -q '^  dK_3: ' "$tmp/out" ||
  fail "explain --grad: $(cat "$tmp/out")"
expect 2 "explain --grad without dO" -- "$bin" explain --grad --row 2 "$tmp/n.npz"
grep -q 'has no dO' "$tmp/err" || fail "explain --grad without dO: no message"

# suite: the backward cases for kernels with a backward only; each backward mutant FAILs there
"$bin" suite --list --kernel naive-f32 | grep -q '^f32-grad-' || fail "suite --list lacks the backward cases"
g=f32-grad-72x80-d32-dv24-causal-bottom-right-h4kv2-do-normal
expect 0 "suite backward case" -- "$bin" suite --kernel flash-bwd-f32 --case $g
grep -q "^PASS flash-bwd-f32 $g grad" "$tmp/out" || fail "suite: $(cat "$tmp/out")"
"$bin" suite --kernel naive-f32 --case $g > "$tmp/out" 2>&1
grep -q "naive-f32 $g" "$tmp/out" && fail "a kernel without a backward ran a backward case"
for m in $("$bin" list --mutants | awk '$1 ~ /^mutant-bwd-/ {print $1}'); do
  cases=""
  for c in $("$bin" suite --list --kernel "$m" | grep -e '-grad-'); do cases="$cases --case $c"; done
  # shellcheck disable=SC2086
  expect 1 "suite backward cases on $m" -- "$bin" suite --kernel "$m" --stop-on-fail -q $cases
  grep -q "^FAIL $m [a-z0-9]*-grad-" "$tmp/out" || fail "$m not exposed: $(cat "$tmp/out")"
done

# a sink whose weight is a binary32 subnormal (e^-98): P_sink may be lost below mu, as a key's
# weight; dσ's budget allows it (a fuzzer finding on naive-bwd-f32, minimized)
sd=${srcdir:-.}/tests/data/grad_sink_subnormal.npz
for k in naive-bwd-f32 flash-bwd-f32; do
  expect 0 "dσ of a subnormal sink weight on $k" -- "$bin" check --grad --kernel $k "$sd"
  grep -q "^PASS $k .* dsink err/W=[0-9.e-]* bad=0/4 " "$tmp/out" || fail "$k on $sd: $(cat "$tmp/out")"
done

# a -FLT_MAX bias sentinel: the budget of a key whose weight lies far below the binary64 range is
# its true tiny bound (it was 0 x inf = NaN, a FAIL of the correct kernels)
expect 0 "gen sentinel bias" -- "$bin" gen -o "$tmp/sb.npz" --heads 2 --t 16 --dk 16 --dv 8 \
  --bias sentinel:-3.4028234663852886e38 --bool-mask empty-middle --grad normal --seed 1
for k in naive-bwd-f32 flash-bwd-f32; do
  expect 0 "sentinel bias on $k" -- "$bin" check --grad --kernel $k "$tmp/sb.npz"
  grep -q "^PASS $k " "$tmp/out" || fail "$k on a sentinel bias: $(cat "$tmp/out")"
done

# e4m3 with the f16 sentinel bias -65504: dV of key 0 lies within e^-65504 of e4m3 midpoints (gen
# --dtype e4m3 --bias sentinel:-65504 --bias-dtype f16 --grad normal --t 2 --dk 4 --seed 13): decided
# by the sign test (explain --grad exited 3, leaving the ties-to-even guess 0xb8 0x36 . 0x2a)
st=${srcdir:-.}/tests/data/grad_sentinel_tie.npz
expect 0 "explain --grad of the sentinel tie" -- "$bin" explain "$st" --grad --row 0
grep -q "^  dV_0: .*\[0xb7\] .*\[0x35\] .*\[0x3d\] .*\[0x29\]$" "$tmp/out" || fail "dV_0 of $st: $(cat "$tmp/out")"

if test $fails -ne 0; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
