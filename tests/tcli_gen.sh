#!/bin/sh
# tcli_gen: attncheck gen / info from the outside: help, usage errors (exit 2), every option,
# the worked examples, and one-line refusals of bad case files.
bin=${ATTNCHECK_BIN:-${abs_top_builddir:-.}/attncheck}
if ! test -x "$bin"; then echo "attncheck binary not found at $bin"; exit 99; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-tcli-XXXXXX") || exit 99
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE DESCRIPTION -- COMMAND...: runs it with stdout/stderr in $tmp/out, $tmp/err.
expect() {
  code=$1; what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if test "$rc" != "$code"; then
    fail "$what: exit $rc, expected $code ($*)"; sed 's/^/  | /' "$tmp/err"
  fi
}

expect 0 "gen --help" -- "$bin" gen --help
grep -q -- '--example' "$tmp/out" || fail "gen --help does not mention --example"
expect 0 "info --help" -- "$bin" info --help
expect 2 "gen without --out" -- "$bin" gen --dtype f32
expect 2 "gen unknown option" -- "$bin" gen --out "$tmp/x.npz" --bogus
grep -q "gen --help" "$tmp/err" || fail "usage error does not point to --help"
expect 2 "gen bad dtype" -- "$bin" gen --out "$tmp/x.npz" --dtype f7
expect 2 "gen bad mask" -- "$bin" gen --out "$tmp/x.npz" --mask diagonal
expect 2 "gen bad number" -- "$bin" gen --out "$tmp/x.npz" --tq 3x
expect 2 "gen bad scale" -- "$bin" gen --out "$tmp/x.npz" --scale nan
expect 2 "gen bad dist" -- "$bin" gen --out "$tmp/x.npz" --dist cauchy
expect 2 "gen bad layout" -- "$bin" gen --out "$tmp/x.npz" --layout zigzag
expect 2 "gen kv-heads not dividing" -- "$bin" gen --out "$tmp/x.npz" --heads 3 --kv-heads 2
expect 2 "gen zero dim" -- "$bin" gen --out "$tmp/x.npz" --dk 0
expect 2 "gen over the memory cap" -- "$bin" gen --out "$tmp/x.npz" --t 4096 --mem-cap 1M
expect 2 "gen unknown example" -- "$bin" gen --out "$tmp/x.npz" --example nope
expect 2 "gen example with shape options" -- "$bin" gen --out "$tmp/x.npz" --example tiny3 --dtype bf16
expect 2 "gen into a missing folder" -- "$bin" gen --out "$tmp/no/such/x.npz" --t 2
expect 2 "gen stray argument" -- "$bin" gen --out "$tmp/x.npz" extra
test -e "$tmp/x.npz" && fail "a refused gen left $tmp/x.npz"
expect 2 "info unknown option" -- "$bin" info --bogus
expect 2 "info without a file" -- "$bin" info

expect 0 "gen tiny3" -- "$bin" gen --out "$tmp/tiny3.npz" --example tiny3
expect 0 "info tiny3" -- "$bin" info "$tmp/tiny3.npz"
for want in "dtype      f32" "mask       causal" "0x1.6a09e667f3bcdp-1" "example:tiny3" "tq 3, tk 3, dk 2, dv 2" \
            "o    absent" "lse  absent"; do
  grep -qF "$want" "$tmp/out" || fail "info tiny3 lacks '$want'"
done
# q of tiny3: min 0, max 1, mean 4/6, two zeros.
grep -E '^  q +\[1,1,3,2\] +0 +1 +0\.666667 +2 +0 +0 +0$' "$tmp/out" >/dev/null || fail "info tiny3 q statistics: $(grep '^  q ' "$tmp/out")"

expect 0 "gen -o (the short form of --out)" -- "$bin" gen -o "$tmp/short.npz" --t 3 --dk 2 --seed 1
test -s "$tmp/short.npz" || fail "gen -o wrote nothing"
expect 0 "gen -h" -- "$bin" gen -h
expect 0 "explain -h" -- "$bin" explain -h
expect 0 "gen with every option" -- "$bin" gen --out "$tmp/all.npz" --dtype e4m3 --mask causal-bottom-right --batch 2 \
  --heads 4 --kv-heads 2 --tq 3 --tk 5 --dk 8 --dv 4 --scale -0x1.8p-2 --seed 99 --case-index 7 --dist uniform \
  --lo -2 --hi 2 --layout bthd-padded --pad 3 --mem-cap 1G
expect 0 "info all" -- "$bin" info "$tmp/all.npz"
for want in "dtype      e4m3" "causal-bottom-right" "batch 2, heads 4, kv_heads 2, tq 3, tk 5, dk 8, dv 4" \
            "-0.375 (-0x1.8p-2)" "seed       99, case index 7" '"dist":"uniform"' "q [132, 11, 44, 1]" \
            "k [110, 11, 22, 1]" "v [70, 7, 14, 1]"; do
  grep -qF -- "$want" "$tmp/out" || fail "info all lacks '$want'"
done
expect 0 "gen zeros" -- "$bin" gen --out "$tmp/z.npz" --dist zeros --t 4 --dk 2 --dtype f16
expect 0 "info zeros" -- "$bin" info "$tmp/z.npz"
grep -E '^  k +\[1,1,4,2\] +0 +0 +0 +8 +0 +0 +0$' "$tmp/out" >/dev/null || fail "zeros: $(grep '^  k ' "$tmp/out")"
expect 0 "gen is deterministic (1)" -- "$bin" gen --out "$tmp/d1.npz" --seed 5 --t 7 --dk 3 --dtype bf16
expect 0 "gen is deterministic (2)" -- "$bin" gen --out "$tmp/d2.npz" --seed 5 --t 7 --dk 3 --dtype bf16
cmp -s "$tmp/d1.npz" "$tmp/d2.npz" || fail "the same gen options wrote different files"
expect 0 "gen another seed" -- "$bin" gen --out "$tmp/d3.npz" --seed 6 --t 7 --dk 3 --dtype bf16
cmp -s "$tmp/d1.npz" "$tmp/d3.npz" && fail "seeds 5 and 6 wrote the same file"

# Bad files: exit 2, exactly one line on stderr naming the file.
printf 'not a zip\n' >"$tmp/bad.npz"
head -c 300 "$tmp/tiny3.npz" >"$tmp/trunc.npz"
for f in "$tmp/bad.npz" "$tmp/trunc.npz" "$tmp/missing.npz"; do
  expect 2 "info $f" -- "$bin" info "$f"
  test "$(wc -l <"$tmp/err")" -eq 1 || fail "info $f: stderr is not one line: $(cat "$tmp/err")"
  grep -qF "$f" "$tmp/err" || fail "info $f: stderr does not name the file"
done
# A bad file among good ones: the good ones are still shown, the exit is 2.
expect 2 "info good and bad" -- "$bin" info "$tmp/tiny3.npz" "$tmp/bad.npz" "$tmp/all.npz"
test "$(grep -c '^  dtype' "$tmp/out")" -eq 2 || fail "info good+bad did not show both good files"
expect 2 "info over the cap" -- "$bin" info --mem-cap 100 "$tmp/all.npz"
grep -q "memory cap" "$tmp/err" || fail "info --mem-cap: $(cat "$tmp/err")"

expect 0 "gen andrea-120m" -- "$bin" gen --out "$tmp/andrea.npz" --example andrea-120m
expect 0 "info andrea-120m" -- "$bin" info "$tmp/andrea.npz"
for want in "heads 12, kv_heads 12, tq 1024, tk 1024, dk 64, dv 64" "seed       1," "0.125 (0x1p-3)"; do
  grep -qF "$want" "$tmp/out" || fail "info andrea-120m lacks '$want'"
done

# A case with attention variants: info names them, explain shows the formula's stages per key
# (the window and the boolean mask hide keys, the sink joins the weights) and its exact output
# rounds to the oracle's value.
expect 0 "gen variants" -- "$bin" gen -o "$tmp/w.npz" --t 6 --dk 4 --window 1,1 --softcap 2 --alibi 1 --bias normal \
  --sinks normal --bool-mask random --seed 1
expect 0 "info variants" -- "$bin" info "$tmp/w.npz"
grep -qF "variants   window,softcap,alibi,bias,bool_mask,sinks; window (1, 1) bottom-right" "$tmp/out" ||
  fail "info variants: $(grep variants "$tmp/out")"
expect 0 "explain variants" -- env ATTNCHECK_CACHE=off "$bin" explain "$tmp/w.npz" --row 2
for want in "variants: window,softcap,alibi,bias,bool_mask,sinks" "capped" "+alibi" "+bias" "no (window)" \
  "no (bool mask)" "2 of 6 keys visible, and the sink" "the sink included" \
  "0     0.037876197912879535587      0.0378761962 (0x3d1b2412)"; do
  grep -qF -- "$want" "$tmp/out" || fail "explain variants lacks '$want'"
done
grep -q "6 of 6 keys visible" "$tmp/out" && fail "explain variants counts every key visible"

rm -rf "$tmp"
if test $fails -ne 0; then echo "$fails failure(s)"; exit 1; fi
echo "tcli_gen: all passed"
exit 0
