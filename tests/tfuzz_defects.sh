#!/bin/sh
# tfuzz_defects.sh: one defect, one finding (docs/fuzzing.md "Defects"), both ways, with --cases.
# Two shards of a small campaign on mutant-no-rescale-sum, one planted defect: each reports one
# defect for its several findings (every report.json naming it, defects.json, stats and
# campaign.json counting it), and so does their merge, judged again or by the recorded
# fingerprints (--no-rerun). Two mutant2- kernels, two planted defects each: two defects with
# policy fail, told apart by what they need (GQA; a bottom-right mask with tq != tk). Single mutants
# that fail several ways (a causal off-by-one's NaN row and short rows; dv read as dk's NaN and wrong
# values; a masked NaN leak's FAIL and MASKED-LEAK): one defect each, joined by their trigger; and a
# mutant2- kernel whose two defects each have a trigger of its own: two. A binary16 sum's wrong values
# and its overflow: one defect; beside a causal off-by-one, two.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
tmp=$(mktemp -d /tmp/attncheck-defects-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
# defects DIR WANT: the summary (DIR.txt) says WANT defects, all with policy fail, one line each, and the
# findings' count last; stats and campaign.json count them; every finding names one
defects() {
  head=$(grep -E '^[0-9]+ defects? \([0-9]+ with policy fail\) in ' "$1.txt") || { cat "$1.txt"; fail "$1: no defects line"; }
  nd=$(echo "$head" | sed 's/^\([0-9]*\) .*/\1/')
  nfail=$(echo "$head" | sed 's/^[0-9]* defects\{0,1\} (\([0-9]*\) with policy fail).*/\1/')
  [ "$nfail" -eq "$2" ] || { cat "$1.txt"; fail "$1: $nfail defects with policy fail, not $2"; }
  [ "$nd" -eq "$2" ] || { cat "$1.txt"; fail "$1: $nd defects, not $2"; }
  [ "$(grep -c '^defect [0-9]*: ' "$1.txt")" -eq "$nd" ] || fail "$1: not one line per defect"
  last=$(tail -n 1 "$1.txt")
  case "$last" in *" findings ("*" with policy fail) in $1/findings") ;; *) fail "$1: last line: $last" ;; esac
  nf=$(echo "$last" | sed 's/^\([0-9]*\) .*/\1/')
  grep -q "^defects=$nd\$" "$1/stats" || fail "$1/stats: not defects=$nd"
  grep -q "^defects_fail=$nfail\$" "$1/stats" || fail "$1/stats: not defects_fail=$nfail"
  [ "$(grep -c '"defect":{' "$1"/findings/*/report.json | grep -c ':1$')" -eq "$nf" ] || fail "$1: a finding without its defect"
  grep -q "\"id\":$nd," "$1/defects.json" || fail "$1/defects.json: no defect $nd"
}
for i in 0 1; do
  "$bin" fuzz --kernel mutant-no-rescale-sum --families normal,late_max,tile_edge,v_cancel --cases 16 --shard $i/2 \
    --no-live --out "$tmp/s$i" > "$tmp/s$i.txt" 2>&1
  [ $? -eq 1 ] || { cat "$tmp/s$i.txt"; fail "shard $i: expected exit 1"; }
  defects "$tmp/s$i" 1
  grep -q '"defects":1,' "$tmp/s$i/campaign.json" || fail "shard $i: campaign.json does not count one defect"
done
grep -q '^defect 1: FAIL o value and the LSE value on 1 query x 6[5-9] keys (dk [0-9]*, dv 1, f32); needs nothing else; ' \
  "$tmp/s0.txt" || { cat "$tmp/s0.txt"; fail "shard 0: not the missing rescale's defect"; }
"$bin" merge "$tmp/s0" "$tmp/s1" -o "$tmp/m" > "$tmp/m.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/m.txt"; fail "merge: expected exit 1"; }
grep -v '^/' "$tmp/m.txt" | grep -v '^merged into ' > "$tmp/m.sum"
cp "$tmp/m.sum" "$tmp/m.txt"
defects "$tmp/m" 1
mf=$nf
[ "$mf" -ge 3 ] || fail "merge: $mf findings (the test wants several of one defect)"
grep -q '"shard_defect":{' "$tmp/m/findings/"*__FAIL__*/report.json || fail "merge: the shard's defect not kept"
grep -q 'Defects (1)' "$tmp/m/report.html" || fail "merge: report.html has no table of one defect"
"$bin" merge "$tmp/s0" "$tmp/s1" -o "$tmp/n" --no-rerun > "$tmp/n.txt" 2>&1
grep -q '^1 defect (1 with policy fail) in ' "$tmp/n.txt" || { cat "$tmp/n.txt"; fail "merge --no-rerun: not one defect"; }
grep -q '"joined":"the same recorded fingerprint (not judged again)"' "$tmp/n/findings/"*/report.json ||
  fail "merge --no-rerun: no finding joined by its recorded fingerprint"
# two planted defects: two defects, whatever the findings
"$bin" fuzz --kernel mutant2-gqa-modulo-lse-log2 --families gqa,normal --cases 24 --no-live --out "$tmp/g" > "$tmp/g.txt" 2>&1
defects "$tmp/g" 2
grep -q '^defect [0-9]*: FAIL the LSE value on .*; needs nothing else; ' "$tmp/g.txt" || fail "gqa-lse-log2: no LSE defect"
grep -q '^defect [0-9]*: FAIL o value and the LSE value on .*; needs gqa; ' "$tmp/g.txt" || fail "gqa-lse-log2: no GQA defect"
"$bin" fuzz --kernel mutant2-fast-exp-causal-top-left --families tq_ne_tk,normal --cases 24 --no-live --out "$tmp/f" > "$tmp/f.txt" 2>&1
defects "$tmp/f" 2
grep -q '; needs causal-bottom-right; ' "$tmp/f.txt" || fail "fast-exp-top-left: no defect needing a bottom-right mask"
grep -q '; needs nothing else; ' "$tmp/f.txt" || fail "fast-exp-top-left: no defect of the fast exp"
# one planted defect that fails in several ways, each way gone without what it needs: one defect, the
# findings of the other ways joined by their trigger (docs/fuzzing.md "Defects", "The same trigger")
# trig NAME KERNEL FAMILIES CASES TRIGGER: one defect; findings of at least two fingerprints; one joined
# by TRIGGER
trig() {
  "$bin" fuzz --kernel "$2" --families "$3" --cases "$4" --no-live --out "$tmp/$1" > "$tmp/$1.txt" 2>&1
  defects "$tmp/$1" 1
  nk=$(grep -ho '"key":"[^"]*"' "$tmp/$1"/findings/*/report.json | sort -u | wc -l)
  [ "$nk" -ge 2 ] || fail "$2: findings of $nk fingerprint(s): the test wants several ways to fail"
  grep -A1 '"trigger":\[' "$tmp/$1"/findings/*/report.json | grep -q "\"$5\"" || fail "$2: no finding joined by the trigger $5"
}
trig to mutant-causal-off-by-one tq_ne_tk,normal,gqa,dominant 60 causal
grep -q '"key":"FAIL o=value,lse=value needs=causal-bottom-right"' "$tmp/to"/findings/*/report.json ||
  fail "off-by-one: no row one key short among its findings"
# merged without judging again, the trigger by which they joined keeps them one defect
"$bin" merge "$tmp/to" -o "$tmp/tm" --no-rerun > "$tmp/tm.txt" 2>&1
grep -v '^/' "$tmp/tm.txt" | grep -v '^merged into ' > "$tmp/tm.sum"
cp "$tmp/tm.sum" "$tmp/tm.txt"
defects "$tmp/tm" 1
grep -q '"joined":"the same recorded trigger (not judged again)"' "$tmp/tm/findings/"*/report.json ||
  fail "merge --no-rerun: no finding joined by its recorded trigger"
trig tv mutant-dv-as-dk head_dim,normal,dominant 40 dv-ne-dk
trig tn mutant-masked-nan-leak nonfinite,normal,large_mag,late_max 60 causal
grep -q '"key":"MASKED-LEAK o=non-finite needs=causal,nonfinite"' "$tmp/tn"/findings/*/report.json ||
  fail "masked-nan-leak: no MASKED-LEAK among its findings"
# a paged cache's block table read at the wrong row: wrong values, NaN, OUT-OF-SEQUENCE, one defect
# (each sequence alone passes: the layout is the trigger)
trig tb mutant-block-table-row page_table,decode 30 paged
# and two planted defects, each with a trigger of its own (dv != dk; a bottom-right mask): two
"$bin" fuzz --kernel mutant2-dv-as-dk-empty-row-nan --families head_dim,tq_ne_tk --cases 32 --no-live --out "$tmp/te" > "$tmp/te.txt" 2>&1
defects "$tmp/te" 2
grep -q '; needs dv-ne-dk; ' "$tmp/te.txt" || fail "dv-as-dk-empty-row-nan: no defect needing dv != dk"
grep -q '; needs causal-bottom-right; ' "$tmp/te.txt" || fail "dv-as-dk-empty-row-nan: no defect of the empty row"
# a P.V sum kept in binary16: its wrong values and its overflow (o non-finite) are one defect, joined as
# a wrong value that overflows; merged without judging again, still one; beside a causal off-by-one,
# two (docs/fuzzing.md "A wrong value that overflows")
"$bin" fuzz --kernel mutant-f16-acc-pv --families large_v,normal --cases 16 --no-live --out "$tmp/ov" > "$tmp/ov.txt" 2>&1
defects "$tmp/ov" 1
grep -q '"key":"FAIL o=non-finite needs=-"' "$tmp/ov"/findings/*/report.json || fail "f16-acc-pv: no overflow among its findings"
grep -q '"key":"FAIL o=value needs=-"' "$tmp/ov"/findings/*/report.json || fail "f16-acc-pv: no wrong value among its findings"
grep -q '"overflow_of_value":true' "$tmp/ov"/findings/*/report.json || fail "f16-acc-pv: none joined as a wrong value that overflows"
grep -q '^defect 1: FAIL o value on ' "$tmp/ov.txt" || { cat "$tmp/ov.txt"; fail "f16-acc-pv: the defect not told by its wrong value"; }
"$bin" merge "$tmp/ov" -o "$tmp/ovm" --no-rerun > "$tmp/ovm.txt" 2>&1
grep -q '^1 defect (1 with policy fail) in ' "$tmp/ovm.txt" || { cat "$tmp/ovm.txt"; fail "merge --no-rerun: the overflow not kept in its defect"; }
grep -q '"joined":"the same recorded overflow (not judged again)"' "$tmp/ovm/findings/"*/report.json ||
  fail "merge --no-rerun: no finding joined by its recorded overflow"
"$bin" fuzz --kernel mutant2-causal-off-by-one-f16-acc --families large_v,normal,tq_ne_tk --cases 16 --no-live --out "$tmp/od" > "$tmp/od.txt" 2>&1
defects "$tmp/od" 2
grep -q '; needs causal' "$tmp/od.txt" || fail "causal-off-by-one-f16-acc: no defect needing the mask"
grep -q '^defect [0-9]*: FAIL o value on .*; needs nothing else; ' "$tmp/od.txt" || fail "causal-off-by-one-f16-acc: no defect of the f16 sum"
echo "ok: one defect in each shard and in their merge ($mf findings); two in each mutant2- kernel; one for each defect failing several ways (a paged cache's and an overflowing sum's too)"
