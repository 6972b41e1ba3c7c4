#!/bin/sh
# tcmd_precision_dtypes.sh: --precision takes a class per dtype (DTYPE=CLASS,...), which the
# report names as the budget's class for that dtype only; bad specs are one line and exit 2 in
# check, suite, fuzz and replay; `suite --dtypes LIST` runs (and lists) only those dtypes.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-precdt-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# per-dtype classes: f16 and f32 as named, bf16 (not named) keeps its default
"$bin" suite --kernel naive-f32 --kernel naive-f16 --kernel naive-bf16 --case f32-1x1-d1-none --case f16-1x1-d1-none \
  --case bf16-1x1-d1-none --precision f16=fp16-cublas,f32=fp32-exp2 > "$tmp/p.txt" 2>&1
grep -q '^PASS  naive-f16 f16-1x1-d1-none .*budget=class:fp16-cublas,' "$tmp/p.txt" || { cat "$tmp/p.txt"; fail "f16 not judged with fp16-cublas"; }
grep -q '^PASS  naive-f32 f32-1x1-d1-none .*budget=class:fp32-exp2,' "$tmp/p.txt" || { cat "$tmp/p.txt"; fail "f32 not judged with fp32-exp2"; }
grep -q '^PASS  naive-bf16 bf16-1x1-d1-none .*budget=class:bf16-fa2,' "$tmp/p.txt" || { cat "$tmp/p.txt"; fail "bf16 lost its default class"; }
# a bare class still applies to every dtype; with DTYPE=CLASS entries, to the others
"$bin" check --kernel naive-f32 --precision fp32-exp2 example:tiny3 2>&1 | grep -q 'budget=class:fp32-exp2,' || fail "bare class"
"$bin" check --kernel naive-f32 --precision f16=fp16-acc16,fp32-exp2 example:tiny3 2>&1 | grep -q 'budget=class:fp32-exp2,' ||
  fail "bare class beside DTYPE=CLASS"
echo "ok: per-dtype classes"

# bad specs: one line, exit 2
for spec in f16=nope x16=fp32 fp32,fp64 f16= ,; do
  for cmd in check fuzz replay; do
    case $cmd in
      check) "$bin" check --kernel naive-f32 --precision "$spec" example:tiny3 > "$tmp/e.txt" 2>&1 ;;
      fuzz) "$bin" fuzz --kernel naive-f32 --precision "$spec" --cases 1 --out "$tmp/never" > "$tmp/e.txt" 2>&1 ;;
      replay) "$bin" replay "$tmp/none.npz" --kernel naive-f32 --precision "$spec" > "$tmp/e.txt" 2>&1 ;;
    esac
    rc=$?
    [ $rc -eq 2 ] || { cat "$tmp/e.txt"; fail "$cmd --precision '$spec': exit $rc, expected 2"; }
    grep -q "precision\|class" "$tmp/e.txt" || { cat "$tmp/e.txt"; fail "$cmd --precision '$spec': no reason"; }
  done
done
[ -e "$tmp/never" ] && fail "a rejected fuzz --precision started a campaign"
"$bin" fuzz --kernel naive-f32 --precision f32=fp32-exp2,f16=fp16-cublas --cases 2 --families normal --no-live \
  --no-minimize --out "$tmp/camp" > "$tmp/f.txt" 2>&1 || { cat "$tmp/f.txt"; fail "fuzz with a per-dtype spec"; }
# a long spec (the f16 entry past character 128) is kept whole by the finding and its replay
long=f64=fp64,float32=fp32-exp2,bfloat16=bf16-cublas,fp8_e4m3=e4m3-fa3,float8_e5m2=e5m2-fa3,float64=fp64,fp32=fp32,f32=fp32,float16=fp16-cublas
"$bin" fuzz --kernel test-crash --precision "$long" --dtypes f16 --cases 1 --families normal --no-live --no-minimize \
  --out "$tmp/long" > "$tmp/f.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/f.txt"; fail "fuzz with a long spec"; }
"$bin" replay "$tmp/long/findings/"* > "$tmp/r.txt" 2>&1
grep -q 'class:fp16-cublas,' "$tmp/r.txt" || { cat "$tmp/r.txt"; fail "replay lost the end of a long spec"; }
echo "ok: bad specs rejected, good ones taken by fuzz and replay"

# suite --dtypes
"$bin" suite --list --kernel naive-f32 --dtypes f32,f16 > "$tmp/l.txt" || fail "suite --list --dtypes"
all=$("$bin" suite --list --kernel naive-f32 | grep -c '^f32-\|^f16-')
[ "$(grep -c '^f32-\|^f16-' "$tmp/l.txt")" -eq "$all" ] || fail "--dtypes f32,f16 lost cases"
grep -v '^f32-\|^f16-\|^example-' "$tmp/l.txt" && fail "--dtypes f32,f16 lists other dtypes"
"$bin" suite --kernel naive-f16 --dtypes f16 --case f32-1x1-d1-none --case f16-1x1-d1-none > "$tmp/s.txt" 2>&1
grep -q 'f32-1x1-d1-none' "$tmp/s.txt" && { cat "$tmp/s.txt"; fail "--dtypes f16 ran an f32 case"; }
grep -q '1 pass, 0 warn, 0 fail, 0 skip, 0 error' "$tmp/s.txt" || { cat "$tmp/s.txt"; fail "--dtypes f16: not one case"; }
for bad in f17 , ""; do
  "$bin" suite --kernel naive-f32 --dtypes "$bad" > "$tmp/e.txt" 2>&1
  [ $? -eq 2 ] || fail "suite --dtypes '$bad' accepted"
done
echo "ok: suite --dtypes"
exit 0
