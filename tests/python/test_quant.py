"""Quantized q, k, v in the Python API (attncheck.Quantized, docs/python.md "Quantized caches"):
every format family, in the B,T,H,D and B,H,T,D layouts, varlen batches and paged caches, as codes
and scales or as ggml's block bytes. Each case comes from `attncheck gen` and its exact output from
`attncheck oracle`; the API must PASS that output, FAIL it perturbed, and write a reproducer whose
codes and scales are the generated ones byte for byte (so the library read the arrays as given)."""
import json
import os
import shutil
import subprocess
import zipfile

import numpy as np
import pytest

import attncheck


def command():
    b = os.environ.get("ATTNCHECK_BIN") or shutil.which("attncheck")
    if not b:
        pytest.skip("no attncheck command (ATTNCHECK_BIN)")
    return b


def generate(tmp_path, name, *args):
    """The members and meta.json of a generated case with its exact output (o_exact_*, lse_exact_f32)."""
    c, o = tmp_path / (name + ".npz"), tmp_path / (name + "-oracle.npz")
    subprocess.run([command(), "gen", "-o", str(c)] + list(args), check=True, capture_output=True)
    subprocess.run([command(), "oracle", str(c), "-o", str(o), "-q", "--no-cache"], check=True, capture_output=True)
    z = np.load(str(o))
    return {k: z[k] for k in z.files}, json.loads(zipfile.ZipFile(str(o)).read("meta.json"))


AUX = {"q4_1": "mins", "q5_1": "mins", "int8": "zeros", "int4": "zeros", "nvfp4": "tensor_scale"}
MEMBER = {"mins": "_mins", "zeros": "_zeros", "tensor_scale": "_tensor_scale"}


def to_bthd(a, gran):
    """A [B,H,T,...] member (codes, or scales by granularity) in the B,T,H,D order."""
    if gran in ("block",) or a.ndim == 4:
        return np.ascontiguousarray(a.transpose(0, 2, 1, 3))
    if gran == "token":
        return np.ascontiguousarray(a.transpose(0, 2, 1))
    return a   # head (B, H), channel (B, H, D), tensor (1,)


def quantized(m, meta, x, layout):
    spec = meta["quant"][x]
    fmt, gran = spec["format"], spec["granularity"]
    conv = (lambda a, g: to_bthd(a, g)) if layout == "bthd" else (lambda a, g: a)
    kw = {}
    if fmt in AUX:
        name = AUX[fmt]
        a = m[x + MEMBER[name]]
        kw[name] = a if name == "tensor_scale" else conv(a, gran)
    return attncheck.Quantized(fmt, conv(m[x + "_codes"], "codes"), conv(m[x + "_scales"], gran), granularity=gran,
                               **kw)


def saved_members(path):
    z = np.load(path)
    return {k: z[k] for k in z.files}


def same_quant_members(m, saved, xs):
    for x in xs:
        for suf in ("_codes", "_scales", "_mins", "_zeros", "_tensor_scale"):
            if x + suf in m:
                assert x + suf in saved, x + suf
                assert saved[x + suf].dtype == m[x + suf].dtype and saved[x + suf].shape == m[x + suf].shape
                assert saved[x + suf].tobytes() == m[x + suf].tobytes(), x + suf


FORMS = ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "e4m3fn:head", "e5m2:token", "e4m3fnuz:channel",
         "int8", "int4:channel", "nvfp4", "mxfp4"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("layout", ["bhtd", "bthd"])
def test_every_format_dense(tmp_path, form, layout):
    m, meta = generate(tmp_path, "c", "--tq", "9", "--tk", "21", "--dk", "32", "--dv", "64", "--heads", "4",
                       "--kv-heads", "2", "--batch", "2", "--mask", "causal-bottom-right", "--kv-format", form,
                       "--seed", "5")
    q, o, lse = m["q"], m["o_exact_f32"], m["lse_exact_f32"]
    if layout == "bthd":
        q, o = to_bthd(q, "codes"), to_bthd(o, "codes")
    k, v = quantized(m, meta, "k", layout), quantized(m, meta, "v", layout)
    r = attncheck.check(q, k, v, o, lse, layout=layout, causal="bottom-right", precision="fp32")
    assert r.verdict == "PASS" and r.err_w < 0.1, r.explain()
    bad = o.copy()
    bad[1, 3, 2, 7] += 0.05 * (abs(bad[1, 3, 2, 7]) + 1)
    r = attncheck.check(q, k, v, bad, lse, layout=layout, causal="bottom-right", precision="fp32")
    assert r.verdict == "FAIL", r.explain()
    assert r.worst.index == ((1, 2, 3, 7) if layout == "bthd" else (1, 3, 2, 7)), r.worst   # attncheck's (b, h, i, d)
    assert r.worst.user_index == (1, 3, 2, 7), r.worst
    path = r.save(str(tmp_path / "repro.npz"))
    same_quant_members(m, saved_members(path), "kv")
    out = subprocess.run([command(), "check", path], capture_output=True, text=True)
    assert out.returncode == 1 and r.line.split()[3:] == out.stdout.splitlines()[0].split()[3:], (r.line, out.stdout)


def ggml_blocks(codes, d, fmt):
    """ggml's block bytes of [..., D] codes and [..., D/32] f16 scales, packed here from ggml-common.h's
    struct layouts: q8_0 {d; qs[32]}, q4_0 and iq4_nl {d; qs[16]: element j low nibble, j + 16 high}."""
    c = codes.reshape(codes.shape[:-1] + (-1, 32))
    dd = np.ascontiguousarray(d).view(np.uint8).reshape(d.shape + (2,))
    if fmt == "q8_0":
        qs = c.view(np.uint8)
    else:
        qs = (c[..., :16] | (c[..., 16:] << 4)).astype(np.uint8)
    b = np.concatenate([dd, qs], axis=-1)   # [..., D/32, bytes]
    return np.ascontiguousarray(b.reshape(b.shape[:-2] + (-1,)))


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0", "iq4_nl"])
@pytest.mark.parametrize("layout", ["bhtd", "bthd"])
def test_ggml_block_bytes_read_as_their_codes(tmp_path, fmt, layout):
    m, meta = generate(tmp_path, "c", "--tq", "6", "--tk", "40", "--dk", "64", "--heads", "2", "--kv-format", fmt,
                       "--seed", "8")
    q, o = m["q"], m["o_exact_f32"]
    conv = (lambda a: to_bthd(a, "codes")) if layout == "bthd" else (lambda a: a)
    blocks = {x: conv(ggml_blocks(m[x + "_codes"], m[x + "_scales"], fmt)) for x in "kv"}
    k, v = (attncheck.Quantized(fmt, ggml=blocks[x]) for x in "kv")
    q, o = conv(q), conv(o)
    bad = o.copy()
    bad.reshape(-1)[17] += 0.25
    r1 = attncheck.check(q, k, v, bad, layout=layout)
    r2 = attncheck.check(q, quantized(m, meta, "k", layout), quantized(m, meta, "v", layout), bad, layout=layout)
    assert r1.verdict == "FAIL" and r1.line == r2.line, (r1.line, r2.line)
    assert attncheck.check(q, k, v, o, layout=layout).ok
    # (..., D/32, bytes) is the same tensor
    k3 = attncheck.Quantized(fmt, ggml=blocks["k"].reshape(blocks["k"].shape[:-1] + (-1, blocks["k"].shape[-1] // 2)))
    assert attncheck.check(q, k3, v, bad, layout=layout).line == r1.line


def test_paged_fp8_cache_with_per_token_scales(tmp_path):
    ps = 8
    m, meta = generate(tmp_path, "p", "--seqlens-q", "1,3,2", "--cache-seqlens", "13,30,8", "--page-size", str(ps),
                       "--heads", "4", "--kv-heads", "2", "--dk", "32", "--kv-format", "e4m3fn:token", "--mask",
                       "causal-bottom-right", "--spare-pages", "2", "--seed", "4")
    H = m["q"].shape[1]
    q = np.ascontiguousarray(m["q"][0].transpose(1, 0, 2))        # (total_q, H, D)
    o = np.ascontiguousarray(m["o_exact_f32"][0].transpose(1, 0, 2))
    lse = m["lse_exact_f32"][0]                                      # (H, total_q)
    slots = m["k_codes"].shape[2]
    kv = {}
    for x in "kv":
        c = m[x + "_codes"][0].transpose(1, 0, 2)                    # (slots, KVH, D)
        c = np.ascontiguousarray(c.reshape(slots // ps, ps, c.shape[1], c.shape[2]))
        s = np.ascontiguousarray(m[x + "_scales"][0].T.reshape(slots // ps, ps, -1))
        kv[x] = attncheck.Quantized("e4m3fn", c, s, granularity="token")
    args = dict(cu_seqlens_q=m["cu_seqlens_q"], block_table=m["block_table"], cache_seqlens=m["cache_seqlens"],
                causal="bottom-right")
    r = attncheck.check(q, kv["k"], kv["v"], o, lse, **args)
    assert r.verdict == "PASS", r.explain()
    bad = o.copy()
    bad[4, H - 1, 5] += 0.1
    r = attncheck.check(q, kv["k"], kv["v"], bad, lse, **args)
    assert r.verdict == "FAIL", r.explain()
    path = r.save(str(tmp_path / "prepro.npz"))
    same_quant_members(m, saved_members(path), "kv")
    # the wrong scale shape is refused, naming the argument
    s = kv["k"].scales
    with pytest.raises(ValueError, match=r"k\.scales: shape"):
        attncheck.check(q, attncheck.Quantized("e4m3fn", kv["k"].codes, s[:, :, :1], granularity="token"), kv["v"],
                        o, **args)


def test_varlen_int8_per_token(tmp_path):
    m, meta = generate(tmp_path, "vl", "--seqlens-q", "5,0,7", "--seqlens-k", "9,4,12", "--heads", "2", "--dk", "16",
                       "--kv-format", "int8:token", "--mask", "causal-bottom-right", "--seed", "6")
    q = np.ascontiguousarray(m["q"][0].transpose(1, 0, 2))
    o = np.ascontiguousarray(m["o_exact_f32"][0].transpose(1, 0, 2))
    kv = {}
    for x in "kv":
        c = np.ascontiguousarray(m[x + "_codes"][0].transpose(1, 0, 2))   # (total_k, KVH, D)
        s, z = (np.ascontiguousarray(m[x + a][0].T) for a in ("_scales", "_zeros"))   # (total_k, KVH)
        kv[x] = attncheck.Quantized("int8", c, s, zeros=z, granularity="token")
    args = dict(cu_seqlens_q=m["cu_seqlens_q"], cu_seqlens_k=m["cu_seqlens_k"], causal="bottom-right")
    assert attncheck.check(q, kv["k"], kv["v"], o, **args).ok
    bad = o.copy()
    bad[-1, 1, 0] = -bad[-1, 1, 0] - 0.5
    r = attncheck.check(q, kv["k"], kv["v"], bad, **args)
    assert r.verdict == "FAIL", r.explain()
    same_quant_members(m, saved_members(r.save(str(tmp_path / "vrepro.npz"))), "kv")


def test_fp8_query_and_cache(tmp_path):
    m, meta = generate(tmp_path, "q8", "--tq", "12", "--tk", "12", "--dk", "32", "--heads", "2", "--kv-format",
                       "e4m3fn:head", "--q-format", "e4m3fn:head", "--seed", "2")
    q, k, v = (quantized(m, meta, x, "bhtd") for x in "qkv")
    o = m["o_exact_f32"]
    assert attncheck.check(q, k, v, o, layout="bhtd").ok
    assert attncheck.check(q, k, v, o * 1.01, layout="bhtd").verdict == "FAIL"


def test_bad_quantized_input_names_the_argument(tmp_path):
    m, meta = generate(tmp_path, "b", "--tq", "4", "--tk", "8", "--dk", "32", "--kv-format", "q4_0", "--seed", "1")
    q, o = m["q"], m["o_exact_f32"]
    k, v = quantized(m, meta, "k", "bhtd"), quantized(m, meta, "v", "bhtd")
    with pytest.raises(ValueError, match="unknown quantized format"):
        attncheck.Quantized("q3_k", m["k_codes"], m["k_scales"])
    with pytest.raises(ValueError, match="granularity"):
        attncheck.Quantized("q4_0", m["k_codes"], m["k_scales"], granularity="token")
    with pytest.raises(ValueError, match="zeros is required"):
        attncheck.Quantized("int8", m["k_codes"], m["k_scales"])
    with pytest.raises(TypeError, match="k.scales: float16"):
        attncheck.check(q, attncheck.Quantized("q4_0", m["k_codes"], m["k_scales"].astype(np.float32)), v, o)
    bad = m["k_codes"].copy()
    bad[0, 0, 3, 5] = 16
    with pytest.raises(attncheck.AttncheckError, match="code 16"):
        attncheck.check(q, attncheck.Quantized("q4_0", bad, m["k_scales"]), v, o)
    with pytest.raises(TypeError, match="k: one-byte codes"):
        attncheck.check(q, attncheck.Quantized("q4_0", m["k_codes"].astype(np.int32), m["k_scales"]), v, o)
    with pytest.raises(ValueError, match="no backward"):
        attncheck.check_grad(q, k, v, o, q, q, q)


def test_torch_fp8_codes(tmp_path):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("no float8_e4m3fn in this torch")
    m, meta = generate(tmp_path, "t", "--tq", "8", "--tk", "16", "--dk", "16", "--heads", "2", "--kv-format",
                       "e4m3fn:token", "--seed", "3")
    kv = [attncheck.Quantized("e4m3fn", torch.from_numpy(m[x + "_codes"]).view(torch.float8_e4m3fn),
                              torch.from_numpy(m[x + "_scales"]), granularity="token") for x in "kv"]
    assert attncheck.check(torch.from_numpy(m["q"]), kv[0], kv[1], torch.from_numpy(m["o_exact_f32"]),
                           layout="bhtd").ok


def test_ml_dtypes_fp8_codes(tmp_path):
    ml = pytest.importorskip("ml_dtypes")
    m, meta = generate(tmp_path, "ml", "--tq", "8", "--tk", "16", "--dk", "16", "--heads", "2", "--kv-format",
                       "e5m2:token", "--seed", "3")
    kv = [attncheck.Quantized("e5m2", m[x + "_codes"].view(ml.float8_e5m2), m[x + "_scales"], granularity="token")
          for x in "kv"]
    assert attncheck.check(m["q"], kv[0], kv[1], m["o_exact_f32"], layout="bhtd").ok
    assert attncheck.check(m["q"], kv[0], kv[1], m["o_exact_f32"] * 1.01, layout="bhtd").verdict == "FAIL"


LAYOUT_FORMS = [("int4:group:16:packed=low:zero=f16", "group:16", "low"), ("int2:tile:3x32:packed=high", "tile:3x32", "high"),
                ("uint8:channel:4:zero=f32:scale=f16", "channel:4", None), ("e5m2:group:32:scale=f16", "group:32", None)]


@pytest.mark.parametrize("form,gran,packed", LAYOUT_FORMS)
def test_quantized_layouts(tmp_path, form, gran, packed):
    """Group, tile and channel-group scales, scale and zero-point dtypes and packed codes (the case file's
    members as they are, B,H,T,D): PASS the exact output, FAIL it perturbed, the reproducer's members
    byte for byte the generated ones."""
    m, meta = generate(tmp_path, "l", "--tq", "9", "--tk", "21", "--dk", "32", "--heads", "2", "--mask", "causal",
                       "--kv-format", form, "--seed", "6")
    spec = meta["quant"]["k"]
    kw = dict(granularity=gran, packed=packed, scale_dtype=spec.get("scale_dtype"), zero_dtype=spec.get("zero_dtype"))
    fmt = spec["format"]

    def q_of(x):
        z = {"zeros": m[x + "_zeros"]} if x + "_zeros" in m else {}
        return attncheck.Quantized(fmt, m[x + "_codes"], m[x + "_scales"], **z, **kw)
    q, o, lse = m["q"], m["o_exact_f32"], m["lse_exact_f32"]
    r = attncheck.check(q, q_of("k"), q_of("v"), o, lse, layout="bhtd", causal="top-left", precision="fp32")
    assert r.verdict == "PASS", r.explain()
    bad = o.copy()
    bad[0, 1, 4, 3] += 0.05 * (abs(bad[0, 1, 4, 3]) + 1)
    r = attncheck.check(q, q_of("k"), q_of("v"), bad, lse, layout="bhtd", causal="top-left", precision="fp32")
    assert r.verdict == "FAIL", r.explain()
    same_quant_members(m, saved_members(r.save(str(tmp_path / "repro.npz"))), "kv")


def test_worker_stores_its_own_cache(tmp_path):
    """A worker that quantizes its own cache (python -m attncheck.worker numpy: protocol.store_quantize, the
    members it stored returned beside o) PASSes store cases, its store judged exactly; rounding ties away
    where nearest-even is declared is STORE-FAIL."""
    import sys
    w = "exec-persistent:%s -m attncheck.worker numpy" % sys.executable
    for form in ("e4m3fn:token:store=absmax-even-f32-sat", "int4:group:16:zero=f16:packed=low:store=minmax-even-f32-sat"):
        c = tmp_path / "s.npz"
        subprocess.run([command(), "gen", "-o", str(c), "--tq", "4", "--tk", "11", "--dk", "32", "--kv-format", form,
                        "--kv-adversary", "ties", "--seed", "2"], check=True, capture_output=True)
        out = subprocess.run([command(), "check", "--kernel", w, str(c)], capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.startswith("PASS"), out.stdout + out.stderr
        env = dict(os.environ, ATTNCHECK_WORKER_MUTATE="store-round-away")
        out = subprocess.run([command(), "check", "--kernel", w, str(c)], capture_output=True, text=True, env=env)
        assert out.returncode == 1 and "STORE-FAIL" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("form", ["q4_1:store=ggml", "iq4_nl:store=ggml", "mxfp4:packed=high:store=ggml",
                                  "int8:group:32:store=absmax-even-f32-sat", "e4m3fnuz:token:store=absmax-even-f32-sat"])
def test_worker_store_quantize_matches_the_reference(tmp_path, form):
    """protocol.store_quantize writes what src/core/quant_ref.c's quantizer does for ggml's other formats
    and mxfp4, int8's absmax and e4m3fnuz: the store is judged exactly, so one differing code STORE-FAILs."""
    import sys
    w = "exec-persistent:%s -m attncheck.worker numpy" % sys.executable
    c = tmp_path / "s.npz"
    subprocess.run([command(), "gen", "-o", str(c), "--tq", "3", "--tk", "9", "--dk", "64", "--kv-format", form,
                    "--kv-adversary", "outlier", "--seed", "4"], check=True, capture_output=True)
    out = subprocess.run([command(), "check", "--kernel", w, str(c)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("PASS"), out.stdout + out.stderr
