#!/bin/sh
# tfuzz_grad.sh: campaigns on kernels that declare a backward judge it too (GRAD-FAIL). Each
# backward mutant (its forward is correct) is found within 100 cases, with a GRAD-FAIL finding
# whose report names the dO pattern; the correct flash-bwd-f32 gives none, and campaign.json
# records the probed backward. The varlen backward: flash-varlen-f32 gives no finding, the
# mutant-varlen-bwd-cu-k is found on a varlen_mix case.
# A finding's case carries the dO it was judged with (member do):
# `check --grad` on it and on its minimized case fails with exit 1, and replay reproduces it.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
seed=${ATTNCHECK_TEST_SEED:-20261201}
tmp=$(mktemp -d /tmp/attncheck-tfuzz-grad-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [seed $seed]: $*"; exit 1; }
export ATTNCHECK_CACHE=off

"$bin" fuzz --kernel flash-bwd-f32 --cases 100 --seed "$seed" --out "$tmp/ok" --max-t 256 --no-live > "$tmp/ok.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$tmp/ok.txt"; fail "flash-bwd-f32: exit $rc, expected 0"; }
ls "$tmp/ok/findings" 2>/dev/null | grep -q GRAD-FAIL && fail "flash-bwd-f32: a GRAD-FAIL finding"
grep -q '"backward": *1' "$tmp/ok/campaign.json" || fail "campaign.json does not record the backward"
ng=$(sed -n 's/^grad_checked_this_run=//p' "$tmp/ok/stats")
[ "${ng:-0}" -ge 20 ] || fail "flash-bwd-f32: the backward was judged on ${ng:-no} cases of 100"
echo "ok: flash-bwd-f32, 100 cases ($ng with the backward judged), no GRAD-FAIL"
# very negative logits and far sentinels (infinite W) are outside the backward's budget: no finding
"$bin" fuzz --kernel naive-bwd-f32 --cases 60 --seed 9 --out "$tmp/naive" --max-t 256 --no-live --no-minimize --quiet \
  > "$tmp/naive.txt" 2>&1 || { ls "$tmp/naive/findings"; fail "naive-bwd-f32 (seed 9): a finding"; }

for m in mutant-bwd-d-wrong-row mutant-bwd-dk-no-scale mutant-bwd-gqa-no-sum mutant-bwd-no-causal mutant-bwd-no-lse \
         mutant-bwd-dp-rounded mutant-bwd-skip-last-tile mutant-bwd-lse-bf16 mutant-bwd-softcap-noderiv; do
  "$bin" fuzz --kernel "$m" --cases 100 --seed "$seed" --out "$tmp/$m" --max-t 256 --stop-on-fail --no-minimize --no-live \
    > "$tmp/$m.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { tail -n 5 "$tmp/$m.txt"; fail "$m: exit $rc, expected 1 (found)"; }
  d=$(ls -d "$tmp/$m"/findings/*__GRAD-FAIL__* 2>/dev/null | head -n 1)
  [ -n "$d" ] || fail "$m: no GRAD-FAIL finding stored"
  grep -q 'backward (dO [a-z-]*)' "$d/report.json" || fail "$m: the finding does not name the dO pattern"
  echo "ok: $m found ($(basename "$d"))"
done
# varlen batches: the backward of flash-varlen-f32 gives no finding, a varlen backward mutant is found
"$bin" fuzz --kernel flash-varlen-f32 --cases 40 --seed "$seed" --out "$tmp/vl" --max-t 256 --no-live --quiet \
  > "$tmp/vl.txt" 2>&1 || { ls "$tmp/vl/findings"; fail "flash-varlen-f32: a finding"; }
"$bin" fuzz --kernel mutant-varlen-bwd-cu-k --cases 40 --seed "$seed" --out "$tmp/vlm" --max-t 256 --stop-on-fail \
  --no-minimize --no-live > "$tmp/vlm.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { tail -n 5 "$tmp/vlm.txt"; fail "mutant-varlen-bwd-cu-k: exit $rc, expected 1 (found)"; }
ls "$tmp/vlm/findings" | grep -q '__GRAD-FAIL__varlen_mix__' || fail "mutant-varlen-bwd-cu-k: no varlen GRAD-FAIL finding"
echo "ok: flash-varlen-f32 without findings, mutant-varlen-bwd-cu-k found"
# the finding's case and its minimized case replay with the CLI
m=mutant-bwd-dk-no-scale
"$bin" fuzz --kernel "$m" --cases 30 --seed "$seed" --out "$tmp/min" --max-t 256 --stop-on-fail --minimize-evals 80 --no-live \
  --quiet > "$tmp/min.txt" 2>&1
d=$(ls -d "$tmp/min"/findings/*__GRAD-FAIL__* 2>/dev/null | head -n 1)
[ -n "$d" ] && [ -f "$d/minimized.npz" ] || fail "$m: no minimized GRAD-FAIL finding"
"$bin" info "$d/case.npz" | grep -q '^ *do ' || fail "$m: the finding's case has no member do"
for f in case.npz minimized.npz; do
  "$bin" check --grad --kernel "$m" "$d/$f" > "$tmp/chk.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$tmp/chk.txt"; fail "$m: check --grad $f: exit $rc, expected 1"; }
  grep -q '^FAIL ' "$tmp/chk.txt" || fail "$m: check --grad $f: no FAIL line"
done
"$bin" check --grad --kernel flash-bwd-f32 "$d/minimized.npz" > "$tmp/chk.txt" 2>&1 || { cat "$tmp/chk.txt"; fail "flash-bwd-f32 on the minimized case"; }
"$bin" replay "$d" --kernel "$m" > "$tmp/rep.txt" 2>&1
grep -q 'GRAD-FAIL reproduced' "$tmp/rep.txt" || { cat "$tmp/rep.txt"; fail "$m: replay did not reproduce"; }
echo "ok: $m: case.npz and minimized.npz ($(sed -n 's/.*"minimized_size":"\([^"]*\)".*/\1/p' "$d/report.json" | tr -d '\\')) fail check --grad"
# a kernel without a backward: campaign.json records none
"$bin" fuzz --kernel flash-f32 --cases 3 --seed "$seed" --out "$tmp/fwd" --no-live --quiet > /dev/null 2>&1
grep -q '"backward": *0' "$tmp/fwd/campaign.json" || fail "flash-f32: campaign.json should record no backward"
exit 0
