"""A FlashAttention-style test module (the grid of flash-attn's test_flash_attn_output:
dtypes, causal, GQA, sliding window, softcap, dropout, varlen, and longer seqlen_q/seqlen_k pairs)
written on attncheck.assert_attention_close, run against correct kernels: the float64 numpy
reference, a FlashAttention-2-style numpy kernel, and PyTorch's CPU SDPA backends (math, flash;
skipped without torch).

ATTNCHECK_FA_ASSERT=<rule> swaps in a hand tolerance of hand_rules.py (assert_close, fa-2x,
tol-1e-3, tol-2e-2, nmse-5e-4) and ATTNCHECK_FA_KERNEL=<defect> runs a defect of fa_kernels.py
instead; tests/python/defect_table.py judges every case of grid() under every assertion
(docs/python.md)."""
import itertools
import os

import numpy as np
import pytest

import attncheck
import fa_kernels as K
import hand_rules

MODE = os.environ.get("ATTNCHECK_FA_ASSERT", "attncheck")
DEFECT = os.environ.get("ATTNCHECK_FA_KERNEL")
BACKENDS = [DEFECT] if DEFECT else ["numpy-ref", "numpy-flash", "torch-math", "torch-flash"]

# The grid (shared with defect_table.py through grid()).
DTYPES = ["f32", "f16", "bf16"]
CAUSAL = [False, True]
HEADS = [(4, 4), (4, 1)]
HEAD_IDS = {(4, 4): "mha", (4, 1): "gqa", (4, 2): "gqa2"}
WINDOWS = [None, (24, 0)]
WINDOW_IDS = {None: "full", (24, 0): "window24"}
SOFTCAPS = [0.0, 20.0]
DROPOUTS = [0.0, 0.17]   # flash-attn's; with dropout it skips softcap, as flash-attn does
VALUES = ["randn", "large"]
VARLEN_SEQLENS = [37, 1, 64, 17]
LONG_SEQLENS = [(1024, 1024), (64, 1024), (64, 4096)]  # (seqlen_q, seqlen_k): a prefill, chunks after a cache
LONG_VALUES = ["randn", "flat", "near-1e4"]
LONG_SEEDS = [5, 6, 7, 8]  # four draws each: whether a defect shows, and how much, depends on the draw
# pytest takes the first draw (all four with ATTNCHECK_FA_DRAWS=all); defect_table.py judges all four.
PYTEST_SEEDS = LONG_SEEDS if os.environ.get("ATTNCHECK_FA_DRAWS") == "all" else LONG_SEEDS[:1]


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def inputs(dtype, B, T, H, KVH, D, values, seed, tk=None):
    """q (B, T, H, D), k, v (B, tk, KVH, D) in the dtype. values: randn; large (logits around
    -1.4e4, d = 32: a finite -1e4 sentinel outweighs every visible key); near-1e4 (logits around
    -1e4, spread ~90 in a row: the sentinel ties with the visible keys of some rows); flat (q, k
    of variance 0.1: logits of std 0.1, a near-uniform softmax whose running maximum grows little)."""
    rng = np.random.default_rng(seed)
    tk = T if tk is None else tk
    q = rng.standard_normal((B, T, H, D))
    k = rng.standard_normal((B, tk, KVH, D))
    v = rng.standard_normal((B, tk, KVH, D))
    if values == "large":
        q = 50 * (1 + 0.05 * q)
        k = -50 * (1 + 0.05 * k)
    elif values == "near-1e4":
        a = np.sqrt(1e4 / np.sqrt(D))
        q = a * (1 + 0.05 * q)
        k = -a * (1 + 0.05 * k)
    elif values == "flat":
        q, k = q * np.sqrt(0.1), k * np.sqrt(0.1)
    return tuple(K.from_f(x, dtype) for x in (q, k, v))


def run_kernel(backend, q, k, v, dtype, causal, window, softcap, dropout=None):
    if backend == "numpy-ref":
        return K.reference(q, k, v, dtype, causal, window, softcap, dropout)
    if backend == "numpy-flash":
        return K.flash(q, k, v, dtype, causal, window, softcap, dropout=dropout)
    if backend in K.DEFECTS:
        return K.flash(q, k, v, dtype, causal, window, softcap, defect=backend, dropout=dropout)
    if not have_torch():
        pytest.skip("no torch")
    if dropout:
        pytest.skip("%s returns no dropout mask" % backend)
    r = K.torch_sdpa(q, k, v, dtype, causal, window, softcap, backend=backend.split("-")[1])
    if r is None:
        pytest.skip("%s does not compute this variant" % backend)
    return r


class Case:
    """One problem of the grid: q, k, v (B,T,H,D) and the variant. run(backend) gives the
    kernel's o, lse (and keeps the dropout mask it returns); judge(mode, o, lse) asserts (attncheck
    or a hand rule). With dropout_p the case draws its keep-mask once (seeded), as FlashAttention's
    Philox stream gives every kernel run of one seed the same mask."""

    def __init__(self, q, k, v, dtype, causal, window=None, softcap=0.0, dropout_p=0.0, seed=0):
        self.q, self.k, self.v, self.dtype = q, k, v, dtype
        self.var = (dtype, causal, window, softcap)
        self.dropout = None
        if dropout_p:
            B, T, H, _ = q.shape
            keep = np.random.default_rng(seed + 1000).random((B, H, T, k.shape[1])) >= np.float32(dropout_p)
            self.dropout = (dropout_p, keep)
        self.kmask = None
        self.ref = hand_rules.Reference(q, k, v, dtype, causal, window, softcap, self.dropout)

    def run(self, backend):
        r = run_kernel(backend, self.q, self.k, self.v, *self.var, dropout=self.dropout)
        self.kmask = r[2] if len(r) > 2 else None   # the kernel's mask (numpy-flash: FlashAttention's S_dmask)
        return r[0], r[1]

    def attncheck_args(self, o, lse):
        dtype, causal, window, softcap = self.var
        kw = dict(layout="bthd", dtype=dtype, window=window, softcap=softcap, causal="bottom-right" if causal else False)
        if self.dropout:
            kw.update(dropout_p=self.dropout[0], dropout_mask=self.kmask)
        return (self.q, self.k, self.v, o, lse), kw

    def judge(self, mode, o, lse):
        if mode == "attncheck":
            a, kw = self.attncheck_args(o, lse)
            return attncheck.assert_attention_close(*a, **kw)
        hand_rules.check(mode, o, self.ref)


class VarlenCase:
    """A varlen batch: its sequences are dense cases; attncheck judges the packed batch with
    cu_seqlens, a hand rule each sequence (as a test would loop over them)."""

    def __init__(self, parts, dtype, causal):
        self.parts, self.dtype, self.causal = parts, dtype, causal

    def run(self, backend):
        if backend.startswith("torch"):
            pytest.skip("the SDPA backends get no varlen batch")
        outs = [p.run(backend) for p in self.parts]
        return [o for o, _ in outs], [lse for _, lse in outs]

    def attncheck_args(self, o, lse):
        cat = np.concatenate
        q, k, v = (cat([getattr(p, n)[0] for p in self.parts]) for n in "qkv")
        cu = np.concatenate([[0], np.cumsum([p.q.shape[1] for p in self.parts])]).astype(np.int32)
        lse = None if lse is None or lse[0] is None else cat([x[0] for x in lse], axis=1)
        return (q, k, v, cat([x[0] for x in o]), lse), \
            dict(dtype=self.dtype, causal="bottom-right" if self.causal else False, cu_seqlens_q=cu, cu_seqlens_k=cu)

    def judge(self, mode, o, lse):
        if mode == "attncheck":
            a, kw = self.attncheck_args(o, lse)
            return attncheck.assert_attention_close(*a, **kw)
        for p, op in zip(self.parts, o):
            hand_rules.check(mode, op, p.ref)


def dense_case(dtype, causal, heads, window, softcap, values, dropout_p=0.0):
    H, KVH = heads
    return Case(*inputs(dtype, 1, 96, H, KVH, 32, values, seed=7), dtype, causal, window, softcap, dropout_p, seed=7)


def varlen_case(dtype, causal):
    parts = [Case(*inputs(dtype, 1, T, 4, 2, 32, "randn", seed=11 + n), dtype, causal)
             for n, T in enumerate(VARLEN_SEQLENS)]
    return VarlenCase(parts, dtype, causal)


def long_case(dtype, causal, seqlens, values, seed=5):
    tq, tk = seqlens
    return Case(*inputs(dtype, 1, tq, 4, 2, 32, values, seed=seed, tk=tk), dtype, causal)


def grid():
    """(test id, case builder) of every test below but the backend, in pytest's id order."""
    for p in itertools.product(DTYPES, CAUSAL, HEADS, WINDOWS, SOFTCAPS, VALUES, DROPOUTS):
        dtype, causal, heads, window, softcap, values, dropout_p = p
        if softcap and dropout_p:
            continue
        ident = (dtype, causal, HEAD_IDS[heads], WINDOW_IDS[window], softcap, values, dropout_p)
        yield "test_flash_attn_output[%s-%s-%s-%s-%s-%s-%s]" % ident, lambda p=p: dense_case(*p)
    for dtype, causal in itertools.product(DTYPES, CAUSAL):
        yield "test_flash_attn_varlen_output[%s-%s]" % (dtype, causal), lambda d=dtype, c=causal: varlen_case(d, c)
    for p in itertools.product(DTYPES, CAUSAL, LONG_SEQLENS, LONG_VALUES, LONG_SEEDS):
        yield ("test_flash_attn_long_output[%s-%s-%dx%d-%s-s%d]" % (p[0], p[1], p[2][0], p[2][1], p[3], p[4]),
               lambda p=p: long_case(*p))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dropout_p", DROPOUTS)
@pytest.mark.parametrize("values", VALUES)
@pytest.mark.parametrize("softcap", SOFTCAPS)
@pytest.mark.parametrize("window", WINDOWS, ids=[WINDOW_IDS[w] for w in WINDOWS])
@pytest.mark.parametrize("heads", HEADS, ids=[HEAD_IDS[h] for h in HEADS])
@pytest.mark.parametrize("causal", CAUSAL)
@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_attn_output(dtype, causal, heads, window, softcap, values, dropout_p, backend):
    if softcap and dropout_p:
        pytest.skip("softcap and dropout not together (as flash-attn's test)")
    c = dense_case(dtype, causal, heads, window, softcap, values, dropout_p)
    c.judge(MODE, *c.run(backend))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("causal", CAUSAL)
@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_attn_varlen_output(dtype, causal, backend):
    c = varlen_case(dtype, causal)
    c.judge(MODE, *c.run(backend))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", PYTEST_SEEDS, ids=["s%d" % s for s in PYTEST_SEEDS])
@pytest.mark.parametrize("values", LONG_VALUES)
@pytest.mark.parametrize("seqlens", LONG_SEQLENS, ids=["%dx%d" % s for s in LONG_SEQLENS])
@pytest.mark.parametrize("causal", CAUSAL)
@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_attn_long_output(dtype, causal, seqlens, values, seed, backend):
    """Longer sequences (a 1024-token prefill, 64-query chunks after a 1024/4096-key cache)."""
    c = long_case(dtype, causal, seqlens, values, seed)
    c.judge(MODE, *c.run(backend))


def test_flash_attn_grid_expressible():
    """Every feature signature of flash-attn's own test_flash_attn_output grid (fa_grid.py: 144, a
    third of them with dropout 0.17) is judged, and a correct reference passes."""
    import fa_grid
    got = {sig: fa_grid.expressible(sig) for sig in fa_grid.signatures()}
    assert len(got) == 144 and sum(1 for s in got if s[5]) == 48
    assert {s: r for s, r in got.items() if r != (True, "PASS")} == {}
    assert fa_grid.combinations() == (84480, 63360)
