#!/bin/sh
# tfuzz_relabel.sh: labels from the whole case. test-leak-row-fail leaks masked NaN (MASKED-LEAK, a
# warning) on every row and is off by 1 in one interior row per (batch, head) of cases with more
# than 48 rows, which the fuzzer judges on a row sample that rarely holds that row. Before a
# finding is stored from such a sample as a warning it is judged again on all rows: every stored
# kind is one `check` of its case reports, the FAIL the sample missed is stored too, and
# report.json's label_rows says where the label comes from; past the work bound
# (ATTNCHECK_RELABEL_MAX_WORK here) the minimized form is judged on all rows instead.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
export ATTNCHECK_CACHE=off
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-relabel-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
k=test-leak-row-fail
field() { sed -n "s/^ *\"$2\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1; }
"$bin" fuzz --kernel $k --families nonfinite --cases 30 --no-minimize --seed 1 --out "$tmp/c" --quiet >/dev/null 2>&1
[ -d "$tmp/c/findings" ] || fail "no campaign"
again=0
for d in "$tmp/c/findings"/*/; do
  kind=$(field "$d/report.json" kind)
  label=$(sed -n 's/^ *"label_rows": *"\(.*\)",*$/\1/p' "$d/report.json")
  line=$("$bin" check --kernel $k "$d/case.npz" 2>&1 | head -n 1)
  kinds=$(echo "$line" | awk '{print $4}')
  echo "$kind [$label] check: $kinds"
  echo ",$kinds," | grep -q ",$kind," || fail "stored $kind, but check of its case says $kinds"
  case "$label" in
  "all rows"*) ;;
  "row sample (a FAIL on the sample"*) echo ",$kinds," | grep -q ",FAIL," || fail "a FAIL on the sample that check does not see" ;;
  *) [ "$kind" = FAIL ] || fail "a $kind labelled from a row sample ($label)" ;;
  esac
  case "$label" in "all rows (judged again"*) again=$((again + 1)) ;; esac
done
[ $again -gt 0 ] || fail "no finding was judged again on all rows (the case stream no longer meets the test's kernel)"
grep -q '^findings_fail=[1-9]' "$tmp/c/stats" || fail "the FAIL the row sample missed is not stored"
# past the bound: the minimized form, judged on all its rows
ATTNCHECK_RELABEL_MAX_WORK=1000 "$bin" fuzz --kernel $k --families nonfinite --cases 30 --seed 1 --out "$tmp/m" --quiet \
  >/dev/null 2>&1
n=0
for d in "$tmp/m/findings"/*/; do
  grep -q '"label_rows": *"all rows of the minimized case' "$d/report.json" || continue
  n=$((n + 1))
  [ -f "$d/minimized.npz" ] || fail "a label from the minimized case without minimized.npz"
  kind=$(field "$d/report.json" kind)
  kinds=$("$bin" check --kernel $k "$d/minimized.npz" 2>&1 | head -n 1 | awk '{print $4}')
  echo ",$kinds," | grep -q ",$kind," || fail "stored $kind, but check of the minimized case says $kinds"
done
[ $n -gt 0 ] || fail "no finding took its label from the minimized case"
echo "ok: labels from every row of the case (or of its minimized form)"
exit 0
