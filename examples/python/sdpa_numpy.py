#!/usr/bin/env python3
"""sdpa_numpy.py: scaled dot-product attention in numpy, as an attncheck exec kernel.

It speaks both forms of the exec protocol:

  one-shot:    attncheck fuzz --kernel 'exec:python3 examples/python/sdpa_numpy.py {in} {out}' ...
  persistent:  attncheck fuzz --kernel 'exec-persistent:python3 examples/python/sdpa_numpy.py --serve' ...

One-shot mode reads the case IN and writes OUT, exiting 0 (or 1 with the message on stderr).
Persistent mode reads lines "IN OUT" on stdin and answers each with one line on stdout, "ok"
or "error MESSAGE"; it exits at the end of its input. Importing a framework once instead of
once per case is what the persistent form is for.

A case is an NPZ file: q [batch][heads][tq][dk], k and v [batch][kv_heads][tk][d] (dense) and
meta.json (dtype by name, mask, scale "default" or a hex float). bf16 is stored as uint16 bit
patterns. The output NPZ holds o [batch][heads][tq][dv] in the case's encoding and lse
(float32 [batch][heads][tq], natural log; -inf for a row with no visible key).

The computation is float64 with the row maximum subtracted, then one rounding to the output
dtype; masked keys never reach the output (a NaN stored in a masked K or V row is skipped).
Supported dtypes: f64, f32, f16, bf16.
"""
import io
import json
import sys
import zipfile

import numpy as np


def load_case(path):
    with zipfile.ZipFile(path) as z:
        meta = json.loads(z.read("meta.json").decode("utf-8"))
    arrays = np.load(path, allow_pickle=False)
    return meta, arrays["q"], arrays["k"], arrays["v"]


def bf16_to_f64(a):
    return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def f64_to_bf16(x):
    """Round float64 to bf16 bit patterns, to nearest even, in one step."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(x.shape, dtype=np.float64)
    fin = np.isfinite(x)
    out[~fin] = x[~fin]
    xf = x[fin]
    _, e = np.frexp(xf)
    # quantum 2^(e-8) for normals, 2^-133 at the bottom (bf16 subnormals)
    q = np.ldexp(1.0, np.maximum(e - 8, -133))
    r = np.round(xf / q) * q
    r[np.abs(r) > 3.3895313892515355e38] = np.copysign(np.inf, r[np.abs(r) > 3.3895313892515355e38])
    out[fin] = r
    bits = out.astype(np.float32).view(np.uint32)
    nan = np.isnan(out)
    bits = (bits >> 16).astype(np.uint16)
    bits[nan] = 0x7FC0
    return bits


def decode(a, dtype):
    if dtype == "bf16":
        return bf16_to_f64(a)
    if dtype in ("f16", "f32", "f64"):
        return a.astype(np.float64)
    raise ValueError("dtype %s is not supported by this kernel" % dtype)


def encode(x, dtype):
    if dtype == "bf16":
        return f64_to_bf16(x)
    return x.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype])


def visible(mask, tq, tk):
    i = np.arange(tq)[:, None]
    j = np.arange(tk)[None, :]
    if mask == "none":
        return np.ones((tq, tk), dtype=bool)
    if mask == "causal":
        return j <= i
    if mask == "causal-bottom-right":
        return j <= i + (tk - tq)
    raise ValueError("unknown mask %s" % mask)


def attention(meta, q, k, v):
    dtype = meta["dtype"]
    q, k, v = decode(q, dtype), decode(k, dtype), decode(v, dtype)
    B, H, tq, dk = q.shape
    kvh, tk = k.shape[1], k.shape[2]
    k = np.repeat(k, H // kvh, axis=1)
    v = np.repeat(v, H // kvh, axis=1)
    s = meta.get("scale", "default")
    scale = 1.0 / np.sqrt(dk) if s == "default" else float.fromhex(s)
    vis = visible(meta.get("mask", "none"), tq, tk)
    with np.errstate(all="ignore"):
        sc = np.einsum("bhid,bhjd->bhij", q, k) * scale
        sc = np.where(vis, sc, -np.inf)
        m = sc.max(axis=-1, keepdims=True)
        # a row with no visible key is empty (o = 0, LSE = -inf); a row whose visible scores
        # are all -inf is not: 0/0 gives NaN there, as IEEE arithmetic does
        empty = np.broadcast_to(~vis.any(axis=-1)[:, None], m.shape)
        w = np.exp(sc - np.where(np.isfinite(m), m, 0.0))
        w = np.where(vis, w, 0.0)
        L = w.sum(axis=-1, keepdims=True)
        if np.all(np.isfinite(v)):
            num = np.einsum("bhij,bhjd->bhid", w, v)
        else:
            # a non-finite V value must reach only the rows that see it
            num = np.zeros((B, H, tq, v.shape[3]))
            for i in range(tq):
                n = int(vis[i].sum())
                if n:
                    num[:, :, i, :] = np.einsum("bhj,bhjd->bhd", w[:, :, i, :n], v[:, :, :n, :])
        o = num / L
        lse = (m + np.log(L))[..., 0]
    o = np.where(empty, 0.0, o)
    lse = np.where(empty[..., 0], -np.inf, lse)
    return encode(o, dtype), lse.astype(np.float32)


def save(path, o, lse):
    buf = io.BytesIO()
    np.savez(buf, o=o, lse=lse)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def run(inp, out):
    meta, q, k, v = load_case(inp)
    o, lse = attention(meta, q, k, v)
    save(out, o, lse)


def serve():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            inp, out = line.split(" ", 1)
            run(inp, out)
            reply = "ok"
        except Exception as exc:  # every failure is an answer, never a dead worker
            reply = "error " + str(exc).replace("\n", " ")
        sys.stdout.write(reply + "\n")
        sys.stdout.flush()


def main(argv):
    if len(argv) == 2 and argv[1] == "--serve":
        serve()
        return 0
    if len(argv) != 3:
        sys.stderr.write("usage: sdpa_numpy.py IN OUT | sdpa_numpy.py --serve\n")
        return 2
    try:
        run(argv[1], argv[2])
    except Exception as exc:
        sys.stderr.write("sdpa_numpy: %s\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
