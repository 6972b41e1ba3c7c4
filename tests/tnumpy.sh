#!/bin/sh
# tnumpy: numpy reads what attncheck writes and the reverse; skipped (77) without python3-numpy.
py=${PYTHON_NUMPY:-none}
if test "$py" = none || test -z "$py"; then
  echo "SKIP: no python3 with numpy (Debian: apt-get install python3-numpy)"
  exit 77
fi
exec "$py" "${srcdir:-.}/tests/numpy_roundtrip.py"
