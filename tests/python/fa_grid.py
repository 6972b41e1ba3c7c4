"""How much of FlashAttention-2's test_flash_attn_output grid (flash-attn's tests/test_flash_attn.py)
attncheck.check can express, counted combination by combination (docs/python.md).

The grid: kvpacked (2) x dtype (float16, bfloat16) x mha_type (mha 6/6, mqa 6/1, gqa 6/2 heads) x
deterministic (2) x alibi (2) x local (2) x causal (2) x d (11) x (seqlen_q, seqlen_k) (10) x
dropout_p (0, 0.17) x softcap (0, 50) = 84,480 combinations, of which flash-attn runs the 63,360
without both softcap and dropout (it skips those), at batch 4.

Each combination maps onto check()'s arguments: dtype=, the heads of q and k, alibi_slopes=
[batch, heads] (flash-attn's bias -m|i + sk - sq - j|), local as window=(left, right) drawn below
seqlen_k (right 0 when causal), causal="bottom-right", softcap=, dropout_p= with the kernel's
dropout_mask=. kvpacked (k and v in one tensor: views of it) and deterministic (a property of the
kernel's backward) leave the problem as it is.

A combination is expressible when check() judges its feature signature (dtype, heads, alibi, local,
causal, dropout, softcap) on a small problem, the float64 reference below passing, and (with
--shapes) accepts its shape (d, seqlen_q, seqlen_k at batch 4, 6 heads) with every feature of the
grid on, judging one row a head (the full-size runs take minutes).
Usage: python tests/python/fa_grid.py [--shapes] (attncheck importable)."""
import argparse
import itertools

import numpy as np

import attncheck
import fa_kernels as K

DTYPES = ["f16", "bf16"]
HEADS = {"mha": (6, 6), "mqa": (6, 1), "gqa": (6, 2)}
BOOLS = [False, True]
DS = [32, 40, 59, 64, 96, 111, 128, 160, 192, 224, 256]
SEQLENS = [(113, 203), (128, 217), (113, 211), (108, 256), (256, 512), (512, 256), (1024, 1024), (1023, 1024),
           (1024, 1023), (2048, 2048)]
DROPOUTS = [0.0, 0.17]
SOFTCAPS = [0.0, 50.0]
BATCH = 4


def signatures():
    """Every feature signature (dtype, heads, alibi, local, causal, dropout_p, softcap) flash-attn runs."""
    for s in itertools.product(DTYPES, HEADS, BOOLS, BOOLS, BOOLS, DROPOUTS, SOFTCAPS):
        if not (s[5] and s[6]):
            yield s


def combinations():
    """The number of combinations of the grid, and of those flash-attn runs."""
    n_sig = sum(1 for _ in signatures())
    per_sig = 2 * 2 * len(DS) * len(SEQLENS)   # kvpacked, deterministic, d, seqlens
    return 2 * len(DTYPES) * len(HEADS) * 2 * 8 * len(DS) * len(SEQLENS) * 4, n_sig * per_sig


def reference(q, k, v, dtype, scale, slopes, window, causal, softcap, dropout):
    """float64 attention in flash-attn's conventions (B,T,H,D), rounded to dtype."""
    qh, kh, vh = (K.to_f64(x, dtype).transpose(0, 2, 1, 3) for x in (q, k, v))
    B, H, tq, _ = qh.shape
    kh, vh = K.gqa(kh, H), K.gqa(vh, H)
    tk = kh.shape[2]
    s = qh @ kh.transpose(0, 1, 3, 2) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    rel = np.arange(tq)[:, None] + tk - tq - np.arange(tk)[None, :]   # i + sk - sq - j
    if slopes is not None:
        s = s - slopes.astype(np.float64)[:, :, None, None] * np.abs(rel)
    vis = np.ones((tq, tk), bool)
    if causal:
        vis &= rel >= 0
    if window:
        vis &= (rel <= window[0]) & (rel >= -window[1])
    s = np.where(vis, s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    l = e.sum(-1, keepdims=True)
    w = e / np.where(l > 0, l, 1)
    if dropout:
        w = w * dropout[1] / (1 - np.float64(np.float32(dropout[0])))
    return K.from_f((w @ vh).transpose(0, 2, 1, 3), dtype)


def arguments(sig, d, tq, tk, rng, output=True):
    """check()'s positional and keyword arguments for one combination (o the reference, or zeros)."""
    dtype, heads, alibi, local, causal, dropout_p, softcap = sig
    H, KVH = HEADS[heads]
    q = K.from_f(rng.standard_normal((BATCH, tq, H, d)), dtype)
    k, v = (K.from_f(rng.standard_normal((BATCH, tk, KVH, d)), dtype) for _ in range(2))
    kw = dict(layout="bthd", dtype=dtype, causal="bottom-right" if causal else False)
    slopes = (rng.random((BATCH, H)) * 0.3).astype(np.float32) if alibi else None
    window = None
    if local:   # flash-attn: window_size = randint(0, seqlen_k, (2,)), the right one 0 when causal
        wl, wr = (int(x) for x in rng.integers(0, tk, 2))
        window = (wl, 0 if causal else wr)
    kw.update(alibi_slopes=slopes, window=window, softcap=softcap or None)
    dropout = None
    if dropout_p:
        dropout = (dropout_p, rng.random((BATCH, H, tq, tk)) >= np.float32(dropout_p))
        kw.update(dropout_p=dropout_p, dropout_mask=dropout[1])
    scale = 1 / np.sqrt(d)
    o = reference(q, k, v, dtype, scale, slopes, window, causal, softcap, dropout) if output else \
        np.zeros_like(q)
    return (q, k, v, o), kw


def expressible(sig, d=16, tq=13, tk=21, rows=None, seed=0):
    """(True, verdict) when check() judges the combination, (False, why) when it refuses it."""
    args, kw = arguments(sig, d, tq, tk, np.random.default_rng(seed), output=rows is None)
    try:
        r = attncheck.check(*args, rows=rows, **kw)
    except (TypeError, ValueError, attncheck.AttncheckError) as e:
        return False, "%s: %s" % (type(e).__name__, e)
    return True, r.verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", action="store_true", help="also judge every (d, seqlens) at full size, one row a head")
    a = ap.parse_args()
    total, run = combinations()
    per_sig = run // sum(1 for _ in signatures())
    ok_sig, verdicts = [], {}
    for sig in signatures():
        ok, v = expressible(sig)
        verdicts[v] = verdicts.get(v, 0) + 1
        if ok:
            ok_sig.append(sig)
    print("combinations %d, run by flash-attn %d; feature signatures %d, expressible %d (%s)"
          % (total, run, run // per_sig, len(ok_sig), ", ".join("%s %d" % kv for kv in sorted(verdicts.items()))))
    n_shapes = len(DS) * len(SEQLENS)
    ok_shapes = n_shapes
    if a.shapes:
        ok_shapes = 0
        for d, (tq, tk) in itertools.product(DS, SEQLENS):
            full = [s for s in ok_sig if s[2] and s[3] and s[4] and (s[5] or s[6]) and s[0] == "f16" and s[1] == "gqa"]
            res = [expressible(s, d, tq, tk, rows="0") for s in full] if full else [(False, "no signature")]
            ok_shapes += all(r[0] for r in res)
            if not all(r[0] for r in res):
                print("d %d seqlens (%d, %d): %s" % (d, tq, tk, "; ".join(r[1] for r in res if not r[0])))
        print("shapes %d, expressible %d" % (n_shapes, ok_shapes))
    n = len(ok_sig) * (per_sig // n_shapes) * ok_shapes
    print("expressible combinations: %d of %d (%.1f%%)%s" % (n, run, 100.0 * n / run,
                                                            "" if a.shapes else " (shapes not tried: --shapes)"))


if __name__ == "__main__":
    main()
