#!/bin/sh
# tcmd_verdicts.sh: the test kernels give their verdict kinds through `attncheck check` and
# `attncheck suite`; policies change the status and the exit code; usage errors exit 2; --json
# is well formed.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-verd-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
# expect KERNEL EXIT STATUS KIND [options...]
expect() {
  k=$1; want_rc=$2; want_st=$3; kind=$4; shift 4
  "$bin" check --kernel "$k" "$@" example:tiny3 > "$tmp/o.txt" 2>&1
  rc=$?
  # the verdict line (a sanitized build may print its own report of the crash first)
  line=$(grep -E '^(PASS|WARN|FAIL|SKIP|ERROR) ' "$tmp/o.txt" | head -n 1)
  ok=1
  [ $rc -eq "$want_rc" ] || ok=0
  echo "$line" | grep -q "^$want_st " || ok=0
  [ "$kind" = - ] || echo "$line" | grep -Eq " ([A-Z-]+,)*$kind(,[A-Z-]+)*( |$)" || ok=0
  if [ $ok = 1 ]; then echo "ok: $k $*: $line" | cut -c1-150
  else echo "WRONG: $k $* gave exit $rc (want $want_rc, $want_st $kind):"; cat "$tmp/o.txt"; bad=1; fi
}
expect test-reference 0 PASS -
expect test-crash 1 FAIL CRASH
expect test-abort 1 FAIL CRASH
expect test-exit 1 FAIL CRASH
expect test-hang 1 FAIL TIMEOUT --timeout 1
expect test-guard 1 FAIL GUARD
expect test-input-write 1 FAIL GUARD
expect test-unwritten 1 FAIL UNWRITTEN
expect test-error 1 FAIL FAIL
expect test-unsupported 0 SKIP SKIP
# NONDETERMINISTIC warns by default (DESIGN.md); the kernel's last-bit flips stay within the budget
expect test-nondeterministic 0 WARN NONDETERMINISTIC --repeat
# policies: warn and ignore
expect test-crash 0 WARN CRASH --policy crash=warn
expect test-guard 0 PASS GUARD --policy guard=ignore
expect test-nondeterministic 1 FAIL NONDETERMINISTIC --repeat --policy nondeterministic=fail
# the failing line carries the worst element and the reproducer
"$bin" check --kernel test-crash example:tiny3 | grep -q '^  reproduce: attncheck check --kernel test-crash example:tiny3$' \
  || { echo "WRONG: no reproducer line"; bad=1; }
# masked leak through the suite (the case with NaN in masked keys)
"$bin" suite --kernel test-masked-leak --case f32-40x70-d32-causal-maskednan > "$tmp/o.txt" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^WARN .*MASKED-LEAK' "$tmp/o.txt"; then echo "WRONG: test-masked-leak (exit $rc)"; cat "$tmp/o.txt"; bad=1
else echo "ok: test-masked-leak: $(head -n 1 "$tmp/o.txt" | cut -c1-120)"; fi
"$bin" suite --kernel test-masked-leak --case f32-40x70-d32-causal-maskednan --policy masked-leak=fail > /dev/null 2>&1
[ $? -eq 1 ] || { echo "WRONG: masked-leak=fail did not exit 1"; bad=1; }
# suite: test kernels through the suite path, a whole-program skip in TAP
"$bin" suite --kernel test-crash --case f32-1x1-d1-none --tap "$tmp/t.tap" > /dev/null 2>&1
[ $? -eq 1 ] && grep -q '^not ok 1 - f32-1x1-d1-none' "$tmp/t.tap" || { echo "WRONG: suite TAP for test-crash"; cat "$tmp/t.tap"; bad=1; }
"$bin" suite --allow-all-skipped --kernel test-unsupported --case f32-1x1-d1-none --case f16-1x1-d1-none --tap "$tmp/s.tap" > /dev/null 2>&1
[ $? -eq 0 ] && grep -q '^1\.\.0 # SKIP' "$tmp/s.tap" || { echo "WRONG: whole-program skip"; cat "$tmp/s.tap"; bad=1; }
# usage errors: exit 2 with one line naming the problem
for args in "check example:tiny3" "check --kernel no-such-kernel example:tiny3" "check --kernel naive-f32 /nonexistent.npz" \
            "check --kernel naive-f32 --precision fp99 example:tiny3" "check --kernel naive-f32 --bogus example:tiny3" \
            "check --kernel naive-f32 --policy crash=maybe example:tiny3" "suite --kernel naive-f32 --suite huge" \
            "suite --kernel naive-f32 --case no-such-case" "list --bogus" "compare /nonexistent.npz"; do
  "$bin" $args > /dev/null 2> "$tmp/err.txt"
  rc=$?
  if [ $rc -ne 2 ] || ! [ -s "$tmp/err.txt" ]; then echo "WRONG: attncheck $args: exit $rc (want 2)"; bad=1
  else echo "ok: attncheck $args: $(head -n 1 "$tmp/err.txt")"; fi
done
# --json is well formed and says what the line says
"$bin" check --kernel naive-f32 --kernel test-crash --json "$tmp/r.json" example:tiny3 > /dev/null 2>&1
if command -v python3 > /dev/null 2>&1; then
  python3 - "$tmp/r.json" <<'PYEOF' || { echo "WRONG: --json"; bad=1; }
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["status"] for x in r] == ["PASS", "FAIL"], r
assert r[1]["kinds"] == "CRASH" and r[0]["budget"].startswith("class:fp32")
assert "reproduce" in r[1] and r[0]["precision"] == "fp32"
PYEOF
fi
# list
"$bin" list --precision | grep -q '^fp16-fa2 ' || { echo "WRONG: list --precision"; bad=1; }
"$bin" list --mutants | grep -q 'mutant-' || { echo "WRONG: list --mutants"; bad=1; }
exit $bad
