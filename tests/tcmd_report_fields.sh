#!/bin/sh
# tcmd_report_fields.sh: a kernel returning NaN/inf where the exact value is finite gets ulps=inf
# (never a finite figure) and the kind of mismatch on the one-line summary, in the detail line,
# in --json (non-finite numbers as strings) and on replay's console line (inf, never 1e+300);
# every command says which rows it judged (rows=J/T, with the sample's spec).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-fields-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
want() {   # want FILE PATTERN WHAT
  grep -Eq -- "$2" "$1" || { echo "WRONG: $3: no match for $2 in:"; cat "$1"; bad=1; }
}
# large logits: mutant-no-max-sub overflows exp and writes NaN where the exact output is finite
"$bin" gen -o "$tmp/big.npz" --t 64 --dk 16 --sigma 30 --seed 3 > /dev/null || exit 99
"$bin" check --kernel mutant-no-max-sub "$tmp/big.npz" --json "$tmp/c.json" > "$tmp/c.txt" 2>&1
[ $? -eq 1 ] || { echo "WRONG: check did not exit 1"; bad=1; }
want "$tmp/c.txt" '^FAIL .* ulps=inf .* bad=[0-9]+/[0-9]+ rows=64/64 mismatch="nan where exact is finite"' "check summary"
want "$tmp/c.txt" 'kernel 0x[0-9a-f]+ = -?nan .*; nan where exact is finite$' "check detail"
want "$tmp/c.json" '"max_ulps":"inf"' "check json ulps"
want "$tmp/c.json" '"rows_judged":64,"rows_total":64,"rows":"all","mismatch":"nan where exact is finite"' "check json rows"
# a row sample is named
"$bin" check --kernel mutant-no-max-sub "$tmp/big.npz" --rows edges+2 > "$tmp/r.txt" 2>&1
want "$tmp/r.txt" ' rows=10/64\(edges\+2\) ' "check --rows"
"$bin" check --kernel naive-f32 "$tmp/big.npz" --rows 3,7 > "$tmp/p.txt" 2>&1
want "$tmp/p.txt" '^PASS .* rows=2/64\(3,7\) ' "check --rows list"
# replay (the fuzz console line): inf, never 1e+300, and the fuzz row sample
"$bin" replay "$tmp/big.npz" --kernel mutant-no-max-sub > "$tmp/p2.txt" 2>&1
want "$tmp/p2.txt" 'err/W=inf err/E=inf rows=24/64\(edges\+16\) mismatch="nan where exact is finite"' "replay"
want "$tmp/p2.txt" 'ulps=inf' "replay ulps"
if grep -q 'e+300' "$tmp/p2.txt"; then echo "WRONG: replay prints 1e+300"; cat "$tmp/p2.txt"; bad=1; fi
# suite names its sample too (a case judged on edges+8)
"$bin" suite --kernel naive-f32 --case f32-1023x1024-d128-causal > "$tmp/s.txt" 2>&1
want "$tmp/s.txt" ' rows=[0-9]+/1023\(edges\+8\) ' "suite sample"
# the printed reproduce line runs as pasted: a case path with a space and a quote, a kernel spec
# with spaces (an exec command) are quoted as single shell words
mkdir -p "$tmp/dir with 'quote'" || exit 99
cp "$tmp/big.npz" "$tmp/dir with 'quote'/big case.npz"
"$bin" check --kernel mutant-no-max-sub "$tmp/dir with 'quote'/big case.npz" > "$tmp/q.txt" 2>&1
line=$(sed -n 's/^  reproduce: //p' "$tmp/q.txt")
[ -n "$line" ] || { echo "WRONG: no reproduce line"; cat "$tmp/q.txt"; bad=1; }
(cd /; eval "$(echo "$line" | sed "s|^attncheck |\"\$bin\" |")") > "$tmp/q2.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "WRONG: the reproduce line exited $rc: $line"; cat "$tmp/q2.txt"; bad=1; }
"$bin" suite --kernel "exec:sh -c 'exit 3' {in} {out}" --case f32-1x1-d1-none > "$tmp/x.txt" 2>&1
line=$(sed -n 's/^  reproduce: //p' "$tmp/x.txt")
case "$line" in
  *"--kernel 'exec:sh -c '\''exit 3'\'' {in} {out}'"*) ;;
  *) echo "WRONG: suite reproduce line does not quote the exec spec: $line"; cat "$tmp/x.txt"; bad=1 ;;
esac
[ $bad = 0 ] && echo "ok"
exit $bad
