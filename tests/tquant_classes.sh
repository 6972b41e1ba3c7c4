#!/bin/sh
# tquant_classes.sh: the classes of quantized kernels (docs/quantized.md "Classes", docs/numerics.md
# §6.1, §7.17 fold, §7.18 q8): the presets and their parts; each reference kernel PASSes under the class
# it declares and ggml-q8-ref-f32, which rounds Q to q8_0 blocks, FAILs under kv-f32; fold=f32 widens
# the budget (err/W smaller than under fp32 on the same run); fp8kv-fold-ref-f32 refuses per-token
# scales (SKIP, "unsupported:"); the dequantize-to-16-bit kernels kv16-ref-f16 and kv16-ref-bf16
# PASS under kv-f16-fa2 and kv-bf16-fa2 on f16 and bf16 cases of every format family, dense and paged,
# and kv16-ref-f16 FAILs under fp16-fa2, which does not charge K's and V's rounding to f16;
# store-minmax-ref-f32, which dequantizes its uint8 codes in binary32 as (c - z) s, declares dq-f32
# (the part dq=f32, §7.17: tests/tquant_dq for its bound) and PASSes under it.
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tqclasses-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$bin" list --precision >"$tmp/list" 2>&1 || fail "list --precision: exit $?"
for want in "kv-f32 *k=f32,v=f32" "qkv-f32 *q=f32,k=f32,v=f32" "q8kv-f32 *q=q8,v=f32" "fold-f32 *fold=f32" \
  "kv-f16-fa2 *k=f16,v=f16,qk=f32t,exp=exp2,lse=log2,p=f16,pv=f32t,l=f32t" \
  "kv-bf16-fa2 *k=bf16,v=bf16,qk=f32t,exp=exp2,lse=log2,p=bf16,pv=f32t,l=f32t"; do
  grep -q "^$want\$" "$tmp/list" || fail "list --precision lacks '$want'"
done
"$bin" list --precision fold=f32 2>&1 | head -1 | grep -q "fold=f32" || fail "list --precision fold=f32"
"$bin" check --kernel naive-f32 --precision fold=f16 "$tmp/none.npz" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "part fold has no value 'f16'" "$tmp/e" || fail "fold=f16: exit $rc: $(cat "$tmp/e")"

# verdict KERNEL CASE [PRECISION]: the status word of one check
verdict() { k=$1 c=$2; shift 2; "$bin" check --kernel "$k" "$@" "$c" 2>&1 | head -1 | awk '{print $1}'; }
errw() { "$bin" check --kernel "$1" --precision "$3" "$2" 2>&1 | head -1 | sed -n 's/.* err\/W=\([^ ]*\) .*/\1/p'; }

gen() { out=$1; shift; "$bin" gen -o "$tmp/$out.npz" --tq 24 --tk 80 --dk 64 --heads 4 --kv-heads 2 --seed 11 "$@" >/dev/null 2>"$tmp/e" || fail "gen $*: $(cat "$tmp/e")"; }
gen q4_0 --kv-format q4_0
gen q4_1 --kv-format q4_1 --mask causal
gen e4h --kv-format e4m3fn:head --q-format e4m3fn:head
gen e5t --kv-format e5m2:tensor
gen e4tok --kv-format e4m3fn:token
gen i4 --kv-format int4
gen nv --kv-format nvfp4
for kc in "ggml-ref-f32 q4_0" "ggml-ref-f32 q4_1" "ggml-q8-ref-f32 q4_0" "fp8kv-ref-f32 e4h" "fp8kv-ref-f32 e4tok" \
  "fp8kv-fold-ref-f32 e4h" "fp8kv-fold-ref-f32 e5t" "intkv-ref-f32 i4" "fp4kv-ref-f32 nv"; do
  set -- $kc
  v=$(verdict "$1" "$tmp/$2.npz")
  [ "$v" = PASS ] || fail "$1 on $2 under its class: $v"
done
"$bin" check --kernel ggml-q8-ref-f32 "$tmp/q4_0.npz" | head -1 | grep -q "budget=class:q8kv-f32" || fail "ggml-q8-ref-f32 declares q8kv-f32"
v=$(verdict ggml-q8-ref-f32 "$tmp/q4_0.npz" --precision kv-f32)
[ "$v" = FAIL ] || fail "ggml-q8-ref-f32 under kv-f32 (Q's q8 rounding not charged): $v, expected FAIL"
v=$(verdict fp8kv-fold-ref-f32 "$tmp/e4tok.npz")
[ "$v" = SKIP ] || fail "fp8kv-fold-ref-f32 on per-token scales: $v, expected SKIP"
a=$(errw fp8kv-fold-ref-f32 "$tmp/e4h.npz" fold-f32) b=$(errw fp8kv-fold-ref-f32 "$tmp/e4h.npz" fp32)
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && a < b) }' || fail "err/W under fold-f32 ($a) not below fp32's ($b)"

# dequantize to f16 / bf16: one case per format family, dense (GQA, causal) and paged
for dt in f16 bf16; do
  for f in q4_0 q4_1 e4m3fn:head e5m2:token int8 int4:channel nvfp4 mxfp4; do
    n=$dt-$(echo "$f" | tr : _)
    gen "$n" --dtype "$dt" --kv-format "$f" --mask causal-bottom-right
    v=$(verdict kv16-ref-$dt "$tmp/$n.npz")
    [ "$v" = PASS ] || fail "kv16-ref-$dt on $n under its class: $v"
  done
  "$bin" gen -o "$tmp/$dt-paged.npz" --dtype "$dt" --seqlens-q 3,5 --cache-seqlens 40,77 --page-size 16 \
    --heads 4 --kv-heads 2 --dk 64 --kv-format e4m3fn:token --mask causal-bottom-right --seed 3 >/dev/null 2>"$tmp/e" ||
    fail "gen paged $dt: $(cat "$tmp/e")"
  v=$(verdict kv16-ref-$dt "$tmp/$dt-paged.npz")
  [ "$v" = PASS ] || fail "kv16-ref-$dt on a paged e4m3fn cache: $v"
done
"$bin" check --kernel kv16-ref-f16 "$tmp/f16-e4m3fn_head.npz" | head -1 | grep -q "budget=class:kv-f16-fa2" ||
  fail "kv16-ref-f16 declares kv-f16-fa2"
v=$(verdict kv16-ref-f16 "$tmp/f16-e4m3fn_head.npz" --precision fp16-fa2)
[ "$v" = FAIL ] || fail "kv16-ref-f16 under fp16-fa2 (K's and V's rounding to f16 not charged): $v, expected FAIL"
v=$(verdict kv16-ref-f16 "$tmp/f16-e4m3fn_head.npz" --precision kv-f16-fa2 --policy suspect=fail)
[ "$v" = PASS ] || fail "kv16-ref-f16 SUSPECT under kv-f16-fa2: $v"
# WEAK-CLASS holds a quantized case to the dtype's standard class with the input rounding any kernel of
# the dtype does (f16: kv-f16-fa2, kv16-ref-f16's own): a fuzz case of softcap and e4m3fn K and V on
# which fp16-fa2 alone (no rounding of K and V to f16 charged) called the correct kernel WEAK-CLASS
data=${srcdir:-.}/tests/data/kv16_softcap_standard.npz
out=$("$bin" check --kernel kv16-ref-f16 "$data" 2>&1)
echo "$out" | head -1 | grep -q "^PASS " || fail "kv16-ref-f16 on kv16_softcap_standard.npz: $(echo "$out" | head -2)"
# dq=f32: the binary32 dequantization with zero points
"$bin" list --precision dq-f32 2>&1 | grep -q "^  dequantized  a quantized Q, K or V in 2^-24" || fail "list --precision dq-f32"
"$bin" gen -o "$tmp/st.npz" --kv-format uint8:token:zero=f32:store=minmax-even-f32-sat --kv-adversary offset \
  --tq 24 --tk 40 --dk 64 --seed 3 >/dev/null || fail "gen of a uint8 store case"
out=$("$bin" check --kernel store-minmax-ref-f32 "$tmp/st.npz" 2>&1)
echo "$out" | head -1 | grep -q "^PASS .*budget=class:dq-f32," || fail "store-minmax-ref-f32 under dq-f32: $(echo "$out" | head -1)"
[ "$fails" = 0 ] && echo "ok" || exit 1
