#!/bin/sh
# texec_class.sh: exec workers as honest as plugins. A one-shot exec: command is judged under the
# class it declares (protocol.py writes it in every output's precision member); a
# persistent worker may answer "ok class=NAME" with a case (judged under it, every report names it;
# --precision overrides it; an unknown class is a kernel error naming it); list shows the
# declared tq-ne-tk and scale and a worker's note; torch_sdpa.py's default device falls back to the
# CPU without a GPU and says so in its note (without PyTorch its note says that).
# Skipped (77) without python3 with numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
py=${PYTHON_NUMPY:-none}
if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy"; exit 77; fi
export ATTNCHECK_CACHE=off PYTHONDONTWRITEBYTECODE=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-xclass-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ex=$src/python/attncheck/worker
"$bin" gen -o "$tmp/a.npz" --t 20 --dk 16 --seed 1 >/dev/null || exit 99
"$bin" gen -o "$tmp/h.npz" --dtype f16 --t 20 --dk 16 --seed 1 >/dev/null || exit 99

# 1. one-shot: the declared class travels with each output
out=$("$bin" check --kernel "exec:$py $ex/numpy_sdpa.py --precision fp32-exp2 {in} {out}" "$tmp/a.npz" 2>&1) ||
  { echo "$out"; fail "one-shot check"; }
echo "$out"
echo "$out" | grep -q "^PASS .* budget=class:fp32-exp2," || fail "a one-shot command is not judged under its declared class"
out=$("$bin" check --precision fp32 --kernel "exec:$py $ex/numpy_sdpa.py --precision fp32-exp2 {in} {out}" "$tmp/a.npz" 2>&1)
echo "$out" | grep -q "^PASS .* budget=class:fp32," || fail "--precision does not override the one-shot class"

# 2. persistent: "ok class=NAME" per case (the computation is numpy_sdpa.py's one-shot form)
cat > "$tmp/w.sh" <<EOF
#!/bin/sh
while read a b; do
  if [ "\$a" = hello ]; then echo 'attncheck-worker 1 {"name":"w","dtypes":["f16","f32"],"features":["tq-ne-tk","scale"],"note":"a test worker"}'; continue; fi
  if "$py" "$ex/numpy_sdpa.py" "\$a" "\$b" 2>/dev/null; then echo "ok class=\$(cat "$tmp/class")"; else echo "error failed"; fi
done
EOF
chmod +x "$tmp/w.sh"
echo fp16-cublas > "$tmp/class"
out=$("$bin" check --json "$tmp/w.json" --kernel "exec-persistent:$tmp/w.sh" "$tmp/h.npz" 2>&1) || { echo "$out"; fail "persistent check"; }
echo "$out"
echo "$out" | grep -q "^PASS .* budget=class:fp16-cublas," || fail "'ok class=fp16-cublas' is not the case's class"
grep -q '"precision":"fp16-cublas","precision_source":"problem"' "$tmp/w.json" || { cat "$tmp/w.json"; fail "JSON class per case"; }
echo fp99-nothing > "$tmp/class"
out=$("$bin" check --kernel "exec-persistent:$tmp/w.sh" "$tmp/h.npz" 2>&1); rc=$?
echo "$out" | head -n 1
[ $rc -eq 1 ] && echo "$out" | grep -q "names the class 'fp99-nothing' for this problem" || fail "an unknown class per case"
lst=$("$bin" list --kernel "exec-persistent:$tmp/w.sh" 2>&1)
echo "$lst"
echo "$lst" | grep -q "; tq!=tk; scale" || fail "list does not show the declared tq-ne-tk and scale"
echo "$lst" | grep -q "; note: a test worker" || fail "list does not show the worker's note"

# 3. torch_sdpa.py: --device auto falls back to the CPU and says so
lst=$("$bin" list --kernel "exec-persistent:$py $ex/torch_sdpa.py --backend math" 2>&1)
echo "$lst"
if "$py" -c 'import torch, sys; sys.exit(torch.cuda.is_available())' 2>/dev/null; then
  echo "$lst" | grep -q "note: no CUDA device: running on the CPU" || fail "torch_sdpa.py does not say it runs on the CPU"
  out=$("$bin" check --kernel "exec-persistent:$py $ex/torch_sdpa.py --backend math" "$tmp/a.npz" 2>&1) ||
    { echo "$out"; fail "torch_sdpa.py on the CPU by default"; }
  echo "$out" | grep -q "^PASS" || fail "torch_sdpa.py on the CPU is not PASS"
  echo "ok: torch_sdpa.py falls back to the CPU"
elif ! "$py" -c 'import torch' 2>/dev/null; then
  echo "$lst" | grep -q "note: PyTorch is not installed" || fail "torch_sdpa.py without PyTorch does not say so"
fi
echo "ok: exec workers declare their class per case and their note"
exit 0
