#!/bin/sh
# tfuzz_campaign.sh: short fixed-seed campaigns. A correct kernel gives no FAIL (exit 0); mutants
# are found (exit 1, a FAIL finding stored with case.npz, report.json and repro.sh, minimized
# beside it, and repro.sh reproduces it); stats, log.jsonl and report.html are written; bad usage
# exits 2; a kernel that cannot start stops the campaign with one line.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-tfuzz-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }

# 1. a correct kernel, every family: no fail-policy finding
"$bin" fuzz --kernel flash-f32 --cases 120 --seed "$seed" --out "$tmp/ok" --max-t 512 --no-live > "$tmp/ok.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/ok.txt"; fail "correct kernel flash-f32: exit $rc"; }
grep -q '^cases=120$' "$tmp/ok/stats" || fail "stats: cases=120 missing"
grep -q '^family.late_max=' "$tmp/ok/stats" || fail "stats: per-family counts missing"
grep -q '"event":"end"' "$tmp/ok/log.jsonl" || fail "log.jsonl has no end event"
if command -v python3 > /dev/null 2>&1; then
  python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/ok/log.jsonl" ||
    fail "log.jsonl: a line that is not one JSON object"
fi
[ -s "$tmp/ok/report.html" ] || fail "no report.html"
echo "ok: flash-f32, 120 cases, no FAIL"
# its corpus seeds a later campaign, which refines those cases (mutations) from the start
ls "$tmp/ok/corpus" | grep -q '\.npz$' || fail "no corpus kept"
"$bin" fuzz --kernel flash-f32 --cases 30 --seed "$seed" --out "$tmp/ok2" --corpus "$tmp/ok/corpus" --log-cases --max-t 512 \
  --no-live --quiet > /dev/null 2>&1
grep -q '"event":"corpus"' "$tmp/ok2/log.jsonl" || fail "the corpus was not loaded"
grep -q '"mutation"' "$tmp/ok2/log.jsonl" || fail "no mutation of corpus cases"

# 2. mutants: each found within the cap
for m in mutant-no-max-sub mutant-max-sentinel mutant-no-rescale-sum mutant-gqa-modulo mutant-dv-as-dk mutant-empty-row-nan; do
  "$bin" fuzz --kernel "$m" --cases 200 --seed "$seed" --out "$tmp/$m" --stop-on-fail --minimize-evals 40 --no-live \
    > "$tmp/$m.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { tail -n 5 "$tmp/$m.txt"; fail "$m: exit $rc, expected 1 (found)"; }
  d=$(ls -d "$tmp/$m"/findings/*__FAIL__* 2>/dev/null | head -n 1)
  [ -n "$d" ] || fail "$m: no FAIL finding stored"
  for f in case.npz report.json repro.sh; do [ -s "$d/$f" ] || fail "$m: $f missing in $d"; done
  grep -q '"kind":"FAIL"' "$d/report.json" || fail "$m: report.json does not name the kind"
  echo "found: $m: $(basename "$d") ($(grep -c . "$tmp/$m/log.jsonl") log lines)"
done

# 3. the reproducer of one finding reproduces it, minimized and original (exit 1)
d=$(ls -d "$tmp"/mutant-no-max-sub/findings/*__FAIL__* | head -n 1)
[ -s "$d/minimized.npz" ] || fail "no minimized.npz beside $d"
grep -q '"minimized_elements"' "$d/report.json" || fail "report.json lacks the minimized size"
ATTNCHECK="$bin" "$d/repro.sh" > "$tmp/repro.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/repro.txt"; fail "repro.sh exit $rc, expected 1"; }
grep -q 'FAIL reproduced' "$tmp/repro.txt" || fail "repro.sh did not reproduce"
# ... and the correct kernel passes the same case
"$bin" replay "$d/case.npz" --kernel flash-f32 > "$tmp/fixed.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/fixed.txt"; fail "flash-f32 on the finding's case: exit $rc"; }

# 4. a case is a function of (family, seed, index): --generate twice gives the same bytes
"$bin" fuzz --generate late_max --index 7 --seed "$seed" --out "$tmp/g1.npz" > /dev/null || fail "--generate failed"
"$bin" fuzz --generate late_max --index 7 --seed "$seed" --out "$tmp/g2.npz" > /dev/null || fail "--generate failed"
cmp -s "$tmp/g1.npz" "$tmp/g2.npz" || fail "--generate: same (family, seed, index), different files"

# 5. usage errors exit 2
"$bin" fuzz --kernel flash-f32 --out "$tmp/u" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no --time/--cases: expected exit 2"
"$bin" fuzz --kernel flash-f32 --cases 5 --time 2x --out "$tmp/u" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --time: expected 2"
"$bin" fuzz --kernel flash-f32 --cases 5 --families nosuch --out "$tmp/u" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad family: expected 2"
"$bin" fuzz --kernel flash-f32 --cases 5 --out "$tmp/ok" > /dev/null 2>&1; [ $? -eq 2 ] || fail "existing campaign without --resume: expected 2"
"$bin" fuzz --list-families | grep -q '^late_max ' || fail "--list-families lacks late_max"

# 6. a kernel that cannot start (a missing command) stops the campaign with one line, not 200 CRASH cases
for k in "exec-persistent:$tmp/no such worker" "exec:$tmp/no-such-command {in} {out}"; do
  "$bin" fuzz --kernel "$k" --cases 200 --seed "$seed" --out "$tmp/nostart" --no-minimize --no-live --quiet \
    > /dev/null 2> "$tmp/nostart.err"
  rc=$?
  [ $rc -ne 0 ] || fail "kernel that cannot start ($k): exit 0"
  # a persistent worker that is not found is given up by the exec layer at once (the kernel could
  # not be started), a one-shot command by the campaign (its first cases all ended alike): either
  # names the cause
  grep -Eq 'never returned a result|the kernel could not be started' "$tmp/nostart.err" &&
    grep -q 'campaign stopped' "$tmp/nostart.err" || { cat "$tmp/nostart.err"; fail "$k: no line saying it never ran"; }
  [ "$(wc -l < "$tmp/nostart.err")" -eq 1 ] || { cat "$tmp/nostart.err"; fail "$k: not one line"; }
  n=$(sed -n 's/^cases=//p' "$tmp/nostart/stats")
  [ "$n" -lt 20 ] || fail "$k: $n cases run before stopping"
  rm -rf "$tmp/nostart"
done
exit 0
