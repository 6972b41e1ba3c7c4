#!/bin/sh
# tquant_explain.sh: `attncheck explain` on quantized cases reads every tensor in its own dtype
# (quantized K and V as their codes' exact values, an fp8 Q as its own): the output row it
# derives agrees with the oracle's rounded column, and its LSE with the oracle's.
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tqexplain-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# agree OUT: every output column's exact value within 1e-6 (relative) of the oracle's binary32
# column, and the exact LSE within 1e-6 of its binary64 value's decimal form (%.9g of the row)
agree() {
  awk '/^7\. output/ { on = 1; next } /^8\. LSE/ { on = 0 }
       on && $1 ~ /^[0-9]+$/ && NF >= 4 { n++; d = $2 - $3; s = $3 < 0 ? -$3 : $3; if (s < 1) s = 1;
         if (d < 0) d = -d; if (d > 1e-6 * s) { print "column " $1 ": exact " $2 ", oracle " $3; bad++ } }
       END { if (n == 0) { print "no output column"; exit 1 } exit bad > 0 }' "$1"
}

for spec in "q8_0" "q4_0" "e4m3fn:head" "int4:channel" "nvfp4"; do
  name=$(echo "$spec" | tr ':' '_')
  "$bin" gen --out "$tmp/$name.npz" --dtype f32 --t 8 --dk 32 --heads 2 --kv-format "$spec" --seed 5 >/dev/null 2>"$tmp/err" ||
    { fail "gen --kv-format $spec: $(cat "$tmp/err")"; continue; }
  "$bin" explain "$tmp/$name.npz" --row 3 --head 1 >"$tmp/$name.out" 2>"$tmp/err" || { fail "explain $spec: $(cat "$tmp/err")"; continue; }
  why=$(agree "$tmp/$name.out") || fail "explain $spec: $why"
done
"$bin" gen --out "$tmp/fq.npz" --dtype f32 --t 8 --dk 32 --kv-format q8_0 --q-format e4m3fn --seed 6 >/dev/null 2>"$tmp/err" ||
  fail "gen --q-format e4m3fn: $(cat "$tmp/err")"
"$bin" explain "$tmp/fq.npz" --row 2 >"$tmp/fq.out" 2>"$tmp/err" || fail "explain fp8 Q: $(cat "$tmp/err")"
why=$(agree "$tmp/fq.out") || fail "explain fp8 Q: $why"
[ "$fails" = 0 ] && echo "ok" || exit 1
