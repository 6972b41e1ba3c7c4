#!/bin/sh
# tabi5.sh: the ABI 5 declarations (kernels/attncheck_kernel.h) through check, suite, fuzz and
# list: a run() that answers "unsupported:" after seeing the case is SKIP with its reason,
# never a FAIL or a finding (GUARD when it also wrote where it must not); a declared empty-row
# convention judges empty rows without --empty-rows (which still overrides it); the class a
# kernel names per problem (precision_of) judges that case and every report names it, an
# explicit --precision overrides it, an unknown one is a kernel error; list shows all of it.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-abi5-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
g4() { f=$1; shift; "$bin" gen -o "$tmp/$f.npz" "$@" >/dev/null || { echo "gen $f $*"; exit 99; }; }
g4 t4 --t 4 --dk 8 --seed 1
g4 t16 --t 16 --dk 8 --seed 1
g4 e --tq 6 --tk 3 --mask causal-bottom-right --dk 8 --seed 2
g4 h32 --dtype f16 --t 32 --dk 64 --seed 3
g4 h100 --dtype f16 --t 100 --dk 64 --seed 3

# 1. run() refuses: SKIP with the reason from run(), exit 0; after a write past o: GUARD
out=$("$bin" check --kernel test-run-refuses "$tmp/t4.npz" "$tmp/t16.npz" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a run() refusal made check exit $rc"
echo "$out" | grep -q "^PASS  test-run-refuses .*t4.npz" || fail "the case run() takes is not PASS"
echo "$out" | grep -q "^SKIP  test-run-refuses .*t16.npz SKIP (unsupported: run(): more than 8 keys" ||
  fail "the case run() refuses is not SKIP with its reason"
out=$("$bin" check --kernel test-run-refuses-scribble "$tmp/t16.npz" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -q "^FAIL .*GUARD,SKIP (o: guard after the tensor overwritten" ||
  fail "a refusing run() that wrote past o is not GUARD (exit $rc)"
out=$("$bin" suite --kernel test-run-refuses --suite ci --dtypes f32 2>&1); rc=$?
echo "$out" | tail -n 2
[ $rc -eq 0 ] || fail "suite on a kernel whose run() refuses exited $rc"
echo "$out" | grep -q "^SKIP .*unsupported: run(): more than 8 keys" || fail "suite: no SKIP from run()"
echo "$out" | grep -q " 0 fail" || fail "suite: a refusal counted as a failure"
"$bin" fuzz --kernel test-run-refuses --dtypes f32 --cases 40 --out "$tmp/camp" --quiet > "$tmp/fz.txt" 2>&1; rc=$?
cat "$tmp/fz.txt"
[ $rc -eq 0 ] || fail "fuzz on a kernel whose run() refuses exited $rc"
grep -q '^findings=0$' "$tmp/camp/stats" || { cat "$tmp/camp/stats"; fail "fuzz stored a refusal as a finding"; }
n=$(sed -n 's/^skipped_by_run=//p' "$tmp/camp/stats")
[ -n "$n" ] && [ "$n" -gt 0 ] || { cat "$tmp/camp/stats"; fail "fuzz stats count no refusal by run()"; }
[ -z "$(ls "$tmp/camp/findings")" ] || fail "a finding directory for a refusal"

# 2. empty-row conventions declared by the kernel; --empty-rows overrides them
out=$("$bin" check --kernel test-empty-nan "$tmp/e.npz" 2>&1) || { echo "$out"; fail "declared o = NaN, lse = NaN: not PASS"; }
echo "$out" | grep -q "^PASS" || fail "declared o = NaN, lse = NaN: not PASS"
"$bin" check --kernel test-empty-nan --empty-rows zero "$tmp/e.npz" >/dev/null 2>&1 && fail "--empty-rows zero does not override the declaration"
out=$("$bin" check --kernel test-empty-pinf "$tmp/e.npz" 2>&1); rc=$?
echo "$out" | head -n 1
[ $rc -eq 1 ] && echo "$out" | grep -q 'mismatch="lse -inf in an empty row' || fail "a declared lse = +inf does not judge a -inf"
"$bin" check --kernel test-empty-pinf --empty-rows zero "$tmp/e.npz" >/dev/null 2>&1 || fail "--empty-rows zero: either infinity"
out=$("$bin" check --kernel test-empty-mean-v "$tmp/e.npz" 2>&1) || { echo "$out"; fail "declared o = the mean of V: not PASS"; }
"$bin" check --kernel test-empty-mean-v --empty-rows zero "$tmp/e.npz" >/dev/null 2>&1 && fail "--empty-rows zero passes a mean-v kernel"
"$bin" check --kernel test-empty-nan --empty-rows mean-v "$tmp/e.npz" >/dev/null 2>&1 && fail "--empty-rows mean-v passes NaN rows"

# 3. the class of the path taken, per problem
out=$("$bin" check --kernel test-paths-f16 --json "$tmp/p.json" "$tmp/h32.npz" "$tmp/h100.npz" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a kernel naming the class of each path is not PASS (exit $rc)"
echo "$out" | grep -q "^PASS  test-paths-f16 .*h32.npz .* budget=class:fp16-fa2," || fail "line: the tiled path's class"
echo "$out" | grep -q "^PASS  test-paths-f16 .*h100.npz .* budget=class:fp16-cublas," || fail "line: the GEMM path's class"
grep -q '"case":"[^"]*h100.npz".*"precision":"fp16-cublas","precision_source":"problem"' "$tmp/p.json" ||
  { cat "$tmp/p.json"; fail "JSON: the class per case and its source"; }
out=$("$bin" check --kernel test-paths-f16-one-class "$tmp/h100.npz" 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "$out"; fail "one class for both paths: the GEMM path is not FAIL under fp16-fa2"; }
out=$("$bin" check --kernel test-paths-f16 --precision fp16-fa2 --json "$tmp/o.json" "$tmp/h100.npz" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q '"precision":"fp16-fa2","precision_source":"option"' "$tmp/o.json" ||
  { echo "$out"; fail "--precision does not override the class named per problem"; }
out=$("$bin" suite --kernel test-paths-f16 --suite ci --dtypes f16 2>&1); rc=$?
echo "$out" | tail -n 1
[ $rc -eq 0 ] || { echo "$out" | grep -v "^PASS\|^SKIP" | head; fail "suite on test-paths-f16 exited $rc"; }
echo "$out" | grep -q "^PASS .*budget=class:fp16-cublas" && echo "$out" | grep -q "^PASS .*budget=class:fp16-fa2" ||
  fail "suite lines do not show the class of each case"
out=$("$bin" check --kernel test-paths-bad-class "$tmp/h100.npz" 2>&1); rc=$?
echo "$out" | head -n 1
[ $rc -eq 1 ] && echo "$out" | grep -q "names the class 'fp16-no-such-class' for this problem" ||
  fail "an unknown class named per problem is not a kernel error naming it"
"$bin" fuzz --kernel test-paths-f16 --cases 30 --out "$tmp/pc" --quiet >/dev/null 2>&1
grep -q '^findings=0$' "$tmp/pc/stats" || { cat "$tmp/pc/stats"; ls "$tmp/pc/findings"; fail "fuzz judged a path under another path's class"; }

# 4. list shows every declaration, and why a probe problem was refused
lst=$("$bin" list --tests 2>&1)
echo "$lst" | grep -A1 "^  test-empty-nan " | grep -q "empty rows nan, lse nan" || fail "list: declared empty rows"
echo "$lst" | grep -A1 "^  test-empty-mean-v " | grep -q "empty rows mean-v" || fail "list: declared mean-v"
echo "$lst" | grep -A1 "^  test-paths-f16 " | grep -q "class per problem" || fail "list: precision_of"
echo "$lst" | grep -A1 "^  test-paths-f16 " | grep -q "; tq!=tk; scale" || fail "list: tq!=tk and scale"
echo "$lst" | grep -A1 "^  test-unsupported " | grep -q "probe refused: test-unsupported: supports no problem" ||
  fail "list: why the probe problem was refused"
echo "ok: ABI 5 refusals, empty-row conventions, classes per problem"
exit 0
