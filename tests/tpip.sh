#!/bin/sh
# tpip.sh: the Python package as a user installs it (pip, a fresh venv) and every Python example of
# the docs. pip installs this tree with the build tree's library and command (ATTNCHECK_PREBUILT_DIR:
# the C build pip runs otherwise is what .ci/run's install from a clean clone does); then
#   - the console command `attncheck` runs the program shipped in the package;
#   - a failed assert_attention_close prints `reproducer: FILE (attncheck check FILE)`, and that
#     command, run as printed, gives the same verdict line and exit 1;
#   - every ```python block of README.md and docs/*.md runs: a block defining test_* functions as
#     a pytest file (README's test_my_attention.py), any other as a script; a block that imports
#     torch SKIPs where torch is absent;
#   - setup.py's copy of the sources leaves out what a build in place wrote (config.status,
#     Makefile beside Makefile.in, objects, programs, libtool wrappers), which made configure
#     refuse a tree configured in place.
# SKIP (77) without a python3 that has numpy, pytest, setuptools, wheel and venv.
set -u
src=$(cd "${srcdir:-.}" && pwd) || exit 99
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
[ -f "$top/.libs/libattncheck.so.0" ] || { echo "FAIL: libattncheck was not built"; exit 1; }
py=
for c in "${ATTNCHECK_TEST_PYTHON:-}" "${PYTHON_NUMPY:-}" python3 /usr/bin/python3; do
  [ -n "$c" ] && [ "$c" != none ] || continue
  if "$c" -c 'import numpy, pytest, venv, setuptools, wheel' > /dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with numpy, pytest, setuptools, wheel and venv"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-tpip-XXXXXX) || exit 99
trap 'chmod -R u+w "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$py" -m venv --system-site-packages "$tmp/venv" > "$tmp/venv.log" 2>&1 || { cat "$tmp/venv.log"; echo "SKIP: venv failed"; exit 77; }
mkdir -p "$tmp/src/docs" && cp -R "$src/pyproject.toml" "$src/setup.py" "$src/python" "$tmp/src/" &&
  cp "$src/docs/python.md" "$tmp/src/docs/" && chmod -R u+w "$tmp/src" || exit 99
ATTNCHECK_PREBUILT_DIR=$top PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install -q \
  --no-build-isolation --no-deps --no-index "$tmp/src" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install"; }
PATH="$tmp/venv/bin:$PATH" ATTNCHECK_CACHE=off TMPDIR="$tmp" PYTHONDONTWRITEBYTECODE=1
export PATH ATTNCHECK_CACHE TMPDIR PYTHONDONTWRITEBYTECODE
unset ATTNCHECK_BIN 2> /dev/null || :
[ "$(command -v attncheck)" = "$tmp/venv/bin/attncheck" ] || fail "pip installed no attncheck command"
v=$(attncheck --version) || fail "the attncheck command does not run"
[ "$v" = "$("$top/attncheck" --version)" ] || fail "attncheck --version: '$v'"
echo "console command: $v"

# a failed assertion's reproducer, run as printed
cd "$tmp" || exit 99
python - > "$tmp/assert.out" 2>&1 << 'PYEOF'
import numpy as np, attncheck
rng = np.random.default_rng(3)
q, k, v = (rng.standard_normal((1, 16, 2, 8)).astype(np.float32) for _ in range(3))
o = np.zeros_like(q)          # a wrong output
try:
    attncheck.assert_attention_close(q, k, v, o, causal=True, layout="bthd", save_dir="repro")
except AssertionError as e:
    print(e)
else:
    print("no AssertionError")
PYEOF
grep -q '^  worst element: o\[.*\] of your B,T,H,D argument' "$tmp/assert.out" || { cat "$tmp/assert.out"; fail "the message does not lead with the caller's index"; }
cmd=$(sed -n 's/^reproducer: .* (\(attncheck check .*\))$/\1/p' "$tmp/assert.out")
[ -n "$cmd" ] || { cat "$tmp/assert.out"; fail "no reproducer line"; }
echo "reproducer: $cmd"
sh -c "$cmd" > "$tmp/repro.out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/repro.out"; fail "'$cmd' exited $rc, not 1"; }
l1=$(head -n 1 "$tmp/assert.out" | sed 's/^\(FAIL\) *[^ ]* [^ ]* /\1 /; s/ rows=.*//')
l2=$(head -n 1 "$tmp/repro.out" | sed 's/^\(FAIL\) *[^ ]* [^ ]* /\1 /; s/ rows=.*//')
[ "$l1" = "$l2" ] || fail "the reproducer's verdict differs: '$l1' against '$l2'"

# every Python block of the docs
has_torch=no
python -c 'import torch' > /dev/null 2>&1 && has_torch=yes
ran=0 skipped=0
for f in "$src"/README.md "$src"/docs/*.md; do
  awk -v out="$tmp/blk" -v name="$(basename "$f" .md)" '
    /^```python[ \t]*$/ { inb = 1; n++; start = NR; file = sprintf("%s-%s-%d.py", out, name, start); next }
    inb && /^```[ \t]*$/ { inb = 0; close(file); next }
    inb { print > file }' "$f"
done
for b in "$tmp"/blk-*.py; do
  [ -f "$b" ] || continue
  where=$(basename "$b" .py | sed 's/^blk-//')
  if grep -q '^ *import torch\|^ *from torch' "$b" && [ "$has_torch" = no ]; then
    echo "SKIP  $where (needs torch)"; skipped=$((skipped + 1)); continue
  fi
  d="$tmp/run-$where"
  mkdir "$d" || exit 99
  if grep -q '^def test_' "$b"; then
    cp "$b" "$d/test_block.py"
    (cd "$d" && python -m pytest -q -p no:cacheprovider test_block.py) > "$d.log" 2>&1 || { cat "$d.log"; fail "$where (pytest)"; }
  else
    (cd "$d" && python "$b") > "$d.log" 2>&1 || { cat "$d.log"; fail "$where"; }
  fi
  echo "ran   $where ($(wc -l < "$b") lines)"; ran=$((ran + 1))
done
[ $ran -ge 3 ] || fail "only $ran Python blocks ran"

# the source copy leaves out what a build in place wrote
mkdir -p "$tmp/tree/sub" && cp "$src/setup.py" "$tmp/tree/" || exit 99
: > "$tmp/tree/config.status"; : > "$tmp/tree/Makefile.in"; : > "$tmp/tree/Makefile"; : > "$tmp/tree/x.o"
: > "$tmp/tree/sub/Makefile"; : > "$tmp/tree/keep.c"
cp "$top/.libs/attncheck" "$tmp/tree/prog" 2> /dev/null || cp "$top/attncheck" "$tmp/tree/prog"
printf '#! /bin/sh\n# prog - temporary wrapper script for .libs/prog\n' > "$tmp/tree/wrap" && chmod +x "$tmp/tree/wrap" "$tmp/tree/prog"
left=$(cd "$tmp/tree" && python -c '
import os, sys
sys.argv = ["setup.py", "--version"]
src = open("setup.py").read().split("\nsetup(")[0]
ns = {"__file__": os.path.abspath("setup.py"), "__name__": "x"}
exec(src, ns)
out = []
for d, dirs, files in os.walk("."):
    gone = ns["_ignore"](os.path.abspath(d), dirs + files)
    out += [os.path.join(d, n)[2:] for n in sorted(gone)]
print(" ".join(sorted(out)))')
[ "$left" = "Makefile config.status prog wrap x.o" ] || fail "setup.py leaves out '$left'"
echo "Python doc blocks: $ran ran, $skipped skipped; the source copy leaves out: $left"
exit 0
