#!/bin/sh
# tpython.sh: tests/python (pytest) against the attncheck Python package installed with pip from
# this tree into a fresh venv, with the build tree's libattncheck and command (ATTNCHECK_PREBUILT_DIR, so that
# pip does not build the library again): the API tests, the quantized inputs (test_quant.py),
# dropout (test_dropout.py), the FlashAttention-style module on the numpy FlashAttention-2 kernel
# but its long cases, every feature signature of FlashAttention's grid (fa_grid.py), and the
# pinned headline of the defect table
# (test_hand_tolerances.py: loose hand tolerances accept defects that attncheck rejects); the
# whole grid, torch's backends and the table run with `pytest tests/python` and
# tests/python/defect_table.py (docs/python.md). SKIP (77) without a
# python3 that has numpy, pytest, setuptools, wheel and venv (Debian: python3-numpy python3-pytest
# python3-venv python3-wheel; quickstart.sh installs them).
set -u
src=$(cd "${srcdir:-.}" && pwd) || exit 99
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
lib=$top/.libs/libattncheck.so.0
[ -f "$lib" ] || { echo "FAIL: $lib was not built"; exit 1; }
py=
for c in "${ATTNCHECK_TEST_PYTHON:-}" "${PYTHON_NUMPY:-}" python3 /usr/bin/python3; do
  [ -n "$c" ] && [ "$c" != none ] || continue
  if "$c" -c 'import numpy, pytest, venv, setuptools, wheel' > /dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with numpy, pytest, setuptools, wheel and venv"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-tpython-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$py" -m venv --system-site-packages "$tmp/venv" > "$tmp/venv.log" 2>&1 || { cat "$tmp/venv.log"; echo "SKIP: $py -m venv failed"; exit 77; }
# pip builds from a copy of what the package needs (a build in place writes build/ and egg-info).
mkdir -p "$tmp/src/docs" && cp -R "$src/pyproject.toml" "$src/setup.py" "$src/python" "$tmp/src/" &&
  cp "$src/docs/python.md" "$tmp/src/docs/" && chmod -R u+w "$tmp/src" || exit 99
ATTNCHECK_PREBUILT_DIR=$top PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install -q \
  --no-build-isolation --no-deps --no-index "$tmp/src" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install"; }
vpy=$tmp/venv/bin/python
"$vpy" -c 'import attncheck._lib as l, os; assert os.path.exists(l.library_path()), l.library_path()' ||
  fail "the installed package holds no libattncheck"
echo "python: $py ($("$vpy" -c 'import numpy, pytest; print("numpy", numpy.__version__, "pytest", pytest.__version__)'))"
cd "$tmp" || exit 99
ATTNCHECK_BIN=$top/attncheck ATTNCHECK_CACHE=off PYTHONDONTWRITEBYTECODE=1 "$vpy" -m pytest -q -p no:cacheprovider \
  "$src/tests/python/test_api.py" "$src/tests/python/test_quant.py" "$src/tests/python/test_dropout.py" \
  "$src/tests/python/test_flash_style.py" \
  "$src/tests/python/test_hand_tolerances.py" \
  -k 'test_api or test_quant or test_dropout or test_loose or test_flash_attn_grid or (numpy-flash and not long)' > "$tmp/pytest.log" 2>&1
rc=$?
tail -n 30 "$tmp/pytest.log"
[ $rc -eq 0 ] || fail "pytest tests/python (exit $rc)"
exit 0
