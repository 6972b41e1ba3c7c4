#!/bin/sh
# tcmd_ggml_kernels.sh: the reference kernels of the presets ggml-f16 and q8q-f32 (kernels/cpu_ggml.c)
# are listed with their classes, PASS their classes on cases of every shape here (variants included:
# a softcap over huge descales, where Q's rounding moves raw scores by many caps), and FAIL fp32 (the
# class is what makes them correct); the mutants just past the classes' budgets FAIL them with
# err/W a few units: a bf16 V accumulator where f16 was meant (short rows) and Q in 4-bit codes
# where q8_0 was meant.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-ggml-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
wrong() { echo "WRONG: $*"; bad=1; }

"$bin" list > "$tmp/l.txt" || exit 99
grep -q '^  ggml-f16-style  *ggml-f16 ' "$tmp/l.txt" || wrong "list: ggml-f16-style"
grep -q '^  q8q-f32-style  *q8q-f32 ' "$tmp/l.txt" || wrong "list: q8q-f32-style"
"$bin" list --mutants | grep -q '^  mutant-ggml-bf16-acc  *ggml-f16 ' || wrong "list --mutants: mutant-ggml-bf16-acc"
"$bin" list --mutants | grep -q '^  mutant-q8q-as-q4  *q8q-f32 ' || wrong "list --mutants: mutant-q8q-as-q4"

n=0
gen() { "$bin" gen -o "$tmp/c$n.npz" "$@" > /dev/null || { wrong "gen $*"; return 1; }; n=$((n + 1)); }
# ggml-f16-style: f16 K and V with f32 Q and O, or f16 throughout
gen --tq 33 --tk 47 --dk 64 --seed 1 --dtypes f32,f16,f16,f32
gen --tq 64 --tk 300 --dk 128 --seed 2 --mask causal-bottom-right --dtypes f32,f16,f16,f32 --heads 4 --kv-heads 2
gen --tq 9 --tk 3 --dk 32 --seed 3 --sigma 4 --dtypes f32,f16,f16,f32 --softcap 5 --sinks dominant --alibi 1
gen --tq 40 --tk 40 --dk 16 --seed 4 --dtype f16 --mask causal --bias normal --window 7,0
for x in 0 1 2 3; do
  "$bin" check --kernel ggml-f16-style "$tmp/c$x.npz" > "$tmp/o.txt" 2>&1 || { wrong "ggml-f16-style on c$x"; cat "$tmp/o.txt"; }
  "$bin" check --kernel ggml-f16-style --precision fp32 "$tmp/c$x.npz" > "$tmp/o.txt" 2>&1
  [ $? -eq 1 ] || [ $x -ge 2 ] || wrong "ggml-f16-style under fp32 on c$x: exit $? (its Q in f16, its f16 sums are not fp32's)"
done
"$bin" gen -o "$tmp/p.npz" --tq 8 --tk 8 --dk 16 --seed 5 > /dev/null || exit 99
"$bin" check --kernel ggml-f16-style "$tmp/p.npz" > "$tmp/o.txt" 2>&1
grep -q "^SKIP .*reads f16 K and V" "$tmp/o.txt" || wrong "ggml-f16-style on f32 K and V: $(cat "$tmp/o.txt")"
# q8q-f32-style: f32 cases, variants, the softcap over huge descales
gen --tq 33 --tk 47 --dk 64 --seed 6
gen --tq 16 --tk 200 --dk 72 --seed 7 --mask causal --heads 2 --kv-heads 1
gen --tq 5 --tk 83 --dk 128 --seed 8 --heads 4 --kv-heads 2 --window 79,-1 --softcap 5 --alibi 0.0625 \
  --bool-mask empty-middle --sinks dominant --descale huge
gen --tq 12 --tk 30 --dk 40 --seed 9 --dtypes f32,bf16,bf16,f32 --bias normal
# the calibration case that found Q's rounding under a softcap scaled by sech^2 (a false FAIL, err/W 3.5)
if [ -x "$top/bench/calibrate" ] && "$top/bench/calibrate" --write-case f32 4362076462 "$tmp/c$n.npz" --variant > /dev/null; then
  n=$((n + 1))
else
  cp "$tmp/c6.npz" "$tmp/c$n.npz"; n=$((n + 1))
fi
for x in 4 5 6 7 8; do
  "$bin" check --kernel q8q-f32-style "$tmp/c$x.npz" > "$tmp/o.txt" 2>&1 || { wrong "q8q-f32-style on c$x"; cat "$tmp/o.txt"; }
done
"$bin" check --kernel q8q-f32-style --precision fp32 "$tmp/c4.npz" > "$tmp/o.txt" 2>&1
[ $? -eq 1 ] || wrong "q8q-f32-style under fp32: exit $? (Q in q8 blocks is not fp32)"
echo "ok: ggml-f16-style and q8q-f32-style PASS their classes"

# the mutants: FAIL their classes, err/W between 1 and 20
errw() { sed -n 's/^FAIL .* FAIL[A-Z,-]* err\/W=\([0-9.e+-]*\) .*lse_err\/W=\([0-9.e+-]*\).*/\1 \2/p' "$1" |
  awk '{ m = $1 > $2 ? $1 : $2; print m }'; }
fails=0
for tk in 2 3 4; do
  "$bin" gen -o "$tmp/s.npz" --tq 16 --tk $tk --dk 64 --seed 5 --dtype f16 > /dev/null || exit 99
  "$bin" check --kernel mutant-ggml-bf16-acc "$tmp/s.npz" > "$tmp/o.txt" 2>&1
  [ $? -eq 1 ] && fails=$((fails + 1))
  w=$(errw "$tmp/o.txt")
  [ -z "$w" ] || awk -v w="$w" 'BEGIN { exit !(w > 1 && w < 20) }' || wrong "mutant-ggml-bf16-acc tk $tk: err/W $w"
  "$bin" check --kernel ggml-f16-style "$tmp/s.npz" > /dev/null 2>&1 || wrong "ggml-f16-style on tk $tk"
done
[ $fails -eq 3 ] || wrong "mutant-ggml-bf16-acc FAILs $fails of 3 short-row cases"
"$bin" gen -o "$tmp/q.npz" --tq 16 --tk 4 --dk 64 --seed 5 > /dev/null || exit 99
"$bin" check --kernel q8q-f32-style "$tmp/q.npz" > /dev/null 2>&1 || wrong "q8q-f32-style on q.npz"
"$bin" check --kernel mutant-q8q-as-q4 "$tmp/q.npz" > "$tmp/o.txt" 2>&1
[ $? -eq 1 ] || { wrong "mutant-q8q-as-q4: $(head -n 1 "$tmp/o.txt")"; }
w=$(errw "$tmp/o.txt")
awk -v w="${w:-0}" 'BEGIN { exit !(w > 1 && w < 20) }' || wrong "mutant-q8q-as-q4: err/W $w"
echo "ok: the mutants FAIL (mutant-ggml-bf16-acc on $fails of 3 short rows, mutant-q8q-as-q4 err/W $w)"
exit $bad
