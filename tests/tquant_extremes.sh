#!/bin/sh
# tquant_extremes.sh: every value a quantized format can hold goes through the oracle, check and a
# campaign without a crash or an error of the tool. tests/quant/extremes writes a case per format,
# granularity and kind of extreme scale (the smallest subnormal of every scale type, values down to
# 2^-159 far below binary32's range; the largest finite; 0, inf and NaN scales, mxfp4's exponents 0
# and 255, fp8 NaN codes; tiny groups beside ordinary ones): `oracle` exits 0 on each and `check`
# with the format's reference kernel exits 0 (PASS, or OUT-OF-DOMAIN and MASKED-LEAK, which warn).
# gen's varlen batches and shuffled paged caches of every format, from values of binary32's
# subnormal range, PASS. The issue's reproducer (fp8 codes times a subnormal scale, a SIGSEGV of the
# oracle once) exits 0, and campaigns of the families that draw subnormal values and extreme blocks
# (tiny, quant_blocks, quant_nonfinite) on each reference kernel end with 0 errors.
set -u
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
top=${abs_top_builddir:-.}
ext=$top/tests/quant/extremes
[ -x "$bin" ] && [ -x "$ext" ] || { echo "attncheck or tests/quant/extremes not built"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tqext-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# the reference kernel of a format (docs/quantized.md "Reference kernels")
ref() { "$ext" --ref "$1"; }
# oracle and check of case file $1 (named FMT-...): both exit 0
judge() {
  "$bin" oracle -q "$1" > "$tmp/o.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { fail "oracle $(basename "$1"): exit $rc: $(head -c 300 "$tmp/o.txt")"; return; }
  k=$(ref "$(basename "$1")")
  "$bin" check --kernel "$k" "$1" > "$tmp/c.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || fail "check --kernel $k $(basename "$1"): exit $rc: $(head -n 2 "$tmp/c.txt" | cut -c1-300)"
}

mkdir "$tmp/x" "$tmp/l" || exit 99
"$ext" "$tmp/x" > "$tmp/ext.txt" 2>&1 || { cat "$tmp/ext.txt"; exit 99; }
n=0
for f in "$tmp"/x/*.npz; do judge "$f"; n=$((n + 1)); done
[ $n -ge 112 ] || fail "only $n extreme cases written"
echo "ok: $n cases of extreme scales: oracle and check exit 0"

# layouts: values of binary32's subnormal range (scales below binary32's range) and near its
# smallest normal (mxfp4's exponent 0), varlen and shuffled pages
n=0
for fg in q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl e4m3fn:tensor e4m3fn:token e4m3fnuz:head e4m3fnuz:channel e5m2:token \
  int8:token int8:tensor int4:head int4:channel nvfp4 mxfp4; do
  for sg in 1e-41 3e-38; do
    nm=$(echo "$fg" | tr : -)-$sg
    "$bin" gen -o "$tmp/l/$nm-paged.npz" --cache-seqlens 9,0,20 --seqlens-q 2,1,3 --page-size 4 --shuffle-pages \
      --spare-pages 2 --heads 2 --kv-heads 1 --dk 32 --kv-format "$fg" --sigma "$sg" --seed 7 > /dev/null 2>&1 ||
      { fail "gen paged $nm"; continue; }
    "$bin" gen -o "$tmp/l/$nm-varlen.npz" --seqlens-q 3,0,5 --seqlens-k 4,2,7 --heads 2 --kv-heads 1 --dk 32 \
      --mask causal --kv-format "$fg" --sigma "$sg" --seed 8 > /dev/null 2>&1 || { fail "gen varlen $nm"; continue; }
    judge "$tmp/l/$nm-paged.npz"
    judge "$tmp/l/$nm-varlen.npz"
    n=$((n + 2))
  done
done
echo "ok: $n varlen and paged cases of tiny values: oracle and check exit 0"

# the issue's reproducer
"$bin" gen -o "$tmp/c.npz" --batch 2 --heads 2 --kv-heads 1 --tq 5 --tk 3 --dk 64 --dv 64 --mask none --seed 1010 \
  --sigma 1e-41 --kv-format e4m3fnuz:tensor > /dev/null 2>&1 || fail "gen of the reproducer"
"$bin" oracle "$tmp/c.npz" > "$tmp/r.txt" 2>&1 || fail "oracle of the reproducer: exit $?: $(cat "$tmp/r.txt")"
"$bin" check --kernel fp8kv-ref-f32 "$tmp/c.npz" > "$tmp/r.txt" 2>&1 || fail "check of the reproducer: exit $?: $(cat "$tmp/r.txt")"

# campaigns: 0 errors (stats), exit 0
for k in ggml-ref-f32 fp8kv-ref-f32 intkv-ref-f32 fp4kv-ref-f32; do
  "$bin" fuzz --kernel "$k" --out "$tmp/f-$k" --cases 200 --seed 1 --families tiny,quant_blocks,quant_nonfinite \
    --max-t 256 --no-live > "$tmp/f.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q '^errors=0$' "$tmp/f-$k/stats" && grep -q '^cases=200$' "$tmp/f-$k/stats" ||
    { fail "campaign on $k: exit $rc, $(grep '^errors=' "$tmp/f-$k/stats")"; tail -n 4 "$tmp/f.txt"; }
done
"$bin" fuzz --kernel fp8kv-ref-f32 --out "$tmp/f8" --cases 8 --seed 1 --no-live > "$tmp/f.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^errors=0$' "$tmp/f8/stats" || { fail "fuzz --cases 8 --seed 1 on fp8kv-ref-f32: exit $rc"; tail -n 4 "$tmp/f.txt"; }
echo "ok: campaigns of 200 cases on the four reference kernels: 0 errors"
exit $((fails > 0))
