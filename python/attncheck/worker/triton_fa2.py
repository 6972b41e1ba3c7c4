#!/usr/bin/env python3
"""triton_fa2.py: the flash-attn-triton package (PyPI) as an attncheck exec worker.

    python -m attncheck.worker triton-fa2 [--device interpret|cuda]

flash-attn-triton ships the Triton tutorial's fused attention (FlashAttention-2: block pointers,
exp2 online softmax, P rounded to f16/bf16 before P.V, fp32 accumulation) behind FlashAttention
2's API, flash_attn_func(q, k, v, softmax_scale=, causal=) with q, k, v [B, T, H, D], and a
backward through torch.autograd. The worker calls that public function; nothing of the package
is copied. What the package computes, and so what this worker declares:

  dtypes    f16 (bf16 too on a GPU: Triton's interpreter does not compute bfloat16 tl.dot,
            docs/triton.md)
  masks     none (only when T is a multiple of 128: flash_attn_func raises otherwise), causal
            (top-left; with tq = tk the same as bottom-right)
  features  gqa (K and V repeated per query head by the wrapper), scale; tq = tk only (the
            kernel takes one N_CTX for Q and K), dv = dk, head dims 16, 32, 64, 128, 256
  backward  yes (the package's Triton backward, through autograd); no LSE is returned

--api declares what flash_attn_func accepts without raising instead: tq != tk too (FlashAttention
2's API takes seqlen_q != seqlen_k, with a bottom-right causal mask), which the kernel does not
compute (docs/triton.md: wrong values for tq < tk, reads past K and V for tq > tk).

Interpreter launch parameters: the forward's @triton.autotune list is cut to one of its own
configs, BLOCK_M = 128, BLOCK_N = min(64, d), num_stages 3, num_warps 4 (the interpreter would
time every config of the list on each new shape; on a GPU the package autotunes as shipped).
The package needs a Triton that still has tl.make_block_ptr (3.4 to 3.8 under the interpreter:
3.2 and 3.3 want a GPU driver for @triton.autotune, 3.9 removed block pointers); it imports
triton.tools.experimental_descriptor, which it never uses and Triton 3.4 removed, so the worker
registers an empty module of that name.
"""
import argparse
import sys

try:
    from . import protocol as attncheck_worker
    from . import triton_common as tc
except ImportError:  # run as a file
    import protocol as attncheck_worker
    import triton_common as tc

HEAD_DIMS = (16, 32, 64, 128, 256)
BLOCK = 128  # flash_attn_interface.BLOCK_SIZE: T is padded to a multiple of it


def _load(device):
    def load():
        tc.setup(device)
        tc.shim_removed_module("triton.tools.experimental_descriptor")
        import flash_attn_triton
        from flash_attn_triton.triton_kernel import attention_kernel
        _smoke(flash_attn_triton, attention_kernel, device)
        return flash_attn_triton, attention_kernel
    return tc.Loader(load)


def _smoke(fa, ak, device):
    """One 16x16 causal forward: a Triton without the kernel's block pointers fails here, once,
    with its own message, instead of on every case."""
    import torch
    import triton
    if device == "interpret":
        tc.pin_autotune(ak._attn_fwd, triton.Config({"BLOCK_M": 128, "BLOCK_N": 16}, num_stages=3, num_warps=4))
    x = torch.zeros((1, 16, 1, 16), dtype=torch.float16, device=tc.torch_device(device))
    try:
        fa.flash_attn_func(x, x, x, causal=True)
    except Exception as e:
        raise ImportError("flash-attn-triton does not run with Triton %s: %s" % (triton.__version__, e))


def _check(p, api):
    """NotImplementedError for what flash_attn_func cannot compute (declared or not); with api,
    only for what it raises on (tq != tk is then passed on, FlashAttention 2's bottom-right
    causal mask included)."""
    if p.tq != p.tk and not api:
        raise NotImplementedError("tq != tk: the kernel takes one N_CTX for Q and K")
    if p.tq != p.tk and p.mask == "causal":
        raise NotImplementedError("top-left causal with tq != tk (FlashAttention 2's causal is bottom-right)")
    if p.dk != p.dv:
        raise NotImplementedError("dv != dk")
    if p.dk not in HEAD_DIMS:
        raise NotImplementedError("head dim %d (the kernel takes %s)" % (p.dk, ", ".join(map(str, HEAD_DIMS))))
    if p.mask == "none" and p.tq % BLOCK:
        raise NotImplementedError("non-causal attention needs T a multiple of %d in flash_attn_func" % BLOCK)
    if p.variants or p.layout:
        raise NotImplementedError("variants and layouts are not computed")


def _seconds(p):
    """The interpreter's time for the case, estimated (tc.interpreter_budget): ~0.06 s a program
    of 128 queries and ~0.005 s a tile of 64 keys it visits (no causal pruning); the backward's
    grid is of the same order."""
    blocks = p.batch * p.heads * -(-p.tq // BLOCK)
    return 0.06 * blocks + 0.005 * blocks * -(-p.tk // 64)


def _prepare(loader, device, p, max_seconds, api):
    _check(p, api)
    tc.interpreter_budget(device, _seconds(p), max_seconds)
    fa, ak = loader.get()
    if device == "interpret":
        import triton
        tc.pin_autotune(ak._attn_fwd, triton.Config({"BLOCK_M": 128, "BLOCK_N": min(64, p.dk)}, num_stages=3,
                                                    num_warps=4))
    return fa


def make_attn(loader, device, max_seconds, api):
    def attn(q, k, v, p):
        fa = _prepare(loader, device, p, max_seconds, api)
        dev = tc.torch_device(device)
        qq, kk, vv = (t.to(dev).transpose(1, 2) for t in (q, k, v))
        o = fa.flash_attn_func(qq, kk, vv, softmax_scale=p.scale, causal=p.mask != "none")
        return o.transpose(1, 2).cpu()
    return attn


def make_backward(loader, device, max_seconds, api):
    def backward(q, k, v, o, lse, do, p):
        import torch
        fa = _prepare(loader, device, p, max_seconds, api)
        dev = tc.torch_device(device)
        qq, kk, vv = (t.to(dev).transpose(1, 2).detach().requires_grad_() for t in (q, k, v))
        out = fa.flash_attn_func(qq, kk, vv, softmax_scale=p.scale, causal=p.mask != "none")
        grads = torch.autograd.grad(out, (qq, kk, vv), do.to(dev).to(out.dtype).transpose(1, 2))
        return tuple(g.transpose(1, 2).cpu() for g in grads)
    return backward


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=tc.DEVICES, default="interpret",
                    help="interpret: Triton's interpreter on the CPU (default); cuda: compiled on the GPU")
    ap.add_argument("--max-seconds", type=float, default=45,
                    help="refuse cases estimated to take longer under the interpreter (default 45; 0: no limit)")
    ap.add_argument("--api", action="store_true",
                    help="declare what flash_attn_func accepts without raising (tq != tk too), not what it computes")
    ap.add_argument("--probe", action="store_true",
                    help="import the kernel and exit: 0 (its versions on stdout) or 77 (why not, on stderr)")
    ap.add_argument("paths", nargs="*", help="IN OUT for one-shot mode; none for persistent mode")
    args = ap.parse_args(argv)
    if len(args.paths) not in (0, 2):
        ap.error("give IN and OUT, or nothing for persistent mode")
    tc.setup(args.device)
    loader = _load(args.device)
    if args.probe:
        return tc.probe(loader, "flash-attn-triton", "triton", "torch")
    dtypes = ["f16"] if args.device == "interpret" else ["f16", "bf16"]
    return attncheck_worker.run(make_attn(loader, args.device, args.max_seconds, args.api), args.paths, tensors="torch",
                                name="triton-fa2-" + args.device, dtypes=dtypes,
                                features=("gqa", "scale") + (("tq-ne-tk",) if args.api else ()), precision={"f16": "fp16-fa2", "bf16": "bf16-fa2"},
                                writes_lse=False, backward=make_backward(loader, args.device, args.max_seconds, args.api))


if __name__ == "__main__":
    sys.exit(main())
