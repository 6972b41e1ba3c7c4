#!/usr/bin/env python3
"""triton_vllm.py: vLLM's Triton unified attention (PyPI vllm) as an attncheck exec worker.

    python -m attncheck.worker triton-vllm-unified [--device interpret|cuda] [--segments N]

It calls vllm.v1.attention.ops.triton_unified_attention.unified_attention, the kernel of vLLM's
Triton attention backend (installed with `pip install vllm --no-deps`; the module imports
without CUDA once `regex` is installed), on a paged KV cache: q [tokens, H, D] packed by
cu_seqlens_q, K and V [pages, page_size, KVH, D] read through block_table and seqused_k, as the
backend does. Dense cases become one sequence per batch over pages of 16 whose slots past the
sequence's end hold NaN (the kernel must not read them); varlen cases are copied into such pages;
paged cases hand the case's own cache, block table and lengths. --segments N passes the split-KV
scratch buffers (N segments, the backend's default 16) and a threshold that lets the kernel take
its 3D decode path (segments merged by reduce_segments) wherever it would (at most 8 queries per
sequence, causal); other cases run the 2D kernel, as in vLLM.

What vLLM's kernel computes, and so what this worker declares (a case outside it is refused):

  dtypes    f16, f32 under the interpreter; f16, bf16 on a GPU (docs/triton.md: the interpreter
            has no bfloat16 tl.dot; on a GPU tl.dot of fp32 inputs is TF32, which no class models)
  masks     causal-bottom-right (vLLM's causal: the queries are the last tokens of the sequence),
            causal where each sequence has tq = tk, none
  features  gqa, tq-ne-tk (tq <= tk per sequence with a causal mask, ALiBi or a window), scale,
            window (causal: any left; none: left = right, or right = 0, which is vLLM's causal
            window), softcap, alibi ([H] slopes, causal masks only: vLLM adds m*(j - context_len),
            equal to -m|i - j| up to a per-row constant only where keys do not pass the query),
            sinks, varlen, paged (page sizes that are multiples of 16, as the backend's
            get_supported_kernel_block_sizes says)
  LSE       not written; no backward
"""
import argparse
import os
import sys

try:
    from . import protocol as attncheck_worker
    from . import triton_common as tc
except ImportError:  # run as a file
    import protocol as attncheck_worker
    import triton_common as tc

PAGE = 16  # the page size of the caches the worker builds for dense and varlen cases
FEATURES = ("gqa", "tq-ne-tk", "scale", "window", "softcap", "alibi", "sinks", "varlen", "paged")


def _load(device):
    def load():
        tc.setup(device)
        if device == "interpret":
            # vllm.triton_utils replaces triton by a placeholder when no GPU driver is active,
            # except where CUDA_VISIBLE_DEVICES is empty (its distributed start-up case)
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
        from vllm.v1.attention.ops import triton_unified_attention as tua
        return tua
    return tc.Loader(load)


def _lengths(p):
    """(tq_b, tk_b) per sequence."""
    import numpy as np
    if p.layout is None:
        return [(p.tq, p.tk)] * p.batch
    cq = np.diff(p.cu_seqlens_q)
    ck = np.diff(p.cu_seqlens_k) if p.layout == "varlen" else p.cache_seqlens
    return [(int(a), int(b)) for a, b in zip(cq, ck)]


def _window(p, lens):
    """(causal, window_size) to hand vLLM for the case's mask and window, or NotImplementedError.
    A window (left, 0) without a mask is vLLM's causal sliding window: the same visible keys."""
    causal = p.mask != "none"
    if p.window is None:
        return causal, (-1, -1)
    left, right = p.window
    if p.window_align != "bottom-right" and any(a != b for a, b in lens if a):
        raise NotImplementedError("a top-left window with tq != tk (vLLM aligns windows bottom-right)")
    if causal or right == 0:
        return True, ((left, 0) if left >= 0 else (-1, -1))
    if left != right:
        raise NotImplementedError("a non-causal window (%d, %d): vLLM's is symmetric" % (left, right))
    return False, (left, left)


def _check(p, lens):
    """(causal, window_size) for vLLM, or NotImplementedError for what it does not compute."""
    causal, window = _window(p, lens)
    if p.dk != p.dv:
        raise NotImplementedError("dv != dk")
    if p.mask == "causal" and any(a != b for a, b in lens if a):
        raise NotImplementedError("top-left causal with tq != tk (vLLM's causal is bottom-right)")
    if (causal or p.window is not None or p.alibi_slopes is not None) and any(a > b for a, b in lens):
        raise NotImplementedError("a sequence with more queries than keys (vLLM: seq_len >= query_len)")
    if p.alibi_slopes is not None and (p.alibi_per_batch or not causal):
        raise NotImplementedError("ALiBi per batch, or without a causal mask (vLLM adds m*(j - context_len))")
    if p.layout == "paged" and p.page_size % 16:
        raise NotImplementedError("page size %d (vLLM's Triton backend takes multiples of 16)" % p.page_size)
    qpk = p.heads // p.kv_heads
    block_m = 16 if qpk <= 16 else 1 << (qpk - 1).bit_length()
    hp = 1 << max(0, (p.dk - 1).bit_length())
    if block_m * max(hp, 32) > 1 << 20:
        raise NotImplementedError("%d query heads per kv head with head size %d: vLLM's block of %d x %d passes "
                                  "Triton's 2^20 elements of a tensor" % (qpk, p.dk, block_m, hp))
    return causal, window


def _seconds(p, lens, causal, segments):
    """The interpreter's time for the case, estimated (tc.interpreter_budget): programs of the
    grid that reach the tile loop (times the segments where the 3D decode path runs, plus
    reduce_segments' programs) and tiles of 32 keys they visit (no causal or window pruning)."""
    qpk = p.heads // p.kv_heads
    block_q = max(1, (16 if qpk <= 16 else 1 << (qpk - 1).bit_length()) // qpk)
    programs = sum(-(-tq // block_q) for tq, _ in lens) * p.kv_heads
    tiles = sum(-(-tq // block_q) * -(-tk // 32) for tq, tk in lens) * p.kv_heads
    if segments and causal and max(a for a, _ in lens) <= 8:
        programs = programs * segments + sum(a for a, _ in lens) * p.heads
    return 0.1 * programs + 0.01 * tiles


def _pages(torch, kv, lens, starts):
    """Keys kv [KVH, total, D] of each sequence copied into pages of PAGE slots; the slots past a
    sequence's end hold NaN. Returns (cache [pages, PAGE, KVH, D], block_table [seqs, n] int32)."""
    npg = [max(1, -(-tk // PAGE)) for _, tk in lens]
    cache = torch.full((sum(npg), PAGE, kv.shape[0], kv.shape[2]), float("nan"), dtype=kv.dtype)
    table = torch.zeros((len(lens), max(npg)), dtype=torch.int32)
    first = 0
    for b, ((_, tk), n, s) in enumerate(zip(lens, npg, starts)):
        flat = cache[first:first + n].view(n * PAGE, kv.shape[0], kv.shape[2])
        flat[:tk] = kv[:, s:s + tk].permute(1, 0, 2)
        table[b, :n] = torch.arange(first, first + n, dtype=torch.int32)
        first += n
    return cache, table


def _inputs(torch, q, k, v, p, lens):
    """q [tokens, H, D], the K and V caches, block table, seqused_k, cu_seqlens_q."""
    import numpy as np
    if p.layout is None:
        qt = q.permute(0, 2, 1, 3).reshape(p.batch * p.tq, p.heads, p.dk)
        kc = k.permute(1, 0, 2, 3).reshape(p.kv_heads, p.batch * p.tk, p.dk)
        vc = v.permute(1, 0, 2, 3).reshape(p.kv_heads, p.batch * p.tk, p.dv)
        starts = [b * p.tk for b in range(p.batch)]
        cu_q = np.arange(p.batch + 1) * p.tq
    else:
        qt = q[0].permute(1, 0, 2)
        kc, vc = k[0], v[0]
        starts = list(p.cu_seqlens_k[:-1]) if p.layout == "varlen" else None
        cu_q = p.cu_seqlens_q
    if p.layout == "paged":
        n = kc.shape[1] // p.page_size
        kcache = kc.permute(1, 0, 2).reshape(n, p.page_size, p.kv_heads, p.dk)
        vcache = vc.permute(1, 0, 2).reshape(n, p.page_size, p.kv_heads, p.dv)
        table = torch.from_numpy(p.block_table.astype(np.int32))
    else:
        kcache, table = _pages(torch, kc, lens, starts)
        vcache, _ = _pages(torch, vc, lens, starts)
    seqused = torch.tensor([tk for _, tk in lens], dtype=torch.int32)
    return qt.contiguous(), kcache, vcache, table, seqused, torch.from_numpy(np.asarray(cu_q, dtype=np.int32))


def make_attn(loader, device, segments, max_seconds):
    def attn(q, k, v, p):
        import torch
        lens = _lengths(p)
        causal, window = _check(p, lens)
        tc.interpreter_budget(device, _seconds(p, lens, causal, segments), max_seconds)
        tua = loader.get()
        dev = tc.torch_device(device)
        qt, kc, vc, table, seqused, cu_q = (t.to(dev) for t in _inputs(torch, q, k, v, p, lens))
        out = torch.empty_like(qt)
        opt = {}
        if p.sinks is not None:
            opt["sinks"] = torch.tensor(p.sinks, dtype=torch.float32, device=dev)
        if p.alibi_slopes is not None:
            opt["alibi_slopes"] = torch.tensor(p.alibi_slopes, dtype=torch.float32, device=dev)
        if segments:
            hp = 1 << max(0, (p.dk - 1).bit_length())
            n = qt.shape[0]
            opt.update(seq_threshold_3D=1 << 30, num_par_softmax_segments=segments,
                       softmax_segm_output=torch.empty((n, p.heads, segments, hp), dtype=torch.float32, device=dev),
                       softmax_segm_max=torch.empty((n, p.heads, segments), dtype=torch.float32, device=dev),
                       softmax_segm_expsum=torch.empty((n, p.heads, segments), dtype=torch.float32, device=dev))
        if qt.shape[0]:
            tua.unified_attention(q=qt, k=kc, v=vc, out=out, cu_seqlens_q=cu_q, max_seqlen_q=max(a for a, _ in lens),
                                  seqused_k=seqused, max_seqlen_k=max(b for _, b in lens), softmax_scale=p.scale,
                                  causal=causal, window_size=window, block_table=table,
                                  softcap=p.softcap, q_descale=None, k_descale=None, v_descale=None, **opt)
        out = out.cpu()
        if p.layout is None:
            return out.reshape(p.batch, p.tq, p.heads, p.dv).permute(0, 2, 1, 3)
        return out.permute(1, 0, 2).unsqueeze(0)
    return attn


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=tc.DEVICES, default="interpret",
                    help="interpret: Triton's interpreter on the CPU (default); cuda: compiled on the GPU")
    ap.add_argument("--segments", type=int, default=0,
                    help="split-KV segments of the 3D decode path (0: the 2D kernel only; vLLM's default 16)")
    ap.add_argument("--max-seconds", type=float, default=45,
                    help="refuse cases estimated to take longer under the interpreter (default 45; 0: no limit)")
    ap.add_argument("--probe", action="store_true",
                    help="import the kernel and exit: 0 (its versions on stdout) or 77 (why not, on stderr)")
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    if len(args.paths) not in (0, 2):
        ap.error("give IN and OUT, or nothing for persistent mode")
    if args.segments < 0 or args.segments & (args.segments - 1):
        ap.error("--segments must be 0 or a power of 2")
    tc.setup(args.device)
    loader = _load(args.device)
    if args.probe:
        return tc.probe(loader, "vllm", "triton", "torch")
    dtypes = ["f16", "f32"] if args.device == "interpret" else ["f16", "bf16"]
    name = "triton-vllm-unified" + ("-3d" if args.segments else "") + "-" + args.device
    return attncheck_worker.run(make_attn(loader, args.device, args.segments, args.max_seconds), args.paths, tensors="torch",
                                name=name, dtypes=dtypes, features=FEATURES,
                                precision={"f16": "fp16-fa2", "bf16": "bf16-fa2", "f32": "fp32"}, writes_lse=False)


if __name__ == "__main__":
    sys.exit(main())
