#!/bin/sh
# tfuzz_metamorphic.sh: the oracle-free METAMORPHIC verdict of the fuzzer. Correct kernels never
# draw it (their runs on a transformed case agree within twice the class bound), the metamorphic
# checks actually run (stats), and a head/batch-dependent mutant is reported METAMORPHIC even
# with FAIL and SUSPECT ignored; its report.json names the transformation and both values, and
# the reproducer reproduces it.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261129}
tmp=$(mktemp -d /tmp/attncheck-tmeta-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }

# 1. correct kernels: checks run, no METAMORPHIC finding
for k in flash-f32 naive-bf16; do
  "$bin" fuzz --kernel "$k" --cases 160 --seed "$seed" --out "$tmp/$k" --max-t 512 --no-live --quiet > "$tmp/$k.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { cat "$tmp/$k.txt"; fail "correct kernel $k: exit $rc"; }
  n=$(sed -n 's/^metamorphic_checks_this_run=//p' "$tmp/$k/stats")
  [ -n "$n" ] && [ "$n" -ge 40 ] || fail "$k: only '${n}' metamorphic checks in 160 cases"
  ls "$tmp/$k/findings" 2>/dev/null | grep -q METAMORPHIC && fail "$k: METAMORPHIC finding on a correct kernel"
  echo "ok: $k, $n metamorphic checks, worst |diff|/tol $(sed -n 's/^metamorphic_worst_diff_over_tol=//p' "$tmp/$k/stats")"
done

# 2. K and V addressed with batch and head strides swapped: found without the oracle's verdicts
m=mutant-head-batch-swap
"$bin" fuzz --kernel "$m" --cases 80 --seed "$seed" --out "$tmp/$m" --families per_head,normal --policy FAIL=ignore \
  --policy SUSPECT=ignore --minimize-evals 30 --no-live --quiet > "$tmp/$m.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { tail -n 5 "$tmp/$m.txt"; fail "$m: exit $rc, expected 1 (METAMORPHIC fails by default)"; }
d=$(ls -d "$tmp/$m"/findings/*__METAMORPHIC__* 2>/dev/null | head -n 1)
[ -n "$d" ] || fail "$m: no METAMORPHIC finding"
grep -q '"kind":"METAMORPHIC"' "$d/report.json" || fail "$m: report.json does not name the kind"
for f in '"transformation"' '"kernel_transformed"' '"tolerance"'; do
  grep -q "$f" "$d/report.json" || fail "$m: report.json lacks $f"
done
ATTNCHECK="$bin" "$d/repro.sh" > "$tmp/repro.txt" 2>&1
grep -q 'METAMORPHIC reproduced' "$tmp/repro.txt" || { cat "$tmp/repro.txt"; fail "$m: repro.sh did not reproduce"; }
echo "found: $m: $(basename "$d")"

# 3. the policy applies like any other kind
"$bin" fuzz --kernel "$m" --cases 20 --seed "$seed" --out "$tmp/ign" --families per_head --policy FAIL=ignore \
  --policy SUSPECT=ignore --policy METAMORPHIC=ignore --policy GUARD=ignore --policy CRASH=ignore --policy UNWRITTEN=ignore \
  --no-live --quiet > "$tmp/ign.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$tmp/ign.txt"; fail "METAMORPHIC=ignore: exit $rc, expected 0"; }
exit 0
