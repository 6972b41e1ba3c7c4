#!/bin/sh
# tworker.sh FRAMEWORK: a framework's exec worker (python -m attncheck.worker FRAMEWORK,
# docs/frameworks.md) on a few generated cases, each judged under the worker's own declaration:
# f32 causal with GQA, f16 bottom-right causal with tq < tk (a chunk after a cache), f32, f16 and
# bf16 bottom-right causal with tq > tk (rows with no visible key: each framework's empty-row
# convention, declared), and an explicit scale. Every case must PASS or SKIP (the worker refuses
# what it does not take); then the same worker judged under the opposite empty-row convention must
# FAIL (the declaration is what makes those rows pass), and `list` shows the declaration.
# SKIP (77) without a python3 that imports numpy and the framework (ATTNCHECK_TEST_PYTHON names one:
# the frameworks are large and not Debian packages; docs/frameworks.md says how they were installed).
# tests/tworker_torch.sh ... call it with each name.
set -u
fw=${1:?usage: tworker.sh torch|jax|mlx|onnxruntime|openvino}
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
src=$(cd "${srcdir:-.}" && pwd) || exit 99
A=$top/attncheck
case $fw in
torch) mod=torch ;; jax) mod=jax ;; mlx) mod=mlx.core ;; onnxruntime) mod="onnxruntime, onnx" ;; openvino) mod=openvino ;;
*) echo "tworker.sh: unknown framework $fw"; exit 99 ;;
esac
py=
for c in "${ATTNCHECK_TEST_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$c" ] || continue
  if "$c" -c "import numpy, $mod" > /dev/null 2>&1; then py=$c; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with numpy and $mod (ATTNCHECK_TEST_PYTHON=PATH names one)"; exit 77; }
tmp=$(mktemp -d /tmp/attncheck-tworker-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off TMPDIR="$tmp"
fail() { echo "FAIL: $*"; exit 1; }
W="exec-persistent:$py $src/python/attncheck/worker/__main__.py $fw"
g() { n=$1; shift; "$A" gen -o "$tmp/$n.npz" --seed 7 --dk 16 "$@" > /dev/null 2>&1 || fail "gen $n $*"; }
g f32gqa --dtype f32 --mask causal --t 24 --heads 4 --kv-heads 2
g f16chunk --dtype f16 --mask causal-bottom-right --tq 5 --tk 40 --heads 2
g f32empty --dtype f32 --mask causal-bottom-right --tq 9 --tk 4 --heads 2
g f16empty --dtype f16 --mask causal-bottom-right --tq 9 --tk 4 --heads 2
g bf16empty --dtype bf16 --mask causal-bottom-right --tq 9 --tk 4 --heads 2
g f32scale --dtype f32 --t 16 --scale 0x1p-3
# one worker for every case (a framework's import takes seconds); exit 0: each PASS or SKIP
out=$(cd "$tmp" && "$A" check --kernel "$W" f32gqa.npz f16chunk.npz f32empty.npz f16empty.npz bf16empty.npz f32scale.npz 2>&1)
rc=$?
echo "$out" | grep '^PASS\|^SKIP\|^FAIL\|^WARN\|^ERROR' | sed 's#exec-persistent:[^ ]* [^ ]*__main__.py#worker#'
[ $rc -eq 0 ] || { echo "$out"; fail "$fw: check exited $rc"; }
[ "$(echo "$out" | grep -c '^PASS\|^SKIP')" -eq 6 ] || { echo "$out"; fail "$fw: not 6 cases PASS or SKIP"; }
# --help: the worker's own options, --dtype among them (torch: --backend auto, the default)
h=$("$py" "$src/python/attncheck/worker/__main__.py" "$fw" --help 2>&1) || fail "$fw --help: $h"
echo "$h" | grep -q -- '--dtype' || fail "$fw --help lists no --dtype: $h"
[ "$fw" != torch ] || echo "$h" | grep -q -- 'auto (default)' || fail "torch --help: $h"
decl=$("$A" list --kernel "$W" 2>&1) || fail "list: $decl"
conv=$(echo "$decl" | sed -n 's/.*empty rows \([a-z-]*\).*/\1/p' | head -n 1)
echo "declared empty rows: ${conv:-undeclared (zero)}"
other=mean-v
[ "$conv" = mean-v ] && other=zero
out=$("$A" check --kernel "$W" --empty-rows "$other" "$tmp/f32empty.npz" 2>&1) && fail "$fw under --empty-rows $other passed: $out"
echo "$out" | grep -q 'empty rows: ' || fail "$fw under --empty-rows $other: $out"
echo "$fw: every case PASS or SKIP under its declaration; --empty-rows $other FAILs its empty rows"
exit 0
