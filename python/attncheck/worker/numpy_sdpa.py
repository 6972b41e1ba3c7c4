#!/usr/bin/env python3
"""sdpa_numpy.py: scaled dot-product attention in numpy, as an attncheck exec kernel.

It speaks both forms of the exec protocol (through protocol.py, beside it):

  one-shot:    attncheck fuzz --kernel 'exec:python3 python/attncheck/worker/numpy_sdpa.py {in} {out}' ...
  persistent:  attncheck fuzz --kernel 'exec-persistent:python3 python/attncheck/worker/numpy_sdpa.py --serve' ...

The persistent worker declares itself (every dtype, mask and feature, the attention variants
window, softcap, alibi, bias, bool_mask, sinks, descale and mixed_dtypes: q, k and v decoded
from their own dtypes, o rounded once to its own; and the serving layouts varlen and paged; it
writes the LSE). A varlen or paged case is computed sequence by sequence, each as a dense batch
of one (docs/layouts.md). It declares every quantized format for q, k and v ("kv_formats",
"q_formats"): such a tensor is read from its codes and scales by protocol.dequantize, float64 and
exact (docs/quantized.md), group and tile scales, scale and zero-point dtypes and packed codes
included ("quant_layout"). It quantizes its own K and V when a case asks it to ("quant_store",
"store_quantizers": protocol.store_quantize, the binary32 quantizers of docs/quantized.md) and
returns what it stored beside o and lse.
The computation is float64 in the order of the ABI's formula (kernels/attncheck_kernel.h):
descales, scale, softcap, ALiBi, bias, visibility, then the softmax with the row maximum
subtracted and the sink in the denominator, and one rounding to the output dtype. Keys that
are not visible, or whose score is -inf, never reach the output (a NaN stored in such a K or
V row is skipped). The output holds o and lse (float32, natural log; a row with no visible
key has o = 0 and lse = -inf, or the sink's logit with a sink).
--precision SPEC declares a class (a float64 kernel passes any; the option shows how a worker
names its class, in the handshake and, one-shot, in every output's precision member).
The persistent worker also declares a backward ("backward": its variants; attncheck check --grad):
dq, dk, dv and dsinks by the formulas of docs/backward.md in float64 (backward() below), for
masks, GQA, windows, boolean masks, ALiBi, bias, sinks and dropout.
Dropout (docs/dropout.md): the keep-mask from numpy's generator seeded with the case's dropout
seed, returned with o; the backward uses the mask the request carries.
"""
import copy
import os
import sys

try:  # first: it finds a python3 with numpy when this one has none
    from . import protocol as attncheck_worker  # python -m attncheck.worker
except ImportError:
    import protocol as attncheck_worker  # run as a file: the folder of protocol.py is on sys.path

import numpy as np


def visibility(p):
    """Which keys each query sees: [tq, tk], or [1|B, 1|H, tq, tk] with a boolean mask."""
    i = np.arange(p.tq)[:, None]
    j = np.arange(p.tk)[None, :]
    if p.mask == "none":
        vis = np.ones((p.tq, p.tk), dtype=bool)
    elif p.mask == "causal":
        vis = j <= i
    elif p.mask == "causal-bottom-right":
        vis = j <= i + (p.tk - p.tq)
    else:
        raise ValueError("unknown mask %s" % p.mask)
    if p.window is not None:
        left, right = p.window
        c = i + (p.tk - p.tq if p.window_align == "bottom-right" else 0)
        if left >= 0:
            vis = vis & (j >= c - left)
        if right >= 0:
            vis = vis & (j <= c + right)
    if p.bool_mask is not None:
        vis = vis & p.bool_mask
    return vis


def scores(q, k, p):
    """s_ij of the formula, steps 1 to 4 (descales, scale, softcap, ALiBi, bias): [B, H, tq, tk]."""
    group = p.heads // p.kv_heads
    if p.descale_q is not None:
        q = q * np.repeat(p.descale_q, group, axis=1)[:, :, None, None]
        k = k * p.descale_k[:, :, None, None]
    k = np.repeat(k, group, axis=1)
    sc = np.einsum("bhid,bhjd->bhij", q, k) * p.scale
    if p.softcap:
        sc = p.softcap * np.tanh(sc / p.softcap)
    if p.alibi_slopes is not None:
        m = p.alibi_slopes if p.alibi_per_batch else p.alibi_slopes[None, :]
        dist = np.abs(np.arange(p.tq)[:, None] + (p.tk - p.tq) - np.arange(p.tk)[None, :])
        sc = sc - m[:, :, None, None] * dist
    if p.bias is not None:
        sc = sc + p.bias
    return sc


def weighted_values(w, v, keys):
    """Σ_j w_ij v_j over the keys that take part (keys), with IEEE arithmetic on those keys only:
    a NaN or infinite V value reaches just the rows whose keys include it."""
    fin = np.isfinite(v)
    num = np.einsum("bhij,bhjd->bhid", w, np.where(fin, v, 0.0))
    if fin.all():
        return num
    inc = keys.astype(np.float64)
    npos = np.einsum("bhij,bhjd->bhid", inc, np.isposinf(v).astype(np.float64))
    nneg = np.einsum("bhij,bhjd->bhid", inc, np.isneginf(v).astype(np.float64))
    nnan = np.einsum("bhij,bhjd->bhid", inc, np.isnan(v).astype(np.float64))
    # 0 · ∞ (a weight that underflows to 0 at an infinite value) is NaN
    nzinf = np.einsum("bhij,bhjd->bhid", (keys & (w == 0)).astype(np.float64), np.isinf(v).astype(np.float64))
    nan = (nnan > 0) | ((npos > 0) & (nneg > 0)) | (nzinf > 0)
    return np.where(nan, np.nan, np.where(npos > 0, num + np.inf, np.where(nneg > 0, num - np.inf, num)))


def attention(q, k, v, p):
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    if p.descale_v is not None:
        v = v * p.descale_v[:, :, None, None]
    v = np.repeat(v, p.heads // p.kv_heads, axis=1)
    B, H, tq, tk = p.batch, p.heads, p.tq, p.tk
    with np.errstate(all="ignore"):
        vis = np.broadcast_to(visibility(p), (B, H, tq, tk))
        sc = np.where(vis, scores(q, k, p), -np.inf)
        m = sc.max(axis=-1, keepdims=True, initial=-np.inf)
        sink = None if p.sinks is None else np.broadcast_to(p.sinks[None, :, None, None], m.shape)
        if sink is not None:
            m = np.maximum(m, sink)
        shift = np.where(np.isfinite(m), m, 0.0)
        w = np.where(vis, np.exp(sc - shift), 0.0)
        L = w.sum(axis=-1, keepdims=True)
        if sink is not None:
            L = L + np.exp(sink - shift)
        keys = vis & (sc != -np.inf)
        keep = dropout_mask(p)
        if keep is not None:   # dropout: the normalized weights times the mask and 1 / (1 - p)
            w, keys = w * keep / (1.0 - p.dropout_p), keys & keep
        # a row whose visible scores are all -inf (no sink) is not empty: 0/0 gives NaN there
        o = weighted_values(w, v, keys) / L
        lse = (shift + np.log(L))[..., 0]
    empty = ~vis.any(axis=-1)
    # mean-v (JAX's, MLX's): a row of no visible key averages V over every key of its sequence
    fill = v.mean(axis=2, keepdims=True) if EMPTY_ROWS == "mean-v" and sink is None and tk else 0.0
    o = np.where(empty[..., None], fill, o)
    lse = np.where(empty, -np.inf if sink is None else sink[..., 0], lse)
    return (o, lse) if keep is None else (o, lse, keep)


def dropout_mask(p):
    """Dropout (docs/dropout.md): the keep-mask [B, H, tq, tk] drawn from the case's seed (numpy's
    generator: each entry kept with probability 1 - p), or None without dropout."""
    if "dropout" not in p.variants:
        return None
    rng = np.random.default_rng(p.dropout_seed)
    return rng.random((p.batch, p.heads, p.tq, p.tk)) >= p.dropout_p


def attention_layout(q, k, v, p):
    """A varlen or paged case: each sequence alone through attention(), into the carrier's rows."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    o = np.zeros(q.shape[:3] + (v.shape[3],))
    lse = np.full(q.shape[:3], -np.inf)
    cu = p.cu_seqlens_q
    for b in range(p.sequences):
        t0, t1, keys = cu[b], cu[b + 1], p.key_slots(b)
        if t1 == t0:
            continue
        if len(keys) == 0:   # no key: empty rows (o = 0, lse -inf or the sink)
            if p.sinks is not None:
                lse[0, :, t0:t1] = p.sinks[:, None]
            continue
        s = copy.copy(p)
        s.layout, s.tq, s.tk = None, int(t1 - t0), len(keys)
        # the sequence's rows of the bias and boolean mask ([1, H|1, total_q, max_tk], key j at
        # column j) and its row of per-sequence ALiBi slopes
        if p.bias is not None:
            s.bias = p.bias[:, :, t0:t1, :len(keys)]
        if p.bool_mask is not None:
            s.bool_mask = p.bool_mask[:, :, t0:t1, :len(keys)]
        if p.alibi_slopes is not None and p.alibi_per_batch:
            s.alibi_slopes = p.alibi_slopes[b:b + 1]
        ob, lb = attention(q[:, :, t0:t1], k[:, :, keys], v[:, :, keys], s)
        o[:, :, t0:t1], lse[:, :, t0:t1] = ob, lb
    return o, lse


def backward(q, k, v, o, lse, do, p):
    """dQ, dK, dV (and dσ with sinks) of docs/backward.md in float64, from this worker's own P
    (o and lse, the forward's, are not needed): dP = dO·V, D = Σ P dP, dS = P (dP − D),
    dQ = c Σ_j dS K_j, dK = c Σ_i dS Q_i and dV = Σ_i P dO_i summed over each KV group,
    dσ_h = −Σ_{b,i} P_sink D. Masked keys (and keys of score −inf) take no part, whatever
    they hold. Plain attention with masks, GQA, windows, boolean masks, ALiBi, bias, sinks."""
    if p.layout or p.softcap or p.descale_q is not None or "mixed_dtypes" in p.variants:
        raise NotImplementedError("backward of layouts, softcap, descales or mixed dtypes")
    q, k, v, do = (np.asarray(x, dtype=np.float64) for x in (q, k, v, do))
    B, H, KVH, tq, tk = p.batch, p.heads, p.kv_heads, p.tq, p.tk
    group = H // KVH
    kh, vh = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    with np.errstate(all="ignore"):
        vis = np.broadcast_to(visibility(p), (B, H, tq, tk))
        sc = np.where(vis, scores(q, k, p), -np.inf)
        keys = vis & (sc != -np.inf)
        m = sc.max(axis=-1, keepdims=True, initial=-np.inf)
        sink = None if p.sinks is None else np.broadcast_to(p.sinks[None, :, None, None], m.shape)
        if sink is not None:
            m = np.maximum(m, sink)
        shift = np.where(np.isfinite(m), m, 0.0)
        w = np.where(keys, np.exp(sc - shift), 0.0)
        L = w.sum(axis=-1, keepdims=True)
        if sink is not None:
            L = L + np.exp(sink - shift)
        P = np.where(keys, w / L, 0.0)
        # dropout: the forward's mask; dP and the P of dV take it and 1 / (1 - p), D and dS follow
        r = 1.0 if p.dropout_mask is None else 1.0 / (1.0 - p.dropout_p)
        kept = keys if p.dropout_mask is None else keys & p.dropout_mask
        dP = np.where(kept, np.einsum("bhit,bhjt->bhij", do, np.where(np.isfinite(vh), vh, 0.0)), 0.0)
        dP = (dP + np.where(kept, nonfinite_dot(do, vh), 0.0)) * r
        D = (P * dP).sum(axis=-1, keepdims=True)
        dS = np.where(keys, P * (dP - D), 0.0)
        dq = weighted_values(dS, kh, keys) * p.scale
        kt = np.swapaxes(keys, 2, 3)
        dk = weighted_values(np.swapaxes(dS, 2, 3), q, kt) * p.scale
        dv = weighted_values(np.swapaxes(np.where(kept, P * r, 0.0), 2, 3), do, np.swapaxes(kept, 2, 3))
        dk = dk.reshape(B, KVH, group, tk, p.dk).sum(axis=2)
        dv = dv.reshape(B, KVH, group, tk, p.dv).sum(axis=2)
        dsinks = None
        if sink is not None:
            psink = np.exp(sink - shift) / L
            dsinks = -(psink * D).sum(axis=(0, 2, 3))
    return dq, dk, dv, dsinks


def nonfinite_dot(a, b):
    """The part of Σ_t a_it b_jt that einsum over finite values misses: NaN where a NaN or ±inf
    of b meets row i (IEEE: inf·0 and inf − inf are NaN, inf·x is ±inf), else 0."""
    fin = np.isfinite(b)
    if fin.all():
        return 0.0
    prod = a[:, :, :, None, :] * np.where(fin, 0.0, b)[:, :, None, :, :]
    return np.where(np.isnan(prod).any(-1), np.nan, np.where(np.isinf(prod), prod, 0.0).sum(-1))


def attend(q, k, v, p):
    """The attention; a tensor the case asks it to store (quantize-on-store) is quantized by
    protocol.store_quantize, and the attention runs over what it stored, returned beside o and lse."""
    stored, qkv = {}, {"q": q, "k": k, "v": v}
    for x, spec in getattr(p, "store", {}).items():
        if os.environ.get("ATTNCHECK_WORKER_MUTATE") == "store-round-away":   # a deliberately wrong store (tests)
            spec = dict(spec, store=spec["store"].replace("-even-", "-away-"))
        m = attncheck_worker.store_quantize(qkv[x], spec, p.arrays)
        stored.update(m)
        qkv[x] = attncheck_worker.dequantize(m, x, spec)
    q, k, v = qkv["q"], qkv["k"], qkv["v"]
    res = attention_layout(q, k, v, p) if p.layout else attention(q, k, v, p)
    return tuple(res) + (stored,) if stored else res


EMPTY_ROWS = "zero"
# the variants its backward takes: those of the exact backward (docs/backward.md) but softcap
BACKWARD_FEATURES = ("window", "bool_mask", "alibi", "bias", "sinks", "dropout")


def main(argv):
    """[--precision SPEC] [--empty-rows mean-v] [--serve | IN OUT]: SPEC, the declared class ("fp32", or
    "f16=CLASS,f32=CLASS"), is sent in the handshake and, in one-shot mode, with every output (its
    precision member); --empty-rows mean-v writes the mean of V for a row with no visible key (JAX's and
    MLX's convention; declared, with LSE -inf) instead of 0."""
    global EMPTY_ROWS
    precision = None
    if len(argv) >= 2 and argv[0] == "--precision":
        spec, argv = argv[1], argv[2:]
        precision = spec if "=" not in spec else dict(x.split("=", 1) for x in spec.split(","))
    if len(argv) >= 2 and argv[0] == "--empty-rows":
        EMPTY_ROWS, argv = argv[1], argv[2:]
        if EMPTY_ROWS not in ("zero", "mean-v"):
            sys.stderr.write("numpy_sdpa: --empty-rows zero|mean-v\n")
            return 2
    return attncheck_worker.run(attend, argv, name="sdpa_numpy", writes_lse=True, backward=backward,
                                backward_features=BACKWARD_FEATURES, precision=precision,
                                empty_rows=EMPTY_ROWS if EMPTY_ROWS != "zero" else None,
                                features=attncheck_worker.ALL_FEATURES + attncheck_worker.VARIANT_FEATURES
                                + attncheck_worker.LAYOUT_FEATURES + attncheck_worker.DROPOUT_FEATURES
                                + attncheck_worker.QUANT_FEATURES,
                                kv_formats=attncheck_worker.QUANT_FORMATS, q_formats=attncheck_worker.QUANT_FORMATS,
                                store_quantizers=attncheck_worker.STORE_QUANTIZERS)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
