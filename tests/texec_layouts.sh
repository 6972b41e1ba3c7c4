#!/bin/sh
# texec_layouts.sh: the serving layouts through the exec protocol (docs/layouts.md).
# python/attncheck/worker/numpy_sdpa.py declares varlen and paged and passes every layout case of
# `suite ci` (its persistent worker) and varlen and paged cases with a bias, a boolean mask and
# per-sequence ALiBi slopes; a worker built on the same helper that reads every slot of
# a sequence's last page is OUT-OF-SEQUENCE, naming the sequence (the layout's NaN fill travels
# in the case file an exec worker reads; numpy's arithmetic does not keep the NaN payload that
# would name the page and slot); a one-shot exec: kernel gets no layout case.
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
tmp=$(mktemp -d /tmp/attncheck-xlay-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ex=$src/python/attncheck/worker
good="exec-persistent:$py $ex/numpy_sdpa.py --serve"
cases=""
for c in varlen-mix varlen-window-sinks paged-shuffled paged-page7-alibi decode-long; do cases="$cases --case f32-$c --case bf16-$c"; done
out=$("$bin" suite --suite ci --kernel "$good" $cases -q 2>&1)
rc=$?
echo "$out" | tail -n 1
[ $rc -eq 0 ] && echo "$out" | grep -q ': 10 pass, 0 warn, 0 fail, 0 skip' || { echo "$out" | tail -n 20; fail "sdpa_numpy.py on the layout cases"; }
# bias, boolean mask and ALiBi slopes per sequence: sdpa_numpy.py slices each sequence's rows
"$bin" gen --out "$tmp/vb.npz" --seqlens-q 3,0,5,2 --seqlens-k 4,2,0,7 --heads 4 --kv-heads 2 --dk 16 --mask causal \
  --bias normal --bool-mask random --alibi 1 --alibi-per-batch >/dev/null || exit 99
"$bin" gen --out "$tmp/pb.npz" --seqlens-q 2,3,1 --cache-seqlens 40,17,33 --page-size 16 --shuffle-pages --dk 16 \
  --bias ramp --bias-broadcast h --bool-mask banded >/dev/null || exit 99
for f in vb pb; do
  out=$("$bin" check --kernel "$good" "$tmp/$f.npz" 2>&1)
  [ $? -eq 0 ] && echo "$out" | grep -q '^PASS' || { echo "$out" | head -n 5; fail "sdpa_numpy.py on $f (bias and masks per sequence)"; }
done

cat > "$tmp/whole_page.py" <<PYEOF
import sys
sys.path.insert(0, "$ex")
import protocol as attncheck_worker
import numpy as np
import numpy_sdpa as sdpa_numpy


def whole_pages(self, b):
    """every slot of the sequence's pages, the last partial one included (a defect)"""
    if self.layout != "paged":
        return attncheck_worker.Problem.key_slots_right(self, b)
    n = -(-int(self.cache_seqlens[b]) // self.page_size) * self.page_size
    j = np.arange(n)
    return self.block_table[b][j // self.page_size] * self.page_size + j % self.page_size


attncheck_worker.Problem.key_slots_right = attncheck_worker.Problem.key_slots
attncheck_worker.Problem.key_slots = whole_pages
sys.exit(attncheck_worker.run(sdpa_numpy.attend, sys.argv[1:], name="whole_page", writes_lse=True,
                              features=attncheck_worker.ALL_FEATURES + attncheck_worker.LAYOUT_FEATURES))
PYEOF
"$bin" gen --out "$tmp/p.npz" --cache-seqlens 20,3 --seqlens-q 2,1 --page-size 16 --dk 8 --shuffle-pages --spare-pages 1 >/dev/null || exit 99
out=$("$bin" check --kernel "exec-persistent:$py $tmp/whole_page.py --serve" "$tmp/p.npz" 2>&1)
rc=$?
echo "$out" | head -n 2
[ $rc -eq 1 ] && echo "$out" | grep -q '^FAIL .*OUT-OF-SEQUENCE' && echo "$out" | grep -q 'sequence 0 (head [01], query [01]) read \(page [0-9]* slot [0-9]*, which it\|memory it\) does not own' ||
  fail "the whole-page worker (exit $rc)"
out=$("$bin" check --kernel "exec:$py $ex/numpy_sdpa.py {in} {out}" "$tmp/p.npz" 2>&1)
echo "$out" | grep -q '^SKIP .*one-shot exec kernels get no' || { echo "$out"; fail "one-shot exec on a paged case"; }
echo "ok: layouts through the exec protocol"
exit 0
