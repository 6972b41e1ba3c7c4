#!/bin/sh
# tcmd_layouts.sh: the serving layouts end to end (docs/layouts.md). The correct varlen/paged
# kernels (flash-varlen-f32, flash-varlen-bf16) pass every layout case of `suite ci`; each layout
# mutant FAILs some, with an OUT-OF-SEQUENCE verdict that names the sequence and what it read
# (key token, or page and slot); and a kernel that does not declare the layouts SKIPs them.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-lay-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
for k in flash-varlen-f32 flash-varlen-bf16; do
  out=$("$bin" suite --suite ci --kernel "$k" -q 2>&1)
  rc=$?
  echo "$out" | tail -n 1
  [ $rc -eq 0 ] || { echo "FAIL: $k: suite ci exited $rc"; echo "$out" | grep -v '^SKIP' | head -n 20; bad=1; }
  # the 17 layout cases and the 2 varlen backward cases of the kernel's dtype (docs/backward.md §7)
  echo "$out" | grep -q "suite ci: $k: 19 pass, 0 warn, 0 fail" || { echo "FAIL: $k: not 19 layout cases passed"; bad=1; }
done
for m in mutant-cu-seqlens-off-by-one mutant-prev-seq-boundary mutant-last-page-whole mutant-block-table-row \
         mutant-zero-length-seq mutant-page-count; do
  "$bin" suite --suite ci --kernel "$m" > "$tmp/$m.txt" 2>&1
  rc=$?
  line=$(grep -m1 'read \(key token [0-9]*\|page [0-9]* slot [0-9]*\|query token [0-9]* of sequence [0-9]*\)' "$tmp/$m.txt")
  if [ $rc -ne 1 ] || ! grep -q '^FAIL .*OUT-OF-SEQUENCE' "$tmp/$m.txt" || [ -z "$line" ]; then
    echo "NOT EXPOSED: $m (exit $rc)"; grep -v '^SKIP\|^PASS' "$tmp/$m.txt" | head -n 8; bad=1
  else
    echo "exposed: $m:$(echo "$line" | cut -d';' -f1)"
  fi
done
out=$("$bin" suite --verbose --suite ci --kernel flash-f32 2>&1 | grep 'varlen-mix')
echo "$out" | grep -q '^SKIP .*does not declare varlen' || { echo "FAIL: flash-f32 does not SKIP the layout cases: $out"; bad=1; }
# the verdict alone: a last-page read masked after P.V leaks only NaN (the value is right
# wherever the slots hold finite numbers): OUT-OF-SEQUENCE, and FAIL from the NaN
"$bin" gen --out "$tmp/p.npz" --cache-seqlens 20,3 --seqlens-q 2,1 --page-size 16 --dk 8 --shuffle-pages --spare-pages 1 >/dev/null || exit 99
out=$("$bin" check --kernel mutant-last-page-whole "$tmp/p.npz" 2>&1)
rc=$?
echo "$out" | head -n 2
[ $rc -eq 1 ] && echo "$out" | grep -q "OUT-OF-SEQUENCE" && echo "$out" | grep -q "sequence 0 (head 0, query [01]) read page [0-9]* slot 15" ||
  { echo "FAIL: check of mutant-last-page-whole (exit $rc)"; bad=1; }
out=$("$bin" check --kernel flash-varlen-f32 "$tmp/p.npz" 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "^PASS" || { echo "FAIL: flash-varlen-f32 on $tmp/p.npz (exit $rc): $out"; bad=1; }
exit $bad
