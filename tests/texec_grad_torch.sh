#!/bin/sh
# texec_grad_torch.sh: python/attncheck/worker/torch_sdpa.py's backward (torch.autograd through its
# forward; PyTorch 2.x scaled_dot_product_attention, or 1.13's explicit formula) on the CPU math
# backend passes check --grad (f32 and bf16, causal, GQA) and the suite's grad cases; with dK
# deliberately missing the scale (ATTNCHECK_WORKER_MUTATE=dk-noscale) it fails (exit 1).
# Skipped (77) when the python that runs it (ATTNCHECK_TORCH_PYTHON, else the configured
# PYTHON_NUMPY) cannot import torch and numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
py=${ATTNCHECK_TORCH_PYTHON:-${PYTHON_NUMPY:-none}}
if [ "$py" = none ] || [ -z "$py" ] || ! "$py" -c 'import torch, numpy' > /dev/null 2>&1; then
  echo "SKIP: no python3 with torch and numpy ($py)"
  exit 77
fi
tmp=$(mktemp -d /tmp/attncheck-tgrad-torch-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
PYTHONDONTWRITEBYTECODE=1
export ATTNCHECK_CACHE PYTHONDONTWRITEBYTECODE
fail() { echo "FAIL: $*"; exit 1; }
echo "torch $("$py" -c 'import torch; print(torch.__version__)') ($py)"
k="exec-persistent:$py $src/python/attncheck/worker/torch_sdpa.py --backend math --device cpu"
"$bin" gen -o "$tmp/f32.npz" --tq 24 --tk 40 --dk 16 --batch 1 --heads 4 --kv-heads 2 --mask causal-bottom-right \
  --grad normal --seed 5 > /dev/null || exit 99
"$bin" gen -o "$tmp/bf16.npz" --dtype bf16 --t 32 --dk 16 --batch 2 --heads 2 --kv-heads 1 --mask causal \
  --grad normal --seed 6 > /dev/null || exit 99
"$bin" check --grad --kernel "$k" "$tmp/f32.npz" "$tmp/bf16.npz" > "$tmp/o.txt" 2>&1
rc=$?
cat "$tmp/o.txt"
[ $rc -eq 0 ] && [ "$(grep -c '^PASS .* grad dq err/W=' "$tmp/o.txt")" -eq 2 ] || fail "check --grad on torch_sdpa.py (exit $rc)"
gc="--case f32-grad-72x80-d32-dv24-causal-bottom-right-h4kv2-do-normal --case bf16-grad-40x40-d16-dv16-none-h2kv2-do-huge"
"$bin" suite --kernel "$k" $gc > "$tmp/o.txt" 2>&1 && grep -q ' 2 pass, 0 warn, 0 fail, 0 skip, 0 error' "$tmp/o.txt" ||
  { cat "$tmp/o.txt"; fail "torch_sdpa.py: suite grad cases"; }
ATTNCHECK_WORKER_MUTATE=dk-noscale "$bin" check --grad --kernel "$k" "$tmp/f32.npz" > "$tmp/o.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .* dk err/W=[0-9.e+]* bad=1280/1280' "$tmp/o.txt" || { cat "$tmp/o.txt"; fail "broken dK: exit $rc"; }
echo "ok: torch_sdpa.py backward (and a broken dK fails)"
exit 0
