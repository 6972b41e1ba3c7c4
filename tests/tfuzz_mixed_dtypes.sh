#!/bin/sh
# tfuzz_mixed_dtypes.sh: the fuzz family mixed_dtypes (per-tensor dtypes at each format's
# extremes) is drawn only for kernels that declare mixed_dtypes with one of its combinations:
# correct kernels (flash-e4m3: fp8 with a wider output; naive-f32: f16/bf16 K and V) give no
# finding, mutant-kv-bf16-as-f16 is found, and flash-f16 (no mixed_dtypes) is refused (exit 2).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
tmp=$(mktemp -d /tmp/attncheck-fmix-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
for k in flash-e4m3 naive-f32; do
  "$bin" fuzz --kernel $k --families mixed_dtypes --cases 24 --seed 3 --out "$tmp/$k" --no-minimize --no-live > "$tmp/$k.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q "0 findings" "$tmp/$k.txt" || { echo "FAIL: $k: exit $rc"; cat "$tmp/$k.txt"; fail=1; }
done
"$bin" fuzz --kernel mutant-kv-bf16-as-f16 --families mixed_dtypes --cases 24 --seed 3 --out "$tmp/m" --no-minimize --no-live > "$tmp/m.txt" 2>&1
ls "$tmp/m/findings" 2>/dev/null | grep -q "mutant-kv-bf16-as-f16__FAIL__mixed_dtypes" || { echo "FAIL: the mutant was not found"; cat "$tmp/m.txt"; fail=1; }
"$bin" fuzz --kernel flash-f16 --families mixed_dtypes --cases 4 --out "$tmp/f16" --no-live > "$tmp/f16.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "declares none of the attention variants of families mixed_dtypes" "$tmp/f16.txt" || { echo "FAIL: flash-f16: exit $rc"; cat "$tmp/f16.txt"; fail=1; }
[ $fail -eq 0 ] && echo "mixed_dtypes family: drawn where declared, mutant found"
exit $fail
