#!/bin/sh
# tquant_gguf.sh: ggml's block layouts and reference quantizers, against gguf-py (gguf.quants, the
# Python reference of ggml-quants.c): our quantizer writes gguf's bytes, we read gguf's bytes as gguf
# does, gguf reads ours (iq4_nl too, which gguf reads but does not write). Needs a python3 with numpy
# and gguf (pip install gguf): ATTNCHECK_GGUF_PYTHON, else PYTHON_NUMPY, else python3; SKIP without.
set -u
top=${abs_top_builddir:-.}
src=${srcdir:-.}
py=
for c in "${ATTNCHECK_GGUF_PYTHON:-}" "${PYTHON_NUMPY:-}" python3; do
  [ -n "$c" ] || continue
  if "$c" -c 'import numpy, gguf.quants' >/dev/null 2>&1; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "SKIP: no python3 with numpy and gguf (pip install gguf; ATTNCHECK_GGUF_PYTHON=PYTHON names one)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tquant-gguf.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$py" "$src/tests/quant/gguf_ref.py" make "$tmp/in.npz" || exit 99
"$top/tests/quant/ggml_tool" "$tmp/in.npz" "$tmp/out.npz" || { echo "FAIL: this tree and gguf disagree (above)"; exit 1; }
"$py" "$src/tests/quant/gguf_ref.py" check "$tmp/out.npz" || { echo "FAIL: gguf reads our blocks differently (above)"; exit 1; }
echo "PASS: ggml's block bytes and reference quantizers agree with gguf-py"
