"""Dropout in the Python API (docs/dropout.md): dropout_p= with the kernel's keep-mask as booleans,
0/1 integers or FlashAttention's S_dmask; the output judged against that mask; the mask's own
verdict DROPOUT-MASK; bad arguments; the reproducer holding the mask; check_grad with dropout."""
import subprocess

import numpy as np
import pytest

import attncheck
import fa_kernels as K
from test_api import command

P = 0.17


def inputs(dtype="f32", B=1, T=48, H=2, KVH=2, D=16, seed=3):
    rng = np.random.default_rng(seed)
    q, k, v = (K.from_f(rng.standard_normal(s), dtype) for s in ((B, T, H, D), (B, T, KVH, D), (B, T, KVH, D)))
    keep = rng.random((B, H, T, T)) >= np.float32(P)
    return q, k, v, keep


def judge(q, k, v, o, mask, dtype="f32", p=P, **kw):
    return attncheck.check(q, k, v, o, causal=True, layout="bthd", dtype=dtype, dropout_p=p, dropout_mask=mask, **kw)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_mask_conventions(dtype):
    """Booleans, 0/1 bytes and FlashAttention's S_dmask (padded, dropped entries negative, -0.0 among
    them) name the same mask; the output judged against another mask fails."""
    q, k, v, keep = inputs(dtype)
    o, _, kept = K.reference(q, k, v, dtype, True, dropout=(P, keep))
    r = judge(q, k, v, o, keep, dtype)
    assert r.verdict == "PASS", r.line
    vis = np.tril(np.ones(keep.shape[2:], bool))
    assert "kept=%d/%d" % ((keep & vis).sum(), vis.sum() * keep.shape[1]) in r.line, r.line   # the visible entries
    assert judge(q, k, v, o, keep.astype(np.uint8), dtype).line == r.line
    fo, _, s_dmask = K.flash(q, k, v, dtype, True, dropout=(P, keep))
    assert np.signbit(s_dmask).any() and (s_dmask == 0).any()   # -0.0: dropped and invisible entries
    padded = np.pad(s_dmask, ((0, 0), (0, 0), (0, 16), (0, 80)), constant_values=-1.0)
    assert judge(q, k, v, fo, padded, dtype).verdict == "PASS"
    bad = judge(q, k, v, o, ~keep, dtype)
    assert bad.verdict == "FAIL" and bad.err_w > 1


def test_mask_verdict():
    """A mask repeated across heads, or of the wrong kept fraction, is judged DROPOUT-MASK even when
    the output agrees with it."""
    q, k, v, keep = inputs(H=4, KVH=4)
    rep = np.repeat(keep[:, :1], 4, axis=1)
    o = K.reference(q, k, v, "f32", True, dropout=(P, rep))[0]
    r = judge(q, k, v, o, rep)
    assert r.verdict == "FAIL" and not r.ok and r.kinds == ["DROPOUT-MASK"], r.line
    half = np.random.default_rng(9).random(keep.shape) >= 0.5
    o = K.reference(q, k, v, "f32", True, dropout=(P, half))[0]
    assert judge(q, k, v, o, half).kinds == ["DROPOUT-MASK"]


def test_bad_arguments():
    q, k, v, keep = inputs()
    o = K.reference(q, k, v, "f32", True)[0]
    with pytest.raises(ValueError, match="dropout_mask: required"):
        judge(q, k, v, o, None)
    with pytest.raises(ValueError, match="without dropout_p"):
        attncheck.check(q, k, v, o, causal=True, layout="bthd", dropout_mask=keep)
    with pytest.raises(ValueError, match="dropout_mask: shape"):
        judge(q, k, v, o, keep[:, :, :40])
    with pytest.raises(ValueError, match="0 .dropped. or 1"):
        judge(q, k, v, o, keep.astype(np.int32) * 2)
    for p in (1.0, -0.1, 0.99999999, "0.5"):   # 0.99999999 is 1 in binary32
        with pytest.raises(ValueError, match="dropout_p"):
            judge(q, k, v, o, keep, p=p)
    assert judge(q, k, v, o, None, p=0.0).verdict == "PASS"   # p = 0: nothing dropped


def test_reproducer_holds_the_mask(tmp_path):
    q, k, v, keep = inputs()
    o = K.reference(q, k, v, "f32", True, dropout=(P, keep))[0]
    with pytest.raises(AssertionError) as e:
        attncheck.assert_attention_close(q, k, v, o, causal=True, layout="bthd", dropout_p=P, dropout_mask=~keep,
                                         save_dir=str(tmp_path))
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and str(e.value).startswith("FAIL")
    out = subprocess.run([command(), "check", str(files[0])], capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout.split()[0] == "FAIL", out.stdout + out.stderr
    info = subprocess.run([command(), "info", str(files[0])], capture_output=True, text=True).stdout
    assert "dropout p 0.170000002" in info and "kept %d of" % (~keep & np.tril(np.ones((48, 48), bool))).sum() in info, info


def grads(q, k, v, do, keep, r, d_unscaled=False):
    """FlashAttention-2's dropout backward in float64 (B,T,H,D float32 in and out): dP = dO V^T times
    keep and r, D = sum P dP, dS = P (dP - D), dV = (P keep r)^T dO."""
    qh, kh, vh, doh = (x.transpose(0, 2, 1, 3).astype(np.float64) for x in (q, k, v, do))
    T, D = qh.shape[2], qh.shape[3]
    s = np.where(np.tril(np.ones((T, T), bool)), qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(D), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = doh @ vh.transpose(0, 1, 3, 2) * keep * r
    dd = (p * dp).sum(-1, keepdims=True) / (r if d_unscaled else 1)
    ds = p * (dp - dd)
    g = ds @ kh / np.sqrt(D), ds.transpose(0, 1, 3, 2) @ qh / np.sqrt(D), (p * keep * r).transpose(0, 1, 3, 2) @ doh
    return [x.transpose(0, 2, 1, 3).astype(np.float32) for x in g]


def test_check_grad():
    rng = np.random.default_rng(5)
    q, k, v, do = (rng.standard_normal((1, 24, 2, 8)).astype(np.float32) for _ in range(4))
    keep = rng.random((1, 2, 24, 24)) >= np.float32(P)
    r = 1 / (1 - np.float64(np.float32(P)))
    kw = dict(causal=True, layout="bthd", dropout_p=P, dropout_mask=keep)
    res = attncheck.check_grad(q, k, v, do, *grads(q, k, v, do, keep, r), **kw)
    assert res.ok and "grad dq" in res.line, res.line
    with pytest.raises(AssertionError, match="FAIL"):
        attncheck.assert_grad_close(q, k, v, do, *grads(q, k, v, do, keep, r, d_unscaled=True), **kw)
