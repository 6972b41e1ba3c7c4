#!/bin/sh
# tnumpy: numpy reads what attncheck writes and the reverse; skipped (77) without python3-numpy.
py=${PYTHON_NUMPY:-none}
if test "$py" = none || test -z "$py"; then
  echo "SKIP: no python3 with numpy (Debian: apt-get install python3-numpy)"
  exit 77
fi
"$py" "${srcdir:-.}/tests/numpy_roundtrip.py" || exit 1
# oracle -o: rows not selected by --rows carry o_how 3 (AC_HOW_NOT_SELECTED), never 0 (EXACT)
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tnumpy-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" gen -o "$tmp/c.npz" --t 6 --dk 2 --seed 1 >/dev/null || exit 1
ATTNCHECK_CACHE=off "$bin" oracle "$tmp/c.npz" --rows 0 -o "$tmp/x.npz" >/dev/null || exit 1
"$py" -c "
import numpy as np, sys
h = np.load(sys.argv[1])['o_how'].reshape(6, -1)
assert (h[0] != 3).all() and (h[1:] == 3).all(), h
print('ok: o_how of rows not selected is 3')" "$tmp/x.npz"
