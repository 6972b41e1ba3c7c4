#!/bin/sh
# tplugin_quant_paged.sh: the paged quantized layout as kernels/attncheck_kernel.h documents it, and
# kernels of quantized caches only. tests/tplugin_quant_paged.c, written from the header's text alone,
# reads a paged K or V at (page, slot) = (block_table[b][j / page_size], j % page_size) through
# code_stride, scale_stride and ggml_stride: it PASSes on shuffled pages (spare pages, a shared
# prefix, page sizes 1, 3 and 16) of q8_0, q4_0 (codes and scales, and ggml blocks), e4m3fn and int8,
# int4 at every granularity, and on varlen and dense cases of them. Its kernel declaring
# ATTNCHECK_CAP_QUANT_ONLY, whose supports() refuses plain K: `list` says "quantized cases only",
# a plain case SKIPs, and a campaign of the layout families (varlen, paged, decode) judges every
# case quantized (stats: quantized_layout_share=1.0000).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so="$top/tests/.libs/tplugin_quant_paged.so"
[ -f "$so" ] || { echo "plugin not built: $so"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tpqp-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
first() { "$bin" check --kernel "$1" "$2" 2>&1 | head -n 1 | cut -c1-220; }

n=0
for fg in q8_0 q4_0 e4m3fn:tensor e4m3fn:head e4m3fn:token e4m3fn:channel int8:token int8:head int4:channel int4:tensor; do
  nm=$(echo "$fg" | tr : -)
  "$bin" gen -o "$tmp/p1-$nm.npz" --cache-seqlens 37,0,20,9 --seqlens-q 3,1,2,4 --page-size 16 --shuffle-pages \
    --spare-pages 3 --heads 4 --kv-heads 2 --dk 32 --mask causal-bottom-right --kv-format "$fg" --seed 11 > /dev/null &&
  "$bin" gen -o "$tmp/p2-$nm.npz" --cache-seqlens 7,7,12 --page-size 3 --shuffle-pages --shared-pages 2 --heads 2 \
    --kv-heads 1 --dk 32 --dv 64 --kv-format "$fg" --seed 12 > /dev/null &&
  "$bin" gen -o "$tmp/p3-$nm.npz" --cache-seqlens 5,9 --page-size 1 --shuffle-pages --spare-pages 4 --dk 32 \
    --kv-format "$fg" --seed 13 > /dev/null &&
  "$bin" gen -o "$tmp/v-$nm.npz" --seqlens-q 3,0,5 --seqlens-k 4,2,7 --heads 2 --kv-heads 1 --dk 32 --mask causal \
    --kv-format "$fg" --seed 14 > /dev/null &&
  "$bin" gen -o "$tmp/d-$nm.npz" --batch 2 --heads 2 --kv-heads 1 --tq 6 --tk 9 --dk 32 --kv-format "$fg" --seed 15 > /dev/null ||
    { fail "gen $fg"; continue; }
  for c in p1 p2 p3 v d; do
    l=$(first "$so:paged-codes" "$tmp/$c-$nm.npz")
    case "$l" in PASS*) ;; *) fail "paged-codes on $c $fg: $l" ;; esac
    case $fg in q8_0 | q4_0)
      l=$(first "$so:paged-ggml" "$tmp/$c-$nm.npz")
      case "$l" in PASS*) ;; *) fail "paged-ggml on $c $fg: $l" ;; esac ;;
    esac
    n=$((n + 1))
  done
done
echo "ok: $n cases (shuffled pages, varlen, dense) read from the header's addressing"

# quantized caches only
"$bin" list --kernel "$so" > "$tmp/list" 2>&1 || fail "list: $(cat "$tmp/list")"
grep -A1 '^  paged-quant-only ' "$tmp/list" | grep -q 'quantized cases only' || fail "list lacks 'quantized cases only': $(cat "$tmp/list")"
grep -A1 '^  paged-codes ' "$tmp/list" | grep -q 'quantized cases only' && fail "list: paged-codes is not quantized-only"
"$bin" gen -o "$tmp/plain.npz" --cache-seqlens 9,4 --page-size 4 --dk 32 --seed 3 > /dev/null || exit 99
l=$(first "$so:paged-quant-only" "$tmp/plain.npz")
case "$l" in SKIP*"quantized tensors only"*) ;; *) fail "paged-quant-only on a plain case: $l" ;; esac
"$bin" fuzz --kernel "$so:paged-quant-only" --families varlen_mix,page_table,decode --cases 60 --seed 4 --max-t 256 \
  --out "$tmp/camp" --no-live > "$tmp/camp.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "campaign on paged-quant-only: exit $rc"; tail -n 5 "$tmp/camp.txt"; }
grep -q '^quantized_layout_share=1.0000$' "$tmp/camp/stats" && grep -q '^skipped=0$' "$tmp/camp/stats" ||
  fail "campaign on paged-quant-only: $(grep '^quantized\|^layout\|^skipped=' "$tmp/camp/stats" | tr '\n' ' ')"
echo "ok: a kernel of quantized caches only: $(grep '^quantized_layout_this_run=' "$tmp/camp/stats") of $(grep '^layout_this_run=' "$tmp/camp/stats")"
exit $((fails > 0))
