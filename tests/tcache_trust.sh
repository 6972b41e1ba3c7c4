#!/bin/sh
# tcache_trust.sh: the oracle cache's trust model. Its SHA-256 trailer detects damage, not forgery,
# so the cache is used only in the user's private directory: the default one is created with mode
# 0700; a group- or world-writable directory, one owned by another user or a symbolic link is not
# used (one line; the results are computed) unless ATTNCHECK_CACHE_SHARED=1 (never a symbolic
# link); an entry that is a symbolic link is not followed, and the store replaces the link, not its
# target. Every command that reads the cache takes --no-cache (check, suite, compare, oracle, fuzz,
# replay, merge), which also keeps the per-sequence results of layout cases out of it. The README
# says what the trailer does not protect against.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
tmp=$(mktemp -d /tmp/attncheck-tcache-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset ATTNCHECK_CACHE ATTNCHECK_CACHE_SHARED
check() { "$bin" check --kernel naive-f32 example:tiny3 "$@"; }
count() { find "$1" -name '*.acor' 2> /dev/null | wc -l; }

# 1. the default directory is created private
mkdir "$tmp/home"
HOME=$tmp/home check > "$tmp/1.txt" 2>&1 || { cat "$tmp/1.txt"; fail "check with the default cache: exit $?"; }
for d in .cache .cache/attncheck .cache/attncheck/oracle; do
  m=$(stat -c %a "$tmp/home/$d")
  [ "$m" = 700 ] || fail "$d created with mode $m, not 700"
done
[ "$(count "$tmp/home/.cache/attncheck/oracle")" -ge 1 ] || fail "nothing cached in the default directory"
echo "ok: the default cache directory is created with mode 0700 and used"

# 2. a group- or world-writable directory, another user's, a symbolic link: not used, one line
refused() {   # refused DIR WHY [SHARED]
  ATTNCHECK_CACHE=$1 ATTNCHECK_CACHE_SHARED=${3:-} check > "$tmp/2.txt" 2> "$tmp/2.err"
  rc=$?
  [ $rc -eq 0 ] && grep -q '^PASS ' "$tmp/2.txt" || { cat "$tmp/2.txt" "$tmp/2.err"; fail "$1: check exit $rc"; }
  [ "$(wc -l < "$tmp/2.err")" -eq 1 ] && grep -qF "oracle cache $1 $2: not used" "$tmp/2.err" ||
    { cat "$tmp/2.err"; fail "$1: not one line saying it $2"; }
}
mkdir -m 777 "$tmp/world" && chmod 777 "$tmp/world"
mkdir "$tmp/group" && chmod 770 "$tmp/group"
refused "$tmp/world" "is writable by its group or others"
refused "$tmp/group" "is writable by its group or others"
[ "$(count "$tmp/world")$(count "$tmp/group")" = 00 ] || fail "entries written into a shared directory"
ATTNCHECK_CACHE=$tmp/group ATTNCHECK_CACHE_SHARED=1 check > /dev/null 2> "$tmp/s.err" || fail "ATTNCHECK_CACHE_SHARED=1: exit $?"
[ ! -s "$tmp/s.err" ] && [ "$(count "$tmp/group")" -ge 1 ] || { cat "$tmp/s.err"; fail "ATTNCHECK_CACHE_SHARED=1 does not use the shared directory"; }
mkdir -m 700 "$tmp/real"
ln -s "$tmp/real" "$tmp/link"
refused "$tmp/link" "is a symbolic link"
refused "$tmp/link" "is a symbolic link" 1
[ "$(count "$tmp/real")" -eq 0 ] || fail "entries written through a symbolic link"
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
  mkdir -m 700 "$tmp/other" && chown nobody "$tmp/other"
  refused "$tmp/other" "is owned by another user"
  echo "ok: another user's directory is not used"
fi
echo "ok: group- and world-writable directories and symbolic links are not used (one line); SHARED=1 shares"

# 3. an entry that is a symbolic link is not followed; the store replaces the link
mkdir -m 700 "$tmp/own"
ATTNCHECK_CACHE=$tmp/own check > /dev/null 2>&1 || fail "check into a private cache"
entry=$(find "$tmp/own" -name '*.acor' | head -1)
cp "$entry" "$tmp/target"
chmod 600 "$tmp/target"
cp "$tmp/target" "$tmp/target.orig"
rm "$entry" && ln -s "$tmp/target" "$entry"
ATTNCHECK_CACHE=$tmp/own check > "$tmp/3.txt" 2> "$tmp/3.err" || { cat "$tmp/3.err"; fail "check with a linked entry: exit $?"; }
grep -q 'is a symbolic link; recomputing' "$tmp/3.err" || { cat "$tmp/3.err"; fail "a linked entry is used"; }
[ ! -L "$entry" ] && [ -f "$entry" ] || fail "the store did not replace the link by an entry"
cmp -s "$tmp/target" "$tmp/target.orig" || fail "the store wrote through the link"
echo "ok: a linked entry is not followed, and the store replaces the link, not its target"

# 4. --no-cache on every command that reads the cache: nothing is read or written
mkdir -m 700 "$tmp/nc"
export ATTNCHECK_CACHE=$tmp/nc
"$bin" gen -o "$tmp/v.npz" --dtype f32 --seqlens-q 3,2 --seqlens-k 4,5 --dk 4 --seed 3 > /dev/null || fail "gen varlen"
"$bin" gen -o "$tmp/d.npz" --dtype f32 --t 5 --dk 4 --seed 3 > /dev/null || fail "gen"
"$bin" fuzz --kernel mutant-cu-seqlens-off-by-one --cases 6 --out "$tmp/camp" --no-minimize --no-live --quiet --no-cache
[ $? -eq 1 ] || fail "fuzz --no-cache: expected a finding (exit 1)"
f=$(ls -d "$tmp"/camp/findings/* | head -1)
"$bin" check --no-cache --kernel flash-varlen-f32 "$tmp/v.npz" > /dev/null || fail "check --no-cache"
"$bin" suite --no-cache --kernel flash-varlen-f32 --case f32-varlen-mix > /dev/null || fail "suite --no-cache"
"$bin" oracle --no-cache "$tmp/v.npz" > /dev/null || fail "oracle --no-cache"
"$bin" replay --no-cache "$f" > /dev/null
"$bin" merge --no-cache "$tmp/camp" -o "$tmp/merged" > /dev/null
"$bin" compare --no-cache "$tmp/d.npz" "$tmp/d.npz" > /dev/null 2>&1
[ "$(count "$tmp/nc")" -eq 0 ] || fail "--no-cache: $(count "$tmp/nc") entries written"
for cmd in check suite compare oracle fuzz replay merge; do
  "$bin" $cmd --help | grep -q -- '--no-cache' || fail "$cmd --help does not list --no-cache"
done
"$bin" check --kernel flash-varlen-f32 "$tmp/v.npz" > /dev/null || fail "check"
[ "$(count "$tmp/nc")" -ge 1 ] || fail "without --no-cache the layout case's sequences are not cached (the test proves nothing)"
echo "ok: --no-cache keeps check, suite, compare, oracle, fuzz, replay and merge out of the cache"

# 5. the README says what the trailer does not protect against
grep -q 'detects damage, not forgery' "$src/README.md" || fail "README: no trust model next to the cache"
echo "ok: the README states the cache's trust model"
exit 0
