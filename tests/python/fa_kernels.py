"""Attention kernels for the FlashAttention-style tests: the float64 numpy reference, a
FlashAttention-2-style numpy kernel (tiles of 32 keys, online softmax in float32, P rounded to
the input dtype for 16-bit inputs), PyTorch's CPU SDPA backends, and four defects of that
kernel, the mechanisms of attncheck's mutants reproduced in numpy:
  sentinel-1e4   masked scores set to -1e4 instead of -inf (a finite sentinel, fp16 style)
  no-rescale     the accumulator is not rescaled when the running maximum grows
  causal-off-by-one  key j visible to query i when j <= i + 1
  f16-acc        P.V accumulated in float16
Tensors are B,T,H,D (FlashAttention's layout) numpy arrays of float32/float16, or uint16 bf16
bit patterns when dtype is "bf16". dropout=(p, keep): dropout with the keep-mask keep [B,H,tq,tk]
(the case's, as FlashAttention's Philox stream gives one per seed): the normalized weights times
keep and 1/(1-p); the kernels then return the mask third (flash: as FlashAttention's S_dmask, the
probabilities with the dropped ones negated, -0.0 included)."""
import numpy as np

TILE = 32


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    r[nan] = 0x7FC0
    return r


def to_f64(x, dtype):
    return bf16_to_f32(x).astype(np.float64) if dtype == "bf16" else x.astype(np.float64)


def from_f(x, dtype):
    if dtype == "bf16":
        return f32_to_bf16(x.astype(np.float32))
    return x.astype({"f32": np.float32, "f16": np.float16}[dtype])


def round_like(x, dtype):
    """x rounded to dtype and back to float32 (P stored in the input dtype)."""
    if dtype == "bf16":
        return bf16_to_f32(f32_to_bf16(x))
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    return x.astype(np.float32)


def visible(tq, tk, causal, window, off_by_one=False):
    """[tq, tk] bool: FlashAttention's bottom-right alignment for causal and window."""
    i = np.arange(tq)[:, None] + (tk - tq)
    j = np.arange(tk)[None, :]
    vis = np.ones((tq, tk), bool)
    if causal:
        vis &= j <= i + (1 if off_by_one else 0)
    if window is not None:
        wl, wr = window
        if wl >= 0:
            vis &= j >= i - wl
        if wr >= 0:
            vis &= j <= i + wr
    return vis


def scores(q, k, scale, softcap):
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    return s


def gqa(k, h):
    return np.repeat(k, h // k.shape[1], axis=1)


def reference(q, k, v, dtype, causal=False, window=None, softcap=0.0, dropout=None):
    """float64 softmax(QK^T scale) V, rounded to dtype; LSE float32 [B,H,T]; with dropout the
    mask third (booleans)."""
    qh, kh, vh = (to_f64(x, dtype).transpose(0, 2, 1, 3) for x in (q, k, v))
    H = qh.shape[1]
    kh, vh = gqa(kh, H), gqa(vh, H)
    s = scores(qh, kh, 1 / np.sqrt(q.shape[-1]), softcap)
    s = np.where(visible(s.shape[2], s.shape[3], causal, window), s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    w = p / np.where(l > 0, l, 1)
    if dropout:
        w = w * dropout[1] / (1 - np.float64(np.float32(dropout[0])))
    o = np.where(l > 0, w @ vh, 0)
    lse = np.where(l[..., 0] > 0, np.log(np.where(l[..., 0] > 0, l[..., 0], 1)) + m[..., 0], np.inf)
    out = (from_f(o.transpose(0, 2, 1, 3), dtype), lse.astype(np.float32))
    return out + (dropout[1],) if dropout else out


def flash(q, k, v, dtype, causal=False, window=None, softcap=0.0, defect=None, dropout=None):
    """FlashAttention-2 in numpy: float32 scores and online softmax over tiles of TILE keys; dropout
    as FlashAttention-2's: P zeroed where dropped for P.V only, rp = fl(1 / fl(1 - p)) in the epilogue."""
    qh, kh, vh = (to_f64(x, dtype).astype(np.float32).transpose(0, 2, 1, 3) for x in (q, k, v))
    B, H, tq, D = qh.shape
    kh, vh = gqa(kh, H), gqa(vh, H)
    tk = kh.shape[2]
    scale = np.float32(1 / np.sqrt(D))
    vis = visible(tq, tk, causal, window, off_by_one=defect == "causal-off-by-one")
    neg = np.float32(-1e4) if defect == "sentinel-1e4" else np.float32(-np.inf)
    acc_t = np.float16 if defect == "f16-acc" else np.float32
    m = np.full((B, H, tq, 1), -np.inf, np.float32)
    l = np.zeros((B, H, tq, 1), np.float32)
    acc = np.zeros((B, H, tq, vh.shape[-1]), acc_t)
    for j0 in range(0, tk, TILE):
        s = np.einsum("bhid,bhjd->bhij", qh, kh[:, :, j0:j0 + TILE]).astype(np.float32) * scale
        if softcap:
            s = (np.float32(softcap) * np.tanh(s / np.float32(softcap))).astype(np.float32)
        s = np.where(vis[:, j0:j0 + TILE], s, neg)
        mn = np.maximum(m, s.max(-1, keepdims=True))
        safe = np.where(np.isfinite(mn), mn, 0).astype(np.float32)
        p = np.exp(s - safe).astype(np.float32)
        alpha = np.exp(np.where(np.isfinite(m), m - safe, -np.inf)).astype(np.float32)
        if defect == "no-rescale":
            alpha = np.where(np.isfinite(m), np.float32(1), np.float32(0))
        l = alpha * l + p.sum(-1, keepdims=True, dtype=np.float32)
        pk = round_like(p, dtype) * (dropout[1][:, :, :, j0:j0 + TILE] if dropout else 1)
        pv = pk @ vh[:, :, j0:j0 + TILE]
        acc = (acc.astype(np.float32) * alpha).astype(acc_t) + pv.astype(acc_t)
        m = mn
    lpos = l > 0
    inv = (np.float32(1) / np.where(lpos, l, 1)).astype(np.float32)
    if dropout:
        inv = inv * (np.float32(1) / (np.float32(1) - np.float32(dropout[0])))
    o = np.where(lpos, acc.astype(np.float32) * inv, 0).astype(np.float32)
    lse = np.where(lpos[..., 0], np.log(np.where(lpos, l, 1))[..., 0] + np.where(np.isfinite(m), m, 0)[..., 0],
                   np.float32(np.inf)).astype(np.float32)
    out = (from_f(o.transpose(0, 2, 1, 3), dtype), lse)
    if not dropout:
        return out
    # S_dmask as FlashAttention returns it: the probabilities, the dropped ones negated
    s = scores(qh, kh, scale, softcap)
    prob = np.exp(np.where(vis, s - lse[..., None], -np.inf)).astype(np.float32)
    return out + (np.where(dropout[1], prob, -prob),)


DEFECTS = ("sentinel-1e4", "no-rescale", "causal-off-by-one", "f16-acc")


def torch_sdpa(q, k, v, dtype, causal=False, window=None, softcap=0.0, backend="math"):
    """PyTorch's scaled_dot_product_attention on the CPU (backend math or flash); the window as a
    boolean mask; no LSE (SDPA returns none)."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if softcap:
        return None
    td = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]

    def t(x):
        x = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16) if dtype == "bf16" else torch.from_numpy(x)
        return x.transpose(1, 2)

    qt, kt, vt = t(q), t(k), t(v)
    H, KVH = qt.shape[1], kt.shape[1]
    kt, vt = kt.repeat_interleave(H // KVH, 1), vt.repeat_interleave(H // KVH, 1)
    tq, tk = qt.shape[2], kt.shape[2]
    be = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION}[backend]
    mask = None
    if window is not None or (causal and tq != tk):
        mask = torch.from_numpy(visible(tq, tk, causal, window))
        causal = False
        if backend == "flash":
            return None  # the CPU flash backend takes no mask
    with sdpa_kernel([be]):
        o = torch.nn.functional.scaled_dot_product_attention(qt.to(td), kt.to(td), vt.to(td), attn_mask=mask,
                                                             is_causal=bool(causal))
    o = o.transpose(1, 2).contiguous()
    if dtype == "bf16":
        return o.view(torch.int16).numpy().view(np.uint16), None
    return o.numpy(), None
