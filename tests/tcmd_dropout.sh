#!/bin/sh
# tcmd_dropout.sh: dropout from the command line (docs/dropout.md). gen --dropout writes the keep-mask
# (info shows p, its seed and the kept count; bad p or --dropout-seed alone: exit 2); flash-f32/f16/bf16
# PASS forward with their own masks and flash-bwd-f32 backward; the three dropout mutants FAIL (1/(1-p)
# in the row sum, the kept weights renormalized: FAIL; one mask for every head: DROPOUT-MASK) and
# mutant-bwd-dropout-d-unscaled FAILs its backward; a kernel that does not declare dropout is SKIP;
# --json carries the mask's statistics; list shows the feature; the fuzz family finds the head-reuse
# mutant's DROPOUT-MASK, and the finding's case holds the mask and replays it; the numpy exec worker
# PASSes forward and backward (skipped without python3 with numpy).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-dropout-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
# expect EXIT STATUS PATTERN -- command...: the exit code, the first verdict line's status and a pattern in the output
expect() {
  want_rc=$1; want_st=$2; pat=$3; shift 4
  "$@" > "$tmp/o.txt" 2>&1
  rc=$?
  line=$(grep -E '^(PASS|WARN|FAIL|SKIP|ERROR) ' "$tmp/o.txt" | head -n 1)
  if [ $rc -eq "$want_rc" ] && echo "$line" | grep -q "^$want_st " && grep -q -- "$pat" "$tmp/o.txt"; then
    echo "ok: $(echo "$line" | cut -c1-150)"
  else
    echo "WRONG: exit $rc (want $want_rc, $want_st, /$pat/): $*"; cat "$tmp/o.txt"; bad=1
  fi
}
"$bin" gen -o "$tmp/a.npz" --t 64 --dk 16 --batch 2 --heads 4 --mask causal --dropout 0.17 --dropout-seed 5 \
  --grad normal --seed 1 > /dev/null || exit 99
"$bin" gen -o "$tmp/h.npz" --dtype f16 --tq 40 --tk 72 --dk 16 --heads 4 --kv-heads 2 --mask none --dropout 0.9 \
  --softcap 20 --seed 2 > /dev/null || exit 99
"$bin" gen -o "$tmp/b.npz" --dtype bf16 --t 64 --dk 16 --heads 4 --kv-heads 2 --mask none --dropout 0.5 --window 20,4 \
  --seed 3 > /dev/null || exit 99
"$bin" info "$tmp/a.npz" > "$tmp/info.txt" 2>&1
grep -q 'dropout p 0.170000002 (0x1.5c28f6p-3), seed 5, kept [0-9]* of 16640 visible' "$tmp/info.txt" &&
  grep -q 'dropout_mask \[2,4,64,64\]' "$tmp/info.txt" || { echo "WRONG: info"; cat "$tmp/info.txt"; bad=1; }
for v in 1 -0.1 x 0.99999999; do
  "$bin" gen -o "$tmp/z.npz" --dropout "$v" > "$tmp/o.txt" 2>&1
  [ $? -eq 2 ] && [ "$(wc -l < "$tmp/o.txt")" -eq 1 ] || { echo "WRONG: gen --dropout $v"; cat "$tmp/o.txt"; bad=1; }
done
"$bin" gen -o "$tmp/z.npz" --dropout-seed 3 > "$tmp/o.txt" 2>&1
[ $? -eq 2 ] && grep -q 'needs --dropout' "$tmp/o.txt" || { echo "WRONG: --dropout-seed alone"; bad=1; }

expect 0 PASS 'kept=[0-9]*/16640 ' -- "$bin" check --kernel flash-f32 --json "$tmp/j.json" "$tmp/a.npz"
grep -q '"dropout":{"p":0.170000002,"visible":16640,"kept":[0-9]*,"mask_tests":15,"mask_tests_failed":0}' "$tmp/j.json" ||
  { echo "WRONG: json"; cat "$tmp/j.json"; bad=1; }
expect 0 PASS '' -- "$bin" check --kernel flash-f16 "$tmp/h.npz"
expect 0 PASS '' -- "$bin" check --kernel flash-bf16 "$tmp/b.npz"
expect 0 SKIP 'does not declare dropout' -- "$bin" check --kernel naive-f32 "$tmp/a.npz"
expect 1 FAIL 'outside the budget' -- "$bin" check --kernel mutant-dropout-rp-in-sum "$tmp/a.npz"
expect 1 FAIL 'outside the budget' -- "$bin" check --kernel mutant-dropout-renorm "$tmp/a.npz"
expect 1 FAIL 'dropout mask: heads (h, h+1) agree on 8320 of 8320' -- "$bin" check --kernel mutant-dropout-head-reuse \
  "$tmp/a.npz"
grep -q '^FAIL .* DROPOUT-MASK err/W=' "$tmp/o.txt" || { echo "WRONG: the kind DROPOUT-MASK"; bad=1; }
expect 0 PASS 'grad dq' -- "$bin" check --grad --kernel flash-bwd-f32 "$tmp/a.npz"
expect 1 FAIL 'grad dq' -- "$bin" check --grad --kernel mutant-bwd-dropout-d-unscaled "$tmp/a.npz"
"$bin" list > "$tmp/list.txt" 2>&1
grep -A1 '^  flash-f32 ' "$tmp/list.txt" | grep -q 'features .*dropout' || { echo "WRONG: list"; bad=1; }

# the fuzz family: the finding holds the kernel's mask, and replays
"$bin" fuzz --kernel mutant-dropout-head-reuse --families dropout --cases 12 --out "$tmp/fz" > "$tmp/fz.txt" 2>&1
f=$(ls "$tmp"/fz/findings/*DROPOUT-MASK*/case.npz 2>/dev/null | head -n 1)
if [ -z "$f" ]; then
  echo "WRONG: no DROPOUT-MASK finding"; cat "$tmp/fz.txt"; bad=1
else
  "$bin" info "$f" | grep -q 'dropout_mask' || { echo "WRONG: the finding holds no mask"; bad=1; }
  sh "$(dirname "$f")/repro.sh" > "$tmp/o.txt" 2>&1
  [ $? -eq 1 ] && grep -q 'DROPOUT-MASK reproduced' "$tmp/o.txt" || { echo "WRONG: repro.sh"; cat "$tmp/o.txt"; bad=1; }
fi

py=${PYTHON_NUMPY:-none}
if [ "$py" != none ] && [ -n "$py" ]; then
  w="exec-persistent:$py $src/python/attncheck/worker/numpy_sdpa.py --serve"
  expect 0 PASS 'kept=' -- "$bin" check --kernel "$w" "$tmp/a.npz" "$tmp/b.npz"
  expect 0 PASS 'grad dq' -- "$bin" check --grad --kernel "$w" "$tmp/a.npz"
else
  echo "no python3 with numpy: the exec worker's dropout not tried"
fi
exit $bad
