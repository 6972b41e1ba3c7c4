#!/bin/sh
# tcmd_oracle_cache.sh: a damaged oracle cache never changes a verdict. With every entry's
# payload altered (one byte flipped, a block overwritten) or truncated, `check` prints the
# same verdicts and exit code as with a sound cache, and one warning line for the whole run;
# the recomputed entries replace the bad ones (the next run is silent).
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tcache-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=$tmp/cache
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$bin" gen --out "$tmp/a.npz" --t 40 --dk 16 --mask causal --seed 5 >/dev/null || exit 99
"$bin" gen --out "$tmp/b.npz" --t 33 --dk 8 --seed 6 >/dev/null || exit 99
run() {   # run NAME: check both cases with a correct and a wrong kernel
  "$bin" check --kernel naive-f32 --kernel mutant-fast-exp "$tmp/a.npz" "$tmp/b.npz" >"$tmp/$1.out" 2>"$tmp/$1.err"
  echo $? >"$tmp/$1.rc"
}
ATTNCHECK_CACHE=off run ref
run first
cmp -s "$tmp/ref.out" "$tmp/first.out" || fail "a fresh cache changes the verdicts"
n=$(ls "$ATTNCHECK_CACHE" | grep -c '\.acor$')
test "$n" = 2 || fail "expected 2 cache entries, found $n"

# same_verdicts WHAT: the run matches the reference, with exactly one warning line
same_verdicts() {
  run damaged
  cmp -s "$tmp/ref.out" "$tmp/damaged.out" || { fail "$1: the verdicts changed"; diff "$tmp/ref.out" "$tmp/damaged.out" | sed 's/^/  | /'; }
  cmp -s "$tmp/ref.rc" "$tmp/damaged.rc" || fail "$1: exit $(cat "$tmp/damaged.rc"), expected $(cat "$tmp/ref.rc")"
  w=$(grep -c 'oracle cache entry' "$tmp/damaged.err")
  l=$(wc -l <"$tmp/damaged.err")
  test "$w" = 1 && test "$l" = 1 || { fail "$1: $w warnings in $l stderr lines, expected one"; sed 's/^/  | /' "$tmp/damaged.err"; }
  run again
  cmp -s "$tmp/ref.out" "$tmp/again.out" || fail "$1: the run after the recomputation differs"
  test -s "$tmp/again.err" && { fail "$1: the bad entries were not replaced"; sed 's/^/  | /' "$tmp/again.err"; }
}

# flip_byte FILE OFFSET
flip_byte() {
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf %03o $((b ^ 16)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

for f in "$ATTNCHECK_CACHE"/*.acor; do
  size=$(wc -c <"$f")
  flip_byte "$f" $((size / 2))
done
same_verdicts "one payload byte flipped in each entry"

for f in "$ATTNCHECK_CACHE"/*.acor; do
  size=$(wc -c <"$f")
  head -c 4096 /dev/zero | tr '\0' '\377' | dd of="$f" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
done
same_verdicts "4 KiB of each entry overwritten with NaN bits"

for f in "$ATTNCHECK_CACHE"/*.acor; do
  size=$(wc -c <"$f")
  head -c $((size - 100)) "$f" >"$f.cut" && mv "$f.cut" "$f"
done
same_verdicts "each entry truncated"

test "$fails" = 0 || exit 1
echo "ok"
