#!/bin/sh
# contrib_ggml.sh: contrib/ggml built against the ggml of $GGML_DIR (a ggml install prefix or a
# source tree built in build/; docs/ggml.md) and judged: its three kernels listed with their
# declarations; suite cases of each path PASS under the class the kernel names for the path (and
# ggml's scalar path FAILs fp32 where its f16 accumulator is not fp32's); what ggml's f16 mask
# cannot hold is SKIP, not FAIL; quantized K and V (q8_0, q4_0, q4_1, q5_0) PASS under their
# classes and FAIL fp32; a short campaign has no finding; the ggml failures of docs/ggml.md replay
# from tests/data as documented. SKIP (77) without GGML_DIR.
set -u
[ -n "${GGML_DIR:-}" ] || { echo "GGML_DIR is not set: contrib/ggml needs a ggml tree or prefix (docs/ggml.md)"; exit 77; }
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
export ATTNCHECK_CACHE=off
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-ggml-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$out"; echo "FAIL: $*"; exit 1; }
out=$(make -s -C "$src/contrib/ggml" GGML_DIR="$GGML_DIR" OUT="$tmp" 2>&1) || fail "make -C contrib/ggml GGML_DIR=$GGML_DIR"
so="$tmp/attncheck-ggml.so"
out=$("$bin" list --kernel "$so" 2>&1) || fail "list --kernel"
echo "$out"
for k in ggml-fa ggml-fa-ref ggml-softmax; do
  echo "$out" | grep -q "^  $k " || fail "$k not listed"
done
echo "$out" | grep -c 'no LSE; kv formats q8_0,q4_0,q4_1,q5_0,q5_1,iq4_nl; empty rows zero; class per problem' | grep -qx 2 || fail "flash attention's declarations"
echo "$out" | grep -q 'no LSE; kv formats q8_0,q4_0,q4_1,q5_0,q5_1,iq4_nl; empty rows nan; class per problem' || fail "soft_max_ext's declarations"
# One case per path and variant; each must PASS under the class its path names.
cases="f32-128x128-d32-causal-b1h4kv4-alibi1 f16-128x128-d32-causal-b1h4kv4-alibi1 bf16-40x40-d32-causal-b1h2kv2-sink-dom
f16-48x80-d32-none-cap5 f16-64x80-d32-none-b2h2kv1-bmask f32-50x50-d16-none-win10,-1tl f16-113x203-d64-causal-bottom-right-b2h4kv2"
for k in ggml-fa ggml-fa-ref ggml-softmax; do
  for c in $cases; do
    out=$("$bin" suite --kernel "$so:$k" --suite ci --case "$c" 2>&1) || fail "$k $c"
    echo "$out" | grep -q "^PASS  $k $c " || fail "$k $c not PASS"
  done
done
out=$("$bin" suite --kernel "$so:ggml-fa" --suite ci --case f16-128x128-d32-causal-b1h4kv4-alibi1 2>&1)
echo "$out" | grep -q ' budget=class:fp32,' || fail "ggml-fa's tiled path is not judged fp32"
out=$("$bin" suite --kernel "$so:ggml-fa-ref" --suite ci --case f16-128x128-d32-causal-b1h4kv4-alibi1 2>&1)
echo "$out" | grep -q ' budget=class:.*pv=f16.*rs=acc' || fail "ggml-fa-ref's f16 accumulator is not in its class"
out=$("$bin" suite --kernel "$so:ggml-fa-ref" --suite ci --case f16-128x128-d32-causal-b1h4kv4-alibi1 --precision fp32 2>&1)
[ $? -eq 1 ] && echo "$out" | grep -q "^FAIL  ggml-fa-ref " || fail "ggml's f16 accumulator PASSes fp32"
# A bias ggml's f16 mask does not hold: SKIP from run() for flash attention, judged (f32 mask) by soft_max_ext.
out=$("$bin" suite --kernel "$so" --suite ci --case f32-40x60-d32-none-bias-infrows 2>&1)
echo "$out" | grep -q "^SKIP  ggml-fa .*unsupported: run(): bias .* is not exact in ggml's f16 mask" || fail "inexact bias not SKIP"
echo "$out" | grep -q "^PASS  ggml-softmax f32-40x60-d32-none-bias-infrows " || fail "ggml-softmax on an f32 bias"
"$bin" gen -o "$tmp/alibi.npz" --heads 3 --t 8 --dk 8 --alibi 1 --seed 1 >/dev/null || exit 99
out=$("$bin" check --kernel "$so:ggml-fa" "$tmp/alibi.npz" 2>&1)
echo "$out" | grep -q "^SKIP .*not ggml's max_bias series for 3 heads" || fail "slopes outside ggml's series not SKIP"
# An unknown ATTNCHECK_GGML_BACKEND device: every case SKIP with the reason, never FAIL.
out=$(ATTNCHECK_GGML_BACKEND=no-such-device "$bin" suite --kernel "$so:ggml-fa" --suite ci --case f32-64x96-d32-none 2>&1)
echo "$out" | grep -q "^SKIP .*no ggml device no-such-device (ATTNCHECK_GGML_BACKEND)" || fail "an unknown backend not SKIP"
# The ggml failures of docs/ggml.md replay: the paths without the defect PASS, the one with it is
# FAIL or WARN as recorded there, or PASS where this ggml has the fix (said on the output).
verdict() { "$bin" check --kernel "$so:$1" "$src/tests/data/$2.npz" 2>&1 | head -1 | cut -d' ' -f1; }
replay() { # FILE KERNEL-WITH-THE-DEFECT ITS-VERDICT KERNELS-THAT-PASS
  f=$1 k=$2 want=$3; shift 3
  v=$(verdict "$k" "$f")
  case $v in "$want") ;; PASS) echo "$k PASSes $f: this ggml has the fix of docs/ggml.md" ;; *) out=$v; fail "$k on $f: $v" ;; esac
  for o in "$@"; do v=$(verdict "$o" "$f"); [ "$v" = PASS ] || { out=$v; fail "$o on $f: $v"; }; done
}
replay ggml_fa_softcap_tiled_padding ggml-fa FAIL ggml-fa-ref ggml-softmax
replay ggml_fa_tiled_masked_inf ggml-fa WARN ggml-fa-ref
replay ggml_fa_f16_acc_overflow ggml-fa-ref WARN ggml-softmax
replay ggml_softmax_masked_overflow ggml-softmax FAIL ggml-fa ggml-fa-ref
# f16 dots summed in f16 (an AVX512-FP16 build: the class says qk=f16): a partial sum of a finite
# q.k overflows, o NaN: out of the class's domain (docs/numerics.md §8 rule 2a), WARN; a build
# summing in f32 computes it exactly: PASS.
for k in ggml-fa ggml-fa-ref ggml-softmax; do
  out=$("$bin" check --kernel "$so:$k" "$src/tests/data/ggml_fa_f16_dot_overflow.npz" 2>&1)
  v=$(echo "$out" | head -1 | cut -d' ' -f1)
  if echo "$out" | head -1 | grep -q 'budget=class:.*qk=f16'; then
    [ "$v" = WARN ] && echo "$out" | head -1 | grep -q OUT-OF-DOMAIN || fail "$k on ggml_fa_f16_dot_overflow with qk=f16: $v"
  else
    [ "$v" = PASS ] || fail "$k on ggml_fa_f16_dot_overflow without qk=f16: $v"
  fi
done
# bf16 dots of an AVX512-BF16 build flush subnormals (sub=daz in the class): WARN, not FAIL.
v=$(verdict ggml-softmax ggml_softmax_bf16_daz)
[ "$v" = WARN ] || [ "$v" = PASS ] || { out=$v; fail "ggml-softmax on ggml_softmax_bf16_daz: $v"; }
# Quantized K and V (ggml's block formats from tensors.quant, docs/ggml.md "Quantized K and V"):
# declared by all three kernels; K in q8_0 or q4_0 blocks PASSes under q=q8 (Q rounded to q8_0
# blocks, K's values exact) and FAILs fp32, which does not charge Q's q8 rounding; a q4_1 V adds
# v=f32; a q4_1 or q5_1 K (Q in q8_1 blocks, their sums in f16) PASSes under q=q81 (an offset K,
# whose min dominates: never FAIL; WEAK-CLASS against kv-f32 as q=q8 is); ggml-softmax's
# quantized V is SKIP.
out=$("$bin" list --kernel "$so" 2>&1)
[ "$(echo "$out" | grep -c 'kv formats q8_0,q4_0,q4_1,q5_0,q5_1,iq4_nl')" -eq 3 ] || fail "quantized formats not declared by the three kernels"
qgen() { "$bin" gen -o "$tmp/$1.npz" $2 --heads 4 --kv-heads 2 --tq 70 --tk 90 --dk 64 --mask causal --seed 7 >/dev/null || exit 99; }
qcheck() { # FILE KERNEL WANT-STATUS WANT-TEXT [--precision C]
  f=$1 k=$2 want=$3 text=$4; shift 4
  out=$("$bin" check --kernel "$so:$k" "$@" "$tmp/$f.npz" 2>&1)
  echo "$out" | head -1 | grep -q "^$want  $k .*$text" || fail "$k on $f ($*): not $want with $text"
}
for fmt in q8_0 q4_0; do
  qgen "kv-$fmt" "--kv-format $fmt"
  for k in ggml-fa ggml-fa-ref; do
    qcheck "kv-$fmt" $k PASS ' budget=class:q8q-f32,'
    qcheck "kv-$fmt" $k FAIL ' budget=class:fp32,' --precision fp32
  done
  qcheck "kv-$fmt" ggml-softmax SKIP 'takes V transposed: a quantized V'
  qgen "k-$fmt" "--k-format $fmt"
  qcheck "k-$fmt" ggml-fa PASS ' budget=class:q8q-f32,'
  qcheck "k-$fmt" ggml-softmax PASS ' budget=class:q=q8,.*p=f32,'
  qcheck "k-$fmt" ggml-softmax FAIL ' budget=class:fp32,' --precision fp32
done
qgen k-q4_0-f16 "--k-format q4_0 --dtype f16"
qcheck k-q4_0-f16 ggml-fa-ref PASS ' budget=class:q=q8,.*pv=f16,.*rs=acc'
qcheck k-q4_0-f16 ggml-softmax PASS ' budget=class:q=q8,.*p=f16,'
qgen k-q4_0-v-q4_1 "--k-format q4_0 --v-format q4_1"
qcheck k-q4_0-v-q4_1 ggml-fa PASS ' budget=class:q8kv-f32,'
qgen v-q5_0 "--v-format q5_0"
qcheck v-q5_0 ggml-fa PASS ' budget=class:fp32,'
qgen kv-q4_1 "--kv-format q4_1"
qcheck kv-q4_1 ggml-fa PASS ' budget=class:q=q81,.*v=f32,'
qcheck kv-q4_1 ggml-fa-ref PASS ' budget=class:q=q81,.*v=f32,'
for fmt in q4_1 q5_1; do
  qgen "k-$fmt" "--k-format $fmt"
  qcheck "k-$fmt" ggml-fa PASS ' budget=class:q=q81,'
  qcheck "k-$fmt" ggml-softmax PASS ' budget=class:q=q81,.*p=f32,'
  qgen "k-$fmt-offset" "--k-format $fmt --kv-adversary offset"
  for k in ggml-fa ggml-softmax; do
    v=$("$bin" check --kernel "$so:$k" "$tmp/k-$fmt-offset.npz" 2>&1 | head -1 | cut -d' ' -f1)
    [ "$v" = PASS ] || [ "$v" = WARN ] || { out=$v; fail "$k on an offset $fmt K: $v"; }
  done
done
# Finding 10: a K block whose f16 scale overflowed, against zeros in Q: the exact score is NaN
# (0·inf), ggml's integer block dot +inf, o that key's V: FAIL; ggml's dequantizing reference
# ggml-ref-f32 (the values) PASSes.
replay ggml_fa_quant_inf_scale ggml-fa FAIL
v=$(verdict ggml-fa-ref ggml_fa_quant_inf_scale)
[ "$v" = FAIL ] || [ "$v" = PASS ] || { out=$v; fail "ggml-fa-ref on ggml_fa_quant_inf_scale: $v"; }
v=$("$bin" check --kernel ggml-ref-f32 "$src/tests/data/ggml_fa_quant_inf_scale.npz" 2>&1 | head -1 | cut -d' ' -f1)
[ "$v" = PASS ] || { out=$v; fail "ggml-ref-f32 on ggml_fa_quant_inf_scale: $v"; }
out=$("$bin" suite --kernel "$so:ggml-fa" --suite ci --case f32-quant-q4_0-64x96-d64-causal-bottom-right-gqa 2>&1)
echo "$out" | grep -q "^PASS  ggml-fa f32-quant-q4_0-64x96-d64-causal-bottom-right-gqa .*budget=class:q8q-f32," || fail "suite ci's q4_0 case"
# A short campaign: no finding with policy fail.
out=$("$bin" fuzz --kernel "$so:ggml-fa" --cases 40 --seed 3 --out "$tmp/camp" --no-live 2>&1) || fail "fuzz campaign (exit $?)"
exit 0
