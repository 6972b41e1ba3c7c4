#!/bin/sh
# tcuda_lazy.sh: commands that need no CUDA kernel (--version, gen, info, oracle, check with a
# CPU kernel) never map libcudart; resolving a CUDA kernel, or list, does (the CUDA module is
# dlopen()ed then). Seen through the dynamic loader's own trace (LD_DEBUG=libs). SKIP without CUDA.
# A plugin kernel does not load it either.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
if [ "${ATTNCHECK_BUILT_CUDA:-no}" != yes ]; then
  echo "SKIP: CUDA not built"
  exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fail=0
# maps WANT CMD...: runs the command under LD_DEBUG=libs; WANT yes/no: libcudart is loaded.
# Exit 0 or 1 (a verdict) is expected.
maps() {
  want=$1
  shift
  LD_DEBUG=libs "$bin" "$@" >"$tmp/out" 2>"$tmp/trace"
  rc=$?
  if grep -q 'libcudart' "$tmp/trace"; then got=yes; else got=no; fi
  if [ "$rc" -gt 1 ]; then
    echo "FAIL: attncheck $*: exit $rc"; grep -v '^ *[0-9]*:' "$tmp/trace"; fail=1
  elif [ "$got" != "$want" ]; then
    echo "FAIL: attncheck $*: libcudart loaded: $got, expected $want"
    grep -m 3 'libcudart' "$tmp/trace"; fail=1
  else
    echo "ok: attncheck $*: libcudart loaded: $got"
  fi
}
maps no --version
maps no gen --out "$tmp/c.npz" --example tiny3
maps no info "$tmp/c.npz"
maps no oracle "$tmp/c.npz" -o "$tmp/exact.npz"
maps no check --kernel flash-f32 "$tmp/c.npz"
maps no check --kernel "${abs_top_builddir:-.}/tests/.libs/tplugin_multi.so:multi-zero" "$tmp/c.npz"
maps yes list
maps yes check --kernel cuda-naive-f32 "$tmp/c.npz"
exit $fail
