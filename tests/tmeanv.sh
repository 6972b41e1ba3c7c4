#!/bin/sh
# tmeanv.sh: empty rows as the mean of V (--empty-rows mean-v, an exec worker's "empty_rows":
# "mean-v"; docs/numerics.md §5). numpy_sdpa.py --empty-rows mean-v writes, for a row with no
# visible key, the mean of V over every key of the case (JAX's and MLX's convention): judged by its
# declaration, or by the option, it PASSes; the same worker judged under the zero convention, and
# the zero-writing worker judged under mean-v, FAIL naming the empty rows. bf16 with GQA and a
# bottom-right causal mask (tq > tk: the first rows see no key; the mean of 3 keys is a rational
# that binary64 does not hold) and f32 under a sliding window of one key back (bottom-right, tq > tk). SKIP (77) without a python3 with numpy.
set -u
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
src=$(cd "${srcdir:-.}" && pwd) || exit 99
A=$top/attncheck
W=$src/python/attncheck/worker/numpy_sdpa.py
py=
for c in "${PYTHON_NUMPY:-}" python3 /usr/bin/python3; do
  [ -n "$c" ] && [ "$c" != none ] || continue
  if "$c" -c 'import numpy' > /dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with numpy"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-tmeanv-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off TMPDIR="$tmp"
fail() { echo "FAIL: $*"; exit 1; }
"$A" gen -o "$tmp/b.npz" --dtype bf16 --mask causal-bottom-right --tq 7 --tk 3 --heads 4 --kv-heads 2 --dk 16 --dv 8 \
  --seed 5 > /dev/null || fail "gen bf16"
"$A" gen -o "$tmp/w.npz" --dtype f32 --tq 9 --tk 5 --dk 8 --window 1,0 --seed 2 > /dev/null || fail "gen f32"
mv_decl="exec-persistent:$py $W --empty-rows mean-v"
zero="exec-persistent:$py $W"
for c in b w; do
  out=$("$A" check --kernel "$mv_decl" "$tmp/$c.npz" 2>&1) || fail "$c: the declared mean-v worker: $out"
  echo "$out" | head -1
  "$A" check --kernel "exec:$py $W --empty-rows mean-v {in} {out}" --empty-rows mean-v "$tmp/$c.npz" > /dev/null 2>&1 ||
    fail "$c: --empty-rows mean-v on the one-shot mean-v worker"
  out=$("$A" check --kernel "$mv_decl" --empty-rows zero "$tmp/$c.npz" 2>&1) && fail "$c: mean-v under zero passed"
  echo "$out" | grep -q 'empty rows: [1-9][0-9]*; output written as zero 0, NaN 0, other values [1-9]' ||
    fail "$c: the report does not count the mean-v rows: $out"
  out=$("$A" check --kernel "$zero" --empty-rows mean-v "$tmp/$c.npz" 2>&1) && fail "$c: zeros under mean-v passed"
  echo "$out" | grep -q 'elements outside the budget' || fail "$c: zeros under mean-v: $out"
done
# the declaration as list shows it
"$A" list --kernel "$mv_decl" 2>&1 | grep -q 'empty rows mean-v' || fail "list does not show the declaration"
echo "mean-v: declared and optional PASS, zero against mean-v FAIL both ways"
exit 0
