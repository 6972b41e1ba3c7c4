"""A FlashAttention-style test module (the grid of flash-attn's test_flash_attn_output:
dtypes, causal, GQA, sliding window, softcap, varlen) written on attncheck.assert_attention_close,
run against correct kernels: the float64 numpy reference, a FlashAttention-2-style numpy kernel,
and PyTorch's CPU SDPA backends (math, flash; skipped without torch).

ATTNCHECK_FA_ASSERT=assert_close or fa-2x swaps in the hand tolerances (torch.testing.assert_close's
default tolerances, or FlashAttention's rule: the max error at most twice that of a low-precision
reference) and ATTNCHECK_FA_KERNEL=<defect> runs a defect of fa_kernels.py instead: tests/python/
defect_table.py counts what each version accepts and rejects (docs/python.md)."""
import os

import numpy as np
import pytest

import attncheck
import fa_kernels as K

MODE = os.environ.get("ATTNCHECK_FA_ASSERT", "attncheck")
DEFECT = os.environ.get("ATTNCHECK_FA_KERNEL")
TOL = {"f32": (1.3e-6, 1e-5), "f16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}  # torch.testing.assert_close defaults


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


BACKENDS = [DEFECT] if DEFECT else ["numpy-ref", "numpy-flash", "torch-math", "torch-flash"]


def inputs(dtype, B, T, H, KVH, D, values, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, T, H, D))
    k = rng.standard_normal((B, T, KVH, D))
    v = rng.standard_normal((B, T, KVH, D))
    if values == "large":  # logits around -1.4e4 (d = 32): a finite -1e4 sentinel outweighs every visible key
        q = 50 * (1 + 0.05 * q)
        k = -50 * (1 + 0.05 * k)
    return tuple(K.from_f(x, dtype) for x in (q, k, v))


def run(backend, q, k, v, dtype, causal, window, softcap):
    if backend == "numpy-ref":
        return K.reference(q, k, v, dtype, causal, window, softcap)
    if backend == "numpy-flash":
        return K.flash(q, k, v, dtype, causal, window, softcap)
    if backend in K.DEFECTS:
        return K.flash(q, k, v, dtype, causal, window, softcap, defect=backend)
    if not have_torch():
        pytest.skip("no torch")
    r = K.torch_sdpa(q, k, v, dtype, causal, window, softcap, backend=backend.split("-")[1])
    if r is None:
        pytest.skip("%s does not compute this variant" % backend)
    return r


def hand_check(o, lse, q, k, v, dtype, causal, window, softcap):
    ref, ref_lse = K.reference(q, k, v, "f32" if dtype != "f32" else "f32", causal, window, softcap) \
        if dtype == "f32" else (None, None)
    exact = K.reference(K.to_f64(q, dtype).astype(np.float32), K.to_f64(k, dtype).astype(np.float32),
                        K.to_f64(v, dtype).astype(np.float32), "f32", causal, window, softcap)[0].astype(np.float64)
    got = K.to_f64(o, dtype)
    err = np.abs(got - exact)
    if MODE == "assert_close":
        rtol, atol = TOL[dtype]
        bad = ~(err <= atol + rtol * np.abs(exact))
        assert not bad.any(), "assert_close: %d mismatched elements, max abs err %g" % (bad.sum(), np.nanmax(err))
    else:  # FlashAttention: max error <= 2 x the error of the reference computed in the low precision
        pt = K.flash(q, k, v, dtype, causal, window, softcap)[0]
        K.TILE, tile = 1 << 30, K.TILE
        try:
            pt = K.flash(q, k, v, dtype, causal, window, softcap)[0]
        finally:
            K.TILE = tile
        pt_err = np.abs(K.to_f64(pt, dtype) - exact).max()
        assert np.nanmax(err) <= 2 * pt_err + 1e-6 and not np.isnan(err).any(), \
            "fa-2x: max err %g > 2 x %g" % (np.nanmax(err), pt_err)


def judge(o, lse, q, k, v, dtype, causal, window, softcap, **kw):
    if MODE == "attncheck":
        attncheck.assert_attention_close(q, k, v, o, lse, layout="bthd", dtype=dtype,
                                         causal="bottom-right" if causal else False, window=window,
                                         softcap=softcap, **kw)
    else:
        hand_check(o, lse, q, k, v, dtype, causal, window, softcap)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("values", ["randn", "large"])
@pytest.mark.parametrize("softcap", [0.0, 20.0])
@pytest.mark.parametrize("window", [None, (24, 0)])
@pytest.mark.parametrize("heads", [(4, 4), (4, 1)], ids=["mha", "gqa"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_flash_attn_output(dtype, causal, heads, window, softcap, values, backend):
    H, KVH = heads
    q, k, v = inputs(dtype, 1, 96, H, KVH, 32, values, seed=7)
    o, lse = run(backend, q, k, v, dtype, causal, window, softcap)
    judge(o, lse, q, k, v, dtype, causal, window, softcap)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if not b.startswith("torch")] or ["numpy-ref"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_flash_attn_varlen_output(dtype, causal, backend):
    seqlens = [37, 1, 64, 17]
    H, KVH, D = 4, 2, 32
    qs, ks, vs, os_, ls = [], [], [], [], []
    for n, T in enumerate(seqlens):
        q, k, v = inputs(dtype, 1, T, H, KVH, D, "randn", seed=11 + n)
        o, lse = run(backend, q, k, v, dtype, causal, None, 0.0)
        qs.append(q[0]), ks.append(k[0]), vs.append(v[0]), os_.append(o[0]), ls.append(lse[0])
    cat = np.concatenate
    q, k, v, o, lse = cat(qs), cat(ks), cat(vs), cat(os_), cat(ls, axis=1)
    cu = np.concatenate([[0], np.cumsum(seqlens)]).astype(np.int32)
    if MODE != "attncheck":
        for n in range(len(seqlens)):
            a, b = cu[n], cu[n + 1]
            hand_check(o[None, a:b], None, q[None, a:b], k[None, a:b], v[None, a:b], dtype, causal, None, 0.0)
        return
    attncheck.assert_attention_close(q, k, v, o, lse, dtype=dtype, causal="bottom-right" if causal else False,
                                     cu_seqlens_q=cu, cu_seqlens_k=cu)
