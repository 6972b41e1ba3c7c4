"""numpy_roundtrip: files written by attncheck load in numpy with the right shapes, dtypes and
values (each dtype checked against an independent rounding of the f64 file's values), a case
written by numpy (zipfile + numpy.lib.format, stored) is read by attncheck, and the same case
deflated is refused in one line."""
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

BIN = os.environ.get("ATTNCHECK_BIN") or os.path.join(os.environ.get("abs_top_builddir", "."), "attncheck")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)


def run(*args):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True)


# name -> (numpy dtype of the stored array, significand bits, minimum normal exponent)
DTYPES = {
    "f64": (np.float64, 53, -1022),
    "f32": (np.float32, 24, -126),
    "f16": (np.float16, 11, -14),
    "bf16": (np.uint16, 8, -126),
    "e4m3": (np.uint8, 4, -6),
    "e5m2": (np.uint8, 3, -14),
}


def rne(x, p, emin):
    """x (binary64) rounded to nearest even with p significand bits, minimum exponent emin."""
    if x == 0 or not math.isfinite(x):
        return x
    e = max(math.frexp(x)[1] - 1, emin)
    ulp = math.ldexp(1.0, e - p + 1)
    return round(x / ulp) * ulp  # exact scaling; round() is half-to-even


def decode(name, a):
    if name in ("f64", "f32", "f16"):
        return a.astype(np.float64)
    if name == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if name == "e5m2":
        return (a.astype(np.uint16) << 8).view(np.float16).astype(np.float64)
    out = np.empty(a.shape, dtype=np.float64)  # e4m3: bias 7, no infinities, S.1111.111 is NaN
    for idx, b in np.ndenumerate(a):
        b = int(b)
        s, e, m = (b >> 7) & 1, (b >> 3) & 15, b & 7
        if e == 15 and m == 7:
            v = math.nan
        elif e == 0:
            v = math.ldexp(m, -9)
        else:
            v = math.ldexp(8 + m, e - 10)
        out[idx] = -v if s else v
    return out


tmp = tempfile.mkdtemp(prefix="attncheck-numpy-")
shape_args = ["--heads", "4", "--kv-heads", "2", "--tq", "3", "--tk", "5", "--dk", "8", "--dv", "4",
              "--mask", "causal", "--scale", "0x1.8p-3", "--seed", "3", "--layout", "bthd-padded"]
loaded = {}
for name, (npdt, p, emin) in DTYPES.items():
    path = os.path.join(tmp, name + ".npz")
    r = run("gen", "--out", path, "--dtype", name, *shape_args)
    check(r.returncode == 0, "gen %s: exit %d: %s" % (name, r.returncode, r.stderr.strip()))
    if r.returncode != 0:
        continue
    with np.load(path) as z:
        check(sorted(z.files) == ["k", "meta.json", "q", "v"], "%s: members %s" % (name, z.files))
        arrs = {t: z[t] for t in ("q", "k", "v")}
    with zipfile.ZipFile(path) as zf:
        check(all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist()), "%s: members not stored" % name)
        meta = json.loads(zf.read("meta.json"))
    for t, shp in (("q", (1, 4, 3, 8)), ("k", (1, 2, 5, 8)), ("v", (1, 2, 5, 4))):
        a = arrs[t]
        check(a.shape == shp, "%s %s: shape %s, expected %s" % (name, t, a.shape, shp))
        check(a.dtype == np.dtype(npdt), "%s %s: dtype %s, expected %s" % (name, t, a.dtype, np.dtype(npdt)))
        check(a.flags["C_CONTIGUOUS"], "%s %s: not C order" % (name, t))
    check(meta.get("schema") == 1, "%s: schema %r" % (name, meta.get("schema")))
    check(meta.get("dtype") == name, "%s: meta dtype %r" % (name, meta.get("dtype")))
    check(meta.get("mask") == "causal", "%s: meta mask %r" % (name, meta.get("mask")))
    check([meta.get(k) for k in ("batch", "heads", "kv_heads", "tq", "tk", "dk", "dv")] == [1, 4, 2, 3, 5, 8, 4],
          "%s: meta shape" % name)
    check(float.fromhex(meta.get("scale", "nan")) == 0.1875, "%s: scale %r" % (name, meta.get("scale")))
    check(meta.get("strides", {}).get("q") == [3 * 4 * 16, 16, 4 * 16, 1], "%s: q strides %r" % (name, meta.get("strides")))
    check(meta.get("seed") == 3 and meta.get("generator") == "gen", "%s: provenance" % name)
    loaded[name] = {t: decode(name, a) for t, a in arrs.items()}

# Every dtype holds the one-step rounding of the same draws (the f64 file holds them exactly).
if "f64" in loaded:
    for name, (npdt, p, emin) in DTYPES.items():
        if name not in loaded:
            continue
        for t in ("q", "k", "v"):
            ref = np.vectorize(lambda x: rne(x, p, emin))(loaded["f64"][t])
            got = loaded[name][t]
            bad = np.flatnonzero(~((got == ref) | (np.isnan(got) & np.isnan(ref))))
            check(bad.size == 0, "%s %s: %d values differ from the rounding of the f64 draws, first %s vs %s" % (
                name, t, bad.size, got.flat[bad[0]] if bad.size else "", ref.flat[bad[0]] if bad.size else ""))

# tiny3 exactly.
path = os.path.join(tmp, "tiny3.npz")
r = run("gen", "--out", path, "--example", "tiny3")
check(r.returncode == 0, "gen tiny3: %s" % r.stderr.strip())
if r.returncode == 0:
    with np.load(path) as z:
        x = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32).reshape(1, 1, 3, 2)
        for t in ("q", "k", "v"):
            check(np.array_equal(z[t], x), "tiny3 %s = %s" % (t, z[t].tolist()))

# The other direction: a case written by numpy, stored, bf16 as uint16 bits.
vals = np.array([1.0, -2.0, 0.5, 0.0, 3.0, -0.0], dtype=np.float32)
bits = (vals.view(np.uint32) >> 16).astype(np.uint16)
q = bits.reshape(1, 1, 3, 2)
meta = {"schema": 1, "dtype": "bf16", "mask": "none", "batch": 1, "heads": 1, "kv_heads": 1, "tq": 3, "tk": 3,
        "dk": 2, "dv": 2, "scale": "default"}
for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
    path = os.path.join(tmp, "from_numpy%d.npz" % method)
    with zipfile.ZipFile(path, "w", method) as zf:
        for t in ("q", "k", "v"):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, q)
            zf.writestr(t + ".npy", buf.getvalue())
        zf.writestr("meta.json", json.dumps(meta))
# deflated (numpy.savez_compressed): refused in one line; case files are uncompressed
r = run("info", path)
check(r.returncode == 2 and "compressed" in r.stderr and r.stderr.count("\n") == 1,
      "info on a deflated case: exit %d: %r" % (r.returncode, r.stderr))
path = os.path.join(tmp, "from_numpy%d.npz" % zipfile.ZIP_STORED)
r = run("info", path)
check(r.returncode == 0, "info on a numpy-written case: exit %d: %s" % (r.returncode, r.stderr.strip()))
m = re.search(r"^  q +\[1,1,3,2\] +(\S+) +(\S+) +\S+ +(\d+) ", r.stdout, re.M)
check(m is not None and float(m.group(1)) == -2.0 and float(m.group(2)) == 3.0 and m.group(3) == "2",
      "info statistics of the numpy-written case: %s" % (m.group(0) if m else r.stdout))

# np.savez output has no meta.json: refused in one line.
path = os.path.join(tmp, "plain.npz")
np.savez(path, q=q, k=q, v=q)
r = run("info", path)
check(r.returncode == 2 and "meta.json" in r.stderr and r.stderr.count("\n") == 1,
      "info on a plain np.savez file: exit %d: %r" % (r.returncode, r.stderr))

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("numpy_roundtrip: all passed (numpy %s)" % np.__version__)
