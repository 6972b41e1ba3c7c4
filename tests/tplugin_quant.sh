#!/bin/sh
# tplugin_quant.sh: plugins and quantized tensors (ABI 5, kernels/attncheck_kernel.h): a plugin that
# declares kv_formats and q_formats gets the raw codes and scales (tensors.quant) and PASSes on q8_0,
# e4m3fn per head with an fp8 Q, and int8 with zero points, `list` shows its formats, suite ci runs
# its formats' quantized cases; reading the codes without their scales FAILs; quantized layouts read from
# quant_spec PASS and a packing the plugin's supports() refuses SKIPs; a plugin that quantizes its own
# cache PASSes and one rounding ties away is STORE-FAIL; a plugin of ABI 5 that
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
# quantized layouts (ATTNCHECK_FEAT_QUANT_LAYOUT): read from problem.quant_spec as the header describes them
for spec in int4:group:16:packed=low:zero=f16 int2:tile:3x32:scale=bf16:packed=low uint8:channel:4:zero=f32 \
    int8:group:32:scale=f16 e4m3fn:tile:2x16:scale=f16; do
  "$bin" gen -o "$tmp/l.npz" --tq 6 --tk 13 --dk 32 --heads 2 --kv-format "$spec" --seed 6 >/dev/null || exit 99
  l=$(first "$so:quant-layout-f64" "$tmp/l.npz")
  case "$l" in PASS*) ;; *) fail "quant-layout-f64 on $spec: $l" ;; esac
  l=$(first "$so:quant-f64" "$tmp/l.npz")   # a plugin that does not declare the layouts never gets them
  case "$l" in SKIP*) ;; *) fail "quant-f64 on $spec: $l, expected SKIP" ;; esac
done
"$bin" gen -o "$tmp/h.npz" --tq 6 --tk 13 --dk 32 --kv-format int4:packed=high --seed 6 >/dev/null || exit 99
l=$(first "$so:quant-layout-f64" "$tmp/h.npz")
case "$l" in SKIP*"packed high bits first"*) ;; *) fail "quant-layout-f64 on high-first packing: $l" ;; esac
# quantize-on-store (ATTNCHECK_FEAT_QUANT_STORE): the store judged exactly, the attention over it
"$bin" gen -o "$tmp/s.npz" --tq 6 --tk 13 --dk 32 --kv-format e4m3fn:token:store=absmax-even-f32-sat --seed 7 >/dev/null || exit 99
"$bin" gen -o "$tmp/st.npz" --tq 6 --tk 13 --dk 32 --kv-format e4m3fn:token:store=absmax-even-f32-sat --kv-adversary ties \
  --seed 7 >/dev/null || exit 99
for c in s st; do
  l=$(first "$so:quant-store-f64" "$tmp/$c.npz")
  case "$l" in PASS*) ;; *) fail "quant-store-f64 on $c: $l" ;; esac
done
l=$(first "$so:quant-store-away" "$tmp/st.npz")
case "$l" in FAIL*STORE-FAIL*) ;; *) fail "quant-store-away on ties: $l, expected STORE-FAIL" ;; esac
l=$(first "$so:quant-f64" "$tmp/s.npz")
case "$l" in SKIP*quant_store*) ;; *) fail "quant-f64 on a store case: $l" ;; esac
"$bin" suite --kernel "$so:quant-f64" --suite ci --verbose >"$tmp/suite" 2>&1
grep -q "PASS .*f32-quant-" "$tmp/suite" || fail "suite ci ran no quantized case: $(tail -3 "$tmp/suite")"
grep "f32-quant-" "$tmp/suite" | grep -q "^FAIL" && fail "suite ci: a quantized case FAILs: $(grep '^FAIL.*quant' "$tmp/suite" | head -2)"
[ "$fails" = 0 ] && echo "ok" || exit 1
