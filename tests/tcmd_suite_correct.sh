#!/bin/sh
# tcmd_suite_correct.sh: every correct built-in CPU kernel passes `attncheck suite --suite ci` with
# no FAIL and no SUSPECT (one run over all kernels, sharing the oracle cache); the TAP and JUnit
# outputs are well formed.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-suite-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
# the correct CPU kernels: the built-in host kernels that are neither mutants nor test kernels
kernels=$("$bin" list | awk '/^built-in kernels:/{on=1; next} /^$/{on=0} on && $1 != "" && $3 == "host" {print $1}')
[ -n "$kernels" ] || { echo "no built-in host kernels listed"; exit 99; }
args=
for k in $kernels; do args="$args --kernel $k"; done
echo "kernels:" $kernels
"$bin" suite --suite ci $args --policy suspect=fail --policy nondeterministic=fail --policy masked-leak=fail \
  --tap "$tmp/out.tap" --junit "$tmp/out.xml" > "$tmp/out.txt" 2>&1
rc=$?
grep -v '^SKIP' "$tmp/out.txt" | grep -v '^PASS' | head -n 60
grep '^suite ci:' "$tmp/out.txt"
[ $rc -eq 0 ] || { echo "FAIL: suite ci exit $rc (expected 0)"; exit 1; }
# WEAK-CLASS is the one warning a correct kernel may get, and only one of a class other than its
# dtype's standard (the cuBLAS-style composites: fp16 scores overflow past 65504 and bf16 scores
# blur large logits where FlashAttention-2's binary32 scores do not; naive-scaleq-f16/-bf16, of
# fp16-math/bf16-math: Q and K scaled in the input dtype blur large logits likewise; ggml-f16-style
# and q8q-f32-style: an f16 P.V accumulator is vacuous past 2048 keys, Q in f16 or in q8 blocks blurs
# large logits; ggml-q8-ref-f32, of q8kv-f32: Q in q8 blocks likewise, on a quantized K's outliers)
if grep -E '^(FAIL|WARN|ERROR)' "$tmp/out.txt" |
  grep -Ev '^WARN +(cublas-style|naive-scaleq)-b?f16 [^ ]+ (OUT-OF-DOMAIN,)?WEAK-CLASS ' |
  grep -Evq '^WARN +(ggml-f16-style|q8q-f32-style|ggml-q8-ref-f32) [^ ]+ (OUT-OF-DOMAIN,)?WEAK-CLASS '; then
  echo "FAIL: a correct kernel got a FAIL, WARN or ERROR"; exit 1
fi
echo "WEAK-CLASS warnings of the GEMM-composite classes: $(grep -c '^WARN' "$tmp/out.txt")"
npass=$(grep -c '^PASS' "$tmp/out.txt")
[ "$npass" -ge 100 ] || { echo "FAIL: only $npass cases passed"; exit 1; }
# TAP: a plan, one line per test, no "not ok"
head -n 2 "$tmp/out.tap" | grep -q '^1\.\.[0-9][0-9]*$' || { echo "FAIL: TAP has no plan"; exit 1; }
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tmp/out.tap")
nt=$(grep -Ec '^(ok|not ok) [0-9]+ - ' "$tmp/out.tap")
[ "$plan" = "$nt" ] || { echo "FAIL: TAP plan $plan but $nt test lines"; exit 1; }
if grep -q '^not ok' "$tmp/out.tap"; then echo "FAIL: TAP has a not ok"; exit 1; fi
grep -q '# SKIP' "$tmp/out.tap" || { echo "FAIL: TAP lacks the SKIP directive of unsupported dtypes"; exit 1; }
# JUnit: well formed, counts match
py=${PYTHON_NUMPY:-none}
command -v python3 >/dev/null 2>&1 && py=python3
if [ "$py" != none ]; then
  "$py" - "$tmp/out.xml" "$nt" <<'PYEOF' || { echo "FAIL: JUnit XML"; exit 1; }
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
s = d.getElementsByTagName("testsuite")[0]
n = len(d.getElementsByTagName("testcase"))
assert n == int(sys.argv[2]) == int(s.getAttribute("tests")), (n, sys.argv[2], s.getAttribute("tests"))
assert s.getAttribute("failures") == "0" and s.getAttribute("errors") == "0"
assert int(s.getAttribute("skipped")) == len(d.getElementsByTagName("skipped")) > 0
PYEOF
else
  grep -q '<testsuites>' "$tmp/out.xml" && grep -q '</testsuites>' "$tmp/out.xml" || { echo "FAIL: JUnit XML"; exit 1; }
fi
echo "ok: $npass cases passed"
exit 0
