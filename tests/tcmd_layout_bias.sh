#!/bin/sh
# tcmd_layout_bias.sh: bias, boolean masks and per-sequence ALiBi slopes with the serving layouts
# (docs/layouts.md). gen draws them per sequence for varlen and paged cases; flash-varlen-f32 and
# flash-varlen-bf16 PASS them; test-varlen-bias-row (sequence 0's bias and mask rows read for every
# sequence) FAILs; info shows the [1, H, total_q, max_tk] shapes; a bias of the wrong width is
# refused with one line and exit 2.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-lbias-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
bad=0
gen() { f=$1; shift; "$bin" gen --out "$tmp/$f.npz" --dk 16 --heads 4 --kv-heads 2 "$@" >/dev/null || { echo "FAIL: gen $f"; exit 1; }; }
gen v32 --seqlens-q 3,0,5,2 --seqlens-k 4,2,0,7 --mask causal-bottom-right --bias normal --bool-mask random
gen p32 --seqlens-q 2,3,1,4 --cache-seqlens 40,17,0,33 --page-size 16 --spare-pages 2 --shuffle-pages \
  --bias ramp --bias-broadcast h --bool-mask banded --alibi 1 --alibi-per-batch
gen vi32 --seqlens-q 4,6 --seqlens-k 5,9 --mask causal --bias neginf-rows --alibi 0.5 --alibi-per-batch
gen p16 --dtype bf16 --seqlens-q 1,1,1 --cache-seqlens 70,1,33 --page-size 8 --shuffle-pages --bias sentinel --bool-mask sparse
info=$("$bin" info "$tmp/p32.npz")
echo "$info" | grep -q 'bias \[1,1,10,40\]' && echo "$info" | grep -q 'mask \[1,4,10,40\]' &&
  echo "$info" | grep -q 'alibi_slopes \[4,4\]' || { echo "FAIL: info shapes:"; echo "$info" | tail -n 4; bad=1; }
for c in v32 p32 vi32 p16; do
  k=flash-varlen-f32
  [ $c = p16 ] && k=flash-varlen-bf16
  out=$("$bin" check --kernel $k "$tmp/$c.npz" 2>&1)
  rc=$?
  echo "$out" | head -n 1 | cut -c1-100
  [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS' || { echo "FAIL: $k on $c (exit $rc)"; bad=1; }
done
for c in v32 p32 vi32; do
  out=$("$bin" check --kernel test-varlen-bias-row "$tmp/$c.npz" 2>&1)
  rc=$?
  echo "$out" | head -n 1 | cut -c1-100
  [ $rc -eq 1 ] && echo "$out" | grep -q '^FAIL' || { echo "NOT EXPOSED: test-varlen-bias-row on $c (exit $rc)"; bad=1; }
done
# the bias member cut to half its width: not max_tk (needs python3; skipped without it)
command -v python3 >/dev/null 2>&1 || { echo "no python3: the bad-width check is skipped"; exit $bad; }
python3 - "$tmp/p32.npz" "$tmp/bad.npz" <<'PY' || exit 99
import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as w:
    for n in z.namelist():
        d = z.read(n)
        if n == "bias.npy":
            d = d.replace(b"(1, 1, 10, 40)", b"(1, 1, 10, 20)", 1)
            hl = int.from_bytes(d[8:10], "little")
            d = d[:10 + hl] + d[10 + hl:10 + hl + (len(d) - 10 - hl) // 2]
        w.writestr(n, d)
PY
out=$("$bin" info "$tmp/bad.npz" 2>&1)
rc=$?
[ $rc -eq 2 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "max_tk" ||
  { echo "FAIL: a bias of the wrong width (exit $rc): $out"; bad=1; }
echo "$out"
exit $bad
