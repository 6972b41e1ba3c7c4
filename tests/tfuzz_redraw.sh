#!/bin/sh
# tfuzz_redraw.sh: no finding is lost after a stop, without a mount. A campaign whose finding of
# case N cannot be stored (injected: ATTNCHECK_TEST_STORE_FAIL_AT=N fails the store as a full disk
# does) stops with exit 3; --resume draws case N again exactly as it was (a mutation of the
# search's elite pool after the sweep, and a fresh draw) and stores the finding the campaign on a
# roomy disk stored, byte for byte. Every case of a campaign, mutations of corpus seeds of a resumed
# run included, is drawn again exactly from its journal record (2 jobs), and so is a draw kept
# at a later try after the kernel refused the ones before (t=T).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-1}
tmp=$(mktemp -d /tmp/attncheck-tredraw-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
run() {
  "$bin" fuzz --kernel mutant-no-rescale-sum --seed "$seed" --max-elems 65536 --no-minimize --no-live --quiet "$@"
}

run --cases 250 --out "$tmp/ref" > "$tmp/ref.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/ref.txt"; fail "reference campaign: expected exit 1"; }
# the finding of case N in the reference, and how N was drawn
case_of() { sed -n 's/.*"case_index":\([0-9]*\).*/\1/p' "$1"; }
gen_of() { sed -n 's/.*"generator":"\([^"]*\)".*/\1/p' "$1"; }
first_finding() {   # first_finding mut|fresh: "N SIG" of the earliest finding of such a case past the sweep
  for r in "$tmp"/ref/findings/*/report.json; do
    case "$(gen_of "$r")" in *+mut) h=mut ;; *) h=fresh ;; esac
    [ "$h" = "$1" ] || continue
    n=$(case_of "$r")
    [ "$n" -ge 100 ] && echo "$n $(basename "$(dirname "$r")")"
  done | sort -n | head -1
}

for how in mut fresh; do
  set -- $(first_finding $how)
  [ $# -eq 2 ] || fail "the reference has no finding of a $how case past case 100"
  n=$1 sig=$2 dir=$tmp/stop-$how
  ATTNCHECK_TEST_STORE_FAIL_AT=$n run --cases 250 --out "$dir" > "$tmp/$how.txt" 2> "$tmp/$how.err"
  rc=$?
  [ $rc -eq 3 ] || { cat "$tmp/$how.err"; fail "$how: store failure at case $n: exit $rc, expected 3"; }
  grep -q "cannot store finding $sig of case $n:" "$tmp/$how.err" || { cat "$tmp/$how.err"; fail "$how: no line naming case $n"; }
  [ ! -e "$dir/findings/$sig" ] || fail "$how: $sig stored although its store failed"
  "$bin" fuzz --resume --out "$dir" --cases 250 --no-live --quiet > "$tmp/$how-res.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$tmp/$how-res.txt"; fail "$how: resume: exit $rc, expected 1"; }
  [ -f "$dir/findings/$sig/case.npz" ] || fail "$how: the finding $sig of case $n is lost after --resume"
  cmp -s "$tmp/ref/findings/$sig/case.npz" "$dir/findings/$sig/case.npz" ||
    fail "$how: case $n after --resume differs from the reference's"
  [ "$(case_of "$dir/findings/$sig/report.json")" = "$n" ] || fail "$how: $sig stored from another case than $n"
  grep -q "\"event\":\"redrawn\",\"case\":$n,\"exact\":true" "$dir/log.jsonl" || fail "$how: case $n not drawn again exactly"
  [ "$(grep -c "^c $n " "$dir/journal")" -eq 1 ] || fail "$how: case $n recorded $(grep -c "^c $n " "$dir/journal") times"
  echo "ok: $how case $n ($(gen_of "$dir/findings/$sig/report.json")): its finding $sig stored after --resume, as in the reference"
done

# every case drawn again from its record: a campaign and a resumed run (whose pool starts from
# the corpus), then a journal without its "c" records: --resume redraws all 300 numbers
run --cases 150 --jobs 2 --out "$tmp/all" > /dev/null 2>&1
"$bin" fuzz --resume --out "$tmp/all" --cases 300 --no-live --quiet > /dev/null 2>&1
grep -q '^d [0-9]* [0-9a-f]* [a-z_]* s ' "$tmp/all/journal" || fail "the resumed run drew no mutation of a corpus seed"
grep -v '^c ' "$tmp/all/journal" > "$tmp/journal" && cat "$tmp/journal" > "$tmp/all/journal"
"$bin" fuzz --resume --out "$tmp/all" --cases 300 --jobs 2 --no-live --quiet > "$tmp/all.txt" 2>&1
exact=$(grep -c '"event":"redrawn",.*"exact":true' "$tmp/all/log.jsonl")
[ "$exact" -eq 300 ] || { grep '"exact":false' "$tmp/all/log.jsonl" | head -3; fail "$exact of 300 cases drawn again exactly"; }
grep -q '^redrawn_this_run=' "$tmp/all/stats" || fail "stats: no redrawn_this_run"
echo "ok: all 300 cases (fresh draws, mutations, mutations of corpus seeds; 2 jobs) drawn again exactly"

# a draw the kernel refuses is drawn again from the stream of its next try, and the "d" record
# names the try kept (t=T): such cases too are drawn again exactly (test-square-only refuses the
# mutations that resize a case)
"$bin" fuzz --kernel test-square-only --dtypes f32 --max-t 256 --seed "$seed" --cases 200 --out "$tmp/sq" --no-minimize \
  --no-live --quiet > "$tmp/sq.txt" 2>&1 || { cat "$tmp/sq.txt"; fail "campaign on test-square-only"; }
nt=$(grep -c '^d .* t=[1-9][0-9]*$' "$tmp/sq/journal")
[ "$nt" -gt 0 ] || fail "no draw of test-square-only journaled with the try it kept"
grep -v '^c ' "$tmp/sq/journal" > "$tmp/journal" && cat "$tmp/journal" > "$tmp/sq/journal"
"$bin" fuzz --resume --out "$tmp/sq" --cases 200 --no-live --quiet > "$tmp/sq.txt" 2>&1
exact=$(grep -c '"event":"redrawn",.*"exact":true' "$tmp/sq/log.jsonl")
[ "$exact" -eq 200 ] || { grep '"exact":false' "$tmp/sq/log.jsonl" | head -3; fail "$exact of 200 cases drawn again exactly"; }
echo "ok: all 200 cases of a kernel that refuses draws ($nt kept at a later try) drawn again exactly"
exit 0
