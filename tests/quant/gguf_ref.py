"""gguf_ref.py: ggml's block formats as gguf-py (gguf.quants, the Python reference of ggml-quants.c)
writes and reads them, against this tree's (tests/tquant_gguf.sh).

  gguf_ref.py make IN.npz        random rows of 32 (normal, with outliers, zero and tiny blocks);
                                 for each format gguf quantizes: FMT_bytes and FMT_deq
  gguf_ref.py check OUT.npz      gguf dequantizes our_FMT_bytes: equal to our_FMT_values rounded
                                 to float32 (q4_1 and q5_1: to gguf's float32 d*q + m)
"""
import sys

import numpy as np
from gguf import quants
from gguf.constants import GGMLQuantizationType as T

FORMATS = {"q8_0": T.Q8_0, "q4_0": T.Q4_0, "q4_1": T.Q4_1, "q5_0": T.Q5_0, "q5_1": T.Q5_1,
           "iq4_nl": T.IQ4_NL, "mxfp4": T.MXFP4}


def rows(n, seed=29):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 32)).astype(np.float32)
    x[::7] *= np.float32(1e-3)
    x[1::11, 5] = np.float32(300.0)          # an outlier that zeroes the rest of its block
    x[2::13] = 0                             # a block of zeros: scale 0
    x[3::17] *= np.float32(2.0 ** -20)       # subnormal f16 scales
    x[4::19] = np.round(x[4::19] * 4) / 4    # ties at quarter steps
    # no negative zeros: in a block of zeros ggml's C keeps the max (q4_0) or min (q4_1) it starts
    # from, +0, where gguf-py takes the first element, so their signs of a zero scale differ there
    return x + np.float32(0.0)


def make(path):
    x = rows(4096)
    out = {"x": x}
    for name, t in FORMATS.items():
        try:
            b = quants.quantize(x, t)
        except NotImplementedError:
            continue
        out[name + "_bytes"] = np.asarray(b, dtype=np.uint8).reshape(x.shape[0], -1)
        out[name + "_deq"] = quants.dequantize(out[name + "_bytes"], t).astype(np.float32).reshape(x.shape)
    np.savez(path, **out)


def check(path):
    z = np.load(path)
    bad = 0
    for name, t in FORMATS.items():
        b = z["our_%s_bytes" % name]
        mine = z["our_%s_values" % name]
        deq = quants.dequantize(b, t).astype(np.float32).reshape(mine.shape)
        if name in ("q4_1", "q5_1"):
            # gguf's float32 d*q + m from our own d, q, m: compare the rounding of the exact value
            # only where d*q + m is exact in float32 (every other block is read by ggml_tool)
            want = mine.astype(np.float32)
            ok = (mine == want.astype(np.float64))
            diff = int(np.sum((deq != want) & ok))
        else:
            diff = int(np.sum((deq != mine.astype(np.float32)) & ~(np.isnan(deq) & np.isnan(mine))))
        print("%s: gguf reads our %d blocks, values differing %d" % (name, b.shape[0], diff))
        bad += diff
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "check"):
        sys.exit(__doc__)
    sys.exit(make(sys.argv[2]) if sys.argv[1] == "make" else check(sys.argv[2]))
