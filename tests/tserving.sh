#!/bin/sh
# tserving.sh: the split-KV and serving-layout defects of docs/bugclasses.md §2.25-2.26 at the
# kernel boundary.
# - Memory a paged kernel must not read shows when it is read (docs/layouts.md "The harness"):
#   test-paged-poison PASSes only when, on every run of a paged case, the block-table entries past
#   each sequence's pages are -1 and pages -1 and num_pages of k and v (what those ids address)
#   hold NaN, here at a page stride (256 slots x 4 kv heads x d 64) far past the guard of a dense
#   tensor; mutant-block-table-past-end, which dereferences the entry after a full last page,
#   FAILs there (NaN from page -1) while flash-varlen-f32 PASSes.
# - Each mutant is wrong only in its mechanism: it FAILs on a case with its trigger and PASSes on
#   the same kind of case without it (one split of keys or no later maximum; no sink; page size
#   64 without GQA or GQA at page size 32; ids below 65,536; no full last page).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d /tmp/attncheck-srv-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
bad=0
g() { n=$1; shift; "$bin" gen -o "$tmp/$n.npz" "$@" > /dev/null || { echo "gen $n failed"; exit 99; }; }
# expect STATUS KERNEL CASE: the first word of check's line
expect() {
  out=$("$bin" check --kernel "$2" "$tmp/$3.npz" 2>&1 | head -n 2)
  case "$out" in
  "$1 "*) echo "ok: $1 $2 $3";;
  *) echo "WRONG: $2 on $3: expected $1, got: $out"; bad=1;;
  esac
}
g p --seqlens-q 1,2,1 --cache-seqlens 512,100,3 --page-size 256 --heads 8 --kv-heads 4 --dk 64 --extra-cols 1 \
  --spare-pages 1 --shuffle-pages --seed 3
g q --seqlens-q 2,1 --cache-seqlens 48,7 --page-size 16 --heads 2 --kv-heads 1 --dk 8 --seed 4
expect PASS test-paged-poison p
expect PASS test-paged-poison q
expect PASS flash-varlen-f32 p
expect FAIL mutant-block-table-past-end p
g partial --seqlens-q 1,2,1 --cache-seqlens 500,100,3 --page-size 256 --heads 8 --kv-heads 4 --dk 64 --extra-cols 1 --seed 3
expect PASS mutant-block-table-past-end partial
# a later split (keys 1024 on) 120 logits above the first; a sink at the rows' level
g one --tq 3 --tk 1000 --dk 16 --sinks level --seed 5
g long --tq 3 --tk 2500 --dk 16 --sinks level --seed 5
g plain --tq 3 --tk 2500 --dk 16 --seed 5
for k in mutant-splitkv-first-max mutant-splitkv-sink-per-split; do expect PASS "$k" one; done
expect FAIL mutant-splitkv-sink-per-split long
expect PASS mutant-splitkv-sink-per-split plain
expect PASS mutant-splitkv-first-max long
for k in mutant-splitkv-first-max mutant-splitkv-sink-per-split splitkv-f32; do
  out=$("$bin" suite --kernel "$k" --case f32-2x3000-d16-none-splitstep -q 2>&1 | tail -n 1)
  want="0 fail"; [ "$k" = mutant-splitkv-first-max ] && want="1 fail"
  case "$out" in *"$want"*) echo "ok: $k splitstep: $want";; *) echo "WRONG: $k on the splitstep case: $out"; bad=1;; esac
done
# page size 64 with GQA; the same without GQA, and GQA at page size 32
g p64gqa --seqlens-q 1,2 --cache-seqlens 100,30 --page-size 64 --heads 4 --kv-heads 2 --dk 16 --shuffle-pages --seed 6
g p64 --seqlens-q 1,2 --cache-seqlens 100,30 --page-size 64 --heads 2 --kv-heads 2 --dk 16 --shuffle-pages --seed 6
g p32gqa --seqlens-q 1,2 --cache-seqlens 100,30 --page-size 32 --heads 4 --kv-heads 2 --dk 16 --shuffle-pages --seed 6
expect FAIL mutant-gqa-page64-last-page p64gqa
expect PASS mutant-gqa-page64-last-page p64
expect PASS mutant-gqa-page64-last-page p32gqa
expect FAIL mutant-last-page-whole p32gqa
# page ids below 65,536 (the suite's f32-paged-high-ids case has them above)
expect PASS mutant-block-id-u16 p64gqa
out=$("$bin" suite --kernel mutant-block-id-u16 --case f32-paged-high-ids -q 2>&1)
echo "$out" | grep -q '^FAIL .*OUT-OF-SEQUENCE' || { echo "WRONG: mutant-block-id-u16 on f32-paged-high-ids: $out"; bad=1; }
exit $bad
