"""bench/python_grad.py [--causal] [--reps N] [--threads N] [B T H D]: attncheck.check_grad on
FlashAttention's test shape (default B 4, T 1024, H 6, D 128, bf16, layout bthd) against numpy's
float64 forward + backward of the same arrays, in one process and on the same number of threads
(numpy's OpenBLAS is limited to them through OPENBLAS_NUM_THREADS, set before numpy loads):
medians of --reps runs of each, wall and CPU seconds, and their ratio. The gradients judged are the
float64 reference's rounded to bf16 (a correct kernel's: PASS expected). Run with the package
installed (or PYTHONPATH=python and ATTNCHECK_LIBRARY=build/.libs/libattncheck.so.0)."""
import os
import sys

args = [a for a in sys.argv[1:]]
threads = 1
if "--threads" in args:
    i = args.index("--threads")
    threads = int(args[i + 1])
    del args[i:i + 2]
os.environ["OPENBLAS_NUM_THREADS"] = str(threads)

import time  # noqa: E402

import numpy as np  # noqa: E402

import attncheck  # noqa: E402


def bf16(x):
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def f64(x):
    return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def reference(q, k, v, do, causal):
    """float64 forward + backward of bf16 arrays (B, T, H, D), as a user would write it."""
    Q, K, V, dO = (f64(x).transpose(0, 2, 1, 3) for x in (q, k, v, do))
    T, D = Q.shape[2], Q.shape[3]
    c = 1 / np.sqrt(D)
    s = Q @ K.transpose(0, 1, 3, 2) * c
    if causal:
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ V
    dp = dO @ V.transpose(0, 1, 3, 2)
    dd = (dO * o).sum(-1, keepdims=True)
    ds = p * (dp - dd) * c
    dq = ds @ K
    dk = ds.transpose(0, 1, 3, 2) @ Q
    dv = p.transpose(0, 1, 3, 2) @ dO
    return [x.transpose(0, 2, 1, 3) for x in (dq, dk, dv)]


def timed(f):
    t0, c0 = time.perf_counter(), time.process_time()
    r = f()
    return r, time.perf_counter() - t0, time.process_time() - c0


def main():
    causal = "--causal" in args
    reps = 3
    if "--reps" in args:
        i = args.index("--reps")
        reps = int(args[i + 1])
        del args[i:i + 2]
    nums = [int(a) for a in args if not a.startswith("--")]
    B, T, H, D = nums if len(nums) == 4 else (4, 1024, 6, 128)
    rng = np.random.default_rng(0)
    q, k, v, do = (bf16(rng.standard_normal((B, T, H, D))) for _ in range(4))
    grads = [bf16(g) for g in reference(q, k, v, do, causal)]
    kw = dict(dtype="bf16", layout="bthd", causal=causal, cache=False, threads=threads)
    rw, rc, cw, cc = [], [], [], []
    for _ in range(reps):
        _, w, c = timed(lambda: reference(q, k, v, do, causal))
        rw.append(w), rc.append(c)
        r, w, c = timed(lambda: attncheck.check_grad(q, k, v, do, *grads, **kw))
        cw.append(w), cc.append(c)
    med = lambda x: float(np.median(x))
    print("check_grad B%d T%d H%d D%d bf16 %s, %d thread(s), %d runs (medians): %s" %
          (B, T, H, D, "causal" if causal else "not causal", threads, reps, r.verdict))
    print("  numpy float64 forward + backward: %8.3f s wall %8.3f s CPU" % (med(rw), med(rc)))
    print("  attncheck.check_grad:             %8.3f s wall %8.3f s CPU   ratio %.2fx wall, %.2fx CPU" %
          (med(cw), med(cc), med(cw) / med(rw), med(cc) / med(rc)))


if __name__ == "__main__":
    main()
