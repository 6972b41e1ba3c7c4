#!/bin/sh
# texec_quant.sh: quantized tensors through the exec protocol (docs/quantized.md): the numpy worker
# declares every format (kv_formats, q_formats) and reads the case file's codes and scales with
# protocol.dequantize, a reading written from the documentation alone, independent of the C code;
# it PASSes a case of every format and granularity, varlen and paged included, and suite ci's
# quantized cases; a one-shot exec: kernel SKIPs them. It declares the quantized layouts and stores
# too ("quant_layout", "quant_store", "store_quantizers"): cases of group and tile scales, dtypes and
# packed codes PASS, and so do cases it quantizes itself (protocol.store_quantize, the members it
# stored returned beside o), while its deliberately wrong store (ties away from zero) is STORE-FAIL.
# Skipped (77) without python3 with numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
py=${PYTHON_NUMPY:-none}
if [ "$py" = none ] || [ -z "$py" ] || ! "$py" -c 'import numpy' 2>/dev/null; then echo "SKIP: no python3 with numpy"; exit 77; fi
ATTNCHECK_CACHE=off
PYTHONDONTWRITEBYTECODE=1
export ATTNCHECK_CACHE PYTHONDONTWRITEBYTECODE
tmp=$(mktemp -d /tmp/attncheck-xq-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
w="exec-persistent:$py $src/python/attncheck/worker/numpy_sdpa.py --serve"
n=0
for f in q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl e4m3fn e4m3fnuz:token e5m2:head int8:channel int4 nvfp4 mxfp4; do
  n=$((n + 1))
  "$bin" gen -o "$tmp/c$n.npz" --tq 19 --tk 45 --dk 32 --heads 2 --mask causal --kv-format "$f" --seed $n > /dev/null ||
    fail "gen $f"
done
"$bin" gen -o "$tmp/q.npz" --t 12 --dk 32 --kv-format e4m3fn:token --q-format e4m3fn --seed 3 > /dev/null || fail "gen q"
"$bin" gen -o "$tmp/v.npz" --seqlens-q 3,0,5 --seqlens-k 4,2,40 --dk 32 --kv-format q4_1 > /dev/null || fail "gen varlen"
"$bin" gen -o "$tmp/p.npz" --cache-seqlens 70,17 --page-size 16 --shuffle-pages --dk 32 --kv-format int8:token > /dev/null ||
  fail "gen paged"
for f in int4:group:16:packed=low:zero=f16 int2:tile:3x32:packed=high uint8:channel:8:zero=f32:scale=f16 \
    e5m2:group:32 e4m3fn:token:store=absmax-even-f32-sat uint8:token:zero=f32:store=minmax-away-f32-sat q8_0:store=ggml \
    e4m3fn:head:store=given-even-f32-sat; do
  n=$((n + 1))
  "$bin" gen -o "$tmp/c$n.npz" --tq 9 --tk 33 --dk 32 --heads 2 --mask causal --kv-format "$f" --seed $n > /dev/null ||
    fail "gen $f"
done
"$bin" gen -o "$tmp/ties.npz" --tq 9 --tk 33 --dk 32 --kv-format int4:group:16:store=minmax-even-f32-sat --kv-adversary ties \
  > /dev/null || fail "gen ties"
ATTNCHECK_WORKER_MUTATE=store-round-away "$bin" check --kernel "$w" "$tmp/ties.npz" > "$tmp/out" 2>&1
grep -q "^FAIL .*STORE-FAIL" "$tmp/out" || fail "a store rounding ties away: $(head -n 2 "$tmp/out")"
"$bin" check --kernel "$w" "$tmp"/*.npz > "$tmp/out" 2>&1
rc=$?
npass=$(grep -c '^PASS' "$tmp/out")
[ "$rc" -eq 0 ] && [ "$npass" -eq $((n + 4)) ] || { fail "numpy worker: exit $rc, $npass PASS of $((n + 4))"; grep -v "^PASS" "$tmp/out" | head; }
"$bin" check --kernel "exec:$py $src/python/attncheck/worker/numpy_sdpa.py {in} {out}" "$tmp/c1.npz" > "$tmp/out" 2>&1
grep -q "^SKIP .*one-shot exec kernels get no quantized tensors" "$tmp/out" || fail "one-shot exec: $(head -n 1 "$tmp/out")"
"$bin" suite --kernel "$w" --suite ci --case f32-quant-q4_0-40x70-d32-causal-asym_range \
  --case f32-quant-e4m3fn.token-48x64-d64-none-gqa-q --case f32-quant-nvfp4-40x70-d32-causal-outlier \
  --case f32-quant-e4m3fn.token-paged-shuffled > "$tmp/out" 2>&1 || fail "suite quantized cases: $(tail -n 3 "$tmp/out")"
grep -q "suite ci: .*: 4 pass, 0 warn, 0 fail" "$tmp/out" || fail "suite: $(tail -n 1 "$tmp/out")"
[ "$fails" -eq 0 ] || exit 1
echo "PASS: quantized cases through the exec protocol"
