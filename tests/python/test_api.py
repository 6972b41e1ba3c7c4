"""attncheck's Python API: verdicts equal to the command's, layouts, dtypes, views, bad input
(an exception naming the argument), reproducers that `attncheck check` replays, gradients,
the pytest fixture and the exec worker module."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import attncheck
import fa_kernels as K


def case(dtype="f32", T=48, H=2, KVH=2, D=16, seed=3, causal=True):
    rng = np.random.default_rng(seed)
    q, k, v = (K.from_f(rng.standard_normal(s), dtype) for s in ((1, T, H, D), (1, T, KVH, D), (1, T, KVH, D)))
    o, lse = K.reference(q, k, v, dtype, causal)
    return q, k, v, o, lse


def command():
    b = os.environ.get("ATTNCHECK_BIN") or shutil.which("attncheck")
    if not b:
        pytest.skip("no attncheck command (ATTNCHECK_BIN)")
    return b


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_correct_passes_and_wrong_fails(dtype):
    q, k, v, o, lse = case(dtype)
    r = attncheck.check(q, k, v, o, lse, causal=True, layout="bthd", dtype=dtype)
    assert r.verdict == "PASS" and r.ok and 0 <= r.err_w <= 1 and r.worst is not None
    bad = o.copy()
    bad[0, 7, 1, 3] = K.from_f(np.array([K.to_f64(o[0:1, 7, 1, 3], dtype)[0] + 0.25]), dtype)[0]
    r = attncheck.check(q, k, v, bad, lse, causal=True, layout="bthd", dtype=dtype)
    assert r.verdict == "FAIL" and "FAIL" in r.kinds and r.err_w > 1
    assert r.worst.tensor == "o" and r.worst.index == (0, 1, 7, 3) and r.worst.user_index == (0, 7, 1, 3)
    assert r.line.startswith("FAIL") and "worst o[0,1,7,3]" in r.explain()


def test_layouts_and_views_agree():
    q, k, v, o, lse = case()
    a = attncheck.check(q, k, v, o, lse, causal=True, layout="bthd")
    t = lambda x: x.transpose(0, 2, 1, 3)  # B,H,T,D views of the same memory
    b = attncheck.check(t(q), t(k), t(v), t(o), lse, causal=True, layout="bhtd")
    c = attncheck.check(*(np.ascontiguousarray(t(x)) for x in (q, k, v, o)), lse, causal=True, layout="bhtd")
    assert a.line == b.line == c.line
    with pytest.raises(ValueError, match="layout"):
        attncheck.check(q, k, v, o, lse, causal=True)  # both readings fit: never guessed
    rng = np.random.default_rng(1)
    q2 = rng.standard_normal((1, 40, 4, 16)).astype(np.float32)
    k2, v2 = (rng.standard_normal((1, 24, 1, 16)).astype(np.float32) for _ in range(2))
    o2, l2 = K.reference(q2, k2, v2, "f32")
    assert attncheck.check(q2, k2, v2, o2, l2).ok  # only B,T,H,D fits (B,H,T,D: 40 heads over 24 kv heads)


def test_bad_input_names_the_argument():
    q, k, v, o, lse = case()
    with pytest.raises(ValueError, match="^o: shape"):
        attncheck.check(q, k, v, o[:, :-1], lse, causal=True, layout="bthd")
    with pytest.raises(ValueError, match="^lse: shape"):
        attncheck.check(q, k, v, o, lse[:, :1], causal=True, layout="bthd")
    with pytest.raises(TypeError, match="^k: "):
        attncheck.check(q, k.astype(np.int32), v, o, lse, causal=True, layout="bthd")
    with pytest.raises(TypeError, match="^v: unsigned"):
        attncheck.check(q, k, v.view(np.uint32), o, lse, causal=True, layout="bthd")
    with pytest.raises(TypeError, match="^q: expected a numpy array"):
        attncheck.check([1.0], k, v, o, lse, layout="bthd")
    with pytest.raises(ValueError, match="^causal"):
        attncheck.check(q, k, v, o, lse, causal="diagonal", layout="bthd")
    with pytest.raises(ValueError, match="^sinks: shape"):
        attncheck.check(q, k, v, o, lse, layout="bthd", sinks=np.zeros(5, np.float32))
    with pytest.raises(attncheck.AttncheckError, match="precision"):
        attncheck.check(q, k, v, o, lse, causal=True, layout="bthd", precision="no-such-class")
    with pytest.raises(attncheck.AttncheckError, match="rows"):
        attncheck.check(q, k, v, o, lse, causal=True, layout="bthd", rows=[10**6])
    with pytest.raises(TypeError, match="unexpected keyword"):
        attncheck.check(q, k, v, o, lse, casual=True)


def test_negative_strides_are_read_as_copies():
    q, k, v, o, lse = case(causal=False)
    r = attncheck.check(q[:, ::-1][:, ::-1], k, v, o, lse, layout="bthd")
    assert r.ok


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    q, k, v, o, lse = case("bf16")
    tb = lambda x: torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    r = attncheck.check(tb(q), tb(k), tb(v), tb(o), torch.from_numpy(lse), causal=True, layout="bthd")
    assert r.ok and "bf16" in r.line
    with pytest.raises(ValueError, match="^q: a tensor on device 'meta'"):
        attncheck.check(tb(q).to("meta"), tb(k), tb(v), tb(o), layout="bthd")
    with pytest.raises(TypeError, match="^lse: float32"):
        attncheck.check(tb(q), tb(k), tb(v), tb(o), tb(o)[:, 0], causal=True, layout="bthd")


def test_same_verdict_as_the_command_and_replay(tmp_path):
    q, k, v, o, lse = case()
    bad = o.copy()
    bad[0, 3, 0, 0] += 1e-3
    with pytest.raises(AssertionError) as e:
        attncheck.assert_attention_close(q, k, v, bad, lse, causal=True, layout="bthd", save_dir=str(tmp_path))
    msg = str(e.value)
    assert msg.startswith("FAIL") and "worst o[0,0,3,0]" in msg and "attncheck check " in msg
    files = list(tmp_path.iterdir())
    assert len(files) == 1
    out = subprocess.run([command(), "check", str(files[0])], capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    line = msg.splitlines()[0].split()
    got = out.stdout.splitlines()[0].split()
    assert got[0] == "FAIL" and got[3:] == line[3:]  # same kinds, err/W, err/E, ulps, bad, rows, budget


def test_check_grad():
    rng = np.random.default_rng(5)
    q, k, v, do = (rng.standard_normal(s).astype(np.float32) for s in ((1, 24, 2, 8), (1, 24, 2, 8),
                                                                         (1, 24, 2, 8), (1, 24, 2, 8)))
    qh, kh, vh, doh = (x.transpose(0, 2, 1, 3).astype(np.float64) for x in (q, k, v, do))
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(8)
    s = np.where(np.tril(np.ones((24, 24), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = doh @ vh.transpose(0, 1, 3, 2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    dq, dk, dv = ds @ kh / np.sqrt(8), ds.transpose(0, 1, 3, 2) @ qh / np.sqrt(8), p.transpose(0, 1, 3, 2) @ doh
    g = [x.transpose(0, 2, 1, 3).astype(np.float32) for x in (dq, dk, dv)]
    r = attncheck.check_grad(q, k, v, do, *g, causal=True, layout="bthd")
    assert r.ok and "grad dq" in r.line
    g[1] = g[1] * 1.01
    with pytest.raises(AssertionError, match="FAIL"):
        attncheck.assert_grad_close(q, k, v, do, *g, causal=True, layout="bthd")


def test_fixture(attncheck_assert):
    q, k, v, o, lse = case()
    r = attncheck_assert(q, k, v, o, lse, causal=True, layout="bthd")
    assert r.ok and "test_fixture" in r.line


def test_worker_module(tmp_path):
    b = command()
    c = str(tmp_path / "c.npz")
    subprocess.run([b, "gen", "-o", c, "--dtype", "bf16", "--t", "16", "--dk", "8", "--seed", "2"], check=True,
                   capture_output=True)
    k = "exec-persistent:%s -m attncheck.worker numpy --dtype bf16" % sys.executable
    out = subprocess.run([b, "check", "--kernel", k, c], capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0 and out.stdout.startswith("PASS"), out.stdout + out.stderr


def test_torch_worker_says_cpu(tmp_path):
    """python -m attncheck.worker torch without --device: on a machine without a GPU (or without
    PyTorch) its declaration's note says where it runs."""
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a CUDA device is present: the worker runs there without a note")
    except ImportError:
        pass
    out = subprocess.run([sys.executable, "-m", "attncheck.worker", "torch"], input="hello 1\n",
                         capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
    line = out.stdout.splitlines()[0] if out.stdout else ""
    assert line.startswith("attncheck-worker 1 "), out.stdout + out.stderr
    note = json.loads(line.split(" ", 2)[2]).get("note", "")
    assert "running on the CPU" in note or "PyTorch is not installed" in note, line


def variant_reference(q, k, v, bias=None, mask=None, slopes=None, sinks=None):
    """float64 attention of B,T,H,D float32 inputs with an additive bias [1|B,1|H,tq,tk], a boolean
    mask (True = visible), ALiBi slopes [H] (bottom-right distance) and sinks [H]."""
    qh, kh, vh = (x.transpose(0, 2, 1, 3).astype(np.float64) for x in (q, k, v))
    tq, tk = qh.shape[2], kh.shape[2]
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if slopes is not None:
        dist = np.abs(np.arange(tq)[:, None] + tk - tq - np.arange(tk)[None, :])
        s = s - slopes.astype(np.float64)[None, :, None, None] * dist
    if bias is not None:
        s = s + bias.astype(np.float64)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True)
    if sinks is not None:
        m = np.maximum(m, sinks.astype(np.float64)[None, :, None, None])
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    if sinks is not None:
        l = l + np.exp(sinks.astype(np.float64)[None, :, None, None] - m)
    o = (p / l) @ vh
    return o.transpose(0, 2, 1, 3).astype(np.float32), (np.log(l[..., 0]) + m[..., 0]).astype(np.float32)


def test_variants_follow_the_documented_formula():
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 20, 2, 8)).astype(np.float32) for _ in range(3))
    bias = rng.standard_normal((1, 2, 20, 20)).astype(np.float32)
    mask = rng.random((2, 1, 20, 20)) < 0.7
    slopes = np.array([0.5, 0.125], np.float32)
    sinks = np.array([0.3, -1.0], np.float32)
    o, lse = variant_reference(q, k, v, bias, mask, slopes, sinks)
    kw = dict(layout="bthd", bias=bias, mask=mask, alibi_slopes=slopes, sinks=sinks)
    r = attncheck.check(q, k, v, o, lse, **kw)
    assert r.ok and r.verdict == "PASS", r.explain()
    o2, _ = variant_reference(q, k, v, bias, mask, -slopes, sinks)  # ALiBi of the wrong sign
    assert attncheck.check(q, k, v, o2, None, **kw).verdict == "FAIL"
    o3, _ = variant_reference(q, k, v, bias, mask, slopes, None)  # the sinks forgotten
    assert attncheck.check(q, k, v, o3, None, **kw).verdict == "FAIL"


def test_paged_kv_cache():
    rng = np.random.default_rng(9)
    lens, ps, H, KVH, D = [13, 30], 8, 2, 1, 8
    qs, pages, table, os_ = [], [], [], []
    for b, n in enumerate(lens):
        q = rng.standard_normal((1, 1, H, D)).astype(np.float32)   # one decode query per sequence
        k, v = (rng.standard_normal((1, n, KVH, D)).astype(np.float32) for _ in range(2))
        o, _ = variant_reference(q, k, v)
        qs.append(q[0]), os_.append(o[0])
        row = []
        for p0 in range(0, n, ps):
            kp, vp = np.zeros((ps, KVH, D), np.float32), np.zeros((ps, KVH, D), np.float32)
            kp[:n - p0] = k[0, p0:p0 + ps]
            vp[:n - p0] = v[0, p0:p0 + ps]
            row.append(len(pages))
            pages.append((kp, vp))
        table.append(row)
    order = rng.permutation(len(pages))   # pages in any order
    inv = np.argsort(order)
    kc = np.stack([pages[i][0] for i in order])
    vc = np.stack([pages[i][1] for i in order])
    bt = np.full((len(lens), max(len(r) for r in table)), -1, np.int32)
    for b, r in enumerate(table):
        bt[b, :len(r)] = inv[r]
    cu = np.array([0, 1, 2], np.int32)
    r = attncheck.check(np.concatenate(qs), kc, vc, np.concatenate(os_), cu_seqlens_q=cu, block_table=bt,
                        cache_seqlens=np.array(lens, np.int32))
    assert r.ok, r.explain()
    bad = np.concatenate(os_)
    bad[1, 0, 3] += 0.01
    assert attncheck.check(np.concatenate(qs), kc, vc, bad, cu_seqlens_q=cu, block_table=bt,
                           cache_seqlens=np.array(lens, np.int32)).verdict == "FAIL"


def test_fp8_inputs_with_a_bf16_output():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("no float8_e4m3fn in this torch")
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 16, 2, 8, generator=g).to(torch.float8_e4m3fn) for _ in range(3))
    f = lambda x: x.double().transpose(1, 2)
    s = f(q) @ f(k).transpose(-1, -2) / 8 ** 0.5
    o = (torch.softmax(s, -1) @ f(v)).transpose(1, 2).to(torch.bfloat16)
    r = attncheck.check(q, k, v, o, layout="bthd")
    assert r.ok, r.explain()
    # the e4m3 class keeps P in e4m3 (2^-4 relative), so its bound is wide: a factor of 2 is beyond it
    assert attncheck.check(q, k, v, (o.float() * 2).to(torch.bfloat16), layout="bthd").verdict == "FAIL"


def test_empty_rows_mean_v():
    # JAX's and MLX's convention: a row with no visible key (bottom-right causal, tq > tk) is the
    # mean of V over every key; judged by empty_rows="mean-v" against its exact value
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, 2, 7, 16)).astype(np.float32)
    k, v = (rng.standard_normal((1, 2, 3, 16)).astype(np.float32) for _ in range(2))
    s = q.astype("f8") @ k.astype("f8").swapaxes(-1, -2) / 4
    s = np.where(np.arange(3)[None, :] <= np.arange(7)[:, None] - 4, s, -np.inf)
    empty = np.isinf(s).all(-1)
    p = np.exp(s - np.where(empty, 0, s.max(-1))[..., None])
    o = np.where(empty[..., None], v.astype("f8").mean(2, keepdims=True), (p / p.sum(-1, keepdims=True)) @ v)
    o = o.astype(np.float32)
    r = attncheck.check(q, k, v, o, causal="bottom-right", layout="bhtd", empty_rows="mean-v")
    assert r.ok, r.explain()
    assert attncheck.check(q, k, v, o, causal="bottom-right", layout="bhtd").verdict == "FAIL"   # zero, the default
    z = np.where(empty[..., None], 0, o).astype(np.float32)
    assert attncheck.check(q, k, v, z, causal="bottom-right", layout="bhtd", empty_rows="mean-v").verdict == "FAIL"
