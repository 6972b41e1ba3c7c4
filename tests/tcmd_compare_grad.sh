#!/bin/sh
# tcmd_compare_grad.sh: attncheck compare --grad CASE.npz [GRADS.npz] judges gradients produced
# elsewhere against the exact backward with the grad budgets (the line and JSON of check --grad):
# float64 numpy gradients rounded once pass (exit 0), also when stored in the case file itself and
# when an exact gradient beyond the format's range rounds to inf (the forward's overflow rule);
# one perturbed dK element fails (exit 1, worst element, reproducer), so does dσ of the wrong sign
# (dsinks, judged with its budget); a missing member, a member
# of another dtype or shape (dsinks too), a case without dO: bad input (exit 2, one line).
# The gradient files are made with python3 and numpy (python/attncheck/worker/numpy_sdpa.py); without
# them only the bad-input checks that need none run, then SKIP (77).
set -u
bin=${ATTNCHECK_BIN:-./attncheck}
src=$(cd "${srcdir:-.}" && pwd)
py=${PYTHON_NUMPY:-none}
tmp=$(mktemp -d /tmp/attncheck-cmpgrad-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
ATTNCHECK_CACHE=off
PYTHONDONTWRITEBYTECODE=1
export ATTNCHECK_CACHE PYTHONDONTWRITEBYTECODE
fail() { echo "FAIL: $*"; exit 1; }
expect() { # exit code, pattern of stdout+stderr, compare arguments
  want=$1 pat=$2
  shift 2
  "$bin" compare --grad "$@" > "$tmp/o.txt" 2>&1
  rc=$?
  [ $rc -eq "$want" ] && grep -q -- "$pat" "$tmp/o.txt" || { cat "$tmp/o.txt"; fail "compare --grad $*: exit $rc, expected $want and '$pat'"; }
  [ "$want" -ne 2 ] || [ "$(wc -l < "$tmp/o.txt")" -eq 1 ] || { cat "$tmp/o.txt"; fail "bad input: more than one line"; }
}
"$bin" gen -o "$tmp/c.npz" --tq 24 --tk 40 --dk 16 --dv 8 --heads 4 --kv-heads 2 --mask causal --grad normal --seed 7 > /dev/null || exit 99
"$bin" gen -o "$tmp/b.npz" --dtype bf16 --t 32 --dk 16 --heads 2 --sinks normal --mask causal-bottom-right --grad normal --seed 8 > /dev/null || exit 99
"$bin" gen -o "$tmp/n.npz" --t 8 --dk 8 > /dev/null || exit 99
# e5m2 with a large dO: some exact dV lie beyond 61440 (max + ½ ulp) and round to -inf or +inf
"$bin" gen -o "$tmp/e.npz" --dtype e5m2 --t 64 --dk 16 --heads 2 --mask causal --grad normal:20000 --seed 3 > /dev/null || exit 99
expect 2 "c.npz: no member 'dq'" "$tmp/c.npz"
expect 2 "c.npz: no member 'dq'" "$tmp/c.npz" "$tmp/c.npz"
expect 2 "n.npz: the case has no dO" "$tmp/n.npz" "$tmp/c.npz"
expect 2 "cannot\|No such file" "$tmp/c.npz" "$tmp/missing.npz"
echo "ok: bad input without gradients"
if [ "$py" = none ] || [ -z "$py" ]; then echo "SKIP: no python3 with numpy"; exit 77; fi

# gradient files: good, perturbed, wrong dtype, wrong shape, a member missing; and the case with them
PYTHONPATH=$src/python/attncheck/worker "$py" - "$tmp" <<'EOF' || fail "making the gradient files"
import io, sys, zipfile
import numpy as np
import protocol as w, numpy_sdpa as sdpa_numpy
tmp = sys.argv[1]
decl = w.declaration(dtypes=w.ALL_DTYPES, features=w.ALL_FEATURES + w.VARIANT_FEATURES)
for name in ("c", "b", "e"):
    p, q, k, v, arrays, _ = w._load("%s/%s.npz" % (tmp, name), decl, "numpy")
    do = w.decode(arrays["do"], p.o_dtype)
    dq, dk, dv, ds = sdpa_numpy.backward(q, k, v, None, None, do, p)
    g = {"dq": w.encode(dq, p.dtype), "dk": w.encode(dk, p.dtype), "dv": w.encode(dv, p.dtype)}
    if ds is not None:
        g["dsinks"] = np.asarray(ds, dtype=np.float32)
    np.savez("%s/%s_good.npz" % (tmp, name), **g)
    if name == "e":
        assert np.isinf(w.decode(g["dv"], "e5m2")).any(), "no dV overflows e5m2"
        dq_inf = g["dq"].copy()
        dq_inf[0, 0, 5, 0] = 0x7C   # +inf where the exact dQ is small
        np.savez(tmp + "/e_inf.npz", **dict(g, dq=dq_inf))
    if name == "b":
        np.savez("%s/%s_dsinks.npz" % (tmp, name), **dict(g, dsinks=np.zeros(p.heads + 1, np.float32)))
        # dσ with the wrong sign (+Σ P_sink D): judged against dσ's budget
        np.savez("%s/%s_dsign.npz" % (tmp, name), **dict(g, dsinks=-g["dsinks"]))
    if name != "c":
        continue
    bad = dict(g, dk=g["dk"].copy())
    bad["dk"][0, 1, 5, 3] *= np.float32(1.01)
    np.savez(tmp + "/c_perturbed.npz", **bad)
    np.savez(tmp + "/c_dtype.npz", **dict(g, dv=g["dv"].astype(np.float64)))
    np.savez(tmp + "/c_shape.npz", **dict(g, dq=g["dq"][:, :, :-1]))
    np.savez(tmp + "/c_missing.npz", dq=g["dq"], dv=g["dv"])
    with zipfile.ZipFile("%s/c.npz" % tmp) as zi, zipfile.ZipFile(tmp + "/c_with.npz", "w") as zo:
        for it in zi.infolist():
            zo.writestr(it, zi.read(it.filename))
        for n, a in g.items():
            buf = io.BytesIO()
            np.save(buf, a)
            zo.writestr(n + ".npy", buf.getvalue())
EOF
expect 0 "^PASS .*c_good.npz .*c.npz grad dq err/W=.* bad=0/1536 dk err/W=.* bad=0/1280 dv err/W=.* bad=0/640 f32 budget=fp32" \
  --json "$tmp/g.json" "$tmp/c.npz" "$tmp/c_good.npz"
grep -q '"mode": "grad"' "$tmp/g.json" || fail "no grad JSON"
expect 0 "^PASS c_with " --name c_with "$tmp/c_with.npz"
expect 0 "^PASS .* grad .* dsink err/W=[0-9.e-]* bad=0/2 bf16 budget=" "$tmp/b.npz" "$tmp/b_good.npz"
expect 1 "^FAIL .* grad .* dsink err/W=[0-9.e+]* bad=[12]/2 bf16 budget=" "$tmp/b.npz" "$tmp/b_dsign.npz"
expect 0 "^PASS .* grad .* e5m2 budget=" "$tmp/e.npz" "$tmp/e_good.npz"
expect 1 "^FAIL .* grad dq err/W=inf bad=1/2048 " "$tmp/e.npz" "$tmp/e_inf.npz"
expect 1 "^FAIL .* dk err/W=[0-9.e+]* bad=1/1280" "$tmp/c.npz" "$tmp/c_perturbed.npz"
grep -q '^  dk worst: column 45 element 3' "$tmp/o.txt" && grep -q '^  reproduce: attncheck compare --grad ' "$tmp/o.txt" ||
  { cat "$tmp/o.txt"; fail "perturbed: no worst element or reproducer"; }
expect 2 "member 'dv' must be f32 ('<f4') of shape \[1,2,40,8\], got '<f8'" "$tmp/c.npz" "$tmp/c_dtype.npz"
expect 2 "member 'dq' must be f32 ('<f4') of shape \[1,4,24,16\], got '<f4' of shape \[1,4,23,16\]" "$tmp/c.npz" "$tmp/c_shape.npz"
expect 2 "c_missing.npz: no member 'dk'" "$tmp/c.npz" "$tmp/c_missing.npz"
expect 2 "member 'dsinks' must be f32 ('<f4') of shape \[2\], got '<f4' of shape \[3\]" "$tmp/b.npz" "$tmp/b_dsinks.npz"
echo "ok: compare --grad judges gradients from a file"
exit 0
