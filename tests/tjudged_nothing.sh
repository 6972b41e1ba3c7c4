#!/bin/sh
# tjudged_nothing.sh: a run that judged nothing is not green. A worker that declares f32 and
# refuses every case: `fuzz` says so in its summary (judged/skipped counts and the top SKIP reason)
# and exits 4, also after --resume, for a shard and for the merge of such shards; `suite` prints
# one line per SKIP reason with its count (every case with --verbose, and in TAP), says so in its
# summary line and exits 4; --allow-all-skipped gives 0 everywhere. A single `check` whose case is
# SKIP exits 0, and a campaign that judged cases (earlier runs included) is not affected.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-tnothing-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/refuse.sh" <<'EOF'
#!/bin/sh
while read a b; do
  if [ "$a" = hello ]; then
    echo 'attncheck-worker 1 {"name":"refuser","dtypes":["f32"]}'
    continue
  fi
  echo "error unsupported: not today"
done
EOF
chmod +x "$tmp/refuse.sh"
k="exec-persistent:$tmp/refuse.sh"

# fuzz
"$bin" fuzz --kernel "$k" --cases 30 --out "$tmp/c" --no-minimize --no-live > "$tmp/f.txt" 2> "$tmp/f.err"
rc=$?
[ $rc -eq 4 ] || { cat "$tmp/f.txt" "$tmp/f.err"; fail "fuzz that judged nothing: exit $rc, expected 4"; }
grep -q '^campaign .*, 30 cases in .*, 0 findings; NO CASE JUDGED, 30 skipped$' "$tmp/f.txt" || { cat "$tmp/f.txt"; fail "fuzz summary"; }
grep -q '^  SKIP x 30: unsupported: worker: not today$' "$tmp/f.txt" || { cat "$tmp/f.txt"; fail "fuzz: no SKIP reason"; }
grep -q 'no case of campaign .* was judged (30 skipped; unsupported: worker: not today): exit 4' "$tmp/f.err" ||
  { cat "$tmp/f.err"; fail "fuzz: no line on stderr"; }
grep -q '^judged=0$' "$tmp/c/stats" && grep -q '^skipped=30$' "$tmp/c/stats" || { cat "$tmp/c/stats"; fail "fuzz: stats"; }
"$bin" fuzz --resume --out "$tmp/c" --cases 35 --no-live --quiet 2> "$tmp/r.err"
rc=$?
[ $rc -eq 4 ] || { cat "$tmp/r.err"; fail "resumed campaign that judged nothing: exit $rc, expected 4"; }
grep -q 'no case .* was judged (35 skipped' "$tmp/r.err" || { cat "$tmp/r.err"; fail "resume: the count is not the campaign's"; }
"$bin" fuzz --resume --out "$tmp/c" --cases 36 --no-live --quiet --allow-all-skipped || fail "--allow-all-skipped: exit $?"
echo "ok: fuzz: 0 judged of 30 is exit 4, said in the summary with the SKIP reason; --resume too; --allow-all-skipped 0"

# shards, and their merge
for i in 0 1; do
  "$bin" fuzz --kernel "$k" --cases 5 --shard $i/2 --out "$tmp/s$i" --no-minimize --no-live --quiet 2> /dev/null
  rc=$?
  [ $rc -eq 4 ] || fail "shard $i that judged nothing: exit $rc, expected 4"
done
"$bin" merge "$tmp/s0" "$tmp/s1" -o "$tmp/m" --no-rerun > "$tmp/m.txt" 2> "$tmp/m.err"
rc=$?
[ $rc -eq 4 ] || { cat "$tmp/m.txt" "$tmp/m.err"; fail "merge of shards that judged nothing: exit $rc, expected 4"; }
grep -q "NO CASE JUDGED (10 skipped)" "$tmp/m.txt" && [ "$(grep -c 'judged no case (5 skipped)' "$tmp/m.err")" -eq 2 ] ||
  { cat "$tmp/m.txt" "$tmp/m.err"; fail "merge does not say the shards judged nothing"; }
"$bin" merge "$tmp/s0" -o "$tmp/m2" --no-rerun --allow-all-skipped > /dev/null 2>&1 || fail "merge --allow-all-skipped: exit $?"
echo "ok: shards that judged nothing exit 4, and so does their merge, naming each"

# a campaign that judged cases: 0, also a resume that runs nothing new
"$bin" fuzz --kernel naive-f32 --cases 3 --families normal --out "$tmp/ok" --no-minimize --no-live > "$tmp/ok.txt" 2>&1 ||
  { cat "$tmp/ok.txt"; fail "a campaign that judged its cases: exit $?"; }
grep -q '0 findings; 3 judged, 0 skipped$' "$tmp/ok.txt" || { cat "$tmp/ok.txt"; fail "summary of a judged campaign"; }
"$bin" fuzz --resume --out "$tmp/ok" --cases 3 --no-live --quiet || fail "resume with nothing left: exit $?"

# suite
"$bin" suite --kernel "$k" --suite ci --tap "$tmp/s.tap" > "$tmp/s.txt" 2> "$tmp/s.err"
rc=$?
[ $rc -eq 4 ] || { tail -5 "$tmp/s.txt"; cat "$tmp/s.err"; fail "suite that judged nothing: exit $rc, expected 4"; }
grep -qF "suite ci: $k: 0 pass, 0 warn, 0 fail, " "$tmp/s.txt" && grep -q ' skip, 0 error (.*): NO CASE JUDGED$' "$tmp/s.txt" ||
  { tail -3 "$tmp/s.txt"; fail "suite summary line"; }
grep -qF "kernel $k judged no case" "$tmp/s.err" || { cat "$tmp/s.err"; fail "suite: no line on stderr"; }
nskip=$(sed -n 's/.* \([0-9]*\) skip,.*/\1/p' "$tmp/s.txt")
lines=$(grep -c '^SKIP ' "$tmp/s.txt")
# one line per distinct reason (dtypes, features, formats, layouts, stores), far fewer than the cases
[ "$lines" -lt 60 ] && [ $((lines * 8)) -lt "$nskip" ] ||
  { head "$tmp/s.txt"; fail "suite: $lines SKIP lines for $nskip skipped cases"; }
grep -q "^SKIP  .*refuse.sh [0-9]* cases (unsupported: refuser does not declare dtype f16)$" "$tmp/s.txt" || { cat "$tmp/s.txt"; fail "suite: no reason line"; }
[ "$(grep -c '# SKIP' "$tmp/s.tap")" -eq "$nskip" ] || grep -q '^1\.\.0 # SKIP' "$tmp/s.tap" || fail "TAP lost SKIP cases"
"$bin" suite --kernel "$k" --suite ci --verbose > "$tmp/v.txt" 2>&1
[ "$(grep -c '^SKIP ' "$tmp/v.txt")" -eq "$nskip" ] || fail "suite --verbose: not one line per SKIP case"
"$bin" suite --kernel "$k" --suite ci --allow-all-skipped > /dev/null 2>&1 || fail "suite --allow-all-skipped: exit $?"
echo "ok: suite: $nskip SKIP cases in $lines reason lines, NO CASE JUDGED, exit 4; --verbose lists each; --allow-all-skipped 0"

# a single check whose case is SKIP stays 0
"$bin" check --kernel "$k" example:tiny3 > "$tmp/k.txt" 2>&1 || { cat "$tmp/k.txt"; fail "check of a SKIP case: exit $?"; }
grep -q '^SKIP ' "$tmp/k.txt" || fail "check: no SKIP line"
echo "ok: check of one SKIP case: exit 0"
exit 0
