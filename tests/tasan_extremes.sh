#!/bin/sh
# tasan_extremes.sh: the oracle, the judge and the minimizer over the extreme quantized values of
# every format (tests/quant/extremes: the smallest subnormal, largest, zero, inf and NaN scales,
# mxfp4's exponents 0 and 255, fp8 NaN codes) under AddressSanitizer and UndefinedBehaviorSanitizer:
# tests/asan/attncheck, the command built with the flags of --enable-sanitizers (tests/asan.mk), runs
# `oracle` and `check` (the format's reference kernel) on every extreme case, campaigns of the
# families that draw subnormal values and extreme blocks on the four reference kernels, and
# campaigns on a mutant of the ggml, fp8 and int families whose FAIL findings are minimized. No
# process may report a memory or undefined-behaviour error (ASAN_OPTIONS and UBSAN_OPTIONS log_path:
# a report from any forked worker or kernel child lands in a file), none may die by a signal, and
# every command exits as it should. SKIP (77) where configure found no compiler that builds and runs
# such programs.
set -u
top=${abs_top_builddir:-.}
asan=$top/tests/asan/attncheck
ext=$top/tests/quant/extremes
if [ ! -x "$asan" ]; then
  echo "SKIP: tests/asan/attncheck not built: configure found no compiler that builds and runs programs with -fsanitize=address,undefined"
  exit 77
fi
[ -x "$ext" ] || { echo "tests/quant/extremes not built"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tasan-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/x" "$tmp/log" || exit 99
# leaks at exit are no crash; every report goes to a file, and a report's exit status is 86
ASAN_OPTIONS=detect_leaks=0:exitcode=86:log_path=$tmp/log/asan
UBSAN_OPTIONS=print_stacktrace=1:exitcode=86:log_path=$tmp/log/ubsan
ATTNCHECK_CACHE=off
export ASAN_OPTIONS UBSAN_OPTIONS ATTNCHECK_CACHE
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# the reference kernel of a format (docs/quantized.md "Reference kernels")
ref() { "$ext" --ref "$1"; }

"$ext" "$tmp/x" > "$tmp/ext.txt" 2>&1 || { cat "$tmp/ext.txt"; exit 99; }
n=0
for f in "$tmp"/x/*.npz; do
  b=$(basename "$f")
  "$asan" oracle -q "$f" > "$tmp/o.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || fail "oracle $b: exit $rc: $(head -c 300 "$tmp/o.txt")"
  "$asan" check --kernel "$(ref "$b")" "$f" > "$tmp/o.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || fail "check $b: exit $rc: $(head -c 300 "$tmp/o.txt")"
  n=$((n + 1))
done
echo "ok: oracle and check on $n extreme cases"

# campaigns on the reference kernels: exit 0, 0 errors
for k in ggml-ref-f32 fp8kv-ref-f32 intkv-ref-f32 fp4kv-ref-f32; do
  "$asan" fuzz --kernel "$k" --out "$tmp/r-$k" --cases 40 --seed 2 --families tiny,quant_blocks,quant_nonfinite \
    --max-t 256 --no-live > "$tmp/f.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q '^errors=0$' "$tmp/r-$k/stats" || { fail "campaign on $k: exit $rc"; tail -n 4 "$tmp/f.txt"; }
done
echo "ok: campaigns on the reference kernels"

# mutants: FAIL findings, minimized (the evaluation budget, not the clock, ends a minimization here)
for m in mutant-quant-next-scale mutant-quant-scale-twice mutant-quant-zero-sign; do
  "$asan" fuzz --kernel "$m" --out "$tmp/m-$m" --cases 30 --seed 1 --families tiny,quant_blocks,quant_nonfinite \
    --max-t 256 --no-live > "$tmp/f.txt" 2>&1
  rc=$?
  nmin=$(ls "$tmp/m-$m"/findings/*/minimized.npz 2> /dev/null | wc -l)
  [ $rc -eq 1 ] && [ "$nmin" -ge 1 ] && grep -q '^errors=0$' "$tmp/m-$m/stats" ||
    { fail "campaign on $m: exit $rc, $nmin minimized findings"; tail -n 4 "$tmp/f.txt"; }
done
echo "ok: minimized findings of the ggml, fp8 and int mutants"

if ls "$tmp/log/" | grep -q .; then
  for f in "$tmp"/log/*; do echo "== $f"; head -n 40 "$f"; done
  fail "sanitizer reports: $(ls "$tmp/log" | tr '\n' ' ')"
fi
exit $((fails > 0))
