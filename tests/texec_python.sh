#!/bin/sh
# texec_python.sh: python/attncheck/worker/protocol.py. The README's exec examples work as
# pasted (whatever python3 comes first on PATH); a worker built on the helper declares dtypes and
# precision classes per dtype (--precision still overrides); NotImplementedError is SKIP in both
# forms; writes_lse without an lse is UNWRITTEN; the bf16/fp8 encoders round to nearest even;
# torch_sdpa.py refuses every case without PyTorch (and passes with it, math backend on the CPU);
# sdpa_numpy.py declares and computes every attention variant (suite variant and mixed-dtype
# cases and generated ones: empty rows with sinks, top-left windows, broadcast masks, each
# tensor in its own dtype), and a
# one-shot exec: kernel never gets a variant case.
# Skipped (77) without python3 with numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
top=${abs_top_builddir:-.}
py=${PYTHON_NUMPY:-none}
if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy"; exit 77; fi
ATTNCHECK_CACHE=$top/tests/cache-compare
PYTHONDONTWRITEBYTECODE=1
export ATTNCHECK_CACHE PYTHONDONTWRITEBYTECODE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-xpy-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ex=$src/python/attncheck/worker
cases="--case f32-1x1-d1-none --case f16-113x203-d64-causal-bottom-right-b2h4kv2 --case bf16-65x65-d32-causal-b2h2kv1 --case e4m3-31x45-d40-causal-zeroq --case e5m2-64x96-d32-none-q2"

# 1. the README's lines, as pasted (run from the source tree, 'attncheck' being this build)
if command -v python3 > /dev/null; then
  for pat in "attncheck suite --kernel 'exec-persistent:python3 python/attncheck/worker/numpy_sdpa.py" \
    "attncheck check --kernel 'exec:python3 python/attncheck/worker/numpy_sdpa.py"; do
    line=$(grep -F "$pat" "$src/README.md" | head -n 1 | sed 's/^ *attncheck //')
    [ -n "$line" ] || fail "README has no line '$pat'"
    case $line in
      check*) line=$(echo "$line" | sed 's/ [^ ]*\.npz$/ example:tiny3/'); extra= ;;
      *) extra="$cases -q" ;;
    esac
    (cd "$src" && eval "\"\$bin\" $line $extra") > "$tmp/readme.txt" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/readme.txt"; fail "README line exits $rc: $line"; }
    grep -q ' [1-9][0-9]* pass, 0 warn, 0 fail, 0 skip, 0 error\|^PASS ' "$tmp/readme.txt" || { cat "$tmp/readme.txt"; fail "README line: $line"; }
    echo "ok: README: attncheck $line"
  done
else
  echo "note: no python3 on PATH; the README lines are not run"
fi

# 2. declared dtypes and classes per dtype
cat > "$tmp/declw.py" <<EOF
import sys
sys.path.insert(0, "$ex")
import protocol as attncheck_worker
import numpy_sdpa as sdpa_numpy

def attn(q, k, v, p):
    if p.tq != p.tk and p.dtype == "f32":
        raise NotImplementedError("tq != tk is not done")
    return sdpa_numpy.attention(q, k, v, p)[0] if len(sys.argv) > 1 and sys.argv[1] == "--nolse" else sdpa_numpy.attention(q, k, v, p)

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--nolse"]
    sys.exit(attncheck_worker.run(attn, args, name="declw", dtypes=["f32", "f16"], precision={"f16": "fp16-cublas"},
                                  writes_lse=True))
EOF
three="--case f32-1x1-d1-none --case f16-1x1-d1-none --case bf16-1x1-d1-none"
"$bin" suite --verbose --kernel "exec-persistent:$py $tmp/declw.py" $three > "$tmp/2.txt" 2>&1 || { cat "$tmp/2.txt"; fail "declared worker"; }
grep -q '^PASS .* f16-1x1-d1-none .*budget=class:fp16-cublas,' "$tmp/2.txt" || { cat "$tmp/2.txt"; fail "declared f16 class not used"; }
grep -q '^PASS .* f32-1x1-d1-none .*budget=class:fp32,' "$tmp/2.txt" || { cat "$tmp/2.txt"; fail "f32 class"; }
grep -q 'bf16-1x1-d1-none SKIP (unsupported: declw does not declare dtype bf16)' "$tmp/2.txt" || { cat "$tmp/2.txt"; fail "bf16 not SKIP"; }
"$bin" suite --kernel "exec-persistent:$py $tmp/declw.py" $three --precision f16=fp16-acc16 > "$tmp/2b.txt" 2>&1
grep -q '^PASS .* f16-1x1-d1-none .*budget=class:fp16-acc16,' "$tmp/2b.txt" || { cat "$tmp/2b.txt"; fail "--precision does not override"; }
"$bin" list --kernel "exec-persistent:$py $tmp/declw.py" | grep -q 'f16=fp16-cublas .*declw.py' || fail "list: no declared class"
echo "ok: declared dtypes and per-dtype class, --precision overrides"

# 2b. a campaign draws the declared dtypes; its jobs leave no worker directory behind
mkdir "$tmp/t" || exit 99
TMPDIR=$tmp/t "$bin" fuzz --kernel "exec-persistent:$py $ex/numpy_sdpa.py --serve" --cases 24 --jobs 2 --max-t 64 \
  --families normal,gqa,tq_ne_tk --out "$tmp/camp" --no-minimize --no-live > "$tmp/2c.txt" 2>&1 ||
  { cat "$tmp/2c.txt"; fail "campaign on the declared worker"; }
grep -q '"dtypes":63' "$tmp/camp/campaign.json" || fail "the campaign did not draw the declared dtypes"
[ -z "$(ls "$tmp/t")" ] || { ls -R "$tmp/t"; fail "worker directories left behind"; }
echo "ok: campaign with --jobs 2 on a declared worker"

# 3. NotImplementedError: SKIP, persistent and one-shot
for k in "exec-persistent:$py $tmp/declw.py" "exec:$py $tmp/declw.py {in} {out}"; do
  "$bin" suite --verbose --allow-all-skipped --kernel "$k" --case f32-64x96-d32-none > "$tmp/3.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q 'SKIP (unsupported: .*tq != tk is not done)' "$tmp/3.txt" || { cat "$tmp/3.txt"; fail "refusal: $k"; }
done
echo "ok: NotImplementedError is SKIP"

# 4. writes_lse declared, no lse written: UNWRITTEN
"$bin" check --kernel "exec-persistent:$py $tmp/declw.py --nolse" example:tiny3 > "$tmp/4.txt" 2>&1
grep -q '^FAIL .*UNWRITTEN' "$tmp/4.txt" || { cat "$tmp/4.txt"; fail "missing lse not UNWRITTEN"; }
"$bin" check --kernel "exec-persistent:$py $tmp/declw.py --nolse" --no-lse example:tiny3 > "$tmp/4.txt" 2>&1 ||
  { cat "$tmp/4.txt"; fail "--no-lse still asks for the lse"; }
echo "ok: writes_lse"

# 5. the narrow encoders against an independent rounding, every bit pattern decoded back
PYTHONPATH=$ex "$py" - <<'EOF' || fail "encoders"
import math, sys
import numpy as np
import protocol as w
import protocol_quant as wq   # the code tables (protocol.py re-exports the public names)
FMT = {"bf16": (8, -126, float.fromhex("0x1.fep127"), True), "e4m3": (4, -6, 448.0, False), "e5m2": (3, -14, 57344.0, True)}
def rne(x, p, emin, maxf, has_inf):
    if math.isnan(x) or x == 0:
        return x
    if math.isinf(x):
        return x if has_inf else math.nan
    e = max(math.frexp(abs(x))[1] - 1, emin)
    q = math.ldexp(1.0, e - p + 1)
    r = round(abs(x) / q) * q
    if r > maxf:
        r = math.inf if has_inf else math.nan
    return math.copysign(r, x)
rng = np.random.default_rng(7)
bad = 0
for name, (p, emin, maxf, has_inf) in FMT.items():
    tab = wq._table(name)
    mids = (tab[:-1] + tab[1:]) / 2          # ties between neighbours
    xs = np.concatenate([tab, mids, tab * (1 + 1e-9), rng.standard_normal(2000) * 2.0 ** rng.integers(-140, 130, 2000),
                         [maxf * 1.1, -maxf * 1.1, np.inf, -np.inf, np.nan, -0.0]])
    xs = xs[np.isfinite(xs) | np.isinf(xs) | np.isnan(xs)]
    got = wq._table(name)[w.encode(xs, name).astype(np.int64)]
    for x, g in zip(xs, got):
        want = rne(float(x), p, emin, maxf, has_inf)
        same = (math.isnan(want) and math.isnan(g)) or (want == g and math.copysign(1, want) == math.copysign(1, g))
        if not same:
            bad += 1
            if bad < 5:
                print("FAIL: %s encode(%r) = %r, expected %r" % (name, x, g, want))
    fin = ~np.isnan(tab)
    back = w.encode(tab[fin], name).astype(np.int64)
    if not np.array_equal(back, np.arange(len(tab))[fin]):
        bad += 1
        print("FAIL: %s: decode/encode is not the identity on its bit patterns" % name)
sys.exit(1 if bad else 0)
EOF
echo "ok: bf16/e4m3/e5m2 encoders"

# 6. torch_sdpa.py: SKIP without PyTorch; PASS on the CPU math backend with it
k="exec-persistent:$py $ex/torch_sdpa.py --backend math --device cpu"
"$bin" suite --verbose --allow-all-skipped --kernel "$k" --case f32-1x1-d1-none --case f32-65x65-d32-causal-b2h2kv1 \
  --case e4m3-1x1-d1-none > "$tmp/6.txt" 2>&1
rc=$?
grep -q 'e4m3-1x1-d1-none SKIP (unsupported: torch-sdpa-math does not declare dtype e4m3)' "$tmp/6.txt" || { cat "$tmp/6.txt"; fail "torch_sdpa: e4m3"; }
if "$py" -c 'import torch' 2> /dev/null; then
  [ $rc -eq 0 ] && grep -q '2 pass, 0 warn, 0 fail, 1 skip' "$tmp/6.txt" || { cat "$tmp/6.txt"; fail "torch_sdpa math on the CPU"; }
  echo "ok: torch_sdpa.py (PyTorch present)"
else
  [ $rc -eq 0 ] && grep -q '0 pass, 0 warn, 0 fail, 3 skip' "$tmp/6.txt" && grep -q 'PyTorch is not installed' "$tmp/6.txt" ||
    { cat "$tmp/6.txt"; fail "torch_sdpa without PyTorch"; }
  echo "ok: torch_sdpa.py refuses every case without PyTorch"
fi

# 7. attention variants: every one the worker declares, computed (PASS, never SKIP)
k="exec-persistent:$py $ex/numpy_sdpa.py --serve"
vc=
for c in f32-64x96-d32-none-b1h2kv1-win16,0 f32-70x130-d32-causal-win500,500tl f32-50x50-d16-none-win10,-1tl \
  f32-48x80-d32-none-cap5 f32-300x300-d16-causal-bottom-right-b2h4kv2-alibi8bh \
  f32-17x300-d16-causal-bottom-right-b1h2kv2-latemax-alibi1 f16-48x64-d32-none-b2h2kv2-bias-bc \
  f32-40x60-d32-none-bias-infrows f32-40x70-d32-causal-bias-nanmasked bf16-60x90-d32-none-b1h2kv2-bmask-emptymid \
  f32-50x30-d32-causal-bottom-right-b1h4kv2-sink f32-40x40-d32-none-b1h2kv2-sink-vanish \
  f32-128x128-d64-causal-b1h4kv2-win31,0-sink e4m3-64x64-d32-none-b1h2kv1-descale f32-32x32-d16-none-descale-huge \
  bf16-64x64-d32-none-b1h2kv2-cap20-alibi1-bias-ramp-bmask; do
  vc="$vc --case $c"
done
"$bin" suite --kernel "$k" $vc -q > "$tmp/7.txt" 2>&1 && grep -q ' 16 pass, 0 warn, 0 fail, 0 skip, 0 error' "$tmp/7.txt" ||
  { cat "$tmp/7.txt"; fail "sdpa_numpy: suite variant cases"; }
# rows past a top-left window (tq > tk) are empty: o = 0 and LSE = the sink; per-batch ALiBi,
# an f32 bias of -inf rows over a bf16 case, softcap and descales together
"$bin" gen -o "$tmp/v1.npz" --tq 40 --tk 24 --dk 16 --batch 2 --heads 4 --kv-heads 2 --bool-mask empty-middle \
  --mask-broadcast h --sinks normal --window 2,1 --window-align top-left --seed 3 > /dev/null || exit 99
"$bin" gen -o "$tmp/v2.npz" --dtype bf16 --tq 20 --tk 50 --dk 16 --batch 2 --heads 2 --alibi 8 --alibi-per-batch \
  --bias neginf-rows --bias-dtype f32 --bias-broadcast b --softcap 3 --descale huge --seed 4 > /dev/null || exit 99
for f in v1 v2; do
  "$bin" check --kernel "$k" "$tmp/$f.npz" > "$tmp/7.txt" 2>&1 && grep -q '^PASS ' "$tmp/7.txt" || { cat "$tmp/7.txt"; fail "sdpa_numpy: $f"; }
done
"$bin" check --kernel "exec:$py $ex/numpy_sdpa.py {in} {out}" "$tmp/v1.npz" > "$tmp/7.txt" 2>&1
grep -q '^SKIP ' "$tmp/7.txt" || { cat "$tmp/7.txt"; fail "one-shot exec: got a variant case"; }
# a worker that does not declare a variant refuses its case when run on it directly (exit 77)
"$py" "$tmp/declw.py" "$tmp/v1.npz" "$tmp/v1o.npz" 2> "$tmp/7.txt"
rc=$?
[ $rc -eq 77 ] && grep -q 'unsupported: variant .* is not declared' "$tmp/7.txt" || { cat "$tmp/7.txt"; fail "undeclared variant: exit $rc"; }
# mixed dtypes: q, k, v decoded from their own dtypes, o rounded to its own (suite cases and gen)
mc=
for c in f32-64x96-d32-none-b1h2kv1-dtypes-f32.f16.f16.f32 f32-40x70-d32-causal-dtypes-f32.f16.bf16.f32 \
  f32-48x64-d32-none-extreme-dtypes-f32.f16.f16.f32 e4m3-64x96-d32-none-b1h2kv2-dtypes-e4m3.e4m3.e4m3.bf16 \
  e5m2-40x70-d32-causal-dtypes-e5m2.e5m2.e5m2.f32; do
  mc="$mc --case $c"
done
"$bin" suite --kernel "$k" $mc -q > "$tmp/7.txt" 2>&1 && grep -q ' 5 pass, 0 warn, 0 fail, 0 skip, 0 error' "$tmp/7.txt" ||
  { cat "$tmp/7.txt"; fail "sdpa_numpy: suite mixed-dtype cases"; }
"$bin" gen -o "$tmp/v3.npz" --dtypes f32,bf16,f16,f32 --tq 30 --tk 40 --dk 16 --window 8,0 --seed 5 > /dev/null || exit 99
"$bin" check --kernel "$k" "$tmp/v3.npz" > "$tmp/7.txt" 2>&1 && grep -q '^PASS ' "$tmp/7.txt" || { cat "$tmp/7.txt"; fail "sdpa_numpy: v3"; }
echo "ok: sdpa_numpy.py computes the attention variants"
exit 0
