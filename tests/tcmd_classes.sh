#!/bin/sh
# tcmd_classes.sh: precision classes as class strings on the command line (docs/numerics.md §6.1,
# §7.19). For every preset, `list --precision NAME` prints its complete class string, without
# spaces, on the first line, the string given back prints the same, and `suite` on cases of every
# dtype judges byte for byte alike with the name and with the string (the time of the summary
# line aside); bad class strings are refused with one line and exit 2 by every command that takes
# one; --precision repeated prints one table with a column per class, the kernel running once per
# case (a kernel whose last bits change on every run gives both columns the same output), a
# FAIL's line and reproducer per class, a JSON entry per class naming it, TAP entries per class.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-classes-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
wrong() { echo "WRONG: $*"; bad=1; }

# the presets: the first column of list --precision's table
"$bin" list --precision > "$tmp/table.txt" || exit 99
presets=$(awk '/^class /{t=1; next} t && NF == 0 {exit} t {print $1}' "$tmp/table.txt")
n=$(echo "$presets" | wc -w)
[ "$n" -ge 15 ] || wrong "list --precision shows $n presets"
grep -q '^ggml-f16 .*q=f16,pv=f16,rs=acc' "$tmp/table.txt" || wrong "list --precision lacks ggml-f16's parts"
grep -q '^q8q-f32 .*q=q8' "$tmp/table.txt" || wrong "list --precision lacks q8q-f32's parts"
grep -q '^  sub ' "$tmp/table.txt" || wrong "list --precision lacks the part names"

cases="f64-8x8-d16-causal f32-33x47-d64-none-large f32-33x47-d64-none-large-dtypes-f32.f16.f16.f32 \
f32-128x128-d32-causal-b1h4kv4-alibi1 f16-48x48-d16-causal-cliff bf16-64x200-d32-none-ties e4m3-24x40-d16v8-none-tail"
cargs=""
for c in $cases; do cargs="$cargs --case $c"; done
for p in $presets; do
  s=$("$bin" list --precision "$p" | head -n 1)
  case "$s" in *" "* | "") wrong "list --precision $p: first line '$s'" ;; esac
  s2=$("$bin" list --precision "$s" | head -n 1)
  [ "$s" = "$s2" ] || wrong "list --precision of $p's string: '$s2' (want '$s')"
  "$bin" list --precision "$s" | sed -n 2p | grep -q "^preset $p:" || wrong "$p's string is not named $p"
  for form in name string; do
    cls=$p
    [ $form = string ] && cls=$s
    # shellcheck disable=SC2086
    "$bin" suite --kernel test-reference --kernel flash-f32 --precision "$cls" $cargs --tap "$tmp/$form.tap" \
      > "$tmp/$form.out" 2>&1
    echo "rc=$?" >> "$tmp/$form.out"
    sed 's/ ([0-9.]* s)$//' "$tmp/$form.out" > "$tmp/$form.cmp"
  done
  cmp -s "$tmp/name.cmp" "$tmp/string.cmp" || { wrong "suite under $p and under its string differ:"; diff "$tmp/name.cmp" "$tmp/string.cmp" | head -5; }
  cmp -s "$tmp/name.tap" "$tmp/string.tap" || wrong "TAP under $p and under its string differ"
done
echo "ok: $n presets: their strings judge as their names ($(grep -c '^PASS\|^FAIL\|^WARN\|^SKIP' "$tmp/name.out") lines a suite)"

# bad class strings: one line, exit 2, from every command that takes a class
"$bin" gen -o "$tmp/c.npz" --tq 8 --tk 40 --dk 16 --seed 3 > /dev/null || exit 99
for cls in 'q=f8' 'k=q8' 'foo=1' 'q=f16,q=bf16' 'q=f16,pv' 'eu=0' 'f16=' 'q=f16,fp32' 'f17=fp32'; do
  for cmd in "check --kernel flash-f32" "suite --kernel flash-f32 --case f32-1x1-d1-none" "compare" "fuzz --kernel flash-f32 --out $tmp/fz --cases 1" "replay $tmp/c.npz --kernel flash-f32" "list"; do
    # shellcheck disable=SC2086
    "$bin" $cmd --precision "$cls" "$tmp/c.npz" > "$tmp/o" 2> "$tmp/e"
    rc=$?
    [ "$cmd" = list ] && { "$bin" list --precision "$cls" > "$tmp/o" 2> "$tmp/e"; rc=$?; }
    lines=$(wc -l < "$tmp/e")
    [ $rc -eq 2 ] && [ "$lines" -eq 1 ] || { wrong "$cmd --precision '$cls': exit $rc, $lines lines"; cat "$tmp/e"; }
  done
done
echo "ok: bad class strings refused (exit 2, one line)"
"$bin" compare --precision fp32 --precision fp16-fa2 "$tmp/c.npz" > /dev/null 2> "$tmp/e"
[ $? -eq 2 ] || wrong "compare with two --precision"
"$bin" fuzz --kernel flash-f32 --precision fp32 --precision fp32 --out "$tmp/fz2" --cases 1 > /dev/null 2> "$tmp/e"
[ $? -eq 2 ] || wrong "fuzz with two --precision"

# several classes in one run: a table, a column per class
long='q=f16,k=none,v=none,sqk=none,qk=f32,s=none,sm=f32,exp=exp,eu=4,lse=ln,p=none,pv=f16,l=f16,rs=sm,sub=ieee,fold=none'
"$bin" check --kernel flash-f32 --kernel mutant-fast-exp --precision fp32 --precision 'q=f16,pv=f16' \
  --precision "$long" --json "$tmp/j.json" "$tmp/c.npz" > "$tmp/o.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || wrong "check under three classes with a mutant: exit $rc"
grep -q '^fp32  *q=f16,pv=f16  *\[3\]  *kernel case$' "$tmp/o.txt" || { wrong "the table's header"; cat "$tmp/o.txt"; }
grep -q "^  \[3\] = $long\$" "$tmp/o.txt" || wrong "the legend of a long class"
grep -q '^PASS [0-9.e+-]*  *PASS [0-9.e+-]*  *PASS [0-9.e+-]*  *flash-f32 ' "$tmp/o.txt" || wrong "flash-f32's row"
grep -q '^FAIL [0-9.e+-]*  *.*mutant-fast-exp ' "$tmp/o.txt" || wrong "mutant-fast-exp's row"
grep -q '^  fp32: FAIL  mutant-fast-exp .*budget=class:fp32,' "$tmp/o.txt" || wrong "the mutant's fp32 line"
grep -q 'reproduce: attncheck check --kernel mutant-fast-exp --precision fp32 ' "$tmp/o.txt" || wrong "the fp32 reproducer"
short=$("$bin" list --precision 'q=f16,pv=f16' | head -n 1)
for c in '"fp32"' "\"$short\"" "\"$long\""; do
  [ "$(grep -o "\"precision\":$c" "$tmp/j.json" | wc -l)" -eq 2 ] || wrong "JSON entries of class $c"
done
echo "ok: check under three classes: $(head -n 3 "$tmp/o.txt" | tail -n 1)"

# one run per case: a kernel whose last bits change on every run, judged twice under fp32: the two
# JSON entries (one a line) are the same text, while two runs of it differ
"$bin" check --kernel test-nondeterministic --precision fp32 --precision fp32 --json "$tmp/n.json" "$tmp/c.npz" > "$tmp/o.txt" 2>&1
a=$(sed -n 2p "$tmp/n.json" | sed 's/,$//')
b=$(sed -n 3p "$tmp/n.json")
[ -n "$a" ] && [ "$a" = "$b" ] || { wrong "the two fp32 columns saw different outputs"; cut -c1-300 "$tmp/n.json"; }
"$bin" check --kernel test-nondeterministic --json "$tmp/n1.json" "$tmp/c.npz" > /dev/null 2>&1
"$bin" check --kernel test-nondeterministic --json "$tmp/n2.json" "$tmp/c.npz" > /dev/null 2>&1
cmp -s "$tmp/n1.json" "$tmp/n2.json" && wrong "test-nondeterministic gave the same output twice (the one-run check proves nothing)"
echo "ok: the kernel ran once for both classes"

# suite: TAP entries and summary lines per class
"$bin" suite --kernel flash-f32 --case f32-33x47-d64-none-large --case f32-8x8-d16-causal --precision fp32 \
  --precision ggml-f16 --tap "$tmp/s.tap" > "$tmp/s.txt" 2>&1 || wrong "suite under two classes: exit $?"
grep -q 'f32-8x8-d16-causal \[ggml-f16\]' "$tmp/s.tap" && grep -q 'f32-8x8-d16-causal \[fp32\]' "$tmp/s.tap" || wrong "TAP entries per class"
grep -q '^suite ci: flash-f32 \[ggml-f16\]: 2 pass' "$tmp/s.txt" && grep -q '^suite ci: flash-f32 \[fp32\]: 2 pass' "$tmp/s.txt" ||
  { wrong "suite summary per class"; cat "$tmp/s.txt"; }
echo "ok: suite under two classes"
exit $bad
