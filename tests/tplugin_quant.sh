#!/bin/sh
# tplugin_quant.sh: plugins and quantized tensors (ABI 5, kernels/attncheck_kernel.h): a plugin that
# declares kv_formats and q_formats gets the raw codes and scales (tensors.quant) and PASSes on q8_0,
# e4m3fn per head with an fp8 Q, and int8 with zero points, `list` shows its formats, suite ci runs
# its formats' quantized cases; reading the codes without their scales FAILs; a plugin of ABI 5 that
# declares no format, one built against the header before the formats (tests/abi5) and a version 4
# plugin all load, run plain cases, and SKIP quantized ones with the reason.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
so="$top/tests/.libs/tplugin_quant.so"
v5="$top/tests/abi5/.libs/myplugin_v5.so"
v4="$top/tests/abi4/.libs/myplugin_v4.so"
for f in "$so" "$v5" "$v4"; do [ -f "$f" ] || { echo "plugin not built: $f"; exit 99; }; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tplugq-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
first() { "$bin" check --kernel "$1" "$2" 2>&1 | head -1; }

"$bin" list --kernel "$so" >"$tmp/list" 2>&1 || fail "list --kernel: $(cat "$tmp/list")"
grep -q "kv formats q8_0,e4m3fn,int8; q formats e4m3fn" "$tmp/list" || fail "list lacks the formats: $(cat "$tmp/list")"
# a kernel refusing quantized V (and so the quantized probe) is probed dense first: its dtypes show
grep -A1 '^  quant-k-only ' "$tmp/list" | grep -q "dtypes f32; masks none" || fail "list of quant-k-only: $(cat "$tmp/list")"
"$bin" gen -o "$tmp/plain.npz" --tq 8 --tk 24 --dk 32 --seed 2 >/dev/null || exit 99
"$bin" gen -o "$tmp/q8.npz" --tq 12 --tk 40 --dk 64 --heads 4 --kv-heads 2 --mask causal --kv-format q8_0 --seed 3 >/dev/null || exit 99
"$bin" gen -o "$tmp/e4.npz" --tq 12 --tk 40 --dk 32 --heads 2 --kv-format e4m3fn:head --q-format e4m3fn:head --seed 4 >/dev/null || exit 99
"$bin" gen -o "$tmp/i8.npz" --tq 12 --tk 40 --dk 32 --kv-format int8 --seed 5 >/dev/null || exit 99
"$bin" gen -o "$tmp/q4.npz" --tq 12 --tk 40 --dk 32 --kv-format q4_0 --seed 5 >/dev/null || exit 99
for c in plain q8 e4 i8; do
  l=$(first "$so:quant-f64" "$tmp/$c.npz")
  case "$l" in PASS*) ;; *) fail "quant-f64 on $c: $l" ;; esac
done
for c in q8 e4 i8; do
  l=$(first "$so:quant-no-scale" "$tmp/$c.npz")
  case "$l" in FAIL*) ;; *) fail "quant-no-scale on $c: $l, expected FAIL" ;; esac
done
l=$(first "$so:quant-f64" "$tmp/q4.npz")
case "$l" in SKIP*"does not declare q4_0"*) ;; *) fail "quant-f64 on q4_0: $l" ;; esac
for k in "$so:quant-undeclared" "$v5:myplugin-v5-f32" "$v4:myplugin-v4-f32"; do
  l=$(first "$k" "$tmp/plain.npz")
  case "$l" in PASS*) ;; *) fail "$k on a plain case: $l" ;; esac
  l=$(first "$k" "$tmp/q8.npz")
  case "$l" in SKIP*"declares no quantized format"*) ;; *) fail "$k on a quantized case: $l" ;; esac
done
"$bin" suite --kernel "$so:quant-f64" --suite ci --verbose >"$tmp/suite" 2>&1
grep -q "PASS .*f32-quant-" "$tmp/suite" || fail "suite ci ran no quantized case: $(tail -3 "$tmp/suite")"
grep "f32-quant-" "$tmp/suite" | grep -q "^FAIL" && fail "suite ci: a quantized case FAILs: $(grep '^FAIL.*quant' "$tmp/suite" | head -2)"
[ "$fails" = 0 ] && echo "ok" || exit 1
