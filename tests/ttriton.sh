#!/bin/sh
# ttriton.sh: Triton attention kernels of PyPI packages judged through Triton's interpreter
# (TRITON_INTERPRET=1, CPU; docs/triton.md). For each worker whose kernel imports in a python that
# has triton and torch (ATTNCHECK_TRITON_PYTHON, python3, /usr/bin/python3; `--probe` decides), two
# tiny cases: a correct one that must PASS and the stored reproducer of the kernel's defect that must
# FAIL (exit 1), so a worker or judge that passes everything fails this test:
#   triton-vllm-unified  vLLM's unified attention: f16 causal-bottom-right GQA, tq != tk, over pages;
#                        tests/data/triton_vllm_window_symmetric.npz (a non-causal window: V zeroed
#                        from the first query of each block)
#   triton-fa2           flash-attn-triton: f16 causal; tests/data/triton_fa2_bwd_scaled_k.npz (its
#                        backward rounds K * scale/ln 2 to f16: dV past the fp16-fa2 bound)
# SKIP (77) when no python has triton, torch and one of the kernel packages (CI installs none: they
# are large).
set -u
src=$(cd "${srcdir:-.}" && pwd) || exit 99
top=$(cd "${abs_top_builddir:-.}" && pwd) || exit 99
bin=$top/attncheck
[ -x "$bin" ] || { echo "FAIL: $bin was not built"; exit 1; }
tmp=$(mktemp -d /tmp/attncheck-ttriton-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off TMPDIR="$tmp"
fail() { echo "FAIL: $*"; exit 1; }
wdir=$src/python/attncheck/worker

# find_python WORKER: the first python whose --probe of the worker succeeds
find_python() {
  for c in "${ATTNCHECK_TRITON_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$c" ] || continue
    "$c" -c 'import triton, torch, numpy' > /dev/null 2>&1 || continue
    if v=$("$c" "$wdir/$1.py" --probe 2> "$tmp/probe.err"); then echo "$c"; echo "$1: $c: $v" >&2; return 0; fi
    echo "$1: $c: $(tail -n 1 "$tmp/probe.err")" >&2
  done
  return 1
}

# expect RC LOG ARGS...: runs attncheck, requires exit RC and its verdict line
expect() {
  want=$1 log=$2
  shift 2
  "$bin" "$@" > "$log" 2>&1
  rc=$?
  cat "$log"
  [ "$rc" -eq "$want" ] || fail "attncheck $* exited $rc, not $want"
}

ran=0
if py=$(find_python triton_vllm); then
  k="exec-persistent:$py $wdir/triton_vllm.py"
  "$bin" gen -o "$tmp/v.npz" --dtype f16 --mask causal-bottom-right --tq 5 --tk 37 --dk 16 --heads 4 --kv-heads 2 \
    --seed 1 > /dev/null || fail "gen"
  expect 0 "$tmp/v1.log" check --kernel "$k" "$tmp/v.npz"
  grep -q '^PASS' "$tmp/v1.log" || fail "triton-vllm-unified does not PASS a plain causal case"
  expect 1 "$tmp/v2.log" check --kernel "$k" "$src/tests/data/triton_vllm_window_symmetric.npz"
  grep -q '^FAIL .* FAIL err/W=' "$tmp/v2.log" || fail "the symmetric-window defect is not a FAIL beyond the budget"
  ran=1
fi
if py=$(find_python triton_fa2); then
  k="exec-persistent:$py $wdir/triton_fa2.py"
  "$bin" gen -o "$tmp/f.npz" --dtype f16 --mask causal --t 32 --dk 16 --seed 1 > /dev/null || fail "gen"
  expect 0 "$tmp/f1.log" check --kernel "$k" "$tmp/f.npz"
  grep -q '^PASS' "$tmp/f1.log" || fail "triton-fa2 does not PASS a plain causal case"
  expect 1 "$tmp/f2.log" check --grad --kernel "$k" "$src/tests/data/triton_fa2_bwd_scaled_k.npz"
  grep -q '^FAIL .* dv err/W=' "$tmp/f2.log" || fail "the scaled-K backward defect is not a FAIL"
  ran=1
fi
[ $ran = 1 ] || { echo "SKIP: no python with triton, torch and vllm or flash-attn-triton (docs/triton.md)"; exit 77; }
exit 0
