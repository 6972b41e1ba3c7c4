#!/bin/sh
# bench/layout_decode.sh [ATTNCHECK] [KERNEL]: the serving-layout acceptance case (docs/layouts.md):
# a paged decode batch of 64 sequences (one query each) with cache lengths up to 131,072
# (131072 / 2^(b mod 8) - b), page size 16, pages shuffled among 64 spare ones, bf16, 8 query
# heads on 1 kv head, d = 64 (about 2.1 million cache slots, 540 MB). It is judged with the
# row-sampled oracle (--rows edges+16, 80 of 512 rows) on two cores (taskset 0,1 when
# available), from an empty oracle cache: the wall time, CPU time and peak memory of `check`
# (judged run, isolation runs and oracle), then of `oracle` alone.
set -u
bin=${1:-./attncheck}
kernel=${2:-flash-varlen-bf16}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-decode-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=$tmp/cache
export ATTNCHECK_CACHE
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0,1"
timer=""
[ -x /usr/bin/time ] && timer="/usr/bin/time -f %e_s_wall_%U_s_user_%S_s_sys_%M_kB_peak"
lens=$(awk 'BEGIN { for (b = 0; b < 64; b++) printf "%s%d", b ? "," : "", int(131072 / 2 ^ (b % 8)) - b }')
ones=$(awk 'BEGIN { for (b = 0; b < 64; b++) printf "%s1", b ? "," : "" }')
"$bin" gen -o "$tmp/decode.npz" --dtype bf16 --heads 8 --kv-heads 1 --dk 64 --seqlens-q "$ones" --cache-seqlens "$lens" \
  --page-size 16 --shuffle-pages --spare-pages 64 --seed 3 || exit 1
echo "check --kernel $kernel --rows edges+16 --threads 2:"
$timer $pin "$bin" check --kernel "$kernel" --rows edges+16 --threads 2 "$tmp/decode.npz" | cut -c1-160
echo "oracle --rows edges+16 --threads 2 --no-cache:"
$timer $pin "$bin" oracle --rows edges+16 --threads 2 --no-cache "$tmp/decode.npz"
