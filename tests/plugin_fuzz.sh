#!/bin/sh
# plugin_fuzz.sh: the example plugin's own campaign. Each of its kernels gets a 300-case fuzz
# campaign (every family it declares, the nonfinite and variant families among them) that must
# end with 0 findings of policy fail: the example a newcomer copies is correct, not only on the fixed suite.
# (A maximum that skipped NaN scores, `if (s[n] > m)`, gave 0 and LSE -inf for a row whose
# only score is NaN: FAIL on the nonfinite family within 200 cases.)
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
so=${abs_top_builddir:-.}/examples/plugin/.libs/myplugin.so
seed=${ATTNCHECK_TEST_SEED:-1}
[ -f "$so" ] || { echo "example plugin not built: $so"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attncheck-pluginfuzz-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
export ATTNCHECK_CACHE=off
for k in myplugin-naive-f32 myplugin-nolse-f32; do
  out=$("$bin" fuzz --kernel "$so:$k" --cases 300 --seed "$seed" --out "$tmp/$k" --no-live --no-minimize 2>&1)
  rc=$?
  echo "$out" | grep '^campaign '
  [ $rc -eq 0 ] || { echo "$out"; echo "FAIL [seed $seed]: $k: fuzz exits $rc"; exit 1; }
  # no finding of policy fail (a SUSPECT, policy warn, is the typical-error band a correct kernel may enter)
  grep -q '^findings_fail=0$' "$tmp/$k/stats" || { echo "$out"; echo "FAIL [seed $seed]: $k: findings"; exit 1; }
  # the campaign really met the cases that matter: NaN/inf inputs and the variants it declares
  for f in nonfinite window softcap alibi bias bool_mask sinks variant_mix; do
    n=$(sed -n "s/^family\.$f=//p" "$tmp/$k/stats")
    [ "${n:-0}" -ge 3 ] || { echo "FAIL [seed $seed]: $k: family $f drew ${n:-0} cases"; exit 1; }
  done
done
exit 0
