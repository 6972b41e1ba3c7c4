"""bench/python_overhead.py [ATTNCHECK_BIN]: attncheck.check on a (1, 1024, 16, 128) bf16 causal
output with rows="edges+64" against the attncheck command judging the same case file
(`attncheck check CASE`, the stored outputs) in the same run, one oracle thread, no cache;
prints both times (median of 5, wall and CPU: the CPU times are what a loaded machine
does not distort) and their ratios. Run with the package installed; pin it to one
core with taskset -c 0."""
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import attncheck


def bf16(x):
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ATTNCHECK_BIN", "attncheck")
    rng = np.random.default_rng(1)
    B, T, H, D = 1, 1024, 16, 128
    q, k, v = (bf16(rng.standard_normal((B, T, H, D))) for _ in range(3))
    f = lambda x: (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64).transpose(0, 2, 1, 3)
    s = f(q) @ f(k).transpose(0, 1, 3, 2) / np.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    o = bf16(((p / p.sum(-1, keepdims=True)) @ f(v)).transpose(0, 2, 1, 3))
    kw = dict(dtype="bf16", layout="bthd", causal=True, rows="edges+64", cache=False, threads=1)
    r = attncheck.check(q, k, v, o, **kw)
    path = os.path.join(tempfile.mkdtemp(), "case.npz")
    r.save(path)
    py, c, pyc, cc = [], [], [], []
    for _ in range(5):
        t0, u0 = time.perf_counter(), time.process_time()
        attncheck.check(q, k, v, o, **kw)
        py.append(time.perf_counter() - t0)
        pyc.append(time.process_time() - u0)
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([cmd, "check", "--rows", "edges+64", "--no-cache", "--threads", "1", path], check=False,
                       stdout=subprocess.DEVNULL)
        c.append(time.perf_counter() - t0)
        ch2 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cc.append(ch2.ru_utime + ch2.ru_stime - ch.ru_utime - ch.ru_stime)
    med = lambda x: sorted(x)[len(x) // 2]
    print("verdict: %s" % r.line)
    print("wall: python attncheck.check %.3f s, command attncheck check %.3f s, ratio %.3f"
          % (med(py), med(c), med(py) / med(c)))
    print("cpu:  python attncheck.check %.3f s, command attncheck check %.3f s, ratio %.3f (targets: ratio <= 1.10, "
          "python < 1 s on one core)" % (med(pyc), med(cc), med(pyc) / med(cc)))


if __name__ == "__main__":
    main()
