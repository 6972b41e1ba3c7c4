#!/bin/sh
# defects_before_after.sh: the findings and defects two builds of attncheck report for the same
# campaigns (docs/fuzzing.md "Defects, measured"). For each kernel and seed, both binaries run the
# campaign bench/mutants --defects runs (one job, seed 1000+s, findings minimized, MASKED-LEAK and
# WEAK-CLASS with policy fail, --timeout 20) side by side, so that both see the same load; then
# one line per kernel: the findings and defects each printed in its summary, median [per seed].
# An attncheck that predates defects prints "K distinct defects (grouped by mechanism)"; one with
# them "K defects (F with policy fail)"; both are read as K, every policy counted.
#   bench/defects_before_after.sh BEFORE_BIN AFTER_BIN SECONDS SEEDS KERNEL...
# SECONDS: each campaign's --time (0: --cases 300 instead).
set -u
[ $# -ge 5 ] || { echo "usage: bench/defects_before_after.sh BEFORE_BIN AFTER_BIN SECONDS SEEDS KERNEL..." >&2; exit 2; }
before=$1 after=$2 secs=$3 seeds=$4
shift 4
tmp=$(mktemp -d /tmp/attncheck-ba-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
if [ "$secs" = 0 ]; then bound="--cases 300"; else bound="--time ${secs}s"; fi
run() {   # run BIN DIR SEED KERNEL
  # shellcheck disable=SC2086
  "$1" fuzz --kernel "$4" $bound --jobs 1 --seed "$3" --timeout 20 --policy masked-leak=fail \
    --policy weak-class=fail --no-live --out "$2" > "$2.txt" 2>&1
}
# count FILE: "findings defects" from a summary
count() {
  f=$(sed -n 's/^findings in .*: \([0-9]*\) (.*/\1/p; s/^\([0-9]*\) findings\{0,1\} (.* in .*\/findings$/\1/p' "$1" | tail -n 1)
  d=$(sed -n 's/.*, \([0-9]*\) distinct defects\{0,1\} (grouped by mechanism)$/\1/p; s/^\([0-9]*\) defects\{0,1\} ([0-9]* with policy fail) in .*/\1/p' "$1" | tail -n 1)
  echo "${f:-0} ${d:-0}"
}
med() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '%-40s | %-24s | %-24s | %-24s | %s\n' kernel "findings before" "findings after" "defects before" "defects after"
for k in "$@"; do
  fb="" fa="" db="" da=""
  s=0
  while [ $s -lt "$seeds" ]; do
    run "$before" "$tmp/b$s" $((1000 + s)) "$k" &
    pb=$!
    run "$after" "$tmp/a$s" $((1000 + s)) "$k"
    wait $pb
    # shellcheck disable=SC2046
    set -- $(count "$tmp/b$s.txt"); fb="$fb $1" db="$db $2"
    # shellcheck disable=SC2046
    set -- $(count "$tmp/a$s.txt"); fa="$fa $1" da="$da $2"
    rm -rf "$tmp/b$s" "$tmp/a$s"
    s=$((s + 1))
  done
  printf '%-40s | %-24s | %-24s | %-24s | %s\n' "$k" "$(echo "$fb" | med) [${fb# }]" "$(echo "$fa" | med) [${fa# }]" \
    "$(echo "$db" | med) [${db# }]" "$(echo "$da" | med) [${da# }]"
done
