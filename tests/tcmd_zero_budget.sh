#!/bin/sh
# tcmd_zero_budget.sh: no value a kernel computes with rounding gets a zero budget
# (docs/numerics.md §7.16). A correct FlashAttention-3-style kernel whose LSE is
# (m log2 e + log2 l) ln 2 in binary32 (test-fa3-log2-lse) is a few ulps off on a row that sees
# only its sink, whose exact LSE is one logit: it PASSes there (it FAILed with lse_err/W=inf, W 0)
# and on every small shape of every mask with sinks, one visible key, -inf and sentinel biases,
# windows and boolean masks, as do naive-f32 and flash-f32; the sink-only row's W stays a rounding
# term (at most 16 ulps of its LSE), and a defect of the sink's LSE still FAILs.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-zb-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
# the issue's case: tq 2, tk 1, causal bottom-right, sinks: row 0 of every head sees only its sink
"$bin" gen -o "$tmp/sink.npz" --tq 2 --tk 1 --dk 4 --heads 4 --mask causal-bottom-right --sinks normal --seed 2 >/dev/null || exit 99
"$bin" check --kernel test-fa3-log2-lse "$tmp/sink.npz" > "$tmp/o.txt" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -q '(W 0)' "$tmp/o.txt"; then
  echo "WRONG: test-fa3-log2-lse on a sink-only row: exit $rc"; cat "$tmp/o.txt"; bad=1
else
  echo "ok: $(head -n 1 "$tmp/o.txt" | cut -c1-160)"
fi
# every row but the last of each head sees only its sink: the worst LSE is a sink-only row's
"$bin" gen -o "$tmp/only.npz" --tq 4 --tk 1 --dk 4 --heads 4 --mask causal-bottom-right --sinks normal --seed 2 >/dev/null || exit 99
"$bin" check --kernel test-fa3-log2-lse --json "$tmp/j.json" "$tmp/only.npz" > "$tmp/o.txt" 2>&1 || { cat "$tmp/o.txt"; bad=1; }
# W / ulp(LSE) of the worst LSE (binary32 ulp of |exact|)
w_ulps=$(tr -d ' \n' < "$tmp/j.json" | sed -n 's/.*"lse_worst":{\([^}]*\)}.*/\1/p' |
  awk -F, '{ for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/"/, "", kv[1]); v[kv[1]] = kv[2] } }
    END { x = v["exact"] < 0 ? -v["exact"] : v["exact"]; e = 0; while (x >= 2) { x /= 2; e++ } while (x < 1) { x *= 2; e-- }
          u = 2 ^ (e - 23); printf "%.2f", v["W"] / u }')
if [ -z "$w_ulps" ] || awk -v w="$w_ulps" 'BEGIN { exit !(w <= 0 || w > 16) }'; then
  echo "WRONG: the sink-only LSE's W is $w_ulps ulps (want a rounding term in (0, 16])"; cat "$tmp/j.json"; bad=1
else
  echo "ok: the sink-only LSE's W is $w_ulps ulps"
fi
# a defect there still fails: the sink left out of the LSE
"$bin" check --kernel mutant-sink-lse "$tmp/only.npz" > "$tmp/o.txt" 2>&1
[ $? -eq 1 ] && grep -q '^FAIL' "$tmp/o.txt" && echo "ok: mutant-sink-lse FAILs" || { echo "WRONG: mutant-sink-lse"; cat "$tmp/o.txt"; bad=1; }
# the sweep: small rows of every kind, three correct kernels of different formulas
n=0
for mask in none causal causal-bottom-right; do
  for shp in "1 1" "2 1" "3 2"; do
    set -- $shp
    for feat in "--sinks normal" "--sinks dominant" "--alibi 1 --sinks vanishing" "--bias neginf-rows --sinks normal" \
                "--window 0,0 --sinks normal" "--bool-mask sparse --sinks normal" "--bias sentinel:-1e30"; do
      # shellcheck disable=SC2086
      "$bin" gen -o "$tmp/c.npz" --tq "$1" --tk "$2" --dk 4 --heads 2 --mask $mask $feat --seed 3 >/dev/null 2>&1 || continue
      for k in test-fa3-log2-lse naive-f32 flash-f32; do
        n=$((n + 1))
        "$bin" check --kernel $k "$tmp/c.npz" > "$tmp/o.txt" 2>&1
        rc=$?
        if [ $rc -ne 0 ] || grep -q '(W 0)\|(E 0)' "$tmp/o.txt"; then
          echo "WRONG: $k --tq $1 --tk $2 --mask $mask $feat: exit $rc"; cat "$tmp/o.txt"; bad=1
        fi
      done
    done
  done
done
echo "ok: $n checks of small rows"
exit $bad
