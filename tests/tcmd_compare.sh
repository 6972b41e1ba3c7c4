#!/bin/sh
# tcmd_compare.sh: `attncheck compare CASE.npz OUT.npz` judges outputs produced elsewhere (numpy
# here): a float64 softmax rounded to float32 passes, a perturbed one fails, a wrong dtype is
# refused with exit 2. Skipped (77) without python3-numpy.
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
top=${abs_top_builddir:-.}
py=${PYTHON_NUMPY:-none}
if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy"; exit 77; fi
ATTNCHECK_CACHE=$top/tests/cache-compare
export ATTNCHECK_CACHE
mkdir -p "$ATTNCHECK_CACHE" || exit 99
tmp=$(mktemp -d /tmp/attncheck-cmp-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" gen --out "$tmp/case.npz" --dtype f32 --mask causal-bottom-right --heads 2 --kv-heads 1 --tq 9 --tk 6 --dk 8 --dv 5 --seed 3 \
  || exit 99
"$py" - "$tmp" <<'PYEOF' || exit 99
import sys, numpy as np
d = sys.argv[1]
z = np.load(d + "/case.npz")
q, k, v = (z[n].astype(np.float64) for n in ("q", "k", "v"))
B, H, tq, dk = q.shape
kvh, tk = k.shape[1], k.shape[2]
k = np.repeat(k, H // kvh, axis=1); v = np.repeat(v, H // kvh, axis=1)
s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(dk)
i = np.arange(tq)[:, None]; j = np.arange(tk)[None, :]
s = np.where(j <= i + tk - tq, s, -np.inf)
m = s.max(axis=-1, keepdims=True)
empty = ~np.isfinite(m)
w = np.where(empty, 0.0, np.exp(s - np.where(empty, 0.0, m)))
L = w.sum(axis=-1, keepdims=True)
o = np.where(empty, 0.0, (w @ v) / np.where(L == 0, 1, L))
lse = np.where(empty[..., 0], -np.inf, (m + np.log(np.where(L == 0, 1, L)))[..., 0])
np.savez(d + "/out.npz", o=o.astype(np.float32), lse=lse.astype(np.float32))
bad = o.astype(np.float32).copy(); bad[0, 1, -1, 2] += np.float32(1e-3)
np.savez(d + "/bad.npz", o=bad, lse=lse.astype(np.float32))
np.savez(d + "/f64.npz", o=o)
PYEOF
st=0
"$bin" compare "$tmp/case.npz" "$tmp/out.npz"
rc=$?
[ $rc -eq 0 ] || { echo "WRONG: numpy output: exit $rc (want 0)"; st=1; }
"$bin" compare --json "$tmp/r.json" "$tmp/case.npz" "$tmp/bad.npz"
rc=$?
[ $rc -eq 1 ] || { echo "WRONG: perturbed output: exit $rc (want 1)"; st=1; }
"$py" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['worst']['index']==[0,1,8,2], r['worst']" "$tmp/r.json" \
  || { echo "WRONG: worst element"; st=1; }
"$bin" compare --atol 2e-3 "$tmp/case.npz" "$tmp/bad.npz" > /dev/null
[ $? -eq 0 ] || { echo "WRONG: --atol 2e-3 should accept the perturbed output"; st=1; }
"$bin" compare "$tmp/case.npz" "$tmp/f64.npz"
rc=$?
[ $rc -eq 2 ] || { echo "WRONG: float64 o for an f32 case: exit $rc (want 2)"; st=1; }
exit $st
