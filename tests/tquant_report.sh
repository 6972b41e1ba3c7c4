#!/bin/sh
# tquant_report.sh: attncheck quant-report (docs/quantized.md "What a cache format costs"): on a case
# and on a sweep it prints every format's error quantiles and exits 0; 8-bit formats err less than
# 4-bit ones on the same values; --json and --html are written (the page with its two plots); a
# head dim no block divides leaves the block formats without a number; a quantized case, an unknown
# format and nothing to report on are refused with one line, exit 2.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tqr-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$bin" gen -o "$tmp/c.npz" --tq 40 --tk 96 --dk 64 --heads 2 --mask causal --seed 4 > /dev/null || exit 99
"$bin" quant-report "$tmp/c.npz" --sweep 2 --json "$tmp/r.json" --html "$tmp/r.html" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail "quant-report: exit $rc ($(cat "$tmp/err"))"
grep -q "^quant-report: 3 case(s)" "$tmp/out" || fail "no summary: $(head -n 1 "$tmp/out")"
for f in q8_0 q5_1 q5_0 q4_1 q4_0 iq4_nl e4m3fn e4m3fn:token e4m3fnuz e5m2 int8 int8:channel int4 int4:channel nvfp4 mxfp4; do
  grep -q "^$f " "$tmp/out" || fail "no row for $f"
done
p99() { awk -v f="$1" '$1 == f {print $4}' "$tmp/out"; }
awk -v a="$(p99 q8_0)" -v b="$(p99 q4_0)" 'BEGIN { exit !(a > 0 && a < b) }' || fail "q8_0 p99 $(p99 q8_0) not below q4_0's $(p99 q4_0)"
awk -v a="$(p99 int8)" -v b="$(p99 int4)" 'BEGIN { exit !(a > 0 && a < b) }' || fail "int8 p99 not below int4's"
grep -q '"format":"e4m3fn:token"' "$tmp/r.json" || fail "json lacks e4m3fn:token"
grep -q '"cases":3' "$tmp/r.json" || fail "json lacks the case count"
[ "$(grep -c '<svg' "$tmp/r.html")" -eq 2 ] || fail "the page has not two plots"
"$bin" gen -o "$tmp/d59.npz" --t 20 --dk 59 --seed 1 > /dev/null || exit 99
"$bin" quant-report "$tmp/d59.npz" --formats q4_0,int8 > "$tmp/out" 2>&1 || fail "dk 59: exit $?"
grep -q "^q4_0 .*no case its block divides" "$tmp/out" || fail "dk 59: $(cat "$tmp/out")"
grep -q "^int8 " "$tmp/out" || fail "dk 59: no int8 row"
"$bin" gen -o "$tmp/q.npz" --t 8 --dk 32 --kv-format q8_0 > /dev/null || exit 99
"$bin" quant-report "$tmp/q.npz" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "quantized tensors" "$tmp/err" || fail "quantized input: $(cat "$tmp/err")"
"$bin" quant-report --formats q3_k --sweep 1 > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "unknown quantized format 'q3_k'" "$tmp/err" || fail "unknown format: $(cat "$tmp/err")"
"$bin" quant-report > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] || fail "nothing to report on is not a usage error"
[ "$fails" -eq 0 ] || exit 1
echo "PASS: quant-report"
