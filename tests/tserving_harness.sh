#!/bin/sh
# tserving_harness.sh: memory a paged kernel must not read shows when it is read (docs/layouts.md
# "The harness"). test-paged-poison PASSes only when, on every run of a paged case, the block-table
# entries past each sequence's pages are -1 and pages -1 and num_pages of k and v (what those ids
# address) hold NaN, here at a page stride (256 slots x 4 kv heads x d 64) far past the guard of a
# dense tensor; mutant-block-table-past-end, which dereferences the entry after a full last page,
# FAILs there (NaN from page -1) while flash-varlen-f32 PASSes.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d /tmp/attncheck-srvh-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
"$bin" gen -o "$tmp/p.npz" --seqlens-q 1,2,1 --cache-seqlens 512,100,3 --page-size 256 --heads 8 --kv-heads 4 --dk 64 \
  --extra-cols 1 --spare-pages 1 --shuffle-pages --seed 3 > /dev/null || exit 99
"$bin" gen -o "$tmp/q.npz" --seqlens-q 2,1 --cache-seqlens 48,7 --page-size 16 --heads 2 --kv-heads 1 --dk 8 \
  --seed 4 > /dev/null || exit 99
for c in p q; do
  out=$("$bin" check --kernel test-paged-poison "$tmp/$c.npz" 2>&1)
  rc=$?
  [ $rc -eq 0 ] || { echo "FAIL: test-paged-poison on $c.npz (exit $rc): $out"; bad=1; }
done
"$bin" check --kernel flash-varlen-f32 "$tmp/p.npz" > "$tmp/ok.txt" 2>&1 || { echo "FAIL: flash-varlen-f32"; cat "$tmp/ok.txt"; bad=1; }
out=$("$bin" check --kernel mutant-block-table-past-end "$tmp/p.npz" 2>&1)
rc=$?
if [ $rc -ne 1 ] || ! echo "$out" | grep -q '^FAIL .*nan where exact is finite'; then
  echo "NOT EXPOSED: mutant-block-table-past-end (exit $rc): $out"; bad=1
fi
[ $bad -eq 0 ] && echo "ok: unused block-table entries are -1 and pages -1 and num_pages of k and v hold NaN"
exit $bad
