#!/usr/bin/env python3
"""sdpa_numpy.py: scaled dot-product attention in numpy, as an attncheck exec kernel.

It speaks both forms of the exec protocol (through attncheck_worker.py, beside it):

  one-shot:    attncheck fuzz --kernel 'exec:python3 examples/python/sdpa_numpy.py {in} {out}' ...
  persistent:  attncheck fuzz --kernel 'exec-persistent:python3 examples/python/sdpa_numpy.py --serve' ...

The persistent worker declares itself (every dtype, mask and feature; it writes the LSE).
The computation is float64 with the row maximum subtracted, then one rounding to the output
dtype; masked keys never reach the output (a NaN stored in a masked K or V row is skipped).
The output holds o and lse (float32, natural log; -inf for a row with no visible key).
"""
import sys

import attncheck_worker  # first: it finds a python3 with numpy when this one has none

import numpy as np


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


def attention(q, k, v, problem):
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    B, H, tq, dk = q.shape
    kvh, tk = k.shape[1], k.shape[2]
    k = np.repeat(k, H // kvh, axis=1)
    v = np.repeat(v, H // kvh, axis=1)
    vis = visible(problem.mask, tq, tk)
    with np.errstate(all="ignore"):
        sc = np.einsum("bhid,bhjd->bhij", q, k) * problem.scale
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
    return o, lse


if __name__ == "__main__":
    sys.exit(attncheck_worker.run(attention, sys.argv[1:], name="sdpa_numpy", writes_lse=True))
