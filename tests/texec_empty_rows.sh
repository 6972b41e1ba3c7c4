#!/bin/sh
# texec_empty_rows.sh: one meaning for each judging option. An exec worker (numpy_sdpa's attention,
# which writes 0 for a row with no visible key) declares "empty_rows": "nan" and the class
# q8q-f32, the opposite of what it does and of what the options below say. Its declaration is what
# each command judges by when no option is given (FAIL on the empty rows), and an explicit
# --empty-rows zero overrides it in check, suite, fuzz (no FAIL finding, and a finding replayed with
# the campaign's option), replay (of a finding and of a case file) alike; compare, which judges
# outputs without a kernel, takes --empty-rows as given. An explicit --precision overrides the
# declared class in every command too. Skipped (77) without python3 with numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=${srcdir:-.}
py=${PYTHON_NUMPY:-none}
if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy"; exit 77; fi
wdir=$(cd "$src/python/attncheck/worker" && pwd) || exit 99
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tempty-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
export ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
first() { head -n 1 "$1" | cut -c1-200; }

cat > "$tmp/declnan.py" << EOF
import sys
sys.path.insert(0, "$wdir")
import numpy_sdpa
import protocol
# numpy_sdpa's attention (o = 0 in a row with no key) declaring the empty rows of argv[1]
sys.exit(protocol.run(numpy_sdpa.attend, sys.argv[2:], name="decl", writes_lse=True, empty_rows=sys.argv[1],
                      precision="q8q-f32"))
EOF
k="exec-persistent:$py $tmp/declnan.py nan"
"$bin" gen -o "$tmp/e.npz" --tq 12 --tk 4 --dk 16 --mask causal-bottom-right --seed 5 > /dev/null || exit 99

# check
"$bin" check --kernel "$k" "$tmp/e.npz" > "$tmp/c0.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL .*empty row' "$tmp/c0.txt" || fail "check by the declaration: exit $rc: $(first "$tmp/c0.txt")"
grep -q 'budget=class:q8q-f32' "$tmp/c0.txt" || fail "check: not the declared class: $(first "$tmp/c0.txt")"
"$bin" check --kernel "$k" --empty-rows zero --precision fp32 "$tmp/e.npz" > "$tmp/c1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^PASS .*budget=class:fp32' "$tmp/c1.txt" || fail "check --empty-rows zero --precision fp32: exit $rc: $(first "$tmp/c1.txt")"
echo "ok: check"

# suite (a case whose rows but the last see no key)
cs=f32-239x1-d32-causal-bottom-right
"$bin" suite --kernel "$k" --case $cs --verbose > "$tmp/s0.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "^FAIL .*$cs" "$tmp/s0.txt" || fail "suite by the declaration: exit $rc: $(grep $cs "$tmp/s0.txt" | head -n 1)"
"$bin" suite --kernel "$k" --case $cs --empty-rows zero --precision fp32 --verbose > "$tmp/s1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "^PASS .*$cs" "$tmp/s1.txt" && grep -q "class:fp32" "$tmp/s1.txt" ||
  fail "suite --empty-rows zero --precision fp32: exit $rc: $(grep $cs "$tmp/s1.txt" | head -n 1)"
echo "ok: suite"

# fuzz: masked_rows draws rows with no key
"$bin" fuzz --kernel "$k" --families masked_rows --cases 30 --seed 3 --out "$tmp/f0" --dtypes f32 --no-minimize \
  --precision fp32 --no-live > "$tmp/f0.txt" 2>&1
rc=$?
d=$(ls -d "$tmp"/f0/findings/*__FAIL__* 2> /dev/null | head -n 1)
[ $rc -eq 1 ] && [ -n "$d" ] || { fail "fuzz by the declaration: exit $rc, no FAIL finding"; tail -n 3 "$tmp/f0.txt"; }
[ -z "$d" ] || grep -q '"precision_source": *"option"' "$d/report.json" || fail "fuzz: the finding's class is not --precision's"
"$bin" fuzz --kernel "$k" --families masked_rows --cases 30 --seed 3 --out "$tmp/f1" --dtypes f32 --no-minimize \
  --precision fp32 --empty-rows zero --no-live > "$tmp/f1.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && [ -z "$(ls "$tmp/f1/findings")" ] || { fail "fuzz --empty-rows zero: exit $rc, findings $(ls "$tmp/f1/findings" | tr '\n' ' ')"; tail -n 3 "$tmp/f1.txt"; }
echo "ok: fuzz ($(ls "$tmp/f0/findings" | wc -l) findings by the declaration, none with --empty-rows zero)"

# replay: a finding of the first campaign, and its case file
if [ -n "$d" ]; then
  "$bin" replay "$d" --trust-recorded-kernel > "$tmp/r0.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] && grep -q 'FAIL reproduced' "$tmp/r0.txt" || fail "replay by the declaration: exit $rc: $(tail -n 1 "$tmp/r0.txt")"
  "$bin" replay "$d" --trust-recorded-kernel --empty-rows zero > "$tmp/r1.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q 'FAIL NOT reproduced' "$tmp/r1.txt" || fail "replay --empty-rows zero: exit $rc: $(tail -n 1 "$tmp/r1.txt")"
  "$bin" replay "$d/case.npz" --kernel "$k" > "$tmp/r2.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "replay CASE by the declaration: exit $rc: $(first "$tmp/r2.txt")"
  "$bin" replay "$d/case.npz" --kernel "$k" --empty-rows zero --precision fp32 > "$tmp/r3.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q 'class:fp32' "$tmp/r3.txt" || fail "replay CASE --empty-rows zero: exit $rc: $(first "$tmp/r3.txt")"
  echo "ok: replay"
fi
# a campaign's own --empty-rows is recorded and replayed over the declaration: a worker declaring
# zero (what it writes) under --empty-rows nan
"$bin" fuzz --kernel "exec-persistent:$py $tmp/declnan.py zero" --families masked_rows --cases 30 --seed 3 \
  --out "$tmp/f3" --dtypes f32 --no-minimize --precision fp32 --empty-rows nan --no-live > "$tmp/f3.txt" 2>&1
rc=$?
d=$(ls -d "$tmp"/f3/findings/*__FAIL__* 2> /dev/null | head -n 1)
[ $rc -eq 1 ] && [ -n "$d" ] && grep -q '"empty_rows_override": *"nan"' "$d/report.json" ||
  { fail "fuzz --empty-rows nan on a worker declaring zero: exit $rc"; tail -n 3 "$tmp/f3.txt"; }
if [ -n "$d" ]; then
  "$bin" replay "$d" --trust-recorded-kernel > "$tmp/r4.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] && grep -q 'FAIL reproduced' "$tmp/r4.txt" || fail "replay of a campaign's --empty-rows: exit $rc: $(tail -n 1 "$tmp/r4.txt")"
fi
echo "ok: a campaign's --empty-rows replays over the declaration"

# compare: outputs of the worker run by hand (one-shot), judged without any kernel
"$py" "$tmp/declnan.py" nan "$tmp/e.npz" "$tmp/out.npz" || fail "the worker one-shot: exit $?"
"$bin" compare "$tmp/e.npz" "$tmp/out.npz" > "$tmp/m0.txt" 2>&1 || fail "compare (zero by default): exit $?: $(first "$tmp/m0.txt")"
"$bin" compare --empty-rows nan "$tmp/e.npz" "$tmp/out.npz" > "$tmp/m1.txt" 2>&1
[ $? -eq 1 ] || fail "compare --empty-rows nan: $(first "$tmp/m1.txt")"
"$bin" compare --empty-rows zero "$tmp/e.npz" "$tmp/out.npz" > "$tmp/m2.txt" 2>&1 || fail "compare --empty-rows zero: $(first "$tmp/m2.txt")"
echo "ok: compare"
exit $((fails > 0))
