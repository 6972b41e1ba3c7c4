"""bench/python_fa.py: attncheck.assert_attention_close on FlashAttention's test_flash_attn_output
shape (B 4, T 1024, H 6, d 128, bf16, causal and not) against numpy's float64 reference of the same
arrays (full S = Q Kᵀ, the mask, the softmax, P V, what the test would compute), in one process:
every row, one oracle thread, no cache; prints the medians of 3 runs (process CPU and wall) and
their ratios (target: <= 3x). The output judged is the reference rounded to bf16 (a correct
kernel). Run with the package importable (PYTHONPATH=python ATTNCHECK_LIBRARY=build/.libs/
libattncheck.so.0) and numpy's BLAS on one thread (OPENBLAS_NUM_THREADS=1)."""
import os
import sys
import time

import numpy as np

import attncheck


def bf16(x):
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def widen(x):
    return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def reference(q, k, v, causal):
    f = lambda x: widen(x).transpose(0, 2, 1, 3)
    s = f(q) @ f(k).transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        t = q.shape[1]
        s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return ((p / p.sum(-1, keepdims=True)) @ f(v)).transpose(0, 2, 1, 3)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rng = np.random.default_rng(0)
    B, T, H, D = 4, 1024, 6, 128
    q, k, v = (bf16(rng.standard_normal((B, T, H, D))) for _ in range(3))
    worst = 0
    for causal in (False, True):
        o = bf16(reference(q, k, v, causal))
        kw = dict(dtype="bf16", layout="bthd", causal=causal, cache=False, threads=1)
        rc, rw, ac, aw = [], [], [], []
        for _ in range(reps):
            t0, u0 = time.perf_counter(), time.process_time()
            reference(q, k, v, causal)
            rw.append(time.perf_counter() - t0)
            rc.append(time.process_time() - u0)
            t0, u0 = time.perf_counter(), time.process_time()
            attncheck.assert_attention_close(q, k, v, o, **kw)
            aw.append(time.perf_counter() - t0)
            ac.append(time.process_time() - u0)
        med = lambda x: sorted(x)[len(x) // 2]
        r = med(ac) / med(rc)
        worst = max(worst, r)
        print("B%d T%d H%d d%d bf16 %-6s: numpy float64 %.3f s CPU (%.3f wall), assert_attention_close %.3f s CPU "
              "(%.3f wall): %.2fx CPU, %.2fx wall" % (B, T, H, D, "causal" if causal else "none", med(rc), med(rw),
                                                      med(ac), med(aw), r, med(aw) / med(rw)))
    print("target: assert_attention_close <= 3x numpy's float64 reference (CPU): worst %.2fx %s"
          % (worst, "met" if worst <= 3 else "NOT met"))


if __name__ == "__main__":
    main()
