#!/bin/sh
# tfuzz_grad_meta.sh: the backward's metamorphic checks (GRAD-METAMORPHIC, fuzz/engine/metamorphic_grad.c).
# The correct flash-bwd-f32 and naive-bwd-bf16 run them (some bit for bit) and never draw the verdict;
# test-bwd-dout-clamp (dO clamped to |dO| <= 16) passes `check --grad` on a normal dO, yet a
# campaign finds it non-linear in dO with GRAD-FAIL ignored, bit for bit, and the finding replays;
# test-bwd-key-order (dK, dV of the second half of the keys off by 2^-8) is found on permuted keys.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261201}
tmp=$(mktemp -d /tmp/attncheck-tfuzz-gmeta-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
export ATTNCHECK_CACHE=off

# 1. correct kernels: checks run, none disagrees
for k in flash-bwd-f32 naive-bwd-bf16; do
  "$bin" fuzz --kernel "$k" --cases 30 --seed "$seed" --out "$tmp/$k" --max-t 256 --no-live --no-minimize --quiet \
    > "$tmp/$k.txt" 2>&1
  rc=$?
  [ $rc -le 1 ] || { tail -n 5 "$tmp/$k.txt"; fail "$k: exit $rc"; }
  ls "$tmp/$k/findings" 2>/dev/null | grep -q GRAD-METAMORPHIC && fail "$k: a GRAD-METAMORPHIC finding on a correct kernel"
  n=$(sed -n 's/^grad_metamorphic_checks_this_run=//p' "$tmp/$k/stats")
  x=$(sed -n 's/^grad_metamorphic_bit_exact=//p' "$tmp/$k/stats")
  [ -n "$n" ] && [ "$n" -ge 10 ] || fail "$k: only '${n}' backward metamorphic checks in 30 cases"
  [ -n "$x" ] && [ "$x" -ge 1 ] || fail "$k: no bit-for-bit comparison"
  echo "ok: $k, $n checks ($x bit for bit), worst |diff|/allowed $(sed -n 's/^grad_metamorphic_worst_diff_over_tol=//p' "$tmp/$k/stats")"
done

# 2. non-linear in dO, within the grad judge's budget on a normal dO
m=test-bwd-dout-clamp
"$bin" gen --out "$tmp/c.npz" --dtype f32 --tq 20 --tk 24 --dk 16 --seed 3 --grad normal > /dev/null || fail "gen --grad"
"$bin" check --grad --kernel "$m" "$tmp/c.npz" > "$tmp/c.txt" 2>&1 || { cat "$tmp/c.txt"; fail "$m: check --grad should PASS"; }
"$bin" fuzz --kernel "$m" --cases 24 --seed "$seed" --out "$tmp/$m" --max-t 256 --policy GRAD-FAIL=ignore --stop-on-fail \
  --minimize-evals 40 --no-live --quiet > "$tmp/$m.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { tail -n 5 "$tmp/$m.txt"; fail "$m: exit $rc, expected 1 (GRAD-METAMORPHIC fails by default)"; }
ls "$tmp/$m/findings" | grep -q GRAD-FAIL && fail "$m: GRAD-FAIL is ignored, yet stored"
grep -l '"bit_for_bit":true' "$tmp/$m"/findings/*__GRAD-METAMORPHIC__*/report.json > "$tmp/exact.txt" 2>/dev/null
d=$(dirname "$(head -n 1 "$tmp/exact.txt")")
[ -n "$d" ] && [ -d "$d" ] || fail "$m: no bit-for-bit GRAD-METAMORPHIC finding"
grep -q '"transformation":"dO times 2^' "$d/report.json" || fail "$m: the finding does not name the scaling"
ATTNCHECK="$bin" "$d/repro.sh" > "$tmp/repro.txt" 2>&1
grep -q 'GRAD-METAMORPHIC reproduced' "$tmp/repro.txt" || { cat "$tmp/repro.txt"; fail "$m: repro.sh did not reproduce"; }
echo "found: $m: $(basename "$d")"

# 3. dK, dV depend on the keys' order
m=test-bwd-key-order
"$bin" fuzz --kernel "$m" --cases 24 --seed "$seed" --out "$tmp/$m" --max-t 256 --policy GRAD-FAIL=ignore --stop-on-fail \
  --no-minimize --no-live --quiet > "$tmp/$m.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { tail -n 5 "$tmp/$m.txt"; fail "$m: exit $rc, expected 1"; }
d=$(grep -l '"transformation":"keys permuted' "$tmp/$m"/findings/*__GRAD-METAMORPHIC__*/report.json 2>/dev/null | head -n 1)
[ -n "$d" ] || fail "$m: no GRAD-METAMORPHIC finding on permuted keys"
echo "found: $m: $(basename "$(dirname "$d")")"
exit 0
